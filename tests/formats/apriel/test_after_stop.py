"""AfterStop (:mod:`pawlette.formats.apriel.after_stop`): a template that writes on past the marker
the model stops at.  The writer, the exported template, the parse table, the stop set, the
mask and the turn grammar agree, on a tiny layout."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pawlette.declare import Frame, Layout, Marker, declare, fence
from pawlette.errors import FormatError
from pawlette.export import export_grammar, export_jinja
from pawlette.formats.apriel.after_stop import AfterStop

from ...helpers import mask_text

END = Marker("<|end|>")
EOS = Marker("</s>")
FRAMES = {
    "user": Frame(open=fence(Marker("<|user|>"), "\n"), end=fence("\n", END), after=fence("\n")),
    "assistant": Frame(open=fence(Marker("<|assistant|>"), "\n"), end=fence("\n", END)),
}


def _layout(**fields: Any) -> Layout:
    return Layout(
        name="tiny-after-stop",
        summary="a turn end the template goes on past",
        frames=fields.pop("frames", FRAMES),
        concepts=(AfterStop(fence("\n", EOS)),),
        **fields,
    )


FORMAT = declare(_layout())
MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello."},
    {"role": "user", "content": "Again"},
]
RENDERED = (
    "<|user|>\nHi\n<|end|>\n<|assistant|>\nHello.\n<|end|>\n</s><|user|>\nAgain\n<|end|>\n"
    "<|assistant|>\n"
)


def test_written_after_every_assistant_end_and_never_trainable() -> None:
    rendering = FORMAT.render(MESSAGES, add_generation_prompt=True)
    assert rendering.text == RENDERED
    assert "⟦Hello.\n<|end|>⟧\n</s><|user|>" in mask_text(rendering)


def test_the_stop_set_ends_at_the_models_stop() -> None:
    assert FORMAT.stop == ("\n<|end|>",)
    assert "</s>" in FORMAT.special_markers


def test_a_conversation_reads_back_strictly() -> None:
    parsed = FORMAT.parse_conversation(FORMAT.render(MESSAGES).text, strict=True)
    assert [message["content"] for message in parsed.to_request()["messages"]] == [
        "Hi",
        "Hello.",
        "Again",
    ]


@pytest.mark.parametrize("completion", ["Hello.\n<|end|>", "Hello.\n<|end|>\n</s>"])
def test_a_completion_reads_the_same_stopped_or_not(completion: str) -> None:
    parsed = FORMAT.parse(completion, strict=True)
    assert parsed.message["content"] == "Hello."


def test_the_exported_template_writes_the_same() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    template = export_jinja(FORMAT)
    for messages in (MESSAGES, MESSAGES[:2]):
        rendered, _ = render_jinja_template([messages], chat_template=template)
        assert rendered[0] == FORMAT.render(messages).text, messages


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
def test_the_turn_grammar_is_the_one_without_it(syntax: Any) -> None:
    # The grammar ends at the stop, before what the template writes after it (</s> is a
    # special token all the same: text never spells it).
    without = declare(dataclasses.replace(_layout(), concepts=(), extra_special=("</s>",)))
    assert export_grammar(FORMAT, [], "auto", True, syntax) == export_grammar(
        without, [], "auto", True, syntax
    )


@pytest.mark.parametrize("text", [fence("\n"), fence()])
def test_whitespace_alone_is_refused(text: Any) -> None:
    with pytest.raises(FormatError, match=r"AfterStop\.text"):
        Layout(name="tiny", summary="s", frames=FRAMES, concepts=(AfterStop(text),))


def test_an_assistant_turn_without_end_is_refused() -> None:
    frames = {**FRAMES, "assistant": Frame(open=fence(Marker("<|assistant|>"), "\n"))}
    with pytest.raises(FormatError, match=r"no assistant Frame\.end"):
        _layout(frames=frames)
