"""A call id the model writes in a shape its format's render refuses, over every registered
format (its variants too) whose calls concept declares an ``id_pattern``: the parse serves
the call under an id of that shape, with a warning naming the written one, and the
conversation holding the call as served renders again."""

from __future__ import annotations

import re
from typing import Any

import pytest

import pawlette
from pawlette.declare.call_ids import id_pieces, mint_id

from ..helpers import completion_text

WRITTEN = "abc"  # (three characters: no pattern of a fixed length of nine matches it)


def _patterned() -> list[tuple[str, str]]:
    """Each format name (``NAME`` and ``NAME:VARIANT``) whose calls concept has an
    ``id_pattern``, with the pattern."""
    found = []
    for base in pawlette.formats():
        declaration = getattr(pawlette.get_format(base), "declaration", None)
        variants = getattr(declaration, "variants", None) or {}
        for name in [base, *(f"{base}:{variant}" for variant in variants)]:
            concepts = getattr(pawlette.get_format(name).declaration, "concepts", ())
            for concept in concepts:
                if getattr(concept, "job", None) == "calls" and concept.id_pattern:
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
