"""An option given as text (``--option NAME=VALUE``) read as the value its declared type
takes (:mod:`pawlette.option_text`)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Any, Literal

import pytest

import pawlette
from pawlette.option_text import options_from_text, split_option, value_from_text


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@pytest.mark.parametrize(
    ("annotation", "text", "value"),
    [
        (bool, "true", True),
        (bool, "false", False),
        (bool | None, "null", None),
        (str, "null", "null"),
        (str | None, "null", None),
        (str, "true", "true"),
        (str, "", ""),
        (int, "7", 7),
        (float, "0.5", 0.5),
        (float, "2", 2),
        (Literal["4.6", "4.7"], "4.7", "4.7"),
        (Literal[1, 2], "2", 2),
        (datetime.date, "2025-03-05", datetime.date(2025, 3, 5)),
        (datetime.date | str | None, "2025-03-05", datetime.date(2025, 3, 5)),
        (datetime.date | str | None, "5 March", "5 March"),
        (str, "2025-03-05", "2025-03-05"),
        (tuple[str, ...], '["a", "b"]', ("a", "b")),
        (tuple[tuple[int, ...], ...], "[[1], []]", ((1,), ())),
        (list[int], "[1, 2]", [1, 2]),
        (dict[str, bool], '{"a": true}', {"a": True}),
        (Colour, "RED", Colour.RED),
        (Colour, "blue", Colour.BLUE),
    ],
)
def test_text_is_read_as_the_type_takes_it(annotation: Any, text: str, value: object) -> None:
    read = value_from_text(annotation, text)
    assert read == value
    assert type(read) is type(value)


@pytest.mark.parametrize(
    ("annotation", "text"),
    [(bool, "yes"), (bool, "1"), (bool, "True"), (int, "true"), (int, "1.5"), (Colour, "green")],
)
def test_text_no_reading_takes_is_given_as_it_is(annotation: Any, text: str) -> None:
    """Then :meth:`pawlette.Format.with_options` refuses it, naming what the option takes."""
    assert value_from_text(annotation, text) == text


def test_the_options_of_a_format_are_read_by_their_fields() -> None:
    llama3 = pawlette.get_format("llama3")
    given = {"date": "2025-03-05", "tools_in_user_message": "false", "bogus": "1"}
    assert options_from_text(llama3.options, given) == {
        "date": datetime.date(2025, 3, 5),
        "tools_in_user_message": False,
        "bogus": "1",  # no field: with_options names the options there are
    }


def test_every_format_takes_its_options_default_spelled_as_text() -> None:
    """Each option whose default has a spelling (not a callable) reads back from it."""
    for name in pawlette.formats.formats():
        options = pawlette.get_format(name).options
        if options is None:
            continue
        for field in dataclasses.fields(options):
            default = getattr(options, field.name)
            spelled = _spelled(default)
            if spelled is None:
                continue
            assert options_from_text(options, {field.name: spelled}) == {field.name: default}


def _spelled(value: object) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return None


@pytest.mark.parametrize("argument", ["date", "=x", " =x"])
def test_an_option_without_its_name_and_value_is_refused(argument: str) -> None:
    with pytest.raises(pawlette.RequestError, match=r"^--option: .*; expected NAME=VALUE$"):
        split_option(argument)


def test_an_option_splits_at_its_first_equals_sign() -> None:
    assert split_option("date_string=a=b") == ("date_string", "a=b")
    assert split_option("default_system=") == ("default_system", "")
