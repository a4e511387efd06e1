"""A generation prompt that leaves the model elsewhere than the usual one does.

DeepSeek V3.1's thinking prompt opens ``<think>`` after a user message; after tool results its
template opens nothing, and the model answers plainly.  The grammar for such a turn starts
where the prompt leaves the model (``prompt=`` of the exports, :meth:`Format.start_after`), as
the parser then does; every other format, given its usual prompt, gets the grammar it always
had.
"""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.export.grammar import grammar_formats

from ..helpers import WITHOUT_CALLS
from .test_grammar import SYNTAXES, accepts, encode_special, encode_text, export_grammar
from .test_grammar import export_grammar_bundle as bundle_of

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
CALL = {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
AFTER_RESULTS = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "a", "content": "18"},
]
AFTER_USER = [{"role": "user", "content": "Weather in Paris?"}]
THINKING = "deepseek:v3.1-thinking"
END = "<｜end▁of▁sentence｜>"


def prompt(name: str, messages: list[dict[str, Any]]) -> str:
    fmt = pawlette.get_format(name)
    return fmt.render(messages, TOOLS, add_generation_prompt=True).text


@pytest.mark.parametrize("name", grammar_formats())
def test_the_usual_prompt_changes_nothing(name: str) -> None:
    fmt = pawlette.get_format(name)
    usual = fmt.render(AFTER_USER, TOOLS, add_generation_prompt=True).text
    assert fmt.start_after(usual) is None
    for choice in ("auto",) if name in WITHOUT_CALLS else ("auto", "required"):
        with_prompt = bundle_of(fmt, TOOLS, choice, markers_as_text=True, prompt=usual)
        assert with_prompt == bundle_of(fmt, TOOLS, choice, markers_as_text=True)


def test_after_results_the_thinking_prompt_leaves_the_model_before_the_block() -> None:
    fmt = pawlette.get_format(THINKING)
    assert fmt.start_after(prompt(THINKING, AFTER_USER)) is None
    assert fmt.start_after(prompt(THINKING, AFTER_RESULTS)) == "assistant.head"
    answer = fmt.parse("It is 18°C." + END, prompt=prompt(THINKING, AFTER_RESULTS))
    assert answer.message == {"role": "assistant", "content": "It is 18°C."}


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_the_grammar_after_results_takes_a_plain_answer(syntax: str) -> None:
    answer = encode_text(THINKING, "It is 18°C.")
    usual = export_grammar(THINKING, TOOLS, "auto", syntax=syntax)
    after_results = prompt(THINKING, AFTER_RESULTS)
    after = export_grammar(THINKING, TOOLS, "auto", syntax=syntax, prompt=after_results)
    assert not accepts(THINKING, usual, syntax, answer)  # inside the block: </think> must come
    assert accepts(THINKING, after, syntax, answer)
    thought = encode_special(THINKING, "<think>") + encode_text(THINKING, "Hm.")
    thought += encode_special(THINKING, "</think>") + answer
    assert accepts(THINKING, after, syntax, thought)  # the model may still open a block


def test_a_forced_call_after_results_closes_no_block() -> None:
    usual = bundle_of(THINKING, TOOLS, "required", markers_as_text=True)
    after = bundle_of(
        THINKING, TOOLS, "required", markers_as_text=True, prompt=prompt(THINKING, AFTER_RESULTS)
    )
    assert usual["forced_prefix"]["required"].startswith("</think>")
    assert after["forced_prefix"]["required"] == "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"
