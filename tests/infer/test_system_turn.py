"""Where a template writes its system turn (:mod:`pawlette.infer.system_turn`).

A default system turn written only when no message of the conversation is a system message
(Muse Glimmer's template looks at every message, not the first): a system message after the
first user message, with none before it, takes the default turn's place.  Where the
template writes a system text as Muse Glimmer's concept does, every system message is
derived in place; where it does not, later system messages are refused saying what the
template does.  A system turn written only before the generation prompt, or before the last
user turn, is refused saying so."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from pawlette.declare import SystemPrompt
from pawlette.errors import UnsupportedFeature
from pawlette.formats.muse.system import DefaultWithoutSystem
from pawlette.infer import Inference, infer_template
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

_EFFORT = (
    "{%- set text = message.content | replace('Reasoning effort', 'Reasoning strength')"
    " | replace('Reasoning Effort', 'Reasoning Strength')"
    " | replace('reasoning effort', 'reasoning strength')"
    " | replace('REASONING EFFORT', 'REASONING STRENGTH') -%}"
)


def _synthetic(*, normalised: bool) -> str:
    """A ChatML template that writes its default system turn only without any system
    message, every system message in place; ``normalised``: a system text's "reasoning
    effort" written "reasoning strength", as Muse Glimmer's template writes it."""
    text = _EFFORT if normalised else "{%- set text = message.content -%}"
    return (
        "{%- set found = namespace(system=false) -%}"
        "{%- for message in messages -%}{%- if message.role == 'system' -%}"
        "{%- set found.system = true -%}{%- endif -%}{%- endfor -%}"
        "{%- if not found.system -%}"
        "{{- '<|im_start|>system\\nYou are a careful helper.<|im_end|>\\n' -}}"
        "{%- endif -%}"
        "{%- for message in messages -%}"
        "{%- if message.role == 'system' -%}" + text + "{%- else -%}"
        "{%- set text = message.content -%}{%- endif -%}"
        "{{- '<|im_start|>' + message.role + '\\n' + text + '<|im_end|>\\n' -}}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
    )


@functools.cache
def _muse() -> tuple[Inference, str, dict[str, Any]]:
    template = corpus_template("muse-glimmer")
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    given = {name: value for name, value in tokens.items() if value is not None}
    return infer_template(template.text, **given), template.text, given


def _capability(inference: Inference, name: str) -> tuple[str, str]:
    found = {item.name: item for item in inference.capabilities}
    assert name in found, inference.describe()
    return found[name].status, found[name].detail


def _system_concept(inference: Inference) -> SystemPrompt:
    assert inference.layout is not None
    found = [item for item in inference.layout.concepts if isinstance(item, SystemPrompt)]
    assert len(found) == 1, found
    return found[0]


def _renders_alike(inference: Inference, text: str, tokens: dict[str, Any]) -> None:
    """The conversations that tell the shape apart render as the template renders them."""
    assert inference.format is not None, inference.describe()
    runner = TemplateRunner(text, tokens)
    conversations = [
        [{"role": "user", "content": "Hi"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Why?"},
        ],
        [
            {"role": "system", "content": "Be kind."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Why?"},
        ],
    ]
    for messages in conversations:
        rendered = inference.format.render(messages, add_generation_prompt=True).text
        expected = runner.render(messages, None, add_generation_prompt=True).text
        assert rendered == expected, messages
        written = inference.format.render(messages).text
        assert inference.format.parse_conversation(written).messages == messages


def test_muse_glimmer_writes_every_system_message_in_place() -> None:
    inference, text, tokens = _muse()
    assert inference.accepted, inference.describe()
    status, detail = _capability(inference, "later system messages")
    assert status == "derived", detail
    assert "the default system turn only when no message is a system message" in detail
    concept = _system_concept(inference)
    assert type(concept) is DefaultWithoutSystem and concept.placement == "in_place"
    _renders_alike(inference, text, tokens)


def test_a_synthetic_template_of_that_shape_is_derived() -> None:
    text = _synthetic(normalised=True)
    inference = infer_template(text)
    assert inference.accepted, inference.describe()
    assert _capability(inference, "later system messages")[0] == "derived"
    assert _capability(inference, "system messages") == (
        "derived",
        "placement in_place, the default turn only when no message is a system message",
    )
    concept = _system_concept(inference)
    assert type(concept) is DefaultWithoutSystem
    _renders_alike(inference, text, {})


def test_that_shape_without_muse_spelling_is_refused_saying_what_it_does() -> None:
    """No concept writes the default turn only without any system message and a system
    text as given: later system messages are refused, the reason naming the default turn
    the template leaves out and why Muse Glimmer's concept does not fit."""
    inference = infer_template(_synthetic(normalised=False))
    assert inference.accepted, inference.describe()
    status, detail = _capability(inference, "later system messages")
    assert status == "not derived"
    assert detail == (
        "the template writes its default system turn ('<|im_start|>system\\nYou are a careful "
        "helper.<|im_end|>\\n') only when no message of the conversation is a system message: "
        "a system message after the first user message, with none before it, is written in "
        "its place and the conversation opens with the user's turn; it writes a system "
        "message's 'Reasoning effort' as given, where the one concept that writes such a "
        "default turn (Muse Glimmer's) writes 'Reasoning strength' (needs concept: a default "
        "system turn written only without any system message)"
    )
    assert type(_system_concept(inference)) is SystemPrompt
    assert inference.format is not None
    later = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Why?"},
    ]
    with pytest.raises(UnsupportedFeature) as raised:
        inference.format.render(later)
    assert "a default system turn written only without any system message" in str(raised.value)


_TURN = "{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' -}}"
_SYSTEM = "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' -}}"
_PROMPT = "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"


def _system_detail(text: str) -> str:
    inference = infer_template(text)
    assert inference.accepted, inference.describe()
    status, detail = _capability(inference, "system messages")
    assert status == "not derived", detail
    assert inference.format is not None
    with pytest.raises(UnsupportedFeature):
        inference.format.render(
            [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
        )
    return detail


def test_a_system_turn_written_only_before_the_generation_prompt_is_refused_saying_so() -> None:
    """The system text after the last turn, only when the prompt follows: not "not written"."""
    text = (
        "{%- for m in messages -%}{%- if m.role != 'system' -%}" + _TURN + "{%- endif -%}"
        "{%- endfor -%}{%- if add_generation_prompt and messages[0].role == 'system' -%}"
        + _SYSTEM
        + "{%- endif -%}"
        + _PROMPT
    )
    assert _system_detail(text) == (
        "the template writes a system message's text only with the generation prompt: "
        "(system, user) without the prompt ends '<|im_start|>user\\nZu1q<|im_end|>\\n' with no "
        "system text, and with it goes on '<|im_start|>system\\n', the text, "
        "'<|im_end|>\\n<|im_start|>assistant\\n'; expected a system turn at the start of every "
        "render (needs concept: a system turn written before the generation prompt)"
    )


def test_a_system_turn_written_before_the_last_user_turn_is_refused_saying_so() -> None:
    """The first system message's turn moves with every new question: refused before
    verification, saying where it goes (not a difference verification found)."""
    text = (
        "{%- for m in messages -%}"
        "{%- if loop.last and m.role == 'user' and messages[0].role == 'system' -%}"
        + _SYSTEM
        + "{%- endif -%}{%- if m.role != 'system' -%}"
        + _TURN
        + "{%- endif -%}{%- endfor -%}"
        + _PROMPT
    )
    assert _system_detail(text) == (
        "the template writes the first system message's turn before the last user turn, not at "
        "the start: (system, user, assistant, user) holds it before the second user turn (the "
        "last), after …'\\n<|im_start|>assistant\\nZa1q<|im_end|>\\n<|im_start|>system\\n', "
        "where (system, user) opens with it ('<|im_start|>system\\n' and the text); expected "
        "the system turn first in every render (needs concept: a system turn written before "
        "the last user turn)"
    )
