"""An inferred declaration printed as Python source: executing it gives the same layout."""

from __future__ import annotations

import datetime

import pytest

from pawlette.infer import infer_template

from ..support.template_corpus import NEWER_TEMPLATES, corpus_template, template_names


def _execute(source: str) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(source, "declaration", "exec"), namespace)
    return namespace


@pytest.mark.parametrize(
    "name",
    [
        "Qwen-Qwen3-0.6B",
        "Mistral-Small-3.2-24B-Instruct-2506",
        "deepseek-ai-DeepSeek-V3.1",
        "GLM-4.7-Flash",
        # Trimmed with a side and characters, two of them; FirstSystemText
        "HuggingFaceTB-SmolLM3-3B",
        "poolside-Laguna-XS-2.1",
        # Names; SystemPrompt.default_after; FirstSystemText.trail; a user opener after a user
        "Kimi-K3",
        "Kimi-K2-Instruct",
        "inclusionai-ling-3.0-flash",
        "deepseek-ai-DeepSeek-V4",
    ],
)
def test_the_source_of_an_inferred_layout_round_trips(name: str) -> None:
    template = corpus_template(name)
    inference = infer_template(
        template.text,
        bos_token=template.bos_token,
        eos_token=template.eos_token,
        today=datetime.date(2025, 6, 20),
    )
    assert inference.layout is not None
    namespace = _execute(inference.source())
    assert namespace["LAYOUT"] == inference.layout
    assert (
        namespace["FORMAT"]
        .render(  # type: ignore[attr-defined]
            [{"role": "user", "content": "Hi"}], add_generation_prompt=True
        )
        .text
        == inference.format.render(  # type: ignore[union-attr]
            [{"role": "user", "content": "Hi"}], add_generation_prompt=True
        ).text
    )


@pytest.mark.parametrize("name", template_names() + tuple(NEWER_TEMPLATES))
def test_every_inferred_declarations_source_declares_it(name: str) -> None:
    """Every corpus template's inferred declaration (accepted or not) as source: it runs
    as written (each concept imported where it is defined, a family's tools presentation
    included) and declares the same layout."""
    template = corpus_template(name)
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    if inference.layout is None:  # (not even the turns: no declaration to write)
        with pytest.raises(ValueError, match="no declaration"):
            inference.source()
        return
    assert _execute(inference.source())["LAYOUT"] == inference.layout


def test_the_source_names_each_special_token_once_and_says_what_was_not_derived() -> None:
    inference = infer_template(
        corpus_template("deepseek-ai-DeepSeek-V3.1").text,
        bos_token="<｜begin▁of▁sentence｜>",
        eos_token="<｜end▁of▁sentence｜>",
    )
    source = inference.source()
    assert 'TOOL_CALLS_BEGIN = Marker("<｜tool▁calls▁begin｜>")' in source
    assert source.count('Marker("<｜tool▁calls▁begin｜>")') == 1
    assert "section_open=fence(TOOL_CALLS_BEGIN)" in source
    assert "Verified: " in source and "pawlette.register_format(FORMAT)" in source


def test_a_refused_declaration_prints_why_in_its_docstring() -> None:
    template = (
        "{%- for m in messages %}<|{{ m.role }}|>"
        "{% if m.role == 'user' and m.content | length > 30 %}(long) {% endif %}"
        "{{ m.content }}<|end|>{% endfor -%}"
        "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    inference = infer_template(template)
    assert not inference.accepted and inference.layout is not None
    source = inference.source()
    assert "NOT verified" in source and "Refused: verification failed" in source
    _execute(source)
