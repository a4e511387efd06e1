"""The parse table's reading-only rows: loose fences and other arguments keys, for any
declared format (a user's too), never written."""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.declare import Frame, JsonCalls, Layout, Marker, declare, fence
from pawlette.declare.table import loose_spellings
from pawlette.engine.fold import fold
from pawlette.errors import ParseError

from ..helpers import feed_in_pieces, random_sizes, sequential_ids


def test_loose_spellings_leave_out_the_whitespace_at_either_end() -> None:
    assert loose_spellings({"<tool_call>\n", "\n<tool_call>\n"}) == {
        "<tool_call>",
        "\n<tool_call>",
    }
    assert loose_spellings({"\n</tool_call>"}) == {"</tool_call>"}
    assert loose_spellings({"<call>"}) == set()  # nothing to leave out
    assert loose_spellings({"\n"}) == set()  # whitespace alone is no marker


END = Marker("<|end|>")


def frame(role: str) -> Frame:
    return Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"))


LOOSE = Layout(
    name="user-loose",
    summary="a user's format whose call fences carry layout: <call>\\n...\\n</call>",
    frames={role: frame(role) for role in ("system", "user", "assistant")},
    concepts=(
        JsonCalls(
            open=fence(Marker("<call>"), "\n"),
            close=fence("\n", Marker("</call>")),
            separator=fence("\n\n"),
            arguments_key="args",
            also_arguments_keys=("arguments", "parameters"),
        ),
    ),
)

CALLS = LOOSE.concepts[0]


def test_a_users_format_reads_its_loose_fences_and_other_keys() -> None:
    fmt = declare(LOOSE)
    strict = declare(
        dataclasses.replace(LOOSE, concepts=(dataclasses.replace(CALLS, loose=False),))
    )
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "Hi",
            "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ]
    # The writer writes the declared spelling only, the same with or without loose reading.
    rendered = fmt.render(messages).text
    assert rendered == strict.render(messages).text
    assert 'Hi\n\n<call>\n{"name": "f", "args": {}}\n</call><|end|>' in rendered
    assert fmt.parse_conversation(rendered).messages == messages
    for key in ("args", "arguments", "parameters"):
        text = f'Hi<call>{{"name": "f", "{key}": {{"a": 1}}}}</call>'
        result = fmt.parse(text, strict=True)
        assert result.message["content"] == "Hi"
        assert result.message["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
        # Turned off, the same text is content (the declaration asked for exactly that),
        # its control tokens out of place, with a warning each, as their token ids would be.
        kept = strict.parse(text)
        assert kept.message == {"role": "assistant", "content": text}
        assert [w.text for w in kept.warnings] == ["<call>", "</call>"]
    with pytest.raises(ParseError, match='both "args" and "parameters"'):
        fmt.parse('<call>{"name": "f", "args": {}, "parameters": {}}</call>', strict=True)


@settings(max_examples=50, deadline=None)
@given(
    spaces=st.lists(st.sampled_from(["", " ", "\n", "\n\n", "\t"]), min_size=4, max_size=4),
    key=st.sampled_from(["args", "arguments", "parameters"]),
    seed=st.integers(0, 100),
)
def test_streamed_arguments_under_any_key_equal_the_whole_read(
    spaces: list[str], key: str, seed: int
) -> None:
    """The scanner streams the arguments under whichever accepted key came: the events of
    any split, calls held or streamed, fold to the whole read."""
    fmt = declare(LOOSE)
    before, opened, closed, between = spaces
    call = json.dumps({"name": "f", key: {"a": [1, {"b": "x y"}]}})
    text = f"Hi{before}<call>{opened}{call}{closed}</call>{between}<call>{call}</call>"
    whole = fmt.parser(id_factory=sequential_ids())
    expected = fold(whole.feed(text) + whole.finish()).messages
    (message,) = expected
    assert [c.arguments for c in message.tool_calls] == ['{"a": [1, {"b": "x y"}]}'] * 2
    for sizes, stream in itertools.product(([1], random_sizes(seed)), (False, True)):
        events = feed_in_pieces(fmt, text, sizes, conversation=False, stream_arguments=stream)
        assert fold(events).messages == expected
