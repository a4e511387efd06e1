"""A format's date options (a date its template reads from the clock) take a
:class:`datetime.date`: anything else is a :class:`~pawlette.RequestError` naming the
option, said where the option is given rather than written into the text."""

from __future__ import annotations

import datetime

import pytest

import pawlette

DATE_OPTIONS = [
    ("llama3", "date", "a datetime.date or None"),
    ("granite", "date", "a datetime.date"),
    ("mistral", "today", "a datetime.date"),
    ("harmony", "date", "a datetime.date"),
    ("solar", "today", "a datetime.date"),
    ("apertus", "today", "a datetime.date"),
    ("muse", "today", "a datetime.date"),
]


@pytest.mark.parametrize(("name", "option", "expected"), DATE_OPTIONS)
def test_a_date_option_given_a_string_names_the_option(
    name: str, option: str, expected: str
) -> None:
    fmt = pawlette.get_format(name)
    for wrong in ("2025-03-05", 20250305):
        with pytest.raises(pawlette.RequestError) as raised:
            fmt.with_options(**{option: wrong})
        assert str(raised.value).startswith(
            f"options.{option}: {wrong!r} ({type(wrong).__name__}); expected {expected} "
        )
    day = datetime.date(2025, 3, 5)
    assert getattr(fmt.with_options(**{option: day}).options, option) == day


@pytest.mark.parametrize(("name", "option"), [("breeze", "today"), ("firefunction", "today")])
def test_a_date_option_that_takes_text_takes_it(name: str, option: str) -> None:
    """Breeze's and FireFunction's templates write a date string their callers pass."""
    fmt = pawlette.get_format(name).with_options(**{option: "5 March 2025"})
    assert "5 March 2025" in fmt.render([{"role": "user", "content": "Hi"}]).text


def test_an_inferred_formats_today_is_a_date() -> None:
    """The ``today`` option inference gives a template that reads the clock."""
    from pawlette.detect import detect_template

    template = (
        "<|system|>Today is {{ strftime_now('%d %B %Y') }}.<|end|>\n"
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    fmt = detect_template(template, declared=False).format
    assert fmt is not None
    dated = fmt.with_options(today=datetime.date(2025, 3, 5))
    assert "Today is 05 March 2025." in dated.render([{"role": "user", "content": "Hi"}]).text
    with pytest.raises(pawlette.RequestError, match=r"^options\.today: '5 March' \(str\)"):
        fmt.with_options(today="5 March")
