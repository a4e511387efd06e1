"""Call ids minted and held to the shape a calls concept's ``id_pattern`` says its format
writes (Mistral's nine letters and digits)."""

from __future__ import annotations

import dataclasses
import re

import pytest

import pawlette
from pawlette.declare import NamedCalls, declare
from pawlette.declare.call_ids import id_pieces, mint_id
from pawlette.formats.mistral import SMALL, layout


@pytest.mark.parametrize(
    "pattern", ["[A-Za-z0-9]{9}", "call-\\d{3}", "[a-f0-9]{4,8}", "x[_.]{2}[0-9]"]
)
def test_a_minted_id_matches_its_pattern(pattern: str) -> None:
    pieces = id_pieces(pattern)
    assert not isinstance(pieces, str)
    for _ in range(20):
        assert re.fullmatch(pattern, mint_id(pieces))


@pytest.mark.parametrize("pattern", ["(a|b)+", "[^x]{3}", "\\w{5}", "a*", ""])
def test_a_pattern_outside_the_language_of_ids_is_named(pattern: str) -> None:
    assert isinstance(id_pieces(pattern), str)


def test_a_format_whose_ids_cannot_be_minted_is_refused_when_declared() -> None:
    declared = layout(SMALL)
    concepts = tuple(
        dataclasses.replace(concept, id_pattern="(a|b)+")
        if isinstance(concept, NamedCalls)
        else concept
        for concept in declared.concepts
    )
    with pytest.raises(pawlette.FormatError, match=r"NamedCalls\.id_pattern: '\(a\|b\)\+'"):
        declare(dataclasses.replace(declared, concepts=concepts))


def test_an_id_factory_given_by_the_caller_is_kept() -> None:
    """The format's shape is the default; a caller's own ids are the caller's choice."""
    message = (
        pawlette.get_format("mistral")
        .parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', id_factory=lambda: "mine")
        .message
    )
    assert message["tool_calls"][0]["id"] == "mine"


KIMI_SECTION = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")


def _kimi_calls(*numbers: int) -> str:
    calls = "".join(
        f"<|tool_call_begin|>functions.get_weather:{number}<|tool_call_argument_begin|>{{}}"
        "<|tool_call_end|>"
        for number in numbers
    )
    return KIMI_SECTION[0] + calls + KIMI_SECTION[1]


@pytest.mark.parametrize(
    ("numbers", "served"), [((0, 0), (0, 1)), ((1, 0, 0), (1, 0, 2)), ((0, 1), (0, 1))]
)
def test_kimi_calls_of_one_answer_are_served_under_distinct_labels(
    numbers: tuple[int, ...], served: tuple[int, ...]
) -> None:
    """A repeated label gets the number after the highest served (what the template would
    write next), after a warning; distinct labels are served as written."""
    completion = pawlette.get_format("kimi").parse(_kimi_calls(*numbers))
    ids = [call["id"] for call in completion.message["tool_calls"]]
    assert ids == [f"functions.get_weather:{number}" for number in served]
    assert len(completion.warnings) == (len(set(numbers)) != len(numbers))
    if completion.warnings:
        assert "held by an earlier call of the message" in completion.warnings[0].message


def test_a_repeated_call_id_is_refused_in_strict_mode() -> None:
    with pytest.raises(pawlette.ParseError, match="a distinct id for each call"):
        pawlette.get_format("kimi").parse(_kimi_calls(0, 0), strict=True)


@pytest.mark.parametrize(
    ("name", "completion"),
    [
        (
            "mistral",
            "[TOOL_CALLS]f[CALL_ID]abcDEF123[ARGS]{}[TOOL_CALLS]f[CALL_ID]abcDEF123[ARGS]{}",
        ),
        (
            "mistral:nemo",
            '[TOOL_CALLS][{"name": "f", "arguments": {}, "id": "abcDEF123"}, '
            '{"name": "f", "arguments": {}, "id": "abcDEF123"}]',
        ),
    ],
)
def test_a_repeated_written_id_is_replaced_by_one_the_format_renders(
    name: str, completion: str
) -> None:
    fmt = pawlette.get_format(name)
    parsed = fmt.parse(completion)
    ids = [call["id"] for call in parsed.message["tool_calls"]]
    assert ids[0] == "abcDEF123" and ids[1] != "abcDEF123"
    assert re.fullmatch("[A-Za-z0-9]{9}", ids[1])
    assert len(parsed.warnings) == 1


def test_calls_of_different_messages_may_share_an_id() -> None:
    """Ids are distinct within a message: a conversation's turns number their calls anew."""
    fmt = pawlette.get_format("kimi")
    call = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for turn in range(2):
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{turn}", **call}]},
            {"role": "tool", "tool_call_id": f"c{turn}", "content": "ok"},
        ]
    parsed = fmt.parse_conversation(fmt.render({"messages": messages}).text)
    assert not parsed.warnings


@pytest.mark.parametrize("name", ["get\tweather", "get<|channel|>weather", "get<|end|>"])
def test_harmony_refuses_a_call_name_it_does_not_read_back(name: str) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    request = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]}]
    }
    with pytest.raises(pawlette.RequestError) as refused:
        pawlette.get_format("harmony").render(request)
    assert refused.value.path == "messages[1].tool_calls[0].function.name"
    assert "without whitespace or special tokens" in str(refused.value)
