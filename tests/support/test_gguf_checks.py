"""The real-engine checks judge an answer by the documented contracts, no looser."""

from __future__ import annotations

from typing import Any

from .gguf_checks import problems

CALL = '\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'


def _answer(content: str | None, calls: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    message["tool_calls"] = [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": "get_time", "arguments": "{}"},
        }
        for index in range(calls)
    ]
    return message


def test_a_call_cut_by_the_length_limit_after_complete_calls_is_its_text_once() -> None:
    cut = '\n<tool_call>\n{"name": '
    assert problems("chatml", "required", None, _answer(cut, 2), "length") == []


def test_other_marker_text_beside_a_cut_call_is_still_a_failure() -> None:
    for content in (
        '<|im_start|>\n<tool_call>\n{"name": ',
        CALL + '<tool_call>\n{"na',
        "<|im_end|>",
    ):
        found = problems("chatml", "required", None, _answer(content, 2), "length")
        assert any(problem.startswith("marker text") for problem in found), content


def test_a_cut_call_needs_the_length_limit_and_a_complete_call_before_it() -> None:
    cut = '\n<tool_call>\n{"name": '
    assert problems("chatml", "required", None, _answer(cut, 2), "tool_calls")
    assert problems("chatml", "required", None, _answer(cut, 0), "length")
    assert problems("chatml", "required", False, _answer(cut, 2), "length")


def test_one_complete_call_then_a_cut_one_is_a_repeat_too() -> None:
    cut = '\n<tool_call>\n{"name": '
    assert problems("chatml", "required", None, _answer(cut, 1), "length") == []
    assert problems("chatml", "required", None, _answer("Some text.", 1), "length")
