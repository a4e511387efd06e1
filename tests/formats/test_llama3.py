"""Llama 3: what the models write, read as the peers read it (their test cases, in
``families/data/llama3.json``), whole, streamed and from Meta's token ids; where pawlette
reads otherwise the output stays content as written, with a warning; and the declaration's
own decisions (the 3.2 variant's date, the tools in the system turn, the tools' host)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.declare import Marker, declare, fence
from pawlette.errors import FormatError
from pawlette.export import export_grammar
from pawlette.formats.llama3.calls import Llama3Calls
from tests.support.template_compare import corpus_reference

from ..declare import registering
from ..declare.test_json_calls import WEATHER, call, layout, read_calls_of, request
from ..declared.model_output import check_every_way
from ..support.llama3 import llama3_tokenizer

LLAMA3 = pawlette.get_format("llama3")
LLAMA3_2 = pawlette.get_format("llama3:3.2")
DATA = json.loads((Path(__file__).parent / "families" / "data" / "llama3.json").read_text())
CASES = DATA["cases"]
AS_PEERS = [case for case in CASES if "pawlette" not in case]
OTHERWISE = [case for case in CASES if "pawlette" in case]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "now",
            "description": "The time.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


def _label(case: dict[str, Any]) -> str:
    return case["source"].rpartition("#")[2][:60]


def _reading(text: str) -> tuple[str | None, list[tuple[str, Any]], list[str]]:
    messages, _, warnings = check_every_way(LLAMA3, llama3_tokenizer(), text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, calls, warnings


@pytest.mark.parametrize("case", AS_PEERS, ids=_label)
def test_what_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    content, calls, warnings = _reading(case["output"])
    expected = case["expected"]
    assert calls == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
    assert content == expected["content"]
    if expected["tool_calls"]:
        assert warnings == []  # (a malformed call read as text is reported)


@pytest.mark.parametrize("case", OTHERWISE, ids=_label)
def test_where_pawlette_reads_otherwise_it_says_so(case: dict[str, Any]) -> None:
    content, calls, warnings = _reading(case["output"])
    if calls:  # a call without arguments: {} (SGLang's reading)
        assert calls == [("toolWithoutParams", {})] and content is None
    else:
        assert content == case["output"]
        expected_warning = case["expected"]["tool_calls"] or "builtin" in case["source"]
        assert bool(warnings) == bool(expected_warning)


def test_the_3_2_variant_writes_its_date_as_the_clock_would() -> None:
    day = datetime.date(2025, 3, 5)
    fmt = pawlette.get_format("llama3:3.2").with_options(date=day)
    request = {"messages": [{"role": "user", "content": "Hi"}]}
    reference = corpus_reference("meta-llama-Llama-3.2-3B-Instruct", today=day)
    rendered = reference.render_request(request, add_generation_prompt=True)
    assert rendered.read_clock and rendered.text is not None
    assert "Today Date: 05 Mar 2025\n" in rendered.text
    assert fmt.render(request, add_generation_prompt=True).text == rendered.text
    assert pawlette.get_format("llama3:3.2").declaration.today == "date"


def test_the_date_option_is_a_date() -> None:
    """A string would be written as it is (``Today Date: x``); the header it stands for is
    ``date_string``."""
    with pytest.raises(pawlette.RequestError) as raised:
        pawlette.get_format("llama3").with_options(date="x")
    assert str(raised.value) == (
        "options.date: 'x' (str); expected a datetime.date or None (the date llama3 "
        "writes, such as datetime.date(2024, 7, 26))"
    )
    assert pawlette.get_format("llama3:3.2").with_options(date=None).options.date is None
    header = (
        pawlette.get_format("llama3")
        .with_options(date_string="x")
        .render([{"role": "user", "content": "Hi"}])
    )
    assert "Today Date: x\n" in header.text


def test_tools_in_the_system_turn_as_the_templates_variable_says() -> None:
    fmt = LLAMA3.with_options(tools_in_user_message=False)
    request = {
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "tools": TOOLS,
    }
    for template in ("meta-llama-Llama-3.1-8B-Instruct", "meta-llama-Llama-3.2-3B-Instruct"):
        reference = corpus_reference(template, variables={"tools_in_user_message": False})
        expected = reference.render_request(request, add_generation_prompt=True).text
        assert fmt.render(request, add_generation_prompt=True).text == expected
    parsed = fmt.parse_conversation(fmt.render(request).text)
    assert [tool["function"]["name"] for tool in parsed.tools] == ["now"]
    assert parsed.messages[0]["content"] == "Be brief."


def test_a_second_system_message_hosts_the_tools_as_the_templates_write_it() -> None:
    request = {
        "messages": [
            {"role": "system", "content": "A"},
            {"role": "system", "content": "B"},
            {"role": "user", "content": "C"},
        ],
        "tools": TOOLS,
    }
    reference = corpus_reference("meta-llama-Llama-3.1-8B-Instruct")
    rendering = LLAMA3.render(request, add_generation_prompt=True)
    assert rendering.text == reference.render_request(request, add_generation_prompt=True).text
    assert "messages[1].role: written as the user turn holding the tools" in rendering.losses
    parsed = LLAMA3.parse_conversation(LLAMA3.render(request).text).messages
    roles = [message["role"] for message in parsed]
    assert roles == ["system", "user", "user"]


@pytest.mark.parametrize(
    "template",
    [
        "meta-llama-Llama-3.1-8B-Instruct",
        "meta-llama-Llama-3.2-3B-Instruct",
        "meta-llama-Llama-3.3-70B-Instruct",
    ],
)
def test_an_answer_first_hosts_the_tools_as_the_templates_write_it(template: str) -> None:
    """Meta's templates write the message after the first system message, whatever its role,
    trimmed as the user turn holding the tools: an answer there loses its role (a recorded
    loss) and reads back as a user message; the exported template writes it alike."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    fmt = LLAMA3 if template != "meta-llama-Llama-3.2-3B-Instruct" else LLAMA3_2
    reference = corpus_reference(template, today=fmt.options.date or datetime.date(2024, 7, 26))
    for messages in (
        [
            {"role": "system", "content": "A"},
            {"role": "assistant", "content": " Hello. "},
            {"role": "user", "content": "C"},
        ],
        [{"role": "assistant", "content": "Hello."}, {"role": "user", "content": "C"}],
    ):
        request = {"messages": messages, "tools": TOOLS}
        host = len(messages) - 2
        for prompt in (True, False):
            expected = reference.render_request(request, add_generation_prompt=prompt).text
            rendering = fmt.render(request, add_generation_prompt=prompt)
            assert rendering.text == expected
            assert f"messages[{host}].role: written as the user turn holding the tools" in (
                rendering.losses
            )
        exported, _ = render_jinja_template(
            [messages], tools=TOOLS, chat_template=export_jinja(fmt), add_generation_prompt=True
        )
        assert exported[0] == fmt.render(request, add_generation_prompt=True).text
        parsed = fmt.parse_conversation(fmt.render(request).text).messages
        assert [message["role"] for message in parsed] == [
            *(["system"] if host else []),
            "user",
            "user",
        ]


GREETINGS = [
    [
        {"role": "assistant", "content": " Hello, how can I help? "},
        {"role": "user", "content": "The time?"},
        {"role": "assistant", "content": "Noon."},
    ],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "The time?"},
        {"role": "assistant", "content": "Noon."},
    ],
]


def _trained(rendering: pawlette.Rendering) -> list[tuple[int, str]]:
    """The trainable segments' texts, by message index."""
    return [
        (segment.message_index, segment.text)
        for segment in rendering.segments
        if segment.trainable and segment.text
    ]


@pytest.mark.parametrize("messages", GREETINGS)
def test_an_answer_holding_the_tools_is_not_trained(messages: list[dict[str, Any]]) -> None:
    """Meta's templates write a greeting at the tools' host as the user turn holding them (the
    model writes none of it): the mask trains the later answer alone, with tools, and the
    greeting too without them (then an assistant turn); the exported template's ``{%
    generation %}`` spans are the trainable text, and so is the tokenized mask."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja
    from pawlette.tokenization.encoder import IGNORE_INDEX

    from ..export.support import merged, trainable_spans

    last = len(messages) - 1
    host = last - 2
    template = export_jinja(LLAMA3)
    tokenizer = llama3_tokenizer()
    for tools in (TOOLS, None):
        request = {"messages": messages, **({"tools": tools} if tools else {})}
        rendering = LLAMA3.render(request)
        answers = [(last, "Noon."), (last, "<|eot_id|>")]
        greeting = [(host, messages[host]["content"].strip()), (host, "<|eot_id|>")]
        assert _trained(rendering) == (answers if tools else greeting + answers)
        rendered, spans = render_jinja_template(
            [messages], tools=tools, chat_template=template, return_assistant_tokens_mask=True
        )
        assert rendered[0] == rendering.text
        assert merged([(start, end) for start, end in spans[0]]) == trainable_spans(rendering)
        labels = pawlette.tokenize(LLAMA3, tokenizer, request).labels
        learned = tokenizer.decode(
            [label for label in labels if label != IGNORE_INDEX], skip_special_tokens=False
        )
        assert learned == "".join(text for _, text in _trained(rendering))


def test_an_answer_with_calls_or_results_as_the_tools_host_is_refused() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    with_calls = {
        "messages": [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "a", "content": "12:00"},
        ],
        "tools": TOOLS,
    }
    with pytest.raises(pawlette.RequestError, match=r"messages\[0\]\.tool_calls: calls"):
        LLAMA3.render(with_calls)
    results = {"messages": with_calls["messages"][1:], "tools": TOOLS}
    with pytest.raises(pawlette.RequestError, match=r"messages\[0\]\.role: 'tool'"):
        LLAMA3.render(results)


def test_a_quoted_result_reads_back_as_its_text_and_other_text_as_written() -> None:
    turn = "<|start_header_id|>ipython<|end_header_id|>\n\n{}<|eot_id|>"
    head = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nq<|eot_id|>"
    for written, text in (('"18°C"', "18°C"), ("18°C", "18°C"), ('{"a": 1}', '{"a": 1}')):
        messages = LLAMA3.parse_conversation(head + turn.format(written)).messages
        assert messages[-1]["content"] == text


def test_the_exported_template_writes_what_the_format_writes() -> None:
    """The exported chat template's share of the declaration's choices: the tools' host after
    the first system message, text beside a call dropped, results quoted, texts trimmed, the
    tools in the system turn, and the 3.2 variant's date option."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    request = {
        "messages": [
            {"role": "system", "content": "A"},
            {"role": "system", "content": " B "},
            {"role": "user", "content": "C"},
            {"role": "assistant", "content": "Let me see.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "a", "content": "12:00"},
            {"role": "assistant", "content": "Noon. "},
        ],
        "tools": TOOLS,
    }
    dated = pawlette.get_format("llama3:3.2").with_options(date=datetime.date(2025, 3, 5))
    for fmt in (LLAMA3, LLAMA3.with_options(tools_in_user_message=False), dated):
        rendered, _ = render_jinja_template(
            [request["messages"]], tools=TOOLS, chat_template=export_jinja(fmt)
        )
        assert rendered[0] == fmt.render(request).text


# ---------------------------------------------------------------------- also_open


def test_also_open_reads_a_call_the_template_never_writes() -> None:
    """A fence a model writes before a call (``<|python_tag|>``): read, never written, and
    no grammar asks for it."""
    tagged = Llama3Calls(open=None, parallel=False, also_open=(fence(Marker("<|python_tag|>")),))
    with registering.registered(layout("test-also-open", tagged)) as fmt:
        text = 'Sure.<|python_tag|>{"name": "get_weather", "arguments": {"city": "Oslo"}}'
        completion = fmt.parse(text, tools=[WEATHER])
        assert completion.warnings == ()
        assert completion.message["content"] == "Sure."
        assert read_calls_of(completion.message) == [("get_weather", {"city": "Oslo"})]
        grammar = export_grammar(fmt.name, [WEATHER], "required", False, "lark")
        start = next(line for line in grammar.splitlines() if line.startswith("start:"))
        assert start == "start: call"  # the marker is only kept out of text
        written = fmt.render(request({"role": "assistant", "tool_calls": [call(1, {})]})).text
        assert "python_tag" not in written


def test_also_open_reads_joined_and_python_calls_as_the_turn_does() -> None:
    tagged = Llama3Calls(
        open=None,
        separator=fence(","),
        with_content=False,
        drops_calls=True,
        arguments="repr",
        also_open=(fence(Marker("<|python_tag|>")),),
    )
    with registering.registered(layout("test-also-open-repr", tagged)) as fmt:
        text = "<|python_tag|>" + '{"name": "get_weather", "arguments": {\'city\': \'A\'}},' * 2
        completion = fmt.parse(text.rstrip(","), tools=[WEATHER])
        assert read_calls_of(completion.message) == [("get_weather", {"city": "A"})] * 2


def test_also_open_holds_fences() -> None:
    tagged = Llama3Calls(open=fence("<c>"), also_open=("<|python_tag|>",))  # type: ignore[arg-type]
    with pytest.raises(
        FormatError, match=r"Llama3Calls\.also_open\[0\]: '<\|python_tag\|>'; expected a fence"
    ):
        declare(layout("test-also-open-fences", tagged))
