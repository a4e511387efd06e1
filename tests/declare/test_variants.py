"""Every named variant of a registered family (``family:variant``), checked by value as the
cross-artifact tests check the registered formats under their names: its exported chat
template renders what it renders, training masks included, and its renders parse back to the
conversation.  (Fewer examples each: the variants share their family's machinery, which the
cross-artifact tests run in full.)"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.declare import layout_of
from pawlette.export import export_jinja
from pawlette.format import Format

from ..export.support import merged, trainable_spans
from ..helpers import canonical
from .conversations import conversations, normalise
from .test_cross_artifacts import template_request

VARIANTS = sorted(
    f"{name}:{variant}"
    for name in pawlette.formats()
    if (layout := layout_of(pawlette.get_format(name))) is not None
    for variant in layout.variants
)


def test_the_families_have_variants() -> None:
    assert {"chatml:qwen3-coder", "mistral:nemo", "kimi:k2-thinking"} <= set(VARIANTS)


def jinja_render(fmt: Format, request: dict[str, Any], prompt: bool) -> tuple[str, Any]:
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, spans = render_jinja_template(
        [template_request(fmt, request)],
        tools=request.get("tools") or None,
        chat_template=export_jinja(fmt),
        add_generation_prompt=prompt,
        return_assistant_tokens_mask=True,
    )
    return rendered[0], [tuple(span) for span in spans[0]]


@pytest.mark.parametrize("name", VARIANTS)
@settings(max_examples=8)
@given(data=st.data())
def test_a_variant_renders_as_its_exported_template(name: str, data: st.DataObject) -> None:
    fmt = pawlette.get_format(name)
    request = data.draw(conversations(fmt))
    for prompt in (False, True):
        rendering = fmt.render(request, add_generation_prompt=prompt)
        text, spans = jinja_render(fmt, request, prompt)
        assert text == rendering.text
        assert merged(spans) == trainable_spans(rendering)


# Variants with losses of their own that the shared normaliser (tests.declare.conversations
# .normalise) does not model; their parse-back is checked in their family's module against
# the documented losses: Nemotron trims answers (tests/formats/test_qwen_xml.py), K2
# Thinking drops reasoning up to the first plain answer and the original K2 writes the
# caller's id in a result but a label in its call (tests/formats/test_kimi.py).
OWN_LOSSES = {"chatml:nemotron-3-nano", "kimi:k2-thinking", "kimi:k2-original"}
# Apriel 1.6 writes reasoning only in the last message and reads an empty system message
# back (tests/formats/test_apriel_thinker.py).
OWN_LOSSES.add("apriel:1.6")
# IFM's XML tools are not read back, so no schema types its calls' values: text that is JSON
# reads as JSON (tests/formats/test_ifm.py).
OWN_LOSSES.add("ifm:xml-tools")


@pytest.mark.parametrize("name", [name for name in VARIANTS if name not in OWN_LOSSES])
@settings(max_examples=8)
@given(data=st.data())
def test_a_variants_render_parses_back(name: str, data: st.DataObject) -> None:
    fmt = pawlette.get_format(name)
    request = data.draw(conversations(fmt))
    parsed = fmt.parse_conversation(fmt.render(request).text, strict=True)
    assert canonical(parsed.to_request()) == canonical(normalise(fmt, request))


def test_blank_reasoning_a_variant_does_not_write_is_not_expected_back() -> None:
    """Kimi K3 writes reasoning only when it is not blank (a recorded loss): the normaliser
    the drawn checks above compare with says so (a draw of ``" "`` failed otherwise)."""
    fmt = pawlette.get_format("kimi:k3")
    answer = {"role": "assistant", "content": "ok", "reasoning_content": " "}
    request = {"messages": [{"role": "user", "content": "hi"}, answer]}
    parsed = fmt.parse_conversation(fmt.render(request).text, strict=True)
    assert canonical(parsed.to_request()) == canonical(normalise(fmt, request))
