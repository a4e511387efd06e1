"""Gemma 4's whole-text reading against the machine, on a generated corpus of turns.

The whole-text reading (:mod:`pawlette.engine.whole`) lexes a Gemma 4 completion without its
string quote ``<|"|>`` (a call's text is one run) and reads members written the usual way
with json's reader; the machine, the reference, lexes every quote and reads members with the
value syntax's own reader.  On turns as models write them, malformed ones, cut-off ones,
strings holding quote-like and brace text and nested values, with the request's tools or
none, ``Format.parse`` must give the machine's message and warnings."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pawlette
from pawlette.engine import whole
from pawlette.engine.fold import fold, merge_assistant
from pawlette.engine.lexer import Lexer
from pawlette.engine.machine import Parser
from pawlette.formats.gemma4 import values
from pawlette.formats.gemma4.values import QUOTE, quick_members, read_members, write_members
from pawlette.openai import tools_from_openai

from ..helpers import sequential_ids

GEMMA4 = pawlette.get_format("gemma4")
WEATHER = tools_from_openai(
    [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
)

# Text a model may write in content, reasoning and strings: quote-like, brace and call text.
_TEXT = (
    "Sunny.",
    "Let me check.",
    " ",
    "\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "call:",
    "call:get_weather{",
    "<|",
    '<|"',
    '<|"|',
    '"|>',
    "|>",
    "<",
    QUOTE,
    "é",
    '"',
    "\\",
    "None",
    "1e999",
    "NaN",
    "\x00",
)
_WORDS = ("true", "false", "null", "None", "NaN", "Infinity", "1", "-2.5", "1e5", "01", "x", "a b")


def _text(rng: random.Random, most: int = 4) -> str:
    return "".join(rng.choice(_TEXT) for _ in range(rng.randint(0, most)))


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(6 if depth < 3 else 3)
    if kind == 0:
        return _text(rng).replace(QUOTE, "")  # (a string holding the quote cannot come back)
    if kind == 1:
        return rng.choice((True, False, None, 0, -3, 2.5, 1e-05, 10**20))
    if kind == 2:
        return rng.choice(("Paris", "a@b.c", "{x:1}", "[1]", "<|tool_call>", ""))
    if kind == 3:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice("abcxyz") + str(n): _value(rng, depth + 1) for n in range(rng.randint(0, 3))}


def _members(rng: random.Random) -> str:
    """A call's members: as the template writes them, or with blanks, bare words, quoted keys,
    a quote in a string, a string or an object not closed, stray text."""
    value = _value(rng, 1)
    written = write_members(value if isinstance(value, dict) else {"city": value})
    kind = rng.randrange(8)
    if kind == 0:
        return written.replace(",", ", ").replace(":", ": ")
    if kind == 1:
        return f"unit:{rng.choice(_WORDS)},days:[{rng.choice(_WORDS)}]"
    if kind == 2:
        return f"{QUOTE}city{QUOTE}:{QUOTE}Paris{QUOTE}"
    if kind == 3:
        return f"city:{QUOTE}Pa{QUOTE}ris{QUOTE}"
    if kind == 4:
        cut = rng.randint(0, len(written))
        return written[:cut]
    if kind == 5:
        return written + _text(rng, 2)
    return written


def _call(rng: random.Random) -> str:
    """A call as the template writes it (half of them), or one of its parts spelled
    otherwise: the head, the name, the members, the close."""
    name, head, close, end = "get_weather", "call:", "}", "<tool_call|>"
    members = write_members({"city": _value(rng, 1)})
    if rng.random() < 0.5:
        part = rng.randrange(5)
        if part == 0:
            name = rng.choice(("other", "", "get weather"))
        elif part == 1:
            head = rng.choice(("call: ", " call:", "", "cal:"))
        elif part == 2:
            close = rng.choice(("} ", "", "}}"))
        elif part == 3:
            end = rng.choice(("", "<turn|>"))
        else:
            members = _members(rng)
    return "<|tool_call>" + head + name + "{" + members + close + end


def _turn(rng: random.Random) -> str:
    parts = []
    if rng.random() < 0.4:
        close = rng.choice(("\n<channel|>", "<channel|>", "", "<channel|>"))
        parts.append("<|channel>thought\n" + _text(rng) + close)
    if rng.random() < 0.7:
        parts.append(_text(rng))
    parts.extend(_call(rng) for _ in range(rng.choice((0, 1, 1, 2, 3))))
    if rng.random() < 0.3:  # text after the calls (the template writes a turn's text there)
        parts.append(rng.choice(("", "\n", " \n ")) + rng.choice((_text(rng), "\n")))
    parts.append(rng.choice(("<|tool_response>", "<turn|>", "<eos>", "", "<turn|>\n", "<turn|>")))
    if rng.random() < 0.15:
        parts.append(rng.choice(("More.", "\n", QUOTE, "<|tool_response>response:x{}")))
    return "".join(parts)


def _corpus(count: int, seed: int = 4) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        text = _turn(rng)
        texts.append(text)
        texts.append(text[: rng.randint(0, len(text))])  # cut off anywhere
    return texts


def _machine(text: str, tools: tuple[pawlette.Tool, ...]) -> tuple[Any, ...]:
    """The machine's message (OpenAI and core) and warnings of a whole completion."""
    parser = Parser(GEMMA4.grammar, id_factory=sequential_ids(), tools=tools)
    folded = fold(parser.read_all(text), GEMMA4.grammar.fields)
    message = merge_assistant(folded.messages)
    return message, tuple(folded.warnings)


@pytest.mark.parametrize("tools", [(), WEATHER], ids=["no tools", "tools"])
def test_a_parse_is_the_machines_on_generated_turns(tools: tuple[pawlette.Tool, ...]) -> None:
    """Every text of the corpus parses to the machine's message and warnings, and the corpus
    is not vacuous: the whole-text reading takes a good share of it, calls and all."""
    taken = with_calls = 0
    for text in _corpus(600):
        parsed = GEMMA4.parse(text, id_factory=sequential_ids(), tools=tools)
        message, warnings = _machine(text, tools)
        assert (parsed.core, parsed.warnings) == (message, warnings), text
        if whole.read_whole(GEMMA4.grammar, text, None, sequential_ids(), tools) is not None:
            taken += 1
            with_calls += bool(message.tool_calls)
    assert taken >= 400 and with_calls >= 140, (taken, with_calls)


def test_the_quote_is_no_token_of_the_whole_text_reading(monkeypatch: Any) -> None:
    """A call's text comes to the whole-text reading as one run: its quotes are not lexed
    (each was a marker token, and a run after it, to be joined again)."""
    scans: list[list[Any]] = []
    read_all = Lexer.read_all

    def recorded(self: Lexer, text: str) -> Any:
        tokens = read_all(self, text)
        scans.append(tokens)
        return tokens

    monkeypatch.setattr(Lexer, "read_all", recorded)
    text = f"<|tool_call>call:get_weather{{city:{QUOTE}Paris{QUOTE},days:2}}<tool_call|><turn|>"
    parsed = GEMMA4.parse(text, id_factory=sequential_ids())
    assert parsed.message["tool_calls"][0]["function"]["arguments"] == (
        '{"city": "Paris", "days": 2}'
    )
    assert len(scans) == 1
    markers = [marker for marker, _, _ in scans[0]]
    assert markers == ["<|tool_call>", None, "<tool_call|>", "<turn|>"]


def test_the_tokens_handed_to_the_machine_are_the_full_lexers() -> None:
    """A text the whole-text reading gives up on is read by the machine from the tokens the
    grammar's own lexer reads (the hidden quotes made tokens again), or lexed anew by it."""
    grammar = GEMMA4.grammar
    handed = 0
    for text in _corpus(300, seed=9):
        lexed: list[Any] = []
        if whole.read_whole(grammar, text, None, sequential_ids(), (), lexed) is not None:
            continue
        full = Lexer(grammar.markers, escape=grammar.escape)
        if lexed:
            handed += 1
            assert lexed[0] == full.read_all(text), text
        else:  # (only a text whose end may still begin a marker is lexed anew)
            assert text and not full.reads_at_once(text), text
    assert handed >= 50, handed


def test_members_as_the_template_writes_them_need_no_reading_per_token(monkeypatch: Any) -> None:
    """Members of strings, JSON's words and numbers without an exponent are read by json's
    reader whole (the per-token pass is for the reference's own words: None, bare strings)."""

    def refused(match: Any) -> str:
        raise AssertionError("read token by token")

    monkeypatch.setattr(values, "_json_token", refused)
    arguments = {"rows": [{"id": n, "name": f"item {n}", "ok": n % 2 == 0} for n in range(5)]}
    written = write_members(arguments)
    assert quick_members(written) == read_members(written) == arguments


@pytest.mark.parametrize(
    "members",
    [
        "a:None",
        "a:NaN",
        "a:Infinity",
        "a:-Infinity",
        "a:1e999",
        "a:01",
        "a:x",
        "a:1,a:2",
        f"a:{QUOTE}x{QUOTE},b:[true,null,-0,1.50]",
    ],
)
def test_json_words_and_the_references_own_words_read_as_the_reference_reads_them(
    members: str,
) -> None:
    try:
        expected = json.dumps(read_members(members))
    except ValueError:
        expected = None
    quick = quick_members(members)
    assert quick is None or json.dumps(quick) == expected


@given(st.lists(st.sampled_from(["<", "|", '"', ">", QUOTE, "<|", "a", "é"]), max_size=30))
def test_a_quote_is_found_by_its_first_character_where_a_search_finds_it(pieces: list[str]) -> None:
    text = "".join(pieces)
    for at in range(len(text) + 1):
        assert values._quote_at(text, at) == text.find(QUOTE, at), (text, at)


def test_text_after_the_calls_is_read_whole() -> None:
    """The template writes a turn's text after its calls; reading it does not send the turn
    to the machine (the whitespace before it is layout, the rest content)."""
    text = '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>\n Let me check.<turn|>'
    read = whole.read_whole(GEMMA4.grammar, text, None, sequential_ids(), WEATHER)
    assert read is not None
    message, _ = read
    assert message == _machine(text, WEATHER)[0]
    assert [part.text for part in message.content or ()] == ["Let me check."]
