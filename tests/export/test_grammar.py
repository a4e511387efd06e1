"""The exported grammars accept every turn the renderer writes and reject what breaks them.

Run through llguidance (the Lark form, with a tokenizer built here, markers as special
tokens) and, for the GBNF form, through a GBNF parser written after llama.cpp's rules whose
translation to Lark llguidance then runs on the same cases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

import llguidance
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

import pawlette
from pawlette import declare
from pawlette.codecs.python_literals import raw_string_end
from pawlette.declare import layout_of
from pawlette.emit.grammar_ast import Marker as MarkerNode
from pawlette.emit.grammar_ast import (
    MarkerSpelling,
    Rules,
    Syntax,
    Terminal,
    optional,
    seq,
    to_gbnf,
    to_lark,
)
from pawlette.emit.text_language import TextLanguage, define, reads_as_text, text_terminal
from pawlette.errors import RequestError, UnsupportedFeature
from pawlette.export.grammar import export_grammar as export_grammar_of
from pawlette.export.grammar import export_grammar_bundle as export_grammar_bundle_of
from pawlette.export.grammar import grammar_formats
from pawlette.format import Format
from tests.helpers import WITHOUT_CALLS

from ..declare.conversations import raw_strings
from ..helpers import stop_texts, without_stop
from ..support.kept_grammars import kept_grammar
from ..support.small_bpe import small_tokenizer
from . import gbnf
from .test_json_schema import SCHEMAS

# ------------------------------------------------------------------ the tool set

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather [SYS] in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "limit": {"type": "integer"},
                "filters": {
                    "type": "object",
                    "properties": {"lang": {"type": "string"}, "safe": {"type": "boolean"}},
                },
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "score": {"type": ["number", "null"]},
            },
            "required": ["query"],
        },
    },
}
PING = {"type": "function", "function": {"name": "ping"}}
TOOLS = [WEATHER, SEARCH, PING]
NAMES = ["get_weather", "search", "ping"]


# ------------------------------------------------------------------ tokens


EOS = "<|eos|>"  # an end-of-sequence token that is no marker (llguidance needs one)


@cache
def tokenizer(name: str) -> Any:
    """The small BPE with the format's markers and EOS: a copy of the shared one, since
    :func:`encode_text` switches its ``encode_special_tokens``."""
    shared = small_tokenizer((*pawlette.get_format(name).special_markers, EOS))
    return Tokenizer.from_str(shared.to_str())


@cache
def ll_tokenizer(name: str) -> Any:
    tok = tokenizer(name)
    return llguidance.LLTokenizer(tok.to_str(), eos_token=tok.token_to_id(EOS))


def encode_text(name: str, text: str) -> list[int]:
    """Text with special tokens off: a marker's spelling in text stays text."""
    tok = tokenizer(name)
    tok.encode_special_tokens = True
    try:
        return list(tok.encode(text, add_special_tokens=False).ids)
    finally:
        tok.encode_special_tokens = False


def encode_special(name: str, text: str) -> list[int]:
    """A special segment: its markers by id, anything else in it (``\\n``) as text."""
    fmt = pawlette.get_format(name)
    pattern = re.compile("|".join(re.escape(m) for m in sorted(fmt.special_markers, key=len)[::-1]))
    ids: list[int] = []
    position = 0
    for match in pattern.finditer(text):
        ids += encode_text(name, text[position : match.start()])
        ids.append(tokenizer(name).token_to_id(match.group()))
        position = match.end()
    return ids + encode_text(name, text[position:])


def marker_ids(name: str) -> dict[str, int] | None:
    """The markers by id where a grammar must name them so (Mistral's ``[TOOL_CALLS]`` is
    not shaped ``<...>``); None: every marker is named by its text."""
    markers = pawlette.get_format(name).special_markers
    if all(marker.startswith("<") and marker.endswith(">") for marker in markers):
        return None
    return {marker: tokenizer(name).token_to_id(marker) for marker in markers}


def _name(fmt: Any) -> str:
    return fmt if isinstance(fmt, str) else str(fmt.name)


def export_grammar(fmt: Any, *arguments: Any, **settings: Any) -> str:
    """The grammar as this module's tokenizer names the format's markers, a registered
    format's built once per test process."""
    if not settings.get("markers_as_text"):
        settings.setdefault("token_ids", marker_ids(_name(fmt)))
    if isinstance(fmt, str):
        return kept_grammar(pawlette.get_format(fmt), *arguments, **settings)
    return export_grammar_of(fmt, *arguments, **settings)


def export_grammar_bundle(fmt: Any, *arguments: Any, **settings: Any) -> Any:
    if not settings.get("markers_as_text"):
        settings.setdefault("token_ids", marker_ids(_name(fmt)))
    return export_grammar_bundle_of(fmt, *arguments, **settings)


class M(str):
    """A marker in a hand-written turn."""


def turn_ids(name: str, pieces: Sequence[str]) -> list[int]:
    ids: list[int] = []
    for piece in pieces:
        ids += encode_special(name, piece) if isinstance(piece, M) else encode_text(name, piece)
    return ids


def completion_ids(fmt: Format, request: dict[str, Any], index: int) -> list[int]:
    """The trainable segments of assistant message ``index`` (and of the next message: the
    role token that ends the turn, in chatglm3): what the model writes (a last turn written
    so: Nemotron Nano 2's template writes it otherwise)."""
    from ..declare.conversations import as_the_model_writes

    rendering = as_the_model_writes(fmt).render(request)
    ids: list[int] = []
    for segment in rendering.segments:
        if segment.message_index in (index, index + 1) and segment.trainable:
            encode = encode_special if segment.special else encode_text
            ids += encode(fmt.name, segment.text)
    return ids


@cache
def matcher_grammar(text: str, syntax: str, name: str) -> str:
    if syntax == "gbnf":
        tokens = pawlette.get_format(name).special_markers
        text = gbnf.to_lark(gbnf.parse(text, tokens))
    grammar: str = llguidance.LLMatcher.grammar_from_lark(text)
    error = llguidance.LLMatcher.validate_grammar(grammar, ll_tokenizer(name))
    assert not error, error
    return grammar


def stop_ids(name: str) -> set[int]:
    return {
        tokenizer(name).token_to_id(marker) for marker in pawlette.get_format(name).stop_markers
    }


def accepts(name: str, grammar: str, syntax: str, ids: list[int]) -> bool:
    """Whether the grammar accepts the turn ``ids`` whole.  A turn's own stop marker (or stop
    of text) at its end is left out: the grammar ends where the engine's stop takes over (an
    engine accepts no end-of-generation token through a grammar), so it must be complete
    right there; a stop marker anywhere else is a token the grammar must refuse."""
    texts = stop_texts(pawlette.get_format(name))
    tails = [tokenizer(name).encode(text, add_special_tokens=False).ids for text in texts]
    ids = without_stop(ids, stop_ids(name), tails)
    matcher = fresh_matcher(name, grammar, syntax).deep_copy()
    return bool(matcher.consume_tokens(ids) and matcher.is_accepting())


@cache
def fresh_matcher(name: str, grammar: str, syntax: str) -> Any:
    """A matcher at the grammar's start, built once (about 0.1 s for a big grammar) and
    copied for each use (a copy costs microseconds)."""
    return llguidance.LLMatcher(
        ll_tokenizer(name), matcher_grammar(grammar, syntax, name), log_level=0
    )


SYNTAXES = ["lark", "gbnf"]

# ------------------------------------------------------------------ generated turns

safe_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8)


def no_markers(name: str) -> st.SearchStrategy[str]:
    """Strings for ids and arguments: no marker (PCML would escape it out of JSON), and no
    DEL, which JSON allows raw but llguidance's ``%json`` strings do not."""
    markers = pawlette.get_format(name).grammar.markers
    return safe_text.filter(
        lambda text: "\x7f" not in text and not any(marker in text for marker in markers)
    )


def tricky(name: str) -> st.SearchStrategy[str]:
    markers = sorted(pawlette.get_format(name).grammar.markers)
    pieces = st.one_of(safe_text, st.sampled_from([*markers, "\\", "\\\\", "\n", '"']))
    return st.lists(pieces, max_size=5).map("".join)


@st.composite
def arguments(draw: st.DrawFn, name: str, tool: str) -> str:
    strings = no_markers(name)
    # An argument that is a string written raw (LFM2.5's spelling): one the writer can write.
    top = strings
    if raw_strings(layout_of(pawlette.get_format(name))):
        top = strings.filter(lambda text: raw_string_end(text) is None)
    value: dict[str, Any] = {}
    if tool == "get_weather":
        value["city"] = draw(top)
        if draw(st.booleans()):
            value["unit"] = draw(st.sampled_from(["celsius", "fahrenheit"]))
    elif tool == "search":
        value["query"] = draw(top.filter(bool))
        if draw(st.booleans()):
            value["limit"] = draw(st.integers(-(10**6), 10**6))
        if draw(st.booleans()):
            filters: dict[str, Any] = {}
            if draw(st.booleans()):
                filters["lang"] = draw(strings)
            if draw(st.booleans()):
                filters["safe"] = draw(st.booleans())
            value["filters"] = filters
        if draw(st.booleans()):
            value["tags"] = draw(st.lists(strings, max_size=3))
        if draw(st.booleans()):
            value["score"] = draw(
                st.none() | st.floats(-3.4028234663852886e38, 3.4028234663852886e38, width=32)
            )
        if draw(st.booleans()):
            value["extra"] = draw(st.integers() | top)
    style = draw(st.sampled_from([{}, {"separators": (",", ":")}, {"indent": 2}]))
    return json.dumps(value, ensure_ascii=draw(st.booleans()), **style)


@st.composite
def assistant_turns(draw: st.DrawFn, name: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        tool = draw(st.sampled_from(NAMES))
        calls.append(
            {
                "id": draw(no_markers(name)),
                "type": "function",
                "function": {"name": tool, "arguments": draw(arguments(name, tool))},
            }
        )
    if calls:
        message["tool_calls"] = calls
    message["content"] = draw(tricky(name))
    if draw(st.booleans()):
        message["reasoning_content"] = draw(tricky(name))
    return message


def choices_for(message: dict[str, Any], *, openai_form: bool = True) -> list[tuple[Any, bool]]:
    """The tool choices (and parallel flags) the turn obeys; a named choice in OpenAI's form
    or (not ``openai_form``) as the bare name."""
    calls = message.get("tool_calls", [])
    result: list[tuple[Any, bool]] = [("auto", True)]
    if len(calls) <= 1:
        result.append(("auto", False))
    if not calls:
        result.append(("none", True))
    elif not message.get("content") and message.get("reasoning_content") is None:
        # (a forced choice turns reasoning off: pawlette.export.forced)
        result.append(("required", True))
        names = {call["function"]["name"] for call in calls}
        if len(names) == 1:
            name = names.pop()
            named = {"type": "function", "function": {"name": name}} if openai_form else name
            result.append((named, True))
    return result


# omni: functions and actions, content parts, structured thinking, one call per turn.

SMILE = {
    "type": "action",
    "action": {
        "name": "smile",
        "parameters": {"type": "object", "properties": {"level": {"type": "integer"}}},
    },
}
OMNI_TOOLS = [WEATHER, SEARCH, SMILE]


@st.composite
def omni_turns(draw: st.DrawFn) -> dict[str, Any]:
    name = "omni"
    message: dict[str, Any] = {"role": "assistant"}
    parts: list[dict[str, Any]] = []
    small = st.dictionaries(no_markers(name), no_markers(name) | st.integers(), max_size=2)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "voice", "action", "image_request"]))
        if kind == "text":
            parts.append({"type": "text", "text": draw(tricky(name))})
        elif kind == "voice":
            voice = {"text": draw(tricky(name)), "prosody": draw(small)}
            parts.append({"type": "voice", "voice": voice})
        elif kind == "action":
            level = draw(st.none() | st.integers(0, 9))
            given = {} if level is None else {"level": level}
            parts.append(
                {"type": "action", "action": {"name": "smile", "arguments": json.dumps(given)}}
            )
        else:
            parts.append({"type": "image_request", "image_request": draw(small)})
    message["content"] = parts
    if draw(st.booleans()):
        tool = draw(st.sampled_from(["get_weather", "search"]))
        message["tool_calls"] = [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": tool, "arguments": draw(arguments(name, tool))},
            }
        ]
    if draw(st.booleans()):
        message["reasoning_content"] = draw(tricky(name))
    elif draw(st.booleans()):
        steps = st.fixed_dictionaries(
            {"title": tricky(name), "reasoning": tricky(name), "conclusion": tricky(name)}
        )
        message["reasoning_steps"] = draw(st.lists(steps, max_size=2))
    return message


def omni_choices(message: dict[str, Any]) -> list[tuple[Any, bool]]:
    calls = message.get("tool_calls", [])
    result: list[tuple[Any, bool]] = [("auto", True), ("auto", False)]
    thinking = message.get("reasoning_content") is not None or "reasoning_steps" in message
    if not calls:
        result.append(("none", True))
    elif thinking:
        pass  # a forced choice turns reasoning off (pawlette.export.forced)
    elif not any(part["type"] != "text" or part["text"] for part in message["content"]):
        result.append(("required", False))
        result.append((calls[0]["function"]["name"], True))
    return result


# chatglm3 and breeze: calls in Python syntax, no escaping (text never spells a marker).


def plain(name: str) -> st.SearchStrategy[str]:
    # No marker's spelling either: the GBNF run spells markers as text, where a marker's
    # spelling in content cannot be told from the marker (Ling's "<role>").
    fmt = pawlette.get_format(name)
    markers = fmt.grammar.markers | set(fmt.special_markers)
    pieces = st.one_of(safe_text, st.sampled_from(["\\", "\n", '"', "'", "```", "[", "<|"]))
    return (
        st.lists(pieces, max_size=5)
        .map("".join)
        .filter(lambda text: not any(marker in text for marker in markers))
    )


def python_calls(name: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    @st.composite
    def one(draw: st.DrawFn) -> dict[str, Any]:
        tool = draw(st.sampled_from(NAMES))
        return {
            "id": f"c{draw(st.integers(0, 9))}",
            "type": "function",
            "function": {"name": tool, "arguments": draw(arguments(name, tool))},
        }

    return st.lists(one(), max_size=3)


@st.composite
def chatglm3_turns(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": draw(plain("chatglm3"))}
    calls = draw(python_calls("chatglm3"))
    if calls:
        message["tool_calls"] = calls
    return message


@st.composite
def breeze_turns(draw: st.DrawFn) -> dict[str, Any]:
    calls = draw(python_calls("breeze"))
    if calls:
        return {"role": "assistant", "content": None, "tool_calls": calls}
    parts: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            parts.append({"type": "text", "text": draw(plain("breeze"))})
        else:
            box = st.lists(st.integers(0, 1000), min_size=4, max_size=4)
            boxes = draw(st.lists(box, min_size=1, max_size=2))
            parts.append({"type": "bbox", "bbox": {"boxes": boxes}})
    return {"role": "assistant", "content": parts}


def python_call_choices(message: dict[str, Any]) -> list[tuple[Any, bool]]:
    return choices_for(message, openai_form=False)


def declared_turns(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """Turns of a declared format (chatml, llama3): what its layout can write."""
    from ..declare.conversations import assistant_turn

    fmt = pawlette.get_format(name)
    return assistant_turn(fmt, plain(name), lambda tool: arguments(name, tool), NAMES)


TURNS = {
    "pcml": (TOOLS, assistant_turns, choices_for),
    "chatml": (TOOLS, declared_turns, choices_for),
    "llama3": (TOOLS, declared_turns, choices_for),
    "mistral": (TOOLS, declared_turns, choices_for),
    "deepseek": (TOOLS, declared_turns, choices_for),
    "glm": (TOOLS, declared_turns, choices_for),
    "bailing": (TOOLS, declared_turns, choices_for),
    "harmony": (TOOLS, declared_turns, choices_for),
    "kimi": (TOOLS, declared_turns, choices_for),
    "gemma": (TOOLS, declared_turns, choices_for),
    "gemma4": (TOOLS, declared_turns, choices_for),
    "phi3": (TOOLS, declared_turns, choices_for),
    "granite": (TOOLS, declared_turns, choices_for),
    "hermes": (TOOLS, declared_turns, choices_for),
    "smollm3": (TOOLS, declared_turns, choices_for),
    "functionary": (TOOLS, declared_turns, choices_for),
    "firefunction": (TOOLS, declared_turns, choices_for),
    "solar": (TOOLS, declared_turns, choices_for),
    "functionary_v3_2": (TOOLS, declared_turns, choices_for),
    "cohere": (TOOLS, declared_turns, choices_for),
    "deepseek_dsml": (TOOLS, declared_turns, choices_for),
    "gigachat": (TOOLS, declared_turns, choices_for),
    "minimax": (TOOLS, declared_turns, choices_for),
    "nemotron_v2": (TOOLS, declared_turns, choices_for),
    "lfm2": (TOOLS, declared_turns, choices_for),
    "bielik": (TOOLS, declared_turns, choices_for),
    "minimax_m2": (TOOLS, declared_turns, choices_for),
    "seed_oss": (TOOLS, declared_turns, choices_for),
    "spark": (TOOLS, declared_turns, choices_for),
    "laguna": (TOOLS, declared_turns, choices_for),
    "reka": (TOOLS, declared_turns, choices_for),
    "apriel": (TOOLS, declared_turns, choices_for),
    "apriel:1.6": (TOOLS, declared_turns, choices_for),
    "apertus": (TOOLS, declared_turns, choices_for),
    "rwkv": (TOOLS, declared_turns, choices_for),
    "hy3": (TOOLS, declared_turns, choices_for),
    "minicpm": (TOOLS, declared_turns, choices_for),
    "muse": (TOOLS, declared_turns, choices_for),
    "ifm": (TOOLS, declared_turns, choices_for),
    "omni": (OMNI_TOOLS, lambda name: omni_turns(), omni_choices),
    "chatglm3": (TOOLS, lambda name: chatglm3_turns(), python_call_choices),
    "breeze": (TOOLS, lambda name: breeze_turns(), python_call_choices),
}


def test_every_grammar_format_has_a_turn_strategy() -> None:
    assert set(grammar_formats()) <= set(TURNS)


@pytest.mark.sampled
@pytest.mark.parametrize(
    ("name", "syntax"),
    [(name, syntax) for name in grammar_formats() for syntax in SYNTAXES],
)
@settings(max_examples=60)
@given(data=st.data())
def test_every_rendered_turn_is_accepted(name: str, syntax: str, data: st.DataObject) -> None:
    fmt = pawlette.get_format(name)
    tools, turns, choices = TURNS[name]
    message = data.draw(turns(name))
    messages = [{"role": "user", "content": "hi"}, message]
    if name == "chatglm3":  # the turn ends with the next role token, which the model writes
        calls = message.get("tool_calls", [])
        following = {"role": "tool", "content": "r"} if calls else {"role": "user", "content": "ok"}
        messages.append(following)
    request = {"messages": messages, "tools": tools}
    ids = completion_ids(fmt, request, 1)
    # A drawn call may hold a key its tool does not declare ("extra"): JSON Schema's default
    # allows it; the strict default (OpenAI's strict mode) refuses it.
    undeclared = any(
        "extra" in json.loads(call["function"]["arguments"])
        for call in message.get("tool_calls") or []
    )
    for choice, parallel in choices(message):
        grammar = export_grammar(name, tools, choice, parallel, syntax, strict=not undeclared)  # type: ignore[arg-type]
        assert accepts(name, grammar, syntax, ids), (choice, parallel, fmt.render(request).text)
        if undeclared and choice != "none":
            strict = export_grammar(name, tools, choice, parallel, syntax)  # type: ignore[arg-type]
            assert not accepts(name, strict, syntax, ids), (choice, fmt.render(request).text)


@pytest.mark.parametrize("name", ["functionary", "functionary_v3_2", "minicpm", "deepseek_dsml"])
@pytest.mark.parametrize("syntax", SYNTAXES)
def test_text_before_a_plain_text_call_opener_is_accepted(name: str, syntax: str) -> None:
    """Text, then calls whose opener is plain text: the text ends in the opener's first
    characters, which llguidance's greedy lexer would take as text unless text and opener
    are one lexeme (pawlette.declare.grammar.text_then)."""
    fmt = pawlette.get_format(name)
    call = {"type": "function", "function": {"name": "ping", "arguments": "{}"}}
    message = {"role": "assistant", "content": "Let me check <fun", "tool_calls": [call]}
    request = {"messages": [{"role": "user", "content": "hi"}, message], "tools": TOOLS}
    grammar = export_grammar(name, TOOLS, "auto", True, syntax)  # type: ignore[arg-type]
    assert ("TEXT_CALLS" if syntax == "lark" else "text-calls ::=") in grammar
    assert accepts(name, grammar, syntax, completion_ids(fmt, request, 1)), fmt.render(request).text


# ------------------------------------------------------------------ rejections (PCML)

CALL = M("<call>")
CALL_END = M("</call>")
END = M("<end>")


def weather_call(arguments: str, name: str = "get_weather", call_id: str = "c1") -> list[str]:
    body = f'{{"id": "{call_id}", "name": "{name}", "arguments": {arguments}}}'
    return [CALL, body, CALL_END]


GOOD = '{"city": "Paris"}'
REJECTED = {
    "unknown tool": [*weather_call(GOOD, name="get_wether"), END],
    "malformed arguments": [*weather_call('{"city": }'), END],
    "arguments not an object": [*weather_call('["Paris"]'), END],
    "missing required property": [*weather_call('{"unit": "celsius"}'), END],
    "wrong type": [*weather_call('{"city": 7}'), END],
    "value outside the enum": [*weather_call('{"city": "P", "unit": "kelvin"}'), END],
    "undeclared property": [*weather_call('{"city": "P", "wind": 1}'), END],
    "marker token inside content": ["It is ", M("[AST]"), " sunny", END],
    "end token inside arguments": [
        CALL,
        '{"id": "c1", "name": "get_weather", "arguments": {"city": "',
        END,
    ],
    "unescaped marker spelled in content": ["say <end> please", END],
    "odd backslash run before the end": ["a\\", END],
    "call marker with no newline after content": ["Sure", *weather_call(GOOD), END],
    "calls without separating newline": [*weather_call(GOOD), *weather_call(GOOD), END],
    "text after the end marker": ["Hi", END, "more"],
    "the end marker written through the grammar": [*weather_call(GOOD), END, END],
}
ACCEPTED = {
    "no end marker (the engine's stop ends the turn)": [*weather_call(GOOD)],
    "escaped marker in content": ["say \\<end> please", END],
    "even backslash run before the end": ["a\\\\", END],
    "content then a call": [
        "Sure\n",
        CALL,
        '{"id": "c1", "name": "get_weather", "arguments": {"city": "P"}}',
        CALL_END,
        END,
    ],
    "reasoning only": [M("<think>"), "hmm", M("</think>\n"), END],
    "two calls": [*weather_call(GOOD), "\n", *weather_call(GOOD, call_id="c2"), END],
}


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("case", sorted(REJECTED))
def test_pcml_grammar_rejects(syntax: str, case: str) -> None:
    grammar = export_grammar("pcml", TOOLS, "auto", True, syntax)  # type: ignore[arg-type]
    assert not accepts("pcml", grammar, syntax, turn_ids("pcml", REJECTED[case]))


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_pcml_grammar_accepts(syntax: str, case: str) -> None:
    grammar = export_grammar("pcml", TOOLS, "auto", True, syntax)  # type: ignore[arg-type]
    assert accepts("pcml", grammar, syntax, turn_ids("pcml", ACCEPTED[case]))


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_pcml_tool_choice_and_parallel(syntax: Any) -> None:
    one = [*weather_call(GOOD), END]
    two = [*weather_call(GOOD), "\n", *weather_call(GOOD, call_id="c2"), END]
    search = [*weather_call('{"query": "x"}', name="search"), END]
    text = ["Just text", END]
    text_then_call = ["Sure\n", *weather_call(GOOD), END]
    expectations = [
        ("none", True, text, True),
        ("none", True, one, False),
        ("required", True, one, True),
        ("required", True, two, True),
        ("required", True, text, False),
        ("required", True, text_then_call, False),
        ("required", False, two, False),
        ("auto", False, two, False),
        ("auto", False, text_then_call, True),
        ("get_weather", True, one, True),
        ("get_weather", True, search, False),
        ({"type": "function", "function": {"name": "search"}}, True, search, True),
        ({"type": "function", "function": {"name": "search"}}, False, search, True),
    ]
    for choice, parallel, pieces, expected in expectations:
        grammar = export_grammar("pcml", TOOLS, choice, parallel, syntax)
        assert accepts("pcml", grammar, syntax, turn_ids("pcml", pieces)) is expected, (
            choice,
            parallel,
            pieces,
        )


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_omni_grammar(syntax: Any) -> None:
    call = ["\n", M("<|FUNCTION_START|>"), "get_weather", M("<|FUNCTION_ARGS|>"), GOOD]
    call.append(M("<|FUNCTION_RETURN|>"))
    end = M("<|ASSISTANT_END|>")
    smile = ["\n", M("<|ACTION_START|>"), "smile", M("<|ACTION_ARGS|>"), '{"level": 1}']
    smile += [M("<|ACTION_END|>"), "\n"]
    expectations = [
        ("auto", ["Sunny \\<|USER_END|> today", end], True),
        ("auto", ["Sunny <|USER_END|> today", end], False),
        ("auto", ["It is", M("<|USER_END|>"), end], False),
        ("auto", ["Let me look.", *call], True),
        ("auto", ["Hi", *smile, "there", end], True),
        ("auto", ["Hi", *smile[:3], "frown", *smile[4:], end], False),
        ("auto", ["Let me look.", *call[:2], "get_wether", *call[3:]], False),
        ("auto", [*call[:-1], '{"city": 1}', call[-1]], False),
        ("none", ["Let me look.", *call], False),
        ("required", call, True),
        ("required", ["Let me look.", *call], False),
        ("search", call, False),
        ("get_weather", call, True),
    ]
    for choice, pieces, expected in expectations:
        grammar = export_grammar("omni", OMNI_TOOLS, choice, True, syntax)
        assert accepts("omni", grammar, syntax, turn_ids("omni", pieces)) is expected, (
            choice,
            pieces,
        )
    bundle = export_grammar_bundle("omni", OMNI_TOOLS, "get_weather", True, syntax)
    assert bundle["stop"] == ["<|ASSISTANT_END|>", "<|FUNCTION_RETURN|>"]
    assert bundle["forced_prefix"]["required"] == "\n<|FUNCTION_START|>"
    prefix = bundle["forced_prefix"]["functions"]["get_weather"]
    assert prefix == "\n<|FUNCTION_START|>get_weather<|FUNCTION_ARGS|>"
    rest = [GOOD, M("<|FUNCTION_RETURN|>")]
    assert accepts("omni", bundle["grammar_after_prefix"], syntax, turn_ids("omni", rest))
    lazy = export_grammar_bundle("omni", OMNI_TOOLS, "auto", True, syntax)["lazy_grammar"]
    assert accepts("omni", lazy, syntax, turn_ids("omni", call[1:]))


LFM2_ARGUMENTS = [
    # LFM2.5's template: a string argument raw in single quotes, an object as JSON, a list as
    # Python's repr.
    ("get_weather(city='O'Hare')", True),
    ("get_weather(city='C:\\temp', unit='celsius')", True),
    ("get_weather(city='a\nb <|x')", True),
    ("get_weather(city='x'\ny'<b')", True),
    (
        'search(query=\'it\'s\', filters={"lang": "C:\\\\x", "safe": true}, '
        "tags=['a', \"it's\"], score=1e-05)",
        True,
    ),
    ("search(query='q', score=None)", True),
    ('get_weather(city="Paris")', False),  # the template writes ', never "
    ("search(query='q', filters={'lang': 'x'})", False),  # an object is JSON
    ("search(query='q', filters={\"safe\": True})", False),
    ("get_weather(city='a')b')", False),  # a ' the reader would end the string at
    ("get_weather(city='a', b')", False),
    ("get_weather(city='a'')", False),
]


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize(("call", "expected"), LFM2_ARGUMENTS)
def test_lfm2_argument_grammar(syntax: Any, call: str, expected: bool) -> None:
    pieces = [M("<|tool_call_start|>"), f"[{call}]", M("<|tool_call_end|>"), M("<|im_end|>")]
    grammar = export_grammar("lfm2", TOOLS, "auto", True, syntax)
    assert accepts("lfm2", grammar, syntax, turn_ids("lfm2", pieces)) is expected
    if expected:  # and the parser reads what the grammar allows
        (message,) = [pawlette.get_format("lfm2").parse("".join(pieces)).core]
        assert message.tool_calls and not message.content


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_python_call_grammars(syntax: Any) -> None:
    use, answer, eot = M("<|use_tool|>"), M("<|answer|>"), M("<|eot_id|>")
    weather = "get_weather(city='Paris', unit='celsius')"
    breeze_cases = [
        ("auto", [use, f"[{weather}, ping()]", eot], True),
        # breeze writes ' (repr), but its parser reads either quote; a grammar demanding repr's
        # choice traps a model that opens with " (it cannot close without writing a ').
        ("auto", [use, '[get_weather(city="Paris")]', eot], True),
        ("auto", [use, '[get_weather(city="Pa\\"ris")]', eot], True),
        ("auto", [use, "[get_weather(city=\"Paris')]", eot], False),  # quotes that do not match
        ("auto", [use, "[get_weather(unit='celsius')]", eot], False),  # city is required
        ("auto", [use, "[get_weather(city='P', unit='kelvin')]", eot], False),
        ("auto", [use, "[get_wether(city='P')]", eot], False),
        ("auto", [use, "[get_weather(city=1.5)]", eot], False),  # a string
        # Strict by default: a keyword the schema does not declare is refused (see below).
        ("auto", [use, "[search(query='q', limit=2, extra=[1, None])]", eot], False),
        ("auto", [answer, "Sunny", M("<|start_bbox|>"), "[[1, 2, 3, 1000]]"], False),
        (
            "auto",
            [answer, "Sunny", M("<|start_bbox|>"), "[[1, 2, 3, 1000]]", M("<|end_bbox|>"), eot],
            True,
        ),
        ("auto", [answer, "Sunny", M("<|python_tag|>"), eot], False),
        ("none", [use, f"[{weather}]", eot], False),
        ("required", [answer, "Sunny", eot], False),
        ("get_weather", [use, "[ping()]", eot], False),
        ("get_weather", [use, f"[{weather}, {weather}]", eot], True),
    ]
    for choice, pieces, expected in breeze_cases:
        grammar = export_grammar("breeze", TOOLS, choice, True, syntax)
        assert accepts("breeze", grammar, syntax, turn_ids("breeze", pieces)) is expected, pieces
    # JSON Schema's default (strict=False): the undeclared keyword is allowed.
    extra = turn_ids("breeze", [use, "[search(query='q', limit=2, extra=[1, None])]", eot])
    assert accepts(
        "breeze", export_grammar("breeze", TOOLS, "auto", True, syntax, strict=False), syntax, extra
    )
    assert not accepts(
        "breeze",
        export_grammar("breeze", TOOLS, "auto", False, syntax),
        syntax,
        turn_ids("breeze", [use, "[ping(), ping()]", eot]),
    )
    assistant, user, observation = M("<|assistant|>"), M("<|user|>"), M("<|observation|>")
    call = 'get_weather\n```python\ntool_call(city="Paris")\n```'
    chatglm3_cases = [
        ("auto", ["\nSunny today.", user], True),
        # The grammar ends where either stop token may end the turn: which one is the model's.
        ("auto", ["\nSunny today.", observation], True),
        ("auto", ["\nSunny today.", user, "more"], False),
        ("auto", ["\nLet me look.", assistant, call, observation], True),
        ("auto", [call, assistant, call, observation], True),
        ("auto", [call.replace('"Paris"', "'Paris'"), observation], False),  # chatglm3 uses "
        ("auto", [call.replace("get_weather", "get_wether"), observation], False),
        ("auto", ["\nSunny ", M("<|system|>"), user], False),
        # A special token the lexer does not read alone ([gMASK], read only in [gMASK]sop) is
        # still no text: its spelling reached the client as content.  A word-like one (sop)
        # is text, and refusing it would refuse every word holding it.
        ("none", ["\nSunny ", M("[gMASK]"), " today", user], False),
        ("auto", ["\nSunny [gMASK] today", user], False),
        ("none", ["\nsop is a word, and so is isopropyl", user], True),
        ("none", [call, observation], False),
        ("required", ["\nLet me look.", assistant, call, observation], False),
        ("required", [call, observation], True),
    ]
    for choice, pieces, expected in chatglm3_cases:
        grammar = export_grammar("chatglm3", TOOLS, choice, True, syntax)
        assert accepts("chatglm3", grammar, syntax, turn_ids("chatglm3", pieces)) is expected, (
            pieces
        )
    bundle = export_grammar_bundle("breeze", TOOLS, "get_weather", True, syntax)
    assert bundle["forced_prefix"]["functions"]["get_weather"] == "<|use_tool|>[get_weather("
    rest = ["city='Paris')]", eot]
    assert accepts("breeze", bundle["grammar_after_prefix"], syntax, turn_ids("breeze", rest))


# ------------------------------------------------------------------ the bundle


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_pcml_bundle_prefixes_and_lazy_grammar(syntax: Any) -> None:
    bundle = export_grammar_bundle("pcml", TOOLS, "auto", True, syntax)
    assert json.loads(json.dumps(bundle)) == bundle
    assert bundle["stop"] == ["<end>"]
    assert bundle["trigger"] == {"marker": "<call>", "special": True}
    assert bundle["forced_prefix"] == {
        "auto": "",
        "none": "",
        "required": "<call>",
        "functions": {name: '<call>{"id": "' for name in NAMES},
    }
    two = [*weather_call(GOOD), "\n", *weather_call(GOOD, call_id="c2"), END]
    assert accepts("pcml", bundle["lazy_grammar"], syntax, turn_ids("pcml", two))
    assert not accepts("pcml", bundle["lazy_grammar"], syntax, turn_ids("pcml", ["x", END]))
    assert bundle["grammar_after_prefix"] is None

    required = export_grammar_bundle("pcml", TOOLS, "required", False, syntax)
    after = [GOOD.join(['{"id": "c1", "name": "get_weather", "arguments": ', "}"]), CALL_END, END]
    assert accepts("pcml", required["grammar_after_prefix"], syntax, turn_ids("pcml", after))
    assert required["lazy_grammar"] is None

    named = export_grammar_bundle("pcml", TOOLS, "search", True, syntax)
    rest = ['c9", "name": "search", "arguments": {"query": "q"}}', CALL_END, END]
    assert accepts("pcml", named["grammar_after_prefix"], syntax, turn_ids("pcml", rest))
    wrong = ['c9", "name": "get_weather", "arguments": {"city": "q"}}', CALL_END, END]
    assert not accepts("pcml", named["grammar_after_prefix"], syntax, turn_ids("pcml", wrong))


def test_the_trigger_is_special_only_when_markers_are_tokens() -> None:
    tokens = export_grammar_bundle("pcml", TOOLS, "auto", True, "gbnf")
    assert tokens["trigger"] == {"marker": "<call>", "special": True}
    text = export_grammar_bundle("pcml", TOOLS, "auto", True, "gbnf", markers_as_text=True)
    assert text["trigger"] == {"marker": "<call>", "special": False}
    assert '"<call>"' in text["lazy_grammar"]


def test_the_command_line_bundle_spells_markers_as_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    from pawlette.cli import main

    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    arguments = ["export", "grammar", "-f", "pcml", "--tools", str(path), "--bundle"]
    assert main([*arguments, "--syntax", "gbnf", "--markers-as-text"]) == 0
    bundle = json.loads(capsys.readouterr().out)
    assert bundle["trigger"] == {"marker": "<call>", "special": False}
    assert '"<call>"' in bundle["grammar"]
    assert main(arguments) == 0
    assert json.loads(capsys.readouterr().out)["trigger"]["special"] is True


BOUNDED = {
    "type": "function",
    "function": {
        "name": "pick",
        "parameters": {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 0, "maximum": 9},
                "code": {"type": "string", "pattern": "^[A-Z]+$"},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                "ones": {"type": "array", "contains": {"const": 1}},
            },
        },
    },
}
UNENFORCED = ("'minimum'", "'maximum'", "'pattern'", "'uniqueItems'", "'contains'")
TEXT_CLOSED_VALUES = ("deepseek_dsml", "minimax_m2", "muse")
"""Formats whose tag calls close a text value with text (DeepSeek's ``</｜DSML｜parameter>``,
MiniMax-M2's ``</parameter>``, Muse Glimmer's ``</atem:parameter>``): the value is lazy text up
to that close in Lark, so a string's pattern is noted as not enforced."""


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("name", grammar_formats())
def test_notes_describe_the_syntax_exported(name: str, syntax: Any) -> None:
    """JSON arguments are rules from the schema in both syntaxes; in Lark a scalar under a
    keyword llguidance enforces is its %json (which reads it), in GBNF the keyword is
    ignored; Python-call arguments ignore them in both."""
    bundle = export_grammar_bundle(name, [BOUNDED], "auto", True, syntax)
    notes = bundle["notes"]
    header = [line for line in bundle["grammar"].splitlines() if "note:" in line]
    assert len(header) == len(notes)
    if name in WITHOUT_CALLS:  # no calls, so no arguments: nothing left unenforced
        assert notes == []
        return
    python_calls = name in ("chatglm3", "breeze", "gemma4", "lfm2")  # (and Gemma 4's value syntax)
    literal_items = name in ("seed_oss", "minicpm")  # objects and arrays as Python literals
    for keyword in UNENFORCED:
        found = [note for note in notes if keyword in note]
        if python_calls or (literal_items and keyword in ("'uniqueItems'", "'contains'")):
            assert found and all("Lark and GBNF alike" in note for note in found), keyword
        elif literal_items and keyword == "'pattern'":  # a text value ends at a text close
            spelled = {"lark": "Lark", "gbnf": "GBNF"}[syntax]
            assert found and all(note.endswith(f"is not enforced in {spelled}") for note in found)
        elif syntax == "gbnf":
            assert found and all(note.endswith("is not enforced in GBNF") for note in found)
        elif keyword in ("'uniqueItems'", "'contains'"):  # no scalar: the rules ignore them
            assert found and all(note.endswith("is not enforced in Lark") for note in found)
        elif keyword == "'pattern'" and name in TEXT_CLOSED_VALUES:
            # a tag call's text value closed by text runs to its close: the pattern is not held
            assert found and all(note.endswith("is not enforced in Lark") for note in found)
        elif keyword == "'pattern'":  # held by %json (no marker kept out beyond it), or a
            # tag call's text value held to it (glm's: nothing to say)
            assert all("is llguidance's %json of the string alone" in n for n in found)
        else:
            assert not found, found
    assert not any("GBNF" in note and "alike" not in note for note in notes) or syntax == "gbnf"
    if not python_calls:
        assert any("%json" in note for note in notes) is (syntax == "lark")


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_a_tag_calls_string_parameter_is_held_to_its_pattern_in_lark(syntax: Any) -> None:
    """A string parameter of GLM's tag calls is its text: Lark holds it to its pattern,
    GBNF takes any text (and its notes say so)."""
    fmt = pawlette.get_format("glm")
    grammar = export_grammar("glm", [BOUNDED], "auto", True, syntax)
    for code, in_lark in (("AB", True), ("ab", False), ("xAB", False)):
        call = {"name": "pick", "arguments": json.dumps({"code": code})}
        message = {"role": "assistant", "tool_calls": [{"type": "function", "function": call}]}
        request = {"messages": [{"role": "user", "content": "hi"}, message], "tools": [BOUNDED]}
        ids = completion_ids(fmt, request, 1)
        assert accepts("glm", grammar, syntax, ids) is (in_lark or syntax == "gbnf"), code


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_what_the_notes_say_is_what_each_syntax_enforces(syntax: Any) -> None:
    """llguidance enforces the bounds and the pattern (no note in Lark); GBNF does not (noted);
    neither enforces uniqueItems or contains (noted in both)."""
    grammar = export_grammar("pcml", [BOUNDED], "auto", True, syntax)
    cases = [
        ('{"n": 5}', True, True),
        ('{"n": 12}', False, True),
        ('{"n": -1}', False, True),
        ('{"code": "AB"}', True, True),
        ('{"code": "ab"}', False, True),
        ('{"tags": ["a", "a"]}', True, True),
        ('{"ones": [2]}', True, True),
    ]
    for arguments, in_lark, in_gbnf in cases:
        ids = turn_ids("pcml", [*weather_call(arguments, name="pick"), END])
        expected = in_lark if syntax == "lark" else in_gbnf
        assert accepts("pcml", grammar, syntax, ids) is expected, arguments


NO_PARAMETERS = {"type": "function", "function": {"name": "ping"}}


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_a_tool_without_parameters_takes_no_arguments(syntax: Any) -> None:
    """OpenAI: omitting ``parameters`` defines a function with an empty parameter list."""
    tools = [WEATHER, NO_PARAMETERS]
    pcml = export_grammar("pcml", tools, "auto", True, syntax)
    for arguments, expected in [("{}", True), ('{"x": 1}', False), ("{ }", True)]:
        ids = turn_ids("pcml", [*weather_call(arguments, name="ping"), END])
        assert accepts("pcml", pcml, syntax, ids) is expected, arguments
    omni = export_grammar("omni", tools, "required", True, syntax)
    for arguments, expected in [("{}", True), ('{"x": 1}', False)]:
        pieces = ["\n", M("<|FUNCTION_START|>"), "ping", M("<|FUNCTION_ARGS|>"), arguments]
        ids = turn_ids("omni", [*pieces, M("<|FUNCTION_RETURN|>")])
        assert accepts("omni", omni, syntax, ids) is expected, arguments
    use, eot = M("<|use_tool|>"), M("<|eot_id|>")
    breeze = export_grammar("breeze", tools, "required", True, syntax)
    for call, expected in [("ping()", True), ("ping(x=1)", False)]:
        ids = turn_ids("breeze", [use, f"[{call}]", eot])
        assert accepts("breeze", breeze, syntax, ids) is expected, call
    chatglm3 = export_grammar("chatglm3", tools, "required", True, syntax)
    for call, expected in [("tool_call()", True), ("tool_call(x=1)", False)]:
        body = f"ping\n```python\n{call}\n```"
        ids = turn_ids("chatglm3", [body, M("<|observation|>")])
        assert accepts("chatglm3", chatglm3, syntax, ids) is expected, call


def test_bad_requests() -> None:
    with pytest.raises(RequestError, match=r"^tool_choice: found 'nope', neither a mode nor"):
        export_grammar("pcml", TOOLS, "nope")
    with pytest.raises(RequestError, match="required"):
        export_grammar("pcml", [], "required")
    with pytest.raises(RequestError, match="syntax"):
        export_grammar("pcml", TOOLS, syntax="ebnf")  # type: ignore[arg-type]
    with pytest.raises(UnsupportedFeature):
        export_grammar("pcml", [{"type": "action", "action": {"name": "wave"}}], "auto")
    for name in pawlette.formats():
        if name not in grammar_formats():
            with pytest.raises(UnsupportedFeature):
                export_grammar(name, TOOLS)


def test_token_ids_and_text_spelling() -> None:
    ids = {marker: 1000 + number for number, marker in enumerate(["<call>", "</call>", "<end>"])}
    lark = export_grammar("pcml", TOOLS, token_ids=ids)
    assert "<[1000]>" in lark and "<[1001]>" in lark and "<think>" in lark
    assert "<[1002]>" not in lark  # the stop marker is the engine's, never the grammar's
    text = export_grammar("pcml", TOOLS, syntax="gbnf", markers_as_text=True)
    root = next(line for line in text.splitlines() if line.startswith("root ::="))
    assert " <think>" not in root and '"<think>"' in text


# ------------------------------------------------------------------ text terminals vs the lexer


def text_grammar(language: TextLanguage, syntax: str, variant: str) -> str:
    rules = Rules()
    rules.add("start", seq(optional(text_terminal("TEXT", variant)), MarkerNode("</call>")))
    define(language, rules)
    spelling = MarkerSpelling()
    return to_lark(rules, [], spelling) if syntax == "lark" else to_gbnf(rules, [], spelling)


@pytest.mark.parametrize("variant", ["NE", "ANY_NE"], ids=["before-marker", "before-text"])
@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("escape", [True, False], ids=["escaping", "plain"])
@settings(max_examples=100)
@given(data=st.data())
def test_text_terminal_is_what_the_lexer_reads_as_text(
    syntax: str, escape: bool, variant: str, data: st.DataObject
) -> None:
    fmt = pawlette.get_format("pcml")
    language = TextLanguage(TextLanguage.of(fmt).markers, escape)
    text = data.draw(tricky("pcml"))
    grammar = text_grammar(language, syntax, variant)
    ids = [*encode_text("pcml", text), tokenizer("pcml").token_to_id("</call>")]
    expected = reads_as_text(language, text, before_marker=variant == "NE")
    assert accepts("pcml", grammar, syntax, ids) is expected, repr(text)


# ------------------------------------------------------------------ GBNF syntax


@pytest.mark.parametrize("choice", ["auto", "none", "required", "search"])
def test_gbnf_parses_as_llama_cpp_reads_it(choice: str) -> None:
    text = export_grammar("pcml", TOOLS, choice, True, "gbnf")
    grammar = gbnf.parse(text, pawlette.get_format("pcml").special_markers)
    assert "root" in grammar.rules


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ('root ::= "a" b', "Undefined rule"),
        ("root ::= [a-", "end of input"),
        ('root ::= "\\q"', "unknown escape"),
        ('root ::= * "a"', "preceding item"),
        ("root ::= <nope>", "invalid token"),
        ('rot ::= "a"', "root"),
        ('root ::= "a"\n  "b"', "expecting name"),
    ],
)
def test_gbnf_checker_rejects_what_llama_cpp_rejects(source: str, problem: str) -> None:
    with pytest.raises(gbnf.GbnfError, match=problem):
        gbnf.parse(source, ["<end>"])


def test_terminal_names_are_stable() -> None:
    assert isinstance(text_terminal("TEXT", "NE"), Terminal)


# ------------------------------------------------------------------ recursive schemas

LINKED = {
    "type": "function",
    "function": {
        "name": "walk",
        "parameters": {
            "$defs": SCHEMAS["refs"]["$defs"],  # a linked list node, referring to itself
            "type": "object",
            "properties": {"head": {"$ref": "#/$defs/node"}},
            "required": ["head"],
        },
    },
}


def walk_turn(head: Any) -> dict[str, Any]:
    arguments = json.dumps({"head": head})
    call = {
        "id": "callid001",
        "type": "function",
        "function": {"name": "walk", "arguments": arguments},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def reasoning_close(fmt: Format) -> tuple[Any, ...]:
    """What a format whose prompt opens the reasoning block (MiniMax-M2) writes before a turn
    the writer renders without reasoning: the block's close (a forced call closes an empty
    block); nothing for other formats."""
    from ..declare.conversations import prompt_opens_reasoning

    layout = layout_of(fmt)
    if not prompt_opens_reasoning(layout):
        return ()
    return tuple(layout.concept(declare.Reasoning).close)


def reasoning_close_ids(fmt: Format) -> list[int]:
    """:func:`reasoning_close` as ids: markers by id, text as text."""
    ids: list[int] = []
    for piece in reasoning_close(fmt):
        encode = encode_special if isinstance(piece, declare.Marker) else encode_text
        ids += encode(fmt.name, piece.text)
    return ids


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("name", grammar_formats())
def test_a_recursive_schema_under_every_tool_choice(name: str, syntax: str) -> None:
    """A ``$ref`` schema's rules are defined once per grammar, however many places call the
    tool (the first call, parallel calls, a named choice); nested values are checked."""
    fmt = pawlette.get_format(name)
    if name in WITHOUT_CALLS:  # no calls: no schema to check, a forced call is refused
        for forced in ("required", {"type": "function", "function": {"name": "walk"}}):
            with pytest.raises(RequestError, match=r"^tool_choice: .* has no tool calls"):
                export_grammar(name, [LINKED], forced, True, syntax)  # type: ignore[arg-type]
        assert "walk" not in export_grammar(name, [LINKED], "auto", True, syntax)  # type: ignore[arg-type]
        return
    good = walk_turn({"v": 1, "next": {"v": 2, "next": {"v": 3}}})
    bad = walk_turn({"v": 1, "next": {"v": "two"}})
    # chatglm3's turn ends with the next role token, which the model writes.
    following = (
        [{"role": "tool", "tool_call_id": "callid001", "content": "r"}]
        if name == "chatglm3"
        else []
    )
    for choice in ("auto", "required", {"type": "function", "function": {"name": "walk"}}):
        for parallel in (True, False):
            grammar = export_grammar(name, [LINKED], choice, parallel, syntax)  # type: ignore[arg-type]
            for turn, expected in ((good, True), (bad, False)):
                request = {
                    "messages": [{"role": "user", "content": "go"}, turn, *following],
                    "tools": [LINKED],
                }
                ids = reasoning_close_ids(fmt) + completion_ids(fmt, request, 1)
                assert accepts(name, grammar, syntax, ids) is expected, (choice, parallel)


def test_a_huge_tool_choice_name_is_quoted_short_in_the_error() -> None:
    # the error names the value, it does not repeat a megabyte of it
    choice = {"type": "function", "function": {"name": "g" * 1_000_000}}
    with pytest.raises(RequestError, match="is not a declared tool") as raised:
        export_grammar("pcml", [], choice)
    assert len(str(raised.value)) < 500


def test_a_misspelt_tool_choice_mode_lists_the_modes_and_the_tools() -> None:
    """A bare name is a mode or a tool's name: one that is neither lists both kinds."""
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    for export in (export_grammar, export_grammar_bundle):
        with pytest.raises(RequestError) as raised:
            export("pcml", tools, "requird")
        assert str(raised.value) == (
            "tool_choice: found 'requird', neither a mode nor a declared tool; expected "
            "'auto', 'none', 'required', or a declared tool's name: one of 'get_weather'"
        )
    with pytest.raises(RequestError) as raised:
        export_grammar("pcml", [], "requird")
    assert str(raised.value).endswith("a declared tool's name (no tools are declared)")
    named = {"type": "function", "function": {"name": "get_wether"}}
    with pytest.raises(RequestError) as raised:
        export_grammar("pcml", tools, named)
    assert str(raised.value) == (
        "tool_choice.function.name: 'get_wether' is not a declared tool; expected one of "
        "'get_weather'"
    )


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
@pytest.mark.parametrize(
    ("format_name", "function", "path", "found"),
    [
        ("breeze", {"name": "mark-er"}, "tools[0].function.name", "'mark-er'"),
        ("breeze", {"name": "pick.unit"}, "tools[0].function.name", "'pick.unit'"),
        (
            "breeze",
            {"name": "f", "parameters": {"type": "object", "properties": {"<|eot_id|>x": {}}}},
            "tools[0].parameters.properties",
            "'<|eot_id|>x'",
        ),
        (
            "chatglm3",
            {"name": "f", "parameters": {"type": "object", "properties": {'城市 "q"': {}}}},
            "tools[0].parameters.properties",
            "'城市 \"q\"'",
        ),
        (
            "chatglm3",
            {"name": "f", "parameters": {"type": "object", "properties": {"class": {}}}},
            "tools[0].parameters.properties",
            "'class'",
        ),
    ],
)
def test_python_call_grammars_refuse_names_they_cannot_write(
    format_name: str, function: dict[str, Any], path: str, found: str, syntax: Syntax
) -> None:
    """A Python-call grammar never writes a non-identifier (or a marker) as a function or
    argument name, under any tool choice: it refuses, naming the tool's field (under
    ``required`` it named ``tool_choice.function.name`` before)."""
    tools = [{"type": "function", "function": function}]
    for choice in ("required", "auto", function["name"]):
        with pytest.raises(UnsupportedFeature) as caught:
            export_grammar(format_name, tools, choice, True, syntax)
        assert caught.value.path == path and caught.value.found.endswith(found)
        assert caught.value.expected == "a Python identifier that is not a keyword"
    fine = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    assert "f(" in export_grammar("breeze", fine, "required", True, syntax)


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_text_trimmed_to_nothing_before_calls_is_accepted(syntax: str) -> None:
    """Qwen3 writes a text of newlines after its reasoning as nothing, yet keeps the newline
    that separates a text from the calls: ``</think>\\n\\n\\n<tool_call>``."""
    fmt = pawlette.get_format("chatml")
    tools = TURNS["chatml"][0]
    call = {"id": "call_0", "type": "function"}
    call["function"] = {"name": "get_weather", "arguments": '{"city": ""}'}  # type: ignore[assignment]
    message = {"role": "assistant", "content": "\n", "tool_calls": [call]}
    request = {"messages": [{"role": "user", "content": "hi"}, message], "tools": tools}
    assert "</think>\n\n\n<tool_call>" in fmt.render(request).text
    ids = completion_ids(fmt, request, 1)
    grammar = export_grammar("chatml", tools, "auto", True, syntax)
    assert accepts("chatml", grammar, syntax, ids)


CITY_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
JSON_ARGUMENT_FORMATS = ["chatml", "harmony", "hermes", "llama3", "mistral"]


@pytest.mark.parametrize("syntax", SYNTAXES)
@pytest.mark.parametrize("name", JSON_ARGUMENT_FORMATS)
def test_a_json_argument_spells_no_marker_as_text(name: str, syntax: Any) -> None:
    """A forced call's JSON string argument may not hold a marker's text, written by ordinary
    tokens: the format's parser would read it as structure.  llguidance's ``%json``, which
    the Lark once used for arguments, took it (harmony's ``<|call|>`` inside ``"city"``)."""
    fmt = pawlette.get_format(name)
    grammar = export_grammar(name, [CITY_TOOL], "required", True, syntax)

    def turn(city: str) -> list[int]:
        call = {
            "id": "call00001",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        request = {"messages": [{"role": "user", "content": "hi"}, message], "tools": [CITY_TOOL]}
        return completion_ids(fmt, request, 1)

    assert accepts(name, grammar, syntax, turn("Paris"))
    for marker in sorted(m for m in fmt.grammar.markers if '"' not in m and "\\" not in m):
        if "\n" in marker:
            continue
        assert not accepts(name, grammar, syntax, turn(f"Pa{marker}ris")), marker


# ------------------------------------------------------------------ markers as llama.cpp has them

LLAMA_CPP_TEXT = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")
"""The markers llama.cpp gives the user-defined attribute in every vocabulary it loads."""


@cache
def llama_cpp_view() -> tuple[Tokenizer, Any]:
    """harmony's markers as llama.cpp's llguidance sees them: :data:`LLAMA_CPP_TEXT` are
    ordinary tokens (their text), the other markers special ones.  The tokenizer encodes text
    with every marker spelled as text; the LLTokenizer is llguidance's view."""
    others = [m for m in pawlette.get_format("harmony").special_markers if m not in LLAMA_CPP_TEXT]
    shared = small_tokenizer((*LLAMA_CPP_TEXT, *others, EOS))
    document = json.loads(shared.to_str())
    for token in document["added_tokens"]:
        if token["content"] in LLAMA_CPP_TEXT:
            document["model"]["vocab"][token["content"]] = token["id"]
    document["added_tokens"] = [
        token for token in document["added_tokens"] if token["content"] not in LLAMA_CPP_TEXT
    ]
    text = Tokenizer.from_str(shared.to_str())
    text.encode_special_tokens = True
    return text, llguidance.LLTokenizer(json.dumps(document), eos_token=text.token_to_id(EOS))


def llama_cpp_turn(city: str, marker_in_city: str = "") -> list[int]:
    """A call to ``get_weather`` as the model writes it, in :func:`llama_cpp_view`'s ids, its
    stop marker left out; ``marker_in_city``: that marker's one token after ``city``."""
    text, _ = llama_cpp_view()
    fmt = pawlette.get_format("harmony")
    place = "\N{SNOWMAN}"  # where the marker's token goes
    arguments = json.dumps({"city": city + (place if marker_in_city else "")}, ensure_ascii=False)
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    request = {"messages": [{"role": "user", "content": "hi"}, message], "tools": [CITY_TOOL]}
    ids: list[int] = []
    for segment in fmt.render(request).segments:
        if segment.message_index != 1 or not segment.trainable:
            continue
        if segment.special:
            ids.append(text.token_to_id(segment.text))
            continue
        before, found, after = segment.text.partition(place)
        ids += text.encode(before, add_special_tokens=False).ids
        if found:
            ids.append(text.token_to_id(marker_in_city))
            ids += text.encode(after, add_special_tokens=False).ids
    assert ids[-1] == text.token_to_id("<|call|>")
    return ids[:-1]


def test_harmony_lark_with_llama_cpp_text_markers() -> None:
    """llama.cpp's llguidance has no special token ``<|channel|>``: a Lark grammar naming one
    is refused (llama.cpp then samples with no grammar).  Written as text (``text_markers``,
    what ``pawlette serve --engine llamacpp`` does without ``--tokenizer``) the grammar is
    read, takes the call, and still refuses those markers inside an argument, by their token
    or by pieces of text; the other markers stay special tokens."""
    _, vocabulary = llama_cpp_view()

    def matcher(grammar: str) -> Any:
        return llguidance.LLMatcher(
            vocabulary, llguidance.LLMatcher.grammar_from_lark(grammar), log_level=0
        )

    named = matcher(export_grammar_of("harmony", [CITY_TOOL], "required"))
    assert named.is_error() and 'unknown special token: "<|' in named.get_error()
    grammar = export_grammar_of("harmony", [CITY_TOOL], "required", text_markers=LLAMA_CPP_TEXT)
    assert '"<|channel|>"' in grammar and '"<|call|>"' not in grammar
    fresh = matcher(grammar)
    assert not fresh.is_error(), fresh.get_error()

    def accepted(ids: list[int]) -> bool:
        copy = fresh.deep_copy()
        return bool(copy.consume_tokens(ids) and copy.is_accepting())

    assert accepted(llama_cpp_turn("Paris"))
    for marker in LLAMA_CPP_TEXT:
        assert not accepted(llama_cpp_turn("Pa", marker)), marker  # the marker's token
        assert not accepted(llama_cpp_turn(f"Pa{marker}ris")), marker  # its text in pieces


def test_no_reasoning_block_closes_on_a_stop_marker() -> None:
    """An engine ends the turn at a stop marker, so a reasoning block whose close holds one
    could be followed by no answer; the turn grammars leave such a block out (the bundle
    reports none)."""
    for name in grammar_formats():
        fmt = pawlette.get_format(name)
        for choice in ("auto", "none"):
            bundle = export_grammar_bundle_of(name, TOOLS, choice, markers_as_text=True)
            if bundle["reasoning"] is None:
                continue
            close = bundle["reasoning"]["close"]
            assert not [marker for marker in fmt.stop_markers if marker in close], (name, close)


@pytest.mark.parametrize("syntax", SYNTAXES)
def test_solar_grammar_takes_reasoning_then_the_answer(syntax: Any) -> None:
    """Solar Open's reasoning closes with ``<|end|><|begin|>assistant``, and ``<|end|>`` is
    none of its engines' stops (llama.cpp drops it from the end-of-generation tokens, the
    generation config stops on ``<|flush|>``, ``<|calls|>`` and ``<|endoftext|>``): under
    ``none`` the grammar takes a reasoning block and the answer after it, which ends where
    the engine stops."""
    grammar = export_grammar_of("solar", TOOLS, "none", syntax=syntax)

    def ids(text: str) -> list[int]:
        return list(tokenizer("solar").encode(text, add_special_tokens=False).ids)

    assert accepts("solar", grammar, syntax, ids("<|content|>Hi"))
    thought = "<|think|>Hm<|end|><|begin|>assistant<|content|>Hi"
    assert accepts("solar", grammar, syntax, ids(thought))
    assert accepts("solar", grammar, syntax, ids(thought + "<|flush|>"))
    assert not accepts("solar", grammar, syntax, ids("<|think|>Hm<|end|>"))
