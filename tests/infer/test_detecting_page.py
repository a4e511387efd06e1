"""The guide docs/guides/detecting.md, run as a reader would: its Python blocks in order in
one namespace, in a fresh directory; its ``pawlette`` commands through the command line
(``tokenize`` and ``serve`` need a tokenizer file and an engine, so their ``-f auto`` is
resolved and the rest of the command only parsed); its output blocks compared with what the
commands print."""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pawlette import cli

registry = importlib.import_module("pawlette.formats")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "detecting.md"
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(language: str | None = None) -> list[tuple[str, str]]:
    """The page's fenced blocks, in order, as (language, text)."""
    text = PAGE.read_text(encoding="utf-8")
    return [(found, body) for found, body in _BLOCK.findall(text) if language in (None, found)]


@contextlib.contextmanager
def _isolated() -> Iterator[None]:
    """The registry, path and modules as they were, after the page."""
    registered = dict(registry._REGISTERED)
    path, modules = list(sys.path), set(sys.modules)
    try:
        yield
    finally:
        registry._REGISTERED.clear()
        registry._REGISTERED.update(registered)
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            if name == "my_format":
                del sys.modules[name]


def _commands(block: str) -> list[list[str]]:
    """The block's ``pawlette`` commands; its shell lines that make files run here."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line.split(" > ")[0], comments=True)
        if words and words[0] in ("echo", "printf"):
            subprocess.run(line, shell=True, check=True)
        elif words:
            assert words[0] == "pawlette", line
            found.append(words[1:])
    return found


def _shown(block: str) -> re.Pattern[str]:
    """The end of a command's output as the page shows it: each ``...`` stands for the rest
    of a long text on its line, cut there for the reader."""
    pieces = (re.escape(piece) for piece in block.split("..."))
    return re.compile("[^\n]*?".join(pieces) + r"\Z")


def _run(arguments: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(arguments)
    return status, out.getvalue(), err.getvalue()


def test_the_page_runs_and_prints_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs = [body for _, body in blocks("text")]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    printed = io.StringIO()
    ran = set()
    with _isolated():
        for language, block in blocks():
            if language == "python":
                with contextlib.redirect_stdout(printed):
                    exec(compile(block, str(PAGE), "exec"), namespace)
                continue
            if language != "bash":
                continue
            for arguments in _commands(block):
                if arguments[0] in ("tokenize", "serve"):
                    parsed = cli.build_parser().parse_args(arguments)
                    # The page registered its edited declaration in this process, and a
                    # registered format is a declared family: -f auto names it.
                    assert cli._auto_format(parsed) == "tutor"
                    continue
                status, out, err = _run(arguments)
                assert status == 0, (arguments, err)
                ran.add(arguments[0])
                if arguments[0] == "detect" and "--declaration" not in arguments:
                    assert _shown(outputs[0]).search(out), out
                elif arguments[0] == "detect":
                    assert 'name="inferred-my-model"' in out
                    assert "FORMAT = declare(LAYOUT)" in out
                elif arguments[0] == "render":
                    assert out == outputs[1]
                elif arguments[0] == "parse":
                    assert '"content": "56."' in out
                elif arguments[0] == "export":
                    assert "You are a patient tutor." in out
    assert outputs[1] in printed.getvalue()
    assert outputs[3] in printed.getvalue()  # a switch as an option
    assert outputs[4].strip() in namespace["thinker"].describe()  # type: ignore[attr-defined]
    assert "{'role': 'assistant', 'content': '56.'}" in printed.getvalue()
    assert ran == {"detect", "render", "parse", "export"}


@pytest.mark.parametrize("language", ["python", "bash", "text"])
def test_the_page_has_its_examples(language: str) -> None:
    assert blocks(language)
