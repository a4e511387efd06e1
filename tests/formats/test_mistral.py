"""Mistral's formats (:mod:`pawlette.formats.mistral`): what the models write, read as the
peers read it (llama.cpp's and SGLang's parser tests, carried over as data in
``families/data/mistral.json``, each with its source), what the declaration decided, and
token ids with Mistral's real tekken tokenizer."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.errors import RequestError

CASES = json.loads((Path(__file__).parent / "families" / "data" / "mistral.json").read_text())
READ = [case for case in CASES if case["pawlette"] == "read"]
LIST_FORM = [case for case in CASES if case["pawlette"] == "json-list-form"]


def _tools(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    names = sorted({call["name"] for call in case["expected"]["tool_calls"]})
    return [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
        for name in names
    ] or None


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['format']}:{case['source'].rpartition('#')[2]}:{case['output'][:24]}"


@pytest.mark.parametrize("case", READ, ids=_case_id)
def test_what_the_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    fmt = pawlette.get_format(case["format"])
    parsed = fmt.parse(case["output"], tools=_tools(case))
    message, expected = parsed.message, case["expected"]
    assert (message.get("content") or None) == (expected["content"] or None)
    assert message.get("reasoning_content") == expected["reasoning_content"]
    calls = [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]
    assert calls == [(call["name"], call["arguments"]) for call in expected["tool_calls"]]
    for written, call in zip(message.get("tool_calls") or [], expected["tool_calls"], strict=True):
        if "id" in call:  # the [CALL_ID] a model writes is the call's id (llama.cpp keeps it)
            assert written["id"] == call["id"]
    # A call marker inside [THINK] is reasoning text (as llama.cpp reads it), with a warning.
    assert bool(parsed.warnings) == ("[TOOL_CALLS]" in (expected["reasoning_content"] or ""))


@pytest.mark.parametrize("case", LIST_FORM, ids=_case_id)
def test_nemos_json_list_is_content_with_a_warning(case: dict[str, Any]) -> None:
    """Decided: the v7 formats read their own call spelling; the older JSON list
    (``[TOOL_CALLS][{...}]``, which SGLang reads in any Mistral model) stays content, as
    written, and a warning names it."""
    fmt = pawlette.get_format(case["format"])
    parsed = fmt.parse(case["output"], tools=_tools(case))
    assert parsed.message["content"] == case["output"]
    assert "tool_calls" not in parsed.message or not parsed.message["tool_calls"]
    assert parsed.warnings


def test_every_peer_case_is_read_or_decided() -> None:
    decided = {case["pawlette"] for case in CASES}
    assert decided <= {
        "read",
        "json-list-form",
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


def test_small_3_2_refuses_ids_its_template_refuses() -> None:
    request = json.loads(json.dumps(REQUEST))
    request["messages"][2]["tool_calls"][0]["id"] = "call_1"
    with pytest.raises(RequestError, match=r"messages\[2\]\.tool_calls\[0\]\.id"):
        pawlette.get_format("mistral").render(request)


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
