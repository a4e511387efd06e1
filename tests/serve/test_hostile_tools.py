"""Hostile tool schemas and a replica failing mid-stream, found by an outsider's audit (both
failed before their fixes):

- a schema keyword of the wrong JSON type (``"type": 5``, ``"enum": 5``, ``"properties": []``,
  ``"required": 5``, ``"allOf": 5``, ``"minItems": [1]``, ``"type": [["string"]]``) crashed the
  grammar export with a TypeError or AttributeError: a **500** for every format whose plan
  exports a grammar (``required``, a named function, and ``auto`` on grammar engines), where a
  schema the export cannot write falls back to no grammar (or a 400) as a ValueError did;
  thousands of ``prefixItems`` overflowed Python's stack in the walk (RecursionError, a 500);
- a stream that broke off on the second of two ``--upstream`` replicas named the *first*
  replica in its error event (the request's context, which names the replica the balancer
  chose, is gone by the time the body is written);
- an engine answering an error status with an endless body (a byte now and then, never
  silent for ``--timeout``) held the request as long as it dripped: the error body is now
  read for at most ``--timeout`` in all and 64 KiB, then the connection is closed.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from pawlette.export.grammar import grammar_formats

from .conftest import ServerFactory
from .raw_engine import RawEngine, answer, chunked, events, piece
from .upstream import FakeUpstream

BAD_SCHEMAS: dict[str, Any] = {
    "type 5": {"type": 5},
    "type of lists": {"type": [["string"]]},
    "enum 5": {"type": "string", "enum": 5},
    "properties list": {"type": "object", "properties": ["a"]},
    "required 5": {"type": "object", "properties": {"a": {"type": "string"}}, "required": 5},
    "allOf 5": {"allOf": 5},
    "minItems list": {"type": "array", "items": {"type": "integer"}, "minItems": [1]},
    "3000 prefixItems": {"type": "array", "prefixItems": [{"type": "integer"}] * 3000},
}


def _tools(schema: Any) -> list[dict[str, Any]]:
    parameters = {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    return [{"type": "function", "function": {"name": "f", "parameters": parameters}}]


@pytest.mark.parametrize("engine", ["generic", "llamacpp"])
@pytest.mark.parametrize("format_name", grammar_formats())
def test_tool_schemas_with_keywords_of_the_wrong_type_are_never_a_500(
    serve: ServerFactory, format_name: str, engine: str
) -> None:
    server = serve(format_name, engine=engine, model="m")
    failures = []
    with httpx.Client(timeout=30) as http:
        for name, schema in BAD_SCHEMAS.items():
            for choice in ("auto", "required", {"type": "function", "function": {"name": "f"}}):
                body = {
                    "messages": [{"role": "user", "content": "hi"}],
                    "tools": _tools(schema),
                    "tool_choice": choice,
                }
                response = http.post(server.url + "/v1/chat/completions", json=body)
                if response.status_code == 400:
                    error = response.json()["error"]
                    assert set(error) == {"message", "type", "param", "code"}
                elif response.status_code != 200:
                    failures.append(f"{name} {choice}: {response.status_code} {response.text}")
    assert not failures, "\n".join(failures)


def test_a_stream_broken_on_the_second_replica_names_that_replica(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    broken = RawEngine()
    try:
        server = serve("pcml", replicas=(broken.url,), model="m")
        head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
        cut = chunked([events(piece("Hel"))])[:-5]  # the chunked body's end never comes
        named = []
        with httpx.Client(timeout=30) as http:
            for _ in range(6):  # least outstanding, ties in turn: both replicas get requests
                broken.plays.append(answer(head + cut, close=True))
                response = http.post(
                    server.url + "/v1/chat/completions",
                    json={"messages": [{"role": "user", "content": "hi"}], "stream": True},
                )
                assert response.status_code == 200
                for line in response.text.split("\n"):
                    if line.startswith('data: {"error"'):
                        named.append(json.loads(line[6:])["error"]["message"])
        assert named, "no request reached the broken replica"
        for message in named:
            # Named by its place in --upstream, never by its address (the log has that).
            assert message.startswith("engine replica 2: the answer broke off"), message
            assert upstream.url not in message and broken.url not in message
    finally:
        broken.stop()


@pytest.mark.parametrize("stream", [False, True])
def test_an_endless_error_body_is_not_waited_for(serve: ServerFactory, stream: bool) -> None:
    dripping = RawEngine()

    async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 503 Busy\r\ntransfer-encoding: chunked\r\n\r\n")
        try:
            while True:  # a byte every 0.1 s, never silent for the 0.5 s timeout, never ending
                writer.write(b"1\r\nx\r\n")
                await writer.drain()
                await asyncio.sleep(0.1)
        except ConnectionError:  # pawlette closed the connection
            return False

    try:
        dripping.plays.append(drip)
        server = serve("pcml", upstream=dripping.url, model="m", timeout=0.5)
        response = httpx.post(
            server.url + "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}], "stream": stream},
            timeout=60,  # it hung here (for as long as the engine dripped) before the fix
        )
        assert response.status_code == 502
        error = response.json()["error"]
        assert error["code"] == "upstream_error" and "answered HTTP 503: x" in error["message"]
        for _ in range(200):  # and the connection was closed (the engine stops dripping)
            if dripping.closed:
                break
            time.sleep(0.05)
        assert dripping.closed == 1
    finally:
        dripping.stop()


WORDS = ["Hello", "there,", "this", "is", "a", "longer", "answer", "with", "words", "in", "it."]


def _streamed(server_url: str, **fields: Any) -> tuple[str, str | None, list[str], bool]:
    """Content, finish reason, error codes and whether [DONE] came, as a client reads them."""
    response = httpx.post(
        server_url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}], "stream": True, **fields},
        timeout=30,
    )
    content, finish, errors = "", None, []
    for line in response.text.split("\n"):
        if line.startswith("data: {"):
            data = json.loads(line[6:])
            if "error" in data:
                errors.append(data["error"]["code"])
                continue
            for choice in data["choices"]:
                content += choice["delta"].get("content") or ""
                finish = choice.get("finish_reason") or finish
    return content, finish, errors, response.text.endswith("data: [DONE]\n\n")


def test_text_before_a_bad_event_in_the_same_read_reaches_the_client(
    serve: ServerFactory,
) -> None:
    """The texts of one read go through the parser together; a bad event among them dropped
    the texts before it (the client got the error alone), where the same events split over
    reads gave the client the text, then the error."""
    engine = RawEngine()
    try:
        server = serve("pcml", upstream=engine.url, model="m")
        good = events(*(piece(word + " ") for word in WORDS))
        body = good + b"data: not json\n\n" + events(piece("!", "stop"), b"[DONE]")
        head = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body)
        for every_byte in (False, True):  # one read, then a read per byte
            engine.plays.append(answer(head + body, every_byte=every_byte))
            content, _, errors, done = _streamed(server.url)
            assert (content, errors, done) == (" ".join(WORDS) + " ", ["upstream_invalid"], False)
        # Cut before a call tool_choice "none" forbids, a bad event after it in the same read:
        # the text before the call is the answer (it was lost too), the bad event never seen.
        call = '<call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call>'
        body = events(piece("Sure. "), piece(call)) + b"data: not json\n\n"
        head = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body)
        engine.plays.append(answer(head + body))
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
        content, finish, errors, done = _streamed(server.url, tools=tools, tool_choice="none")
        assert (content, finish, errors, done) == ("Sure. ", "stop", [], True)
    finally:
        engine.stop()


@pytest.mark.parametrize("name", ["type 5", "enum 5", "properties list", "3000 prefixItems"])
def test_pawlette_export_grammar_refuses_such_schemas_in_one_line(
    name: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same walk behind ``pawlette export grammar``: a traceback before (TypeError,
    RecursionError, and a ValueError for a schema it cannot write), exit 2 and one line now."""
    from pawlette.cli import main

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(_tools(BAD_SCHEMAS[name])))
    assert main(["export", "grammar", "-f", "pcml", "--tools", str(tools)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("pawlette export: --tools: ") and error.count("\n") == 1


def test_integers_beyond_64_bits_reach_the_prompt_exactly(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    """orjson reads an integer beyond 64 bits as a float without a word: a tool's enum value
    ``12345678901234567890123`` reached the engine's prompt as ``1.2345678901234568e+22``
    (the Python API and ``pawlette render`` print it exactly), and a ``seed`` of 2**70 was
    refused as a float."""
    import pawlette

    big = 12345678901234567890123
    tools = [
        {
            "type": "function",
            "function": {
                "name": "pick",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"enum": [big, -(2**63) - 1]}},
                },
            },
        }
    ]
    messages = [{"role": "user", "content": "hi"}]
    server = serve("pcml", model="m")
    response = httpx.post(
        server.url + "/v1/chat/completions",
        json={"messages": messages, "tools": tools, "seed": 2**70},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    sent = upstream.last().body
    assert sent["seed"] == 2**70
    rendered = pawlette.get_format("pcml").render(messages, tools, add_generation_prompt=True)
    assert str(big) in sent["prompt"] and sent["prompt"].startswith(rendered.text)


def test_a_bad_include_usage_is_named_by_its_path(serve: ServerFactory) -> None:
    """``stream_options.include_usage`` of the wrong type was refused naming ``include_usage``
    (a top-level key the request does not have) as its ``param``."""
    server = serve("pcml", model="m")
    response = httpx.post(
        server.url + "/v1/chat/completions",
        json={
            "messages": [{"role": "user", "content": "hi"}],
            "stream": True,
            "stream_options": {"include_usage": "yes"},
        },
        timeout=30,
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "stream_options.include_usage"
    assert error["message"] == ("stream_options.include_usage: found 'yes'; expected true or false")
