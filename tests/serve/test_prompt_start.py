"""A turn whose generation prompt leaves the model elsewhere than the usual one, served.

DeepSeek V3.1's thinking prompt opens ``<think>`` after a user message, so the model writes
``reasoning</think>answer``; after tool results its template opens nothing and the model
answers plainly, and after an answer it writes no prompt at all.  The server reads (and
forces) each turn from where its prompt leaves the model (:meth:`pawlette.Format.start_after`).
"""

from __future__ import annotations

import json

import pytest

from .conftest import ServerFactory
from .upstream import FakeUpstream, Script

THINKING = "deepseek:v3.1-thinking"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CALL = {
    "id": "a",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}
AFTER_RESULTS = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "a", "content": "18"},
]
AFTER_USER = AFTER_RESULTS[:1]


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_after_results_is_content(
    serve: ServerFactory, upstream: FakeUpstream, stream: bool
) -> None:
    client = serve(THINKING).client()
    upstream.push(Script(text="It is 18°C.<｜end▁of▁sentence｜>", sizes=(2,)))
    if stream:
        chunks = list(
            client.chat.completions.create(
                model="m", messages=AFTER_RESULTS, tools=TOOLS, stream=True
            )
        )
        deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
        content = "".join(delta.content or "" for delta in deltas)
        reasoning = "".join(getattr(delta, "reasoning_content", None) or "" for delta in deltas)
    else:
        message = (
            client.chat.completions.create(model="m", messages=AFTER_RESULTS, tools=TOOLS)
            .choices[0]
            .message
        )
        content = message.content or ""
        reasoning = getattr(message, "reasoning_content", None) or ""
    assert (content, reasoning) == ("It is 18°C.", "")
    assert upstream.last().body["prompt"].endswith("<｜tool▁output▁end｜>")


def test_an_answer_after_a_user_message_starts_inside_the_block(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    upstream.push(Script(text="Look it up.</think>Let me check."))
    message = (
        serve(THINKING)
        .client()
        .chat.completions.create(model="m", messages=AFTER_USER, tools=TOOLS)
        .choices[0]
        .message
    )
    assert message.content == "Let me check."
    assert getattr(message, "reasoning_content", None) == "Look it up."


def test_a_forced_call_after_results_closes_no_block(
    serve: ServerFactory, upstream: FakeUpstream
) -> None:
    call = 'get_weather<｜tool▁sep｜>{"city": "Lyon"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    upstream.push(Script(text=call))
    answer = (
        serve(THINKING)
        .client()
        .chat.completions.create(
            model="m", messages=AFTER_RESULTS, tools=TOOLS, tool_choice="required"
        )
    )
    prompt = upstream.last().body["prompt"]
    assert prompt.endswith("<｜tool▁output▁end｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>")
    (call,) = answer.choices[0].message.tool_calls or []
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Lyon"}
    assert answer.choices[0].message.content in (None, "")


GREETING = {"role": "assistant", "content": "Hello! How can I help?"}
NO_BLOCK_OPENED = [
    # DeepSeek V3.2's template writes no generation prompt after the system text alone.
    ("deepseek_dsml:v3.2-thinking", [{"role": "system", "content": "Be brief."}]),
    # DeepSeek V3.1's writes none after an answer.
    ("deepseek:v3.1-thinking", [*AFTER_USER, GREETING]),
    # Hunyuan's leaves the last answer open: the model goes on with it.
    ("hy3:low", [*AFTER_USER, GREETING]),
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(("name", "messages"), NO_BLOCK_OPENED)
def test_an_answer_after_a_prompt_that_opened_no_block_is_content(
    serve: ServerFactory,
    upstream: FakeUpstream,
    name: str,
    messages: list[dict[str, object]],
    stream: bool,
) -> None:
    client = serve(name).client()
    upstream.push(Script(text=" It is 18.", sizes=(3,)))
    if stream:
        chunks = list(client.chat.completions.create(model="m", messages=messages, stream=True))
        deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
        content = "".join(delta.content or "" for delta in deltas)
        reasoning = "".join(getattr(delta, "reasoning_content", None) or "" for delta in deltas)
    else:
        message = client.chat.completions.create(model="m", messages=messages).choices[0].message
        content = message.content or ""
        reasoning = getattr(message, "reasoning_content", None) or ""
    assert (content.strip(), reasoning) == ("It is 18.", "")
    assert not upstream.last().body["prompt"].endswith(("<think>", "<think:opensource>"))
