"""Options derived from other options: a property of the options class, read by
:class:`~pawlette.declare.Option` pieces as a field is, computed again whenever the fields
change, checked when the format is declared, and refused by name by ``with_options``."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pawlette import Format
from pawlette.declare import Frame, Layout, Marker, Option, SystemPrompt, declare, fence
from pawlette.errors import FormatError, RequestError
from pawlette.export.jinja import export_jinja

from ..support.template_compare import Reference

NAMES = {"en": "English", "fr": "French"}


@dataclass(frozen=True)
class LanguageOptions:
    language_code: str = "en"

    @property
    def language(self) -> str:
        """The language's name, derived from ``language_code``."""
        if self.language_code not in NAMES:
            raise FormatError(
                f"languages: LanguageOptions.language_code: {self.language_code!r}; "
                f"expected one of {', '.join(NAMES)}"
            )
        return NAMES[self.language_code]


def _format(options: LanguageOptions) -> Format:
    frames = {
        role: Frame(open=fence(Marker(f"<|{role}|>")), end=fence(Marker("<|end|>")))
        for role in ("system", "user", "assistant")
    }
    prompt = fence("Answer in ", Option("language"), " (", Option("language_code"), ").")
    return declare(
        Layout(
            name="languages",
            summary="a system prompt from a derived option",
            frames=frames,
            concepts=(SystemPrompt(default=prompt),),
            options=options,
        )
    )


HELLO = [{"role": "user", "content": "Hi"}]


def test_a_derived_option_follows_its_field() -> None:
    fmt = _format(LanguageOptions())
    assert fmt.render(HELLO).text.startswith("<|system|>Answer in English (en).<|end|>")
    french = fmt.with_options(language_code="fr")
    assert french.render(HELLO).text.startswith("<|system|>Answer in French (fr).<|end|>")


def test_a_derived_option_is_refused_by_name_when_given() -> None:
    fmt = _format(LanguageOptions())
    with pytest.raises(RequestError) as refused:
        fmt.with_options(language="German")
    assert refused.value.path == "options.language"
    assert refused.value.found == "given; it is derived from the other options"
    assert refused.value.expected == (
        "the options of languages it is computed from, among: language_code"
    )


def test_a_value_the_derived_option_refuses_is_refused_when_declared_and_when_set() -> None:
    expected = "LanguageOptions.language_code: 'xx'; expected one of en, fr"
    with pytest.raises(FormatError, match=expected):
        _format(LanguageOptions(language_code="xx"))
    with pytest.raises(FormatError, match=expected):
        _format(LanguageOptions()).with_options(language_code="xx")


def test_the_exported_template_reads_the_derived_options_variable() -> None:
    fmt = _format(LanguageOptions())
    template = export_jinja(fmt)
    given = Reference(template, variables={"language": "Latin"}).render(
        HELLO, None, add_generation_prompt=False
    )
    assert given.text is not None and given.text.startswith("<|system|>Answer in Latin (en).")
    # Its source's variable alone changes the source's text, not the derived option's.
    source = Reference(template, variables={"language_code": "fr"}).render(
        HELLO, None, add_generation_prompt=False
    )
    assert source.text is not None and source.text.startswith("<|system|>Answer in English (fr).")
