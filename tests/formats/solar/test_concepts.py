"""What Solar Open needs, on a tiny layout: :class:`IdFirstCalls` (the id before the
name), ``Results.name_close`` (the answered call's name after the result's id) and
``SystemPrompt.heading`` (before the gathered system texts)."""

from __future__ import annotations

import pytest

from pawlette.declare import (
    Frame,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    declare,
    fence,
)
from pawlette.errors import FormatError
from pawlette.formats.solar.concepts import IdFirstCalls

CALL, NAME, ARGUMENTS = Marker("<call>"), Marker("<name>"), Marker("<args>")
RESULT_NAME, RESULT_TEXT, RESULT_END = Marker("<rname>"), Marker("<rtext>"), Marker("<rend>")
END = Marker("<end>")


def _layout(**calls: object) -> Layout:
    return Layout(
        name="idfirst",
        summary="id-first calls",
        frames={
            role: Frame(open=fence(Marker(f"<{role}>")), end=fence(END))
            for role in ("system", "user", "assistant", "tool")
        },
        concepts=(
            SystemPrompt(placement="gathered", heading=fence("# Rules\n")),
            IdFirstCalls(open=fence(CALL), arguments_open=fence(ARGUMENTS), **calls),  # type: ignore[arg-type]
            Results(
                grouped=True,
                id_close=fence(RESULT_NAME),
                name_close=fence(RESULT_TEXT),
                item_close=fence(RESULT_END),
                item_gap=fence(Marker("<next>")),
                gap_ends_group=False,
            ),
        ),
    )


def _call(name: str, identifier: str) -> dict[str, object]:
    return {"id": identifier, "type": "function", "function": {"name": name, "arguments": "{}"}}


REQUEST = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a", "x1"), _call("b", "y2")]},
        {"role": "tool", "tool_call_id": "x1", "content": "1"},
        {"role": "tool", "tool_call_id": "y2", "content": "2"},
    ],
}


def test_the_id_comes_first_and_results_name_their_call() -> None:
    fmt = declare(_layout(name_open=fence(NAME)))
    text = fmt.render(REQUEST["messages"]).text
    assert text == (
        "<system># Rules\nBe brief.<end><user>go<end>"
        "<assistant><call>x1<name>a<args>{}<call>y2<name>b<args>{}<end>"
        "<tool>x1<rname>a<rtext>1<rend><next>y2<rname>b<rtext>2<rend><end>"
    )
    parsed = fmt.parse_conversation(text, strict=True).to_request()
    assert parsed["messages"] == REQUEST["messages"]  # the heading is read off the text


def test_the_fence_between_id_and_name_is_required() -> None:
    with pytest.raises(FormatError, match="IdFirstCalls: name_open"):
        declare(_layout())


def test_name_close_needs_the_results_id() -> None:
    layout = _layout(name_open=fence(NAME))
    bare = Results(name_close=fence(RESULT_TEXT))
    with pytest.raises(FormatError, match="name_close without id_close"):
        Layout(
            name=layout.name,
            summary=layout.summary,
            frames=layout.frames,
            concepts=(layout.concepts[1], bare),
        )
