"""The code examples of the hand-written docs, as the snippet tests read them.

Every fenced ``python`` block of ``README.md`` and of the hand-written pages under ``docs/``
(all but the generated ones) is a :class:`Snippet`.  The blocks of one page run in order in
one namespace, in a fresh directory, as a reader would paste them.  A block that cannot run
here says so on the line right before its fence, and the test then skips it, by name, with
the reason::

    <!-- snippet: skip (needs a GPU) -->

Nothing else stops a block from running: a block that talks to ``http://127.0.0.1:8000``
gets a real ``pawlette serve`` on a scripted engine at that address's place, and a block
that names ``prepared/`` gets a tokenizer prepared for pcml there.

``bash`` blocks are not run; each ``pawlette`` command in them is parsed by the command
line's own parser, so a renamed command or option fails the test.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GENERATED = (
    "benchmarks/",  # the bench scripts
    "models.md",  # python -m bench.models
)
_FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>```+)(?P<info>[^`\n]*)$")
_MARKER = re.compile(r"^\s*<!-- snippet: (?P<what>[^>]*?) -->\s*$")


@dataclass(frozen=True)
class Snippet:
    path: Path
    line: int
    """The line of the opening fence (1-based)."""
    language: str
    code: str
    skip: str | None
    """Why this block does not run here (its marker), or None."""

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def hand_written_pages() -> list[Path]:
    pages = [ROOT / "README.md"]
    for path in sorted(DOCS.rglob("*.md")):
        relative = path.relative_to(DOCS).as_posix()
        if not any(relative.startswith(prefix) for prefix in GENERATED):
            pages.append(path)
    return pages


def snippets(path: Path) -> list[Snippet]:
    """The fenced blocks of one page, with their markers.  An unknown marker, or a marker not
    right before a fence, is an error (a typo must not make a block skip silently)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Snippet] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        marker = _MARKER.match(lines[index])
        if marker is not None:
            following = _FENCE.match(lines[index + 1]) if index + 1 < len(lines) else None
            if following is None or not following.group("info").strip():
                raise ValueError(f"{path}:{index + 1}: a snippet marker not right before a fence")
            if not marker.group("what").startswith("skip ("):
                raise ValueError(
                    f"{path}:{index + 1}: unknown snippet marker {marker.group('what')!r};"
                    " expected 'skip (reason)'"
                )
        if opening is None or not opening.group("info").strip():
            index += 1
            continue
        ticks, indent = opening.group("ticks"), len(opening.group("indent"))
        language = opening.group("info").strip().split()[0]
        end = index + 1
        while end < len(lines) and lines[end].strip() != ticks:
            end += 1
        body = "\n".join(line[indent:] for line in lines[index + 1 : end])
        previous = _MARKER.match(lines[index - 1]) if index > 0 else None
        skip = previous.group("what")[len("skip (") : -1] if previous else None
        found.append(Snippet(path, index + 1, language, body + "\n", skip))
        index = end + 1
    return found


def python_snippets() -> list[Snippet]:
    return [
        snippet
        for page in hand_written_pages()
        for snippet in snippets(page)
        if snippet.language in ("python", "py")
    ]


def shell_commands() -> list[tuple[Snippet, list[str]]]:
    """Every ``pawlette ...`` command of the pages' ``bash``/``console`` blocks, as argv
    (continuation lines joined, ``$`` prompts and comments dropped, pipelines split)."""
    commands = []
    for page in hand_written_pages():
        for snippet in snippets(page):
            if snippet.language not in ("bash", "sh", "shell", "console"):
                continue
            text = snippet.code.replace("\\\n", " ")
            for line in text.splitlines():
                line = line.strip()
                if snippet.language == "console" and not line.startswith("$ "):
                    continue
                line = line.removeprefix("$ ")
                for part in re.split(r"\s(?:\||&&|;)\s", line):
                    words = shlex.split(part, comments=True)
                    while words and "=" in words[0] and not words[0].startswith("-"):
                        words = words[1:]  # VARIABLE=value before the command
                    for redirection in (">", ">>", "2>", "<"):
                        if redirection in words:
                            words = words[: words.index(redirection)]
                    if words and Path(words[0]).name == "pawlette":
                        commands.append((snippet, words[1:]))
    return commands
