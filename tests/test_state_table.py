"""``pawlette table -f FMT``: every registered format's parse machine, snapshotted.

``tests/golden/<format>/table.txt`` holds what the command prints; a change to a declaration
that changes its machine shows here as a diff (rewrite with ``pytest --update-golden`` and
review it).  A variant whose layout is not its family's default one (Kimi K3 in the kimi
family) is snapshotted beside it, in ``tests/golden/<family>/table-<variant>.txt``.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.declare.readers import Described
from pawlette.engine.machine import GrammarBuilder, Parser
from pawlette.state_table import describe_callable, grammar_text, show_marker, table_text

GOLDEN = Path(__file__).parent / "golden"
VARIANTS = [
    "kimi:k3",
    "kimi:k3-no-thinking",
    "deepseek_dsml:v4",
    "gigachat:3.1",
    "apriel:1.6",
    "minimax_m2:m3",
    "minimax_m2:m3-thinking",
    "minimax_m2:m3-no-thinking",
    "rwkv:thinking",
    "rwkv:no-thinking",
]


def _snapshot(name: str) -> Path:
    family, _, variant = name.partition(":")
    return GOLDEN / family / (f"table-{variant}.txt" if variant else "table.txt")


@pytest.mark.parametrize("name", [*pawlette.formats(), *VARIANTS])
def test_table_matches_its_snapshot(name: str, update_golden: bool) -> None:
    text = table_text(pawlette.get_format(name))
    path = _snapshot(name)
    if update_golden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing: run pytest --update-golden and review it"
    assert text == path.read_text(encoding="utf-8"), f"{path} differs: the machine changed"


@pytest.mark.parametrize("name", [*pawlette.formats(), *VARIANTS])
def test_table_lists_every_state_and_row_once(name: str) -> None:
    grammar = pawlette.get_format(name).grammar
    lines = table_text(pawlette.get_format(name)).splitlines()
    rows = [line for line in lines if "--> " in line]
    assert len(rows) == len(grammar.steps)
    for (state, marker), step in grammar.steps.items():
        wanted = f"  {state} --{show_marker(marker)}--> {step.target}"
        assert sum(1 for row in rows if row.split("  [")[0] == wanted) == 1, wanted
    first = next(index for index, line in enumerate(lines) if line.startswith("states")) + 2
    listed = [line.split()[0] for line in lines[first : first + len(grammar.states)]]
    assert listed == list(grammar.states)
    assert lines[first + len(grammar.states)] == ""
    assert "0x" not in "\n".join(lines)  # no memory address, so the snapshot is stable


def test_the_command_prints_the_table() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pawlette.cli", "table", "-f", "pcml"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == table_text(pawlette.get_format("pcml"))


def test_an_unknown_format_is_one_line_and_exit_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pawlette.cli", "table", "-f", "no-such-format"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "no-such-format" in result.stderr


class _Reader:
    def __init__(self, parser: Parser, label: str = "", sizes: tuple[int, ...] = ()) -> None:
        self.label = label

    def feed(self, text: str, offset: int) -> None:
        pass

    def close(self, marker: str | None, offset: int) -> None:
        pass


def _closing(role: str, count: int, unprintable: object) -> object:
    def action(parser: Parser, offset: int) -> None:
        # role is shown; unprintable is captured but not a plain value, so it is not shown;
        # count is not captured at all (only a closure's free variables are shown)
        parser.malformed(offset, repr((role, unprintable)), "nothing", "")

    return action


def test_readers_and_actions_are_named_without_addresses() -> None:
    builder = GrammarBuilder()
    builder.state("outside", _Reader)
    builder.state("body", functools.partial(_Reader, label="x\ny", sizes=(1, 2)), role="assistant")
    builder.on("outside", "<open>\n", "body", _closing("assistant", 3, object()))  # type: ignore[arg-type]
    builder.on("body", "<close>", "outside")
    grammar = builder.build(escape=False, conversation_start="outside", completion_start="body")
    text = grammar_text(grammar, "tiny")
    assert "format tiny: 2 states, 2 rows" in text
    assert "body     assistant  _Reader(label='x\\ny', sizes=(1, 2))" in text
    assert "outside --<open>\\n--> body  [_closing.action(role='assistant')]" in text
    assert "body --<close>--> outside\n" in text
    assert "0x" not in text


def test_values_by_kind() -> None:
    assert describe_callable(functools.partial(_Reader, flags={"b", "a"})) == (
        "_Reader(flags={'a', 'b'})"
    )
    assert describe_callable(functools.partial(_Reader, kinds=(ValueError,))) == (
        "_Reader(kinds=(ValueError,))"
    )
    assert describe_callable(functools.partial(_Reader, thing=object())) == (
        "_Reader(thing=object)"
    )
    assert describe_callable(str.upper) == "str.upper"
    assert show_marker("a\t\\\x01") == "a\\t\\\\\\x01"


def test_a_described_factory_is_shown_by_its_words() -> None:
    factory = Described("tool items", _Reader, wrap="openai", array=False)
    assert describe_callable(factory) == "tool items (wrap='openai', array=False)"
    assert describe_callable(Described("call name", _Reader)) == "call name"
    assert describe_callable(functools.partial(_Reader, inner=factory)) == (
        "_Reader(inner=tool items (wrap='openai', array=False))"
    )
    parser: Any = object()
    assert factory(parser).label == ""  # the factory makes its reader


def _code(factory: object) -> object:
    """What makes the readers of ``factory``: its function's code, or its class."""
    while isinstance(factory, (Described, functools.partial)):
        factory = factory.make if isinstance(factory, Described) else factory.func
    return getattr(factory, "__code__", factory)


def test_words_name_one_reader_in_every_table() -> None:
    """A description is never shared by two factories that run different code, so a table
    tells different readers apart."""
    codes: dict[str, set[object]] = {}
    for name in [*pawlette.formats(), *VARIANTS]:
        for state in pawlette.get_format(name).grammar.states.values():
            if isinstance(state.reader, Described):
                codes.setdefault(describe_callable(state.reader), set()).add(_code(state.reader))
    assert codes, "no format describes a reader"
    shared = {words: found for words, found in codes.items() if len(found) > 1}
    assert not shared, shared


def _named_by_code(factory: object) -> list[str]:
    """The functions in ``factory`` (a reader factory, or a value it fixes) that a table
    would name by where their code lives: any but a class or a described factory."""
    if isinstance(factory, Described):
        return [name for _, value in factory.shown for name in _named_by_code(value)]
    if isinstance(factory, functools.partial):
        values = [factory.func, *factory.args, *factory.keywords.values()]
        return [name for value in values for name in _named_by_code(value)]
    if isinstance(factory, (tuple, list, frozenset, set)):
        return [name for value in factory for name in _named_by_code(value)]
    if callable(factory) and not isinstance(factory, type):
        return [describe_callable(factory)]
    return []


@pytest.mark.parametrize("name", [*pawlette.formats(), *VARIANTS])
def test_no_reader_is_named_by_where_its_code_lives(name: str) -> None:
    """Every state's reader is a class or words (:class:`Described`), so moving or merging
    reader code leaves the tables alone."""
    states = pawlette.get_format(name).grammar.states.values()
    found = {state.name: _named_by_code(state.reader) for state in states}
    assert not {state: names for state, names in found.items() if names}
