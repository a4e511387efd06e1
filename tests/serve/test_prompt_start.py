"""A turn whose generation prompt leaves the model elsewhere than the usual one, served.

DeepSeek V3.1's thinking prompt opens ``<think>`` after a user message, so the model writes
``reasoning</think>answer``; after tool results its template opens nothing and the model
answers plainly, and after an answer it writes no prompt at all.  The server reads (and
forces) each turn from where its prompt leaves the model (:meth:`pawlette.Format.start_after`).
"""

from __future__ import annotations

import json

import openai
import pytest

from pawlette.emit.tool_choice import ToolChoice
from pawlette.formats import get_format
from pawlette.openai import tools_from_openai
from pawlette.serve.engines import ENGINES
from pawlette.serve.pipeline import Completion
from pawlette.serve.tool_choice import plan_tool_choice

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
    """The plan forces the call right after the results; the server refuses the request
    itself, since the format leaves the tools out of the prompt (the model never saw them)."""
    fmt = get_format(THINKING)
    tools = tools_from_openai(TOOLS)
    prompt = fmt.render(AFTER_RESULTS, TOOLS, add_generation_prompt=True).text
    plan = plan_tool_choice(
        fmt, ENGINES["generic"], tools, ToolChoice("required", None), True, prompt=prompt
    )
    forced = prompt + plan.prefix
    assert forced.endswith("<｜tool▁output▁end｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>")
    call_text = 'get_weather<｜tool▁sep｜>{"city": "Lyon"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    message = Completion(fmt, plan, tools).message(call_text, "stop")
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Lyon"}
    assert message.get("content") in (None, "")
    before = len(upstream.records)
    with pytest.raises(openai.BadRequestError) as caught:
        serve(THINKING).client().chat.completions.create(
            model="m", messages=AFTER_RESULTS, tools=TOOLS, tool_choice="required"
        )
    body = caught.value.body
    assert isinstance(body, dict) and body["param"] == "tool_choice"
    assert len(upstream.records) == before


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
