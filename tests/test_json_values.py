"""What a value from a caller may hold (pawlette.json_values), and the bounded fuzz of every
request entry point with the generator of ``bench/fuzz_requests.py`` (the long run is
``python -m bench.fuzz_requests``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from bench import fuzz_requests
from bench.registered import every_format
from pawlette.errors import RequestError
from pawlette.json_values import (
    MAX_JSON_DEPTH,
    check_text,
    json_value_problem,
    key_path,
    load_json_text,
    refuse_json_overflow,
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
