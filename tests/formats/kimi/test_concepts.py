"""Kimi K2's LabelledCalls: a call id written in the name's place, the name read out of it
(and NamedCalls' reading of calls outside their section, which Kimi K2 models write)."""

from __future__ import annotations

import dataclasses

import pytest

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    NamedCalls,
    Results,
    declare,
    fence,
)
from pawlette.errors import FormatError
from pawlette.formats.kimi.concepts import CallLabel, LabelledCalls

CALL, ARGUMENTS, END = Marker("<call>"), Marker("<args>"), Marker("<end>")


def _layout(count: str) -> Layout:
    return Layout(
        name="labelled",
        summary="calls named by an id",
        frames={
            role: Frame(open=fence(Marker(f"<{role}>")), end=fence(END))
            for role in ("user", "assistant", "tool")
        },
        concepts=(
            LabelledCalls(
                open=fence(CALL),
                arguments_open=fence(ARGUMENTS),
                label=CallLabel(prefix="fn.", separator="#", count=count),  # type: ignore[arg-type]
            ),
            Results(),
            Ignored(("tools",)),
        ),
    )


def _call(name: str, identifier: str) -> dict[str, object]:
    return {"id": identifier, "type": "function", "function": {"name": name, "arguments": "{}"}}


REQUEST = {
    "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [_call("a", "x"), _call("b", "y")]},
        {"role": "tool", "tool_call_id": "x", "content": "1"},
        {"role": "tool", "tool_call_id": "y", "content": "2"},
        {"role": "assistant", "tool_calls": [_call("a", "z")]},
    ],
    "tools": [{"type": "function", "function": {"name": name}} for name in ("a", "b")],
}


@pytest.mark.parametrize(("count", "last"), [("turn", "fn.a#0"), ("conversation", "fn.a#2")])
def test_the_label_is_written_and_read_as_the_calls_id(count: str, last: str) -> None:
    fmt = declare(_layout(count))
    text = fmt.render(REQUEST).text
    assert "<call>fn.a#0<args>{}<call>fn.b#1<args>{}" in text
    assert text.endswith(f"<call>{last}<args>{{}}<end>")
    parsed = fmt.parse(f"<call>{last}<args>{{}}<end>", tools=REQUEST["tools"]).message
    (call,) = parsed["tool_calls"]
    assert (call["id"], call["function"]["name"]) == (last, "a")


@pytest.mark.parametrize(
    ("written", "name"),
    [("fn.get#0", "get"), ("get#12", "get"), ("fn.get", "get"), ("fn.a#b", "a#b"), ("#3", "#3")],
)
def test_the_name_is_read_out_of_a_label(written: str, name: str) -> None:
    assert CallLabel(prefix="fn.", separator="#").name_of(written) == name


def test_a_label_counts_per_turn_or_per_conversation_only() -> None:
    with pytest.raises(FormatError, match=r"label\.count"):
        _layout("message")


def test_names_are_written_bare_without_a_label() -> None:
    layout = _layout("turn")
    concepts = (NamedCalls(open=fence(CALL), arguments_open=fence(ARGUMENTS)), *layout.concepts[1:])
    bare = dataclasses.replace(layout, concepts=concepts)
    assert "<call>a<args>{}<call>b<args>{}" in declare(bare).render(REQUEST).text


def _sectioned(outside: bool) -> Layout:
    layout = _layout("turn")
    calls = dataclasses.replace(
        layout.concept(NamedCalls),
        section_open=fence(Marker("<calls>")),
        section_close=fence(Marker("</calls>")),
        close=fence(Marker("</call>")),
        outside_section=outside,
    )
    return dataclasses.replace(layout, concepts=(calls, *layout.concepts[1:]))


BARE = '<call>fn.a#0<args>{}<call>fn.b#1<args>{"x": 1}'


def test_outside_section_reads_calls_without_section_or_close() -> None:
    fmt = declare(_sectioned(True))
    written = "<calls><call>fn.a#0<args>{}</call><call>fn.b#1<args>{}</call></calls>"
    assert written in fmt.render(REQUEST).text  # writing keeps the whole form
    for output in (BARE, "<calls>" + BARE + "</calls>", "text " + BARE + "</call>"):
        parsed = fmt.parse(output, tools=REQUEST["tools"])
        names = [call["function"]["name"] for call in parsed.message["tool_calls"]]
        assert names == ["a", "b"], output
        assert not parsed.warnings, output


def test_without_outside_section_such_calls_stay_text() -> None:
    parsed = declare(_sectioned(False)).parse(BARE, tools=REQUEST["tools"])
    assert not parsed.message.get("tool_calls")
    assert parsed.message["content"] == BARE
    assert parsed.warnings
