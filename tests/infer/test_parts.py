"""Inference's parts: special tokens by shape, comparisons that never cut one, the date of a
clock, the generated conversations, and what an inferred format refuses."""

from __future__ import annotations

import datetime

import pytest

from pawlette.declare import Frame, Layout, declare, fence
from pawlette.declare.pieces import Lit, Marker
from pawlette.errors import UnsupportedFeature
from pawlette.infer import Underived
from pawlette.infer.atoms import Tokens, common_prefix, common_suffix
from pawlette.infer.conversations import Features, generate
from pawlette.infer.dates import date_format
from pawlette.infer.template import TemplateRunner


def test_special_tokens_by_shape_and_by_the_tokenizer() -> None:
    shape = Tokens()
    assert shape.fence("<|im_start|>user\n[INST]<think>") == (
        Marker("<|im_start|>"),
        Lit("user\n"),
        Marker("[INST]"),
        Lit("<think>"),
    )
    given = Tokens(special=frozenset({"<think>"}), by_shape=False)
    assert given.fence("<|im_start|><think>") == (Lit("<|im_start|>"), Marker("<think>"))


def test_comparisons_never_cut_a_token() -> None:
    tokens = Tokens()
    assert common_suffix(tokens, "</s>[INST]", "<s>[INST]") == "[INST]"
    assert common_prefix(tokens, "<think>a", "<think>b") == "<think>"
    assert common_prefix(tokens, "<|im_start|>x", "<|im_end|>x") == ""


@pytest.mark.parametrize("written", ["%Y-%m-%d", "%d %b %Y", "%B %d, %Y"])
def test_the_date_a_template_writes_is_read_back_as_its_format(written: str) -> None:
    runner = TemplateRunner("Today is {{ strftime_now('" + written + "') }}.")

    def render(day: datetime.date) -> str | None:
        runner.today = day
        return runner.text([])

    assert date_format(render, datetime.date(2024, 7, 26)) == written


def test_generated_conversations_are_the_same_every_time_and_hold_only_what_is_asked() -> None:
    features = Features(tools=False, reasoning=False, system=False)
    first = generate(30, seed=4, features=features, avoid=["Paris"])
    assert first == generate(30, seed=4, features=features, avoid=["Paris"])
    for sample in first:
        assert "tools" not in sample.request
        for message in sample.messages:
            assert message["role"] in ("user", "assistant")
            assert "reasoning_content" not in message
            assert "Paris" not in (message.get("content") or "")
    everything = generate(30, seed=4)
    kinds = set().union(*(sample.kinds for sample in everything))
    assert {"tools", "call", "results", "reasoning", "later-system", "multi-turn"} <= kinds


def test_what_was_not_derived_is_refused_at_use_saying_why() -> None:
    end = Marker("<|end|>")
    frames = {
        role: Frame(open=fence(Marker(f"<|{role}|>")), end=fence(end))
        for role in ("user", "assistant")
    }
    layout = Layout(
        name="partial",
        summary="a test",
        frames=frames,
        concepts=(Underived((("tools", "written as TypeScript (needs concept)"),)),),
    )
    fmt = declare(layout)
    assert fmt.render([{"role": "user", "content": "Hi"}]).text == "<|user|>Hi<|end|>"
    with pytest.raises(UnsupportedFeature, match=r"tools.*written as TypeScript"):
        fmt.render(
            {
                "messages": [{"role": "user", "content": "Hi"}],
                "tools": [{"type": "function", "function": {"name": "f"}}],
            }
        )
