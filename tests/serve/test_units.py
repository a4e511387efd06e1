"""The server's pure parts: request checks, SSE decoding, engine bodies, tool plans, cut rules."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from pawlette.emit.tool_choice import ToolChoice
from pawlette.errors import PawletteError, RequestError, UnsupportedFeature
from pawlette.export import export_grammar_bundle
from pawlette.formats import get_format
from pawlette.openai import tools_from_openai
from pawlette.serve.engines import DEFAULT_MAX_TOKENS, ENGINES
from pawlette.serve.pipeline import ChunkPipeline, Completion, encode_events
from pawlette.serve.request import parse_chat_request
from pawlette.serve.sse import SSEDecoder
from pawlette.serve.tool_choice import (
    ToolPlan,
    bundle_prefix,
    openai_tool_choice,
    plan_tool_choice,
)
from pawlette.types import (
    MessageEnd,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

from .scenarios import PROMPT, TOOLS

HELLO = [{"role": "user", "content": "Hi"}]

# ---------------------------------------------------------------------- request


def test_an_empty_conversation_is_refused() -> None:
    with pytest.raises(RequestError) as caught:
        parse_chat_request({"messages": []})
    assert (caught.value.path, caught.value.found, caught.value.expected) == (
        "messages",
        "an empty array",
        "at least one message",
    )


def test_sampling_fields_are_read_and_checked() -> None:
    request = parse_chat_request(
        {
            "model": "x",
            "messages": PROMPT,
            "temperature": 0.5,
            "top_p": 1,
            "max_tokens": 10,
            "max_completion_tokens": 20,
            "seed": 7,
            "stop": ["a", "b"],
            "top_k": 4,
            "presence_penalty": 0.1,
            "logit_bias": {"5": -100},
            "user": "ignored",
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    )
    assert request.sampling == {
        "max_tokens": 20,
        "temperature": 0.5,
        "top_p": 1,
        "presence_penalty": 0.1,
        "seed": 7,
        "top_k": 4,
        "logit_bias": {"5": -100},
    }
    assert request.stop == ("a", "b") and request.stream and request.include_usage
    assert request.tool_choice == ToolChoice("auto") and request.parallel_tool_calls


def test_include_usage_only_counts_when_streaming() -> None:
    request = parse_chat_request({"messages": HELLO, "stream_options": {"include_usage": True}})
    assert not request.include_usage


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ToolChoice("auto")),
        ("none", ToolChoice("none")),
        ("required", ToolChoice("required")),
        (
            {"type": "function", "function": {"name": "get_time"}},
            ToolChoice("function", "get_time"),
        ),
    ],
)
def test_tool_choice_is_normalised(value: object, expected: ToolChoice) -> None:
    request = parse_chat_request({"messages": HELLO, "tools": TOOLS, "tool_choice": value})
    assert request.tool_choice == expected


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"messages": HELLO, "top_p": 1.5}, "top_p"),
        ({"messages": HELLO, "seed": 1.5}, "seed"),
        ({"messages": HELLO, "n": 0}, "n"),
        ({"messages": HELLO, "n": True}, "n"),
        ({"messages": HELLO, "stop": 3}, "stop"),
        ({"messages": HELLO, "stop": [""]}, "stop[0]"),
        ({"messages": HELLO, "top_logprobs": 2}, "top_logprobs"),
        ({"messages": HELLO, "model": 3}, "model"),
        ({"messages": HELLO, "modalities": ["text", "audio"]}, "modalities"),
        ({"messages": HELLO, "parallel_tool_calls": "no"}, "parallel_tool_calls"),
        ({"messages": HELLO, "stream": True, "stream_options": 1}, "stream_options"),
        ({"messages": HELLO, "logit_bias": {"1": "x"}}, "logit_bias.1"),
        ({"messages": HELLO, "logit_bias": [[1, 5]]}, "logit_bias"),
        ({"messages": HELLO, "logit_bias": {"abc": 5}}, "logit_bias.abc"),
        ({"messages": HELLO, "logit_bias": {"-3": 5}}, "logit_bias.-3"),
        ({"messages": HELLO, "logit_bias": {"5": 101}}, "logit_bias.5"),
        ({"messages": HELLO, "user": 5}, "user"),
        ({"messages": HELLO, "temperature": float("nan")}, "temperature"),
    ],
)
def test_bad_fields_name_their_path(body: dict[str, object], path: str) -> None:
    with pytest.raises(RequestError) as caught:
        parse_chat_request(body)
    assert caught.value.path == path


# ---------------------------------------------------------------------- SSE


def test_sse_decoder_is_split_invariant() -> None:
    stream = (
        b": keep-alive\r\n\r\n"
        b'data: {"a": "\xc3\xa9"}\r\n\r\n'
        b"event: message\nid: 3\ndata: line one\ndata: line two\n\n"
        b"data:[DONE]\n\n"
        b"data: unterminated"
    )
    expected = ['{"a": "é"}', "line one\nline two", "[DONE]", "unterminated"]
    generator = random.Random(7)
    for _ in range(200):
        decoder = SSEDecoder()
        events: list[str] = []
        position = 0
        while position < len(stream):
            size = generator.choice([1, 2, 3, 7, 50])
            events += decoder.feed(stream[position : position + size])
            position += size
        assert events + decoder.finish() == expected


def test_sse_decoder_fast_path_reads_as_the_line_reader() -> None:
    """Whole ``data:`` events take a shortcut; random streams mixing them with every other
    shape (CRLF, comments, fields, multi-line data, blank runs) read as line by line."""
    pieces = [
        b'data: {"t": "a"}\n\n',
        b"data: [DONE]\n\n",
        b"data:x\n\n",
        b"data: one\ndata: two\n\n",
        b": comment\n\n",
        b"data: crlf\r\n\r\n",
        b"event: e\nid: 1\ndata: y\n\n",
        b"\n\n\n",
        b"data: \xc3\xa9\n\n",
        b"data: no end",
    ]
    generator = random.Random(11)
    for _ in range(300):
        stream = b"".join(generator.choice(pieces) for _ in range(generator.randint(1, 8)))
        reference = SSEDecoder()  # a byte a time: never two line ends in one read
        expected = [
            event
            for byte in range(len(stream))
            for event in reference.feed(stream[byte : byte + 1])
        ]
        expected += reference.finish()
        decoder = SSEDecoder()
        events: list[str] = []
        position = 0
        while position < len(stream):
            size = generator.choice([1, 5, 30, 200, len(stream)])
            events += decoder.feed(stream[position : position + size])
            position += size
        assert events + decoder.finish() == expected, stream


def test_sse_decoder_refuses_a_payload_that_is_not_utf8_after_the_ones_before_it() -> None:
    from pawlette.serve.sse import NotUtf8

    decoder = SSEDecoder()
    with pytest.raises(NotUtf8) as refused:
        decoder.feed(b"data: one\n\ndata: tw\xffo\n\ndata: three\n\n")
    assert refused.value.before == ["one"]
    # A character split across reads is no error: lines are split before they are decoded.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: \xc3") == [] and decoder.feed(b"\xa9\n\n") == ["\u00e9"]


def test_sse_decoder_bounds_a_line_and_an_event() -> None:
    from pawlette.serve.sse import LineTooLong

    for stream in (
        [b"data: " + b"x" * 60, b"y" * 60],  # a line still open
        [b"data: " + b"x" * 200 + b"\n"],  # a whole line in one read
        [b"data: " + b"x" * 60 + b"\n" for _ in range(3)],  # an event of several lines
        # An event of many short lines: the line ends joining them count (an event of empty
        # ``data`` lines was held without bound, a list entry per five bytes of stream).
        [b"data\n" * 200],
        [b"data: x\n" for _ in range(60)],
    ):
        decoder = SSEDecoder(max_line=100)
        with pytest.raises(LineTooLong, match="over 100 bytes"):
            for piece in stream:
                decoder.feed(piece)
    decoder = SSEDecoder(max_line=100)
    assert decoder.feed(b"data: " + b"x" * 90 + b"\n\n") == ["x" * 90]
    assert decoder.feed(b"data: x\n" * 50 + b"\n") == ["\n".join("x" * 50)]  # 99 bytes
    assert decoder.feed(b"data\n" * 101 + b"\n") == ["\n" * 100]


def test_sse_decoder_reads_a_long_line_in_linear_work() -> None:
    """A line fed a piece at a time was joined again on every read (a 64 MB line in 64 KiB
    reads: about a minute).  Measured in bytes, not seconds: the memory each read allocates,
    summed over the reads, is a small multiple of the line (joining on every read makes it
    grow with the square of the line: 540 MB here at 1dcafa3, 4.4 MB now)."""
    import tracemalloc

    size, pieces = 1 << 20, 1024
    line = b"data: " + b"x" * (size - 6)
    reads = [line[start : start + size // pieces] for start in range(0, size, size // pieces)]
    decoder = SSEDecoder()
    allocated = 0
    tracemalloc.start()
    try:
        for read in [*reads, b"\n\n"]:
            before, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            events = decoder.feed(read)
            allocated += tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert events == ["x" * (size - 6)]
    assert allocated < 8 * size, f"{allocated} bytes allocated to read a {size}-byte line"


# ---------------------------------------------------------------------- engines


def test_engine_bodies() -> None:
    common = {
        "prompt": [1, 2],
        "model": None,
        "stop": ["<end>"],
        "sampling": {"max_tokens": 5},
        "stream": True,
        "include_usage": True,
    }
    assert ENGINES["generic"].body(**common) == {  # type: ignore[arg-type]
        "prompt": [1, 2],
        "max_tokens": 5,
        "stop": ["<end>"],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    vllm = ENGINES["vllm"].body(**common, grammar="root ::= x")  # type: ignore[arg-type]
    assert vllm["structured_outputs"] == {"grammar": "root ::= x"}
    assert vllm["skip_special_tokens"] is False and vllm["spaces_between_special_tokens"] is False
    assert ENGINES["vllm-0.9"].body(**common, grammar="g")["guided_grammar"] == "g"  # type: ignore[arg-type]
    assert ENGINES["sglang"].body(**common, grammar="g")["ebnf"] == "g"  # type: ignore[arg-type]
    assert ENGINES["llamacpp"].body(**common, grammar="g")["grammar"] == "g"  # type: ignore[arg-type]
    assert "stream_options" not in ENGINES["tgi"].body(**common)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ENGINES["tgi"].body(**common, grammar="g")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- tool plans

PCML = get_format("pcml")
CORE_TOOLS = tools_from_openai(TOOLS)
NAMED = ToolChoice("function", "get_time")


def _bundle(
    prefixes: dict[str, str] | None = None, reasoning: bool = False, trigger: bool = False
) -> Callable[..., dict[str, Any]]:
    """A bundle source: a fake bundle whose grammars name the choice and the syntax."""
    given = prefixes or {}

    def source(
        fmt: object, tools: object, choice: ToolChoice, parallel: bool, engine: Any, ids: object
    ) -> dict[str, Any]:
        syntax = engine.grammar_syntax
        return {
            "grammar": f"grammar {choice.mode} {parallel} {syntax}",
            "grammar_after_prefix": f"after {choice.mode} {syntax}",
            "lazy_grammar": f"lazy {syntax}" if trigger else None,
            "trigger": {"marker": "<T>", "special": True} if trigger else None,
            "reasoning": {"open": "<r>", "close": "</r>"} if reasoning else None,
            "stop": ["<S>"],
            "forced_prefix": {
                "auto": "",
                "none": given.get("none", ""),
                "required": given.get("required", ""),
                "functions": {
                    name: value for name, value in given.items() if name not in ("none", "required")
                },
            },
        }

    return source


PREFIXES = {"required": "<P>", "none": "<N>", "get_time": "<P>get_time("}


def _plan(
    choice: ToolChoice,
    parallel: bool = True,
    engine: str = "generic",
    source: Callable[..., dict[str, Any]] | None = None,
) -> ToolPlan:
    return plan_tool_choice(
        PCML, ENGINES[engine], CORE_TOOLS, choice, parallel, bundle_source=source or _bundle()
    )


STOP = ("<S>",)


def test_auto_needs_nothing_and_none_cuts() -> None:
    assert _plan(ToolChoice("auto")) == ToolPlan()
    assert _plan(ToolChoice("none")) == ToolPlan(max_calls=0, stop=STOP)
    assert _plan(ToolChoice("auto"), parallel=False) == ToolPlan(max_calls=1, stop=STOP)
    none = _plan(ToolChoice("none"), source=_bundle(PREFIXES))
    assert none == ToolPlan(prefix="<N>", max_calls=0, stop=STOP)


@pytest.mark.parametrize("choice", [ToolChoice("required"), NAMED])
def test_forcing_without_prefix_or_grammar_is_refused(choice: ToolChoice) -> None:
    for engine in ("generic", "tgi"):
        with pytest.raises(UnsupportedFeature) as caught:
            _plan(choice, engine=engine)
        assert caught.value.path == "tool_choice"
        assert "cannot force" in str(caught.value)


def test_forcing_with_a_prefix() -> None:
    source = _bundle(PREFIXES)
    assert _plan(ToolChoice("required"), source=source) == ToolPlan(prefix="<P>", stop=STOP)
    assert _plan(NAMED, source=source) == ToolPlan(
        prefix="<P>get_time(", only_function="get_time", stop=STOP
    )
    assert _plan(NAMED, parallel=False, source=source) == ToolPlan(
        prefix="<P>get_time(", max_calls=1, only_function="get_time", stop=STOP
    )


def test_a_grammar_engine_gets_the_prefix_and_the_grammar_after_it() -> None:
    plan = _plan(ToolChoice("required"), engine="vllm", source=_bundle(PREFIXES))
    assert plan == ToolPlan(prefix="<P>", grammar="after required lark", stop=STOP)
    plan = _plan(ToolChoice("none"), engine="sglang", source=_bundle(PREFIXES))
    assert plan == ToolPlan(prefix="<N>", grammar="after none gbnf", max_calls=0, stop=STOP)


def test_a_reasoning_block_is_kept_by_the_whole_turn_grammar_instead_of_a_prefix() -> None:
    source = _bundle(PREFIXES, reasoning=True)
    plan = _plan(ToolChoice("required"), engine="vllm", source=source)
    assert plan == ToolPlan(grammar="grammar required True lark", stop=STOP)
    # Without a grammar the prefix is all there is (the turn has no reasoning block then).
    assert _plan(ToolChoice("required"), source=source).prefix == "<P>"


def test_forcing_with_a_grammar_needs_an_engine_that_takes_one() -> None:
    plan = _plan(ToolChoice("required"), engine="vllm")
    assert plan == ToolPlan(grammar="grammar required True lark", stop=STOP)
    with pytest.raises(UnsupportedFeature):
        _plan(ToolChoice("required"), engine="generic")


def test_a_lazy_grammar_goes_to_llamacpp_under_auto() -> None:
    source = _bundle(trigger=True)
    plan = _plan(ToolChoice("auto"), parallel=False, engine="llamacpp", source=source)
    assert plan == ToolPlan(grammar="lazy gbnf", trigger="<T>", max_calls=1, stop=STOP)
    # Engines without lazy grammars get the whole turn; other choices are never lazy.
    plan = _plan(ToolChoice("auto"), parallel=False, engine="vllm", source=source)
    assert plan.grammar == "grammar auto False lark" and plan.trigger is None
    plan = _plan(ToolChoice("required"), engine="llamacpp", source=source)
    assert plan.grammar == "grammar required True gbnf" and plan.trigger is None


def test_grammar_syntax_lark_sends_llamacpp_lark_except_for_a_lazy_grammar() -> None:
    engine = ENGINES["llamacpp"].with_grammar_syntax("lark")
    for choice in (ToolChoice("required"), NAMED, ToolChoice("none")):
        plan = plan_tool_choice(PCML, engine, CORE_TOOLS, choice, True)
        assert plan.grammar is not None and plan.grammar.startswith("%llguidance {}\n")
        assert plan.trigger is None
    # Under auto the grammar may be switched on by the trigger: GBNF, as by default.
    auto = ToolChoice("auto")
    lazy = plan_tool_choice(PCML, engine, CORE_TOOLS, auto, False)
    assert lazy == plan_tool_choice(PCML, ENGINES["llamacpp"], CORE_TOOLS, auto, False)
    assert lazy.trigger is not None and lazy.grammar is not None and "::=" in lazy.grammar
    # The engine's own syntax stays GBNF (what --grammar-syntax auto sends a replica until it
    # says it has llguidance): a llama.cpp built without llguidance aborts on a Lark grammar.
    default = plan_tool_choice(PCML, ENGINES["llamacpp"], CORE_TOOLS, ToolChoice("required"), True)
    assert default.grammar is not None and "::=" in default.grammar
    assert ENGINES["llamacpp"].with_grammar_syntax(None) is ENGINES["llamacpp"]
    assert ENGINES["generic"].with_grammar_syntax("lark") is ENGINES["generic"]


def test_grammar_syntax_is_a_serve_setting() -> None:
    import argparse

    from pawlette.serve.app import Server
    from pawlette.serve.config import ServeConfig, add_arguments, config_from_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    arguments = ["-f", "pcml", "--upstream", "http://127.0.0.1:9", "--engine", "llamacpp"]
    default = config_from_arguments(parser.parse_args(arguments))
    assert default.grammar_syntax is None
    # llamacpp's default is auto: its replicas are asked; plans made before one is chosen
    # (and a lazy grammar's, always) are GBNF.
    for config in (default, replace(default, grammar_syntax="auto")):
        assert Server(config).syntaxes.asking
        assert Server(config).engine.syntax_for(lazy=False) == "gbnf"
    auto = config_from_arguments(parser.parse_args([*arguments, "--grammar-syntax", "auto"]))
    assert auto.grammar_syntax == "auto"
    config = config_from_arguments(parser.parse_args([*arguments, "--grammar-syntax", "lark"]))
    assert config.grammar_syntax == "lark"
    assert not Server(config).syntaxes.asking
    assert Server(config).engine.syntax_for(lazy=False) == "lark"
    assert Server(config).engine.syntax_for(lazy=True) == "gbnf"
    gbnf = replace(config, grammar_syntax="gbnf")
    assert not Server(gbnf).syntaxes.asking
    assert Server(gbnf).engine.syntax_for(lazy=False) == "gbnf"
    # Other engines are never asked: auto is their one syntax.
    vllm = replace(config, engine="vllm", grammar_syntax="auto")
    assert not Server(vllm).syntaxes.asking
    assert Server(vllm).engine.syntax_for(lazy=False) == "lark"
    for syntax in ("lark", "auto"):
        generic = ServeConfig(format="pcml", upstream="http://127.0.0.1:9", grammar_syntax=syntax)
        with pytest.raises(PawletteError, match="--grammar-syntax: engine 'generic' takes no"):
            Server(generic)


def test_lazy_grammar_fields_for_llamacpp() -> None:
    common = {
        "prompt": "p",
        "model": None,
        "stop": ["<end>"],
        "sampling": {},
        "stream": False,
        "include_usage": False,
    }
    body = ENGINES["llamacpp"].body(**common, grammar="g", trigger="<call>")  # type: ignore[arg-type]
    assert body["grammar"] == "g" and body["grammar_lazy"] is True
    assert body["grammar_triggers"] == [{"type": 1, "value": "<call>"}]
    assert body["preserved_tokens"] == ["<call>"]
    with pytest.raises(ValueError):
        ENGINES["vllm"].body(**common, grammar="g", trigger="<call>")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("engine", "words"),
    [
        ("vllm", ["%llguidance", "</call>"]),
        ("vllm-0.9", ["%llguidance"]),
        ("llamacpp", ["root ::=", " </call>"]),
        ("sglang", ["root ::=", '"</call>"']),
    ],
)
def test_real_grammars_per_engine(engine: str, words: list[str]) -> None:
    plan = plan_tool_choice(PCML, ENGINES[engine], CORE_TOOLS, NAMED, False)
    # A forced choice turns reasoning off (pawlette.export.forced): the prefix, then its grammar.
    assert plan.grammar is not None and plan.prefix == '<call>{"id": "'
    assert plan.max_calls == 1 and plan.only_function == "get_time"
    for word in words:
        assert word in plan.grammar
    # The call's name is a JSON string inside a grammar string: quotes escaped.
    assert '\\"get_time\\"' in plan.grammar and "get_weather" not in plan.grammar


def test_grammar_names_markers_by_id_with_a_tokenizer() -> None:
    ids = {marker: 100 + number for number, marker in enumerate(PCML.special_markers)}
    plan = plan_tool_choice(
        PCML, ENGINES["vllm"], CORE_TOOLS, ToolChoice("required"), True, token_ids=ids
    )
    assert plan.grammar is not None and f"<[{ids['<call>']}]>" in plan.grammar


def test_markers_a_syntax_cannot_spell_leave_the_prefix() -> None:
    """A marker that is no token reference without its id: the grammar is dropped, the
    bundle's prefixes still apply (they do not depend on spelling)."""
    real = _bundle(PREFIXES)
    calls: list[str] = []

    def source(*arguments: Any) -> dict[str, Any]:
        calls.append(arguments[4].name)
        if arguments[4].grammar_syntax is not None:
            raise UnsupportedFeature("markers", "'[X]' cannot be written", "token_ids")
        return real(*arguments)

    plan = _plan(ToolChoice("required"), engine="vllm", source=source)
    assert plan == ToolPlan(prefix="<P>", stop=STOP) and calls == ["vllm", "no grammar"]


@pytest.mark.parametrize("engine", ["generic", "vllm"])
def test_a_schema_no_grammar_can_write_falls_back_to_the_prefix_else_is_a_400(
    engine: str,
) -> None:
    def source(*arguments: Any) -> dict[str, Any]:
        raise ValueError("tools[0].parameters.$ref: 'http://x'; expected a local reference")

    # PCML forces a call by its own prefix (Format.forced_prefix, one source with the
    # bundle): the call is forced without a grammar, its arguments checked when parsed.
    plan = _plan(ToolChoice("required"), engine=engine, source=source)
    assert plan.prefix == "<call>" and plan.grammar is None
    # chatglm3 has no prefix for `required` with several functions (a call begins with the
    # function's name): a 400 that says why.
    with pytest.raises(UnsupportedFeature, match=r"no grammar for it.*local reference"):
        plan_tool_choice(
            get_format("chatglm3"),
            ENGINES[engine],
            CORE_TOOLS,
            ToolChoice("required"),
            True,
            bundle_source=source,
        )
    # The cuts need no grammar: none and no parallel calls still work, with the format's stops.
    assert _plan(ToolChoice("none"), engine=engine, source=source) == ToolPlan(max_calls=0)
    assert _plan(ToolChoice("auto"), False, engine, source) == ToolPlan(max_calls=1)


def test_required_on_chatglm3_has_a_prefix_only_with_one_function() -> None:
    chatglm3 = get_format("chatglm3")  # a call begins with its function's name
    with pytest.raises(UnsupportedFeature, match="tool_choice"):
        plan_tool_choice(chatglm3, ENGINES["generic"], CORE_TOOLS, ToolChoice("required"), True)
    one = plan_tool_choice(
        chatglm3, ENGINES["generic"], CORE_TOOLS[:1], ToolChoice("required"), True
    )
    assert one.prefix == "get_weather\n```python\ntool_call("
    # none and no parallel calls still work: the cut needs no grammar.
    plan = plan_tool_choice(chatglm3, ENGINES["generic"], CORE_TOOLS, ToolChoice("none"), False)
    assert plan == ToolPlan(max_calls=0, stop=chatglm3.stop)


@pytest.mark.parametrize("format_name", ["pcml", "omni", "chatglm3", "breeze"])
def test_plans_take_their_prefixes_and_stops_from_the_bundle(format_name: str) -> None:
    fmt = get_format(format_name)
    for choice in (ToolChoice("required"), NAMED, ToolChoice("none")):
        bundle = export_grammar_bundle(
            fmt, TOOLS, openai_tool_choice(choice), True, "gbnf", markers_as_text=True
        )
        prefix = bundle_prefix(bundle, choice)
        if not prefix and choice.mode != "none":
            continue  # refused on the generic engine (see the test above)
        plan = plan_tool_choice(fmt, ENGINES["generic"], CORE_TOOLS, choice, True)
        assert plan.prefix == prefix and plan.stop == tuple(bundle["stop"]) and not plan.grammar


def test_no_tools_no_plan() -> None:
    plan = plan_tool_choice(PCML, ENGINES["generic"], (), ToolChoice("none"), False)
    assert plan == ToolPlan()


# ---------------------------------------------------------------------- cut rules and numbering


def _admitted(plan: ToolPlan, events: list[object]) -> tuple[list[object], Completion]:
    completion = Completion(PCML, plan)
    completion.feed("")
    return completion._admit(events), completion  # type: ignore[arg-type]


def test_calls_are_numbered_across_turns() -> None:
    # A ChatGLM3 completion holds one assistant turn per call: the parser numbers the calls
    # of the whole completion, and the completion's message ends once, at its end.
    completion = Completion(get_format("chatglm3"), ToolPlan())
    events = completion.feed(
        "f\n```python\ntool_call(a=1)\n```<|assistant|>g\n```python\ntool_call(b=2)\n```"
    ) + completion.finish("stop")
    assert [e.index for e in events if isinstance(e, (ToolCallStart, ToolCallDelta))] == [
        0,
        0,
        1,
        1,
    ]
    assert [e for e in events if isinstance(e, MessageEnd)] == [MessageEnd("tool_calls")]


@pytest.mark.parametrize(
    ("plan", "kept"),
    [
        (ToolPlan(max_calls=0), []),
        (ToolPlan(max_calls=1), ["f"]),
        (ToolPlan(only_function="g"), []),
        (ToolPlan(only_function="f"), ["f"]),
        (ToolPlan(), ["f", "g"]),
    ],
)
def test_cut_rules(plan: ToolPlan, kept: list[str]) -> None:
    events: list[object] = [
        TextDelta("Hi"),
        ToolCallStart(0, "a", "f"),
        ToolCallDelta(0, "{}"),
        ToolCallEnd(0),
        ToolCallStart(1, "b", "g"),
        ToolCallDelta(1, "{}"),
        ToolCallEnd(1),
    ]
    admitted, completion = _admitted(plan, events)
    assert [e.name for e in admitted if isinstance(e, ToolCallStart)] == kept
    assert completion.cut == (len(kept) < 2)
    assert completion.finish_reason == ("tool_calls" if kept else "stop")


def test_none_cut_in_a_real_completion() -> None:
    text = 'Let me look.\n<call>{"id": "x", "name": "get_weather", "arguments": {}}</call>'
    completion = Completion(PCML, ToolPlan(max_calls=0))
    message = completion.message(text, "stop")
    assert message == {"role": "assistant", "content": "Let me look."}
    assert completion.cut and completion.finish_reason == "stop"


def test_forced_prefix_is_part_of_the_turn() -> None:
    pipeline = ChunkPipeline(PCML, ToolPlan(prefix="<think>"), model="m", completion_id="c")
    chunks = pipeline.start() + pipeline.feed("hmm</think>\nHi") + pipeline.finish("stop")
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"reasoning_content": "hmm"},
        {"content": "Hi"},
        {},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert encode_events(chunks[:1]).startswith(b'data: {"id":"c","object":"chat.completion.chunk"')


def test_output_budget_when_the_request_sets_none() -> None:
    def budget(engine: str, server: int | None = None) -> object:
        body = ENGINES[engine].body(
            prompt="p",
            model=None,
            stop=[],
            sampling={},
            stream=False,
            include_usage=False,
            max_tokens=server,
        )
        return body.get("max_tokens", "absent")

    assert budget("vllm") is None  # null: the rest of the context
    assert budget("llamacpp") == "absent"
    assert budget("generic") == budget("sglang") == DEFAULT_MAX_TOKENS
    assert budget("vllm", 100) == budget("generic", 100) == 100


@pytest.mark.parametrize(
    "payload",
    [
        '{"choices": [{"text": "a\\u00e9\\ud83d\\ude00", "finish_reason": null}]}',
        '{"choices": [{"text": "x"}], "usage": {"completion_tokens": 3}}',
        '{"choices": [{"text": "\\ud800"}]}',  # a lone surrogate's escape: orjson refuses it
        '{"choices": [{"text": "n"}], "score": NaN}',  # NaN: orjson refuses it
        '{"choices": [{"text": "big"}], "n": 123456789012345678901234567890}',
        '{"choices": [{"text": "a"}, {"text": "b"}], "a": 1, "a": 2}',
        "[1, 2]",
        "not json",
        '{"choices": [',
    ],
)
def test_engine_events_read_alike_with_and_without_orjson(payload: str) -> None:
    from pawlette.serve import app, json_codec
    from pawlette.serve.config import ServeConfig

    def read(fast: bool) -> tuple[str, Any]:
        config = ServeConfig(format="pcml", upstream="http://127.0.0.1:9", fast_json=fast)
        server = app.Server(config)
        assert (server.json.loads is not None) == fast
        state = app._StreamState()
        try:
            text = server._stream_item(payload, server.upstreams.replicas[0], state)
        except app.ServerError as error:
            return "error", (error.status, error.code)
        return text, (state.reason, state.usage)

    assert json_codec.orjson is not None  # the serve extra installs it
    assert read(fast=False) == read(fast=True)


def test_tool_plans_are_kept_by_the_tools_content_not_their_identity() -> None:
    import copy

    from pawlette.serve.app import Server
    from pawlette.serve.config import ServeConfig

    server = Server(ServeConfig(format="pcml", upstream="http://127.0.0.1:9", engine="llamacpp"))

    def plan(tools: Any, choice: Any = "required") -> Any:
        body = {"messages": PROMPT, "tools": tools, "tool_choice": choice}
        prompt = server.format.render(PROMPT, add_generation_prompt=True).text
        return server._tool_plan(parse_chat_request(body), prompt)

    tools, first = plan(TOOLS)
    again = plan(copy.deepcopy(TOOLS))
    assert again[0] is tools and again[1] is first  # equal content: the kept plan
    changed = copy.deepcopy(TOOLS)
    changed[0]["function"]["parameters"]["properties"]["city"]["type"] = "integer"
    other_tools, other = plan(changed)
    assert other.grammar != first.grammar and other_tools != tools
    # A caller's dicts changed after their plan was kept change nothing kept.
    mutated = copy.deepcopy(changed)
    mutated[0]["function"]["description"] = "another"
    kept_tools, kept = plan(mutated)
    mutated[0]["function"]["name"] = "renamed"
    mutated[0]["function"]["description"] = "changed later"
    mutated[0]["function"]["parameters"]["properties"].clear()
    restored = copy.deepcopy(changed)
    restored[0]["function"]["description"] = "another"
    again = plan(restored)
    assert again[0] is kept_tools and again[1] is kept
    assert kept_tools[0].definition["description"] == "another"
    assert kept_tools[0].definition["parameters"]["properties"]
    assert plan(copy.deepcopy(TOOLS))[1] is first
    assert plan(TOOLS, "none")[1] != first and plan(None, "auto")[1].max_calls == 0
