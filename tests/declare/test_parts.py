"""Content parts (``pawlette.legacy.parts``) through a user-declared format.

The generated cross-artifact checks (``test_cross_artifacts``) draw text-only conversations;
here the same checks run on conversations whose user and assistant messages hold images
(placeholder runs) and boxes: render equals the exported template under transformers (text
and mask), parsing the render gives the conversation back (also without the line break
after an image), and the turn grammar accepts every assistant turn with boxes, in Lark and
GBNF, and refuses a box out of range.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.errors import ParseError, UnsupportedFeature
from pawlette.export import export_grammar
from pawlette.format import Format

from ..export.support import merged, trainable_spans
from ..helpers import canonical
from . import parts_format
from .conversations import texts
from .test_cross_artifacts import as_lark, jinja_render, turn_ids
from .tokens import accepts, special_ids


@pytest.fixture(scope="module")
def fmt() -> Iterator[Format]:
    with parts_format.registered() as registered:
        yield registered


def boxes() -> st.SearchStrategy[dict[str, Any]]:
    box = st.lists(st.integers(0, 1000), min_size=4, max_size=4)
    return st.builds(
        lambda listed: {"type": "bbox", "bbox": {"boxes": listed}},
        st.lists(box, min_size=1, max_size=2),
    )


def images() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda count: {"type": "image_url", "image_url": {"url": "", "tokens": count}},
        st.integers(0, 3),
    )


@st.composite
def content(draw: st.DrawFn, fmt: Format, role: str) -> list[dict[str, Any]]:
    """Parts as parsing gives them back: no two texts in a row, no empty text."""
    kinds = [boxes(), images()] if role == "user" else [boxes()]
    parts: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 4))):
        if (not parts or parts[-1]["type"] != "text") and draw(st.booleans()):
            parts.append({"type": "text", "text": draw(texts(fmt))})
        else:
            parts.append(draw(st.one_of(kinds)))
    return parts


@st.composite
def requests(draw: st.DrawFn, fmt: Format) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 2))):
        messages.append({"role": "user", "content": draw(content(fmt, "user"))})
        messages.append({"role": "assistant", "content": draw(content(fmt, "assistant"))})
    if draw(st.booleans()):
        messages.pop()
    return {"messages": messages}


@settings(max_examples=30)
@given(data=st.data())
def test_render_equals_the_template_and_parses_back(fmt: Format, data: st.DataObject) -> None:
    request = data.draw(requests(fmt))
    for prompt in (False, True):
        rendering = fmt.render(request, add_generation_prompt=prompt)
        text, spans = jinja_render(fmt, request, prompt)
        assert text == rendering.text
        assert merged(spans) == trainable_spans(rendering)
    rendered = fmt.render(request).text
    # Without the line break after an image (text starting with one then reads as it).
    bare = rendered.replace("</img>\n", "</img>") if "</img>\n\n" not in rendered else rendered
    for written in (rendered, bare):
        parsed = fmt.parse_conversation(written, strict=True).to_request()
        assert canonical(parsed) == canonical(request)


@pytest.mark.parametrize("syntax", ["lark", "gbnf"])
@settings(max_examples=15)
@given(data=st.data())
def test_the_grammar_accepts_turns_with_boxes(
    fmt: Format, syntax: str, data: st.DataObject
) -> None:
    request = data.draw(requests(fmt).filter(lambda r: r["messages"][-1]["role"] == "assistant"))
    grammar = as_lark(fmt, export_grammar(fmt.name, [], "auto", True, syntax), syntax)
    assert accepts(fmt.name, grammar, turn_ids(fmt, request))


def test_a_box_out_of_range_is_refused_by_the_grammar(fmt: Format) -> None:
    grammar = export_grammar(fmt.name, [], "auto")
    turn = "It is <box>[[1, 2, 3, {}]]</box><|end|>"
    assert accepts(fmt.name, grammar, special_ids(fmt.name, turn.format("1000")))
    for wrong in ("1001", "0999", "-1"):
        assert not accepts(fmt.name, grammar, special_ids(fmt.name, turn.format(wrong))), wrong


@pytest.mark.parametrize(
    ("role", "part"),
    [
        ("assistant", {"type": "image_url", "image_url": {"url": "", "tokens": 1}}),
        ("system", {"type": "bbox", "bbox": {"boxes": [[1, 2, 3, 4]]}}),
    ],
)
def test_a_part_a_role_cannot_hold_is_refused_where_it_is(
    fmt: Format, role: str, part: dict[str, Any]
) -> None:
    messages = [{"role": role, "content": [part]}]
    if role == "assistant":
        messages.insert(0, {"role": "user", "content": "Hi"})
    with pytest.raises(UnsupportedFeature, match=r"messages\[\d\]\.content\[0\]"):
        fmt.render(messages)


def test_a_tools_block_that_is_no_python_list_is_reported_and_kept(fmt: Format) -> None:
    text = "<|system|>Functions: [open('x')]\n---\nHi<|end|>\n"
    with pytest.raises(ParseError, match="a Python list of functions"):
        fmt.parse_conversation(text, strict=True)
    lenient = fmt.parse_conversation(text)
    assert lenient.warnings
    assert lenient.to_request()["messages"][0]["content"] == "[open('x')]Hi"
