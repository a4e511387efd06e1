"""Error answers (400, 401, 404, 413, 429, 502, 504), failures mid-stream, and cancellation."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import httpx
import openai
import pytest

from pawlette.formats import get_format
from pawlette.serve.pipeline import Completion

from .conftest import ServerFactory
from .scenarios import PROMPT, TOOLS, ask, completion_for
from .upstream import FakeUpstream, Script

KEY = "sk-test-key"


def post(server: Any, body: object, **options: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"content-type": "application/json", **options.pop("headers", {})}
    options.setdefault("timeout", 10)
    return httpx.post(
        server.url + "/v1/chat/completions", content=content, headers=headers, **options
    )


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    return dict(error)


# ---------------------------------------------------------------------- 400


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "messages[0].role", "wizard"),
        ({"messages": "hi"}, "messages", "array"),
        ({}, "messages", "missing"),
        ({"messages": PROMPT, "n": 2}, "n", "n separate requests"),
        ({"messages": PROMPT, "temperature": 7}, "temperature", "from 0 to 2"),
        ({"messages": PROMPT, "max_tokens": 0}, "max_tokens", "at least 1"),
        ({"messages": PROMPT, "stop": ["ok", 3]}, "stop[1]", "non-empty string"),
        ({"messages": PROMPT, "stream": "yes"}, "stream", "true or false"),
        ({"messages": PROMPT, "logprobs": True}, "logprobs", "log probabilities"),
        (
            {"messages": PROMPT, "response_format": {"type": "json_object"}},
            "response_format.type",
            "json_object",
        ),
        ({"messages": PROMPT, "functions": []}, "functions", "tools"),
        ({"messages": PROMPT, "tool_choice": "required"}, "tool_choice", "no tools"),
        ({"messages": PROMPT, "tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice", "auto"),
        (
            {
                "messages": PROMPT,
                "tools": TOOLS,
                "tool_choice": {"type": "function", "function": {"name": "nope"}},
            },
            "tool_choice.function.name",
            "get_weather",
        ),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "1",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{x"},
                            }
                        ],
                    }
                ]
            },
            "messages[0].tool_calls[0].function.arguments",
            "not valid JSON",
        ),
        (
            {"messages": PROMPT, "tools": [{"type": "function", "function": {"name": ""}}]},
            "tools[0].function.name",
            "empty",
        ),
    ],
)
def test_invalid_requests_are_400_naming_the_field(
    serve: ServerFactory, upstream: FakeUpstream, body: dict[str, Any], param: str, words: str
) -> None:
    before = len(upstream.records)
    response = post(serve("pcml"), body)
    assert response.status_code == 400
    error = error_of(response)
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert words in error["message"]
    assert len(upstream.records) == before  # nothing reached the engine


def test_invalid_json_body_is_400(serve: ServerFactory) -> None:
    response = post(serve("pcml"), b'{"messages": [')
    assert response.status_code == 400
    assert "not valid JSON" in error_of(response)["message"]
    response = post(serve("pcml"), b"[1, 2]")
    assert response.status_code == 400


def test_sdk_raises_bad_request_with_the_field(serve: ServerFactory) -> None:
    client = serve("pcml").client()
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="m", messages=PROMPT, n=3)
    assert caught.value.status_code == 400
    assert isinstance(caught.value.body, dict) and caught.value.body["param"] == "n"


def test_unknown_route_is_an_openai_404(serve: ServerFactory) -> None:
    response = httpx.get(serve("pcml").url + "/v1/nothing", timeout=10)
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


# ---------------------------------------------------------------------- 401


def test_api_key_is_required_when_set(serve: ServerFactory, upstream: FakeUpstream) -> None:
    server = serve("pcml", api_key=KEY)
    for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": KEY}):
        response = post(server, {"messages": PROMPT}, headers=headers)
        assert response.status_code == 401
        error = error_of(response)
        assert error["code"] == "invalid_api_key"
        assert response.headers["www-authenticate"] == "Bearer"
    assert httpx.get(server.url + "/v1/models", timeout=10).status_code == 401
    assert httpx.get(server.url + "/health", timeout=10).status_code == 200
    with pytest.raises(openai.AuthenticationError):
        server.client(api_key="nope").models.list()
    upstream.push(Script(text="Hi<end>"))
    answer = server.client(api_key=KEY).chat.completions.create(model="m", messages=PROMPT)
    assert answer.choices[0].message.content == "Hi"


# ---------------------------------------------------------------------- 413


def test_body_over_the_limit_is_413(serve: ServerFactory, upstream: FakeUpstream) -> None:
    server = serve("pcml", max_body_bytes=2000)
    small = {"messages": PROMPT}
    large = {"messages": [{"role": "user", "content": "x" * 5000}]}
    response = post(server, large)
    assert response.status_code == 413
    assert error_of(response)["code"] == "request_too_large"
    # The same without a Content-Length (chunked body): counted while read.
    response = httpx.post(
        server.url + "/v1/chat/completions",
        content=iter([json.dumps(large).encode()]),
        headers={"content-type": "application/json"},
        timeout=10,
    )
    assert response.status_code == 413
    upstream.push(Script(text="ok<end>"))
    assert post(server, small).status_code == 200


# ---------------------------------------------------------------------- 5xx


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("stream", [False, True])
def test_unreachable_upstream_is_502(serve: ServerFactory, stream: bool) -> None:
    server = serve("pcml", upstream=f"http://127.0.0.1:{_closed_port()}", model="m")
    response = post(server, {"messages": PROMPT, "stream": stream})
    assert response.status_code == 502
    error = error_of(response)
    assert error["type"] == "server_error" and error["code"] == "upstream_unreachable"
    assert "unreachable" in error["message"]
    with pytest.raises(openai.InternalServerError) as caught:
        server.client().chat.completions.create(model="m", messages=PROMPT, stream=stream)
    assert caught.value.status_code == 502


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("status", "answer", "code"),
    [
        (500, 502, "upstream_error"),
        (503, 502, "upstream_error"),
        (400, 400, "upstream_rejected"),
        (429, 429, "upstream_busy"),
        (404, 502, "upstream_error"),
    ],
)
def test_upstream_http_errors(
    serve: ServerFactory,
    upstream: FakeUpstream,
    stream: bool,
    status: int,
    answer: int,
    code: str,
) -> None:
    upstream.push(Script(status=status, error="context too long, or the GPU melted"))
    response = post(serve("pcml"), {"messages": PROMPT, "stream": stream})
    assert response.status_code == answer
    error = error_of(response)
    assert error["code"] == code
    assert "context too long, or the GPU melted" in error["message"]
    assert f"HTTP {status}" in error["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_slow_upstream_times_out_with_504(
    serve: ServerFactory, upstream: FakeUpstream, stream: bool
) -> None:
    server = serve("pcml", timeout=0.3)
    upstream.push(Script(text="late<end>", first_delay=3))
    started = time.monotonic()
    response = post(server, {"messages": PROMPT, "stream": stream})
    assert time.monotonic() - started < 2.5
    assert response.status_code == 504
    error = error_of(response)
    assert error["code"] == "upstream_timeout" and "--timeout" in error["message"]


def test_upstream_stream_with_no_events_ends_with_an_error_event(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    upstream.push(Script(events=[]))  # streams nothing at all: not what was asked
    response = post(serve("pcml"), {"messages": PROMPT, "stream": True})
    assert response.status_code == 200
    assert "without a finish_reason" in _stream_error(response)["message"]


# ---------------------------------------------------------------------- mid-stream


def _stream_error(response: httpx.Response) -> dict[str, Any]:
    """The last event of a stream: the error object (after which nothing follows)."""
    events = [line for line in response.text.split("\n\n") if line]
    assert events[-1].startswith("data: {") and "data: [DONE]" not in response.text
    body = json.loads(events[-1][len("data: ") :])
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return dict(error)


def _content(response: httpx.Response) -> str:
    pieces = []
    for event in response.text.split("\n\n"):
        if event.startswith("data: {") and '"choices"' in event:
            for choice in json.loads(event[len("data: ") :])["choices"]:
                pieces.append(choice["delta"].get("content") or "")
    return "".join(pieces)


def test_upstream_crash_mid_stream_ends_with_an_error_event(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    server = serve("pcml")
    upstream.push(Script(text="Hello there, general Kenobi<end>", sizes=(4,), crash_after=3))
    started = time.monotonic()
    response = post(server, {"messages": PROMPT, "stream": True})
    assert time.monotonic() - started < 5
    error = _stream_error(response)
    assert error["code"] == "upstream_disconnected"
    assert "broke off" in error["message"]
    assert _content(response) == "Hello there,"  # what came before was delivered
    # The SDK surfaces it as an APIError, never a hang.
    upstream.push(Script(text="Hello there, general Kenobi<end>", sizes=(4,), crash_after=3))
    stream = server.client().chat.completions.create(model="m", messages=PROMPT, stream=True)
    seen: list[str] = []
    with pytest.raises(openai.APIError, match="broke off"):
        for chunk in stream:
            seen.append(chunk.choices[0].delta.content or "")
    assert "".join(seen) == "Hello there,"


@pytest.mark.parametrize(
    ("events", "words"),
    [
        (['{"choices": [{"text": "Hi", "index": 0}]}', "{not json"], "not JSON"),
        (['{"error": {"message": "out of memory"}}'], "out of memory"),
        (['"just a string"'], "not an object"),
    ],
)
def test_upstream_garbage_mid_stream_ends_with_an_error_event(
    serve: ServerFactory, upstream: FakeUpstream, events: list[str], words: str
) -> None:
    upstream.push(Script(events=events))
    response = post(serve("pcml"), {"messages": PROMPT, "stream": True})
    assert words in _stream_error(response)["message"]


def test_stream_that_ends_without_done_but_with_a_finish_reason_is_complete(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    upstream.push(
        Script(events=['{"choices": [{"text": "Hi<end>", "index": 0, "finish_reason": "stop"}]}'])
    )
    response = post(serve("pcml"), {"messages": PROMPT, "stream": True})
    assert response.text.endswith("data: [DONE]\n\n")
    assert '"finish_reason":"stop"' in response.text


def test_upstream_stream_without_any_end_is_an_error(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    upstream.push(Script(text="Hello", end_without_done=True))
    response = post(serve("pcml"), {"messages": PROMPT, "stream": True})
    assert "without a finish_reason" in _stream_error(response)["message"]


@pytest.mark.parametrize(
    "answer", ["{not json", '{"choices": []}', '{"choices": [{"text": 3}]}', "[]"]
)
def test_invalid_non_streaming_answer_is_502(
    serve: ServerFactory, upstream: FakeUpstream, answer: str
) -> None:
    upstream.push(Script(answer=answer))
    response = post(serve("pcml"), {"messages": PROMPT})
    assert response.status_code == 502
    error = error_of(response)
    assert error["code"] == "upstream_invalid" and "not an OpenAI completion" in error["message"]


def test_upstream_url_may_end_in_v1(serve: ServerFactory, upstream: FakeUpstream) -> None:
    upstream.push(Script(text="Hi<end>"))
    server = serve("pcml", upstream=upstream.url + "/v1/", model="m")
    assert post(server, {"messages": PROMPT}).status_code == 200
    assert upstream.last().path == "/v1/completions" and upstream.last().body["model"] == "m"


# ---------------------------------------------------------------------- cancellation


def test_client_disconnect_mid_stream_cancels_the_upstream(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    server = serve("pcml")
    upstream.push(Script(text="tick " * 100, sizes=(5,), delay=0.1))
    with httpx.Client(timeout=10) as client:
        body = {"messages": PROMPT, "stream": True}
        with client.stream("POST", server.url + "/v1/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if "tick" in line:
                    break
    closed = time.monotonic()
    record = upstream.last()
    assert upstream.wait_closed(record, timeout=2), "the upstream request was not cancelled"
    assert record.closed_at is not None and record.closed_at - closed < 1.0
    assert not record.completed


def test_client_disconnect_before_the_first_token_cancels_the_upstream(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    server = serve("pcml")
    for stream in (False, True):
        upstream.push(Script(text="late<end>", first_delay=5))
        with pytest.raises(httpx.ReadTimeout):
            post(server, {"messages": PROMPT, "stream": stream}, timeout=0.3)
        record = upstream.last()
        assert upstream.wait_closed(record, timeout=2), f"not cancelled (stream={stream})"
        assert not record.completed


def test_sdk_stream_closed_early_cancels_the_upstream(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    server = serve("pcml")
    upstream.push(Script(text="tick " * 100, sizes=(5,), delay=0.1))
    stream = server.client().chat.completions.create(model="m", messages=PROMPT, stream=True)
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    stream.close()
    assert upstream.wait_closed(upstream.last(), timeout=2)


# ---------------------------------------------------------------------- other routes, load


def test_models_and_health(serve: ServerFactory) -> None:
    server = serve("pcml")
    models = server.client().models.list()
    assert [model.id for model in models.data] == ["fake-model"]  # asked of the upstream
    assert models.data[0].owned_by == "pawlette"
    named = serve("pcml", model="my-model")
    assert [model.id for model in named.client().models.list().data] == ["my-model"]
    health = httpx.get(server.url + "/health", timeout=10)
    assert health.status_code == 200 and health.json() == {"status": "ok"}


def test_unknown_upstream_model_falls_back_to_the_format_name(serve: ServerFactory) -> None:
    server = serve("pcml", upstream=f"http://127.0.0.1:{_closed_port()}", connect_timeout=1)
    assert [model.id for model in server.client().models.list().data] == ["pcml"]


def test_many_concurrent_streams(serve: ServerFactory, upstream: FakeUpstream) -> None:
    server = serve("pcml")
    upstream.default = Script(text="One two three four five six.<end>", sizes=(3,))

    async def one(client: httpx.AsyncClient) -> str:
        body = {"messages": PROMPT, "stream": True}
        response = await client.post(server.url + "/v1/chat/completions", json=body)
        assert response.text.endswith("data: [DONE]\n\n")
        return _content(response)

    async def main() -> list[str]:
        async with httpx.AsyncClient(timeout=20) as client:
            return list(await asyncio.gather(*(one(client) for _ in range(60))))

    try:
        assert asyncio.run(main()) == ["One two three four five six."] * 60
    finally:
        upstream.default = Script()


@pytest.mark.parametrize("stream", [False, True])
def test_an_internal_error_is_an_openai_500(
    serve: ServerFactory,
    upstream: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
    stream: bool,
) -> None:
    def broken(self: object, text: str) -> list[object]:
        raise RuntimeError("boom")

    monkeypatch.setattr(Completion, "feed", broken)
    upstream.push(Script(text="Hi<end>"))
    response = post(serve("pcml"), {"messages": PROMPT, "stream": stream})
    if stream:
        error = _stream_error(response)
    else:
        assert response.status_code == 500
        error = error_of(response)
    assert error["type"] == "server_error" and "RuntimeError" in error["message"]


def test_upstream_dropping_the_connection_after_done_is_not_an_error(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    upstream.push(Script(text="Hi<end>", sizes=(3,), crash_after=3))  # piece, finish, [DONE]
    response = post(serve("pcml"), {"messages": PROMPT, "stream": True})
    assert response.text.endswith("data: [DONE]\n\n") and '"error"' not in response.text
    assert _content(response) == "Hi"


# ---------------------------------------------------------------------- hostile input (issue 14)

BIG = "9" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


def _with_call(arguments: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return [*PROMPT, {"role": "assistant", "content": None, "tool_calls": [call]}]


@pytest.mark.parametrize("format_name", ["pcml", "chatglm3", "breeze", "omni"])
@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"messages": PROMPT, "temprature": 0.5}, "temprature", "Did you mean 'temperature'?"),
        ({"messages": PROMPT, "tool": TOOLS}, "tool", "an unknown key"),
        ({"messages": PROMPT, "add_generation_prompt": True}, "add_generation_prompt", "unknown"),
        ({"messages": [{"role": "user", "content": "\ud800"}]}, "messages[0].content", "U+D800"),
        ({"messages": PROMPT, "stop": ["ok", "\udfff"]}, "stop[1]", "lone surrogate"),
        (
            {"messages": PROMPT, "tools": [{"type": "function", "function": {"name": "\ud800"}}]},
            "tools[0].function.name",
            "lone surrogate",
        ),
        ({"messages": PROMPT, "\ud800": 1}, '["\\ud800"]', "an unknown key"),
        (
            {"messages": _with_call('{"a": ' + BIG + "}")},
            "messages[2].tool_calls[0].function.arguments",
            "an integer too long to read",
        ),
        (
            {"messages": _with_call('{"a": ' + DEEP + "}")},
            "messages[2].tool_calls[0].function.arguments",
            "nested too deeply",
        ),
        ({"messages": [{"role": "user"}]}, "messages[0].content", "missing"),
        ({"messages": PROMPT, "top_k": "many"}, "top_k", "an integer"),
    ],
)
def test_hostile_requests_are_400_naming_the_field(
    serve: ServerFactory,
    upstream: FakeUpstream,
    format_name: str,
    body: dict[str, Any],
    param: str,
    words: str,
) -> None:
    before = len(upstream.records)
    response = post(serve(format_name), body)
    assert response.status_code == 400, response.text
    error = error_of(response)
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert words in error["message"]
    assert len(upstream.records) == before


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b'{"messages": ' + DEEP.encode() + b"}", "nested too deeply"),
        (b'{"messages": [], "seed": ' + BIG.encode() + b"}", "not valid JSON"),
        (b'{"messages": [{"role": "user", "content": "x"}], "temperature": NaN}', "nan"),
    ],
)
def test_hostile_bodies_are_400(serve: ServerFactory, raw: bytes, words: str) -> None:
    response = post(serve("pcml"), raw)
    assert response.status_code == 400
    assert words in error_of(response)["message"]


def _exchange(sock: socket.socket, body: bytes) -> tuple[int, bytes]:
    """One HTTP/1.1 request on an open connection; the status and the body."""
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode()
    sock.sendall(head + body)
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(65536)
        assert piece, "the server closed the connection"
        data += piece
    header, _, rest = data.partition(b"\r\n\r\n")
    length = int(
        next(
            line.split(b":", 1)[1]
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
    )
    while len(rest) < length:
        piece = sock.recv(65536)
        assert piece, "the server closed the connection"
        rest += piece
    return int(header.split(b" ", 2)[1]), rest


def test_a_500_keeps_the_connection_alive(
    serve: ServerFactory, upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pawlette.serve.app import Server

    original = Server._prepare

    async def broken(self: Server, chat: Any) -> Any:
        if chat.messages and chat.messages[-1].get("content") == "explode":
            raise RuntimeError("a bug")
        return await original(self, chat)

    monkeypatch.setattr(Server, "_prepare", broken)
    server = serve("pcml")
    upstream.push(Script(text="Hi<end>"))
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        status, body = _exchange(
            sock, json.dumps({"messages": [{"role": "user", "content": "explode"}]}).encode()
        )
        assert status == 500
        assert json.loads(body)["error"]["type"] == "server_error"
        status, body = _exchange(sock, json.dumps({"messages": PROMPT}).encode())
        assert status == 200, body
        assert json.loads(body)["choices"][0]["message"]["content"] == "Hi"


# No tools, no tool calls (issue 14, part 3): what the model writes anyway is cut as under "none".


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", ["pcml", "chatglm3", "breeze", "omni"])
def test_a_request_without_tools_never_gets_tool_calls(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool
) -> None:
    fmt = get_format(format_name)
    completion = completion_for(fmt, "text_and_call") or completion_for(fmt, "call")
    assert completion is not None
    client = serve(format_name).client()
    upstream.push(Script(text=completion, sizes=(2, 3)))
    message, finish = ask(client, stream, model="m", messages=PROMPT)
    assert "tool_calls" not in message
    assert finish == "stop"
    assert upstream.last().body["prompt"] == fmt.render(PROMPT, add_generation_prompt=True).text
    # With the tools declared, the same completion is a call.
    upstream.push(Script(text=completion, sizes=(2, 3)))
    message, finish = ask(client, stream, model="m", messages=PROMPT, tools=TOOLS)
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
    assert finish == "tool_calls"


def test_hostile_requests_never_get_a_500() -> None:
    """The bounded run of ``python -m bench.fuzz_requests`` (server in process, scripted
    upstream): 200 or 400 with OpenAI's error body, streamed or not."""
    from bench import fuzz_requests

    for name in ("pcml", "chatglm3", "breeze", "omni"):
        tallies = fuzz_requests.run_format(name, 120, 14, ("server",), show=3)
        tally = tallies["server"]
        assert tally.inputs == 120
        assert (tally.crashes, tally.server_errors) == (0, 0), "\n".join(tally.examples)
        assert set(tally.answered) == {"200", "400"}, tally.answered


def _every_other_format() -> list[str]:
    from bench.registered import every_format

    return [name for name in every_format() if name not in ("pcml", "chatglm3", "breeze", "omni")]


@pytest.mark.sampled
@pytest.mark.parametrize("name", _every_other_format())
def test_hostile_requests_never_get_a_500_in_any_format(name: str) -> None:
    """The same, a few dozen inputs on every other registered format and variant (the
    bench runs them all: ``python -m bench.fuzz_requests``)."""
    from bench import fuzz_requests

    tallies = fuzz_requests.run_format(name, 60, 14, ("server",), show=3)
    tally = tallies["server"]
    assert tally.inputs == 60
    assert (tally.crashes, tally.server_errors) == (0, 0), "\n".join(tally.examples)
    assert set(tally.answered) == {"200", "400"}, tally.answered


# ---------------------------------------------------------------------- engine text


@pytest.mark.parametrize("stream", [False, True])
def test_a_lone_surrogate_from_the_engine_reaches_the_client_escaped(
    serve: ServerFactory, upstream: FakeUpstream, stream: bool
) -> None:
    """An engine may send ``"\\ud800"`` (a lone surrogate's JSON escape; no UTF-8 spells it).
    The answer carries it as the same JSON escape: not a 500, not a broken stream, nothing
    replaced."""
    server = serve("pcml")
    text = "a\ud800b<end>"
    if stream:
        head = {"id": "c", "object": "text_completion"}
        upstream.push(
            Script(
                events=[
                    json.dumps({**head, "choices": [{"index": 0, "text": text}]}),
                    json.dumps(
                        {**head, "choices": [{"index": 0, "text": "", "finish_reason": "stop"}]}
                    ),
                ]
            )
        )
    else:
        upstream.push(Script(text=text))
    response = post(server, {"messages": PROMPT, "stream": stream})
    assert response.status_code == 200
    if stream:
        events = [line[6:] for line in response.text.splitlines() if line.startswith("data: {")]
        chunks = [json.loads(event) for event in events]
        assert not any("error" in chunk for chunk in chunks), chunks
        content = "".join(chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks)
    else:
        content = response.json()["choices"][0]["message"]["content"]
    assert content == "a\ud800b"
