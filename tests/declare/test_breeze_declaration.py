"""The breeze declaration against the hand-written breeze, before it replaces it.

On conversations of ``tests/strategies/breeze.py`` (text, images, boxes, parallel calls,
results in any order, tools), in MRPromptV3's training and inference modes, without BOS,
with another default system text and with ``check_conversations``: the same render (text
and trainable mask, or the same refusal at the same path), the same parse of that render
(strict and lenient), the same parse of the last assistant turn as a completion; and the
declaration's exported template renders what the hand-written module renders (transformers).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.declared import breeze as declared
from pawlette.errors import PawletteError
from pawlette.export import export_jinja
from pawlette.format import Format

from ..export.support import template_messages
from ..helpers import sequential_ids
from ..strategies import breeze as strategy

OPTIONS: list[dict[str, Any]] = [
    {},
    {"today": datetime.date(2024, 7, 26)},
    {"today": "3 Jan 2025", "knowledge_cutoff": "Dec 2024", "begin_of_text": False},
    {"default_system": "Be brief."},
    {"check_conversations": True},
]


def outcome(fmt: Format, request: dict[str, Any], prompt: bool) -> tuple[Any, ...]:
    try:
        rendering = fmt.render(request, add_generation_prompt=prompt)
    except PawletteError as error:
        return ("refused", type(error).__name__, getattr(error, "path", None))
    trainable = "".join(segment.text for segment in rendering.segments if segment.trainable)
    return (rendering.text, trainable)


def parsed(fmt: Format, text: str, strict: bool) -> Any:
    """The parse, a leading empty system message dropped: after a date header the
    hand-written reader reads an empty system text as no system message, the declaration
    as an empty one (the one difference found; the declaration's is lossless)."""
    try:
        request = fmt.parse_conversation(text, strict=strict).to_request()
    except PawletteError as error:
        return ("refused", type(error).__name__)
    messages = request["messages"]
    if messages and messages[0] == {"role": "system", "content": ""}:
        request["messages"] = messages[1:]
    return request


@pytest.mark.parametrize("options", OPTIONS, ids=lambda options: ",".join(options) or "default")
@settings(max_examples=25)
@given(request=strategy.conversations())
def test_the_declaration_renders_and_parses_as_the_hand_written_module(
    options: dict[str, Any], request: dict[str, Any]
) -> None:
    hand = pawlette.get_format("breeze").with_options(**options)
    ours = declared.FORMAT.with_options(**options)
    for prompt in (False, True):
        written = outcome(hand, request, prompt)
        assert outcome(ours, request, prompt) == written
    if written[0] == "refused":
        return
    for strict in (True, False):
        assert parsed(ours, written[0], strict) == parsed(hand, written[0], strict)
    messages, tools = request["messages"], request.get("tools")
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=None)
    if last is None:
        return
    prompt_text = hand.render(messages[:last], tools, add_generation_prompt=True).text
    completion = hand.render(messages[: last + 1], tools).text[len(prompt_text) :]
    ours_read = ours.parse(completion, id_factory=sequential_ids()).message
    assert ours_read == hand.parse(completion, id_factory=sequential_ids()).message


@settings(max_examples=30)
@given(request=strategy.conversations(), prompt=st.booleans())
def test_the_declared_template_renders_what_the_hand_written_module_renders(
    request: dict[str, Any], prompt: bool
) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    rendering = pawlette.get_format("breeze").render(request, add_generation_prompt=prompt)
    rendered, spans = render_jinja_template(
        [template_messages("breeze", request["messages"])],
        tools=request.get("tools") or None,
        chat_template=export_jinja(declared.FORMAT),
        add_generation_prompt=prompt,
        return_assistant_tokens_mask=True,
    )
    assert rendered[0] == rendering.text
    trainable = "".join(segment.text for segment in rendering.segments if segment.trainable)
    assert "".join(rendered[0][start:end] for start, end in spans[0]) == trainable


def test_the_declaration_reproduces_mrpromptv3_and_its_checks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reference cases of ``tests/formats/test_breeze.py`` (MRPromptV3 of mtkresearch
    0.3.2: 300 prompts in both modes, 80 invalid variants of which it refuses 71), rendered
    by the declaration."""
    from ..formats import test_breeze as reference

    monkeypatch.setattr(reference, "BREEZE", declared.FORMAT)
    reference.test_mrprompt_v3_prompts_are_reproduced_byte_for_byte()
    reference.test_mrprompt_v3_checks_refuse_what_it_refuses_with_the_place()


def test_the_declaration_meets_every_breeze_golden_file() -> None:
    """Each ``tests/golden/breeze`` case, as ``tests/test_golden.py`` checks the registered
    format: render and mask, the render and the seed's source parsed back (strict), and the
    completion's parse (with its warnings)."""
    import json

    from ..helpers import mask_text
    from ..test_golden import CASES, load, request_of

    cases = [case for case in CASES if case.parent.name == "breeze"]
    assert len(cases) >= 9
    for case in cases:
        data = load(case)
        prompt = bool(data.get("add_generation_prompt", False))
        rendering = declared.FORMAT.render(data, add_generation_prompt=prompt)
        assert rendering.text == (case / "rendered.txt").read_text(encoding="utf-8"), case
        assert mask_text(rendering) == (case / "mask.txt").read_text(encoding="utf-8"), case
        if not prompt:
            parsed = declared.FORMAT.parse_conversation(rendering.text, strict=True)
            assert parsed.to_request() == request_of(data) and not parsed.warnings, case
        if (case / "source.txt").exists():
            source = (case / "source.txt").read_text(encoding="utf-8")
            parsed = declared.FORMAT.parse_conversation(source, strict=True)
            assert parsed.to_request() == request_of(data), case
        if (case / "completion.txt").exists():
            completion = (case / "completion.txt").read_text(encoding="utf-8")
            result = declared.FORMAT.parse(completion, id_factory=sequential_ids())
            actual: dict[str, Any] = {"message": result.message}
            actual["finish_reason"] = result.finish_reason
            if result.warnings:
                actual["warnings"] = [warning.message for warning in result.warnings]
            expected = json.loads((case / "parsed.json").read_text(encoding="utf-8"))
            assert actual == expected, case
