"""Hermes 2 Pro / Hermes 3 (:mod:`pawlette.formats.hermes`): what the models write, read as
vLLM and llama.cpp read it (their cases, carried over in ``families/data/hermes.json``), whole,
streamed and from token ids (Llama 3's tokenizer with Hermes' added tokens); where pawlette
reads otherwise, what it reads; and what the declaration decided (the tools line, the results
layout of the two variants, no function-calling turn without tools)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tokenizers import AddedToken, Tokenizer

import pawlette

from ..support.llama3 import llama3_tokenizer
from ..support.template_compare import corpus_reference
from .peers import Reading, check_read_as_the_peer, check_read_otherwise, read_every_way

DATA = json.loads((Path(__file__).parent / "families" / "data" / "hermes.json").read_text())
AS_PEERS = [case for case in DATA["cases"] if "pawlette" not in case]
OTHERWISE = [case for case in DATA["cases"] if "pawlette" in case]
HERMES = pawlette.get_format("hermes")
EXACT = pawlette.get_format("hermes:exact")
TEMPLATE = "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": " The city. "},
                "days": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "extra": {"type": "object", "additionalProperties": {"type": "number"}},
                "either": {"type": ["string", "integer"]},
                "anything": {},
            },
            "required": ["city"],
        },
    },
}
NOW = {
    "type": "function",
    "function": {
        "name": "now",
        "description": "The time.",
        "parameters": {"type": "object", "properties": {}},
    },
}


@cache
def hermes_tokenizer() -> Tokenizer:
    """Llama 3's tokenizer with the tokens Hermes adds as special tokens (their ids here are
    not Hermes' own; what matters is that each is one token)."""
    tokenizer = Tokenizer.from_str(llama3_tokenizer().to_str())
    tokenizer.add_special_tokens(
        [AddedToken(marker, special=True, normalized=False) for marker in HERMES.special_markers]
    )
    return tokenizer


def _label(case: dict[str, Any]) -> str:
    return case["source"].rpartition("#")[2][:40] + ":" + case["output"][:24]


def _reading(case: dict[str, Any]) -> Reading:
    return read_every_way(HERMES, hermes_tokenizer(), case["output"])


@pytest.mark.parametrize("case", AS_PEERS, ids=_label)
def test_what_models_write_reads_as_the_peers_read_it(case: dict[str, Any]) -> None:
    check_read_as_the_peer(case, _reading(case))


@pytest.mark.parametrize("case", OTHERWISE, ids=_label)
def test_where_pawlette_reads_otherwise_it_says_what_it_reads(case: dict[str, Any]) -> None:
    check_read_otherwise(case, _reading(case))


def test_the_tools_line_is_the_templates_and_reads_back() -> None:
    request = {"messages": [{"role": "user", "content": "Hi"}], "tools": [WEATHER, NOW]}
    reference = corpus_reference(TEMPLATE)
    expected = reference.render_request(request, add_generation_prompt=True).text
    rendering = HERMES.render(request, add_generation_prompt=True)
    assert rendering.text == expected
    line = rendering.text.split("<tools> ", 1)[1].split("\n", 1)[0]
    assert "get_weather(city: str, days: int, tags: list[Union[]], extra: dict[str, float]" in line
    assert "either: Union[str,int], anything: Union[]) - Get the weather." in line
    parsed = HERMES.parse_conversation(HERMES.render(request).text, strict=True)
    assert parsed.tools == [WEATHER, NOW]


def test_a_type_the_template_cannot_write_is_written_and_empty_parameters_are_a_loss() -> None:
    odd = json.loads(json.dumps(WEATHER))
    odd["function"]["parameters"]["properties"]["city"]["type"] = ["number", "null"]
    messages = [{"role": "user", "content": "Hi"}]
    reference = corpus_reference(TEMPLATE)
    assert reference.render(messages, [odd], add_generation_prompt=False).text is None
    written = HERMES.render(messages, [odd]).text
    assert "get_weather(city: Union[float,None], days: int" in written
    assert HERMES.parse_conversation(written).tools == [odd]
    loss = "tools[0].function.parameters: written as {} (it has no properties)"
    for parameters, losses in (
        ({}, (loss,)),
        ({"type": "object", "properties": {}, "required": []}, (loss,)),
        ({"type": "object", "properties": {}}, ()),  # what {} reads back as
    ):
        tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
        assert HERMES.render(messages, [tool]).losses == losses


def test_without_tools_the_conversation_is_plain_chatml() -> None:
    """The tool_use template refuses a request without tools; Hugging Face then renders
    the model's default template, ChatML after the begin token."""
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert corpus_reference(TEMPLATE).render(messages, add_generation_prompt=True).text is None
    assert HERMES.render(messages, add_generation_prompt=True).text == (
        "<|begin_of_text|><|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )


CALL = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
ROUND = [
    {"role": "user", "content": "Time?"},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "a", "content": "12:00"},
]


def test_results_before_a_prompt_are_the_templates_in_both_variants() -> None:
    reference = corpus_reference(TEMPLATE)
    again = {"role": "tool", "tool_call_id": "a", "content": "again"}
    beside = "messages[1].content: not written beside tool calls"
    # (A second result for the one call is read as answering none: results pair by position.)
    unpaired = (
        "messages[3].tool_call_id: 'a' not written: results are matched with calls by "
        "position, and this one is read as the answer to no call (there are fewer calls before it)"
    )
    for messages, losses in ((ROUND, (beside,)), ([*ROUND, again], (beside, unpaired))):
        expected = reference.render(messages, [NOW], add_generation_prompt=True).text
        for fmt in (HERMES, EXACT):
            rendering = fmt.render(messages, [NOW], add_generation_prompt=True)
            assert rendering.text == expected
            assert rendering.losses == losses


def test_only_the_exact_variant_writes_the_newline_after_a_result_that_more_follows() -> None:
    again = {"role": "tool", "tool_call_id": "a", "content": "again"}
    messages = [*ROUND, again, {"role": "assistant", "content": "Noon."}]
    reference = corpus_reference(TEMPLATE)
    expected = reference.render(messages, [NOW], add_generation_prompt=False).text
    assert expected is not None and "again\n</tool_response>\n<|im_end|>" in expected
    assert EXACT.render(messages, [NOW]).text == expected
    written = HERMES.render(messages, [NOW]).text
    assert written == expected.replace("</tool_response>\n<|im_end|>", "</tool_response><|im_end|>")
    prompt = HERMES.render(messages[:-1], [NOW], add_generation_prompt=True).text
    assert written.startswith(prompt)
    for fmt in (HERMES, EXACT):
        parsed = fmt.parse_conversation(fmt.render(messages, [NOW]).text, strict=True).messages
        roles = ["user", "assistant", "tool", "tool", "assistant"]
        assert [message["role"] for message in parsed] == roles
        assert [parsed[2]["content"], parsed[3]["content"]] == ["12:00", "again"]


def test_the_exported_templates_write_what_the_formats_write() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    messages = [
        {"role": "system", "content": "A"},
        *ROUND,
        {"role": "tool", "tool_call_id": "a", "content": "again"},
        {"role": "assistant", "content": "Noon."},
    ]
    for fmt in (HERMES, EXACT):
        for count in (len(messages), len(messages) - 1):
            request = {"messages": messages[:count], "tools": [WEATHER, NOW]}
            rendered, _ = render_jinja_template(
                [messages[:count]], tools=[WEATHER, NOW], chat_template=export_jinja(fmt)
            )
            assert rendered[0] == fmt.render(request).text, (fmt.name, count)


def test_ids_keep_user_text_out_of_the_markers() -> None:
    tokenizer = hermes_tokenizer()
    request = {
        "messages": [
            {"role": "user", "content": "Say <tool_call> and <|im_end|>."},
            {"role": "assistant", "content": "Done."},
        ],
        "tools": [NOW],
    }
    ids = list(pawlette.tokenize(HERMES, tokenizer, request).input_ids)
    # The function-calling turn names <tool_call> twice; the user's spelling stays text.
    assert ids.count(tokenizer.token_to_id("<tool_call>")) == 2
    assert ids.count(tokenizer.token_to_id("<|im_end|>")) == 3
