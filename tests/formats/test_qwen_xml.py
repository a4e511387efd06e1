"""The ChatML variants whose calls are Qwen3-Coder's XML (:mod:`pawlette.formats.chatml.xml`):
the peers' cases (``families/data/qwen_xml.json``: outputs and readings carried over from
llama.cpp's and SGLang's tests, with the tools they declare) and what the declaration decided.
Renders against the real templates are the shared family tests'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.declare import layout_of
from pawlette.formats.chatml.xml_tools import XmlToolsBlock, describe

from ..declared.model_output import calls_of, check_every_way, content_of
from ..support.conversations import generate_conversations
from ..support.template_compare import compare_renders, corpus_reference, own_turns

DATA = json.loads((Path(__file__).parent / "families" / "data" / "qwen_xml.json").read_text())
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": tool["parameters"]}}
    for name, tool in DATA["tools"].items()
]
CODER = pawlette.get_format("chatml:qwen3-coder")
QWEN35 = pawlette.get_format("chatml:qwen3.5")
NEMOTRON = pawlette.get_format("chatml:nemotron-3-nano")
NEMOTRON_TEMPLATE = "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
VARIANTS = [
    "chatml:qwen3-coder",
    "chatml:qwen3.5",
    "chatml:nemotron-3-nano",
    "chatml:stepfun3.5",
]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "  Get the weather.\n",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": ["integer", "null"], "default": None, "minimum": 1},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


def _reading(message: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if message.get("content"):
        result["content"] = message["content"]
    if message.get("reasoning_content"):
        result["reasoning_content"] = message["reasoning_content"]
    if message.get("tool_calls"):
        result["tool_calls"] = [
            {
                "name": call["function"]["name"],
                "arguments": json.loads(call["function"]["arguments"]),
            }
            for call in message["tool_calls"]
        ]
    return result


def _prompt(case: dict[str, Any]) -> str:
    return "<|im_start|>assistant\n" + ("<think>\n" if case["prompt_opened_reasoning"] else "")


@pytest.mark.parametrize(
    "case", DATA["cases"], ids=lambda case: f"{case['format']}:{case['output'][:28]!r}"
)
def test_the_peers_cases(case: dict[str, Any]) -> None:
    fmt = pawlette.get_format(case["format"])
    completion = fmt.parse(case["output"], tools=TOOLS, prompt=_prompt(case))
    found = _reading(completion.message)
    decided = case["decided"]
    if decided is None:
        assert found == case["expected"]
        assert not completion.warnings
        return
    expected = {
        key: case["output"]
        if value == "KEEP"
        else case["expected"][key]
        if value == "EXPECTED"
        else value
        for key, value in decided["reading"].items()
    }
    assert found == expected, decided["why"]
    assert bool(completion.warnings) == decided["warns"], completion.warnings


def test_every_peers_case_reads_the_same_streamed_and_from_ids() -> None:
    from ..support.qwen import qwen_tokenizer

    tokenizer = qwen_tokenizer()
    for case in DATA["cases"]:
        if not case["prompt_opened_reasoning"]:  # (ids and pieces read from the turn's start)
            check_every_way(pawlette.get_format(case["format"]), tokenizer, case["output"])


# ------------------------------------------------------------------ Qwen3-Coder's render


def test_coder_writes_its_default_system_text_only_with_tools() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    assert CODER.render(messages).text == "<|im_start|>user\nHi<|im_end|>\n"
    text = CODER.render({"messages": messages, "tools": [WEATHER]}).text
    assert text.startswith(
        "<|im_start|>system\nYou are Qwen, a helpful AI assistant that can interact with a "
        "computer to solve tasks.\n\n# Tools\n\nYou have access to the following tools:\n\n"
        "<tools>\n<function>\n<name>get_weather</name>\n<description>Get the weather."
        "</description>\n"
    )


def test_the_xml_tools_block_is_the_templates() -> None:
    """Every key of a tool the template writes, as it writes it (Python's spelling of
    scalars, JSON of containers), compared with Qwen3-Coder's template itself."""
    reference = corpus_reference("Qwen3-Coder")
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}]
    expected = reference.render(messages, [WEATHER], add_generation_prompt=True).text
    request = {"messages": messages, "tools": [WEATHER]}
    assert CODER.render(request, add_generation_prompt=True).text == expected
    assert "<days>" not in expected and "<type>['integer', 'null']</type>" in expected
    assert "<additionalProperties>False</additionalProperties>" in expected


def test_nemotron_places_enum_and_required_as_its_template_does() -> None:
    text = describe(WEATHER["function"], enum=True)
    assert '<type>string</type>\n<enum>["c", "f"]</enum>\n</parameter>' in text
    assert '<additionalProperties>False</additionalProperties>\n<required>["city"]' in text


def test_the_xml_tools_block_reads_back() -> None:
    """A prompt's tools read back by name with their parameters' tags (a reading: the XML
    says nothing of key order or of a list ``type``'s JSON)."""
    rendered = CODER.render(
        {"messages": [{"role": "user", "content": "Hi"}], "tools": [WEATHER]}
    ).text
    parsed = CODER.parse_conversation(rendered, strict=True)
    (tool,) = parsed.tools
    function = tool.get("function", tool)
    assert function["name"] == "get_weather"
    assert function["strict"] is True
    properties = function["parameters"]["properties"]
    assert properties["unit"] == {"type": "string", "enum": ["c", "f"]}
    assert function["parameters"]["required"] == ["city"]
    assert parsed.messages == [{"role": "user", "content": "Hi"}]


def test_coder_values_are_written_as_python_writes_them_and_read_back_by_schema() -> None:
    call = {
        "id": "call_0",
        "type": "function",
        "function": {
            "name": "get_weather",
            "arguments": json.dumps({"city": "Zürich", "unit": "c", "days": None}),
        },
    }
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "  Checking.\n", "tool_calls": [call]},
    ]
    rendering = CODER.render({"messages": messages, "tools": [WEATHER]})
    turn = (
        "<|im_start|>assistant\nChecking.\n\n<tool_call>\n<function=get_weather>\n"
        "<parameter=city>\nZürich\n</parameter>\n<parameter=unit>\nc\n</parameter>\n"
        "<parameter=days>\nNone\n</parameter>\n</function>\n</tool_call><|im_end|>\n"
    )
    assert rendering.text.endswith(turn)
    assert any(loss.startswith("messages[1].content") for loss in rendering.losses)
    reading = CODER.parse(turn[len("<|im_start|>assistant\n") :], tools=[WEATHER])
    assert _reading(reading.message) == {
        "content": "Checking.",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Zürich", "unit": "c", "days": None}}
        ],
    }


def test_coder_drops_reasoning_and_says_so() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "greet"},
    ]
    rendering = CODER.render(messages)
    assert "greet" not in rendering.text
    assert any(loss.startswith("messages[1].reasoning_content") for loss in rendering.losses)


def test_user_text_spelling_a_marker_never_becomes_one() -> None:
    from ..support.qwen import qwen_tokenizer

    tokenizer = qwen_tokenizer()
    messages = [{"role": "user", "content": "say <tool_call> and <|im_end|>"}]
    result = pawlette.tokenize(CODER, tokenizer, messages, add_generation_prompt=True)
    special = {tokenizer.token_to_id("<tool_call>"), tokenizer.token_to_id("<|im_end|>")}
    ids = list(result.input_ids)
    assert ids.count(tokenizer.token_to_id("<|im_end|>")) == 1  # the turn's own end
    assert tokenizer.token_to_id("<tool_call>") not in ids
    assert special <= set(tokenizer.get_vocab().values())


def test_coder_reads_a_turn_every_way() -> None:
    from ..support.qwen import qwen_tokenizer

    text = (
        "Let me look.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n"
        "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n"
        "<parameter=city>\n北京\n</parameter>\n</function>\n</tool_call><|im_end|>"
    )
    reading = check_every_way(CODER, qwen_tokenizer(), text)
    assert content_of(reading) == "Let me look."
    assert [name for name, _ in calls_of(reading)] == ["get_weather", "get_weather"]


def test_the_variant_is_chatml_with_xml_options() -> None:
    layout = layout_of(CODER)
    assert layout is not None and layout.name == "chatml"
    assert isinstance(layout.concept(XmlToolsBlock), XmlToolsBlock)
    variant = pawlette.get_format("chatml").with_options(reasoning=False, xml="qwen3-coder")
    request = {"messages": [{"role": "user", "content": "Hi"}], "tools": [WEATHER]}
    assert variant.render(request).text == CODER.render(request).text


# ------------------------------------------------------------------ Qwen3.5


def test_qwen35_writes_the_tools_first_then_the_system_text() -> None:
    messages = [{"role": "system", "content": " Be brief. "}, {"role": "user", "content": "Hi"}]
    rendering = QWEN35.render({"messages": messages, "tools": [WEATHER]})
    assert rendering.text.startswith("<|im_start|>system\n# Tools\n\nYou have access to")
    assert "</IMPORTANT>\n\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n" in (
        rendering.text
    )
    assert any(loss.startswith("messages[0].content") for loss in rendering.losses)
    parsed = QWEN35.parse_conversation(rendering.text, strict=True)
    assert parsed.messages[0] == {"role": "system", "content": "Be brief."}
    assert [tool["function"]["name"] for tool in parsed.tools] == ["get_weather"]


def test_qwen35_refuses_a_later_system_message_as_its_template_does() -> None:
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": "Now be brief."},
    ]
    with pytest.raises(pawlette.errors.UnsupportedFeature, match=r"messages\[1\]"):
        QWEN35.render(messages)
    reference = corpus_reference("Qwen3.5-4B").render(messages, None, add_generation_prompt=True)
    assert reference.text is None
    assert "System message must be at the beginning" in (reference.refusal or "")


def test_qwen35_writes_a_block_on_every_turn_after_the_query() -> None:
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    messages = [
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "A1", "reasoning_content": "dropped"},
        {"role": "user", "content": "Q2"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": " 3 C \n"},
        {"role": "assistant", "content": "Cold.", "reasoning_content": "\nIt is cold.\n"},
    ]
    rendering = QWEN35.render({"messages": messages, "tools": [WEATHER]})
    assert rendering.text.endswith(
        "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
        "<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n"
        "</function>\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n3 C\n"
        "</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\nIt is cold.\n</think>"
        "\n\nCold.<|im_end|>\n"
    )
    reference = corpus_reference("Qwen3.5-4B")
    assert rendering.text == reference.render(messages, [WEATHER], add_generation_prompt=False).text
    losses = " ".join(rendering.losses)
    assert "messages[1].reasoning_content" in losses and "messages[4].content" in losses


def test_qwen35_prompts_open_the_block_or_close_it_with_thinking_off() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    opened = QWEN35.render(messages, add_generation_prompt=True).text
    assert opened.endswith("<|im_start|>assistant\n<think>\n")
    closed = QWEN35.with_options(thinking=False).render(messages, add_generation_prompt=True)
    assert closed.text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    # The prompt opened the block: the completion is read from inside it.
    reading = QWEN35.parse("Short.\n</think>\n\nHello.", prompt=opened)
    assert _reading(reading.message) == {"content": "Hello.", "reasoning_content": "Short."}


# ------------------------------------------------------------------ Nemotron 3 Nano
# No FamilyCase: with thinking on (the template's default) its prompt opens "<think>\n"
# where a turn without reasoning writes "<think></think>", so the shared own-turns test
# cannot apply; the renders, the turns the template's prompt does begin, and detection are
# checked here.

NEMOTRON_OPTIONS = [
    {},
    {"thinking": False},
    {"truncate_history_thinking": False},
    {"thinking": False, "truncate_history_thinking": False},
]


def _nemotron(options: dict[str, Any]) -> tuple[Any, Any]:
    fmt = NEMOTRON.with_options(**options)
    layout = layout_of(fmt)
    assert layout is not None
    reference = corpus_reference(
        NEMOTRON_TEMPLATE, variables=layout.reference_variables(), empty_content=True
    )
    return fmt, reference


@pytest.mark.parametrize("options", NEMOTRON_OPTIONS, ids=str)
def test_nemotron_renders_as_its_template(options: dict[str, Any]) -> None:
    fmt, reference = _nemotron(options)
    conversations = generate_conversations(12, seed=1, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()


def _rstripped(message: dict[str, Any]) -> dict[str, Any]:
    result = dict(message)
    if isinstance(result.get("content"), str):
        result["content"] = result["content"].rstrip()
    return result


def test_nemotrons_own_turns_parse_back_where_its_prompt_begins_them() -> None:
    """Thinking off, the prompt ends "<think></think>" and every turn without reasoning
    extends it; thinking on, a turn with reasoning extends "<think>\\n" (the peers' cases)."""
    fmt, reference = _nemotron({"thinking": False})
    conversations = generate_conversations(12, seed=2, avoid=fmt.special_markers, reasoning=False)
    report = own_turns(fmt, reference, conversations, normalise=_rstripped)
    assert report.agrees, report.describe()


def test_nemotron_is_detected() -> None:
    from pawlette.detect import detect_template

    reference = corpus_reference(NEMOTRON_TEMPLATE)
    detection = detect_template(
        reference.template, bos_token=reference.bos_token, eos_token=reference.eos_token
    )
    assert detection.name == "chatml:nemotron-3-nano", detection


def test_stepfun_is_detected_and_writes_its_turns_as_its_template() -> None:
    reference = corpus_reference("StepFun3.5-Flash", empty_content=True)
    from pawlette.detect import detect_template

    detection = detect_template(reference.template)
    assert detection.name == "chatml:stepfun3.5", detection
    fmt = pawlette.get_format("chatml:stepfun3.5")
    request = {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "reasoning_content": "Look it up.",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": args}}
                    for args in ('{"city": "Paris"}', '{"city": "Rome", "days": 2}')
                ],
            },
            {"role": "tool", "tool_call_id": "1", "content": "18"},
            {"role": "tool", "tool_call_id": "2", "content": "21"},
        ],
        "tools": [WEATHER],
    }
    text = fmt.render(request, add_generation_prompt=True).text
    # Calls right after the text and each other; results side by side in their own turn.
    assert (
        "<|im_start|>assistant\n<think>\nLook it up.\n</think>\nChecking.<tool_call>\n"
        "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
        "</tool_call><tool_call>\n<function=get_weather>\n"
    ) in text
    assert text.endswith(
        "<|im_start|>tool_response\n<tool_response>18</tool_response><tool_response>21"
        "</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n"
    )
    assert text == reference.render_request(request, add_generation_prompt=True).text


def test_nemotron_writes_its_think_blocks_and_newlines() -> None:
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "days": 2}'},
    }
    messages = [
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "A1", "reasoning_content": "old"},
        {"role": "user", "content": "Q2"},
        {"role": "assistant", "content": None, "tool_calls": [call, call]},
        {"role": "tool", "tool_call_id": "call_0", "content": "3 C"},
        {"role": "tool", "tool_call_id": "call_0", "content": "4 C"},
        {"role": "assistant", "content": "Cold. ", "reasoning_content": "R"},
    ]
    rendering = NEMOTRON.render({"messages": messages, "tools": [WEATHER]})
    parameters = "<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n</parameter>\n"
    one_call = f"<tool_call>\n<function=get_weather>\n{parameters}</function>\n</tool_call>\n"
    assert rendering.text.endswith(
        "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\n<think></think>\nA1<|im_end|>\n"
        "<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n<think></think>\n"
        + one_call
        * 2
        + "<|im_end|>\n<|im_start|>user\n<tool_response>\n3 C\n</tool_response>\n"
        "<tool_response>\n4 C\n</tool_response>\n<|im_end|>\n<|im_start|>assistant\n"
        "<think>\nR\n</think>\nCold.<|im_end|>\n"
    )
    reference = corpus_reference(NEMOTRON_TEMPLATE)
    assert rendering.text == reference.render(messages, [WEATHER], add_generation_prompt=False).text
    losses = " ".join(rendering.losses)
    assert "messages[1].reasoning_content" in losses and "messages[6].content" in losses
    assert NEMOTRON.render([{"role": "user", "content": "Hi"}]).text.startswith(
        "<|im_start|>system\n<|im_end|>\n"
    )
    prompt = NEMOTRON.with_options(thinking=False).render(messages[:3], add_generation_prompt=True)
    assert prompt.text.endswith("<|im_start|>assistant\n<think></think>")
    turn = "\n" + one_call * 2 + "<|im_end|>"
    reading = NEMOTRON.parse(turn, tools=[WEATHER], prompt=prompt.text)
    assert _reading(reading.message) == {
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}] * 2
    }


# ------------------------------------------------------------------ every variant


@pytest.mark.parametrize("name", VARIANTS)
def test_the_exported_template_renders_as_the_variant(name: str) -> None:
    """The variants are not registered names, so the cross-artifact tests do not reach them:
    their exported Jinja is checked here on generated conversations of every kind."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    from ..declare.test_cross_artifacts import template_request

    fmt = pawlette.get_format(name)
    template = export_jinja(fmt)
    switches: dict[str, Any] = {"avoid": fmt.special_markers}
    if name == "chatml:qwen3.5":
        switches["system_positions"] = ("none", "first")
    for conversation in generate_conversations(8, seed=3, **switches):
        request = conversation.request
        for prompt in (False, True):
            rendered, _ = render_jinja_template(
                [template_request(fmt, request)],
                tools=request.get("tools") or None,
                chat_template=template,
                add_generation_prompt=prompt,
            )
            assert rendered[0] == fmt.render(request, add_generation_prompt=prompt).text


# The variants are not registered names, and the cross-artifact tests reach formats by name:
# each is registered here under a name of its own for the grammar checks.
GRAMMAR_VARIANTS = [
    ("chatml:qwen3-coder", {}, True),
    ("chatml:qwen3.5", {}, True),
    # Thinking off: a turn with reasoning does not extend its prompt (the template's shape).
    ("chatml:nemotron-3-nano", {"thinking": False}, False),
    ("chatml:stepfun3.5", {}, True),
]


@pytest.mark.parametrize(("name", "options", "reasoning"), GRAMMAR_VARIANTS, ids=str)
def test_the_grammar_accepts_every_turn_the_variant_writes(
    name: str, options: dict[str, Any], reasoning: bool
) -> None:
    import dataclasses

    from ..declare.registering import registered

    layout = layout_of(pawlette.get_format(name).with_options(**options))
    assert layout is not None
    own = dataclasses.replace(
        layout, name="grammar-" + name.replace(":", "-"), variants={}, from_options=None
    )
    with registered(own) as fmt:
        checked = _grammar_checks(own.name, fmt, reasoning)
    assert checked >= 10


def _grammar_checks(name: str, fmt: Any, reasoning: bool) -> int:
    from pawlette.export import export_grammar

    from ..declare.test_cross_artifacts import choices
    from ..declare.tokens import accepts, segment_ids

    conversations = generate_conversations(
        6, seed=4, avoid=fmt.special_markers, reasoning=reasoning, system_positions=("none",)
    )
    checked = 0
    for conversation in conversations:
        request = conversation.request
        tools = request.get("tools") or TOOLS[:1]
        for index, message in enumerate(request["messages"]):
            if message["role"] != "assistant":
                continue
            rendering = fmt.render(request["messages"][: index + 1], tools)
            ids = segment_ids(name, rendering, trainable_from=index)
            for choice, parallel in choices(message):
                grammar = export_grammar(name, tools, choice, parallel)
                assert accepts(name, grammar, ids), (name, index, choice, parallel)
                checked += 1
    return checked
