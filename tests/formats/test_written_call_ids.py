"""A call id the model writes in a shape its format's render refuses, over every registered
format (its variants too) whose calls concept declares an ``id_pattern``: the parse serves
the call under an id of that shape, with a warning naming the written one, and the
conversation holding the call as served renders again; a conversation read back answers the
call's result under the same new id."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.declare import Results
from pawlette.declare.call_ids import id_pieces, mint_id

from ..helpers import completion_text

WRITTEN = "abc"  # (three characters: no pattern of a fixed length of nine matches it)


def _patterned(kind: type | None = None) -> list[tuple[str, str]]:
    """Each format name (``NAME`` and ``NAME:VARIANT``) whose calls concept (or concept of
    ``kind``) has an ``id_pattern``, with the pattern."""
    found = []
    for base in pawlette.formats():
        declaration = getattr(pawlette.get_format(base), "declaration", None)
        variants = getattr(declaration, "variants", None) or {}
        for name in [base, *(f"{base}:{variant}" for variant in variants)]:
            concepts = getattr(pawlette.get_format(name).declaration, "concepts", ())
            for concept in concepts:
                owner = (
                    getattr(concept, "job", None) == "calls"
                    if kind is None
                    else (type(concept) is kind)
                )
                if owner and concept.id_pattern:
                    found.append((name, concept.id_pattern))
    return found


PATTERNED = _patterned()


def test_the_formats_with_an_id_pattern_are_found() -> None:
    names = {name for name, _ in PATTERNED}
    assert {"mistral", "mistral:small-3.2", "mistral:nemo"} <= names


@pytest.mark.parametrize(("name", "pattern"), PATTERNED, ids=[name for name, _ in PATTERNED])
def test_a_written_id_of_another_shape_is_served_as_one_the_format_renders(
    name: str, pattern: str
) -> None:
    fmt = pawlette.get_format(name)
    pieces = id_pieces(pattern)
    assert not isinstance(pieces, str)
    valid = mint_id(pieces)
    assert re.fullmatch(pattern, WRITTEN) is None
    call = {"id": valid, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    request: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": "Go."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    }
    written = completion_text(fmt, request, 1)
    assert written.count(valid) == 1, written
    completion = written.replace(valid, WRITTEN)

    parsed = fmt.parse(completion)
    calls = parsed.message["tool_calls"]
    served = calls[0]["id"]
    assert len(calls) == 1 and re.fullmatch(pattern, served), calls
    assert [warning.text for warning in parsed.warnings] == [WRITTEN]
    assert f"call id {WRITTEN!r}" in parsed.warnings[0].message
    assert f"(served as {served!r})" in parsed.warnings[0].message
    # (where the call holding it begins)
    assert 0 <= parsed.warnings[0].offset <= completion.index(WRITTEN)

    # The parse and the next render agree: the conversation as served renders.
    answered = [
        *request["messages"][:1],
        parsed.message,
        {"role": "tool", "tool_call_id": served, "content": "ok"},
    ]
    text = fmt.render({"messages": answered, "tools": request["tools"]}).text
    assert served in text and WRITTEN not in text

    with pytest.raises(pawlette.ParseError, match=f"call id {WRITTEN!r}"):
        fmt.parse(completion, strict=True)


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {}}}]


def _round(call_id: str, answered: str) -> dict[str, Any]:
    """A request of one call (``call_id``), a result naming ``answered`` and an answer."""
    call = {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": answered, "content": "ok"},
        {"role": "assistant", "content": "Done."},
    ]
    return {"messages": messages, "tools": TOOLS}


@pytest.mark.parametrize(("name", "pattern"), PATTERNED, ids=[name for name, _ in PATTERNED])
def test_a_conversation_read_back_answers_a_replaced_id_under_the_served_one(
    name: str, pattern: str
) -> None:
    """A conversation whose call and result name an id of another shape reads back with the
    call served under an id of the format's shape, the same on every read, and the result
    naming that id (each with a warning): the messages read back render again."""
    fmt = pawlette.get_format(name)
    pieces = id_pieces(pattern)
    assert not isinstance(pieces, str)
    valid = mint_id(pieces)
    text = fmt.render(_round(valid, valid)).text
    assert text.count(valid) == 2, text
    odd = text.replace(valid, WRITTEN)

    first, again = fmt.parse_conversation(odd), fmt.parse_conversation(odd)
    assert first.messages == again.messages
    served = first.messages[1]["tool_calls"][0]["id"]
    assert re.fullmatch(pattern, served), first.messages
    assert first.messages[2]["tool_call_id"] == served
    assert [warning.text for warning in first.warnings] == [WRITTEN, WRITTEN]
    assert f"its call served as {served!r}" in first.warnings[1].message
    assert fmt.render({"messages": first.messages, "tools": TOOLS}).text == text.replace(
        valid, served
    )
    with pytest.raises(pawlette.ParseError, match=f"call id {WRITTEN!r}"):
        fmt.parse_conversation(odd, strict=True)


RESULT_PATTERNED = _patterned(Results)


def test_the_formats_whose_results_have_an_id_pattern_are_found() -> None:
    assert {"mistral", "mistral:small-3.2"} <= {name for name, _ in RESULT_PATTERNED}


@pytest.mark.parametrize(
    ("name", "pattern"), RESULT_PATTERNED, ids=[name for name, _ in RESULT_PATTERNED]
)
def test_a_result_naming_an_id_of_another_shape_reads_back_under_one_the_format_renders(
    name: str, pattern: str
) -> None:
    """A result whose written id answers no call and is of a shape the render refuses reads
    back under an id of the format's shape, the same on every read, with a warning naming
    the written id: the messages read back render again."""
    fmt = pawlette.get_format(name)
    pieces = id_pieces(pattern)
    assert not isinstance(pieces, str)
    valid, answered = mint_id(pieces), mint_id(pieces)
    text = fmt.render(_round(valid, answered)).text
    assert text.count(answered) == 1, text
    odd = text.replace(answered, WRITTEN)

    first, again = fmt.parse_conversation(odd), fmt.parse_conversation(odd)
    assert first.messages == again.messages
    assert first.messages[1]["tool_calls"][0]["id"] == valid
    served = first.messages[2]["tool_call_id"]
    assert re.fullmatch(pattern, served) and served != valid, first.messages
    assert [warning.text for warning in first.warnings] == [WRITTEN]
    message = first.warnings[0].message
    assert f"result's call id {WRITTEN!r}" in message and f"(served as {served!r})" in message
    assert f"an id matching {pattern}" in message
    assert 0 <= first.warnings[0].offset <= odd.index(WRITTEN)
    assert fmt.render({"messages": first.messages, "tools": TOOLS}).text == text.replace(
        answered, served
    )
    with pytest.raises(pawlette.ParseError, match=f"result's call id {WRITTEN!r}"):
        fmt.parse_conversation(odd, strict=True)


# Ids as a model or a hand-edited transcript may write them: any printable text but the
# characters that would end the id's field (quotes, brackets) or make its JSON invalid.
_WRITTEN_IDS = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters='[]<>{}"\\'),
    min_size=1,
    max_size=12,
).filter(str.strip)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(RESULT_PATTERNED),
    _WRITTEN_IDS,
    _WRITTEN_IDS,
    st.booleans(),
)
def test_any_written_ids_read_back_as_messages_that_render_again(
    patterned: tuple[str, str], call_written: str, result_written: str, answered: bool
) -> None:
    """Whatever ids a call and its result are written with (the result naming the call's or
    another), the conversation reads back as messages the format renders again, their ids of
    the declared shape, and every id read as another is named in a warning."""
    name, pattern = patterned
    fmt = pawlette.get_format(name)
    pieces = id_pieces(pattern)
    assert not isinstance(pieces, str)
    valid, other = mint_id(pieces), mint_id(pieces)
    text = fmt.render(_round(valid, valid if answered else other)).text
    odd = text.replace(valid, call_written.strip())
    if not answered:
        odd = odd.replace(other, result_written.strip())
    back = fmt.parse_conversation(odd)
    fmt.render({"messages": back.messages, "tools": TOOLS})
    ids = [back.messages[1]["tool_calls"][0]["id"], back.messages[2]["tool_call_id"]]
    assert all(re.fullmatch(pattern, found) for found in ids), back.messages
    written = {call_written.strip(), result_written.strip() if not answered else ""} - {""}
    replaced = {found for found in written if re.fullmatch(pattern, found) is None}
    assert replaced <= {warning.text for warning in back.warnings}, back.warnings
