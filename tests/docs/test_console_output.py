"""The output the pages show in ``console`` blocks is what the command prints.

A ``console`` block is a ``$ pawlette ...`` line and the output a reader sees after it. Each
shown line is found in the command's output, in order; ``...`` on a line of its own stands for
any lines, and inside a line for any text (a long line shortened).  Only commands that need no
file, network or model run here (``pawlette demo``); a block of another command fails the
test, so a new one is added to it knowingly.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from pawlette.cli import main

from .snippets import Snippet, hand_written_pages, snippets

RUNNABLE = {"demo"}
"""The commands a console block may show: they read no file and ask nothing of the network."""


def _console_blocks() -> list[Snippet]:
    return [
        snippet
        for page in hand_written_pages()
        for snippet in snippets(page)
        if snippet.language == "console"
    ]


def _command_and_shown(snippet: Snippet) -> tuple[list[str], list[str]]:
    lines = snippet.code.splitlines()
    assert lines and lines[0].startswith("$ "), f"{snippet.name}: expected a '$ ' command first"
    words = lines[0].removeprefix("$ ").split()
    assert words[0].endswith("pawlette"), f"{snippet.name}: {lines[0]!r} is not a pawlette command"
    assert not any(line.startswith("$ ") for line in lines[1:]), (
        f"{snippet.name}: one command a block, so its output is the rest of the block"
    )
    return words[1:], lines[1:]


def _found_in_order(shown: list[str], output: list[str]) -> str | None:
    """None when every shown line is found in ``output`` in order, else the first one that is
    not, with where the search stood."""
    position = 0
    for line in shown:
        if line.strip() == "...":
            continue
        pieces = line.split("...")
        while position < len(output):
            candidate = output[position]
            position += 1
            start = 0
            for piece in pieces:
                found = candidate.find(piece, start)
                if found < 0:
                    break
                start = found + len(piece)
            else:
                if candidate.startswith(pieces[0]) and candidate.endswith(pieces[-1]):
                    break
        else:
            return f"{line!r} (not found after output line {position})"
    return None


CONSOLE = _console_blocks()


def test_the_pages_have_console_blocks() -> None:
    assert CONSOLE, "no console block found: the test below checks nothing"


@pytest.mark.parametrize("snippet", CONSOLE, ids=[snippet.name for snippet in CONSOLE])
def test_console_block_shows_what_the_command_prints(snippet: Snippet) -> None:
    argv, shown = _command_and_shown(snippet)
    assert argv[0] in RUNNABLE, f"{snippet.name}: pawlette {argv[0]} does not run here"
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        status = main([*argv, "--colour", "never"] if argv == ["demo"] else argv)
    assert status == 0
    missing = _found_in_order(shown, output.getvalue().splitlines())
    assert missing is None, f"{snippet.name}: the page shows {missing}"


def test_a_line_the_command_does_not_print_is_found_missing() -> None:
    output = ["[AST]<call>{...}</call>", "done"]
    assert _found_in_order(["[AST]<call>...</call>", "...", "done"], output) is None
    assert _found_in_order(["[AST]<call>{x}</call>"], output) is not None
    assert _found_in_order(["done", "[AST]<call>...</call>"], output) is not None
