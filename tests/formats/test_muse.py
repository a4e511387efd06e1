"""Muse Glimmer (:mod:`pawlette.formats.muse`): what the models write, read as vLLM's
``muse_glimmer`` tool parser reads it (its cases, and SGLang's ``MuseGlimmerDetector``'s
name mapping), whole, streamed and from token ids (a tokenizer built with the format's
special tokens); where pawlette reads otherwise; the template's own shapes (the tools block
in every system turn, the default turn, the result's name, a call turn followed by another
assistant message) against the template."""

from __future__ import annotations

import json
from typing import Any

import pytest

import pawlette
from pawlette.errors import PawletteError

from ..declared.model_output import check_every_way
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import corpus_reference

MUSE = pawlette.get_format("muse")
TEMPLATE = "muse-glimmer"
TOKENIZER = small_tokenizer(MUSE.special_markers)
NEXT = "<|eom|><|start|>assistant"


def call(name: str, parameters: str, invoked: str | None = None) -> str:
    """One call as the template writes it, after the turn's ``<|start|>assistant``."""
    return (
        f" to={name}<|message|><atem:function_calls>\n"
        f'<atem:invoke name="{invoked or name}">\n{parameters}'
        "</atem:invoke>\n</atem:function_calls>"
    )


def parameter(key: str, value: str) -> str:
    return f'<atem:parameter name="{key}">{value}</atem:parameter>\n'


# vLLM's cases (the completion after the prompt's <|start|>assistant; vLLM also takes a
# leading <|start|>assistant, which the prompt holds here).
AS_VLLM = [
    (  # a call after reasoning, its values kept as text where they are no JSON
        "to=self<|message|>Let me check the weather."
        + NEXT
        + call("weather.get", parameter("city", "Paris") + parameter("units", "celsius"))
        + "<|eot|>",
        None,
        "Let me check the weather.",
        [("weather.get", {"city": "Paris", "units": "celsius"})],
    ),
    (  # two calls, each a message of its own; JSON values read as JSON
        call("math.add", parameter("a", "1") + parameter("b", "2"))
        + NEXT
        + call("math.mul", parameter("a", "3") + parameter("b", "4"))
        + "<|eot|>",
        None,
        None,
        [("math.add", {"a": 1, "b": 2}), ("math.mul", {"a": 3, "b": 4})],
    ),
    (  # an invoke written in the reasoning is no call
        'to=self<|message|>I could call <atem:invoke name="evil.fn"><atem:parameter name="x">1'
        "</atem:parameter></atem:invoke> but I will not."
        + NEXT
        + " to=user<|message|>The answer is 42.<|eot|>",
        "The answer is 42.",
        'I could call <atem:invoke name="evil.fn"><atem:parameter name="x">1</atem:parameter>'
        "</atem:invoke> but I will not.",
        [],
    ),
    ("to=user<|message|>Just a plain answer.<|eot|>", "Just a plain answer.", None, []),
    (  # objects, arrays and booleans as JSON
        call("api.call", parameter("payload", '{"nested": [1, 2, 3]}') + parameter("flag", "true"))
        + "<|eot|>",
        None,
        None,
        [("api.call", {"payload": {"nested": [1, 2, 3]}, "flag": True})],
    ),
    # A message with no recipient is the answer; so is one addressed to the user after
    # the calls (vLLM gives both).
    ("<|message|>Untagged.<|eot|>", "Untagged.", None, []),
    (
        call("get_weather", parameter("city", "Oslo")) + NEXT + " to=user<|message|>Done.<|eot|>",
        "Done.",
        None,
        [("get_weather", {"city": "Oslo"})],
    ),
]


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(MUSE, TOKENIZER, text)
    (message,) = messages
    calls = [(item.name, json.loads(item.arguments)) for item in message.tool_calls]
    return message.text or None, message.reasoning or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "reasoning", "calls"), AS_VLLM)
def test_what_models_write_reads_as_vllm_reads_it(
    text: str, content: str | None, reasoning: str | None, calls: list[Any]
) -> None:
    assert _reading(text) == (content, reasoning, calls, [])


def _tool(name: str, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties or {"city": {"type": "string"}}}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


@pytest.mark.parametrize(
    ("written", "registered", "read"),
    [
        # The doubled form the model writes for a tool without a namespace (its recipient
        # is listed as "get_weather.*"), as vLLM and SGLang map it.
        ("get_weather.get_weather", ["get_weather"], "get_weather"),
        ("weather.get", ["weather.get"], "weather.get"),
        ("foo.get_weather", ["get_weather"], "get_weather"),  # the one tool of that leaf
        ("get_weather", ["get_weather"], "get_weather"),
    ],
)
def test_a_name_is_mapped_to_the_requests_tool(
    written: str, registered: list[str], read: str
) -> None:
    text = call(written, parameter("city", "Paris")) + "<|eot|>"
    parsed = MUSE.parse(text, tools=[_tool(name) for name in registered])
    assert [item["function"]["name"] for item in parsed.message["tool_calls"]] == [read]
    assert not parsed.warnings


def test_without_tools_a_name_is_read_as_written() -> None:
    text = call("get_weather.get_weather", parameter("city", "Paris")) + "<|eot|>"
    assert _reading(text)[2] == [("get_weather.get_weather", {"city": "Paris"})]


def test_a_name_no_tool_has_keeps_the_call_as_content_with_a_warning() -> None:
    # vLLM passes "x.get" through (two tools end in "get"); pawlette reads calls to the
    # request's tools only.
    text = call("x.get", parameter("city", "Paris")) + "<|eot|>"
    parsed = MUSE.parse(text, tools=[_tool("weather.get"), _tool("time.get")])
    assert not parsed.message.get("tool_calls")
    assert parsed.warnings and "no tool named 'x.get'" in parsed.warnings[0].message


def test_a_string_parameter_keeps_its_text() -> None:
    # vLLM and SGLang read every value as JSON where it is JSON ("5" is 5), whatever the
    # schema; the template writes a string as it is, so a string parameter keeps its text.
    tool = _tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})
    text = call("get_weather", parameter("city", "5") + parameter("days", "5")) + "<|eot|>"
    parsed = MUSE.parse(text, tools=[tool])
    (found,) = parsed.message["tool_calls"]
    assert json.loads(found["function"]["arguments"]) == {"city": "5", "days": 5}


def test_a_call_cut_before_its_close_is_content_with_a_warning() -> None:
    text = ' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
    content, reasoning, calls, warnings = _reading(text)
    assert (content, reasoning, calls) == (text, None, [])
    assert warnings


def test_to_in_an_answer_is_text() -> None:
    # Only the turn's head, the reasoning's end and a call's end open a call.
    text = " to=user<|message|>Set x to=5 and go to=there.<|eot|>"
    assert _reading(text) == ("Set x to=5 and go to=there.", None, [], [])


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
CLOCK = {
    "type": "function",
    "function": {
        "name": "clock.now",
        "description": "The time",
        "parameters": {"type": "object", "properties": {}},
    },
}


def _calls(*names: str, ids: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": ids[number] if ids else f"call_{number}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps({"city": "Oslo"})},
            }
            for number, name in enumerate(names)
        ],
    }


AS_THE_TEMPLATE = [
    pytest.param(  # the tools and recipients in every system turn, and its own line
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "system", "content": "Reasoning effort: low."},
            {"role": "user", "content": "Weather?"},
        ],
        [WEATHER, CLOCK],
        True,
        id="system-turns",
    ),
    pytest.param(  # a later system message only: no default turn
        [{"role": "user", "content": "Hi"}, {"role": "system", "content": "Be brief."}],
        [WEATHER],
        True,
        id="later-system",
    ),
    pytest.param(  # a result names its tool by its name, by its call's id, or its id
        [
            {"role": "user", "content": "Weather?"},
            _calls("get_weather", "clock.now", ids=("a", "b")),
            {"role": "tool", "tool_call_id": "b", "content": "09:00"},
            {"role": "tool", "tool_call_id": "zz", "content": "none"},
            {"role": "tool", "tool_call_id": "a", "name": "weather", "content": "3 C"},
        ],
        [WEATHER, CLOCK],
        True,
        id="result-names",
    ),
    pytest.param(  # a turn of calls followed by another assistant message ends <|eom|>
        [
            {"role": "user", "content": "Weather?"},
            _calls("get_weather"),
            {"role": "assistant", "content": "Let me wait.", "reasoning_content": "Hm."},
        ],
        [WEATHER],
        False,
        id="calls-then-assistant",
    ),
]


@pytest.mark.parametrize(("messages", "tools", "prompt"), AS_THE_TEMPLATE)
def test_renders_as_the_template(messages: list[Any], tools: list[Any], prompt: bool) -> None:
    reference = corpus_reference(TEMPLATE, today=MUSE.options.today, empty_content=True)
    expected = reference.render(messages, tools, add_generation_prompt=prompt).text
    assert MUSE.render(messages, tools, add_generation_prompt=prompt).text == expected


def test_a_tool_without_description_is_written_with_null() -> None:
    # The template refuses it (tojson of an undefined value); pawlette writes null.
    tool = _tool("get_weather")
    messages = [{"role": "user", "content": "Hi"}]
    reference = corpus_reference(TEMPLATE, today=MUSE.options.today)
    assert reference.render(messages, [tool], add_generation_prompt=True).text is None
    text = MUSE.render(messages, [tool], add_generation_prompt=True).text
    assert '{"name": "get_weather", "description": null, "parameters": {' in text


def test_the_text_beside_calls_is_a_recorded_loss() -> None:
    message = {**_calls("get_weather"), "content": "Checking."}
    rendering = MUSE.render([{"role": "user", "content": "Hi"}, message], [WEATHER])
    assert "Checking." not in rendering.text
    assert rendering.losses


def test_the_tools_come_back_once_from_a_conversation() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": "Still brief."},
        {"role": "user", "content": "Weather?"},
    ]
    parsed = MUSE.parse_conversation(MUSE.render(messages, [WEATHER, CLOCK]).text, strict=True)
    request = parsed.to_request()
    assert request["messages"] == messages
    assert [tool["function"]["name"] for tool in request["tools"]] == ["get_weather", "clock.now"]


def test_a_string_call_argument_that_is_no_object_is_refused() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "[1]"}}
        ],
    }
    with pytest.raises(PawletteError, match="a JSON object"):
        MUSE.render([{"role": "user", "content": "Hi"}, message])


def test_the_reasoning_strength_is_an_option_passed_to_the_template() -> None:
    import dataclasses

    low = MUSE.variant(dataclasses.replace(MUSE.options, reasoning_strength="low"))
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    reference = corpus_reference(
        TEMPLATE, today=MUSE.options.today, variables={"reasoning_strength": "low"}
    )
    text = low.render(messages, [WEATHER], add_generation_prompt=True).text
    assert "\n\nReasoning strength: low.\n\n" in text
    assert text == reference.render(messages, [WEATHER], add_generation_prompt=True).text


def test_tags_without_the_templates_newlines_stay_content_with_a_warning() -> None:
    # The peers' regular expressions take them; the template always writes the newlines.
    text = (
        ' to=f<|message|><atem:function_calls><atem:invoke name="f"><atem:parameter name="a">'
        "1</atem:parameter></atem:invoke></atem:function_calls><|eot|>"
    )
    content, reasoning, calls, warnings = _reading(text)
    assert (content, reasoning, calls) == (text[: -len("<|eot|>")], None, [])
    assert warnings
