"""A past answer whose content holds its reasoning (``<think>plan</think>answer``): the real
templates take the reasoning out of the content and write the turn as one given both
(``Reasoning.in_content``).  Each case is rendered by the real template, by the format and
by the format's exported Jinja, which must agree."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.declare import Frame, Layout, Marker, Reasoning, fence
from pawlette.declare.content_reasoning import split_content
from pawlette.errors import FormatError
from pawlette.export import export_jinja

from ..declare.test_cross_artifacts import template_request
from ..support.template_compare import corpus_reference
from .test_results_as_user import CALL, WEATHER

# format, template
FORMATS = [
    ("chatml", "Qwen-Qwen3-0.6B"),
    ("chatml:qwen3.5", "Qwen3.5-4B"),
    ("chatml:stepfun3.5", "StepFun3.5-Flash"),
    ("glm", "GLM-4.6"),
    ("glm:4.7", "GLM-4.7-Flash"),
    ("minimax_m2", "MiniMax-M2"),
    ("bailing", "inclusionai-ling-3.0-flash"),
    ("minicpm", "openbmb-MiniCPM5-1B"),
    ("laguna", "poolside-Laguna-XS.2"),
    ("laguna:xs-2.1", "poolside-Laguna-XS-2.1"),
]
# LFM2.5's templates cut a past answer's content after its last </think> and write no
# reasoning of it (LFM2.5-8B-A1B: up to the last user message; Instruct: all but the last).
CUT = [("lfm2", "LFM2.5-8B-A1B"), ("lfm2:lfm2.5-instruct", "LFM2.5-Instruct")]

QUESTION = {"role": "user", "content": "Weather?"}


def _conversations() -> list[list[dict[str, Any]]]:
    return [
        # A past answer, before the last query, and the last answer, after it.
        [
            QUESTION,
            {"role": "assistant", "content": "<think>\nIt is cold.\n</think>\n\nCold."},
            {"role": "user", "content": "And tomorrow?"},
            {"role": "assistant", "content": "<think>Look again.</think>Warmer."},
        ],
        # A turn with calls whose content is its reasoning alone, then the answer.
        [
            QUESTION,
            {"role": "assistant", "content": "<think>Look it up.</think>", "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_0", "content": "3 C"},
            {"role": "assistant", "content": "No open marker.</think>\nIt is 3 C."},
        ],
        # What the split drops: text before <think>, a second block.
        [
            QUESTION,
            {"role": "assistant", "content": "Hm. <think>a</think>middle</think>\n\nend"},
            {"role": "user", "content": "Thanks."},
            {"role": "assistant", "content": "You are welcome."},
        ],
        # reasoning_content given beside a content holding </think>.
        [
            QUESTION,
            {"role": "assistant", "content": "x</think>y", "reasoning_content": "Given."},
        ],
    ]


def _renders(name: str, template: str, messages: list[dict[str, Any]]) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = pawlette.get_format(name)
    expected = corpus_reference(template).render(messages, [WEATHER], add_generation_prompt=False)
    assert expected.text is not None, expected.refusal
    request = {"messages": messages, "tools": [WEATHER]}
    found = fmt.render(request).text
    assert found == expected.text
    exported, _ = render_jinja_template(
        [template_request(fmt, request)], tools=[WEATHER], chat_template=export_jinja(fmt)
    )
    assert exported[0] == expected.text


@pytest.mark.parametrize(("name", "template"), FORMATS + CUT, ids=str)
def test_reasoning_in_a_past_answer_s_content_is_written_as_the_template_writes_it(
    name: str, template: str
) -> None:
    for messages in _conversations():
        _renders(name, template, messages)


@pytest.mark.parametrize(("name", "template"), FORMATS + CUT, ids=str)
def test_what_the_split_drops_is_a_recorded_loss(name: str, template: str) -> None:
    rendering = pawlette.get_format(name).render({"messages": _conversations()[2]})
    lost = [loss for loss in rendering.losses if loss.startswith("messages[1].content")]
    assert any("before its <think> dropped" in loss for loss in lost), rendering.losses
    assert any("between its first and last </think> dropped" in loss for loss in lost)
    assert "middle" not in rendering.text


@pytest.mark.parametrize(("name", "template"), FORMATS, ids=str)
def test_a_split_answer_reads_back_as_reasoning_and_content(name: str, template: str) -> None:
    fmt = pawlette.get_format(name)
    messages = [QUESTION, {"role": "assistant", "content": "<think>Plan.</think>Answer."}]
    rendering = fmt.render({"messages": messages})
    parsed = fmt.parse_conversation(rendering.text)
    answer = parsed.messages[-1]
    assert (answer.get("reasoning_content"), answer["content"]) == ("Plan.", "Answer.")


def test_the_split_as_the_templates_split() -> None:
    assert split_content("a<think>b</think>c</think>\nd", "<think>", "</think>") == (
        "b",
        "d",
        (
            "the text before its <think> dropped",
            "the text between its first and last </think> dropped",
            "trimmed",
        ),
    )
    assert split_content("plan</think>answer", "<think>", "</think>") == ("plan", "answer", ())
    assert split_content("plan</think>\nanswer\n", "<think>", "</think>", ("\n", "\n"))[:2] == (
        "plan",
        "answer",
    )


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"in_content": "sometimes"}, "in_content"),
        ({"in_content_trim": ("\n", "\n")}, "without in_content"),
        ({"in_content_turns": "past"}, "without in_content"),
        ({"in_content": "unset", "in_content_turns": "first"}, "in_content_turns"),
        ({"in_content": "unset", "in_content_trim": "\n"}, "in_content_trim"),
        ({"in_content": "unset", "open": fence("\n")}, "whitespace alone"),
    ],
    ids=str,
)
def test_a_bad_in_content_is_refused(fields: dict[str, Any], match: str) -> None:
    given = {"open": fence(Marker("<think>")), "close": fence(Marker("</think>")), **fields}
    frames = {
        role: Frame(open=fence(Marker(f"<{role}>")), end=fence(Marker("<end>")))
        for role in ("system", "user", "assistant", "tool")
    }
    with pytest.raises(FormatError, match=match):
        Layout(
            name="probe", summary="a bad in_content", frames=frames, concepts=(Reasoning(**given),)
        )


@pytest.mark.parametrize(("name", "template"), FORMATS + CUT, ids=str)
def test_the_exported_split_renders_alike_under_llama_cpp(name: str, template: str) -> None:
    from ..export.test_jinja_llama_cpp import variables
    from ..support.llama_cpp_jinja import render_with_llama_cpp

    fmt = pawlette.get_format(name)
    requests = [{"messages": messages, "tools": [WEATHER]} for messages in _conversations()]
    cases = [variables(name, request, False) for request in requests]
    results = render_with_llama_cpp(export_jinja(fmt), cases)
    for request, result in zip(requests, results, strict=True):
        assert result.get("text") == fmt.render(request).text, result.get("error")


def _nemotron_conversations() -> list[list[dict[str, Any]]]:
    """Each place Nemotron 3 Nano's template reads markers in a content: a turn after the
    last query (written as given, no stand-in), and before it, with and without calls, with
    both markers, one of them, or a dropped block of its own."""
    answers: list[dict[str, Any]] = [
        {"role": "assistant", "content": " <think>plan</think>\n answer "},
        {"role": "assistant", "content": "Type </think> to begin. "},
        {"role": "assistant", "content": "a <think>b", "tool_calls": [CALL]},
        {"role": "assistant", "content": "<think>x</think> y ", "tool_calls": [CALL]},
        {"role": "assistant", "content": "z</think>", "tool_calls": [CALL]},
        {"role": "assistant", "content": "p</think> q", "reasoning_content": "Dropped."},
        {
            "role": "assistant",
            "content": "</think>",
            "reasoning_content": "r",
            "tool_calls": [CALL],
        },
    ]
    conversations = []
    for answer in answers:
        result = [{"role": "tool", "tool_call_id": "call_0", "content": "3 C"}]
        done = result if answer.get("tool_calls") else []
        # before the last query (the template truncates it), then after it
        conversations.append([QUESTION, answer, *done, {"role": "user", "content": "Next?"}])
        conversations.append([QUESTION, answer, *done])
    return conversations


@pytest.mark.parametrize(("thinking", "truncate"), [(True, True), (False, True), (True, False)])
def test_nemotron_writes_a_content_holding_its_markers_as_the_template_does(
    thinking: bool, truncate: bool
) -> None:
    import dataclasses

    from transformers.utils.chat_template_utils import render_jinja_template

    from ..export.test_jinja_llama_cpp import variables
    from ..support.llama_cpp_jinja import render_with_llama_cpp

    name = "chatml:nemotron-3-nano"
    base = pawlette.get_format(name)
    options = dataclasses.replace(
        base.options, thinking=thinking, truncate_history_thinking=truncate
    )
    assert base.variant is not None
    fmt = base.variant(options)
    given = {"enable_thinking": thinking, "truncate_history_thinking": truncate}
    reference = corpus_reference("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", variables=given)
    requests = [
        {"messages": messages, "tools": [WEATHER]} for messages in _nemotron_conversations()
    ]
    asked = [request["messages"][-1]["role"] != "assistant" for request in requests]
    cases = [
        {**variables(name, request, prompt), **given}
        for request, prompt in zip(requests, asked, strict=True)
    ]
    llama = render_with_llama_cpp(export_jinja(base), cases)
    for request, prompt, from_llama in zip(requests, asked, llama, strict=True):
        expected = reference.render(request["messages"], [WEATHER], add_generation_prompt=prompt)
        assert expected.text is not None, expected.refusal
        assert fmt.render(request, add_generation_prompt=prompt).text == expected.text
        exported, _ = render_jinja_template(
            [template_request(fmt, request)],
            tools=[WEATHER],
            chat_template=export_jinja(base),
            add_generation_prompt=prompt,
            **given,
        )
        assert exported[0] == expected.text
        assert from_llama.get("text") == expected.text, from_llama.get("error")


@pytest.mark.parametrize(("name", "template"), FORMATS + CUT, ids=str)
def test_the_split_renders_compiled_and_as_the_reference(name: str, template: str) -> None:
    from pawlette.compile import is_compiled, reference_of
    from pawlette.engine.writer import Writer
    from pawlette.format import coerce_conversation

    fmt = pawlette.get_format(name)
    assert is_compiled(fmt.write)
    for messages in _conversations():
        given, tools = coerce_conversation({"messages": messages, "tools": [WEATHER]})
        renderings = []
        for write in (fmt.write, reference_of(fmt.write)):
            writer = Writer(fmt.escape_pattern)
            write(writer, given, tools, False)
            renderings.append(writer.rendering())
        assert renderings[0] == renderings[1]
        assert renderings[0].text == fmt.render({"messages": messages, "tools": [WEATHER]}).text


def test_nemotron_records_the_cut_of_a_past_turn_alone() -> None:
    fmt = pawlette.get_format("chatml:nemotron-3-nano")
    past = {"role": "assistant", "content": "<think>x</think> y", "tool_calls": [CALL]}
    result = {"role": "tool", "tool_call_id": "call_0", "content": "3 C"}
    rendering = fmt.render({"messages": [QUESTION, past, result, QUESTION], "tools": [WEATHER]})
    assert rendering.losses == (
        "messages[1].content: cut around its <think> or </think>, as the template cuts a past turn",
    )
    assert "x" not in rendering.text.split("<|im_start|>assistant")[1]
