"""Images as placeholder runs and boxes (``pawlette.legacy.media``) on their own.

Breeze's golden files and fidelity tests run them inside breeze; here: the box coordinates'
bounds, on the reader's and the grammar's side alike, and the Jinja image count against the
Python one.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.blocks.images import default_image_tokens
from pawlette.errors import ParseError
from pawlette.export import export_grammar
from pawlette.legacy.media import PlaceholderImages, read_boxes
from pawlette.types import BoxPart, ImagePart

IMAGES = PlaceholderImages("<img>", "<t>", "</img>", after="\n")


@pytest.mark.parametrize("text", ["[[0, 1, 999, 1000]]", "[[5, 5, 5, 5], [0, 0, 0, 0]]"])
def test_boxes_in_range_are_read(text: str) -> None:
    assert isinstance(read_boxes(text, 0), BoxPart)


@pytest.mark.parametrize(
    "text", ["[[0, 1, 2, 1001]]", "[[0, 1, 2]]", "[]", "[[0, 1, 2, -1]]", "[[0, 1, 2, 3.0]]"]
)
def test_boxes_out_of_range_are_refused(text: str) -> None:
    with pytest.raises(ParseError):
        read_boxes(text, 0)


def ids(text: str) -> list[int]:
    """Breeze's markers by id, the rest as text (the small offline BPE)."""
    from .tokens import tokenizer

    tok = tokenizer("breeze")
    result: list[int] = []
    for piece in re.split(r"(<\|[a-z_]+\|>)", text):
        if re.fullmatch(r"<\|[a-z_]+\|>", piece):
            result.append(tok.token_to_id(piece))
        elif piece:
            result += tok.encode(piece, add_special_tokens=False).ids
    return result


@pytest.mark.parametrize("number", ["0", "7", "10", "999", "1000", "03", "00", "1001", "-1"])
def test_the_box_grammar_has_the_reader_s_bounds(number: str) -> None:
    from .tokens import accepts

    text = f"<|start_bbox|>[[{number}, 0, 0, 0]]<|end_bbox|><|eot_id|>"
    grammar = export_grammar("breeze", [], "auto")
    read = pawlette.get_format("breeze").parse(text).message["content"]
    is_box = isinstance(read, list) and read[0]["type"] == "bbox"
    accepted = accepts("breeze", grammar, ids(text))
    # What the grammar writes the reader reads as a box (the reader is looser: Python reads
    # "00" as 0), and the grammar writes every coordinate from 0 to 1000 without leading zeros.
    assert is_box or not accepted
    assert accepted is (number in ("0", "7", "10", "999", "1000"))


@settings(max_examples=25, deadline=None)
@given(width=st.integers(1, 5000), height=st.integers(1, 5000))
def test_the_jinja_image_count_is_the_python_one(width: int, height: int) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    template = IMAGES.jinja_macro() + "{{- image_tokens(messages[0].image, 'here') -}}"
    rendered, _ = render_jinja_template(
        [[{"role": "user", "image": {"width": width, "height": height}}]],
        chat_template=template,
    )
    part = ImagePart(url="x", width=width, height=height)
    assert int(rendered[0]) == default_image_tokens(part)


def test_breeze_parses_a_run_as_an_image_of_its_count() -> None:
    breeze = pawlette.get_format("breeze")
    text = "<|start_img|>" + "<|img|>" * 3 + "<|end_img|>\nWhat is it?"
    message = breeze.parse_conversation(
        "<|start_header_id|>user<|end_header_id|>\n\n" + text + "<|eot_id|>", strict=True
    ).to_request()["messages"][0]
    assert message["content"][0] == {"type": "image_url", "image_url": {"url": "", "tokens": 3}}
