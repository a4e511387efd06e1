"""A JSON call to a tool the request does not offer reaches the client as the text the model
wrote (content, finish reason ``stop``), exactly as ``fmt.parse`` reads it with the request's
tools, streamed or not, with argument streaming or not; the server logs the warning."""

from __future__ import annotations

import logging

import pytest

from pawlette.formats import get_format

from .conftest import ServerFactory
from .scenarios import TOOLS, ask, completion_for, prompt_for, without_ids
from .upstream import FakeUpstream, Script, cut_at_stop


@pytest.mark.parametrize("stream_arguments", [False, True])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", ["hermes", "llama3", "firefunction", "cohere"])
def test_a_call_to_a_tool_not_offered_reaches_the_client_as_text(
    serve: ServerFactory,
    upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
    format_name: str,
    stream: bool,
    stream_arguments: bool,
) -> None:
    # The server first: starting one configures the logging (its levels reset).
    client = serve(format_name, stream_arguments=stream_arguments).client()
    caplog.set_level(logging.INFO, logger="pawlette.serve")
    fmt = get_format(format_name)
    call = completion_for(fmt, "call")
    assert call is not None and call.count('"get_weather"') == 1, call
    completion = call.replace('"get_weather"', '"lookup"')
    expected = fmt.parse(cut_at_stop(completion, list(fmt.stop)), tools=TOOLS)
    assert not expected.message.get("tool_calls") and len(expected.warnings) == 1
    upstream.push(Script(text=completion, sizes=(2, 1)))
    message, finish = ask(client, stream, model="m", messages=prompt_for(fmt), tools=TOOLS)
    assert not message.get("tool_calls"), message
    assert '"lookup"' in message["content"]
    assert without_ids(message) == without_ids(expected.message)
    assert finish == expected.finish_reason == "stop"
    assert "no tool named 'lookup'" in caplog.text
