"""JsonCallList with no opener (``open=None``): one bare JSON array of calls as the whole
assistant turn, ``[{"name": ..., "arguments": {...}}]``.  Checked in every interpreter: the
writer, reading, the exported Jinja template, the grammar (the cross-artifact tests check
``user-bare-listed`` on generated conversations too)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pawlette.declare import JsonCallList, Marker, fence
from pawlette.errors import FormatError
from pawlette.export import export_grammar, export_jinja
from pawlette.format import Format

from . import registering
from .test_json_calls import WEATHER, call, layout, read_calls_of, request, template_render

BARE = JsonCallList(open=None, content="replaces_calls")


@pytest.fixture
def bare() -> Iterator[Format]:
    with registering.registered(layout("test-bare-list", BARE)) as fmt:
        yield fmt


def test_the_calls_are_the_whole_turn(bare: Format) -> None:
    calls = [call(1, {"city": "Paris"}), call(2, {"city": "Zürich", "days": 2})]
    req = request({"role": "assistant", "content": None, "tool_calls": calls})
    text = bare.render(req).text
    assert text.endswith(
        '<|assistant|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}}]<|end|>'
    )
    read = bare.parse_conversation(text).messages[-1]
    assert read_calls_of(read) == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Zürich", "days": 2}),
    ]
    assert not read.get("content")


@pytest.mark.parametrize("content", ["Let me see.", "", None])
def test_the_exported_template_writes_the_text_or_the_calls(
    bare: Format, content: str | None
) -> None:
    req = request({"role": "assistant", "content": content, "tool_calls": [call(1, {"city": "P"})]})
    assert template_render(export_jinja(bare.name), req, objects=False) == bare.render(req).text


def test_a_completion_is_read_as_text_or_as_the_array(bare: Format) -> None:
    completion = bare.parse(
        ' \n[{"name": "get_weather", "arguments": {"city": "P"}}]<|end|>', tools=[WEATHER]
    )
    assert completion.warnings == ()
    assert read_calls_of(completion.message) == [("get_weather", {"city": "P"})]
    assert completion.finish_reason == "tool_calls"
    text = bare.parse("It is sunny.<|end|>", tools=[WEATHER])
    assert text.message == {"role": "assistant", "content": "It is sunny."}
    assert text.warnings == ()


@pytest.mark.parametrize(
    "written",
    ["[1] is the answer", '[{"city": "P"}]', '[{"name": "nope", "arguments": {}}]', "[]"],
)
def test_a_turn_starting_as_an_array_of_no_calls_is_content_with_a_warning(
    bare: Format, written: str
) -> None:
    completion = bare.parse(written + "<|end|>", tools=[WEATHER])
    assert completion.message == {"role": "assistant", "content": written}
    (warning,) = completion.warnings
    assert warning.offset == 0 and "expected a JSON array of calls" in warning.message


def test_the_grammar_keeps_text_from_starting_as_the_array(bare: Format) -> None:
    grammar = export_grammar(bare.name, [WEATHER], "auto", True, "lark")
    gbnf = export_grammar(bare.name, [WEATHER], "auto", True, "gbnf")
    assert "bare-list-text" in gbnf
    assert "BARE_LIST_TEXT" in grammar
    assert "may not start with '['" in grammar


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"content": "written"},
            r"JsonCallList\.content: 'written' with open=None; expected 'refused', 'dropped' or "
            r"'replaces_calls'",
        ),
        (
            {"content": "refused", "close": fence(Marker("</calls>"))},
            r"JsonCallList\.close: .* with open=None; expected no close",
        ),
    ],
)
def test_a_bare_array_refuses_what_could_not_be_read_back(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(FormatError, match=message):
        layout("test-bare-bad", JsonCallList(open=None, **fields))


def test_an_empty_opener_is_still_refused() -> None:
    with pytest.raises(
        FormatError, match=r"JsonCallList\.open: empty; expected a fence, or open=None"
    ):
        layout("test-bare-empty", JsonCallList(open=()))


@pytest.mark.parametrize(
    ("list_open", "list_close"), [("calls: [", "]"), ("[", ""), ("", "]"), ("{", "}")]
)
def test_a_list_is_a_json_array_or_objects_one_after_another(
    list_open: str, list_close: str
) -> None:
    """Reading takes a JSON array or JSON objects one after another: any other list text
    would be written and never read back."""
    calls = JsonCallList(open=fence(Marker("<calls>")), list_open=list_open, list_close=list_close)
    with pytest.raises(
        FormatError,
        match=r"test-list-bad: JsonCallList\.list_open / list_close: .*; expected '\[' and "
        r"'\]' \(a JSON array\), or neither",
    ):
        layout("test-list-bad", calls)
