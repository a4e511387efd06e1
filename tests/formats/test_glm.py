"""GLM's formats (:mod:`pawlette.formats.glm`): what the models write, read as the peers read it
(llama.cpp's, SGLang's and vLLM's parser tests, carried over as data in
``families/data/glm.json``, each with its source and the parameter types of the peers' test
tools the case needs), what the declaration decided, the variants against their templates, and
token ids with a tokenizer holding GLM's special tokens."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.export import export_jinja

from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import compare_renders, corpus_reference, own_turns, strip_text

CASES = json.loads((Path(__file__).parent / "families" / "data" / "glm.json").read_text())
READ = [case for case in CASES if case["pawlette"] == "read"]


def _tools(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "parameters": {"type": "object", "properties": properties},
            },
        }
        for name, properties in case["tools"].items()
    ]


def _prompt(case: dict[str, Any]) -> str:
    """The generation prompt the case's output follows (GLM-4.7's opens ``<think>``)."""
    if case["format"] == "glm":
        return "<|assistant|>"
    return "<|assistant|><think>" if case["prompt_opened_reasoning"] else "<|assistant|></think>"


def _parse(case: dict[str, Any]) -> Any:
    fmt = pawlette.get_format(case["format"])
    return fmt.parse(case["output"], tools=_tools(case), prompt=_prompt(case))


def _calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['format']}:{case['source'].rpartition('#')[2][:48]}"


@pytest.mark.parametrize("case", READ, ids=_case_id)
def test_what_the_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    parsed = _parse(case)
    message, expected = parsed.message, case["expected"]
    assert (message.get("content") or None) == (expected["content"] or None)
    assert (message.get("reasoning_content") or None) == (expected["reasoning_content"] or None)
    assert _calls(message) == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
    assert not parsed.warnings


def _decided(decision: str) -> list[dict[str, Any]]:
    return [case for case in CASES if case["pawlette"] == decision]


@pytest.mark.parametrize("case", _decided("unknown-tool-stays-text"), ids=_case_id)
def test_a_call_to_an_unknown_tool_stays_text_with_a_warning(case: dict[str, Any]) -> None:
    """Decided: SGLang drops a call to a tool the request does not declare; pawlette keeps
    it as the text the model wrote and warns (nothing silently dropped)."""
    parsed = _parse(case)
    assert not parsed.message.get("tool_calls")
    assert parsed.message["content"] == case["output"]
    assert any("invalid_func" in str(warning) for warning in parsed.warnings)


@pytest.mark.parametrize("case", _decided("escaped-quotes-not-repaired"), ids=_case_id)
def test_backslash_escaped_json_is_not_repaired(case: dict[str, Any]) -> None:
    """Decided: SGLang un-escapes an array written as ``[{\\"id\\": ...}]``; pawlette does not
    guess (llama.cpp neither): the value is no JSON of its schema's type, so the call stays
    text, with a warning."""
    parsed = _parse(case)
    assert not parsed.message.get("tool_calls")
    assert parsed.message["content"] == case["output"]
    assert parsed.warnings


def test_an_unclosed_block_is_reasoning() -> None:
    """Decided: vLLM's glm45 reader returns ``<think>X`` unclosed as content when not
    streaming (and as reasoning when streaming); pawlette reads it as reasoning cut short,
    whole and streamed alike (llama.cpp's and SGLang's rule)."""
    (case,) = _decided("unclosed-block-is-reasoning")
    parsed = _parse(case)
    assert parsed.message["reasoning_content"] == "This is a reasoning section"
    assert not parsed.message.get("content")


def test_every_peer_case_is_read_or_decided() -> None:
    # continue-final-message: llama.cpp's prefill continuation, not a completion of a prompt.
    assert {case["pawlette"] for case in CASES} <= {
        "read",
        "continue-final-message",
        "unknown-tool-stays-text",
        "escaped-quotes-not-repaired",
        "unclosed-block-is-reasoning",
    }
    assert len(READ) >= 24


# ------------------------------------------------------------------ the wire format

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather forecast.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["location"],
        },
    },
}
TOOL_LINE = json.dumps(WEATHER, ensure_ascii=False)


def _call(name: str, arguments: dict[str, Any], number: int = 0) -> dict[str, Any]:
    return {
        "id": f"call{number}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Zürich? <|user|> is text here."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("get_weather", {"location": "Zürich", "days": 2})],
        },
        {"role": "tool", "tool_call_id": "call0", "content": '{"temp_c": 3}'},
        {"role": "assistant", "content": "  3 °C.\n", "reasoning_content": "\nIt is cold. "},
    ],
    "tools": [WEATHER],
}

TOOLS_46 = (
    "[gMASK]<sop><|system|>\n# Tools\n\nYou may call one or more functions to assist with the"
    " user query.\n\nYou are provided with function signatures within <tools></tools> XML"
    f" tags:\n<tools>\n{TOOL_LINE}\n</tools>\n\nFor each function call, output the function"
    " name and arguments within the following XML format:\n<tool_call>{function-name}\n"
    "<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n"
    "<arg_key>{arg-key-2}</arg_key>\n<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>"
)
WRITTEN_46 = (
    TOOLS_46 + "<|system|>\nYou are terse.<|user|>\nWeather in Zürich? <|user|> is text here."
    "<|assistant|>\n<think></think>\n<tool_call>get_weather\n<arg_key>location</arg_key>\n"
    "<arg_value>Zürich</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n"
    '</tool_call><|observation|>\n<tool_response>\n{"temp_c": 3}\n</tool_response>'
    "<|assistant|>\n<think>It is cold.</think>\n3 °C."
)
WRITTEN_47 = (
    TOOLS_46.replace("\n<arg_", "<arg_")
    .replace("{function-name}\n", "{function-name}")
    .replace("...\n</tool_call>", "...</tool_call>")
    .replace("</arg_value>\n...", "</arg_value>...")
    + "<|system|>You are terse.<|user|>Weather in Zürich? <|user|> is text here.<|assistant|>"
    "</think><tool_call>get_weather<arg_key>location</arg_key><arg_value>Zürich</arg_value>"
    "<arg_key>days</arg_key><arg_value>2</arg_value></tool_call><|observation|>"
    '<tool_response>{"temp_c": 3}</tool_response><|assistant|><think>It is cold.</think>3 °C.'
)


def test_the_wire_format_of_both_layouts_and_what_they_trim() -> None:
    rendering = pawlette.get_format("glm").render(REQUEST)
    assert rendering.text == WRITTEN_46
    assert {str(loss).partition(":")[0] for loss in rendering.losses} >= {
        "messages[4].content",
        "messages[4].reasoning_content",
    }
    assert pawlette.get_format("glm:4.7").render(REQUEST).text == WRITTEN_47


def test_the_generation_prompts_follow_the_thinking_switch() -> None:
    messages = REQUEST["messages"][:2]
    prompts = {
        name: pawlette.get_format(name).render(messages, add_generation_prompt=True).text
        for name in ("glm", "glm:4.6-no-thinking", "glm:4.7", "glm:4.7-no-thinking")
    }
    assert prompts["glm"].endswith("is text here.<|assistant|>")
    # GLM-4.6 without thinking: /nothink after the user's text, an empty block in the prompt.
    assert prompts["glm:4.6-no-thinking"].endswith(
        "is text here./nothink<|assistant|>\n<think></think>"
    )
    assert prompts["glm:4.7"].endswith("is text here.<|assistant|><think>")
    assert prompts["glm:4.7-no-thinking"].endswith("is text here.<|assistant|></think>")


def test_the_model_ends_its_turn_with_the_next_turns_opener_or_eos() -> None:
    for name, prompt, answer in (
        ("glm", "<|assistant|>", "\n<think>R</think>\n3 °C."),
        ("glm:4.7", "<|assistant|><think>", "R</think>3 °C."),
    ):
        fmt = pawlette.get_format(name)
        assert set(fmt.stop) == {"<|user|>", "<|observation|>", "<|endoftext|>"}
        for stop in fmt.stop:  # a stop the caller leaves in the completion ends the turn
            parsed = fmt.parse(answer + stop, prompt=prompt)
            assert parsed.message == {
                "role": "assistant",
                "content": "3 °C.",
                "reasoning_content": "R",
            }
            assert not parsed.warnings


def test_a_conversation_parses_back_whole() -> None:
    for name, written in (("glm", WRITTEN_46), ("glm:4.7", WRITTEN_47)):
        # (From text, a marker spelled in a message is read as the marker: none here.)
        written = written.replace(" <|user|> is text here.", "")
        parsed = pawlette.get_format(name).parse_conversation(written, strict=True)
        messages = parsed.to_request()["messages"]
        assert [message["role"] for message in messages] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert messages[4]["content"] == "3 °C."
        assert messages[4]["reasoning_content"] == "It is cold."
        assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == {
            "location": "Zürich",
            "days": 2,
        }


def test_nothink_is_layout_when_read() -> None:
    fmt = pawlette.get_format("glm:4.6-no-thinking")
    messages = [{"role": "user", "content": "Weather in Zürich?"}]
    written = fmt.render(messages, add_generation_prompt=True).text
    assert (
        written == "[gMASK]<sop><|user|>\nWeather in Zürich?/nothink<|assistant|>\n<think></think>"
    )
    parsed = fmt.parse_conversation(written, strict=True)
    assert parsed.to_request()["messages"][0] == messages[0]
    # The model's text after the prompt's empty block: the newline before it is layout.
    assert fmt.parse("\n3 °C.", prompt=written).message["content"] == "3 °C."


def test_both_call_layouts_are_read_by_both_variants() -> None:
    newlines = (
        "\n<tool_call>get_weather\n<arg_key>location</arg_key>\n"
        "<arg_value>Oslo</arg_value>\n</tool_call>"
    )
    compact = (
        "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Oslo</arg_value></tool_call>"
    )
    for name, prompt in (("glm", "<|assistant|>"), ("glm:4.7", "<|assistant|></think>")):
        for text in (newlines, compact):
            parsed = pawlette.get_format(name).parse(text, tools=[WEATHER], prompt=prompt)
            assert _calls(parsed.message) == [("get_weather", {"location": "Oslo"})], (name, text)


def test_arguments_that_are_no_object_are_refused() -> None:
    request = {
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "[1]"},
                    }
                ],
            },
        ],
        "tools": [WEATHER],
    }
    with pytest.raises(pawlette.RequestError, match=r"messages\[1\]\.tool_calls\[0\]"):
        pawlette.get_format("glm").render(request)


# ------------------------------------------------------------------ the variants


def test_the_variants_render_as_their_templates() -> None:
    """The variables of one template that the shared family cases do not cover: GLM-4.6
    without thinking; GLM-4.7 on turns without reasoning (its case gives every turn some),
    without thinking, and keeping every turn's reasoning (``clear_thinking=false``; an empty
    reasoning text aside, see the docstring)."""
    for name, template, switches in (
        ("glm:4.6-no-thinking", "GLM-4.6", {}),
        ("glm:4.7", "GLM-4.7-Flash", {}),
        ("glm:4.7-no-thinking", "GLM-4.7-Flash", {}),
        ("glm:4.7-kept-thinking", "GLM-4.7-Flash", {"reasoning_always": True}),
    ):
        fmt = pawlette.get_format(name)
        layout = fmt.declaration
        reference = corpus_reference(template, variables=layout.reference_variables())
        conversations = generate_conversations(10, seed=1, avoid=fmt.special_markers, **switches)
        report = compare_renders(fmt, reference, conversations)
        assert report.agrees, report.describe()


def test_no_thinking_turns_parse_back() -> None:
    """Without thinking the prompt closes the block: a turn without reasoning extends it."""
    for name, template in (
        ("glm:4.6-no-thinking", "GLM-4.6"),
        ("glm:4.7-no-thinking", "GLM-4.7-Flash"),
    ):
        fmt = pawlette.get_format(name)
        reference = corpus_reference(template, variables=fmt.declaration.reference_variables())
        conversations = generate_conversations(
            8, seed=2, avoid=fmt.special_markers, reasoning=False
        )
        report = own_turns(fmt, reference, conversations, normalise=strip_text)
        assert report.agrees, report.describe()


@pytest.mark.parametrize(
    "name", ["glm:4.6-no-thinking", "glm:4.7", "glm:4.7-no-thinking", "glm:4.7-kept-thinking"]
)
def test_a_variants_exported_template_renders_as_it_does(name: str) -> None:
    """The shared cross-artifact checks run on the registered default; each variant's own
    template and render agree here, text and training mask."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from ..export.support import merged, trainable_spans

    fmt = pawlette.get_format(name)
    template = export_jinja(fmt)
    for conversation in generate_conversations(
        6, seed=3, avoid=fmt.special_markers, names=False, tool_names=False, texts=("plain",)
    ):
        request = conversation.request
        for prompt in (False, True):
            rendering = fmt.render(request, add_generation_prompt=prompt)
            messages = [
                {key: value for key, value in message.items() if value is not None}
                for message in copy.deepcopy(request["messages"])
            ]
            for message in messages:
                for call in message.get("tool_calls") or []:
                    call["function"] = {
                        **call["function"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    }
            rendered, spans = render_jinja_template(
                [messages],
                tools=request.get("tools"),
                chat_template=template,
                add_generation_prompt=prompt,
                return_assistant_tokens_mask=True,
            )
            assert rendered[0] == rendering.text
            assert merged([tuple(span) for span in spans[0]]) == trainable_spans(rendering)


# ------------------------------------------------------------------ token ids


def test_ids_keep_user_text_out_of_the_special_tokens() -> None:
    fmt = pawlette.get_format("glm")
    tokenizer = small_tokenizer(fmt.special_markers)
    result = pawlette.tokenize(fmt, tokenizer, REQUEST)
    ids = list(result.input_ids)
    user = tokenizer.token_to_id("<|user|>")
    # The "<|user|>" in the user's text stays text: the only token is the turn's opener.
    assert ids.count(user) == 1
    assert tokenizer.decode(ids, skip_special_tokens=False) == WRITTEN_46
    for marker in ("<tool_call>", "<arg_key>", "</arg_value>", "</think>"):
        assert tokenizer.token_to_id(marker) in ids
