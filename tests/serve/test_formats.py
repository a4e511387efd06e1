"""Every registered format, served: the openai SDK against pawlette against a scripted engine.

For each format and scenario, the engine plays the completion the format itself renders for the
scenario's assistant message (cut at the format's stop markers, as engines do, and split into
small pieces so markers straddle events); the client must get exactly what ``fmt.parse`` reads
from that completion, streaming and not.
"""

from __future__ import annotations

import openai
import pytest

from pawlette.formats import formats, get_format

from ..helpers import WITHOUT_CALLS, WITHOUT_SYSTEM
from .conftest import ServerFactory
from .scenarios import (
    PROMPT,
    SCENARIOS,
    TOOLS,
    ask,
    completion_for,
    message_from_chunks,
    message_from_sdk,
    prompt_for,
    system_refused,
    without_ids,
)
from .upstream import DEFAULT_USAGE, FakeUpstream, Script, cut_at_stop

CALL_SCENARIOS = ("call", "text_and_call", "parallel_calls")
ALL = [(name, scenario) for name in formats() for scenario in SCENARIOS]
CASES = [case for case in ALL if completion_for(get_format(case[0]), case[1]) is not None]
SIZES = ((1, 2, 3, 5, 8, 13), (4,), (1,))

# What each format cannot write, by its own declaration (UnsupportedFeature at render).
INEXPRESSIBLE = {
    ("chatglm3", "reasoning"),
    ("breeze", "text_and_call"),
    ("breeze", "reasoning"),
    ("omni", "parallel_calls"),
    ("llama3", "parallel_calls"),  # one call per turn (see pawlette/formats/llama3.py)
    ("gigachat", "parallel_calls"),  # the template writes a turn's first call only
    # No call syntax: calls are a recorded loss (see tests/serve/scenarios.py).
    *((name, scenario) for name in WITHOUT_CALLS for scenario in CALL_SCENARIOS),
}


def test_only_the_documented_scenarios_are_inexpressible() -> None:
    assert set(ALL) - set(CASES) == {case for case in INEXPRESSIBLE if case[0] in formats()}


@pytest.mark.parametrize("format_name", formats())
def test_a_system_message_is_served_or_refused_with_its_path(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str
) -> None:
    """A format whose template refuses system messages answers 400 naming the message, and
    sends nothing upstream; the others send the system message's render."""
    fmt = get_format(format_name)
    before = len(upstream.records)
    if not system_refused(fmt):
        upstream.push(Script(text=_expected(format_name, "text")[0]))
        serve(format_name).client().chat.completions.create(model="m", messages=PROMPT)
        assert upstream.last().body["prompt"] == fmt.render(PROMPT, add_generation_prompt=True).text
        return
    assert format_name in WITHOUT_SYSTEM
    with pytest.raises(openai.BadRequestError) as caught:
        serve(format_name).client().chat.completions.create(model="m", messages=PROMPT)
    body = caught.value.body
    assert isinstance(body, dict) and body["param"] == "messages[0].role"
    assert "'system'" in body["message"] and format_name in body["message"]
    assert len(upstream.records) == before


def _expected(format_name: str, scenario: str) -> tuple[str, dict[str, object], str]:
    fmt = get_format(format_name)
    completion = completion_for(fmt, scenario)
    assert completion is not None  # CASES holds only expressible scenarios
    parsed = fmt.parse(completion, tools=TOOLS)
    return completion, without_ids(parsed.message), parsed.finish_reason


def _check_ids(message: dict[str, object]) -> None:
    calls = message.get("tool_calls") or []
    assert isinstance(calls, list)
    ids = [call["id"] for call in calls]
    assert all(isinstance(value, str) and value for value in ids)
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize(("format_name", "scenario"), CASES)
def test_non_streaming(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, scenario: str
) -> None:
    completion, expected, finish_reason = _expected(format_name, scenario)
    server = serve(format_name)
    fmt = get_format(format_name)
    prompt = prompt_for(fmt)
    upstream.push(Script(text=completion))
    answer = server.client().chat.completions.create(model="anything", messages=prompt, tools=TOOLS)
    body = upstream.last().body
    assert body["prompt"] == fmt.render(prompt, TOOLS, add_generation_prompt=True).text
    assert body["stop"] == list(fmt.stop) and body["stream"] is False
    choice = answer.choices[0]
    message = message_from_sdk(choice.message)
    _check_ids(message)
    assert without_ids(message) == expected
    assert choice.finish_reason == finish_reason
    assert answer.object == "chat.completion" and answer.model == "fake-model"
    assert answer.usage is not None and answer.usage.total_tokens == DEFAULT_USAGE["total_tokens"]


@pytest.mark.parametrize("sizes", SIZES, ids=lambda sizes: "-".join(map(str, sizes)))
@pytest.mark.parametrize(("format_name", "scenario"), CASES)
def test_streaming(
    serve: ServerFactory,
    upstream: FakeUpstream,
    format_name: str,
    scenario: str,
    sizes: tuple[int, ...],
) -> None:
    completion, expected, finish_reason = _expected(format_name, scenario)
    server = serve(format_name)
    upstream.push(Script(text=completion, sizes=sizes))
    stream = server.client().chat.completions.create(
        model="anything",
        messages=prompt_for(get_format(format_name)),
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert upstream.last().body["stream_options"] == {"include_usage": True}
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(chunk.id == chunks[0].id for chunk in chunks)
    message, finish, usage = message_from_chunks(chunks)
    _check_ids(message)
    assert without_ids(message) == expected
    assert finish == finish_reason
    assert chunks[-1].choices == [] and usage is not None
    assert usage.total_tokens == DEFAULT_USAGE["total_tokens"]


@pytest.mark.parametrize("format_name", formats())
def test_streaming_without_usage_has_no_usage_chunk(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str
) -> None:
    completion, expected, _ = _expected(format_name, "text")
    upstream.push(Script(text=completion))
    chunks = list(
        serve(format_name)
        .client()
        .chat.completions.create(
            model="m",
            messages=prompt_for(get_format(format_name)),
            stream=True,
        )
    )
    assert "stream_options" not in upstream.last().body
    assert all(chunk.usage is None for chunk in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert without_ids(message_from_chunks(chunks)[0]) == expected


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", formats())
def test_length_finish_reason_is_passed_on(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool
) -> None:
    completion, _, _ = _expected(format_name, "text")
    fmt = get_format(format_name)
    cut = completion[: len(completion) // 2]
    upstream.push(Script(text=cut, finish_reason="length"))
    client = serve(format_name).client()
    messages = prompt_for(fmt)
    message, finish = ask(client, stream, model="m", messages=messages, max_tokens=3)
    assert upstream.last().body["max_tokens"] == 3
    assert finish == fmt.parse(cut, finish_reason="length").finish_reason == "length"
    assert without_ids(message) == without_ids(fmt.parse(cut, finish_reason="length").message)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("format_name", formats())
def test_malformed_output_is_kept_as_text(
    serve: ServerFactory, upstream: FakeUpstream, format_name: str, stream: bool
) -> None:
    """Output that breaks the format (a call whose JSON is cut off, markers out of place)
    reaches the client exactly as the format's lenient parse reads it: never lost."""
    fmt = get_format(format_name)
    call = completion_for(fmt, "call")
    if format_name in WITHOUT_CALLS:  # no call to break: its text, markers out of place
        assert call is None
        call = completion_for(fmt, "text")
    assert call is not None, f"{format_name} cannot write a call"
    arguments = '{"city": "Paris"}'
    broken = call.replace(arguments, '{"city": "Par') if arguments in call else call[:-3]
    broken = "".join(reversed(fmt.special_markers[:2])) + broken
    expected = fmt.parse(cut_at_stop(broken, list(fmt.stop)), tools=TOOLS)
    upstream.push(Script(text=broken, sizes=(2, 1)))
    client = serve(format_name).client()
    message, finish = ask(client, stream, model="m", messages=prompt_for(fmt), tools=TOOLS)
    assert without_ids(message) == without_ids(expected.message)
    assert finish == expected.finish_reason
