"""The invariants every format must hold, run over every format with a strategy module.

- round trip: ``parse_conversation(render(c)) == normalise(c)``;
- split invariance: whole, one character at a time and random splits fold the same;
- the training render through an assistant turn extends the generation-prompt render before
  it, and parsing the difference (the completion) gives that assistant message back;
- nothing lost: lenient parsing of any text keeps every non-whitespace run somewhere;
- model output of every kind (valid calls, malformed calls of every kind, marker spellings in
  every text slot, text after the stop, another role's turn), cut by the length limit at every
  offset: every returned call's arguments are a JSON object, no text is lost or duplicated,
  and every parse path agrees (``tests/strategies/completions.py`` says what is checked).
"""

from __future__ import annotations

import importlib
import json
import random
from types import ModuleType
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.engine.fold import merge_assistant
from pawlette.openai import message_to_openai

from .helpers import canonical, completion_text, feed_in_pieces, folded, random_sizes
from .strategies.completions import completion, problems
from .support import sampling


def strategy_module(name: str) -> ModuleType:
    return importlib.import_module(f"tests.strategies.{name}")


FORMATS = pawlette.formats()

HAND_WRITTEN = {"pcml", "chatglm3", "breeze", "omni"}
"""Formats with strategies of their own; the declared families share one strategy module
(:mod:`tests.strategies.declared`) and the cross-artifact tests
(``tests/declare/test_cross_artifacts.py``), so each runs a third of the examples here."""


def examples(name: str, count: int = 150) -> Any:
    """Hypothesis settings for ``count`` examples, a third of them for a declared family, a
    few for a format outside this run's draw for the check (tests/support/sampling.py)."""
    full = count if name in HAND_WRITTEN else max(count // 3, 4)
    return settings(max_examples=sampling.examples(name, FORMATS, full))


def test_every_format_has_a_strategy() -> None:
    for name in FORMATS:
        module = strategy_module(name)
        assert hasattr(module, "conversations") and hasattr(module, "normalise"), name


def expected_request(module: ModuleType, request: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = module.normalise(canonical(request))
    return result


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_round_trip(name: str) -> None:
    fmt = pawlette.get_format(name)
    module = strategy_module(name)

    @examples(name)
    @given(module.conversations())
    def check(request: dict[str, Any]) -> None:
        text = fmt.render(request).text
        parsed = fmt.parse_conversation(text, strict=True)
        assert parsed.to_request() == expected_request(module, request), text

    check()


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_split_invariance(name: str) -> None:
    fmt = pawlette.get_format(name)
    module = strategy_module(name)

    @examples(name)
    @given(module.conversations(), st.integers(0, 10**6))
    def check(request: dict[str, Any], seed: int) -> None:
        text = fmt.render(request).text
        whole = folded(fmt, feed_in_pieces(fmt, text, [], conversation=True))
        assert folded(fmt, feed_in_pieces(fmt, text, [1], conversation=True)) == whole
        pieces = feed_in_pieces(fmt, text, random_sizes(seed), conversation=True)
        assert folded(fmt, pieces) == whole

    check()


def _assistant_indices(request: dict[str, Any]) -> list[int]:
    return [i for i, m in enumerate(request["messages"]) if m["role"] == "assistant"]


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_completion_of_each_assistant_turn(name: str) -> None:
    fmt = pawlette.get_format(name)
    module = strategy_module(name)
    keeps_ids = getattr(module, "CALL_IDS_ROUND_TRIP", True)

    @examples(name)
    @given(module.conversations(), st.integers(0, 10**6))
    def check(request: dict[str, Any], seed: int) -> None:
        for index in _assistant_indices(request):
            completion = completion_text(fmt, request, index)
            result = fmt.parse(completion, strict=True)
            expected = canonical({"messages": [request["messages"][index]]})["messages"][0]
            actual = result.message
            if not keeps_ids:
                for message in (expected, actual):
                    for call in message.get("tool_calls", []):
                        call["id"] = "*"
            if hasattr(module, "normalise_completion"):
                expected = module.normalise_completion(expected)
            assert actual == expected, completion
            streamed = feed_in_pieces(fmt, completion, random_sizes(seed), conversation=False)
            _, _, warnings = folded(fmt, streamed)
            assert not warnings

    check()


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_nothing_lost_in_lenient_mode(name: str) -> None:
    fmt = pawlette.get_format(name)
    markers = sorted(fmt.grammar.markers)
    # Backslashes are escapes in formats that escape markers: the round trips cover those.
    alphabet = st.characters(exclude_characters="\\" if fmt.grammar.escape else "")
    pieces = st.one_of(st.text(alphabet, max_size=10), st.sampled_from(markers))
    headers = getattr(strategy_module(name), "COMPLETION_HEADERS", ())

    @settings(max_examples=sampling.examples(name, FORMATS, 150))
    @given(st.lists(pieces, max_size=12))
    def check(parts: list[str]) -> None:
        text = "".join(parts)
        result = fmt.parse(text)  # lenient: never raises
        message = result.core
        outputs = [message.text, message.reasoning or "", message.name or ""]
        outputs += [f"{call.id}\x00{call.name}\x00{call.arguments}" for call in message.tool_calls]
        outputs += [warning.text for warning in result.warnings]
        outputs += [f"{key}={json.dumps(value)}" for key, value in message.metadata]
        joined = "\x00".join(outputs)
        if message.tool_calls:
            return  # a parsed call decomposes its text: the round trips check calls
        header = next((header for header in headers if text.startswith(header)), "")
        start = 0
        for part in parts:
            # What a part holds of an opening header (where the turn goes) is structure.
            visible = part[max(len(header) - start, 0) :]
            start += len(part)
            if part not in markers and visible.strip():
                assert visible.strip() in joined, (part, text, joined)

    for header in headers:  # the header alone: the turn's text is empty, nothing else is lost
        check = example([header])(example(["x", header])(check))
    check()


def test_streaming_parse_equals_whole_parse() -> None:
    fmt = pawlette.get_format("pcml")
    completion = '<think>a</think>\nHi\n<call>{"id": "1", "name": "f", "arguments": {}}</call><end>'
    whole = fmt.parse(completion).message
    events = feed_in_pieces(fmt, completion, [1], conversation=False)
    assert message_to_openai(merge_assistant(folded(fmt, events)[0])) == whole


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_model_output_of_every_kind_parses_to_valid_calls_the_same_every_way(name: str) -> None:
    fmt = pawlette.get_format(name)

    @examples(name, 60)
    @given(st.randoms(use_true_random=False), st.sampled_from([None, "stop", "length"]))
    def check(rng: Any, reason: str | None) -> None:
        text = completion(fmt, rng)
        assert problems(fmt, text, rng, reason=reason) == [], text

    check()


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_output_cut_by_the_length_limit_at_every_offset(name: str) -> None:
    fmt = pawlette.get_format(name)

    @examples(name, 12)
    @given(st.randoms(use_true_random=False))
    def check(rng: Any) -> None:
        text = completion(fmt, rng)[:300]
        picker = random.Random(rng.random())  # draws here do not grow hypothesis's input
        for end in range(len(text) + 1):
            # Every path on a few cuts, the whole parse (lenient and strict) on every one.
            every_path = picker.random() < 0.05
            found = problems(fmt, text[:end], picker, reason="length", paths=every_path)
            assert found == [], text[:end]

    check()
