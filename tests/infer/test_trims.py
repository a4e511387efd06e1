"""Whitespace a template trims from message text, inferred per role: which side of the text
(``Trimmed.side``) and which characters (``Trimmed.characters``); a first system message's
text trimmed where later ones are not (``FirstSystemText``); reasoning trimmed at both ends
with the text after its block (``Reasoning.trim``).  Each template is small and made here;
what inference derives must render what the template renders, whitespace at the ends of
texts included."""

from __future__ import annotations

from typing import Any

import pytest

from pawlette.declare import FirstSystemText, Reasoning, Trimmed
from pawlette.infer import infer_template
from pawlette.infer.fields import WHITESPACE
from pawlette.infer.own_turns import trimmed_as_lost
from pawlette.infer.template import TemplateRunner


def _template(system: str, user: str, assistant: str, later_system: str = "") -> str:
    """A template writing each role's text through the given Jinja expression of ``t``
    (a later system message through ``later_system``, else as the first)."""
    later = later_system or system
    return (
        "{%- for m in messages -%}{%- set t = m.content -%}"
        "{%- if m.role == 'system' and loop.first %}<|sys|>" + system + "<|end|>"
        "{%- elif m.role == 'system' %}<|sys|>" + later + "<|end|>"
        "{%- elif m.role == 'user' %}<|user|>" + user + "<|end|>"
        "{%- elif m.role == 'assistant' %}<|bot|>" + assistant + "<|end|>"
        "{%- endif %}{% endfor -%}"
        "{%- if add_generation_prompt %}<|bot|>{% endif %}"
    )


def _trims(concepts: tuple[Any, ...]) -> dict[str, tuple[str, str | None]]:
    return {
        role: (concept.side, concept.characters)
        for concept in concepts
        if isinstance(concept, Trimmed)
        for role in concept.roles
    }


EDGY = [
    {"role": "system", "content": "\n \tRules. \n"},
    {"role": "user", "content": " \nHi\n\n"},
    {"role": "assistant", "content": "\n\n Ok \t\n"},
    {"role": "system", "content": "\n Later \n"},
    {"role": "user", "content": "\tMore \n"},
]


@pytest.mark.parametrize(
    ("system", "user", "assistant", "trims"),
    [
        (
            "{{ t | trim }}",
            "{{ t }}",
            "{{ t | trim }}",
            {"system": ("both", None), "assistant": ("both", None)},
        ),
        (
            "{{ t }}",
            "{{ t.lstrip('\\n') }}",
            "{{ t.rstrip() }}",
            {"user": ("start", "\n"), "assistant": ("end", None)},
        ),
        (
            "{{ t.strip('\\n') }}",
            "{{ t.lstrip() }}",
            "{{ t.strip('\\n') }}",
            {"system": ("both", "\n"), "user": ("start", None), "assistant": ("both", "\n")},
        ),
        (
            "{{ t.rstrip('\\n') }}",
            "{{ t.strip(' ') }}",
            "{{ t }}",
            {"system": ("end", "\n"), "user": ("both", " ")},
        ),
    ],
)
def test_the_side_and_characters_each_role_trims_are_declared(
    system: str, user: str, assistant: str, trims: dict[str, tuple[str, str | None]]
) -> None:
    template = _template(system, user, assistant)
    inference = infer_template(template)
    assert inference.accepted, inference.describe()
    assert inference.layout is not None and inference.format is not None
    assert _trims(inference.layout.concepts) == trims
    statuses = {item.name: item.status for item in inference.capabilities}
    assert not any(name.startswith("whitespace") for name in statuses), statuses
    reference = TemplateRunner(template, {}).render(EDGY, None, add_generation_prompt=True)
    rendering = inference.format.render(EDGY, add_generation_prompt=True)
    assert rendering.text == reference.text


def test_a_first_system_text_right_stripped_alone_is_first_system_text() -> None:
    template = _template("{{ t.rstrip() }}", "{{ t }}", "{{ t }}", later_system="{{ t }}")
    inference = infer_template(template)
    assert inference.accepted, inference.describe()
    assert inference.layout is not None and inference.format is not None
    assert FirstSystemText(rstrip=True) in inference.layout.concepts
    assert _trims(inference.layout.concepts) == {}
    reference = TemplateRunner(template, {}).render(EDGY, None, add_generation_prompt=True)
    assert inference.format.render(EDGY, add_generation_prompt=True).text == reference.text


# Qwen3's way: the reasoning stripped of newlines in a block on turns after the last query,
# the text after the block without its leading newlines; earlier turns as given.
BLOCK = (
    "{%- set ns = namespace(last=-1) -%}"
    "{%- for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}"
    "{% endfor -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'user' %}<|user|>{{ m.content }}<|end|>"
    "{%- elif m.role == 'assistant' %}<|bot|>"
    "{%- if loop.index0 > ns.last %}<think>\n"
    "{{- (m.reasoning_content or '')." + "{strip}" + " }}\n</think>\n"
    "{{- m.content.{lstrip} }}"
    "{%- else %}{{ m.content }}{% endif %}<|end|>"
    "{%- endif %}{% endfor -%}"
    "{%- if add_generation_prompt %}<|bot|>{% endif %}"
)


@pytest.mark.parametrize(
    ("strip", "lstrip", "characters"),
    [("strip('\\n')", "lstrip('\\n')", "\n"), ("strip()", "lstrip()", WHITESPACE)],
    ids=["newlines", "whitespace"],
)
def test_reasoning_trimmed_with_the_text_after_its_block_is_reasoning_trim(
    strip: str, lstrip: str, characters: str
) -> None:
    template = BLOCK.replace("{strip}", strip).replace("{lstrip}", lstrip)
    inference = infer_template(template)
    assert inference.accepted, inference.describe()
    assert inference.layout is not None and inference.format is not None
    reasoning = inference.layout.concept(Reasoning)
    assert reasoning is not None and reasoning.trim == characters
    assert "assistant" not in _trims(inference.layout.concepts)
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["whitespace at the ends of reasoning"] == "derived"
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "\nearlier \n"},
        {"role": "user", "content": "More"},
        {"role": "assistant", "content": "\n\nOk \n", "reasoning_content": "\n think \n"},
    ]
    reference = TemplateRunner(template, {}).render(messages, None, add_generation_prompt=False)
    assert inference.format.render(messages).text == reference.text


@pytest.mark.parametrize(
    ("loss", "text", "expected"),
    [
        ("whitespace at its ends trimmed", " \n a \n", "a"),
        ("newlines at its start trimmed", "\n a \n", " a \n"),
        ("whitespace at its end trimmed", "\n a \n", "\n a"),
        ("the characters ' \\n' at its ends trimmed", "\t\n a \n", "\t\n a"),
    ],
)
def test_verification_expects_the_text_as_the_loss_says_it_was_trimmed(
    loss: str, text: str, expected: str
) -> None:
    assert trimmed_as_lost(text, "content", loss) == expected


def test_whitespace_is_what_strip_without_an_argument_trims() -> None:
    assert set(WHITESPACE) == {chr(code) for code in range(0x110000) if chr(code).isspace()}
