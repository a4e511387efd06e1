"""A format page lists the options derived from its options' fields beside the fields."""

from __future__ import annotations

from docs import gen


def test_a_format_page_lists_its_derived_options() -> None:
    page = gen.format_page("gemma")
    options = page[page.index("## Options") : page.index("## ", page.index("## Options") + 3)]
    assert "| `source_lang_code` | `'en'` |" in options
    assert "Derived from those (computed whenever they change, never set):" in options
    assert (
        "- `source_language`: The source language's name, as TranslateGemma's template"
        " writes it." in options
    )
    assert "`target_language`" in options
