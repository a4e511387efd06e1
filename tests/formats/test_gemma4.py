"""Gemma 4: ids and masks with its special tokens, its value syntax written and read back,
and what models write read as vLLM's, SGLang's and llama.cpp's Gemma 4 parsers read it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pawlette
from pawlette.engine.fold import fold, merge_assistant
from pawlette.engine.machine import Parser
from pawlette.engine.whole import read_whole
from pawlette.formats.gemma4.values import QUOTE, quick_members, read_members, write_members
from pawlette.openai import message_to_openai, tools_from_openai

from ..helpers import feed_in_pieces, sequential_ids
from ..support.small_bpe import small_tokenizer

GEMMA4 = pawlette.get_format("gemma4")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
CALL = {
    "id": "a",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris", "days": 2}'},
}
CONVERSATION = [
    {"role": "user", "content": "Type <|tool_call>call:x{} to begin."},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "a", "content": "18 C"},
    {"role": "assistant", "content": "It is 18 C."},
]


def test_ids_mark_every_token_and_train_the_models_turns() -> None:
    """The quote token in calls and declarations is one special id; user text spelling a call
    token stays text; the trained ids are the call turn up to ``<|tool_response>`` and the
    answer up to ``<turn|>``."""
    tokenizer = small_tokenizer(GEMMA4.special_markers)
    result = pawlette.tokenize(GEMMA4, tokenizer, CONVERSATION, TOOLS)
    ids = list(result.input_ids)
    special = {tokenizer.token_to_id(marker): marker for marker in GEMMA4.special_markers}
    markers = [special[token] for token in ids if token in special]
    assert markers[:3] == ["<bos>", "<|turn>", "<|tool>"]
    # Quotes: the declaration's description, two types, a required name and its type; the
    # call's string; the result's text.
    assert markers.count(QUOTE) == 2 * 5 + 2 + 2
    assert markers.count("<|tool_call>") == 1  # the user's spelling of it is text
    assert (
        tokenizer.decode(ids, skip_special_tokens=False) == GEMMA4.render(CONVERSATION, TOOLS).text
    )
    trained = [token for token, label in zip(ids, result.labels, strict=True) if label != -100]
    assert tokenizer.decode(trained, skip_special_tokens=False) == (
        '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:2}<tool_call|><|tool_response>'
        "It is 18 C.<turn|>"
    )


def test_the_generation_prompt_and_its_completion_from_ids() -> None:
    tokenizer = small_tokenizer(GEMMA4.special_markers)
    prompt = pawlette.tokenize(
        GEMMA4, tokenizer, CONVERSATION[:1], TOOLS, add_generation_prompt=True
    )
    text = tokenizer.decode(list(prompt.input_ids), skip_special_tokens=False)
    assert text.endswith("<turn|>\n<|turn>model\n<|channel>thought\n<channel|>")
    completion = '<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}<tool_call|><|tool_response>'
    parsed = GEMMA4.parse(completion, tools=TOOLS)
    assert parsed.finish_reason == "tool_calls"
    assert json.loads(parsed.message["tool_calls"][0]["function"]["arguments"]) == {"city": "Oslo"}


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=8).filter(
        lambda text: QUOTE not in text
    ),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True), children, max_size=3
        )
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.from_regex(r"[a-z_]{1,6}", fullmatch=True), JSON_VALUES, max_size=4))
def test_the_value_syntax_reads_back_what_it_writes(arguments: dict[str, Any]) -> None:
    """Exact but for the documented losses (none drawn here: no quote token in a string,
    keys that are words, no two keys equal but for case)."""
    if len({key.lower() for key in arguments}) < len(arguments):
        return
    assert read_members(write_members(arguments)) == arguments


# What models write, as the peers read it (vLLM's and SGLang's Gemma 4 tool parsers; llama.cpp
# reads the same syntax): blanks after separators, quoted keys, None and null, bare words.
PEER_CASES = [
    (
        '<|tool_call>call:get_weather{city: <|"|>Paris<|"|>, days: 3}<tool_call|>',
        None,
        [("get_weather", {"city": "Paris", "days": 3})],
    ),
    (
        '<|tool_call>call:get_weather{<|"|>city<|"|>:<|"|>Rome<|"|>,days:None}<tool_call|>',
        None,
        [("get_weather", {"city": "Rome", "days": None})],
    ),
    (
        "<|tool_call>call:get_weather{city:Lyon,days:null}<tool_call|>",
        None,
        [("get_weather", {"city": "Lyon", "days": None})],
    ),
    (
        'Let me look.<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}<tool_call|>'
        '<|tool_call>call:get_weather{city:<|"|>Bergen<|"|>,days:1.5e1}<tool_call|><|tool_response>',
        "Let me look.",
        [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Bergen", "days": 15.0})],
    ),
]


@pytest.mark.parametrize(("output", "content", "calls"), PEER_CASES, ids=lambda v: str(v)[:30])
def test_what_models_write_reads_as_the_peers_read_it(
    output: str, content: str | None, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    parsed = GEMMA4.parse(output, tools=TOOLS)
    assert parsed.message["content"] == content
    found = [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in parsed.message["tool_calls"]
    ]
    assert found == calls and not parsed.warnings
    whole = GEMMA4.parse(output, id_factory=sequential_ids()).message
    events = feed_in_pieces(GEMMA4, output, [1], conversation=False)
    streamed = merge_assistant(fold(events, GEMMA4.grammar.fields).messages)
    assert message_to_openai(streamed) == whole


@pytest.mark.parametrize(
    "output",
    [
        '<|tool_call>call:get_wether{city:<|"|>Paris<|"|>}<tool_call|>',  # no such tool
        '<|tool_call>get_weather{city:<|"|>Paris<|"|>}<tool_call|>',  # no call:
        '<|tool_call>call:get_weather{city:<|"|>Paris}<tool_call|>',  # string not closed
        '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}',  # cut off
    ],
)
def test_a_call_that_is_not_one_is_content_with_a_warning(output: str) -> None:
    parsed = GEMMA4.parse(output, tools=TOOLS)
    assert not parsed.message.get("tool_calls")
    assert parsed.message["content"] == output
    assert len(parsed.warnings) == 1


def test_a_models_text_may_say_response_and_braces() -> None:
    parsed = GEMMA4.parse("The response: {ok} <turn|>")
    assert parsed.message["content"] == "The response: {ok} " and not parsed.warnings


def _answer(text: str | None, **fields: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **fields}


RESULT = {"role": "tool", "tool_call_id": "a", "content": "18°C"}
HI = {"role": "user", "content": "Hi"}
CONSECUTIVE = [
    [HI, _answer("One."), _answer("Two.")],
    [HI, _answer("One."), _answer(""), _answer("Three."), {"role": "user", "content": "And?"}],
    [HI, _answer(None, tool_calls=[CALL]), RESULT, _answer("18°C."), _answer("Warm.")],
    [HI, _answer("Let me look."), _answer(None, tool_calls=[CALL]), RESULT, _answer("18°C.")],
    [HI, _answer(None, tool_calls=[CALL]), _answer("No results.")],
]
"""Conversations with an answer right after another answer (text, an empty one, calls,
after results, before a user message)."""


@pytest.mark.parametrize(
    ("variant", "template"),
    [
        ("gemma4", "google-gemma-4-31B-it"),
        ("gemma4:interleaved", "google-gemma-4-31B-it-interleaved"),
    ],
)
def test_an_answer_after_an_answer_is_written_exported_and_read_as_the_template_writes_it(
    variant: str, template: str
) -> None:
    """The 31B-it template writes an answer right after another answer with no opener (it
    goes on in the model's turn, after the first one's ``<turn|>\\n``); the interleaved one
    opens a turn for it.  The render, the exported template and the strict parse of the
    template's own text agree with it."""
    from pawlette.export import export_jinja

    from ..support.template_compare import Reference, corpus_reference

    fmt = pawlette.get_format(variant)
    reference = corpus_reference(template)
    exported = Reference(
        export_jinja(fmt), bos_token=reference.bos_token, eos_token=reference.eos_token
    )
    for messages in CONSECUTIVE:
        tools = TOOLS if any("tool_calls" in message for message in messages) else None
        prompts = (False, True) if messages[-1]["role"] != "assistant" else (False,)
        for prompt in prompts:
            expected = reference.render(messages, tools, add_generation_prompt=prompt).text
            assert expected is not None
            assert fmt.render(messages, tools, add_generation_prompt=prompt).text == expected
            assert exported.render(messages, tools, add_generation_prompt=prompt).text == expected
        written = reference.render(messages, tools, add_generation_prompt=False).text
        assert written is not None
        read = fmt.parse_conversation(written, strict=True).to_request()["messages"]
        assert [(message["role"], message.get("content") or None) for message in read] == [
            (message["role"], message.get("content") or None) for message in messages
        ]


def test_a_completion_is_over_at_its_turns_end_though_an_answer_may_follow_there() -> None:
    """A conversation reads an answer right after ``<turn|>\\n``; a completion's turn is
    over there, and text after it is stray, as before any other turn."""
    assert GEMMA4.parse("Hi.<turn|>\n").message == {"role": "assistant", "content": "Hi."}
    parsed = GEMMA4.parse("Hi.<turn|>\nMore.")
    assert parsed.warnings and "text after the end of the turn" in parsed.warnings[0].message


# Pieces of members text, usual and not: structure, JSON's blanks and others, quote tokens,
# bare words of every kind the reference reads (numbers, constants, words, words with blanks
# or characters JSON would escape).
_PIECES = st.sampled_from(
    [
        *("{", "}", "[", "]", ",", ":", " ", "\n", "\t", "\x0b", "\xa0", QUOTE, QUOTE, "a"),
        *("city", "1", "-2.5", "1e5", "1E-5", "01", "+1", ".5", "-", "1e999", "9" * 30, "true"),
        *("None", "null", "false", "NaN", "x y", "é", '"', "\\", "<", "|", "\x00"),
    ]
)


@given(
    st.lists(_PIECES, max_size=24).map("".join)
    | st.dictionaries(st.from_regex(r"[a-z_]{1,6}", fullmatch=True), JSON_VALUES, max_size=4).map(
        write_members
    )
)
def test_the_quick_reading_of_members_is_the_references(text: str) -> None:
    """Where the quick reading takes members text, it reads what the reference reads; where
    the reference refuses it, the quick reading does not take it."""
    try:
        expected: dict[str, Any] | None = read_members(text)
    except ValueError:
        expected = None
    quick = quick_members(text)
    if quick is not None:
        assert expected is not None, text
        assert json.dumps(quick, ensure_ascii=False) == json.dumps(expected, ensure_ascii=False)


@given(st.dictionaries(st.from_regex(r"[a-z_]{1,6}", fullmatch=True), JSON_VALUES, max_size=4))
def test_the_quick_reading_takes_members_as_the_template_writes_them(
    arguments: dict[str, Any],
) -> None:
    written = write_members(arguments)
    # (a text holding NUL, which the quick reading joins its pieces with, is the reference's)
    expected = None if "\x00" in written else read_members(written)
    assert quick_members(written) == expected


WHOLE_CASES = [
    *(output for output, _, _ in PEER_CASES),
    "Sunny all week.<turn|>",
    "<|channel>thought\nThe user asks.<channel|>Let me look.<|tool_call>call:get_weather{city:"
    '<|"|>Paris<|"|>,days:[1,2]}<tool_call|><|tool_response>',
]


@pytest.mark.parametrize("output", WHOLE_CASES, ids=lambda v: str(v)[:30])
@pytest.mark.parametrize("tools", [(), tools_from_openai(TOOLS)])
def test_a_plain_completion_is_read_whole_as_the_machine_reads_it(
    output: str, tools: tuple[pawlette.Tool, ...]
) -> None:
    """The whole-text reading (pawlette.engine.whole) takes Gemma 4's plain completions,
    calls and a turn's end included, and reads them exactly as the machine does."""
    plain = read_whole(GEMMA4.grammar, output, None, sequential_ids(), tools)
    assert plain is not None, output
    events = Parser(GEMMA4.grammar, id_factory=sequential_ids(), tools=tools).read_all(output)
    folded = fold(events, GEMMA4.grammar.fields)
    assert folded.warnings == []
    message = merge_assistant(folded.messages)
    assert plain == (message, len(message.tool_calls))


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ("{x:1e999}", "beyond a double's range"),
        ("{x:[1," + "1," * 80 + "-1e400]}", "beyond a double's range"),
        ("{x:" + "[" * 100 + "]" * 100 + "}", "nested deeper than 100"),
        ("{x:" + "[" * 5000 + "]" * 5000 + "}", "nested deeper than 100"),
        ("{x:" + "{a:" * 3000 + "1" + "}" * 3000 + "}", "nested deeper than 100"),
    ],
)
def test_arguments_are_held_as_json_arguments_are(arguments: str, problem: str) -> None:
    """Arguments nested past the limit, or a number past a double, are given back as text with
    a warning, as in every format (JSON's ``Infinity`` is no JSON; a deep nesting had raised
    RecursionError out of parse)."""
    text = "<|tool_call>call:get_weather" + arguments + "<tool_call|>"
    completion = GEMMA4.parse(text, tools=TOOLS)
    assert "tool_calls" not in completion.message or not completion.message["tool_calls"]
    assert completion.message["content"] == text
    assert [warning for warning in completion.warnings if problem in warning.message]
    with pytest.raises(pawlette.ParseError, match=problem):
        GEMMA4.parse(text, tools=TOOLS, strict=True)
    nested = "{x:" + "[" * 99 + "]" * 99 + "}"  # (the arguments' object is the first level)
    held = GEMMA4.parse("<|tool_call>call:get_weather" + nested + "<tool_call|>", tools=TOOLS)
    assert held.message["tool_calls"] and not held.warnings


TEXT_BESIDE_CALLS = [
    {"role": "user", "content": "Weather in Paris and Oslo?"},
    {
        "role": "assistant",
        "content": " Let me look both up. ",
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "b",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            },
        ],
    },
]


@pytest.mark.parametrize(
    ("variant", "template", "results"),
    [
        ("gemma4", "google-gemma-4-31B-it", False),
        ("gemma4:interleaved", "google-gemma-4-31B-it-interleaved", False),
        ("gemma4:interleaved", "google-gemma-4-31B-it-interleaved", True),
    ],
)
def test_the_text_beside_calls_is_written_after_them_as_the_template_writes_it(
    variant: str, template: str, results: bool
) -> None:
    """Both templates write a turn's text after its calls (``message['content']`` comes
    after the ``tool_calls`` loop), trimmed; the render and the exported template do too,
    and the turn reads back as the message, without a warning."""
    from pawlette.export import export_jinja

    from ..support.template_compare import Reference, corpus_reference

    fmt = pawlette.get_format(variant)
    reference = corpus_reference(template)
    exported = Reference(
        export_jinja(fmt), bos_token=reference.bos_token, eos_token=reference.eos_token
    )
    messages: list[dict[str, Any]] = list(TEXT_BESIDE_CALLS)
    if results:
        messages += [
            {"role": "tool", "tool_call_id": "a", "content": "18 C"},
            {"role": "tool", "tool_call_id": "b", "content": "3 C"},
            {"role": "assistant", "content": "Warmer in Paris."},
        ]
    expected = reference.render(messages, TOOLS, add_generation_prompt=False).text
    assert expected is not None
    assert 'Oslo<|"|>}<tool_call|>Let me look both up.' in expected
    assert fmt.render(messages, TOOLS).text == expected
    assert exported.render(messages, TOOLS, add_generation_prompt=False).text == expected
    turn = expected.split("<|turn>model\n")[1].split("<turn|>")[0]  # (its end, if any)
    parsed = fmt.parse(turn, tools=tools_from_openai(TOOLS))
    assert parsed.warnings == ()
    assert parsed.message["content"] == "Let me look both up."
    assert [call["function"]["name"] for call in parsed.message["tool_calls"]] == [
        "get_weather",
        "get_weather",
    ]


def test_the_interleaved_turn_read_ends_at_the_token_that_asks_for_results() -> None:
    """A Gemma 4 model asks for its calls' results with ``<|tool_response>``; the
    interleaved variant reads that as the turn's end, as the default one does."""
    interleaved = pawlette.get_format("gemma4:interleaved")
    output = (
        '<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>}<tool_call|>Checking.<|tool_response>'
    )
    parsed = interleaved.parse(output, tools=tools_from_openai(TOOLS))
    assert parsed.warnings == ()
    assert parsed.finish_reason == "tool_calls"
    assert parsed.message["content"] == "Checking."
    assert parsed.message["tool_calls"][0]["function"]["name"] == "get_weather"
