"""Reading a call object whole (``read_object``, json's C scanner) against the slow way.

The bulk read is only a shortcut: whatever it accepts, the character scanner and the checks
of ``JsonCallReader._validate`` accept with the same values, and a parse gives the same
events (ids, warnings, offsets) with the shortcut on or off.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.engine import readers
from pawlette.engine.call_arguments import (
    MAX_NESTING,
    load_json,
    nested_deeper,
    read_object,
    scan_long_value,
    scan_value,
    within_three,
)
from pawlette.engine.readers import CallEnvelope, plain_call

from ..helpers import feed_in_pieces
from ..strategies.completions import completion
from ..support import sampling

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
spaces = st.sampled_from(["", " ", "\n", " \t\r\n"])
plain_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
breakers = st.sampled_from(["", "{", "}", '"', ",", ":", "\\", "NaN", "]", "\x01", "1" * 5000])


@st.composite
def objects(draw: st.DrawFn) -> str:
    """A JSON object as a model may write it, sometimes broken or with a key written twice."""
    keys = draw(st.lists(st.sampled_from(["id", "name", "arguments", "x", "n\\u0061me"])))
    members = [
        draw(spaces)
        + f'"{key}"'
        + draw(spaces)
        + ":"
        + draw(spaces)
        + json.dumps(draw(values), ensure_ascii=draw(st.booleans()))
        + draw(spaces)
        for key in keys
    ]
    text = draw(spaces) + "{" + ",".join(members) + "}" + draw(spaces)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(breakers) + text[at + cut :]
    return text


@settings(max_examples=300)
@given(objects())
def test_read_object_accepts_only_strict_objects_and_finds_each_value(text: str) -> None:
    members = read_object(text)
    value, problem = load_json(text)
    if members is None:
        assert problem is not None or not isinstance(value, dict) or _has_duplicate(text)
        return
    assert problem is None
    assert value == {key: member[0] for key, member in members.items()}
    for key, (decoded, start, end) in members.items():
        assert json.loads(text[start:end]) == decoded, key
        assert text[start:end] == text[start:end].strip(" \t\r\n")


def _has_duplicate(text: str) -> bool:
    pairs = json.loads(text, object_pairs_hook=lambda items: items)
    keys = [key for key, _ in pairs]
    return len(keys) != len(set(keys))


def test_read_object_refuses_what_load_json_refuses() -> None:
    deep = '{"a": ' + "[" * MAX_NESTING + "]" * MAX_NESTING + "}"
    too_big = ('{"a": 1e400}', '{"a": [-1E+999]}', '{"a": {"b": ' + "1" * 400 + ".0}}")
    for text in (
        '{"a": NaN}',
        '{"a": 1,}',
        '{"a": 1} x',
        deep,
        '{"a": ' + "1" * 5000 + "}",
        *too_big,
    ):
        assert read_object(text) is None, text
        assert load_json(text)[1] is not None, text
    assert read_object("[1]") is None  # JSON, but no object
    ok = '{"a": ' + "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1) + "}"
    assert read_object(ok) is not None and load_json(ok)[1] is None


@pytest.mark.deep
@pytest.mark.parametrize("name", pawlette.formats())
def test_the_shortcut_changes_no_event(name: str) -> None:
    fmt = pawlette.get_format(name)

    @settings(max_examples=sampling.examples(name, pawlette.formats(), 40), deadline=None)
    @given(seed=st.integers(0, 2**32), sizes=st.lists(st.integers(1, 9), min_size=1, max_size=4))
    def check(seed: int, sizes: list[int]) -> None:
        text = completion(fmt, random.Random(seed))
        for live in (False, True):
            fast = feed_in_pieces(fmt, text, sizes, conversation=False, stream_arguments=live)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(readers, "read_object", lambda text: None)
                slow = feed_in_pieces(fmt, text, sizes, conversation=False, stream_arguments=live)
            assert fast == slow

    check()


def _depth(value: object) -> int:
    """The reference: the nesting of a decoded value, by walking it (the object itself is 1)."""
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


# Strings full of what the measure must see through: brackets, quotes, backslashes, escapes.
awkward = st.text(alphabet='[]{}"\\/nu0 a\u00e9\U0001f600\ud800', max_size=6)
nested = st.recursive(
    st.none() | st.integers() | awkward,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(awkward, inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=400)
@given(nested, st.booleans(), st.sampled_from([None, 1]))
def test_nested_deeper_measures_the_text_as_a_walk_measures_the_value(
    value: object, ascii_only: bool, indent: int | None
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    depth = _depth(value)
    for limit in {0, 1, max(depth - 1, 0), depth, depth + 1}:
        assert nested_deeper(text, limit) == (depth > limit), (text, limit)


@settings(max_examples=400)
@given(nested)
def test_within_three_says_yes_only_of_values_three_deep_at_most(value: object) -> None:
    if within_three(value):
        assert _depth(value) <= 3, value


def test_within_three_looks_through_small_members_only() -> None:
    assert within_three({"days": [0, 1, 2], "unit": "c", "where": {"city": "Paris"}})
    assert within_three({"a": list(range(16))})
    assert not within_three({"a": list(range(17))})  # (left to the measure of the text)
    assert not within_three({"a": [[1]]})
    assert not within_three([{"b": {}}])


@pytest.mark.parametrize("depth", [97, 98, 99, 100])
def test_a_plain_call_measures_arguments_beyond_three_deep(depth: int) -> None:
    # The call object is one level, the arguments object another: arguments holding
    # ``depth - 2`` levels more nest ``depth`` deep in the call.
    inner = "[" * (depth - 3) + "]" * (depth - 3)
    for arguments in (f'{{"a": [{inner}]}}', f'{{"a": [0, {inner}], "b": [1]}}'):
        text = f'{{"name": "f", "arguments": {arguments}}}'
        found = plain_call(CallEnvelope(), text)
        assert (found is not None) == (depth <= MAX_NESTING), (depth, arguments)


def test_nested_deeper_at_the_limit() -> None:
    for depth in (99, 100, 101, 150):
        text = "[" * depth + '"]]][[{"' + "]" * depth
        assert nested_deeper(text) == (depth > MAX_NESTING)
        text = '{"a": ' + '{"b": [' * (depth // 2) + '"\\"' + "]}" * (depth // 2) + "}"
        assert nested_deeper(text) == (1 + 2 * (depth // 2) > MAX_NESTING)


def test_nested_deeper_strings_holding_brackets() -> None:
    """A string's brackets never count, whichever way they would lean (the measure tells
    such strings apart by the runs of quotes between brackets), and quotes written as
    escapes are not the string's end."""
    for depth in (99, 100, 101):
        for inside in ("[[[", "]]]", "[]", "][", '\\"[', "a\\\\"):
            text = "[" * depth + f'"{inside}", "x", ""' + "]" * depth
            assert json.loads(text)
            assert nested_deeper(text) == (depth > MAX_NESTING), (depth, inside)


ENVELOPES = [
    CallEnvelope(),
    CallEnvelope(id=None),
    CallEnvelope(arguments="parameters", also_arguments=("arguments",), id=None),
    CallEnvelope(ignored=(("type", "function"),)),
]


@st.composite
def calls(draw: st.DrawFn) -> str:
    """A call object as models write one: its envelope's keys in some order, sometimes a key
    more, twice or escaped, plain or awkward strings, objects or other values as arguments,
    sometimes broken."""
    usual = [
        ["name", "arguments"],
        ["id", "name", "arguments"],
        ["name", "id", "arguments"],
        ["name", "parameters"],
        ["name", "arguments", "parameters"],
        ["arguments", "name"],
        ["id", "name", "id", "arguments"],
        ["type", "name", "arguments"],
    ]
    if draw(st.integers(0, 3)):
        keys = list(draw(st.sampled_from(usual)))
    else:
        keys = draw(st.permutations(["id", "name", "arguments", "parameters", "type", "x"]))
        keys = keys[: draw(st.integers(1, 5))]
    if not draw(st.integers(0, 5)):
        keys.append(draw(st.sampled_from(keys)))
    strings = st.sampled_from(
        ["f", "get_weather", "call_1", "f", "get_weather", "", 'q"', "é", "a\\b", "\x01"]
    )
    members = []
    for key in keys:
        if key in ("arguments", "parameters") and draw(st.integers(0, 4)):
            value = draw(st.dictionaries(st.text(max_size=3), plain_values, max_size=3))
        elif key in ("id", "name", "type") and draw(st.integers(0, 4)):
            value = draw(strings)
        else:
            value = draw(values)
        name = key if draw(st.integers(0, 9)) else key.replace("a", "\\u0061")
        members.append(
            f'"{name}"' + draw(spaces) + ":" + draw(spaces) + json.dumps(value) + draw(spaces)
        )
    text = draw(spaces) + "{" + draw(spaces) + ",".join(members) + "}" + draw(spaces)
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(breakers) + text[at + draw(st.integers(0, 2)) :]
    return text


@settings(max_examples=500)
@given(calls(), st.sampled_from(ENVELOPES))
def test_a_plain_call_is_what_the_long_read_accepts(text: str, envelope: CallEnvelope) -> None:
    """The one-match read of a usual call gives what read_object and the envelope's checks
    give, or leaves the text to them."""
    found = plain_call(envelope, text)
    if found is None:
        return
    members = read_object(text)
    assert members is not None
    identifier, name, start, end = found
    key = envelope.arguments_key_in(members)
    assert key is not None and members[key][1:] == (start, end)
    assert isinstance(members[key][0], dict)
    assert members[envelope.name][0] == name and name
    assert set(members) <= {envelope.name, key} | ({envelope.id} if envelope.id else set())
    written_id = members.get(envelope.id)[0] if envelope.id and envelope.id in members else None
    assert identifier == written_id


numbers = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["1e400", "-1e400", "1.8e308", "1.7e308", "1e-400", "0.5E+3", "2E308"]),
    st.integers(300, 320).map(lambda digits: "9" * digits + ".5"),
)


@settings(max_examples=300)
@given(st.lists(numbers, max_size=20), st.sampled_from(["", "x", '"s"', "NaN", "[1,"]))
def test_a_long_value_is_read_as_the_strict_scanner_reads_it(
    written: list[str], extra: str
) -> None:
    # scan_long_value reads floats after the scan, in one go: it accepts and refuses exactly
    # what scan_value does, and ends at the same place.
    members = [f'"n{index}": [{number}, {{"k": {number}}}]' for index, number in enumerate(written)]
    if extra:
        members.append(f'"extra": {extra}')
    text = "  {" + ", ".join(members) + "} "
    outcomes = []
    for scan in (scan_value, scan_long_value):
        try:
            value, end = scan(text, 2)
        except (ValueError, StopIteration):
            outcomes.append(None)
        else:
            outcomes.append((type(value), list(value), end))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("number", ["1.5", "1e400", "-2E308", "1" * 320 + ".0"])
def test_a_long_plain_call_refuses_a_number_beyond_a_double_as_a_short_one_does(
    number: str,
) -> None:
    for size in (1, 400):  # a short call's arguments, and a long one's (scan_long_value)
        rows = ", ".join(f'{{"id": {index}, "price": {number}}}' for index in range(size))
        text = f'{{"name": "store", "arguments": {{"rows": [{rows}]}}}}'
        found = plain_call(CallEnvelope(), text)
        finite = number == "1.5"
        assert (found is not None) == finite, (size, number)
