"""The Python-call codec: seeds, every literal, refusals, lenient recovery, and properties."""

from __future__ import annotations

import itertools
import json
import keyword
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.codecs import python_calls
from pawlette.codecs.python_calls import PythonCallDecoder
from pawlette.codecs.python_literals import (
    _write_literal,
    encode_call,
    encode_calls,
    python_literal,
    raw_string_end,
)
from pawlette.engine.call_text import LateText
from pawlette.errors import ParseError, UnsupportedFeature
from pawlette.types import (
    Event,
    ParseWarning,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

Mode = Literal["list", "single"]

CHATGLM3_CALL = 'tool_call(location="beijing", unit="celsius")'
BREEZE_CALLS = (
    "[get_weather(city='San Francisco', metric='celsius'), "
    "get_weather(city='Seattle', metric='celsius')]"
)


# --------------------------------------------------------------------------- helpers


def counting_ids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def decoder(mode: Mode = "list", *, strict: bool = True, **options: Any) -> PythonCallDecoder:
    return PythonCallDecoder(mode=mode, strict=strict, id_factory=counting_ids(), **options)


def decode(
    text: str,
    mode: Mode = "list",
    *,
    strict: bool = True,
    chunks: Iterable[str] | None = None,
    **options: Any,
) -> list[Event]:
    """Feed ``text`` (or the given chunks of it), then finish."""
    reader = decoder(mode, strict=strict, **options)
    events: list[Event] = []
    for chunk in [text] if chunks is None else chunks:
        events.extend(reader.feed(chunk))
    events.extend(reader.finish())
    return events


def canonical(events: Iterable[Event]) -> list[Event]:
    """Adjacent deltas merged, empty ones dropped: what must not depend on chunking."""
    merged: list[Event] = []
    for event in events:
        if isinstance(event, (TextDelta, ToolCallDelta)):
            text = event.text if isinstance(event, TextDelta) else event.arguments
            if not text:
                continue
            last = merged[-1] if merged else None
            if isinstance(event, TextDelta) and isinstance(last, TextDelta):
                merged[-1] = TextDelta(last.text + event.text)
                continue
            if (
                isinstance(event, ToolCallDelta)
                and isinstance(last, ToolCallDelta)
                and last.index == event.index
            ):
                merged[-1] = ToolCallDelta(event.index, last.arguments + event.arguments)
                continue
        merged.append(event)
    return merged


def calls_of(events: Iterable[Event], *, started: bool = False) -> list[tuple[str, str]]:
    """``(name, arguments)`` per call, in index order: the calls that ended (a call without
    its ``ToolCallEnd`` is no call), or with ``started`` every call that started."""
    names: dict[int, str] = {}
    arguments: dict[int, list[str]] = {}
    ended: set[int] = set()
    for event in events:
        if isinstance(event, ToolCallStart):
            names[event.index] = event.name
            arguments[event.index] = []
        elif isinstance(event, ToolCallDelta):
            arguments[event.index].append(event.arguments)
        elif isinstance(event, ToolCallEnd):
            ended.add(event.index)
    return [
        (names[index], "".join(arguments[index]))
        for index in sorted(names)
        if started or index in ended
    ]


def arguments_of(text: str, mode: Mode = "single", **options: Any) -> str:
    ((_, arguments),) = calls_of(decode(text, mode, **options))
    return arguments


def text_of(events: Iterable[Event]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


def warnings_of(events: Iterable[Event]) -> list[ParseWarning]:
    return [event for event in events if isinstance(event, ParseWarning)]


def split(text: str, cuts: Iterable[int]) -> list[str]:
    points = sorted({0, len(text), *(cut for cut in cuts if 0 <= cut <= len(text))})
    return [text[start:end] for start, end in itertools.pairwise(points)]


def assert_well_formed(events: Sequence[Event], first_index: int = 0) -> None:
    """Calls are numbered in order; deltas fall between their call's start and end."""
    open_index: int | None = None
    expected_index = first_index
    for event in events:
        if isinstance(event, ToolCallStart):
            assert open_index is None
            assert event.index == expected_index
            open_index = event.index
            expected_index += 1
        elif isinstance(event, ToolCallDelta):
            assert event.index == open_index
        elif isinstance(event, ToolCallEnd):
            assert event.index == open_index
            open_index = None
        elif isinstance(event, ParseWarning):
            open_index = None  # a call open at a refusal is no call: it never ends
    assert open_index is None, "every started call is ended or refused"


def check_lenient(text: str, mode: Mode) -> None:
    """Lenient never raises, agrees with strict, and gives back every character."""
    events = decode(text, mode, strict=False)
    assert_well_formed(events)
    warnings = warnings_of(events)
    returned = text_of(events)
    try:
        strict_events = decode(text, mode)
    except ParseError as error:
        (warning,) = warnings
        assert warning.offset == error.offset
    else:
        assert not warnings
        assert returned == ""
        assert canonical(events) == canonical(strict_events)
        return
    # Input = the source of the completed calls + the returned text, exactly.
    assert text.endswith(returned)
    assert returned.startswith(warning.text)
    prefix = text[: len(text) - len(returned)]
    completed: list[tuple[str, str]] = []
    if prefix:
        closed = prefix + "]" if mode == "list" and prefix.endswith(")") else prefix
        completed = calls_of(decode(closed, mode))
    assert calls_of(events) == completed  # the refused call is no call
    started = calls_of(events, started=True)
    assert started[: len(completed)] == completed
    assert len(started) - len(completed) in (0, 1)
    for _, arguments in calls_of(events):
        assert isinstance(json.loads(arguments), dict)


# --------------------------------------------------------------------------- the seeds


def test_chatglm3_seed_call_with_a_fixed_callee() -> None:
    events = decode(CHATGLM3_CALL, "single", fixed_callee="tool_call", name="get_weather")
    assert canonical(events) == [
        ToolCallStart(0, "call_0", "get_weather"),
        ToolCallDelta(0, '{"location": "beijing", "unit": "celsius"}'),
        ToolCallEnd(0),
    ]


def test_chatglm3_refuses_another_callee() -> None:
    with pytest.raises(ParseError) as caught:
        decode('get_weather(location="beijing")', "single", fixed_callee="tool_call")
    assert caught.value.offset == 0
    assert "tool_call" in caught.value.expected


def test_breeze_seed_list_of_two_calls() -> None:
    events = decode(BREEZE_CALLS, "list")
    assert canonical(events) == [
        ToolCallStart(0, "call_0", "get_weather"),
        ToolCallDelta(0, '{"city": "San Francisco", "metric": "celsius"}'),
        ToolCallEnd(0),
        ToolCallStart(1, "call_1", "get_weather"),
        ToolCallDelta(1, '{"city": "Seattle", "metric": "celsius"}'),
        ToolCallEnd(1),
    ]


def test_seeds_are_what_the_encoder_writes() -> None:
    arguments = '{"location": "beijing", "unit": "celsius"}'
    assert encode_call("tool_call", arguments, quote='"') == CHATGLM3_CALL
    calls = [
        ("get_weather", '{"city": "San Francisco", "metric": "celsius"}'),
        ("get_weather", '{"city": "Seattle", "metric": "celsius"}'),
    ]
    assert encode_calls(calls) == BREEZE_CALLS


def test_first_index_base_offset_and_default_ids() -> None:
    reader = PythonCallDecoder(mode="list", first_index=3, base_offset=100)
    events = reader.feed("[f(), g()]") + reader.finish()
    starts = [event for event in events if isinstance(event, ToolCallStart)]
    assert [start.index for start in starts] == [3, 4]
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", start.id) for start in starts)
    assert starts[0].id != starts[1].id
    with pytest.raises(ParseError) as caught:
        decode("[f(a=1+2)]", base_offset=100)
    assert caught.value.offset == 106


# --------------------------------------------------------------------------- literals


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("'text'", "text"),
        ('"text"', "text"),
        ("''", ""),
        ("0", 0),
        ("-0", 0),
        ("42", 42),
        ("-7", -7),
        ("1_000", 1000),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("1.5", 1.5),
        ("-0.0", -0.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e3", 1000.0),
        ("1E-3", 0.001),
        ("-2.5e+2", -250.0),
        ("1.e2", 100.0),
        ("True", True),
        ("False", False),
        ("None", None),
        ("true", True),
        ("false", False),
        ("null", None),
        ("[]", []),
        ("[1, 'a', None]", [1, "a", None]),
        ("[1,2,]", [1, 2]),
        ("{}", {}),
        ("{'k': 1, \"j\": [True]}", {"k": 1, "j": [True]}),
        ("{'k': 1,}", {"k": 1}),
        ("[[], [[1]], {'a': {'b': [{}]}}]", [[], [[1]], {"a": {"b": [{}]}}]),
        ("'a' 'b' \"c\"", "abc"),
        ("{'a' 'b': 1}", {"ab": 1}),
    ],
)
def test_every_literal_type(source: str, value: Any) -> None:
    expected = json.dumps({"x": value}, ensure_ascii=False)
    assert arguments_of(f"f(x={source})") == expected
    assert json.loads(expected) == {"x": value}


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (r"'\n\t\r\\'", "\n\t\r\\"),
        (r"'\'\"'", "'\""),
        (r'"\'\""', "'\""),
        (r"'\a\b\f\v'", "\a\b\f\v"),
        (r"'\x41\x7f'", "A\x7f"),
        (r"'\u00e9\U0001F600'", "é😀"),
        (r"'\0'", "\0"),
        (r"'\101\0123'", "A\n3"),
        (r"'\08'", "\x008"),
        (r"'\N{BULLET}\N{bullet}'", "••"),
        (r"'\d+'", "\\d+"),
        ("'a\\\nb'", "ab"),
        ("'a\\\r\nb'", "ab"),
        ("'\"quoted\"'", '"quoted"'),
        ("'é 北京 😀'", "é 北京 😀"),
        ("'\x01\x1f'", "\x01\x1f"),
    ],
)
def test_string_escapes(source: str, value: str) -> None:
    arguments = arguments_of(f"f(s={source})")
    assert json.loads(arguments) == {"s": value}
    arguments.encode()  # a lone surrogate is written escaped: the text is valid UTF-8
    if not any(0xD800 <= ord(character) <= 0xDFFF for character in value):
        assert arguments == json.dumps({"s": value}, ensure_ascii=False)


def test_unicode_names_and_values() -> None:
    assert arguments_of("查询(城市='北京')") == '{"城市": "北京"}'
    # Python reads identifiers in NFKC form: the ligature "ﬁ" is "fi".
    assert arguments_of("f(ﬁle=1)") == '{"file": 1}'


def test_empty_calls_and_lists() -> None:
    assert calls_of(decode("f()", "single")) == [("f", "{}")]
    assert calls_of(decode("[]")) == []
    assert calls_of(decode(" [ \n ] \n")) == []
    assert calls_of(decode("[f(),]")) == [("f", "{}")]
    assert calls_of(decode("[f(a=1,)]")) == [("f", '{"a": 1}')]


@pytest.mark.parametrize("separator", [", ", ",", " , ", ",\n  ", "\n,\n"])
def test_separators_and_whitespace(separator: str) -> None:
    text = f"[f(a=1){separator}g(b='x'){separator}h()]"
    assert calls_of(decode(text)) == [("f", '{"a": 1}'), ("g", '{"b": "x"}'), ("h", "{}")]


def test_whitespace_and_newlines_between_every_token() -> None:
    text = "\n [\n f \n(\n a \n=\n [ 1 ,\n 2 ] ,\n b = { 'k' :\n None } \n) \n] \n\t"
    assert calls_of(decode(text)) == [("f", '{"a": [1, 2], "b": {"k": null}}')]


def test_arguments_stream_as_they_arrive() -> None:
    reader = decoder("list")
    assert reader.feed("[get_weat") == []
    assert reader.feed("her(") == [
        ToolCallStart(0, "call_0", "get_weather"),
        ToolCallDelta(0, "{"),
    ]
    assert reader.feed("city='San Fr") == [ToolCallDelta(0, '"city": "San Fr')]
    # The closing quote waits for the next token (Python joins adjacent strings) ...
    assert reader.feed("ancisco'") == [ToolCallDelta(0, "ancisco")]
    # ... and a number for its end.
    assert reader.feed(", n=12") == [ToolCallDelta(0, '", "n": ')]
    assert reader.feed(")") == [ToolCallDelta(0, "12}"), ToolCallEnd(0)]
    assert reader.feed("]  ") == []
    assert reader.finish() == []


def test_escaped_characters_are_json_escaped_in_the_stream() -> None:
    assert arguments_of(r"f(s='tab\there \\ \"q\" \x00')") == r'{"s": "tab\there \\ \"q\" \u0000"}'


# --------------------------------------------------------------------------- refusals

REFUSALS: list[tuple[str, Mode, int]] = [
    ("[f(a=1+2)]", "list", 6),
    ("[f(a=1 + 2)]", "list", 7),
    ("[f(a=x)]", "list", 5),
    ("[f(a=nan)]", "list", 5),
    ("[f(a=-x)]", "list", 5),
    ("[f(1)]", "list", 3),
    ("[f('a')]", "list", 3),
    ("[f(x)]", "list", 3),
    ("[f(x, y)]", "list", 3),
    ("[f(**kwargs)]", "list", 3),
    ("[f(a=g(1))]", "list", 5),
    ("[f(a=__import__('os'))]", "list", 5),
    ("[__import__('os')]", "list", 12),
    ("__import__('os').system('ls')", "single", 11),
    ("[os.system('ls')]", "list", 3),
    ("[f(a=os.environ)]", "list", 5),
    ("[f(a='x'.upper())]", "list", 8),
    ("[f(a=[1, 2][0])]", "list", 11),
    ("[f(a=(1, 2))]", "list", 5),
    ("[f(a={1: 2})]", "list", 6),
    ("[f(a={'k' 1})]", "list", 10),
    ("[f(a=1, a=2)]", "list", 8),
    ("[f(a={'k': 1, 'k': 2})]", "list", 14),
    ("[f(class=1)]", "list", 3),
    ("[f(a=lambda: 0)]", "list", 5),
    ("[f(a=1 if True else 2)]", "list", 7),
    ("[f(a=0x10)]", "list", 6),
    ("[f(a=01)]", "list", 5),
    ("[f(a=1__0)]", "list", 5),
    ("[f(a=1j)]", "list", 6),
    ("[f(a=1e999)]", "list", 5),
    ("[f(a=='x')]", "list", 5),
    ("[f(,)]", "list", 3),
    ("[f(a=1,,)]", "list", 7),
    ("[,]", "list", 1),
    ("[f(a=1) g(b=2)]", "list", 8),
    ("[f(a=1)] and more", "list", 9),
    ("[f(a=1)]]", "list", 8),
    ("f(a=1); import os", "single", 6),
    ("f(a=1) f(a=2)", "single", 7),
    ("[f(a=1)]", "single", 0),
    ("f(a=1)", "list", 0),
    ("[f.g(a=1)]", "list", 2),
    ("[if(a=1)]", "list", 1),
    ("hello world", "list", 0),
    ("hello world", "single", 6),
    ("[f(a='line\nbreak')]", "list", 10),
    ("[f(a='\\N{NOT A CHARACTER}')]", "list", 6),
    ("[f(a='\\x4g')]", "list", 6),
    ("[f(a='\\U00110000')]", "list", 6),
    ("[f(a='\\ud800')]", "list", 6),  # a lone surrogate is no text (issue 14)
    ("[f(a='\\U0000dfff')]", "list", 6),
    ("[f(a='\\Nx')]", "list", 6),
]


@pytest.mark.parametrize(("text", "mode", "offset"), REFUSALS)
def test_strict_refusal_names_the_offset(text: str, mode: Mode, offset: int) -> None:
    with pytest.raises(ParseError) as caught:
        decode(text, mode)
    assert caught.value.offset == offset, str(caught.value)
    assert caught.value.context  # the text read up to the problem


@pytest.mark.parametrize(("text", "mode", "offset"), REFUSALS)
def test_lenient_refusal_returns_the_text(text: str, mode: Mode, offset: int) -> None:
    for chunks in ([text], list(text)):
        events = decode(text, mode, strict=False, chunks=chunks)
        (warning,) = warnings_of(events)
        assert warning.offset == offset
        returned = text_of(events)
        assert returned and text.endswith(returned)
        assert returned.startswith(warning.text)
    check_lenient(text, mode)


def test_fixed_callee_refusal_is_reported_at_the_callee() -> None:
    events = decode("other(a=1)", "single", strict=False, fixed_callee="tool_call")
    assert text_of(events) == "other(a=1)"
    assert not calls_of(events)


def test_lenient_half_streamed_call_is_never_ended_and_its_text_returned() -> None:
    text = "[f(a=1), g(b='kept', c=1+2), h()]"
    events = decode(text, strict=False)
    assert canonical(events) == [
        ToolCallStart(0, "call_0", "f"),
        ToolCallDelta(0, '{"a": 1}'),
        ToolCallEnd(0),
        ToolCallStart(1, "call_1", "g"),
        ToolCallDelta(1, '{"b": "kept", "c": 1'),
        ParseWarning(
            offset=text.index("+"),
            message="an expression (operator '+'); expected ',' or ')'",
            text=", g(b='kept', c=1+",
        ),
        TextDelta(", g(b='kept', c=1+2), h()]"),
    ]


def test_lenient_text_after_an_error_stays_text() -> None:
    reader = decoder("list", strict=False)
    first = reader.feed("[f(a=x")
    assert calls_of(first, started=True) == [("f", '{"a": ')]
    assert reader.feed(")") == [
        ParseWarning(
            5,
            "the name 'x'; expected a literal value (string, number, True/False/None, "
            "list or dict)",
            "[f(a=x)",
        ),
        TextDelta("[f(a=x)"),
    ]
    assert reader.feed("] [g()]") == [TextDelta("] [g()]")]
    assert reader.finish() == []


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [
        ("", "list", "'['"),
        ("  ", "single", "a call"),
        ("[", "list", "']'"),
        ("[f", "list", "']'"),
        ("[f(", "list", "')'"),
        ("[f(a=", "list", "')'"),
        ("[f(a=12", "list", "')'"),
        ("[f(a=Tr", "list", "')'"),
        ("[f(a='abc", "list", '"\'" closing'),
        ("[f(a='\\", "list", "closing the string"),
        ("[f(a='\\x4", "list", "closing the string"),
        ("[f(a=[1, {'k': ", "list", "'}'"),
        ("[f(a=[1", "list", "']' closing the list"),
        ("[f(a=1)", "list", "']' closing the list of calls"),
        ("[f(a=1),", "list", "']'"),
        ("f(a=1", "single", "')'"),
        ("f", "single", "'('"),
    ],
)
def test_unterminated_input(text: str, mode: Mode, expected: str) -> None:
    with pytest.raises(ParseError) as caught:
        decode(text, mode)
    assert caught.value.offset == len(text)
    assert expected in caught.value.expected
    events = decode(text, mode, strict=False)
    assert_well_formed(events)
    (warning,) = warnings_of(events)
    assert warning.offset == len(text)
    returned = text.partition(")")[2] if "(a=1)" in text else text
    assert warning.text == returned
    assert text_of(events) == returned
    check_lenient(text, mode)


def test_trailing_whitespace_is_allowed_other_text_is_not() -> None:
    assert calls_of(decode("[f()] \n\t ")) == [("f", "{}")]
    assert calls_of(decode("f() \n", "single")) == [("f", "{}")]
    events = decode("[f()] \n x \n", strict=False)
    assert calls_of(events) == [("f", "{}")]
    assert text_of(events) == " \n x \n"


def test_a_failed_decoder_stays_failed_and_finish_is_final() -> None:
    reader = decoder("list")
    with pytest.raises(ParseError) as caught:
        reader.feed("[f(1)")
    with pytest.raises(ParseError) as again:
        reader.feed("]")
    assert again.value is caught.value
    finished = decoder("list")
    finished.feed("[]")
    assert finished.finish() == []
    with pytest.raises(RuntimeError):
        finished.feed("x")


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        PythonCallDecoder(mode="tuple")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fixed_callee"):
        PythonCallDecoder(mode="single", fixed_callee="tool-call")


def test_long_input_is_linear() -> None:
    # A sanity check on the O(1)-per-character promise: 200k characters fed one at a time.
    value = "x" * 100_000
    text = f"[f(s='{value}', n=[{', '.join(['1'] * 20_000)}])]"
    reader = decoder("list")
    events: list[Event] = []
    for start in range(0, len(text), 7):
        events.extend(reader.feed(text[start : start + 7]))
    events.extend(reader.finish())
    ((_, arguments),) = calls_of(events)
    assert json.loads(arguments) == {"s": value, "n": [1] * 20_000}


# --------------------------------------------------------------------------- properties

# No lone surrogates: the OpenAI edge refuses them, and decoding refuses their escapes (issue 14).
SPECIAL_CHARACTERS = ["\\", "'", '"', "\n", "\r", "\x00", "\x7f", "\x85"]
string_values = st.text(
    st.one_of(st.characters(exclude_categories=["Cs"]), st.sampled_from(SPECIAL_CHARACTERS)),
    max_size=12,
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    string_values,
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(string_values, children, max_size=3)
    ),
    max_leaves=8,
)


def is_plain_identifier(name: str) -> bool:
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and unicodedata.normalize("NFKC", name) == name
    )


identifier_keys = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
    st.builds(
        str.__add__,
        st.characters(categories=("L",)),
        st.text(st.characters(categories=("L", "Nd", "Pc")), max_size=5),
    ),
).filter(is_plain_identifier)
argument_objects = st.dictionaries(identifier_keys, json_values, max_size=4)
QUOTES: tuple[Literal["'", '"'], ...] = ("'", '"')
quotes = st.sampled_from(QUOTES)


@st.composite
def chunked(draw: st.DrawFn, text: str) -> list[str]:
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=10))
    return split(text, cuts)


@settings(max_examples=100)
@given(
    name=identifier_keys,
    arguments=argument_objects,
    quote=quotes,
    ensure_ascii=st.booleans(),
    data=st.data(),
)
def test_round_trip_of_one_call(
    name: str, arguments: dict[str, Any], quote: Any, ensure_ascii: bool, data: st.DataObject
) -> None:
    arguments_json = json.dumps(arguments, ensure_ascii=ensure_ascii)
    text = encode_call(name, arguments_json, quote=quote)
    chunks = data.draw(chunked(text))
    events = decode(text, "single", chunks=chunks)
    assert_well_formed(events)
    ((called, decoded),) = calls_of(events)
    assert (called, json.loads(decoded)) == (name, json.loads(arguments_json))
    decoded.encode()


@settings(max_examples=100)
@given(
    calls=st.lists(st.tuples(identifier_keys, argument_objects), max_size=3),
    quote=quotes,
    separator=st.sampled_from([", ", ",", " ,\n "]),
    data=st.data(),
)
def test_round_trip_of_a_list_of_calls(
    calls: list[tuple[str, dict[str, Any]]], quote: Any, separator: str, data: st.DataObject
) -> None:
    pairs = [(name, json.dumps(arguments)) for name, arguments in calls]
    text = encode_calls(pairs, quote=quote, separator=separator)
    events = decode(text, "list", chunks=data.draw(chunked(text)))
    assert_well_formed(events)
    # Through json.loads, as the round trip promises: JSON text joins an escaped surrogate
    # pair into one character, so the arguments need not equal ``calls`` themselves.
    assert [(name, json.loads(arguments)) for name, arguments in calls_of(events)] == [
        (name, json.loads(arguments)) for name, arguments in pairs
    ]


# LFM2.5's template spelling: a string argument raw between single quotes (one the writer
# can write), an object as JSON, anything else as repr.
raw_writable = string_values.filter(lambda text: raw_string_end(text) is None)
template_arguments = st.dictionaries(
    identifier_keys, st.one_of(raw_writable, raw_writable, json_values), max_size=4
)


@settings(max_examples=150)
@given(
    calls=st.lists(st.tuples(identifier_keys, template_arguments), min_size=1, max_size=3),
    data=st.data(),
)
def test_round_trip_of_the_template_spelling(
    calls: list[tuple[str, dict[str, Any]]], data: st.DataObject
) -> None:
    pairs = [(name, json.dumps(arguments)) for name, arguments in calls]
    text = encode_calls(pairs, quote="repr", spelling="template")
    whole = decode(text, "list", raw_strings=True)
    events = decode(text, "list", raw_strings=True, chunks=data.draw(chunked(text)))
    assert_well_formed(events)
    assert canonical(events) == canonical(whole)
    assert [(name, json.loads(arguments)) for name, arguments in calls_of(events)] == [
        (name, json.loads(arguments)) for name, arguments in pairs
    ]


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("[f(a='O'Hare')]", {"a": "O'Hare"}),
        ("[f(a='C:\\temp', b=1)]", {"a": "C:\\temp", "b": 1}),
        ("[f(a='x', b c', d='e')]", {"a": "x', b c", "d": "e"}),
        ("[f(a='x',b  =  'y')]", {"a": "x", "b": "y"}),
        ("[f(a='x', b')]", {"a": "x', b"}),
        ("[f(a='it'', b='')]", {"a": "it'", "b": ""}),
        ("[f(a='\\'')]", {"a": "\\'"}),
        ("[f(a=['\\'', \"'\"])]", {"a": ["'", "'"]}),  # inside a list: Python's strings
        ('[f(a="\\n")]', {"a": "\n"}),  # double quotes: Python's string
    ],
)
def test_raw_strings_end_where_the_call_goes_on(text: str, arguments: dict[str, Any]) -> None:
    for chunks in ([text], list(text)):
        events = decode(text, "list", raw_strings=True, chunks=chunks)
        assert [(name, json.loads(value)) for name, value in calls_of(events)] == [("f", arguments)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[f(a='x", '"\')" or "\', name=" closing the string'),
        ("[f(a='x', b", '"\')" or "\', name=" closing the string'),
        ("[f(a='x', a='y')]", "each name once"),
    ],
)
def test_raw_string_refusals(text: str, expected: str) -> None:
    with pytest.raises(ParseError, match=re.escape(expected)):
        decode(text, "list", raw_strings=True)


@settings(max_examples=50)
@given(arguments=argument_objects, quote=quotes)
def test_round_trip_through_a_fixed_callee(arguments: dict[str, Any], quote: Any) -> None:
    arguments_json = json.dumps(arguments, ensure_ascii=False)
    text = encode_call("tool_call", arguments_json, quote=quote)
    events = decode(text, "single", fixed_callee="tool_call", name="get_weather")
    ((name, decoded),) = calls_of(events)
    assert (name, json.loads(decoded)) == ("get_weather", arguments)


# Text that looks like Python calls often enough to reach every state.
FRAGMENTS = [
    "[", "]", "(", ")", "{", "}", "'", '"', "\\", ",", ", ", "=", ":", " ", "\n", ".", "-",
    "+", "f", "tool_call", "a", "x", "_", "1", "0", "2.5", "e", "e-3", "True", "None", "null",
    "\\x4", "\\x41", "\\N{BULLET}", "\\u00e9", "\\0", "é", "__import__", "'os'", "f(", "a=",
    "'text'", "[f(a=1)", "g(b='x')",
]  # fmt: skip
pythonish_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=25
).map("".join)


@st.composite
def mutated_calls(draw: st.DrawFn) -> str:
    """A valid encoding with a few characters inserted or deleted."""
    small_values = json_scalars | st.lists(json_scalars, max_size=2)
    small_objects = st.dictionaries(identifier_keys, small_values, max_size=3).map(json.dumps)
    pairs = draw(st.lists(st.tuples(identifier_keys, small_objects), max_size=3))
    text = encode_calls(pairs, quote=draw(quotes))
    for _ in range(draw(st.integers(1, 3))):
        position = draw(st.integers(0, len(text)))
        if draw(st.booleans()) and position < len(text):
            text = text[:position] + text[position + 1 :]
        else:
            text = text[:position] + draw(st.sampled_from(FRAGMENTS)) + text[position:]
    return text


modes = st.sampled_from(["list", "single"])
any_input = st.one_of(pythonish_text, mutated_calls(), st.text(max_size=30))


@settings(max_examples=200)
@given(text=any_input, mode=modes, strict=st.booleans(), data=st.data())
def test_split_invariance(text: str, mode: Any, strict: bool, data: st.DataObject) -> None:
    def run(chunks: Sequence[str]) -> list[Event] | tuple[int, str]:
        try:
            return canonical(decode(text, mode, strict=strict, chunks=chunks))
        except ParseError as error:
            return (error.offset, str(error))

    whole = run([text])
    assert run(list(text)) == whole
    assert run(data.draw(chunked(text))) == whole


@settings(max_examples=200)
@given(text=any_input, mode=modes)
def test_fuzz_lenient_never_raises_and_keeps_every_character(text: str, mode: Any) -> None:
    check_lenient(text, mode)


@settings(max_examples=200)
@given(text=any_input, mode=modes)
def test_fuzz_strict_raises_only_parse_errors(text: str, mode: Any) -> None:
    try:
        events = decode(text, mode)
    except ParseError as error:
        assert 0 <= error.offset <= len(text)
        return
    assert_well_formed(events)
    for _, arguments in calls_of(events):
        assert isinstance(json.loads(arguments), dict)


def held(events: Iterable[Event]) -> list[Event]:
    """What a decoder holding arguments gives for a streaming decoder's ``events``: each
    ended call's deltas as one delta just before its end, a call that never ends none."""
    arguments: dict[int, list[str]] = {}
    out: list[Event] = []
    for event in events:
        if isinstance(event, ToolCallDelta):
            arguments.setdefault(event.index, []).append(event.arguments)
            continue
        if isinstance(event, ToolCallEnd) and arguments.get(event.index):
            out.append(ToolCallDelta(event.index, "".join(arguments.pop(event.index))))
        out.append(event)
    return out


@settings(max_examples=200)
@given(text=any_input, mode=modes, strict=st.booleans(), data=st.data())
def test_held_arguments_are_the_streamed_ones_in_one_delta(
    text: str, mode: Any, strict: bool, data: st.DataObject
) -> None:
    """Held (small feeds gather their pieces before they are stored) or streamed, fed whole,
    a character or a random piece at a time: the same events, a call's deltas joined."""

    def run(chunks: Sequence[str], hold: bool) -> list[Event] | tuple[int, str]:
        try:
            return decode(text, mode, strict=strict, chunks=chunks, hold_arguments=hold)
        except ParseError as error:
            return (error.offset, str(error))

    for chunks in ([text], list(text), data.draw(chunked(text))):
        streamed, got = run(chunks, False), run(chunks, True)
        if isinstance(streamed, tuple):
            assert got == streamed
        else:
            assert got == held(streamed)  # the same events, feed by feed
            assert canonical(got) == canonical(held(run([text], False)))  # type: ignore[arg-type]


@pytest.mark.parametrize("strict", [True, False])
def test_held_arguments_over_many_small_feeds(strict: bool) -> None:
    # Thousands of one-character feeds (past the batch in which small feeds are stored),
    # escapes and other quotes among them; then the same calls cut short, and broken.
    value = ('line "one"\n\tx\\y é 北 ' * 300)[:5000]
    plain = "plain words " * 800  # a piece per feed: stored by characters, not by pieces
    first = json.dumps({"a": value, "b": [1, 2.5, None], "p": plain})
    text = encode_calls([("f", first), ("g", '{"c": {"k": "v"}}')])
    for size in (1, 8):
        chunks = [text[start : start + size] for start in range(0, len(text), size)]
        streamed = decode(text, strict=strict, chunks=chunks)
        events = decode(text, strict=strict, chunks=chunks, hold_arguments=True)
        assert events == held(streamed)
        assert len([event for event in events if isinstance(event, ToolCallDelta)]) == 2
    assert [(name, json.loads(arguments)) for name, arguments in calls_of(events)] == [
        ("f", json.loads(first)),
        ("g", {"c": {"k": "v"}}),
    ]
    for variant in (text[:-40], text[:4500] + "\n" + text[4500:]):  # a line break: no string
        try:
            expected = held(decode(variant, strict=strict, chunks=list(variant)))
        except ParseError as error:
            with pytest.raises(ParseError) as raised:
                decode(variant, strict=strict, chunks=list(variant), hold_arguments=True)
            assert (raised.value.offset, str(raised.value)) == (error.offset, str(error))
        else:
            got = decode(variant, strict=strict, chunks=list(variant), hold_arguments=True)
            assert got == expected
            assert text_of(got) and warnings_of(got) and not calls_of(got)


@pytest.mark.parametrize("code", [*range(0x80), 0xA0, 0x2028, 0xD800, 0xDFFF, 0xE9, 0x1F600])
def test_string_contents_stream_as_json_dumps_writes_them(code: int) -> None:
    # Text needing no escape is passed on as it is, the rest as json.dumps escapes it (a
    # lone surrogate as its \u escape): the arguments are that JSON either way.
    character = chr(code)
    literal = f"\\x{code:02x}" if code < 0x100 else f"\\U{code:08x}"
    for written in (character, literal):
        if written in ("'", "\\", "\n", "\r"):
            continue  # these end or escape a string: only their escape is a character
        text = f"f(a='x{written}y{written}')"
        if code in range(0xD800, 0xE000) and written == literal:
            with pytest.raises(ParseError, match="a lone surrogate"):
                arguments_of(text)  # refused as an escape; a raw one is escaped below
            continue
        arguments = arguments_of(text)
        expected = json.dumps({"a": f"x{character}y{character}"}, ensure_ascii=False)
        if code in range(0xD800, 0xE000):
            expected = expected.replace(character, f"\\u{code:04x}")
        assert arguments == expected


# --------------------------------------------------------------------------- the writer's fast path

# What repr escapes and the literal keeps (private use, unassigned, astral), what both escape
# (unprintable: controls, no-break and zero-width spaces, separators), and the quotes.
AWKWARD_CHARACTERS = [
    *SPECIAL_CHARACTERS, "\ue000", "\U000e0001", "\U0001f600", "\u0378", "\xa0", "\u200b",
    "\u2028", "\ufeff", "\t", "a", "é", "北",
]  # fmt: skip
awkward_strings = st.text(
    st.one_of(st.characters(), st.sampled_from(AWKWARD_CHARACTERS)), max_size=8
)


class StringKind(str):
    pass


class IntKind(int):
    def __str__(self) -> str:
        return "IntKind"


# Plain JSON values and what python_literal also takes or refuses (tuples, subclasses,
# non-string keys, floats that are not finite, sets): the fast path must write what the
# escaping walk writes, and refuse what it refuses.
literal_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    awkward_strings,
    awkward_strings.map(StringKind),
    st.integers(-3, 3).map(IntKind),
)
literal_values = st.recursive(
    literal_leaves,
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(awkward_strings, children, max_size=3)
        | st.dictionaries(st.integers(0, 3), children, min_size=1, max_size=2)
        | st.frozensets(st.integers(), max_size=2)
    ),
    max_leaves=8,
)
ALL_QUOTES = ("'", '"', "repr")


def escaping_walk(value: Any, quote: str) -> str:
    """What python_literal writes without its fast path (the walk that escapes each string)."""
    out: list[str] = []
    _write_literal(value, quote, "", out)
    return "".join(out)


def outcome(function: Callable[[], str]) -> tuple[str, str]:
    try:
        return ("text", function())
    except (TypeError, UnsupportedFeature) as error:
        return (type(error).__name__, str(error))


@settings(max_examples=300)
@given(value=literal_values, quote=st.sampled_from(ALL_QUOTES))
def test_the_fast_path_writes_what_the_escaping_walk_writes(value: Any, quote: Any) -> None:
    assert outcome(lambda: python_literal(value, quote=quote)) == outcome(
        lambda: escaping_walk(value, quote)
    )


@pytest.mark.parametrize("quote", ALL_QUOTES)
@pytest.mark.parametrize(
    "text",
    ["plain", "it's", 'say "hi"', "both ' and \"", "a\\b", "\xa0", "\ue000", "😀", "\u2028"],
)
def test_strings_are_written_as_the_escaping_walk_writes_them(text: str, quote: Any) -> None:
    assert python_literal(text, quote=quote) == escaping_walk(text, quote)
    assert python_literal({"k": [text]}, quote=quote) == escaping_walk({"k": [text]}, quote)


def test_repr_quotes_are_pythons_for_printable_text() -> None:
    for text in ("plain", "it's", 'say "hi"', "both ' and \"", "a\\b", "北京 é"):
        assert python_literal(text, quote="repr") == repr(text)


def test_a_value_holding_itself_is_refused_as_before() -> None:
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(RecursionError):
        python_literal(looped)


@settings(max_examples=150)
@given(arguments=st.dictionaries(identifier_keys, literal_values, max_size=3), quote=quotes)
def test_encode_call_writes_each_argument_as_the_walk_does(
    arguments: dict[str, Any], quote: Any
) -> None:
    try:
        arguments_json = json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError):
        return  # not JSON: encode_call takes JSON text (the refusals are tested above)
    expected = outcome(
        lambda: (
            "f("
            + ", ".join(
                f"{key}={escaping_walk(value, quote)}"
                for key, value in json.loads(arguments_json).items()
            )
            + ")"
        )
    )
    assert outcome(lambda: encode_call("f", arguments_json, quote=quote)) == expected


# --------------------------------------------------------------------------- kept text


def made(events: Iterable[Event]) -> list[Event]:
    """Late arguments (``hold_arguments="late"``) made into their strings, as a parser does."""
    return [
        ToolCallDelta(event.index, event.arguments.take())
        if isinstance(event, ToolCallDelta) and isinstance(event.arguments, LateText)
        else event
        for event in events
    ]


def kept_run(
    text: str, chunks: Sequence[str], strict: bool, hold: Any, keep: bool, padded: bool
) -> tuple[list[Event] | tuple[int, str], str | None]:
    """Events (or the error) and, with ``keep``, the text the decoder gives back; ``padded``
    feeds each chunk by offsets inside a longer text."""
    reader = decoder("single", strict=strict, hold_arguments=hold, keep_text=keep)
    events: list[Event] = []
    try:
        for chunk in chunks:
            if padded:
                events.extend(reader.feed(f"x)'\\{chunk}\\'(", 4, 4 + len(chunk)))
            else:
                events.extend(reader.feed(chunk))
        events.extend(reader.finish())
    except ParseError as error:
        return (error.offset, str(error)), None
    events = made(events)
    return events, reader.text() if keep else None


def check_kept_text(text: str, chunks: Sequence[str], strict: bool) -> None:
    """Kept as it is (a small call) and as references (``ECHO_FROM`` 0: from the start)."""
    for hold in (True, "late"):
        expected, _ = kept_run(text, chunks, strict, hold, False, False)
        for echo_from, padded in ((python_calls.ECHO_FROM, True), (0, False), (0, True)):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(python_calls, "ECHO_FROM", echo_from)
                got, kept = kept_run(text, chunks, strict, hold, True, padded)
            assert got == expected
            assert kept in (None, text)
            assert kept is not None or strict


@settings(max_examples=200)
@given(text=any_input, strict=st.booleans(), data=st.data())
def test_kept_text_changes_no_event_and_gives_the_text_back(
    text: str, strict: bool, data: st.DataObject
) -> None:
    """``keep_text`` (the call's text kept as references into its JSON) and feeds by offsets:
    the same events and errors as the held decoder, and all the text fed given back."""
    for chunks in ([text], list(text), data.draw(chunked(text))):
        check_kept_text(text, chunks, strict)


@pytest.mark.parametrize("size", [1, 7, 4096, None])
def test_kept_text_of_big_calls_over_its_bound(size: int | None) -> None:
    """Thousands of strings (a stretch each, past the echo's bound: the rest kept as it is),
    long strings with escapes that read the same in JSON and others that do not, cut short,
    broken, with text after the call or none missing: the same events, the same text."""
    strings = ", ".join(
        ["'it\\'s'", '"a\\"b"', "'say \"hi\"'", '"\\x41\\u00e9\\N{BULLET}\\101"', '"\\t\\n"'] * 60
    )
    long = '"' + 'lorem \\"ipsum\\"\\n\\\\ é 北 ' * 300 + '"'
    calls = [
        f"tool_call(a={long}, b=[{strings}], c={{'k': [1_000, .5, True, None]}}, d={long})",
        f"tool_call(b=[{strings}])",
    ]
    variants = []
    for call in calls:
        variants += [call, call + "  \n", call[:-30], call + " junk", call[:3000] + "\n" + call]
    for text in variants:
        chunks = [text] if size is None else [text[i : i + size] for i in range(0, len(text), size)]
        for strict in (True, False):
            check_kept_text(text, chunks, strict)


def _refuse_all_but_search(name: str) -> tuple[str, str] | None:
    return None if name == "search" else (f"no tool named {name!r}", "a call to 'search'")


@pytest.mark.parametrize("hold", [False, "late"])
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_refused_name_is_text_from_its_call_on_and_never_begins(
    hold: bool | Literal["late"], size: int
) -> None:
    text = "[search(q='x'), lookup(q='y'), search(q='z')]"
    decoder = PythonCallDecoder(
        mode="list",
        strict=False,
        id_factory=lambda: "c",
        refuse_name=_refuse_all_but_search,
        hold_arguments=hold,
    )
    events: list[Any] = []
    for start in range(0, len(text), size):
        events += decoder.feed(text[start : start + size])
    events += decoder.finish()
    starts = [event.name for event in events if isinstance(event, ToolCallStart)]
    assert starts == ["search"]  # the call before stands; the refused one never begins
    assert [event.index for event in events if isinstance(event, ToolCallEnd)] == [0]
    warnings = [event for event in events if isinstance(event, ParseWarning)]
    assert [warning.message for warning in warnings] == [
        "no tool named 'lookup'; expected a call to 'search'"
    ]
    assert warnings[0].offset == text.index("lookup")
    given_back = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert given_back == text[text.index(", lookup") :]
    strict = PythonCallDecoder(mode="list", refuse_name=_refuse_all_but_search)
    with pytest.raises(ParseError, match="no tool named 'lookup'"):
        strict.feed(text)
