"""The knowledge cutoff is an option (``knowledge_cutoff``), compared with the real templates:
gpt-oss's writes ``2024-06`` whatever it is given, LLM-jp 4's reads a variable of that name."""

from __future__ import annotations

import datetime
from typing import Any

import pawlette
from pawlette.declare import layout_of

from ...support.template_compare import corpus_reference

GPT_OSS = "openai-gpt-oss-120b"
LLM_JP = "llm-jp-llm-jp-4.1-8b-thinking"
DAY = datetime.date(2026, 3, 5)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather forecast.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
}
REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo?"},
    ],
    "tools": [WEATHER],
}


def _reference_text(fmt: pawlette.Format, template: str) -> str:
    layout = layout_of(fmt)
    assert layout is not None
    reference = corpus_reference(template, today=DAY, variables=layout.reference_variables())
    rendered = reference.render_request(REQUEST, add_generation_prompt=True)
    assert rendered.text is not None, rendered.refusal
    return rendered.text


def test_the_default_cutoff_is_each_templates_own() -> None:
    for name, template, cutoff in (
        ("harmony", GPT_OSS, "2024-06"),
        ("harmony:llm-jp", LLM_JP, "2025-12"),
    ):
        fmt = pawlette.get_format(name).with_options(date=DAY)
        assert fmt.options.knowledge_cutoff == cutoff
        text = fmt.render(REQUEST, add_generation_prompt=True).text
        assert text == _reference_text(fmt, template)
        assert f"\nKnowledge cutoff: {cutoff}\n" in text


def test_gpt_oss_template_hard_codes_its_cutoff_so_another_differs_in_that_line_only() -> None:
    fmt = pawlette.get_format("harmony").with_options(date=DAY, knowledge_cutoff="2025-01")
    text = fmt.render(REQUEST, add_generation_prompt=True).text
    # The template has no variable for the cutoff: given one, it still writes its own.
    layout = layout_of(fmt)
    assert layout is not None and "knowledge_cutoff" not in layout.reference_variables()
    reference = corpus_reference(GPT_OSS, today=DAY, variables={"knowledge_cutoff": "2025-01"})
    expected = reference.render_request(REQUEST, add_generation_prompt=True).text
    assert expected is not None and "\nKnowledge cutoff: 2024-06\n" in expected
    assert text == expected.replace("Knowledge cutoff: 2024-06", "Knowledge cutoff: 2025-01", 1)


def test_llm_jp_template_reads_the_cutoff_as_the_option_writes_it() -> None:
    fmt = pawlette.get_format("harmony:llm-jp").with_options(date=DAY, knowledge_cutoff="2026-02")
    layout = layout_of(fmt)
    assert layout is not None
    assert layout.reference_variables()["knowledge_cutoff"] == "2026-02"
    text = fmt.render(REQUEST, add_generation_prompt=True).text
    assert "\nKnowledge cutoff: 2026-02\n" in text
    assert text == _reference_text(fmt, LLM_JP)


def test_the_exported_template_reads_the_cutoff_variable() -> None:
    from pawlette.export.jinja import export_jinja

    from ...support.template_compare import Reference

    fmt = pawlette.get_format("harmony").with_options(date=DAY)
    reference = Reference(export_jinja(fmt), today=DAY, variables={"knowledge_cutoff": "2025-09"})
    rendered = reference.render_request(REQUEST, add_generation_prompt=True)
    assert rendered.text is not None, rendered.refusal
    wanted = fmt.with_options(knowledge_cutoff="2025-09").render(
        REQUEST, add_generation_prompt=True
    )
    assert rendered.text == wanted.text
