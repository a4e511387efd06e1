"""A format's options take what their options class declares: anything else is a
:class:`~pawlette.RequestError` naming the option, the value and its type, and what the option
takes, said where the option is given rather than written into the text (a string where a
bool is read as true, a date string written as it is)."""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import types
import typing
from typing import Annotated, Any, Literal

import pytest

import pawlette
from pawlette.formats import formats
from pawlette.infer import InferredOptions
from pawlette.option_types import (
    Mismatch,
    check_options,
    describe,
    find_mismatch,
    option_annotations,
)
from pawlette.types import ImagePart

DATE_OPTIONS = [
    ("llama3", "date", "a datetime.date or None"),
    ("granite", "date", "a datetime.date"),
    ("mistral", "today", "a datetime.date"),
    ("harmony", "date", "a datetime.date"),
    ("solar", "today", "a datetime.date"),
    ("apertus", "today", "a datetime.date"),
    ("muse", "today", "a datetime.date"),
]


def _formats_with_options() -> list[str]:
    return [name for name in formats() if pawlette.get_format(name).options is not None]


def _fields(name: str) -> list[tuple[str, str, Any]]:
    options = pawlette.get_format(name).options
    annotations = option_annotations(type(options))
    return [(name, field.name, annotations[field.name]) for field in dataclasses.fields(options)]


OPTION_FIELDS = [field for name in _formats_with_options() for field in _fields(name)]


def _members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _image_tokens(image: ImagePart) -> int:
    return 4


RIGHT: dict[Any, tuple[object, ...]] = {
    bool: (True, False),
    str: ("x", ""),
    int: (0, 7),
    float: (0.5, 2),
    datetime.date: (datetime.date(2025, 3, 5),),
    type(None): (None,),
}
"""Values each kind of annotation takes (a Literal: its values; a callable: a function)."""
WRONG: dict[Any, tuple[object, ...]] = {
    bool: (1, 0, "yes", "false", None),
    str: (5, b"x", None),
    int: (True, "7", 7.0, None),
    float: (True, "0.5", None),
    datetime.date: ("2025-03-05", 20250305, None),
}
"""Values a lone annotation of each kind refuses (a union's member takes some of them: those
are dropped for it)."""


def _right_values(annotation: Any) -> list[object]:
    values: list[object] = []
    for member in _members(annotation):
        if typing.get_origin(member) is Literal:
            values.extend(typing.get_args(member))
        elif typing.get_origin(member) is collections.abc.Callable:
            values.append(_image_tokens)
        else:
            assert member in RIGHT, f"an option annotated {member!r}: add its values here"
            values.extend(RIGHT[member])
    return values


def _wrong_values(annotation: Any) -> list[object]:
    candidates: list[object] = [3, "3", 1.5, True, None, ("x",), datetime.date(2025, 3, 5)]
    for member in _members(annotation):
        if typing.get_origin(member) is Literal:
            allowed = typing.get_args(member)
            candidates += ["nope", *(f" {value}" for value in allowed if isinstance(value, str))]
        elif member in WRONG:
            candidates += WRONG[member]
    takes = _right_values(annotation)
    wrong = [
        value
        for value in candidates
        if not any(type(value) is type(right) and value == right for right in takes)
        # a float option takes an int, a date option a datetime (a date)
        and not (float in _members(annotation) and type(value) is int)
        and not (str in _members(annotation) and isinstance(value, str))
    ]
    return wrong


@pytest.mark.parametrize(("name", "option", "annotation"), OPTION_FIELDS)
def test_every_option_of_every_format_refuses_a_wrong_type(
    name: str, option: str, annotation: Any
) -> None:
    fmt = pawlette.get_format(name)
    wrong_values = _wrong_values(annotation)
    assert wrong_values, f"{name} options.{option}: no wrong value to try"
    for wrong in wrong_values:
        with pytest.raises(pawlette.RequestError) as raised:
            fmt.with_options(**{option: wrong})
        assert raised.value.path == f"options.{option}"
        assert raised.value.found == f"{wrong!r} ({type(wrong).__name__})"
        assert raised.value.expected.startswith(describe(annotation))


@pytest.mark.parametrize(("name", "option", "annotation"), OPTION_FIELDS)
def test_every_option_of_every_format_takes_its_type(
    name: str, option: str, annotation: Any
) -> None:
    fmt = pawlette.get_format(name)
    default = getattr(fmt.options, option)
    assert find_mismatch(annotation, default) is None, "the default is what the option takes"
    for right in _right_values(annotation):
        changed = fmt.with_options(**{option: right})
        assert getattr(changed.options, option) is right


@pytest.mark.parametrize("name", _formats_with_options())
def test_every_options_class_resolves_its_annotations(name: str) -> None:
    """No field is left unchecked: each annotation is resolved in its class's module."""
    options = pawlette.get_format(name).options
    annotations = option_annotations(type(options))
    assert sorted(annotations) == sorted(field.name for field in dataclasses.fields(options))
    assert not any(isinstance(item, str | typing.ForwardRef) for item in annotations.values())
    assert option_annotations(type(options)) is annotations  # resolved once per class


def test_the_declared_variants_take_their_own_options() -> None:
    for name in _formats_with_options():
        variants = getattr(pawlette.get_format(name).declaration, "variants", None) or {}
        for variant in variants:
            assert pawlette.get_format(f"{name}:{variant}").options == variants[variant]


@pytest.mark.parametrize(
    ("name", "option", "value", "message"),
    [
        (
            "llama3",
            "tools_in_user_message",
            "yes",
            "options.tools_in_user_message: 'yes' (str); expected True or False",
        ),
        (
            "llama3",
            "tools_in_user_message",
            1,
            "options.tools_in_user_message: 1 (int); expected True or False",
        ),
        (
            "mistral",
            "version",
            "small",
            "options.version: 'small' (str); expected one of 'small-3.2', 'devstral', "
            "'ministral-3-reasoning', 'nemo'",
        ),
        ("glm", "version", 4.6, "options.version: 4.6 (float); expected one of '4.6', '4.7'"),
        ("rwkv", "thinking", 0, "options.thinking: 0 (int); expected True, False or None"),
        ("kimi", "thinking_effort", 3, "options.thinking_effort: 3 (int); expected a str or None"),
        ("omni", "image_tokens", 256, "options.image_tokens: 256 (int); expected a callable"),
        (
            "breeze",
            "today",
            5,
            "options.today: 5 (int); expected a datetime.date, a str or None (the date breeze "
            "writes, such as datetime.date(2024, 7, 26))",
        ),
    ],
)
def test_a_refusal_names_the_option_the_value_and_what_it_takes(
    name: str, option: str, value: object, message: str
) -> None:
    with pytest.raises(pawlette.RequestError) as raised:
        pawlette.get_format(name).with_options(**{option: value})
    assert str(raised.value) == message


def test_a_refused_value_is_shown_cut_short() -> None:
    with pytest.raises(pawlette.RequestError) as raised:
        pawlette.get_format("llama3").with_options(tools_in_user_message="y" * 500)
    assert raised.value.found == repr("y" * 500)[:100] + " (str)"


def test_the_first_refused_option_by_name_is_the_one_named() -> None:
    with pytest.raises(pawlette.RequestError, match=r"^options\.date_string: "):
        pawlette.get_format("llama3").with_options(tools_in_user_message=2, date_string=3)


def test_a_name_that_is_no_option_is_refused_listing_the_options() -> None:
    with pytest.raises(pawlette.RequestError) as raised:
        pawlette.get_format("llama3").with_options(bogus=1)
    assert raised.value.path == "options"
    assert raised.value.expected == ("options of llama3: date_string, date, tools_in_user_message")


# ------------------------------------------------------------------ dates


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


def test_switched_inferred_options_resolve_each_field_in_its_own_module() -> None:
    """Inference makes a class per set of switches on :class:`InferredOptions` (its
    annotations strings of its module), its own fields real types."""
    switched = dataclasses.make_dataclass(
        "Switched",
        [("enable_thinking", bool | None, dataclasses.field(default=None))],
        bases=(InferredOptions,),
        frozen=True,
    )
    annotations = option_annotations(switched)
    assert annotations == {"today": datetime.date | None, "enable_thinking": bool | None}
    options = switched()
    with pytest.raises(pawlette.RequestError, match=r"^options\.enable_thinking: 'no' \(str\)"):
        check_options("inferred", options, {"enable_thinking": "no"})
    with pytest.raises(pawlette.RequestError, match=r"^options\.today: '2025' \(str\)"):
        check_options("inferred", options, {"today": "2025"})
    check_options("inferred", options, {"enable_thinking": False, "today": None})


# ------------------------------------------------------------------ the kinds of annotation


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@pytest.mark.parametrize(
    ("annotation", "taken", "refused"),
    [
        (bool, [True, False], [1, 0, "true", None]),
        (int, [0, -3, 10**20], [True, False, 1.0, "1"]),
        (float, [1.5, 2], [True, "1.5"]),
        (str, ["", "x"], [b"x", 1]),
        (datetime.date, [datetime.date(2025, 1, 1), datetime.datetime(2025, 1, 1)], ["2025"]),
        (Literal["4.6", "4.7"], ["4.6"], [4.6, "4.8"]),
        (Literal[1, 2], [1, 2], [True, 1.0]),
        (Colour, [Colour.RED], ["red", 0]),
        (bool | None, [True, None], [0]),
        (int | str, [3, "3"], [True, 3.0]),
        (tuple[str, ...], [(), ("a", "b")], [["a"], ("a", 1), "ab"]),
        (tuple[int, str], [(1, "a")], [(1,), (1, "a", "b"), ("1", "a")]),
        (list[bool], [[], [True]], [(True,), [1]]),
        (frozenset[str], [frozenset({"a"})], [{"a"}, frozenset({1})]),
        (dict[str, int], [{"a": 1}], [{"a": True}, {1: 1}, [("a", 1)]]),
        (collections.abc.Sequence[str], [("a",)], [["a"]]),
        (collections.abc.Callable[[ImagePart], int], [_image_tokens, len], [3]),
        (Annotated[int, "a count"], [3], [True]),
        (tuple[Colour, ...] | None, [None, (Colour.BLUE,)], [("blue",)]),
        (Any, [None, 3, object()], []),
    ],
)
def test_each_kind_of_annotation_takes_its_values_only(
    annotation: Any, taken: list[object], refused: list[object]
) -> None:
    for value in taken:
        assert find_mismatch(annotation, value) is None, value
    for value in refused:
        assert find_mismatch(annotation, value) is not None, value


@pytest.mark.parametrize(
    ("annotation", "value", "mismatch"),
    [
        (tuple[str, ...], ("a", 1), Mismatch("[1]", 1, "a str")),
        (tuple[str, ...] | None, ("a", None), Mismatch("[1]", None, "a str")),
        (list[tuple[int, ...]], [(1,), (2, "x")], Mismatch("[1][1]", "x", "an int")),
        (dict[str, bool], {"on": 1}, Mismatch("['on']", 1, "True or False")),
        (dict[str, bool], {2: True}, Mismatch("[2] (its key)", 2, "a str")),
        (tuple[int, str], (1,), Mismatch("", (1,), "a tuple of 2: int, str")),
        (tuple[str, ...], ["a"], Mismatch("", ["a"], "a tuple of str")),
        (list[Literal["a", "b"]], ["c"], Mismatch("[0]", "c", "one of 'a', 'b'")),
        (frozenset[int], frozenset({"a"}), Mismatch("", frozenset({"a"}), "a frozenset of int")),
        (
            Colour,
            "red",
            Mismatch("", "red", "a Colour: one of Colour.RED, Colour.BLUE"),
        ),
        (
            tuple[str, ...] | list[str],
            [1],
            Mismatch("[0]", 1, "a str"),
        ),
        (
            Literal["a"] | None,
            "b",
            Mismatch("", "b", "one of 'a' or None"),
        ),
        (float | None, "1", Mismatch("", "1", "a float (or an int) or None")),
    ],
)
def test_a_refusal_inside_an_option_names_the_item(
    annotation: Any, value: object, mismatch: Mismatch
) -> None:
    assert find_mismatch(annotation, value) == mismatch


def test_an_item_refused_inside_an_option_is_named_by_its_place() -> None:
    @dataclasses.dataclass(frozen=True)
    class Listed:
        names: tuple[str, ...] = ()

    with pytest.raises(pawlette.RequestError) as raised:
        check_options("listed", Listed(), {"names": ("a", 2)})
    assert str(raised.value) == "options.names[1]: 2 (int); expected a str"


def test_annotations_that_do_not_resolve_leave_those_fields_unchecked() -> None:
    """A name imported for type checkers only cannot be resolved: its field takes what it is
    given, the fields annotated with objects are still checked."""

    @dataclasses.dataclass(frozen=True)
    class Partly:
        known: bool = True
        unknown: NotImportedHere = None  # type: ignore[name-defined]  # noqa: F821

    annotations = option_annotations(Partly)
    assert annotations == {"known": bool}
    check_options("partly", Partly(), {"unknown": 3})
    with pytest.raises(pawlette.RequestError, match=r"^options\.known: 3 \(int\)"):
        check_options("partly", Partly(), {"known": 3})


@pytest.mark.parametrize("value", [("a",), (None,), ((),)])
def test_the_empty_tuple_takes_no_item(value: tuple[object, ...]) -> None:
    """``tuple[()]`` takes the empty tuple alone (Python 3.11 gives it no arguments, as it
    gives a bare ``typing.Tuple``, which takes any tuple)."""
    assert find_mismatch(tuple[()], ()) is None
    assert find_mismatch(tuple[()], value) == Mismatch("", value, "an empty tuple")
    assert find_mismatch(tuple[str, str] | tuple[()], value) is not None
    assert find_mismatch(typing.Tuple, value) is None  # noqa: UP006 (the bare alias)
