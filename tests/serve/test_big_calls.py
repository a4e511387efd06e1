"""A tool call of several pieces (past ``PIECE_BYTES``) served: the client gets its arguments
exactly, in a sane number of chunks, from every format, streamed or not, held or live.

The engine plays what the format renders for the call (cut at its stop strings, as engines
do: omni's call then ends with the output), in pieces of 64K characters; the arguments hold
escapes, non-ASCII and astral characters, so the pieces are cut inside characters somewhere.
The openai SDK reads the answer, and a plain HTTP reader reads the raw bytes (the body must
be the arguments' exact text in JSON, SSE framing and all).
"""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from pawlette.engine.call_text import PIECE_BYTES
from pawlette.formats import get_format

from .conftest import ServerFactory
from .scenarios import PROMPT, TOOLS, ask
from .upstream import FakeUpstream, Script, cut_at_stop

NAMES = ["pcml", "chatml", "breeze", "chatglm3", "llama3", "omni"]
UPSTREAM_PIECE = 65_536
CITY = 'Paris é"q"€😀\\ 北京\n\t' * 30_000  # about 690 KB of arguments, 2.6 pieces


def _completion(format_name: str, arguments: str) -> str:
    fmt = get_format(format_name)
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    prompt = fmt.render(PROMPT, TOOLS, add_generation_prompt=True).text
    text = fmt.render([*PROMPT, {"role": "assistant", "tool_calls": [call]}], TOOLS).text
    return cut_at_stop(text[len(prompt) :], list(fmt.stop))


def _raw(port: int, stream: bool) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = {"model": "m", "messages": PROMPT, "tools": TOOLS, "stream": stream}
    connection.request("POST", "/v1/chat/completions", json.dumps(body))
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def _sse_arguments(data: bytes) -> tuple[list[str], int]:
    """The arguments' fragments of call 0 in a raw SSE body, and its chunk count."""
    fragments: list[str] = []
    chunks = 0
    for event in data.split(b"\n\n"):
        if not event.startswith(b"data: {"):
            continue
        chunks += 1
        for choice in json.loads(event[len(b"data: ") :])["choices"]:
            for call in choice["delta"].get("tool_calls") or []:
                assert call["index"] == 0
                if call["function"].get("arguments"):
                    fragments.append(call["function"]["arguments"])
    return fragments, chunks


@pytest.mark.parametrize("live", [False, True], ids=["held", "live"])
@pytest.mark.parametrize("format_name", NAMES)
def test_a_big_call_reaches_the_client_exactly(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, live: bool
) -> None:
    arguments = json.dumps({"city": CITY}, ensure_ascii=False)
    completion = _completion(format_name, arguments)
    server = serve(format_name, stream_arguments=live)
    as_written = format_name not in ("breeze", "chatglm3")  # Python calls: JSON made of them
    for stream in (False, True):
        upstream.push(Script(text=completion, sizes=(UPSTREAM_PIECE,)))
        message, finish = ask(server.client(), stream, model="m", messages=PROMPT, tools=TOOLS)
        (call,) = message["tool_calls"]
        assert call["function"]["name"] == "get_weather" and finish == "tool_calls"
        assert json.loads(call["function"]["arguments"]) == {"city": CITY}
        if as_written:
            assert call["function"]["arguments"] == arguments
        upstream.push(Script(text=completion, sizes=(UPSTREAM_PIECE,)))
        status, data = _raw(server.port, stream)
        assert status == 200
        if not stream:
            answer: dict[str, Any] = json.loads(data)
            text = answer["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            assert json.loads(text) == {"city": CITY}
            continue
        fragments, chunks = _sse_arguments(data)
        assert json.loads("".join(fragments)) == {"city": CITY}
        if as_written:
            assert "".join(fragments) == arguments
        size = len(arguments.encode())
        if live:  # a fragment per engine piece at most, and more than one
            assert 2 <= len(fragments) <= len(completion) // UPSTREAM_PIECE + 2
        else:  # pieces of at most PIECE_BYTES characters, none much smaller than that
            assert size // PIECE_BYTES <= len(fragments) <= size // PIECE_BYTES + 2
            assert all(len(fragment) <= PIECE_BYTES for fragment in fragments)
        assert chunks <= len(fragments) + 4  # role, call start, finish (and nothing else)
