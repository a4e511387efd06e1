"""The headed turns' readers: the fence read by offsets is the fence read by lines, and a
big fenced call reads the same fed whole as in pieces (events, warnings, content)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.errors import ParseError
from pawlette.legacy.headed.readers import FenceTail
from pawlette.legacy.python_reader import ClosingFence
from pawlette.types import Event, ParseWarning, TextDelta

from ...helpers import feed_in_pieces


def _joined(events: list[Event]) -> list[Event]:
    """Consecutive content joined: a call found malformed gives the rest of each feed as
    content as it comes (one piece per feed)."""
    joined: list[Event] = []
    for event in events:
        if isinstance(event, TextDelta) and joined and isinstance(joined[-1], TextDelta):
            joined[-1] = TextDelta(joined[-1].text + event.text)
        else:
            joined.append(event)
    return joined


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="\n` \tx", max_size=40),
    st.lists(st.integers(1, 7), min_size=1, max_size=5),
    st.integers(0, 3),
)
def test_fence_tail_releases_what_the_line_reader_releases(
    text: str, sizes: list[int], skip: int
) -> None:
    # Feed by feed (a code block streams each feed's release as it comes), from a start
    # inside the fed text too.
    by_lines, by_offsets = ClosingFence(), FenceTail()
    position = 0
    index = 0
    while position < len(text):
        size = sizes[index % len(sizes)]
        index += 1
        piece = "y" * skip + text[position : position + size]
        position += size
        held, end = by_offsets.feed(piece, skip)
        assert held + piece[skip:end] == by_lines.feed(piece[skip:])
    assert by_offsets.close() == by_lines.close()


def _call_turn(arguments: str, *, closed: bool = True) -> str:
    fmt = pawlette.get_format("chatglm3")
    call = {"id": "c", "type": "function", "function": {"name": "store", "arguments": arguments}}
    question = [{"role": "user", "content": "go"}]
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    prompt = fmt.render(question, add_generation_prompt=True).text
    text = fmt.render([*question, message]).text[len(prompt) :]
    if not closed:  # the turn ends before its closing fence
        text = text.replace("\n```<|observation|>", "")
    return text


BODY = 'def f(x):\n    """A "doc" \\ string."""\n    return 1\n```\n' * 3000


@pytest.mark.parametrize(
    "text",
    [
        _call_turn(json.dumps({"path": "a.py", "text": BODY, "n": [1, 2.5, None, True]})),
        _call_turn(json.dumps({"path": "a.py", "text": BODY}), closed=False),
        _call_turn(json.dumps({"text": BODY})).replace('text="', "text=bad('", 1),
        _call_turn(json.dumps({"text": BODY})).replace("```<|observation|>", "```\n \nx"),
    ],
    ids=["valid", "unclosed", "malformed", "text-after-fence"],
)
def test_a_big_fenced_call_reads_the_same_whole_and_in_pieces(text: str) -> None:
    fmt = pawlette.get_format("chatglm3")
    whole = feed_in_pieces(fmt, text, [len(text)], conversation=False)
    for sizes in ([1000], [4096, 3], [7]):
        assert _joined(feed_in_pieces(fmt, text, sizes, conversation=False)) == _joined(whole)
    assert all(type(getattr(event, "arguments", "")) is str for event in whole)


@pytest.mark.parametrize("tail", ["", "\n", "\n``", "  \n", " x"])
def test_a_big_call_missing_its_closing_fence_warns_with_its_text_as_written(tail: str) -> None:
    """The call stands at its ')' and the turn ends without the fence: the warning's text is
    the block as written, rebuilt from the call's JSON and what differs from it (escapes
    that read the same in JSON, others that do not, single-quoted strings, numbers)."""
    fmt = pawlette.get_format("chatglm3")
    value = '"' + "lorem \\\"ipsum\\\"\\n\\\\ é\\t北 \\x41\\u00e9 \\'q\\' " * 2000 + '"'
    call = f"tool_call(text={value}, other='a \"b\" c', n=[1_000, .5, True, None],\n k={{}})"
    block = "store\n```python\n" + call + tail
    for sizes in ([7], [4096, 3], [len(block) + 20]):
        events = feed_in_pieces(fmt, block + "<|observation|>", sizes, conversation=False)
        warnings = [event for event in events if isinstance(event, ParseWarning)]
        assert warnings[-1].text == block, sizes
        assert warnings[-1].message.endswith("no closing '```' fence; expected a fenced call")
    with pytest.raises(ParseError):  # (the fence missing, or the backticks after the call)
        fmt.parse(block, strict=True)
