"""DeepSeek's formats (:mod:`pawlette.formats.deepseek`): what the models write, read as the
peers read it (llama.cpp's parser tests, carried over as data in
``families/data/deepseek.json``, each with its source), what the declaration decided, and
token ids with a tokenizer holding DeepSeek's special tokens."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import pawlette

from ..support.small_bpe import small_tokenizer
from .peers import case_id, cases, read_as_the_peer

CASES = cases("deepseek")
READ = [case for case in CASES if case["pawlette"] == "read"]


@pytest.mark.parametrize("case", READ, ids=case_id)
def test_what_the_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    parsed = read_as_the_peer(case)
    expected = case["expected"]
    # A marker the peers keep as text (a call marker inside the reasoning, a doubled
    # <think>, an unopened </think>) is text here too, with a warning naming it.
    kept = (expected["content"] or "") + (expected["reasoning_content"] or "")
    fmt = pawlette.get_format(case["format"])
    assert bool(parsed.warnings) == any(marker in kept for marker in fmt.special_markers)


def test_text_after_the_reasoning_is_kept_as_written() -> None:
    """Decided: llama.cpp's test compares trimmed text; pawlette keeps the newline the model
    wrote after ``</think>`` (nothing silently dropped)."""
    (case,) = [case for case in CASES if case["pawlette"] == "verbatim-text"]
    parsed = pawlette.get_format(case["format"]).parse(case["output"])
    assert parsed.message["reasoning_content"] == "REASONING"
    assert parsed.message["content"] == "\nCONTENT"


def test_every_peer_case_is_read_or_decided() -> None:
    # continue-final-message: llama.cpp's prefill continuation, not a completion of a prompt.
    assert {case["pawlette"] for case in CASES} <= {
        "read",
        "verbatim-text",
        "continue-final-message",
        # llama.cpp's reasoning_format=none leaves the block in content: pawlette always
        # separates reasoning (the option is llama.cpp's, not the format's).
        "reasoning-format-none",
    }
    assert len(READ) >= 15


REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Zürich? <｜User｜> is text here."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": '{"temp_c": 3}'},
        {"role": "assistant", "content": "3 °C."},
        {"role": "user", "content": "Thanks"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "get_weather", "parameters": {"type": "object"}},
        }
    ],
}

WRITTEN = (
    "<｜begin▁of▁sentence｜>You are terse.<｜User｜>Weather in Zürich? <｜User｜> is text here."
    "<｜Assistant｜><think></think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather"
    '<｜tool▁sep｜>{"city": "Zürich"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'
    '<｜tool▁output▁begin｜>{"temp_c": 3}<｜tool▁output▁end｜>3 °C.<｜end▁of▁sentence｜>'
    "<｜User｜>Thanks<｜Assistant｜>"
)


def test_the_wire_format_and_the_thinking_prompt() -> None:
    fmt = pawlette.get_format("deepseek")
    rendering = fmt.render(REQUEST, add_generation_prompt=True)
    assert rendering.text == WRITTEN + "<think></think>"
    assert any("tools" in str(loss) for loss in rendering.losses)  # never written
    thinking = pawlette.get_format("deepseek:v3.1-thinking")
    assert thinking.render(REQUEST, add_generation_prompt=True).text == WRITTEN + "<think>"


def test_a_thinking_answer_after_results_is_content() -> None:
    """The prompt after tool results opens no block: the answer there is content."""
    fmt = pawlette.get_format("deepseek:v3.1-thinking")
    prompt = fmt.render(REQUEST["messages"][:4], REQUEST["tools"], add_generation_prompt=True)
    parsed = fmt.parse("3 °C.<｜end▁of▁sentence｜>", prompt=prompt.text)
    assert parsed.message["content"] == "3 °C."
    assert not parsed.message.get("reasoning_content")
    parsed = fmt.parse("warm</think>3 °C.<｜end▁of▁sentence｜>")  # after a user turn
    assert parsed.message["reasoning_content"] == "warm"


def test_ids_keep_user_text_out_of_the_special_tokens() -> None:
    fmt = pawlette.get_format("deepseek")
    tokenizer = small_tokenizer(fmt.special_markers)
    result = pawlette.tokenize(fmt, tokenizer, REQUEST)
    ids = list(result.input_ids)
    user_marker = tokenizer.token_to_id("<｜User｜>")
    assert ids.count(user_marker) == 2  # the one in the user's text stays text
    assert tokenizer.decode(ids, skip_special_tokens=False) == WRITTEN[: -len("<｜Assistant｜>")]


# The R1 templates' renders are compared by the shared family tests (families/deepseek.py);
# here, the Qwen distill under its enable_thinking (the r1 variant's prompt).
R1_TEMPLATES = [("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek:r1", ())]


@pytest.mark.parametrize(("template", "name", "without"), R1_TEMPLATES)
def test_r1_renders_as_its_templates(template: str, name: str, without: tuple[str, ...]) -> None:
    from pawlette.declare import layout_of

    from ..support.conversations import TEXT_STYLES, generate_conversations
    from ..support.template_compare import compare_renders, corpus_reference

    fmt = pawlette.get_format(name)
    layout = layout_of(fmt)
    assert layout is not None
    reference = corpus_reference(
        template, variables=layout.reference_variables(), empty_content=True
    )
    conversations = generate_conversations(
        12,
        avoid=fmt.special_markers,
        system_positions=("none", "first", "several"),
        texts=tuple(style for style in TEXT_STYLES if style not in without),
    )
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()


# A call turn, its results, an answer after them, a second round and a user turn after
# results: the distills' flags (first call, first result, after results) all show.
ROUNDS: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "Dropped."},
        {"role": "system", "content": "Kept."},
        {"role": "user", "content": "Weather in Zürich and Köln?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Köln"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "a", "name": "get_weather", "content": "3C"},
        {"role": "tool", "tool_call_id": "b", "content": "5C"},
        {"role": "assistant", "content": "Cold.</think> in both"},
        {"role": "user", "content": "And Bern?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Bern"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "4C"},
    ],
}
QWEN_ROUNDS = (
    "<｜begin▁of▁sentence｜>Kept.<｜User｜>Weather in Zürich and Köln?<｜Assistant｜>"
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    '{"city": "Zürich"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>'
    'get_weather\n```json\n{"city": "Köln"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    "<｜end▁of▁sentence｜><｜Assistant｜><｜end▁of▁sentence｜><｜tool▁outputs▁begin｜>"
    "<｜tool▁output▁begin｜>3C<｜tool▁output▁end｜>\n<｜tool▁output▁begin｜>5C<｜tool▁output▁end｜>"
    "<｜tool▁outputs▁end｜>Cold.</think> in both<｜end▁of▁sentence｜><｜User｜>And Bern?"
    "\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    '{"city": "Bern"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'
    "<｜Assistant｜>Checking.<｜end▁of▁sentence｜>\n<｜tool▁output▁begin｜>4C<｜tool▁output▁end｜>"
    "<｜tool▁outputs▁end｜>"
)


def test_the_qwen_distill_writes_its_templates_flags() -> None:
    """Decided: the template's layout, byte for byte (a later calling turn has no opener, a
    later batch of results no ``<｜tool▁outputs▁begin｜>``, a user turn does not close a batch,
    no generation prompt after results); what it drops is a recorded loss."""
    from ..support.template_compare import corpus_reference

    fmt = pawlette.get_format("deepseek:r1-no-thinking")
    rendering = fmt.render(ROUNDS, add_generation_prompt=True)
    assert rendering.text == QWEN_ROUNDS
    reference = corpus_reference("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", empty_content=True)
    assert reference.render(ROUNDS["messages"], None, add_generation_prompt=True).text == (
        QWEN_ROUNDS
    )
    assert rendering.losses == (
        "messages[0]: a system message before the last, dropped",
        "messages[4].name: not written (the call names the tool)",
    )


def test_the_llama_distill_drops_calls_as_a_recorded_loss() -> None:
    fmt = pawlette.get_format("deepseek:r1-llama")
    rendering = fmt.render(ROUNDS)
    assert "<｜tool▁call▁begin｜>" not in rendering.text
    assert rendering.text.endswith(
        "<｜User｜>And Bern?<｜Assistant｜>Checking.<｜end▁of▁sentence｜>\n"
        "<｜tool▁output▁begin｜>4C<｜tool▁output▁end｜><｜tool▁outputs▁end｜>"
    )
    # After results the template keeps the text whole (it cuts up to the last </think> only
    # in a turn it opens with <｜Assistant｜>).
    assert "Cold.</think> in both" in rendering.text
    assert "messages[3].tool_calls: dropped" in " ".join(rendering.losses)
    assert "messages[8].tool_calls: dropped" in " ".join(rendering.losses)


@pytest.mark.parametrize(
    "name", ["deepseek:r1-llama", "deepseek:r1-no-thinking", "deepseek:r1", "deepseek:r1-llamacpp"]
)
def test_the_r1_variants_export_what_they_render(name: str) -> None:
    """The declared-variant tests draw no tools for DeepSeek (it writes no tools block): the
    distills' calls and results are checked here, training masks included."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    from ..export.support import merged, trainable_spans
    from ..support.conversations import generate_conversations
    from ..support.template_compare import hugging_face_messages

    fmt = pawlette.get_format(name)
    template = export_jinja(fmt)
    requests = [ROUNDS] + [c.request for c in generate_conversations(8, seed=3)]
    for request in requests:
        for prompt in (False, True):
            rendering = fmt.render(request, add_generation_prompt=prompt)
            texts, spans = render_jinja_template(
                [hugging_face_messages(request["messages"])],
                tools=request.get("tools") or None,
                chat_template=template,
                add_generation_prompt=prompt,
                return_assistant_tokens_mask=True,
            )
            assert texts[0] == rendering.text
            assert merged([tuple(span) for span in spans[0]]) == trainable_spans(rendering)


def test_an_answer_after_results_reads_as_an_answer() -> None:
    """The distills answer results after ``<｜tool▁outputs▁end｜>`` with no prompt: a
    completion after such a prompt is the answer, not reasoning."""
    fmt = pawlette.get_format("deepseek:r1-llama")
    prompt = fmt.render(ROUNDS, add_generation_prompt=True).text
    assert prompt.endswith("<｜tool▁outputs▁end｜>")
    parsed = fmt.parse("4 °C.<｜end▁of▁sentence｜>", prompt=prompt)
    assert parsed.message == {"role": "assistant", "content": "4 °C."}


def test_llama_cpps_r1_writes_an_empty_answer_as_an_empty_calls_block() -> None:
    fmt = pawlette.get_format("deepseek:r1-llamacpp")
    request = {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": ""}]}
    text = fmt.render(request).text
    assert text.endswith(
        "<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>"
    )
    parsed = fmt.parse_conversation(text, strict=True)
    assert parsed.to_request()["messages"] == request["messages"]


# An answer holding two </think>: V3.1's template keeps the text after the first, llama.cpp's
# R1 after the last; V3.1 keeps an answer after results whole.
CUT: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "Look.</think>Wait.</think>Cold."},
    {"role": "user", "content": "Sure?"},
    {"role": "assistant", "content": "Yes.</think>"},
    {"role": "user", "content": "Thanks."},
]


@pytest.mark.parametrize(
    ("template", "name", "kept", "occurrence"),
    [
        ("deepseek-ai-DeepSeek-V3.1", "deepseek", ("Wait.</think>Cold.", ""), "first"),
        (
            "deepseek-ai-DeepSeek-V3.1",
            "deepseek:v3.1-thinking",
            ("Wait.</think>Cold.", ""),
            "first",
        ),
        ("llama-cpp-deepseek-r1", "deepseek:r1-llamacpp", ("Cold.", ""), "last"),
    ],
)
def test_an_answer_is_cut_after_its_think_close_as_the_template_cuts_it(
    template: str, name: str, kept: tuple[str, str], occurrence: str
) -> None:
    from pawlette.declare import layout_of
    from pawlette.export import export_jinja
    from pawlette.infer.template import TemplateRunner

    from ..support.template_compare import corpus_reference

    fmt = pawlette.get_format(name)
    layout = layout_of(fmt)
    assert layout is not None
    variables = layout.reference_variables()
    reference = corpus_reference(template, variables=variables)
    rendering = fmt.render({"messages": CUT})
    assert rendering.text == reference.render(CUT, add_generation_prompt=False).text
    for text in kept:
        assert f"<｜Assistant｜>{text}<｜end▁of▁sentence｜>" in rendering.text.replace(
            "<｜Assistant｜><think></think>", "<｜Assistant｜>"
        )
    assert rendering.losses == (
        f"messages[1].content: the text up to its {occurrence} </think> dropped",
        f"messages[3].content: the text up to its {occurrence} </think> dropped",
    )
    exported = TemplateRunner(export_jinja(fmt), variables).render(CUT).text
    assert exported == rendering.text


def test_v3_1_keeps_an_answer_after_results_whole() -> None:
    from ..support.template_compare import corpus_reference

    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "3C"},
        {"role": "assistant", "content": "Look.</think>Cold."},
    ]
    rendering = pawlette.get_format("deepseek").render({"messages": messages})
    reference = corpus_reference("deepseek-ai-DeepSeek-V3.1")
    assert rendering.text == reference.render(messages, add_generation_prompt=False).text
    assert rendering.text.endswith("<｜tool▁output▁end｜>Look.</think>Cold.<｜end▁of▁sentence｜>")
    assert not rendering.losses


def test_v3_1_thinking_renders_and_reads_as_its_template() -> None:
    from pawlette.declare import layout_of

    from ..support.conversations import generate_conversations
    from ..support.template_compare import (
        compare_renders,
        corpus_reference,
        own_turns,
        without_reasoning,
    )

    fmt = pawlette.get_format("deepseek:v3.1-thinking")
    layout = layout_of(fmt)
    assert layout is not None
    reference = corpus_reference(
        "deepseek-ai-DeepSeek-V3.1", variables=layout.reference_variables()
    )
    conversations = generate_conversations(
        12, seed=1, avoid=fmt.special_markers, system_positions=("none", "first", "several")
    )
    report = compare_renders(fmt, reference, conversations)
    assert report.agrees, report.describe()
    turns = own_turns(fmt, reference, conversations, normalise=without_reasoning)
    assert turns.agrees, turns.describe()


def test_gathered_system_text_keeps_only_the_last_message() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.declare import LastSystemPrompt, SystemPrompt, declare, layout_of
    from pawlette.export import export_jinja

    from ..declare.test_turns import OPEN_ENDED

    layout = layout_of(OPEN_ENDED)
    assert layout is not None
    concepts = tuple(
        LastSystemPrompt(placement="gathered") if isinstance(concept, SystemPrompt) else concept
        for concept in layout.concepts
    )
    last = declare(dataclasses.replace(layout, name="open-ended-last", concepts=concepts))
    messages = [
        {"role": "system", "content": "First."},
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": "Second."},
    ]
    rendering = last.render({"messages": messages}, add_generation_prompt=True)
    assert rendering.text == "<bos>Second.<U>Hi<A><t>"
    assert rendering.losses == ("messages[0]: a system message before the last, dropped",)
    assert OPEN_ENDED.render({"messages": messages}).text == "<bos>First.\n\nSecond.<U>Hi"
    exported, _ = render_jinja_template(
        [messages], chat_template=export_jinja(last), add_generation_prompt=True
    )
    assert exported[0] == rendering.text
