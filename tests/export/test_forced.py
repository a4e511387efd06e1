"""A forced tool choice turns reasoning off (pawlette.export.forced), for every format that
has a reasoning block: its grammar accepts the call written right away and refuses the same
call after a reasoning block, which ``auto`` keeps accepting; the bundle reports no reasoning
block and its whole-turn grammar is the forced prefix, then the grammar after it."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.export import export_grammar, export_grammar_bundle
from pawlette.export.grammar import grammar_formats

from .test_grammar import SYNTAXES, TOOLS, accepts, completion_ids, reasoning_close_ids

NAMED = {"type": "function", "function": {"name": "get_weather"}}
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}


def _with_reasoning() -> list[str]:
    """The formats with a reasoning block that a turn writes (DeepSeek V3.1 reads one but
    never writes ``reasoning_content``)."""
    return [
        name
        for name in grammar_formats()
        # (markers as text: only whether there is a reasoning block is asked here)
        if export_grammar_bundle(name, TOOLS, "auto", markers_as_text=True)["reasoning"] is not None
        and _writes_reasoning(name)
    ]


def _writes_reasoning(name: str) -> bool:
    message = {"role": "assistant", "content": "a", "reasoning_content": "b"}
    rendering = pawlette.get_format(name).render([{"role": "user", "content": "hi"}, message])
    return not rendering.losses


def _turn(name: str, reasoning: str | None) -> list[int]:
    """The ids the model writes for a call to get_weather (after ``reasoning``)."""
    message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    request = {"messages": [{"role": "user", "content": "hi"}, message], "tools": TOOLS}
    fmt = pawlette.get_format(name)
    # Where the prompt opens the block (MiniMax-M2), the call comes after closing it empty.
    closed = reasoning_close_ids(fmt) if reasoning is None else []
    return closed + completion_ids(fmt, request, 1)


def test_the_formats_with_reasoning_are_covered() -> None:
    assert {"pcml", "omni", "chatml"} <= set(_with_reasoning())


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("name", _with_reasoning())
def test_a_forced_choice_turns_reasoning_off(name: str, syntax: Any) -> None:
    plain, thought = _turn(name, None), _turn(name, "Paris, then.")
    assert accepts(name, export_grammar(name, TOOLS, "auto", True, syntax), syntax, thought)
    for choice in ("required", NAMED):
        grammar = export_grammar(name, TOOLS, choice, True, syntax)
        assert accepts(name, grammar, syntax, plain), choice
        assert not accepts(name, grammar, syntax, thought), choice
        bundle = export_grammar_bundle(name, TOOLS, choice, True, syntax)
        assert bundle["reasoning"] is None
        key = "required" if choice == "required" else "functions"
        prefix = bundle["forced_prefix"][key]
        prefix = prefix if isinstance(prefix, str) else prefix["get_weather"]
        assert prefix and bundle["grammar_after_prefix"] is not None
    assert export_grammar_bundle(name, TOOLS, "none", True, syntax)["reasoning"] is not None
