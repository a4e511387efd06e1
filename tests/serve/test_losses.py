"""What the served format leaves out of the prompt reaches the client (``x-pawlette-losses``),
the log and ``/metrics``; ``--refuse-losses`` makes it a 400; a forced call whose tools the
format leaves out is a 400."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import openai
import pytest

from pawlette.formats import get_format
from pawlette.serve.config import ServeConfig, check_config
from pawlette.serve.losses import HEADER, HEADER_BYTES, header_value

from .conftest import ServerFactory
from .prometheus import scrape, value
from .scenarios import TOOLS
from .upstream import FakeUpstream, Script

NAMED_USER = [{"role": "user", "content": "Hi", "name": "Alice"}]
PLAIN_USER = [{"role": "user", "content": "Hi"}]


def _raw(client: openai.OpenAI, stream: bool, **fields: Any) -> tuple[Any, str]:
    """The raw answer (its headers) and the content the client reads."""
    raw = client.chat.completions.with_raw_response.create(model="m", stream=stream, **fields)
    parsed = raw.parse()
    if stream:
        content = "".join(chunk.choices[0].delta.content or "" for chunk in parsed if chunk.choices)
    else:
        content = parsed.choices[0].message.content or ""
    return raw, content


@pytest.mark.parametrize("stream", [False, True])
def test_gemma_tells_the_client_it_left_out_the_tools_and_the_name(
    serve: ServerFactory, upstream: FakeUpstream, stream: bool
) -> None:
    upstream.push(Script(text="Hello!"))
    raw, content = _raw(serve("gemma").client(), stream, messages=NAMED_USER, tools=TOOLS)
    assert content == "Hello!"
    assert json.loads(raw.headers[HEADER]) == [
        "tools: not written",
        "messages[0].name: not written",
    ]
    prompt = upstream.last().body["prompt"]
    assert "Alice" not in prompt and "get_weather" not in prompt


@pytest.mark.parametrize("stream", [False, True])
def test_chatml_reports_a_name_and_nothing_without_one(
    serve: ServerFactory, upstream: FakeUpstream, stream: bool
) -> None:
    client = serve("chatml").client()
    upstream.push(Script(text="Hello!"))
    raw, _ = _raw(client, stream, messages=NAMED_USER, tools=TOOLS)
    assert json.loads(raw.headers[HEADER]) == ["messages[0].name: not written"]
    upstream.push(Script(text="Hello!"))
    raw, _ = _raw(client, stream, messages=PLAIN_USER, tools=TOOLS)
    assert HEADER not in raw.headers


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("refused", "param"),
    [("messages.name", "messages[0].name"), ("all", "tools"), ("tools", "tools")],
)
def test_refused_losses_are_a_400_naming_the_path(
    serve: ServerFactory, upstream: FakeUpstream, stream: bool, refused: str, param: str
) -> None:
    before = len(upstream.records)
    with pytest.raises(openai.BadRequestError) as caught:
        _raw(
            serve("gemma", refuse_losses=(refused,)).client(),
            stream,
            messages=NAMED_USER,
            tools=TOOLS,
        )
    body = caught.value.body
    assert isinstance(body, dict) and body["param"] == param
    assert "format 'gemma' leaves it out" in body["message"]
    assert "--refuse-losses" in body["message"]
    assert caught.value.status_code == 400 and body["type"] == "invalid_request_error"
    assert len(upstream.records) == before


def test_a_loss_refusal_names_only_what_was_chosen(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    """``--refuse-losses tools`` serves a request whose only loss is a name, and says so."""
    upstream.push(Script(text="Hello!"))
    raw, content = _raw(
        serve("gemma", refuse_losses=("tools",)).client(), False, messages=NAMED_USER
    )
    assert content == "Hello!"
    assert json.loads(raw.headers[HEADER]) == ["messages[0].name: not written"]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "choice",
    ["required", {"type": "function", "function": {"name": "get_weather"}}],
    ids=["required", "named"],
)
def test_a_forced_call_to_tools_the_format_leaves_out_is_a_400(
    serve: ServerFactory, upstream: FakeUpstream, stream: bool, choice: Any
) -> None:
    """DeepSeek V3.1's format writes calls but no tools: forcing a call would make the model
    call a function it never saw."""
    assert "tools: not written" in get_format("deepseek").render(PLAIN_USER, TOOLS).losses
    before = len(upstream.records)
    with pytest.raises(openai.BadRequestError) as caught:
        _raw(
            serve("deepseek").client(),
            stream,
            messages=PLAIN_USER,
            tools=TOOLS,
            tool_choice=choice,
        )
    body = caught.value.body
    assert isinstance(body, dict) and body["param"] == "tool_choice"
    assert "format 'deepseek' leaves the tools out" in body["message"]
    assert len(upstream.records) == before


def test_auto_with_tools_the_format_leaves_out_is_served_and_reported(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    upstream.push(Script(text="Hello!"))
    raw, content = _raw(
        serve("deepseek").client(), False, messages=PLAIN_USER, tools=TOOLS, tool_choice="auto"
    )
    assert content == "Hello!"
    assert json.loads(raw.headers[HEADER]) == ["tools: not written"]


def test_losses_are_counted_by_field_and_logged(
    serve: ServerFactory, upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve("gemma", log_level="info")
    before = scrape(server.url)
    upstream.push(Script(text="Hello!"), Script(text="Hello!"))
    messages = [*NAMED_USER, {"role": "assistant", "content": "Yes?"}, *NAMED_USER]
    with caplog.at_level(logging.INFO, logger="pawlette.serve"):
        for _ in range(2):
            response = httpx.post(
                server.url + "/v1/chat/completions",
                json={"model": "m", "messages": messages, "tools": TOOLS},
                timeout=20,
            )
            assert response.status_code == 200
    after = scrape(server.url)

    def moved(field: str) -> float:
        name = "pawlette_render_losses_total"
        return value(after, name, field=field) - value(before, name, field=field)

    assert moved("messages.name") == 4 and moved("tools") == 2
    logged = [record.getMessage() for record in caplog.records if "left" in record.getMessage()]
    assert len(logged) == 2
    assert "format 'gemma' left 3 field(s) out of the prompt" in logged[0]
    assert "messages[2].name: not written" in logged[0]


def test_the_header_is_bounded_and_says_how_many_it_leaves_out() -> None:
    losses = tuple(f"messages[{number}].name: not written" for number in range(1000))
    value_ = header_value(losses)
    assert len(value_) <= HEADER_BYTES and value_.isascii()
    lines = json.loads(value_)
    assert lines[0] == losses[0] and lines[-2] == losses[len(lines) - 2]
    assert lines[-1] == f"... and {1000 - (len(lines) - 1)} more losses (see the server log)"
    odd = ("messages[0].tool_call_id: 'a\\r\\nb\u00e9' not written",)
    assert json.loads(header_value(odd)) == list(odd) and header_value(odd).isascii()


def test_an_unknown_field_is_refused_at_start() -> None:
    config = ServeConfig(format="gemma", upstream="http://127.0.0.1:1", refuse_losses=("nmae",))
    with pytest.raises(ValueError, match="--refuse-losses: found 'nmae'; expected 'all' or"):
        check_config(config)
