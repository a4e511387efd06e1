"""``tool_choice`` and ``parallel_tool_calls`` through the server, for every registered format:
honoured (forced prefix, cut) or refused with a 400 naming ``tool_choice``, never ignored."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from pawlette.export import grammar_formats
from pawlette.format import Format
from pawlette.formats import formats, get_format

from .conftest import ServerFactory
from .scenarios import (
    PROMPT,
    TOOLS,
    ask,
    completion_for,
    without_ids,
)
from .upstream import FakeUpstream, Script, cut_at_stop

NAMED = {"type": "function", "function": {"name": "get_weather"}}


def _forced_prefix(fmt: Format, choice: object) -> str | None:
    method = getattr(fmt, "forced_prefix", None)
    return None if method is None else method(choice, TOOLS)  # type: ignore[no-any-return]


def _ask(
    serve: ServerFactory,
    format_name: str,
    stream: bool,
    engine: str = "generic",
    **fields: Any,
) -> tuple[dict[str, Any], str | None]:
    client = serve(format_name, engine=engine).client()
    return ask(client, stream, model="m", messages=PROMPT, tools=TOOLS, **fields)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", formats())
def test_none_never_returns_a_call(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool
) -> None:
    fmt = get_format(format_name)
    completion = completion_for(fmt, "text_and_call") or completion_for(fmt, "call")
    assert completion is not None, f"{format_name} cannot write a call"
    prefix = _forced_prefix(fmt, "none")
    upstream.push(Script(text=completion, sizes=(2, 3)))
    message, finish = _ask(serve, format_name, stream, tool_choice="none")
    prompt = upstream.last().body["prompt"]
    assert prompt == fmt.render(PROMPT, TOOLS, add_generation_prompt=True).text + (prefix or "")
    assert "tool_calls" not in message
    assert finish == "stop"


@pytest.mark.parametrize("choice", ["required", NAMED], ids=["required", "named"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", formats())
def test_forcing_a_call_is_honoured_or_refused(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool, choice: Any
) -> None:
    fmt = get_format(format_name)
    prefix = _forced_prefix(fmt, choice)
    before = len(upstream.records)
    if prefix is None:
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
    assert upstream.last().body["prompt"].endswith(prefix)
    expected = fmt.parse(cut_at_stop(completion, list(fmt.stop)), tools=TOOLS)
    assert without_ids(message) == without_ids(expected.message)
    assert finish == "tool_calls"


PARALLEL = [name for name in formats() if completion_for(get_format(name), "parallel_calls")]


def test_formats_without_parallel_calls_are_the_documented_ones() -> None:
    assert set(formats()) - set(PARALLEL) == {"omni"} & set(formats())  # one call per turn


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


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llamacpp"])
@pytest.mark.parametrize("format_name", formats())
def test_engines_with_grammars_force_calls_by_grammar(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, engine: str
) -> None:
    """With an engine that takes grammars, a format without a forced prefix but with a grammar
    export honours ``required`` through the engine's structured-output field."""
    fmt = get_format(format_name)
    completion = completion_for(fmt, "call")
    assert completion is not None
    prefix = _forced_prefix(fmt, "required")
    field = {"vllm": "structured_outputs", "sglang": "ebnf", "llamacpp": "grammar"}[engine]
    if prefix is None and format_name not in grammar_formats():
        with pytest.raises(openai.BadRequestError, match="no grammar export"):
            _ask(serve, format_name, False, engine, tool_choice="required")
        return
    upstream.push(Script(text=completion[len(prefix or "") :]))
    message, finish = _ask(serve, format_name, False, engine, tool_choice="required")
    body = upstream.last().body
    assert (field in body) == (prefix is None)
    assert body.get("skip_special_tokens") is (None if engine == "llamacpp" else False)
    expected = fmt.parse(cut_at_stop(completion, list(fmt.stop)), tools=TOOLS)
    assert without_ids(message) == without_ids(expected.message)
    assert finish == "tool_calls"
