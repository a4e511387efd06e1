"""What a value from a caller may hold (pawlette.json_values), and the bounded fuzz of every
request entry point with the generator of ``bench/fuzz_requests.py`` (the long run is
``python -m bench.fuzz_requests``)."""

from __future__ import annotations

import json
import marshal
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from bench import fuzz_requests
from bench.registered import every_format
from pawlette import json_values, openai
from pawlette.errors import RequestError
from pawlette.json_values import (
    MAX_INTEGER_DIGITS,
    MAX_JSON_DEPTH,
    check_json_value,
    check_text,
    json_value_problem,
    key_path,
    load_json_text,
    refuse_json_overflow,
    shorten_path,
    show,
)


def test_json_values_every_format_can_print_pass() -> None:
    value = {"a": [1, 2.5, -3, None, True, "é😀"], "b c": {"d": []}}
    assert json_value_problem(value) is None
    nested: Any = []
    for _ in range(MAX_JSON_DEPTH - 1):
        nested = [nested]  # MAX_JSON_DEPTH arrays, one inside the other
    assert json_value_problem(nested) is None
    assert json_value_problem([nested]) == (
        "[0]" * MAX_JSON_DEPTH,
        "a value nested too deeply",
        f"at most {MAX_JSON_DEPTH} levels of nesting",
    )
    shared = {"x": 1}
    assert json_value_problem([shared, shared]) is None  # shared is not a cycle
    doubled: Any = ["leaf"]
    for _ in range(60):
        doubled = [doubled, doubled]  # 2**60 paths, 61 lists: each checked once
    assert json_value_problem(doubled) is None
    cycle: dict[str, Any] = {"a": [1]}
    cycle["a"].append(cycle)
    assert json_value_problem(cycle) == (
        ".a[1]",
        "a value that contains itself",
        "a JSON value (a tree)",
    )
    assert json_value_problem({"k": (1, "x")}) is None  # tuples print as arrays
    assert json_value_problem({"k": {True: 1}}) == (
        ".k",
        "the key True",
        "string keys (JSON object keys are strings)",
    )


def test_text_must_be_unicode() -> None:
    assert check_text("plain", "p") == "plain"
    assert check_text("é😀", "p") == "é😀"
    found = r"^p: text with a lone surrogate U\+DC00 at character 2;"
    with pytest.raises(RequestError, match=found):
        check_text("ab\udc00", "p")


def test_json_text_is_read_with_the_same_rules() -> None:
    assert load_json_text('{"a": [1]}', "p") == {"a": [1]}
    for text, found in [
        ("{", "not valid JSON (Expecting property name"),
        ('{"a": NaN}', "not valid JSON (NaN is not JSON)"),
        ("1" * 5000, "not valid JSON (an integer too long to read)"),
        ("[" * 100_000, "JSON nested too deeply"),
        ('["\\ud800"]', "JSON holding text with a lone surrogate U+D800 at character 0 at [0]"),
    ]:
        with pytest.raises(RequestError) as caught:
            load_json_text(text, "p")
        assert found in str(caught.value)


def test_numbers_json_reads_as_infinity_are_refused() -> None:
    for text in ("1e400", "-1e400", "1E+999", "1" * 400 + ".0"):
        with pytest.raises(ValueError, match="beyond a double's range") as caught:
            json.loads('{"a": [' + text + "]}", parse_float=refuse_json_overflow)
        assert len(str(caught.value)) < 100  # a 400-digit number is shown shortened
    assert refuse_json_overflow("1e-400") == 0.0  # underflow is no infinity
    assert refuse_json_overflow("-1.5E+308") == -1.5e308


def test_messages_quote_values_safely() -> None:
    assert show(10**5000) == "<an integer of 16610 bits>"
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert show(deep) == "[[[[...]]]]"
    assert show("\ud800").encode("ascii")
    assert key_path("messages[0]", "name") == "messages[0].name"
    assert key_path("", "a b") == '["a b"]'
    assert key_path("x", "\ud800") == 'x["\\ud800"]'


# ---------------------------------------------------------------------- the bounded fuzz

COUNT = 150  # inputs per format here; the bench runs 100,000


@pytest.mark.parametrize("name", every_format())
def test_the_fuzz_base_requests_render(name: str) -> None:
    fmt = pawlette.get_format(name)
    for request in fuzz_requests.base_requests(name):
        fmt.render(request, add_generation_prompt=True)  # a valid start for every mutation


@pytest.mark.parametrize("name", pawlette.formats())
def test_hostile_requests_never_crash_python_cli_or_prompter(name: str) -> None:
    tallies = fuzz_requests.run_format(name, COUNT, 14, ("python", "cli", "prompter"), show=3)
    for channel, tally in tallies.items():
        assert tally.inputs >= COUNT, channel
        assert (tally.crashes, tally.server_errors) == (0, 0), "\n".join(tally.examples)
        assert len(tally.answered) >= 2, (channel, tally.answered)  # some refused, some not


@pytest.mark.sampled
@pytest.mark.parametrize("name", [name for name in every_format() if ":" in name])
def test_hostile_requests_never_crash_python_cli_or_prompter_in_a_variant(name: str) -> None:
    """The same on the variants of the declared formats (a drawn share of them each run)."""
    tallies = fuzz_requests.run_format(name, COUNT, 14, ("python", "cli", "prompter"), show=3)
    for channel, tally in tallies.items():
        assert tally.inputs >= COUNT, channel
        assert (tally.crashes, tally.server_errors) == (0, 0), "\n".join(tally.examples)
        assert len(tally.answered) >= 2, (channel, tally.answered)


def test_the_generator_reaches_the_hostile_values_of_issue_14() -> None:
    requests = [json.dumps(r, default=repr) for r in _take("pcml", 400)]
    for needle in ("Hostile(kind='surrogate'", "Hostile(kind='deep'", "Hostile(kind='nan'"):
        assert any(needle in text for text in requests), needle
    assert any('"tool"' in text or '"temprature"' in text for text in requests)


def _take(name: str, count: int) -> list[dict[str, Any]]:
    generated = fuzz_requests.generate(name, 14)
    return [next(generated) for _ in range(count)]


# ------------------------------------------- the quick walk against the explaining one

# json_value_problem asks a quick walk first (exact types, leaves inline) and the explaining
# walk only when the quick one is unsure; the explaining walk is the authority.  Both are
# driven here over values built to sit on every edge: keys that are no strings, integers at
# the digit limit, NaN and infinities, nesting at and past the depth limit, tuples,
# subclasses, values that contain themselves, non-ASCII text and lone surrogates.


class _Text(str):
    pass


class _Number(int):
    pass


class _Real(float):
    pass


class _Object(dict[str, Any]):
    pass


class _Array(list[Any]):
    pass


_LIMIT_BITS = (10**MAX_INTEGER_DIGITS).bit_length()
_EDGE_INTEGERS = [
    0,
    -1,
    2**63,
    10 ** (MAX_INTEGER_DIGITS - 1),
    10**MAX_INTEGER_DIGITS - 1,
    10**MAX_INTEGER_DIGITS,
    -(10**MAX_INTEGER_DIGITS),
    2 ** (_LIMIT_BITS - 1),
    2**_LIMIT_BITS - 1,
    2**_LIMIT_BITS,
    2 ** (_LIMIT_BITS + 1),
    10**4400,
]


def _edge_integer(index: int) -> int:
    """One of the integers on the edges (drawn by index: hypothesis cannot show a
    4,400-digit integer)."""
    return _EDGE_INTEGERS[index]


_EDGE_TEXTS = ["", "a", "é", "😀", "\ud800", "a\udfff", "\ud83d\ude00", "\\ud800", "x\x00"]

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(0, len(_EDGE_INTEGERS) - 1).map(_edge_integer),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), -0.0, 1e308]),
    st.text(st.characters(codec=None, categories=None), max_size=6),
    st.sampled_from(_EDGE_TEXTS),
    st.sampled_from(
        [_Text("sub"), _Text("s\ud800"), _Number(7), _Real(1.5), _Real("nan"), True, b"x"]
    ),
    st.sampled_from([{1, 2}, frozenset(), 1j, bytearray(b"x"), Ellipsis, object()]),
)
_keys = st.one_of(
    st.text(st.characters(codec=None, categories=None), max_size=4),
    st.sampled_from(["k", "é", "\udc00", _Text("sub"), _Text("\ud800")]),
    st.sampled_from([0, 1, True, False, None, 1.5, (1, 2), b"k", frozenset()]),
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.lists(children, max_size=3).map(_Array),
        st.dictionaries(_keys, children, max_size=4),
        st.dictionaries(st.text(max_size=3), children, max_size=3).map(_Object),
    )


_trees = st.recursive(_scalars, _containers, max_leaves=12)


@st.composite
def _edge_values(draw: st.DrawFn) -> Any:
    """A drawn tree, perhaps nested just inside, at or past the depth limit, perhaps holding
    itself somewhere (a list or dict of it made to contain one of its ancestors)."""
    value = draw(_trees)
    extra = draw(st.sampled_from([0, 0, 0, 1, MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1]))
    extra += draw(st.sampled_from([0, 0, 1, 2]))
    for level in range(extra):
        value = [value] if level % 2 else {"k": value}
    if draw(st.booleans()):
        _close_a_cycle(value, draw(st.integers(0, 30)))
    return value


def _close_a_cycle(value: Any, steps: int) -> None:
    """Walk ``steps`` steps down ``value`` and make the last mutable container met hold the
    top (a cycle), if the walk meets one."""
    path = [value]
    node = value
    for _ in range(steps):
        children = list(node.values()) if isinstance(node, dict) else node
        if not isinstance(node, (dict, list, tuple)) or not children:
            break
        node = children[steps % len(children)]
        path.append(node)
    for container in reversed(path):
        if isinstance(container, list):
            container.append(value)
            return
        if isinstance(container, dict):
            container["cycle"] = value
            return


def _authority(value: object) -> object:
    return json_values._problem(value, MAX_JSON_DEPTH, set(), set())


@settings(max_examples=3000, deadline=None)
@given(_edge_values())
def test_the_quick_walk_decides_as_the_explaining_walk(value: Any) -> None:
    expected = _authority(value)
    if type(value) in (dict, list):
        quick = json_values._clean(value, MAX_JSON_DEPTH, set())
        assert not (quick and expected is not None), expected  # never passes a refused value
    assert json_value_problem(value) == expected
    assert _outcome(lambda: check_json_value(value, "tools[0]")) == (
        None if expected is None else str(_error(value))
    )


def _error(value: object) -> RequestError:
    problem = _authority(value)
    assert isinstance(problem, tuple)
    return RequestError(shorten_path("tools[0]" + problem[0]), problem[1], problem[2])


def _outcome(run: Callable[[], object]) -> object:
    try:
        run()
    except RequestError as error:
        return str(error)
    return None


_json_texts = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(st.characters(codec=None, categories=None), max_size=5),
    ),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(st.characters(codec=None, categories=None), max_size=3), children)
    ),
    max_leaves=10,
)


@st.composite
def _argument_texts(draw: st.DrawFn) -> str:
    """Arguments as a model writes them: a JSON object as text, on the edges of what pawlette
    takes (escaped or raw surrogates, long numbers, nesting at and past the limit, NaN)."""
    value = {"a": draw(_json_texts)}
    depth = draw(st.sampled_from([0, 0, MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH]))
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    inner = draw(
        st.sampled_from(
            [
                "1",
                "9" * MAX_INTEGER_DIGITS,
                "9" * (MAX_INTEGER_DIGITS + 1),
                "-" + "9" * (MAX_INTEGER_DIGITS + 2),
                "NaN",
                "-Infinity",
                "1e999",
                '"\\ud800"',
                '"\ud800"',
                '"\\ud83d\\ude00"',
                '"é"',
            ]
        )
    )
    nested = "[" * depth + inner + "]" * depth
    space = draw(st.sampled_from(["", " ", "\n\t"]))
    return space + text[:-1] + f', "b": {nested}' + "}" + space


@settings(max_examples=1500, deadline=None)
@given(_argument_texts())
def test_plain_arguments_decide_as_the_general_reader(text: str) -> None:
    """The arguments' shortcut (no walk for short, shallow text without \\u escapes) takes
    exactly what reading the text and walking its value take, and reads the same value."""
    try:
        expected: object = load_json_text(text, "arguments")
    except RequestError:
        expected = None
    plain = openai.plain_arguments_value(text)
    assert plain == expected
    if plain is not None:
        assert marshal.dumps(plain) == marshal.dumps(expected)
