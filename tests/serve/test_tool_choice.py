"""``tool_choice`` and ``parallel_tool_calls`` through the server, for every registered format:
honoured (forced prefix, grammar, cut) or refused with a 400 naming ``tool_choice``, never
ignored.  Prefixes, grammars and stops are the grammar bundle's
(:func:`pawlette.export.export_grammar_bundle`): the tests read the bundle and check that the
request sent upstream carries exactly its pieces."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from pawlette.emit.tool_choice import ToolChoice
from pawlette.errors import UnsupportedFeature
from pawlette.export import export_grammar_bundle, grammar_formats
from pawlette.format import Format
from pawlette.formats import formats, get_format
from pawlette.openai import tool_from_openai
from pawlette.serve.engines import ENGINES
from pawlette.serve.tool_choice import plan_tool_choice

from ..helpers import WITHOUT_CALLS
from .conftest import ServerFactory
from .scenarios import (
    PROMPT,
    TOOLS,
    ask,
    assert_forced_call_refused,
    completion_for,
    prompt_for,
    tools_left_out,
    without_ids,
)
from .upstream import FakeUpstream, Script, cut_at_stop

NAMED = {"type": "function", "function": {"name": "get_weather"}}
REFUSED_ON_GENERIC = [("chatglm3", "required"), ("functionary_v3_2", "required")]
"""Forcing a call on an engine without grammars: refused only here (ChatGLM3 and Functionary
v3.2 with several functions: their calls begin with the function's name, so no prefix says
"call one of them")."""


def _bundle(
    fmt: Format, choice: object, engine: str = "generic", parallel: bool = True
) -> dict[str, Any] | None:
    """The bundle the server plans from, its grammars as the engine takes them."""
    if fmt.name not in grammar_formats():
        return None
    syntax = ENGINES[engine].grammar_syntax
    return export_grammar_bundle(
        fmt,
        TOOLS,
        choice,
        parallel,
        syntax or "gbnf",
        markers_as_text=engine in ("generic", "sglang"),
    )


def _spelled_without_ids(format_name: str) -> bool:
    """Whether the format's grammars can name its markers without token ids (``<|...|>``-shaped
    markers an engine knows by their text); Mistral's ``[TOOL_CALLS]`` needs its id."""
    choice = "auto" if format_name in WITHOUT_CALLS else "required"  # (required: refused)
    try:
        _bundle(get_format(format_name), choice, "llamacpp")
    except UnsupportedFeature as error:
        assert error.path == "markers", error
        return False
    return True


SPELLED = [name for name in formats() if _spelled_without_ids(name)]
NEEDS_IDS = [name for name in formats() if name not in SPELLED]


def _forced_prefix(fmt: Format, choice: object) -> str | None:
    """The bundle's prefix for ``choice`` (the declaration's without a grammar export)."""
    bundle = _bundle(fmt, choice)
    if bundle is None:
        method = getattr(fmt, "forced_prefix", None)
        return None if method is None else method(choice, TOOLS)  # type: ignore[no-any-return]
    prefixes = bundle["forced_prefix"]
    named = choice if isinstance(choice, dict) else None
    value = prefixes["functions"][named["function"]["name"]] if named else prefixes[choice]
    return value or None


def _ask(
    serve: ServerFactory,
    format_name: str,
    stream: bool,
    engine: str = "generic",
    **fields: Any,
) -> tuple[dict[str, Any], str | None]:
    client = serve(format_name, engine=engine).client()
    messages = prompt_for(get_format(format_name))
    return ask(client, stream, model="m", messages=messages, tools=TOOLS, **fields)


def _refused_without_calls(
    serve: ServerFactory,
    upstream: FakeUpstream,
    format_name: str,
    stream: bool,
    engine: str = "generic",
    **fields: Any,
) -> None:
    """A forced call in a format without calls: a 400 naming ``tool_choice``, nothing sent."""
    assert format_name in WITHOUT_CALLS
    before = len(upstream.records)
    with pytest.raises(openai.BadRequestError) as caught:
        _ask(serve, format_name, stream, engine, **fields)
    body = caught.value.body
    assert isinstance(body, dict) and body["param"] == "tool_choice"
    assert f"format {format_name!r} has no tool calls" in body["message"]
    assert len(upstream.records) == before


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", formats())
def test_none_never_returns_a_call(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool
) -> None:
    fmt = get_format(format_name)
    completion = completion_for(fmt, "text_and_call") or completion_for(fmt, "call")
    if format_name in WITHOUT_CALLS:  # the model cannot call: its text is the answer
        assert completion is None
        completion = completion_for(fmt, "text")
    assert completion is not None, f"{format_name} cannot write a call"
    prefix = _forced_prefix(fmt, "none")
    upstream.push(Script(text=completion, sizes=(2, 3)))
    message, finish = _ask(serve, format_name, stream, tool_choice="none")
    prompt = upstream.last().body["prompt"]
    rendering = fmt.render(prompt_for(fmt), TOOLS, add_generation_prompt=True)
    assert prompt == rendering.text + (prefix or "")
    assert "tool_calls" not in message
    assert finish == "stop"


@pytest.mark.parametrize("choice", ["required", NAMED], ids=["required", "named"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", formats())
def test_forcing_a_call_is_honoured_or_refused(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool, choice: Any
) -> None:
    fmt = get_format(format_name)
    if completion_for(fmt, "call") is None:
        _refused_without_calls(serve, upstream, format_name, stream, tool_choice=choice)
        return
    prefix = _forced_prefix(fmt, choice)
    before = len(upstream.records)
    if tools_left_out(fmt):  # DeepSeek V3.1's format writes calls but no tools
        with pytest.raises(openai.BadRequestError) as caught:
            _ask(serve, format_name, stream, tool_choice=choice)
        assert_forced_call_refused(caught, fmt)
        assert len(upstream.records) == before
        return
    if prefix is None:
        # The cases no prefix can force: a call that begins with its function's name.
        assert (format_name, choice) in REFUSED_ON_GENERIC, (format_name, choice)
        with pytest.raises(openai.BadRequestError) as caught:
            _ask(serve, format_name, stream, tool_choice=choice)
        body = caught.value.body
        assert isinstance(body, dict) and body["param"] == "tool_choice"
        assert "cannot force" in body["message"] and format_name in body["message"]
        assert len(upstream.records) == before
        return
    completion = completion_for(fmt, "call")
    assert completion is not None and completion.startswith(prefix), (format_name, prefix)
    upstream.push(Script(text=completion[len(prefix) :], sizes=(3,)))
    message, finish = _ask(serve, format_name, stream, tool_choice=choice)
    body = upstream.last().body
    rendering = fmt.render(prompt_for(fmt), TOOLS, add_generation_prompt=True)
    assert body["prompt"] == rendering.text + prefix
    bundle = _bundle(fmt, choice)
    assert bundle is None or body["stop"] == bundle["stop"]
    # The answer is the message the model would have written with the prefix itself.
    expected = fmt.parse(cut_at_stop(completion, list(fmt.stop)), tools=TOOLS)
    assert without_ids(message) == without_ids(expected.message)
    assert finish == "tool_calls"


PARALLEL = [name for name in formats() if completion_for(get_format(name), "parallel_calls")]


def test_formats_without_parallel_calls_are_the_documented_ones() -> None:
    # One call per turn: omni, llama3 (Meta's templates refuse parallel calls) and gigachat
    # (GigaChat 3's template writes a turn's first call only); no calls at all: the formats
    # without call syntax.
    one_call = {"omni", "llama3", "gigachat"}
    assert set(formats()) - set(PARALLEL) == {*one_call, *WITHOUT_CALLS} & set(formats())


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", PARALLEL)
def test_no_parallel_calls_keeps_the_first(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool
) -> None:
    fmt = get_format(format_name)
    completion = completion_for(fmt, "parallel_calls")
    assert completion is not None
    upstream.push(Script(text=completion, sizes=(4,)))
    message, finish = _ask(serve, format_name, stream, parallel_tool_calls=False)
    calls = message.get("tool_calls") or []
    assert [call["function"]["name"] for call in calls] == ["get_weather"]
    assert calls[0]["function"]["arguments"] == '{"city": "Paris"}'
    assert finish == "tool_calls"


def test_a_cut_cancels_the_upstream_stream(serve: ServerFactory, upstream: FakeUpstream) -> None:
    """With tool_choice none, the stream ends at the call the model starts; the engine stops."""
    fmt = get_format("pcml")
    completion = completion_for(fmt, "text_and_call")
    assert completion is not None
    upstream.push(Script(text=completion + " and more" * 50, sizes=(4,), delay=0.02))
    server = serve("pcml")
    body = {"messages": PROMPT, "tools": TOOLS, "tool_choice": "none", "stream": True}
    response = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=10)
    assert response.text.endswith("data: [DONE]\n\n")
    assert '"finish_reason":"stop"' in response.text and "tool_calls" not in response.text
    record = upstream.last()
    assert upstream.wait_closed(record, timeout=2) and not record.completed


def test_required_on_chatglm3_with_one_function_is_forced_by_its_prefix(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    fmt = get_format("chatglm3")
    tools = TOOLS[:1]
    completion = completion_for(fmt, "call")
    bundle = export_grammar_bundle(fmt, tools, "required", True, "gbnf")
    prefix = bundle["forced_prefix"]["required"]
    assert prefix and completion is not None and completion.startswith(prefix)
    upstream.push(Script(text=completion[len(prefix) :], sizes=(3,)))
    client = serve("chatglm3").client()
    message, finish = ask(
        client, False, model="m", messages=PROMPT, tools=tools, tool_choice="required"
    )
    assert upstream.last().body["prompt"].endswith(prefix)
    expected = fmt.parse(cut_at_stop(completion, list(fmt.stop)), tools=tools)
    assert without_ids(message) == without_ids(expected.message)
    assert finish == "tool_calls"


def _sent_grammar(body: dict[str, Any], engine: str) -> str | None:
    if engine == "vllm":
        return body.get("structured_outputs", {}).get("grammar")  # type: ignore[no-any-return]
    return body.get({"sglang": "ebnf", "llamacpp": "grammar"}[engine])


@pytest.mark.parametrize("choice", ["required", NAMED, "none"], ids=["required", "named", "none"])
@pytest.mark.parametrize("engine", ["vllm", "sglang", "llamacpp"])
@pytest.mark.parametrize("format_name", SPELLED)
def test_engines_with_grammars_get_the_bundles_prefix_and_grammar(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, engine: str, choice: Any
) -> None:
    """With an engine that takes grammars: a format whose turn may open with a reasoning block
    gets the whole turn's grammar and no prefix (a prefix would rule the block out); the others
    get the bundle's prefix and the grammar after it."""
    fmt = get_format(format_name)
    if choice != "none" and completion_for(fmt, "call") is None:
        _refused_without_calls(serve, upstream, format_name, False, engine, tool_choice=choice)
        return
    if choice != "none" and tools_left_out(fmt):
        with pytest.raises(openai.BadRequestError) as caught:
            _ask(serve, format_name, False, engine, tool_choice=choice)
        assert_forced_call_refused(caught, fmt)
        return
    bundle = _bundle(fmt, choice, engine)
    assert bundle is not None, f"{format_name} has no grammar export"
    scenario = "text" if choice == "none" else "call"
    completion = completion_for(fmt, scenario)
    assert completion is not None
    prefix = _forced_prefix(fmt, choice) or ""
    if bundle["reasoning"] is not None:
        prefix, grammar = "", bundle["grammar"]
    elif prefix:
        grammar = bundle["grammar_after_prefix"]
    else:
        grammar = bundle["grammar"]
    assert completion.startswith(prefix)
    upstream.push(Script(text=completion[len(prefix) :]))
    message, finish = _ask(serve, format_name, False, engine, tool_choice=choice)
    body = upstream.last().body
    rendering = fmt.render(prompt_for(fmt), TOOLS, add_generation_prompt=True)
    assert body["prompt"] == rendering.text + prefix
    assert _sent_grammar(body, engine) == grammar and "grammar_lazy" not in body
    assert body["stop"] == bundle["stop"]
    assert body.get("skip_special_tokens") is (None if engine == "llamacpp" else False)
    expected = fmt.parse(cut_at_stop(completion, list(fmt.stop)), tools=TOOLS)
    assert without_ids(message) == without_ids(expected.message)
    assert finish == ("stop" if choice == "none" else "tool_calls")


@pytest.mark.parametrize("format_name", SPELLED)
def test_llamacpp_gets_the_lazy_grammar_under_auto(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str
) -> None:
    """``auto`` without parallel calls: llama.cpp gets the grammar from the call trigger on,
    switched on by the trigger; a format without a trigger gets the whole turn's grammar."""
    fmt = get_format(format_name)
    bundle = _bundle(fmt, "auto", "llamacpp", parallel=False)
    assert bundle is not None
    completion = completion_for(fmt, "call")
    calls = format_name not in WITHOUT_CALLS
    if not calls:  # the model cannot call: the grammar is the text turn's
        assert completion is None and bundle["trigger"] is None
        completion = completion_for(fmt, "text")
    assert completion is not None
    upstream.push(Script(text=completion))
    message, finish = _ask(serve, format_name, False, "llamacpp", parallel_tool_calls=False)
    body = upstream.last().body
    trigger = bundle["trigger"]
    if trigger is None:
        assert body["grammar"] == bundle["grammar"] and "grammar_lazy" not in body
    else:
        assert body["grammar"] == bundle["lazy_grammar"] and body["grammar_lazy"] is True
        assert body["grammar_triggers"] == [{"type": 1, "value": trigger["marker"]}]
        assert body["preserved_tokens"] == [trigger["marker"]]
    expected = fmt.parse(cut_at_stop(completion, list(fmt.stop)), tools=TOOLS)
    assert without_ids(message) == without_ids(expected.message)
    assert finish == ("tool_calls" if calls else "stop")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", sorted(WITHOUT_CALLS & set(formats())))
def test_tools_under_auto_are_dropped_by_a_format_without_calls(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool
) -> None:
    """The documented behaviour: the template does not write tools, so the prompt is the
    conversation's without them (the render records the loss) and the answer is text."""
    fmt = get_format(format_name)
    completion = completion_for(fmt, "text")
    assert completion is not None
    upstream.push(Script(text=completion, sizes=(2,)))
    message, finish = _ask(serve, format_name, stream)
    rendering = fmt.render(prompt_for(fmt), TOOLS, add_generation_prompt=True)
    assert "tools: not written" in rendering.losses
    assert upstream.last().body["prompt"] == rendering.text
    assert rendering.text == fmt.render(prompt_for(fmt), add_generation_prompt=True).text
    assert without_ids(message) == without_ids(fmt.parse(completion).message)
    assert finish == "stop"


# ------------------------------------------------- tools a Python-call format cannot write


def _tool(name: str, **properties: Any) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {k: {"type": "string"} for k in properties}}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


ARGUMENTS = "tools[0].parameters.properties"
UNWRITABLE = [
    ("breeze", _tool("mark-er"), "tools[0].function.name", "'mark-er'"),
    ("breeze", _tool("pick.unit"), "tools[0].function.name", "'pick.unit'"),
    ("breeze", _tool("odd_args", **{"<|eot_id|>x": 1}), ARGUMENTS, "<|eot_id|>x"),
    ("chatglm3", _tool("odd_args", **{'城市 "q"': 1}), ARGUMENTS, '城市 "q"'),
]


@pytest.mark.parametrize(("format_name", "tool", "path", "found"), UNWRITABLE)
@pytest.mark.parametrize("engine", ["llamacpp", "generic"])
def test_forcing_only_tools_the_format_cannot_write_is_refused(
    format_name: str, tool: dict[str, Any], path: str, found: str, engine: str
) -> None:
    """The audit's case: ``required`` with a tool breeze (or ChatGLM3) cannot write as a Python
    call forced only the prefix and answered no call; now a 400 naming the tool's field."""
    tools = (tool_from_openai(tool, "tools[0]"),)
    for choice in (ToolChoice("required", None), ToolChoice("function", tools[0].name)):
        with pytest.raises(UnsupportedFeature) as caught:
            plan_tool_choice(get_format(format_name), ENGINES[engine], tools, choice, True)
        assert caught.value.path == path and found in caught.value.found
        assert caught.value.expected == "a Python identifier that is not a keyword"


def test_forcing_leaves_out_the_tools_the_format_cannot_write() -> None:
    good = _tool("get_weather", city=1)
    for format_name, bad, _, _ in UNWRITABLE:
        tools = (tool_from_openai(bad, "tools[0]"), tool_from_openai(good, "tools[1]"))
        fmt = get_format(format_name)
        plan = plan_tool_choice(fmt, ENGINES["llamacpp"], tools, ToolChoice("required", None), True)
        assert plan.grammar is not None and "get_weather" in plan.grammar
        assert tools[0].name not in plan.grammar  # left out
        named = ToolChoice("function", tools[0].name)
        with pytest.raises(UnsupportedFeature, match=r"tools\[0\]"):
            plan_tool_choice(fmt, ENGINES["llamacpp"], tools, named, True)
    # ChatGLM3 writes a call's name as a line of its own: any name is fine there.
    mark = (tool_from_openai(_tool("mark-er", city=1), "tools[0]"),)
    plan = plan_tool_choice(
        get_format("chatglm3"), ENGINES["llamacpp"], mark, ToolChoice("required", None), True
    )
    assert plan.prefix.startswith("mark-er\n") and plan.grammar is not None


def test_the_server_answers_400_for_an_unwritable_forced_tool(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    client = serve("breeze", engine="llamacpp").client()
    before = len(upstream.records)
    with pytest.raises(openai.BadRequestError) as caught:
        ask(
            client,
            False,
            model="m",
            messages=PROMPT,
            tools=[_tool("mark-er")],
            tool_choice="required",
        )
    body = caught.value.body
    assert isinstance(body, dict) and body["param"] == "tools[0].function.name"
    assert body["type"] == "invalid_request_error" and "'mark-er'" in body["message"]
    assert len(upstream.records) == before


@pytest.mark.parametrize("strict", [True, False])
def test_the_schema_default_decides_the_grammar_sent(
    serve: ServerFactory, upstream: FakeUpstream, strict: bool
) -> None:
    """Strict schemas by default (``--schema-default strict``): the grammar sent refuses
    properties the tools do not declare; ``json-schema`` (``strict_schemas=False``) sends
    the grammar that allows them, as JSON Schema does.  The two differ for these tools,
    whose objects say nothing of further properties."""
    fmt = get_format("pcml")
    bundles = {
        flag: export_grammar_bundle(fmt, TOOLS, "required", True, "gbnf", strict=flag)
        for flag in (True, False)
    }
    assert bundles[True]["grammar_after_prefix"] != bundles[False]["grammar_after_prefix"]
    completion = completion_for(fmt, "call")
    assert completion is not None
    prefix = _forced_prefix(fmt, "required") or ""
    upstream.push(Script(text=completion[len(prefix) :]))
    options: dict[str, Any] = {} if strict else {"strict_schemas": False}
    client = serve("pcml", engine="llamacpp", **options).client()
    ask(client, False, model="m", messages=PROMPT, tools=TOOLS, tool_choice="required")
    assert upstream.last().body["grammar"] == bundles[strict]["grammar_after_prefix"]


@pytest.mark.parametrize("engine", ["vllm", "llamacpp"])
@pytest.mark.parametrize("format_name", NEEDS_IDS)
def test_markers_known_only_by_id_force_by_prefix_without_a_tokenizer(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, engine: str
) -> None:
    """A format whose markers an engine knows only by id (Mistral's ``[TOOL_CALLS]``): without
    ``--tokenizer`` no grammar can name them, so the server sends none and forces the call with
    the format's prefix alone (and still cuts any answer that breaks the choice)."""
    fmt = get_format(format_name)
    prefix = _forced_prefix(fmt, "required")
    assert prefix, f"{format_name} has no prefix to force a call with"
    completion = completion_for(fmt, "call")
    assert completion is not None and completion.startswith(prefix)
    upstream.push(Script(text=completion[len(prefix) :]))
    message, finish = _ask(serve, format_name, False, engine, tool_choice="required")
    body = upstream.last().body
    assert body["prompt"] == fmt.render(PROMPT, TOOLS, add_generation_prompt=True).text + prefix
    assert _sent_grammar(body, engine) is None
    expected = fmt.parse(cut_at_stop(completion, list(fmt.stop)), tools=TOOLS)
    assert without_ids(message) == without_ids(expected.message)
    assert finish == "tool_calls"
