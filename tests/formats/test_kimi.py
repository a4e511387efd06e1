"""Kimi K2's formats (:mod:`pawlette.formats.kimi`): renders with calls compared with the
templates run in transformers' own environment with list mutation allowed (its immutable
sandbox refuses Instruct's and Thinking's templates on any call: their id queue uses
``list.append``), what the models write read as the peers read it (llama.cpp's and SGLang's
parser tests, carried over as data in ``families/data/kimi.json``, each with its source),
what the declaration decided, and token ids with a tokenizer holding Kimi's special tokens."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2.sandbox
import pytest

import pawlette
from pawlette.export import export_jinja

from ..helpers import feed_in_pieces, folded, random_sizes
from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import (
    _CLOCK,
    Reference,
    Rendered,
    _Clock,
    _compiled,
    compare_renders,
    corpus_reference,
    hugging_face_messages,
    own_turns,
    without_reasoning,
)
from .peers import case_id, cases, peer_tools, read_as_the_peer

CASES = cases("kimi")
READ = [case for case in CASES if case["pawlette"] == "read"]
TEMPLATES = [
    ("Kimi-K2-Instruct", "kimi"),
    ("Kimi-K2-Thinking", "kimi:k2-thinking"),
    ("moonshotai-Kimi-K2", "kimi:k2-original"),
]


# ------------------------------------------------------------------ the mutable reference


class _MutableSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """transformers' environment with the one difference: lists and dicts may change."""

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return jinja2.sandbox.SandboxedEnvironment.is_safe_attribute(self, obj, attr, value)


_MUTABLE: dict[str, Any] = {}


def _mutable_template(text: str) -> Any:
    """The template compiled in an overlay of transformers' own environment (its filters,
    globals, extensions and options), the sandbox's list mutation allowed."""
    if text not in _MUTABLE:
        environment = _compiled(text).environment.overlay()
        environment.__class__ = _MutableSandbox
        _MUTABLE[text] = environment.from_string(text)
    return _MUTABLE[text]


@dataclasses.dataclass(frozen=True)
class MutableReference(Reference):
    """A :class:`Reference` rendered as ``apply_chat_template`` renders it (the same
    arguments), in the mutable sandbox (what llama.cpp's engine allows)."""

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        add_generation_prompt: bool,
    ) -> Rendered:
        template = _mutable_template(self.template)
        clock = _Clock(self.today)
        token = _CLOCK.set(clock)
        try:
            text = template.render(
                messages=hugging_face_messages(messages, empty_content=self.empty_content),
                tools=[dict(tool) for tool in tools] if tools else None,
                documents=None,
                add_generation_prompt=add_generation_prompt,
                **self.template_variables(),
            )
        except Exception as error:  # the template refused this input
            return Rendered(None, f"{type(error).__name__}: {error}", clock.read)
        finally:
            _CLOCK.reset(token)
        return Rendered(str(text), None, clock.read)


def _reference(template: str) -> MutableReference:
    base = corpus_reference(template)
    fields = {field.name: getattr(base, field.name) for field in dataclasses.fields(base)}
    return MutableReference(**fields)


def test_the_sandbox_refuses_calls_and_the_mutable_reference_renders_them() -> None:
    """Why the comparisons with calls run here: Hugging Face refuses them."""
    conversation = generate_conversations(4, avoid=pawlette.get_format("kimi").special_markers)
    with_calls = next(c for c in conversation if "call" in c.kinds)
    refused = corpus_reference("Kimi-K2-Instruct").render_request(
        with_calls.request, add_generation_prompt=False
    )
    assert refused.text is None and "append" in (refused.refusal or "")
    rendered = _reference("Kimi-K2-Instruct").render_request(
        with_calls.request, add_generation_prompt=False
    )
    assert rendered.text is not None and "<|tool_calls_section_begin|>" in rendered.text


@pytest.mark.parametrize(("template", "name"), TEMPLATES)
def test_renders_with_calls_as_the_template(template: str, name: str) -> None:
    fmt = pawlette.get_format(name)
    conversations = generate_conversations(16, seed=3, avoid=fmt.special_markers)
    assert any("parallel-calls" in c.kinds for c in conversations)
    report = compare_renders(fmt, _reference(template), conversations)
    assert report.agrees, report.describe()
    assert report.identical == report.compared


@pytest.mark.parametrize(("template", "name"), [TEMPLATES[0], TEMPLATES[2]])
def test_the_templates_turns_with_calls_parse_back(template: str, name: str) -> None:
    fmt = pawlette.get_format(name)
    conversations = generate_conversations(12, seed=3, avoid=fmt.special_markers)
    report = own_turns(fmt, _reference(template), conversations, normalise=without_reasoning)
    assert report.agrees, report.describe()


def test_thinking_turns_parse_back_but_where_the_template_moves_its_split() -> None:
    """K2 Thinking's own turns: every turn parses back, reasoning included, except where
    the template itself drops the reasoning: a plain answer with no plain answer before it
    (written ``<think></think>``), and a past turn whose reasoning a later plain answer
    drops (the turn then is not the prompt's continuation)."""
    fmt = pawlette.get_format("kimi:k2-thinking")
    conversations = generate_conversations(16, seed=3, avoid=fmt.special_markers)
    report = own_turns(fmt, _reference("Kimi-K2-Thinking"), conversations)
    assert report.parsed_back > report.total // 2
    kept = 0
    for problem in report.problems:
        if problem.problem == "not a prefix":
            continue
        assert problem.problem == "differs", problem.describe()
        assert problem.field == "reasoning_content", problem.describe()
        assert problem.turn_text.startswith("<think></think>"), problem.describe()
        assert "reasoning_content" not in problem.found, problem.describe()
    for conversation in conversations:
        for index, message in enumerate(conversation.messages):
            earlier = conversation.messages[:index]
            plain_before = any(
                m["role"] == "assistant" and not m.get("tool_calls") for m in earlier
            )
            if message["role"] == "assistant" and message.get("reasoning_content"):
                kept += plain_before or bool(message.get("tool_calls"))
    assert kept  # reasoning the template keeps was among the turns parsed back


# ------------------------------------------------------------------ the peers' cases


@pytest.mark.parametrize("case", READ, ids=case_id)
def test_what_the_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    # The call's id is the written functions.NAME:N, as llama.cpp gives it.
    parsed = read_as_the_peer(case)
    expected = case["expected"]
    kept = (expected["content"] or "") + (expected["reasoning_content"] or "")
    markers = pawlette.get_format(case["format"]).special_markers
    assert bool(parsed.warnings) == any(marker in kept for marker in markers)


@pytest.mark.parametrize("case", [c for c in CASES if c["pawlette"] == "cut-call"], ids=case_id)
def test_a_call_cut_off_is_content_with_a_warning(case: dict[str, Any]) -> None:
    """Decided: the peers report a cut call with its raw arguments (streaming state);
    pawlette's whole parse keeps the text as written, with a warning (a call that is not
    closed is no call), its section's opener included."""
    parsed = pawlette.get_format(case["format"]).parse(case["output"], tools=peer_tools(case))
    assert not parsed.message.get("tool_calls")
    assert parsed.message["content"] == case["output"]
    assert parsed.warnings


@pytest.mark.parametrize("stream_arguments", [False, True])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_streamed_in_pieces_as_whole(case: dict[str, Any], stream_arguments: bool) -> None:
    """Every variant, every peer case (read or decided), fed in pieces, folds as the whole
    output does (the shared cross-artifact tests stream the default variant's renders)."""
    fmt = pawlette.get_format(case["format"])
    output = case["output"]
    whole = folded(fmt, feed_in_pieces(fmt, output, [len(output)], conversation=False))
    for seed in range(3):
        pieces = feed_in_pieces(
            fmt,
            output,
            random_sizes(seed),
            conversation=False,
            stream_arguments=stream_arguments,
        )
        assert folded(fmt, pieces) == whole


def test_every_peer_case_is_read_or_decided() -> None:
    assert {case["pawlette"] for case in CASES} == {
        "read",
        "cut-call",
        # llama.cpp's prefill continuation of a final assistant message, not a completion.
        "continue-final-message",
    }
    assert len(READ) >= 20
    assert all(case["source"] for case in CASES)


@pytest.mark.parametrize(
    ("written", "name"),
    [
        ("functions.get_weather:0", "get_weather"),
        ("get_weather:3", "get_weather"),  # no prefix: vLLM's and mlx-lm's readers take it
        ("functions.get_weather", "get_weather"),
        (" functions.get_weather:12 ", "get_weather"),
    ],
)
def test_the_call_id_names_the_tool(written: str, name: str) -> None:
    fmt = pawlette.get_format("kimi")
    output = (
        f"<|tool_calls_section_begin|><|tool_call_begin|>{written}"
        '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    )
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}]
    parsed = fmt.parse(output, tools=tools)
    (call,) = parsed.message["tool_calls"]
    assert call["function"]["name"] == name
    assert call["id"] == written.strip()
    assert not parsed.warnings


def test_a_label_naming_no_declared_tool_is_text() -> None:
    output = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.nope:0"
        "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"
    )
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    parsed = pawlette.get_format("kimi").parse(output, tools=tools)
    assert not parsed.message.get("tool_calls")
    assert "functions.nope:0" in parsed.message["content"]
    assert parsed.warnings


def test_a_call_opener_where_a_name_is_read_gives_back_what_came_before() -> None:
    """A second ``<|tool_call_begin|>`` before any arguments (bench.fuzz found it): the text
    read as the first call's name is no call, and is content, not part of the next call's
    name and id; the call is the label right before the arguments, as vLLM reads it."""
    fmt = pawlette.get_format("kimi")
    output = (
        "<|tool_call_begin|> junk <|tool_call_begin|>functions.f:0"
        '<|tool_call_argument_begin|>{"k": 1}<|tool_call_end|><|im_end|>'
    )
    parsed = fmt.parse(output)
    assert parsed.message["content"] == "<|tool_call_begin|> junk "
    [call] = parsed.message["tool_calls"]
    assert (call["id"], call["function"]["name"]) == ("functions.f:0", "f")
    assert len(parsed.warnings) == 1
    whole = folded(fmt, feed_in_pieces(fmt, output, [len(output)], conversation=False))
    assert folded(fmt, feed_in_pieces(fmt, output, [1], conversation=False)) == whole


# ------------------------------------------------------------------ decisions


REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "user", "content": "Weather in Zürich? <|im_end|> is text.", "name": "alice"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Bern"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "a", "name": "get_weather", "content": "3"},
        {"role": "tool", "tool_call_id": "b", "content": "5"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "-2"},
    ],
    "tools": [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    ],
}

TOOLS = (
    '[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]'
)
CALLS = (
    "<|im_assistant|>assistant<|im_middle|>Checking.<|tool_calls_section_begin|>"
    '<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Zürich"}'
    "<|tool_call_end|><|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>"
    '{"city": "Bern"}'
    "<|tool_call_end|><|tool_calls_section_end|><|im_end|>"
)
INSTRUCT = (
    f"<|im_system|>tool_declare<|im_middle|>{TOOLS}<|im_end|>"
    "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI."
    "<|im_end|>\n<|im_user|>alice<|im_middle|>Weather in Zürich? <|im_end|> is text.<|im_end|>"
    + CALLS
    + "<|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:0\n3<|im_end|>"
    "<|im_system|>tool<|im_middle|>## Return of functions.get_weather:1\n5<|im_end|>"
    "<|im_assistant|>assistant<|im_middle|><|tool_calls_section_begin|><|tool_call_begin|>"
    'functions.get_weather:2<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|>'
    "<|tool_calls_section_end|><|im_end|>"
    "<|im_system|>tool<|im_middle|>## Return of functions.get_weather:2\n-2<|im_end|>"
    "<|im_assistant|>assistant<|im_middle|>"
)


def test_the_wire_format_of_instruct() -> None:
    rendering = pawlette.get_format("kimi").render(REQUEST, add_generation_prompt=True)
    assert rendering.text == INSTRUCT
    assert not rendering.losses  # names are role labels; caller ids are replaced, not lost


def test_a_conversation_reads_back_but_for_the_named_turns() -> None:
    """Decided (the docstring's remaining differences): turns labelled with a name are not
    read back from a whole conversation, and the warnings say so."""
    fmt = pawlette.get_format("kimi")
    parsed = fmt.parse_conversation(fmt.render(REQUEST).text)
    roles = [message["role"] for message in parsed.messages]
    assert roles == ["assistant", "tool", "assistant", "tool"]  # user alice, tool get_weather
    assert any("<|im_user|>alice<|im_middle|>" in warning.text for warning in parsed.warnings)
    unnamed = {
        **REQUEST,
        "messages": [
            {key: value for key, value in message.items() if key != "name"}
            for message in REQUEST["messages"]
        ],
    }
    unnamed["messages"][0]["content"] = "Weather in Zürich?"  # (text spelling no marker)
    parsed = fmt.parse_conversation(fmt.render(unnamed).text)
    assert [message["role"] for message in parsed.messages] == [
        message["role"] for message in unnamed["messages"]
    ]
    assert not parsed.warnings


def test_the_first_template_counts_calls_per_turn_and_labels_results_by_their_ids() -> None:
    rendering = pawlette.get_format("kimi:k2-original").render(REQUEST)
    text = rendering.text
    assert (
        "<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|><|im_user|>" in text
    )
    assert "<|im_user|>user<|im_middle|>" in text  # the name is not written
    assert 'functions.get_weather:0<|tool_call_argument_begin|>{"city": "Oslo"}' in text
    assert "<|im_system|>tool<|im_middle|>## Return of a\\n3<|im_end|>" in text
    assert {str(loss).split(":")[0] for loss in rendering.losses} == {
        "messages[0].name",
        "messages[2].name",
    }


@pytest.mark.parametrize(("template", "name"), TEMPLATES[:2])
def test_a_result_with_no_call_left_to_answer_is_labelled_as_the_template_does(
    template: str, name: str
) -> None:
    """More results than calls: the queue is empty, the label is ``functions.`` + (name or
    ``unknown``) + ``:`` + the number of calls written so far."""
    messages = [
        *REQUEST["messages"][:3],
        {"role": "tool", "tool_call_id": "b", "content": "5"},
        {"role": "tool", "tool_call_id": "b", "name": "other", "content": "6"},
        {"role": "tool", "tool_call_id": "b", "content": "7"},
    ]
    rendered = pawlette.get_format(name).render({"messages": messages, "tools": REQUEST["tools"]})
    assert "## Return of functions.other:2\n6" in rendered.text
    assert "## Return of functions.unknown:2\n7" in rendered.text
    expected = _reference(template).render(messages, REQUEST["tools"], add_generation_prompt=False)
    assert rendered.text == expected.text


def test_the_first_template_refuses_a_result_without_its_call_id() -> None:
    messages = [REQUEST["messages"][0], REQUEST["messages"][1], {"role": "tool", "content": "3"}]
    with pytest.raises(pawlette.RequestError, match="tool_call_id"):
        pawlette.get_format("kimi:k2-original").render({"messages": messages})


def test_thinking_keeps_reasoning_after_the_first_plain_answer() -> None:
    fmt = pawlette.get_format("kimi:k2-thinking")
    messages = [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4", "reasoning_content": "Add."},
        {"role": "user", "content": "3+3?"},
        {"role": "assistant", "content": "6", "reasoning_content": "Again add."},
    ]
    rendering = fmt.render({"messages": messages})
    assert rendering.text == (
        "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI."
        "<|im_end|><|im_user|>user<|im_middle|>2+2?<|im_end|><|im_assistant|>assistant"
        "<|im_middle|><think></think>4<|im_end|><|im_user|>user<|im_middle|>3+3?<|im_end|>"
        "<|im_assistant|>assistant<|im_middle|><think>Again add.</think>6<|im_end|>"
    )
    assert [str(loss).split(":")[0] for loss in rendering.losses] == [
        "messages[1].reasoning_content"
    ]
    prompt = fmt.render({"messages": messages[:3]}, add_generation_prompt=True).text
    assert prompt.endswith("<|im_assistant|>assistant<|im_middle|>")  # the block is the model's
    parsed = fmt.parse("<think>Add three.</think>6<|im_end|>", prompt=prompt)
    assert parsed.message["reasoning_content"] == "Add three."
    assert parsed.message["content"] == "6"


@pytest.mark.parametrize("name", ["kimi", "kimi:k2-thinking", "kimi:k2-original"])
def test_the_variants_export_a_template_that_renders_as_they_do(name: str) -> None:
    """Every variant's exported template (Hugging Face's immutable sandbox: it keeps no
    list of ids) renders as the variant does, names and calls included."""
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = pawlette.get_format(name)
    template = export_jinja(name)
    conversations = generate_conversations(8, seed=5, avoid=fmt.special_markers)
    for conversation in conversations:
        rendered, _ = render_jinja_template(
            [hugging_face_messages(conversation.messages)],
            tools=conversation.tools or None,
            chat_template=template,
        )
        assert rendered[0] == fmt.render(conversation.request).text


def test_ids_keep_user_text_out_of_the_special_tokens() -> None:
    fmt = pawlette.get_format("kimi")
    assert "<|media_pad|>" in fmt.special_markers  # the tokenizer's, never written
    tokenizer = small_tokenizer(fmt.special_markers)
    result = pawlette.tokenize(fmt, tokenizer, REQUEST)
    ids = list(result.input_ids)
    end = tokenizer.token_to_id("<|im_end|>")
    assert ids.count(end) == INSTRUCT.count("<|im_end|>") - 1  # the user's stays text
    wanted = INSTRUCT[: -len("<|im_assistant|>assistant<|im_middle|>")]
    assert tokenizer.decode(ids, skip_special_tokens=False) == wanted


def test_thinking_ids_keep_a_think_tag_in_user_text_as_text() -> None:
    fmt = pawlette.get_format("kimi:k2-thinking")
    tokenizer = small_tokenizer(fmt.special_markers)
    request = {
        "messages": [
            {"role": "user", "content": "Is <think> a tag?"},
            {"role": "assistant", "content": "No.", "tool_calls": None},
            {"role": "user", "content": "And </think>?"},
            {"role": "assistant", "content": "Yes.", "reasoning_content": "Check."},
        ]
    }
    result = pawlette.tokenize(fmt, tokenizer, request)
    ids = list(result.input_ids)
    think, close = tokenizer.token_to_id("<think>"), tokenizer.token_to_id("</think>")
    assert (ids.count(think), ids.count(close)) == (2, 2)  # the written blocks only
    assert tokenizer.decode(ids, skip_special_tokens=False) == fmt.render(request).text
