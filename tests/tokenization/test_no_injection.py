"""No injection, deterministically: every marker of every registered format (and Llama 3's
special tokens, and near misses of each) in every text slot a request can carry, for every
format and tokenizer, never yields a control id.

The hypothesis test in test_properties.py draws a few dozen markers per run; this one puts
each of the format's own markers and its share of the others (every marker for some format),
alone, and all markers together, into every slot: system, user and assistant content, reasoning,
tool call arguments, tool names and descriptions, tool results and message names, and text
around image parts (each where the format can carry it: a slot the format refuses for plain
text is left out, and a slot whose validation refuses a marker, such as a tool name, is counted
as refused, not as passed).  The control ids of each request are exactly those of the same
request with plain text in the slot: text never adds a control token, not even one the format
writes from structure (omni's image references ``<|IMAGE_1|>``, which come from image parts).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from tokenizers import Tokenizer

import pawlette
from pawlette.engine.lexer import marker_pattern
from pawlette.errors import PawletteError
from pawlette.format import Format
from pawlette.tokenization import ConversationEncoder
from pawlette.types import Rendering

from ..helpers import WITHOUT_CALLS, WITHOUT_SYSTEM
from ..support.llama3 import LLAMA3_SPECIAL_TOKENS
from ..support.small_spm import spm_tokenizer
from .support import ALL_MARKERS, FORMATS, llama3_all, small_all

SLOTS = (
    "system",
    "user",
    "user_with_images",
    "assistant",
    "reasoning",
    "arguments",
    "tool_name",
    "tool_description",
    "tool_result",
    "name",
)
NEAR_MISSES = ("<|", "|>", "<", ">", "[", "]", "\\", "\\\\", "\n", " ", "sop", "[gMASK")
MARKERS = tuple(dict.fromkeys([*ALL_MARKERS, *LLAMA3_SPECIAL_TOKENS]))


@cache
def payloads(name: str) -> list[str]:
    """Each of the format's own markers, and its share of the others, alone, between text,
    cut short at either end, escaped and doubled; every near miss; all markers together.
    The tokenizers hold every marker as a special token, so each is a control token no text
    may become; the formats share the others out between them (every marker is tried alone
    for some format), which keeps the test from growing with the square of the formats."""
    own = set(pawlette.get_format(name).special_markers)
    share = FORMATS.index(name)
    chosen = [
        marker
        for number, marker in enumerate(MARKERS)
        if marker in own or number % len(FORMATS) == share
    ]
    found: list[str] = []
    for marker in chosen:
        found += [marker, f"a{marker}b", marker[:-1], marker[1:], "\\" + marker, marker * 2]
    found += [f"x{miss}y" for miss in NEAR_MISSES]
    found += ["".join(MARKERS), " ".join(MARKERS), "\n".join(MARKERS)]
    return list(dict.fromkeys(found))


def test_the_shares_try_every_marker_alone() -> None:
    tried = {payload for name in FORMATS for payload in payloads(name)}
    assert set(MARKERS) <= tried


def request(payload: str, slots: frozenset[str], name: str) -> dict[str, Any]:
    """A request with ``payload`` in ``slots``, as format ``name`` can express it: without
    the system message where the format refuses one, and without the round of calls and
    results where it has no calls (:data:`tests.helpers.WITHOUT_SYSTEM`, ``WITHOUT_CALLS``)."""

    def text(slot: str, default: str | None) -> str | None:
        return payload if slot in slots else default

    tool_name = text("tool_name", "f")
    call = {
        "id": "callid001",
        "type": "function",
        "function": {"name": tool_name, "arguments": json.dumps({"q": text("arguments", "x")})},
    }
    first: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
    last: dict[str, Any] = {"role": "assistant", "content": text("assistant", "Done.")}
    if "reasoning" in slots:
        first["reasoning_content"] = payload
        last["reasoning_content"] = payload
    user: dict[str, Any] = {"role": "user", "content": text("user", "Hi")}
    if "user_with_images" in slots:
        image = {"type": "image_url", "image_url": {"url": "a.png", "tokens": 1}}
        part = {"type": "text", "text": payload}
        user["content"] = [part, image, part, image, part]
    if "name" in slots:
        user["name"] = payload
    system = {"role": "system", "content": text("system", "Be brief.")}
    result = {"role": "tool", "tool_call_id": "callid001", "content": text("tool_result", "42")}
    return {
        "messages": [
            *([] if name in WITHOUT_SYSTEM else [system]),
            user,
            *([] if name in WITHOUT_CALLS else [first, result]),
            last,
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": tool_name,
                    "description": text("tool_description", "A tool."),
                    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                },
            }
        ],
    }


@cache
def carried_slots(name: str) -> frozenset[str]:
    """The slots the format renders plain text in (its text shows in the rendering)."""
    fmt = pawlette.get_format(name)
    probe = "zq_probe"
    found = set()
    for slot in SLOTS:
        try:
            rendering = fmt.render(request(probe, frozenset({slot}), name))
        except PawletteError:
            continue
        if probe in rendering.text:
            found.add(slot)
    return frozenset(found)


def marker_ids_of(fmt: Format, tokenizer: Tokenizer, rendering: Rendering) -> list[int]:
    pattern = marker_pattern(fmt.special_markers)
    return [
        tokenizer.token_to_id(match.group())
        for segment in rendering.segments
        if segment.special
        for match in pattern.finditer(segment.text)
    ]


def test_every_format_carries_the_common_slots() -> None:
    for name in FORMATS:
        common = {"system", "user", "assistant", "arguments", "tool_result"}
        if name in WITHOUT_SYSTEM:
            common.discard("system")
        if name in WITHOUT_CALLS:
            common -= {"arguments", "tool_result"}
        assert common <= carried_slots(name)
    assert "reasoning" in carried_slots("pcml") and "tool_description" in carried_slots("pcml")


def tokenizer_of(kind: str) -> Tokenizer:
    if kind == "small":
        return small_all()
    if kind == "llama3":
        return llama3_all()
    return spm_tokenizer(kind, ALL_MARKERS)


@pytest.mark.parametrize("kind", ["small", "llama3"])
@pytest.mark.parametrize("name", FORMATS)
def test_every_marker_in_every_slot_stays_text(name: str, kind: str) -> None:
    every_marker_in_every_slot_stays_text(name, kind)


# The byte-level tokenizers above run every format; the sentencepiece styles (where a marker
# may be matched after the text's leading space) run the sampled share.
@pytest.mark.sampled
@pytest.mark.parametrize("kind", ["metaspace-first", "legacy"])
@pytest.mark.parametrize("name", FORMATS)
def test_every_marker_in_every_slot_stays_text_in_sentencepiece(name: str, kind: str) -> None:
    every_marker_in_every_slot_stays_text(name, kind)


def every_marker_in_every_slot_stays_text(name: str, kind: str) -> None:
    fmt = pawlette.get_format(name)
    tokenizer = tokenizer_of(kind)
    control = set(tokenizer.get_added_tokens_decoder())
    encoder = ConversationEncoder(fmt, tokenizer)
    slots = carried_slots(name)
    requests: list[dict[str, Any]] = []
    plain: list[dict[str, Any]] = []  # each request with plain text in its slots
    refused: set[tuple[str, str]] = set()
    for payload in payloads(name):
        try:
            fmt.render(request(payload, slots, name))
            requests.append(request(payload, slots, name))
            plain.append(request("zq_probe", slots, name))
            continue
        except PawletteError:
            pass
        for slot in slots:  # some slot refuses this payload: each slot on its own
            try:
                fmt.render(request(payload, frozenset({slot}), name))
            except PawletteError:
                refused.add((slot, payload))
                continue
            requests.append(request(payload, frozenset({slot}), name))
            plain.append(request("zq_probe", frozenset({slot}), name))
    # Only a tool's name (an identifier) or a message name may refuse a marker.
    assert {slot for slot, _ in refused} <= {"tool_name", "name"}, sorted(refused)[:5]
    results = encoder.encode_batch(requests)
    for one, baseline, result in zip(requests, plain, results, strict=True):
        rendering = fmt.render(one)
        found = [token for token in result.input_ids if token in control]
        assert found == marker_ids_of(fmt, tokenizer, rendering), rendering.text
        assert found == marker_ids_of(fmt, tokenizer, fmt.render(baseline)), rendering.text
        if kind in ("small", "llama3"):  # byte-level: every character has tokens
            assert tokenizer.decode(result.input_ids, skip_special_tokens=False) == rendering.text
    assert len(requests) >= len(payloads(name))
