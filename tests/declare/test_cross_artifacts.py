"""Cross-artifact checks generated for every declared format, a user-registered one included.

From the declaration alone (conversations drawn by :mod:`.conversations`), for each format:

- its render equals its exported Jinja template under transformers, text and
  ``{% generation %}`` mask;
- parsing the render gives the conversation back (normalised as the layout writes it);
- a completion parsed whole equals it parsed in random pieces of text, and from token ids
  (markers by id) fed in random pieces through :class:`~pawlette.tokenization.ids.IdParser`;
- the turn grammar (Lark under llguidance, and GBNF turned into Lark by the test translator)
  accepts every assistant turn the writer produces, under every tool choice that allows it;
- the grammar rejects near misses of those turns: garbage after the arguments, a wrong name,
  a marker out of place, a missing end;
- what a random model constrained by the grammar writes parses back, from ids, to valid calls
  of the declared tools (and to no warning).
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette import declare
from pawlette.declare import PythonCalls
from pawlette.errors import ParseError, UnsupportedFeature
from pawlette.export import export_jinja
from pawlette.export.jinja import template_inputs
from pawlette.format import Format
from pawlette.formats.chatglm3.calls import FencedCalls
from pawlette.formats.omni.blocks import BlockTurns
from pawlette.tokenization.ids import IdParser

from ..export import gbnf
from ..export.support import _result_value as result_value
from ..export.support import merged, trainable_spans
from ..helpers import (
    canonical,
    feed_in_pieces,
    folded,
    model_prompt,
    random_sizes,
    sequential_ids,
)
from ..support import sampling
from ..support.kept_grammars import kept_grammar
from . import (
    decision_format,
    parts_format,
    python_format,
    registering,
    user_blocks,
    user_blocks_lean,
    user_concepts,
    user_containers,
    user_format,
)
from .conversations import (
    TOOLS,
    as_completion,
    as_the_model_writes,
    call_id,
    call_rules,
    conversations,
    has_tools,
    layout_of,
    normalise,
    prompt_opens_reasoning,
    reasoning_rules,
    writes_call_ids,
)
from .tokens import accepts, marker_ids, random_walk, segment_ids, tokenizer

DECLARED = [
    name for name in pawlette.formats() if pawlette.get_format(name).declaration is not None
]
USER_FORMATS = {
    module.LAYOUT.name: module
    for module in (
        user_format,
        python_format,
        decision_format,
        parts_format,
        user_containers,
        user_blocks,
        user_blocks_lean,
    )
}
CONCEPT_FORMATS = {layout.name: layout for layout in user_concepts.LAYOUTS}
FORMATS = [*DECLARED, *USER_FORMATS, *CONCEPT_FORMATS]
SAMPLED = pytest.mark.sampled(parameter="fmt", always=(*USER_FORMATS, *CONCEPT_FORMATS))
"""The heaviest checks run on a drawn share of the shipped formats (their goldens and
tests/export check every one of them), and always on the formats declared here: each holds
concepts or combinations no shipped format has."""


@pytest.fixture(scope="module", params=FORMATS)
def fmt(request: pytest.FixtureRequest) -> Iterator[Format]:
    layout = CONCEPT_FORMATS.get(request.param)
    module = USER_FORMATS.get(request.param)
    if layout is not None:
        with registering.registered(layout):
            yield pawlette.get_format(request.param)
    elif module is not None:
        with module.registered():
            yield pawlette.get_format(request.param)  # by name, as every user of it would
    else:
        yield pawlette.get_format(request.param)


def export_grammar(fmt: Format | str, *arguments: Any) -> str:
    """The format's grammar, its markers spelled by id where their text cannot be (built once
    per format object and arguments in a test process)."""
    resolved = pawlette.get_format(fmt) if isinstance(fmt, str) else fmt
    return kept_grammar(resolved, *arguments, token_ids=marker_ids(resolved.name))


def test_the_shipped_declarations_are_checked() -> None:
    assert {"chatml", "llama3", "chatglm3", "pcml"} <= set(DECLARED)


# ------------------------------------------------------------------ render and Jinja


def template_request(fmt: Format, request: dict[str, Any]) -> list[dict[str, Any]]:
    """Messages as Hugging Face callers pass them: no None values, arguments as objects
    (unless the format writes them verbatim: then as the string)."""
    objects = template_inputs(fmt).object_arguments
    parsed_results = template_inputs(fmt).parsed_tool_results
    messages = []
    for message in request["messages"]:
        message = {key: value for key, value in message.items() if value is not None}
        if parsed_results and message["role"] == "tool":
            message["content"] = result_value(message.get("content"))
        if objects and message.get("tool_calls"):
            message["tool_calls"] = [
                {
                    **call,
                    "function": {
                        **call["function"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    },
                }
                for call in message["tool_calls"]
            ]
        messages.append(message)
    return messages


def jinja_render(
    fmt: Format, request: dict[str, Any], prompt: bool
) -> tuple[str, list[tuple[int, int]]]:
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, spans = render_jinja_template(
        [template_request(fmt, request)],
        tools=request.get("tools") or None,
        chat_template=export_jinja(fmt.name),
        add_generation_prompt=prompt,
        return_assistant_tokens_mask=True,
    )
    return rendered[0], [tuple(span) for span in spans[0]]


def undecidable(content: Any) -> bool:
    """A result given as text that starts like a JSON object or array but is none."""
    if not isinstance(content, str) or content.strip(" \t\n\r")[:1] not in ("{", "["):
        return False
    try:
        json.loads(content)
    except ValueError:
        return True
    return False


@SAMPLED
@settings(max_examples=30)
@given(data=st.data())
def test_render_equals_the_exported_template(fmt: Format, data: st.DataObject) -> None:
    request = data.draw(conversations(fmt))
    if template_inputs(fmt).parsed_tool_results and any(
        message["role"] == "tool" and undecidable(message["content"])
        for message in request["messages"]
    ):
        # Documented (TemplateInputs): such a template cannot parse JSON, so it refuses a
        # result that may be JSON text ("[" given as text) rather than guess.
        from jinja2.exceptions import TemplateError

        with pytest.raises(TemplateError, match="a tool result that may be JSON text"):
            jinja_render(fmt, request, False)
        return
    for prompt in (False, True):
        rendering = fmt.render(request, add_generation_prompt=prompt)
        text, spans = jinja_render(fmt, request, prompt)
        assert text == rendering.text
        assert merged(spans) == trainable_spans(rendering)


def test_render_equals_the_exported_template_before_any_turn(fmt: Format) -> None:
    """A conversation of a system message alone, or of nothing, with and without tools and
    the generation prompt: what a template writes after its last message (a tools block
    placed after the system turn, the prompt's turn) is found with no message after it."""
    compared = 0
    tools = [TOOLS[0]] if has_tools(layout_of(fmt)) else []
    for messages in ([], [{"role": "system", "content": "Be brief."}]):
        for request in ({"messages": messages}, {"messages": messages, "tools": tools}):
            for prompt in (False, True):
                try:
                    rendering = fmt.render(request, add_generation_prompt=prompt)
                except pawlette.PawletteError:
                    continue  # (what the format refuses; the template may write it)
                text, spans = jinja_render(fmt, request, prompt)
                assert text == rendering.text, (request, prompt)
                assert merged(spans) == trainable_spans(rendering)
                compared += 1
    assert compared


def test_a_variant_made_with_replace_exports_by_value(fmt: Format) -> None:
    import dataclasses

    variant = dataclasses.replace(fmt, summary="a variant")
    assert hash(variant) != hash(fmt) or variant != fmt
    assert export_jinja(variant) == export_jinja(fmt)
    choice = "auto" if call_rules(layout_of(fmt)) is None else "required"  # (no calls: refused)
    assert export_grammar(variant, TOOLS, choice) == export_grammar(fmt.name, TOOLS, choice)


# ------------------------------------------------------------------ parsing


def deep(fmt: Format, full: int) -> Any:
    """Hypothesis settings for a deep check (tests/support/sampling.py): ``full`` examples on
    the formats declared here and the shipped formats this run draws for the check, a few on
    the other shipped ones.  (The format is a fixture, so the check's examples are drawn by an
    inner function that these settings decorate.)"""
    if fmt.name not in DECLARED:
        return settings(max_examples=full)
    return settings(max_examples=sampling.examples(fmt.name, DECLARED, full))


@pytest.mark.deep
def test_parsing_the_render_gives_the_conversation(fmt: Format) -> None:
    @deep(fmt, 40)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        request = data.draw(conversations(fmt))
        parsed = fmt.parse_conversation(fmt.render(request).text, strict=True)
        assert canonical(parsed.to_request()) == canonical(normalise(fmt, request))

    check()


def last_assistant(request: dict[str, Any]) -> int:
    return max(i for i, m in enumerate(request["messages"]) if m["role"] == "assistant")


def completion(fmt: Format, request: dict[str, Any]) -> tuple[str, Any, int]:
    """The text the model wrote for the last assistant message, checked to follow the
    prompt render (the prompt is a prefix of the training render), and its prompt length."""
    index = last_assistant(request)
    messages = request["messages"][: index + 1]
    tools = request.get("tools")
    full = fmt.render(messages, tools)
    prompt = model_prompt(fmt, messages[:index], tools, full.text)
    assert full.text.startswith(prompt)
    return full.text[len(prompt) :], full, len(prompt)


def has_assistant(request: dict[str, Any]) -> bool:
    return any(m["role"] == "assistant" for m in request["messages"])


@pytest.mark.deep
def test_streaming_text_and_ids_equals_whole(fmt: Format) -> None:
    @deep(fmt, 40)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        request = data.draw(conversations(fmt).filter(has_assistant))
        text, full, start = completion(fmt, request)
        prompt = full.text[:start]
        whole = folded(
            fmt, feed_in_pieces(fmt, text, [len(text) or 1], conversation=False, prompt=prompt)
        )
        assert not whole[2], whole
        seed = data.draw(st.integers(0, 10_000))
        pieces = feed_in_pieces(fmt, text, random_sizes(seed), conversation=False, prompt=prompt)
        assert folded(fmt, pieces) == whole
        ids = segment_ids(fmt.name, full, start=start)
        generator = random.Random(seed)
        parser = IdParser(fmt, tokenizer(fmt.name), id_factory=sequential_ids(), prompt=prompt)
        events = []
        position = 0
        while position < len(ids):
            size = generator.choice([1, 1, 2, 3, 7])
            events += parser.feed_ids(ids[position : position + size])
            position += size
        events += parser.finish()
        assert folded(fmt, events) == whole
        index = last_assistant(request)
        through = {**request, "messages": request["messages"][: index + 1]}
        expected = as_completion(fmt, normalise(fmt, through)["messages"][index])
        # With the request's tools, as a server parses: formats that type call values by the
        # tools' schemas read "0" for a string parameter as the string it was.
        message = fmt.parse(
            text, id_factory=sequential_ids(), prompt=prompt, tools=request.get("tools")
        ).message
        if not writes_call_ids(fmt):  # generated in order, from the completion's own count
            calls = expected.get("tool_calls") or []
            ids_in_order = {c["id"]: f"call_{n}" for n, c in enumerate(calls)}
            for call in calls:
                call["id"] = ids_in_order[call["id"]]
        assert canonical({"messages": [message]}) == canonical({"messages": [expected]})

    check()


# ------------------------------------------------------------------ grammars


def test_forced_prefixes_have_one_source(fmt: Format) -> None:
    """The format's forced prefixes are the grammar bundle's, for several tools and for one,
    and each is where the writer's turn calling the function begins."""
    from pawlette.export import export_grammar_bundle

    if call_rules(layout_of(fmt)) is None:  # no calls (Gemma 2): a forced call is refused
        for choice in ("required", "now"):
            with pytest.raises(UnsupportedFeature, match=r"^tool_choice: .* has no tool calls"):
                export_grammar_bundle(fmt.name, TOOLS, choice)
        assert export_grammar_bundle(fmt.name, TOOLS, "auto")["forced_prefix"]["functions"] == {}
        assert not fmt.forced_prefix("required", TOOLS)
        return
    for tools in (TOOLS, TOOLS[1:]):
        call = {
            "id": call_id(layout_of(fmt), 0),
            "type": "function",
            "function": {"name": "now", "arguments": "{}"},
        }
        request = {
            "messages": [
                {"role": "user", "content": "What time is it?"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
            ],
            "tools": tools,
        }
        written, _, _ = completion(as_the_model_writes(fmt), request)
        if prompt_opens_reasoning(layout_of(fmt)):  # a forced call closes an empty block
            reasoning = layout_of(fmt).concept(declare.Reasoning)
            written = "".join(piece.text for piece in reasoning.close) + written
        for choice in ("required", {"type": "function", "function": {"name": "now"}}):
            bundle = export_grammar_bundle(fmt.name, tools, choice, token_ids=marker_ids(fmt.name))
            prefixes = bundle["forced_prefix"]
            assert written.startswith(prefixes["required"])
            assert written.startswith(prefixes["functions"]["now"])
            assert fmt.forced_prefix("required", tools) == prefixes["required"]
            assert fmt.forced_prefix(choice, tools) in (
                prefixes["required"],
                prefixes["functions"]["now"],
            )
            assert bundle["stop"] == list(fmt.stop)


def choices(message: dict[str, Any]) -> list[tuple[Any, bool]]:
    calls = message.get("tool_calls") or []
    if not calls:
        return [("auto", True), ("none", True), ("auto", False)]
    result: list[tuple[Any, bool]] = [("auto", True)]
    if message.get("content"):
        return result  # a forced call leaves no room for text before it
    if message.get("reasoning_content") is not None:
        return result  # nor for reasoning (a forced choice turns it off: pawlette.export.forced)
    result.append(("required", True))
    names = {call["function"]["name"] for call in calls}
    if len(names) == 1:
        name = names.pop()
        result.append(({"type": "function", "function": {"name": name}}, True))
    if len(calls) == 1:
        result.append(("required", False))
    return result


def turn_ids(fmt: Format, request: dict[str, Any]) -> list[int]:
    index = last_assistant(request)
    rendering = as_the_model_writes(fmt).render(
        request["messages"][: index + 1], request.get("tools")
    )
    return segment_ids(fmt.name, rendering, trainable_from=index)


def as_lark(fmt: Format, grammar: str, syntax: str) -> str:
    if syntax == "gbnf":
        return _gbnf_as_lark(grammar, frozenset(fmt.special_markers))
    return grammar


@functools.cache
def _gbnf_as_lark(grammar: str, markers: frozenset[str]) -> str:
    """A GBNF grammar in Lark, once per grammar (a big one takes a quarter of a second)."""
    return gbnf.to_lark(gbnf.parse(grammar, markers))


@SAMPLED
@pytest.mark.parametrize("syntax", ["lark", "gbnf"])
@settings(max_examples=25)
@given(data=st.data())
def test_the_grammar_accepts_every_written_turn(
    fmt: Format, syntax: str, data: st.DataObject
) -> None:
    request = data.draw(conversations(fmt).filter(has_assistant))
    request["tools"] = TOOLS if has_tools(layout_of(fmt)) else []  # type: ignore[arg-type]
    message = request["messages"][last_assistant(request)]
    ids = turn_ids(fmt, request)
    for choice, parallel in choices(message):
        grammar = export_grammar(fmt.name, request["tools"], choice, parallel, syntax)
        assert accepts(fmt.name, as_lark(fmt, grammar, syntax), ids), (choice, parallel)


def near_misses(fmt: Format, text: str) -> list[str]:
    """Mutations of a written turn that the format's parser would not read as that turn."""
    layout = layout_of(fmt)
    assert layout is not None
    misses = []
    if '"get_weather"' in text:
        misses.append(text.replace('"get_weather"', '"get_wether"', 1))
        misses.append(text.replace('"get_weather"', '"get_weather" ', 1))
    elif "get_weather" in text and "get_weather(" not in text:  # a name outside the JSON
        misses.append(text.replace("get_weather", "get_wether", 1))
        misses.append(text.replace("get_weather", "get_weatherx", 1))
    if '{"city"' in text and '"arguments": {' not in text and '"parameters": {' not in text:
        start = text.index('{"city"')
        _, position = json.JSONDecoder().raw_decode(text, start)
        misses.append(text[:position] + " garbage" + text[position:])
        misses.append(text[:position] + "}" + text[position:])
    if "call:get_weather{city:" in text:  # Gemma 4's value syntax
        misses.append(text.replace("{city:", "{cty:", 1))
        misses.append(text.replace("}<tool_call|>", "}}<tool_call|>", 1))
    if "<parameter=city>" in text:  # a tag per parameter
        misses.append(text.replace("<parameter=city>", "<parameter=cty>", 1))
        misses.append(text.replace("</parameter>", "</parameter></parameter>", 1))
    if "<arg_key>city</arg_key>" in text:  # a tag pair per argument (GLM)
        misses.append(text.replace("<arg_key>city</arg_key>", "<arg_key>cty</arg_key>", 1))
        misses.append(text.replace("</arg_value>", "</arg_value></arg_value>", 1))
    key = "<arg_key:opensource>city</arg_key:opensource>"
    if key in text:  # Hunyuan 3's suffixed tag pair
        misses.append(text.replace(key, key.replace(">city<", ">cty<"), 1))
        value_end = "</arg_value:opensource>"
        misses.append(text.replace(value_end, value_end + value_end, 1))
    for key in ('"arguments": {', '"parameters": {'):
        if key in text:
            start = text.index(key) + len(key) - 1
            _, position = json.JSONDecoder().raw_decode(text, start)
            misses.append(text[:position] + " garbage" + text[position:])
            misses.append(text[:position] + "}" + text[position:])
    if "get_weather(" in text:  # Python calls
        misses.append(text.replace("get_weather(", "get_wether(", 1))
        misses.append(text.replace("get_weather(", "get_weather (", 1))
    # The end of a Python call list (the last ")]" of a turn that holds one; text such as
    # reasoning may spell ")]" too, and mutating it there is no miss).
    cut = text.rfind(")]")
    python = isinstance(layout, declare.Layout) and layout.concept(PythonCalls)
    if python and re.search(r"\[(get_weather|now)\(", text):
        misses.append(text[:cut] + ") garbage]" + text[cut + 2 :])
        misses.append(text[:cut] + "))]" + text[cut + 2 :])
    end = fmt.stop[0]
    # (the turn without its stop is no miss: the grammar ends where the engine's stop takes over)
    misses.append(text.replace(end, end + end))
    misses.append(end + text)
    reasoning = reasoning_rules(layout)
    if reasoning is not None:
        misses.append(text.replace(end, reasoning.open + end))
    headed = layout.concept(FencedCalls) if isinstance(layout, declare.Layout) else None
    if headed is not None:  # calls as turns: NAME\n```python\ntool_call(k=v)\n```
        head = headed.head("get_weather")
        misses.append(text.replace(head, headed.head("get_wether"), 1))
        assistant = "".join(p.text for p in layout.frames["assistant"].open if hasattr(p, "text"))
        misses.append(text.replace(head, head + assistant, 1))
        close = ")" + headed.closing
        misses.append(text.replace(close, ") garbage" + headed.closing, 1))
        misses.append(text.replace(close, "))" + headed.closing, 1))
        misses.append(text.replace(close, ")", 1))
    blocks = layout.concept(BlockTurns) if isinstance(layout, declare.Layout) else None
    if blocks is not None:  # inline calls: \n<start>NAME<arguments>{...}<close>
        calls = blocks.calls
        start, arguments, close = calls.start.text, calls.arguments.text, calls.close.text
        head = start + "get_weather" + arguments
        misses.append(text.replace(head, start + "get_wether" + arguments, 1))
        misses.append(text.replace(head, start + "get_weather " + arguments, 1))
        misses.append(text.replace("}" + close, "} garbage" + close, 1))
        misses.append(text.replace("}" + close, "}}" + close, 1))
        misses.append(text.replace(arguments, arguments + arguments, 1))
    return [miss for miss in misses if miss != text]


def text_ids(fmt: Format, text: str) -> list[int]:
    """Ids of a mutated turn: the format's special markers by id, the rest as text."""
    import re

    tok = tokenizer(fmt.name)
    markers = sorted(fmt.special_markers, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(marker) for marker in markers))
    ids: list[int] = []
    position = 0
    for match in pattern.finditer(text):
        ids += tok.encode(text[position : match.start()], add_special_tokens=False).ids
        ids.append(tok.token_to_id(match.group()))
        position = match.end()
    return ids + tok.encode(text[position:], add_special_tokens=False).ids


@SAMPLED
@settings(max_examples=25)
@given(data=st.data())
def test_the_grammar_rejects_near_misses(fmt: Format, data: st.DataObject) -> None:
    request = data.draw(conversations(fmt).filter(has_assistant))
    request["tools"] = TOOLS if has_tools(layout_of(fmt)) else []  # type: ignore[arg-type]
    index = last_assistant(request)
    rendering = as_the_model_writes(fmt).render(request["messages"][: index + 1], request["tools"])
    written = "".join(
        s.text for s in rendering.segments if s.trainable and s.message_index >= index
    )
    grammar = export_grammar(fmt.name, request["tools"], "auto")
    assert accepts(fmt.name, grammar, text_ids(fmt, written))
    for miss in near_misses(fmt, written):
        assert not accepts(fmt.name, grammar, text_ids(fmt, miss)), miss


def test_a_call_turn_has_near_misses_and_the_grammar_rejects_them(fmt: Format) -> None:
    """The mutations of one fixed call turn (so every format's are exercised, whatever the
    conversations drawn above): garbage after the arguments, a wrong name, markers out of
    place."""
    if call_rules(layout_of(fmt)) is None:
        # No calls (Gemma 2): its text turn, with each of its markers inside the text.
        request = {
            "messages": [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": "Sunny, 18°C."},
            ]
        }
        rendering = as_the_model_writes(fmt).render(request["messages"])
        written = "".join(
            s.text for s in rendering.segments if s.trainable and s.message_index >= 1
        )
        grammar = export_grammar(fmt.name, TOOLS, "auto")
        assert accepts(fmt.name, grammar, text_ids(fmt, written))
        # Each special token, and each marker the parser reads (RWKV World's are plain text:
        # the next turn's opener after a blank line), inside the text.
        inside = sorted({*fmt.special_markers, *fmt.grammar.markers})
        misses = near_misses(fmt, written) + [
            written.replace("Sunny", "Sun" + marker + "ny", 1) for marker in inside
        ]
        assert len(misses) >= 5, misses
        for miss in misses:
            assert not accepts(fmt.name, grammar, text_ids(fmt, miss)), miss
        return
    arguments = json.dumps({"city": "Paris", "days": 2})
    call = {
        "id": call_id(layout_of(fmt), 0),
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    request = {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "tool_calls": [call]},
        ],
        "tools": TOOLS,
    }
    if prompt_opens_reasoning(layout_of(fmt)):  # only a turn with reasoning follows the prompt
        request["messages"][1]["reasoning_content"] = "Paris, two days."
    rendering = as_the_model_writes(fmt).render(request["messages"], TOOLS)
    written = "".join(s.text for s in rendering.segments if s.trainable and s.message_index >= 1)
    grammar = export_grammar(fmt.name, TOOLS, "auto")
    assert accepts(fmt.name, grammar, text_ids(fmt, written))
    misses = near_misses(fmt, written)
    assert len(misses) >= 5, misses
    for miss in misses:
        assert not accepts(fmt.name, grammar, text_ids(fmt, miss)), miss


@SAMPLED
@pytest.mark.parametrize("choice", ["auto", "required", "get_weather"])
def test_random_walks_through_the_grammar_parse_to_valid_calls(fmt: Format, choice: str) -> None:
    layout = layout_of(fmt)
    assert layout is not None
    if call_rules(layout) is None and choice != "auto":  # no calls (Gemma 2): refused
        with pytest.raises(UnsupportedFeature, match=r"^tool_choice: .* has no tool calls"):
            export_grammar(fmt.name, TOOLS, choice)
        return
    grammar = export_grammar(fmt.name, TOOLS, choice)
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
    finished = calls = 0
    for seed in range(40):
        ids = random_walk(fmt.name, grammar, seed)
        if ids is None:
            continue
        finished += 1
        parser = IdParser(fmt, tokenizer(fmt.name), strict=True, tools=TOOLS)
        try:
            events = parser.feed_ids(ids) + parser.finish()
        except ParseError as error:
            # A call label's number is free in the grammar (Kimi K2's functions.NAME:N, N the
            # call's place in the turn: a grammar cannot count), so a walk may repeat a
            # label: strict reading refuses it, a lenient one serves the call under a new id
            # and says so.
            assert "held by an earlier call of the message" in str(error), error
            parser = IdParser(fmt, tokenizer(fmt.name), strict=False, tools=TOOLS)
            events = parser.feed_ids(ids) + parser.finish()
            messages, _, warnings = folded(fmt, events)
            assert warnings, "a repeated label read without a warning"
        else:
            messages, _, warnings = folded(fmt, events)
            assert not warnings
        served = [call.id for message in messages for call in message.tool_calls]
        assert len(served) == len(set(served)), served
        for message in messages:
            for call in message.tool_calls:
                calls += 1
                assert call.name in schemas
                if choice == "get_weather":
                    assert call.name == "get_weather"
                jsonschema.validate(json.loads(call.arguments), schemas[call.name])
        if choice != "auto":
            assert any(message.tool_calls for message in messages)
    assert finished >= 20, finished
    if choice != "auto":
        assert calls >= finished


@pytest.mark.parametrize("name", ["minicpm", "bielik", "seed_oss"])
def test_a_reasoning_its_trim_empties_reads_back_as_none(name: str) -> None:
    # (A reasoning of newlines alone is written as an empty block, a recorded trim, or not
    # at all (seed_oss drops a blank one); it reads back as no reasoning, as every format
    # that writes empty blocks reads them.)
    fmt = pawlette.get_format(name)
    request = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a", "reasoning_content": "\n"},
        ]
    }
    rendering = fmt.render(request)
    assert [loss for loss in rendering.losses if loss.startswith("messages[1].reasoning")]
    back = fmt.parse_conversation(rendering.text, strict=True).to_request()["messages"][-1]
    assert "reasoning_content" not in back and back["content"] == "a"
