"""pawlette's docstrings, written for Sphinx, read as Markdown by the API reference.

mkdocstrings loads this module as a griffe extension (``mkdocs.yml``); ``docs/gen.py`` uses
:func:`docstring_markdown` for the format pages.  Cross-reference roles (``:class:`~a.B```)
become code (``B``), ``::`` literal blocks and ``>>>`` examples become fenced blocks; the
double-backtick literals are Markdown code already.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`(~?)\.?([^`<]+?)(?:\s*<[^>]+>)?`")


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


def _block_end(lines: list[str], index: int, indent: int) -> int:
    while index < len(lines) and (
        not lines[index].strip() or len(lines[index]) - len(lines[index].lstrip()) > indent
    ):
        index += 1
    return index


def docstring_markdown(text: str) -> str:
    """A docstring written for Sphinx, as Markdown."""
    lines = inspect.cleandoc(text).splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        indent = len(line) - len(line.lstrip())
        if line.lstrip().startswith(">>>"):
            block = []
            while index < len(lines) and lines[index].strip():
                block.append(lines[index][indent:])
                index += 1
            out += ["", "```pycon", *block, "```", ""]
            continue
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            stripped = line.rstrip()[:-2].rstrip()
            out.append(_ROLE.sub(_role, stripped + (":" if stripped.strip() else "")))
            end = _block_end(lines, index + 1, indent)
            block = lines[index + 1 : end]
            index = end
            while block and not block[-1].strip():
                block.pop()
            while block and not block[0].strip():
                block.pop(0)
            depth = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
            out += ["", "```text", *(b[depth:] for b in block), "```", ""]
            continue
        out.append(_ROLE.sub(_role, line))
        index += 1
    return "\n".join(out).strip() + "\n"


class SphinxDocstringsAsMarkdown(griffe.Extension):
    """Rewrites every docstring with :func:`docstring_markdown` once the tree is built."""

    def on_object(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = docstring_markdown(obj.docstring.value)
