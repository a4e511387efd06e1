"""Mistral's formats (:mod:`pawlette.formats.mistral`): what the models write, read as the
peers read it (llama.cpp's and SGLang's parser tests, carried over as data in
``families/data/mistral.json``, each with its source), what the declaration decided, and
token ids with Mistral's real tekken tokenizer."""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

import pytest

import pawlette
from pawlette.errors import RequestError

from .peers import case_id, cases, peer_tools, read_as_the_peer

CASES = cases("mistral")
READ = [case for case in CASES if case["pawlette"] == "read"]
LIST_FORM = [case for case in CASES if case["pawlette"] == "json-list-form"]
COMPACT_FORM = [case for case in CASES if case["pawlette"] == "compact-form"]


@pytest.mark.parametrize("case", READ, ids=case_id)
def test_what_the_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    parsed = read_as_the_peer(case)  # with the [CALL_ID] a model writes (llama.cpp keeps it)
    expected = case["expected"]
    # A call marker inside [THINK] is reasoning text (as llama.cpp reads it), with a warning.
    assert bool(parsed.warnings) == ("[TOOL_CALLS]" in (expected["reasoning_content"] or ""))


@pytest.mark.parametrize("case", LIST_FORM, ids=case_id)
def test_nemos_json_list_is_content_with_a_warning(case: dict[str, Any]) -> None:
    """Decided: the v7 formats read their own call spelling; the older JSON list
    (``[TOOL_CALLS][{...}]``, which SGLang reads in any Mistral model) stays content, as
    written, and a warning names it."""
    fmt = pawlette.get_format(case["format"])
    parsed = fmt.parse(case["output"], tools=peer_tools(case))
    assert parsed.message["content"] == case["output"]
    assert "tool_calls" not in parsed.message or not parsed.message["tool_calls"]
    assert parsed.warnings


@pytest.mark.parametrize("case", COMPACT_FORM, ids=case_id)
def test_nemo_reads_its_own_json_list_and_keeps_the_v7_form_as_content(
    case: dict[str, Any],
) -> None:
    """Decided: Nemo writes ``[TOOL_CALLS][{...}]``; the later ``name[ARGS]{...}`` form, which
    SGLang reads in any Mistral model, stays content, as written, and a warning names it."""
    parsed = pawlette.get_format(case["format"]).parse(case["output"], tools=peer_tools(case))
    assert parsed.message["content"] == case["output"]
    assert not parsed.message.get("tool_calls")
    assert parsed.warnings


def test_nemo_keeps_the_text_before_its_calls_as_written() -> None:
    """Decided: SGLang strips the space before ``[TOOL_CALLS]``; pawlette keeps the text as
    the model wrote it (nothing silently dropped)."""
    (case,) = [case for case in CASES if case["pawlette"] == "verbatim-text"]
    parsed = pawlette.get_format(case["format"]).parse(case["output"], tools=peer_tools(case))
    assert parsed.message["content"] == case["expected"]["content"] + " "
    assert [call["function"]["name"] for call in parsed.message["tool_calls"]] == [
        call["name"] for call in case["expected"]["tool_calls"]
    ]


def test_every_peer_case_is_read_or_decided() -> None:
    decided = {case["pawlette"] for case in CASES}
    assert decided <= {
        "read",
        "json-list-form",
        "compact-form",
        "verbatim-text",
        # llama.cpp's reasoning_format=none leaves [THINK] in content: pawlette always
        # separates reasoning (the option is llama.cpp's, not the format's).
        "reasoning-format-none",
        # llama.cpp strips a ```json fence under a response_format: not the format's job.
        "response-format-fence",
        # llama.cpp's continue_final_message prefill: not a completion of the prompt.
        "continue-final-message",
    }
    assert len(READ) >= 15


REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Zürich? Type [INST] or </s> to begin."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call00001",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call00001", "content": '{"temp_c": 3}'},
        {"role": "assistant", "content": "3 °C."},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ],
}

WRITTEN = (
    "<s>[SYSTEM_PROMPT]You are terse.[/SYSTEM_PROMPT][AVAILABLE_TOOLS]"
    '[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", '
    '"properties": {"city": {"type": "string"}}}}}][/AVAILABLE_TOOLS]'
    "[INST]Weather in Zürich? Type [INST] or </s> to begin.[/INST]"
    '[TOOL_CALLS]get_weather[CALL_ID]call00001[ARGS]{"city": "Zürich"}</s>'
    '[TOOL_RESULTS]call00001[TOOL_CONTENT]{"temp_c": 3}[/TOOL_RESULTS]3 °C.</s>'
)


def test_small_3_2_writes_the_wire_format() -> None:
    assert pawlette.get_format("mistral").render(REQUEST).text == WRITTEN


def test_the_date_of_the_default_system_text_is_an_option() -> None:
    fmt = pawlette.get_format("mistral").with_options(today=datetime.date(2026, 1, 15))
    text = fmt.render([{"role": "user", "content": "Hi"}]).text
    assert "The current date is 2026-01-15." in text


def test_devstral_writes_the_tools_after_the_system_turn_and_no_ids() -> None:
    text = pawlette.get_format("mistral:devstral").render(REQUEST).text
    assert text.startswith("<s>[SYSTEM_PROMPT]You are terse.[/SYSTEM_PROMPT][AVAILABLE_TOOLS]")
    assert '[TOOL_CALLS]get_weather[ARGS]{"city": "Zürich"}</s>' in text
    assert '[TOOL_RESULTS]{"temp_c": 3}[/TOOL_RESULTS]' in text


NO_PARAMETERS = {
    "type": "function",
    "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
}
SYSTEM_AND_TOOLS = (
    "<s>[SYSTEM_PROMPT]Be brief.[/SYSTEM_PROMPT][AVAILABLE_TOOLS]"
    '[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", '
    '"properties": {}}}}][/AVAILABLE_TOOLS]'
)
"""Devstral's and Ministral 3's text of a system message alone, with tools."""
TOOLS_AFTER_SYSTEM_TEMPLATES = [
    ("mistral:devstral", "unsloth-mistral-Devstral-Small-2507"),
    ("mistral:ministral-3-reasoning", "mistralai-Ministral-3-14B-Reasoning-2512"),
]


@pytest.mark.parametrize(("name", "template"), TOOLS_AFTER_SYSTEM_TEMPLATES, ids=str)
def test_a_system_message_alone_ends_with_the_tools_and_reads_back_as_the_prompt(
    name: str, template: str
) -> None:
    """Devstral's and Ministral 3's templates write the tools right after the system turn,
    generation prompt or not (the prompt writes nothing: the answer has no opener).  The
    render, the exported Jinja and the template agree; the text reads back as the system
    message and the tools, ending where the model answers, and what follows the block is the
    answer."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    from ..support.template_compare import corpus_reference

    fmt = pawlette.get_format(name)
    reference = corpus_reference(template, bos_token="<s>", eos_token="</s>")
    messages = [{"role": "system", "content": "Be brief."}]
    for prompt in (False, True):
        expected = reference.render(messages, [NO_PARAMETERS], add_generation_prompt=prompt)
        assert expected.text == SYSTEM_AND_TOOLS
        rendering = fmt.render(messages, [NO_PARAMETERS], add_generation_prompt=prompt)
        assert rendering.text == SYSTEM_AND_TOOLS
        exported, _ = render_jinja_template(
            [messages],
            tools=[NO_PARAMETERS],
            chat_template=export_jinja(fmt),
            add_generation_prompt=prompt,
        )
        assert exported[0] == SYSTEM_AND_TOOLS
    back = fmt.parse_conversation(SYSTEM_AND_TOOLS, strict=True)
    assert (back.messages, back.tools) == (messages, [NO_PARAMETERS])
    assert back.add_generation_prompt and not back.continue_final_message
    prefilled = fmt.parse_conversation(SYSTEM_AND_TOOLS + "Sure, the", strict=True)
    assert prefilled.messages == [*messages, {"role": "assistant", "content": "Sure, the"}]
    assert prefilled.continue_final_message and not prefilled.add_generation_prompt
    # A completion after that prompt starts where the usual prompt leaves the model.
    assert fmt.start_after(SYSTEM_AND_TOOLS) is None
    assert fmt.parse("Hello!</s>", prompt=SYSTEM_AND_TOOLS).message == {
        "role": "assistant",
        "content": "Hello!",
    }


def test_devstral_reads_a_greeting_right_after_the_tools() -> None:
    """Devstral's template writes an answer first in the conversation straight after the
    tools block (no opener): read back as it was given."""
    devstral = pawlette.get_format("mistral:devstral")
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hello!"},
    ]
    from ..support.template_compare import corpus_reference

    reference = corpus_reference(
        TOOLS_AFTER_SYSTEM_TEMPLATES[0][1], bos_token="<s>", eos_token="</s>"
    )
    text = devstral.render(messages, [NO_PARAMETERS]).text
    assert text == SYSTEM_AND_TOOLS + "Hello!</s>"
    assert reference.render(messages, [NO_PARAMETERS], add_generation_prompt=False).text == text
    back = devstral.parse_conversation(text, strict=True)
    assert (back.messages, back.tools) == (messages, [NO_PARAMETERS])
    assert not back.add_generation_prompt and not back.continue_final_message


def test_small_3_2_refuses_ids_its_template_refuses() -> None:
    request = json.loads(json.dumps(REQUEST))
    request["messages"][2]["tool_calls"][0]["id"] = "call_1"
    with pytest.raises(RequestError, match=r"messages\[2\]\.tool_calls\[0\]\.id"):
        pawlette.get_format("mistral").render(request)


@pytest.mark.parametrize(
    ("name", "completion"),
    [
        ("mistral:small-3.2", '[TOOL_CALLS]get_weather[CALL_ID]abc[ARGS]{"location": "Paris"}'),
        ("mistral:nemo", '[TOOL_CALLS][{"name": "get_weather", "arguments": {}, "id": "abc"}]'),
    ],
)
def test_a_written_id_the_template_refuses_is_replaced_and_named(
    name: str, completion: str
) -> None:
    """Decided with Mistral Small 3.2's template, which raises on a call id or a result's
    ``tool_call_id`` of another length than nine: the call is served under an id of the
    shape the format writes, with a warning naming the model's, so the client's next turn
    (which answers the call by the served id) renders."""
    fmt = pawlette.get_format(name)
    parsed = fmt.parse(completion)
    served = parsed.message["tool_calls"][0]["id"]
    assert re.fullmatch("[A-Za-z0-9]{9}", served)
    assert [warning.message for warning in parsed.warnings] == [
        f"call id 'abc' is of a shape the format's render refuses (served as {served!r}); "
        "expected an id matching [A-Za-z0-9]{9}"
    ]
    assert parsed.warnings[0].text == "abc"
    assert parsed.warnings[0].offset == len("[TOOL_CALLS]")  # (where the call begins)
    answered = [
        {"role": "user", "content": "Weather?"},
        parsed.message,
        {"role": "tool", "tool_call_id": served, "content": "18"},
    ]
    text = fmt.render(answered).text
    assert f"{served}" in text and "abc" not in text
    with pytest.raises(pawlette.ParseError, match="call id 'abc' is of a shape"):
        fmt.parse(completion, strict=True)


def test_small_3_2_drops_text_beside_calls_and_says_so() -> None:
    request = json.loads(json.dumps(REQUEST))
    request["messages"][2]["content"] = "Let me look."
    rendering = pawlette.get_format("mistral").render(request)
    assert rendering.text == WRITTEN
    assert any("messages[2].content" in str(loss) for loss in rendering.losses)


def test_ministral_refuses_an_empty_answer_and_a_later_system_message() -> None:
    fmt = pawlette.get_format("mistral:ministral-3-reasoning")
    with pytest.raises(RequestError, match=r"messages\[1\]\.content"):
        fmt.render([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": ""}])
    with pytest.raises(RequestError):
        fmt.render(
            [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"},
                {"role": "system", "content": "Later."},
                {"role": "user", "content": "Bye"},
            ]
        )


def test_ministral_drops_reasoning_content_as_its_template_does() -> None:
    fmt = pawlette.get_format("mistral:ministral-3-reasoning")
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "greet"},
    ]
    rendering = fmt.render(messages)
    assert "[THINK]" not in rendering.text.split("[/SYSTEM_PROMPT]", 1)[1]
    assert rendering.losses


@pytest.mark.parametrize("content", [" ", "\n", "  \n ", "Checking."])
def test_ministral_reads_back_the_text_it_writes_before_calls(content: str) -> None:
    # The assistant turn has no opener: whitespace alone before [TOOL_CALLS] is the
    # message's text (the template writes it), not layout between turns.
    fmt = pawlette.get_format("mistral:ministral-3-reasoning")
    call = {"id": "abcdefghi", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": content, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "abcdefghi", "content": "ok"},
    ]
    text = fmt.render(messages, tools).text
    assert f"[/INST]{content}[TOOL_CALLS]" in text
    back = fmt.parse_conversation(text)
    assert back.messages[1]["content"] == content
    assert fmt.render(back.messages, back.tools).text == text


def test_ids_with_the_real_tekken_tokenizer() -> None:
    from ..support.pypi_tokenizers import TEKKEN_SPECIAL_TOKENS, tekken_tokenizer

    tokenizer = tekken_tokenizer()
    result = pawlette.tokenize("mistral", tokenizer, REQUEST)
    ids = list(result.input_ids)
    control = {token_id: text for text, token_id in TEKKEN_SPECIAL_TOKENS.items()}
    # Every marker the format writes is one control token; the user's "[INST]" and "</s>"
    # stay text, so exactly one [INST] and two </s> ids appear.
    written = [control[token_id] for token_id in ids if token_id in control]
    assert written == [
        "<s>",
        "[SYSTEM_PROMPT]",
        "[/SYSTEM_PROMPT]",
        "[AVAILABLE_TOOLS]",
        "[/AVAILABLE_TOOLS]",
        "[INST]",
        "[/INST]",
        "[TOOL_CALLS]",
        "[CALL_ID]",
        "[ARGS]",
        "</s>",
        "[TOOL_RESULTS]",
        "[TOOL_CONTENT]",
        "[/TOOL_RESULTS]",
        "</s>",
    ]
    assert tokenizer.decode(ids, skip_special_tokens=False) == WRITTEN
    trained = [token for token in result.labels if token != -100]
    assert tokenizer.decode(trained, skip_special_tokens=False).endswith("3 °C.</s>")


def test_ministrals_default_system_text_spells_its_think_tokens() -> None:
    """The template's default text holds ``[THINK]``/``[/THINK]``: control tokens in the
    model's ids, and parsing the conversation back gives no system message."""
    from ..support.pypi_tokenizers import TEKKEN_SPECIAL_TOKENS, tekken_tokenizer

    fmt = pawlette.get_format("mistral:ministral-3-reasoning")
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]
    ids = list(pawlette.tokenize(fmt, tekken_tokenizer(), messages).input_ids)
    assert TEKKEN_SPECIAL_TOKENS["[THINK]"] in ids
    assert TEKKEN_SPECIAL_TOKENS["[/THINK]"] in ids
    parsed = fmt.parse_conversation(fmt.render(messages).text)
    assert [message["role"] for message in parsed.to_request()["messages"]] == [
        "user",
        "assistant",
    ]


NEMO_WRITTEN = (
    '<s>[INST]Weather in Zürich? Type [INST] or </s> to begin.[/INST][TOOL_CALLS][{"name": '
    '"get_weather", "arguments": {"city": "Zürich"}, "id": "call00001"}]</s>'
    '[TOOL_RESULTS]{"content": {"temp_c": 3}, "call_id": "call00001"}[/TOOL_RESULTS]3 °C.</s>'
    '[AVAILABLE_TOOLS][{"type": "function", "function": {"name": "get_weather", "parameters": '
    '{"type": "object", "properties": {"city": {"type": "string"}}}}}][/AVAILABLE_TOOLS]'
    "[INST]You are terse.\n\nThanks[/INST]"
)


def _nemo_request() -> dict[str, Any]:
    return {
        "messages": [*REQUEST["messages"], {"role": "user", "content": "Thanks"}],
        "tools": REQUEST["tools"],
    }


def test_nemo_writes_the_system_text_into_the_last_user_message() -> None:
    fmt = pawlette.get_format("mistral:nemo")
    assert fmt.render(_nemo_request()).text == NEMO_WRITTEN
    # Ending on the answer, the system text has no user message to go into (as the
    # template): a recorded loss, never a silent one.
    rendering = fmt.render(REQUEST)
    assert "You are terse." not in rendering.text
    assert any(loss.startswith("messages[0]: not written") for loss in rendering.losses)


def test_nemo_refuses_what_its_template_refuses() -> None:
    fmt = pawlette.get_format("mistral:nemo")
    later_system = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Yo"},
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Bye"},
    ]
    with pytest.raises(RequestError, match=r"messages\[2\]"):
        fmt.render(later_system)
    bad_call_id = json.loads(json.dumps(REQUEST))
    bad_call_id["messages"][2]["tool_calls"][0]["id"] = "call_1"
    with pytest.raises(RequestError, match=r"messages\[2\]\.tool_calls\[0\]\.id"):
        fmt.render(bad_call_id)
    bad_result_id = json.loads(json.dumps(REQUEST))
    bad_result_id["messages"][3]["tool_call_id"] = "call_1"
    with pytest.raises(RequestError, match=r"messages\[3\]\.tool_call_id"):
        fmt.render(bad_result_id)


def test_nemo_renders_system_messages_as_its_template() -> None:
    from pawlette.declare import layout_of

    from ..support.conversations import generate_conversations
    from ..support.template_compare import compare_renders, corpus_reference

    fmt = pawlette.get_format("mistral:nemo")
    layout = layout_of(fmt)
    assert layout is not None
    conversations = generate_conversations(
        10,
        seed=3,
        avoid=fmt.special_markers,
        alternating=True,
        text_with_calls=False,
        reasoning=False,
        system_positions=("first",),
    )
    report = compare_renders(
        fmt, corpus_reference("mistralai-Mistral-Nemo-Instruct-2407"), conversations
    )
    assert report.agrees, report.describe()


def test_nemo_parses_its_results_and_ids_back() -> None:
    fmt = pawlette.get_format("mistral:nemo")
    parsed = fmt.parse_conversation(NEMO_WRITTEN)
    messages = parsed.to_request()["messages"]
    assert messages[1]["tool_calls"][0]["id"] == "call00001"
    assert messages[2] == {"role": "tool", "tool_call_id": "call00001", "content": '{"temp_c": 3}'}
    # The system text is part of the last user turn as written: it reads back as user text.
    assert messages[-1] == {"role": "user", "content": "You are terse.\n\nThanks"}


def test_nemo_ids_with_the_real_tekken_tokenizer() -> None:
    from ..support.pypi_tokenizers import TEKKEN_SPECIAL_TOKENS, tekken_tokenizer

    tokenizer = tekken_tokenizer()
    result = pawlette.tokenize("mistral:nemo", tokenizer, _nemo_request())
    ids = list(result.input_ids)
    control = {token_id: text for text, token_id in TEKKEN_SPECIAL_TOKENS.items()}
    written = [control[token_id] for token_id in ids if token_id in control]
    # The user's "[INST]" and "</s>" stay text.
    assert written == [
        "<s>",
        "[INST]",
        "[/INST]",
        "[TOOL_CALLS]",
        "</s>",
        "[TOOL_RESULTS]",
        "[/TOOL_RESULTS]",
        "</s>",
        "[AVAILABLE_TOOLS]",
        "[/AVAILABLE_TOOLS]",
        "[INST]",
        "[/INST]",
    ]
    assert tokenizer.decode(ids, skip_special_tokens=False) == NEMO_WRITTEN


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
EQUAL_USERS_TEMPLATES = [
    ("mistral", "Mistral-Small-3.2-24B-Instruct-2506"),
    ("mistral:nemo", "mistralai-Mistral-Nemo-Instruct-2407"),
]


@pytest.mark.parametrize(("name", "template"), EQUAL_USERS_TEMPLATES, ids=str)
def test_the_tools_come_before_every_user_message_equal_to_the_last(
    name: str, template: str
) -> None:
    """Small 3.2's and Nemo's templates test ``message == user_messages[-1]``: a user message
    equal to the last one (every field alike) gets the tools block too; one that differs in
    a field does not.  The render, the exported Jinja and the template agree, and parsing
    reads the repeated block as the same tools."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    from ..declare.test_cross_artifacts import template_request
    from ..support.template_compare import corpus_reference

    fmt = pawlette.get_format(name)
    reference = corpus_reference(template, bos_token="<s>", eos_token="</s>")
    conversations = [
        [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Hi"},
        ],
        [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Again"},
            {"role": "assistant", "content": "Hello again."},
            {"role": "user", "content": "Hi"},
        ],
        [  # a name makes the messages differ (a recorded loss: the name is not written)
            {"role": "user", "content": "Hi", "name": "ann"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Hi"},
        ],
    ]
    for number, messages in enumerate(conversations):
        request = {"messages": messages, "tools": [WEATHER]}
        expected = reference.render(messages, [WEATHER], add_generation_prompt=False)
        assert expected.text is not None, expected.refusal
        rendering = fmt.render(request)
        assert rendering.text == expected.text
        blocks = rendering.text.count("[AVAILABLE_TOOLS]")
        assert blocks == (2 if number < 2 else 1)
        exported, _ = render_jinja_template(
            [template_request(fmt, request)], tools=[WEATHER], chat_template=export_jinja(fmt)
        )
        assert exported[0] == expected.text
        parsed = fmt.parse_conversation(rendering.text)
        assert parsed.tools == [WEATHER]


def test_equal_users_needs_the_block_before_the_last_user_turn() -> None:
    from pawlette.declare import Frame, Layout, Marker, ToolsBlock, fence
    from pawlette.errors import FormatError

    frames = {
        role: Frame(open=fence(Marker(f"<{role}>")), end=fence(Marker("<end>")))
        for role in ("system", "user", "assistant", "tool")
    }
    block = ToolsBlock(
        place="first_user",
        open=fence(Marker("<tools>")),
        close=fence(Marker("</tools>")),
        equal_users=True,
    )
    with pytest.raises(FormatError, match=r"equal_users=True\) with place='first_user'"):
        Layout(name="probe", summary="equal users elsewhere", frames=frames, concepts=(block,))


def test_the_tools_after_the_system_turn_need_a_close_fence() -> None:
    """The block's close is where the answer may begin: a block without one is refused."""
    import dataclasses

    from pawlette.declare import declare
    from pawlette.errors import FormatError
    from pawlette.formats.mistral import DEVSTRAL, layout
    from pawlette.formats.mistral.tools import ToolsAfterSystemTurn

    devstral = layout(DEVSTRAL)
    concepts = tuple(
        dataclasses.replace(concept, close=())
        if isinstance(concept, ToolsAfterSystemTurn)
        else concept
        for concept in devstral.concepts
    )
    assert concepts != devstral.concepts
    with pytest.raises(
        FormatError, match=r"ToolsAfterSystemTurn\(place='after_system', close=\(\)\)"
    ):
        declare(dataclasses.replace(devstral, concepts=concepts))
