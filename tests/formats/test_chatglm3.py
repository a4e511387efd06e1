"""ChatGLM3 behaviour beyond the golden cases: role-order checks, refusals, streaming of
fenced calls and programs, strict and lenient malformed output, layout details."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest

import pawlette
from pawlette import ParseError, RequestError, ToolCallDelta, ToolCallStart, UnsupportedFeature
from pawlette.engine.fold import fold

from ..helpers import feed_in_pieces, sequential_ids
from ..support.chatglm3_spm import SPECIAL_TOKENS, hf_tokenizer, spm_processor
from ..support.llama3 import random_texts

GLM = pawlette.get_format("chatglm3")
CHECKED = GLM.with_options(check_roles=True)


def call(name: str, arguments: dict[str, Any], call_id: str = "c") -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


def test_stops_and_generation_prompt() -> None:
    assert GLM.stop == ("<|user|>", "<|observation|>")
    text = GLM.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
    assert text == "[gMASK]sop<|user|>\nHi<|assistant|>"
    assert GLM.forced_prefix("required") is None


def test_prefix_markers_are_two_tokens_and_sop_in_text_is_text() -> None:
    rendering = GLM.render([{"role": "user", "content": "isopropyl"}])
    assert [s.text for s in rendering.segments[:2]] == ["[gMASK]", "sop"]
    assert all(s.special for s in rendering.segments[:2])
    parsed = GLM.parse_conversation(rendering.text, strict=True)
    assert parsed.messages == [{"role": "user", "content": "isopropyl"}]
    # The seed's examples have no prefix: it is optional when parsing.
    assert GLM.parse_conversation("<|user|>\nHi", strict=True).messages[0]["content"] == "Hi"


def test_tools_are_the_function_objects_indented_after_the_system_text() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    text = GLM.render({"messages": [{"role": "system", "content": "S"}], "tools": tools}).text
    listing = json.dumps([tools[0]["function"]], indent=4, ensure_ascii=False)
    assert text == "[gMASK]sop<|system|>\nS\n" + listing


def test_tools_block_found_after_text_that_looks_like_a_list() -> None:
    tools = [{"type": "function", "function": {"name": "f"}}]
    request = {"messages": [{"role": "system", "content": "a\n[\nb"}], "tools": tools}
    parsed = GLM.parse_conversation(GLM.render(request).text, strict=True)
    assert parsed.to_request() == request


# ------------------------------------------------------------------ role order


@pytest.mark.parametrize(
    ("roles", "index", "words"),
    [
        (["user", "user"], 1, "'user' right after the user message messages[0]"),
        (["user", "assistant", "system"], 2, "'system' after other messages"),
        (["assistant"], 0, "'assistant' with no user message before it"),
        (["user", "tool"], 1, "'tool' after the user in messages[0]"),
    ],
)
def test_role_order_errors_name_the_message(roles: list[str], index: int, words: str) -> None:
    messages = [{"role": role, "content": "x"} for role in roles]
    with pytest.raises(RequestError) as caught:
        CHECKED.render(messages)
    assert caught.value.path == f"messages[{index}].role"
    assert words in str(caught.value)
    GLM.render(messages)  # unchecked by default


def test_role_order_counts_observations_against_calls() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [call("f", {})]},
        {"role": "tool", "content": "1"},
        {"role": "tool", "content": "2"},
    ]
    with pytest.raises(RequestError, match="more tool messages than the calls"):
        CHECKED.render(messages)
    CHECKED.render(messages[:3])


def test_seed_conversations_keep_the_role_order() -> None:
    from ..test_golden import GOLDEN, load

    for case in sorted(path for path in (GOLDEN / "chatglm3").iterdir() if path.is_dir()):
        CHECKED.render(load(case))


def test_options_are_checked() -> None:
    with pytest.raises(RequestError, match="check_roles"):
        GLM.with_options(colour="blue")
    assert GLM.options.check_roles is False  # the registered format is unchanged


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    ("message", "path"),
    [
        ({"role": "assistant", "name": "bot", "content": "x"}, "messages[0].name"),
        ({"role": "user", "name": "a\nb", "content": "x"}, "messages[0].name"),
        ({"role": "assistant", "content": "x", "reasoning_content": "r"}, "messages[0]."),
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]},
            "messages[0].content[0]",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": [call("interpreter", {})]},
            "messages[0].tool_calls[0].function.name",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("code_interpreter", {"code": "x", "timeout": 3})],
            },
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            {"role": "assistant", "content": None, "tool_calls": [call("f", {"not-a-name": 1})]},
            "messages[0].tool_calls[0].function.arguments",
        ),
    ],
)
def test_refuses_what_it_cannot_write(message: dict[str, Any], path: str) -> None:
    with pytest.raises(UnsupportedFeature) as caught:
        GLM.render([message])
    assert caught.value.path.startswith(path)


def test_observation_names_are_not_written() -> None:
    text = GLM.render([{"role": "tool", "name": "get_weather", "content": "22"}]).text
    assert text == "[gMASK]sop<|observation|>\n22"


# ------------------------------------------------------------------ parsing


def test_program_is_held_until_its_fence_closes() -> None:
    parser = GLM.parser(id_factory=sequential_ids())
    events = parser.feed("interpreter\n```python\nprint(1)\n``")
    assert not [e for e in events if isinstance(e, (ToolCallStart, ToolCallDelta))]
    assert parser.feed("`\n") == []  # only the end of the turn shows the fence was the last
    events = parser.finish()
    assert events[:2] == [
        ToolCallStart(0, "call_0", "code_interpreter"),
        ToolCallDelta(0, '{"code": "print(1)"}'),
    ]


def test_program_streams_before_its_fence_closes() -> None:
    parser = GLM.parser(id_factory=sequential_ids(), stream_arguments=True)
    events = parser.feed("interpreter\n```python\nprint(1)\n``")
    assert ToolCallStart(0, "call_0", "code_interpreter") in events
    streamed = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert streamed == '{"code": "print(1)'  # the newline may begin the closing fence
    events += parser.feed("`\n") + parser.finish()
    result = fold(events, GLM.grammar.fields).messages[0]
    assert result.tool_calls[0].arguments == '{"code": "print(1)"}'


def test_program_ending_in_a_fence_line_keeps_it() -> None:
    program = "x = '''\n```\n'''\n```"
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("code_interpreter", {"code": program}, "call_0")],
    }
    completion = GLM.render([message]).text.removeprefix("[gMASK]sop<|assistant|>")
    parsed = GLM.parse(completion, strict=True, id_factory=sequential_ids())
    assert json.loads(parsed.message["tool_calls"][0]["function"]["arguments"]) == {"code": program}


def test_text_then_call_in_one_completion_is_one_message() -> None:
    completion = '\nLet me check.<|assistant|>f\n```python\ntool_call(a="b")\n```<|observation|>'
    result = GLM.parse(completion, strict=True, id_factory=sequential_ids())
    assert result.message["content"] == "Let me check."
    assert result.message["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": "b"}'}
    assert result.finish_reason == "tool_calls"


def test_text_after_the_stop_token_is_content_with_a_warning() -> None:
    result = GLM.parse("\nHi<|user|>\nmore")
    assert result.message["content"] == "Hi\nmore"
    assert [w.text for w in result.warnings] == ["\nmore"]


@pytest.mark.parametrize(
    ("completion", "words"),
    [
        ("f\ntool_call(a=1)", "opening the call"),
        ("f\n```python\ntool_call(a=1)", "no closing '```' fence"),
        ("interpreter\n```python\nprint(1)", "no closing '```' fence"),
        ("f\n```python\ntool_call(1)\n```", "positional argument"),
        ("f\n```python\nother(a=1)\n```", "callee 'other'"),
    ],
)
def test_strict_malformed_calls(completion: str, words: str) -> None:
    with pytest.raises(ParseError, match=words):
        GLM.parse(completion, strict=True)


def test_lenient_unclosed_program_is_no_call_and_its_text_is_content() -> None:
    result = GLM.parse("interpreter\n```python\nprint(1)")
    assert result.message == {"role": "assistant", "content": "interpreter\n```python\nprint(1)"}
    (warning,) = result.warnings
    assert "no closing" in warning.message
    assert result.finish_reason == "stop"


def test_lenient_failed_call_keeps_its_closing_fence() -> None:
    result = GLM.parse("g\n```python\n\n```<|observation|>")
    assert result.message == {"role": "assistant", "content": "g\n```python\n\n```"}
    assert len(result.warnings) == 1


@pytest.mark.parametrize(
    ("tail", "stop"), [("", ""), ("\n", ""), ("", "<|observation|>"), ("", "<|user|>")]
)
def test_lenient_call_missing_only_its_closing_fence_stays_a_call(tail: str, stop: str) -> None:
    # The README's exception to "cut off is no call": the call was complete at its ")"
    # (Contracts, rule 2; chatglm3 section).  One warning where the fence was expected, whose
    # text is the call's (not given again as content); strict raises (see above).
    text = 'get_weather\n```python\ntool_call(city="x")' + tail
    for sizes in ([1], [3], []):
        events = feed_in_pieces(GLM, text + stop, sizes, conversation=False)
        result = fold(events, GLM.grammar.fields)
        (message,) = result.messages
        assert message.content is None, sizes
        assert [(c.name, c.arguments) for c in message.tool_calls] == [
            ("get_weather", '{"city": "x"}')
        ]
        (warning,) = result.warnings
        assert (warning.offset, warning.text) == (len(text), text), sizes
        assert warning.message.endswith("no closing '```' fence; expected a fenced call")
    whole = GLM.parse(text + stop)
    assert whole.finish_reason == "tool_calls"
    assert whole.message["content"] is None
    assert len(whole.message["tool_calls"]) == 1
    with pytest.raises(ParseError, match="no closing"):
        GLM.parse(text + stop, strict=True)


@pytest.mark.parametrize("sizes", [[4096], [65_537], []])
def test_lenient_big_call_missing_only_its_closing_fence_stays_a_call(sizes: list[int]) -> None:
    # The same exception for a call past the piece size, whose arguments are kept in a map
    # until the parser makes them: the warning gives its block as written, rebuilt from
    # that JSON (made into one string for it), and the call keeps its arguments whole.
    value = 'é€😀 "quoted" \\ line\n' * 30_000
    block = "store\n```python\ntool_call(text=" + json.dumps(value, ensure_ascii=False) + ")"
    events = feed_in_pieces(GLM, block + "<|observation|>", sizes, conversation=False)
    deltas = [event.arguments for event in events if isinstance(event, ToolCallDelta)]
    assert json.loads("".join(deltas)) == {"text": value}
    result = fold(events, GLM.grammar.fields)
    (warning,) = result.warnings
    assert (warning.offset, warning.text) == (len(block), block)
    assert result.messages[0].content is None


def test_lenient_text_after_the_call_with_no_fence_is_content() -> None:
    result = GLM.parse('get_weather\n```python\ntool_call(city="x")\nmore')
    assert result.message["content"] == "\nmore"
    assert len(result.message["tool_calls"]) == 1
    assert [w.message.split(";")[0] for w in result.warnings] == [
        "text after the call ('m')",
        "call 'get_weather\\n```python\\ntool_call(city=\"x\")\\nmore': no closing '```' fence",
    ]


def test_lenient_call_without_fence_is_text() -> None:
    result = GLM.parse("f\ntool_call(a=1)<|observation|>")
    assert result.message == {"role": "assistant", "content": "f\ntool_call(a=1)"}
    assert len(result.warnings) == 1


def test_a_newline_before_a_role_token_is_text() -> None:
    # The wire has no layout newlines: a newline there is the message's (text as from ids).
    text = "<|user|>\nHello\n<|assistant|>\nHi there\n<|user|>\nBye"
    parsed = GLM.parse_conversation(text, strict=True)
    assert [m["content"] for m in parsed.messages] == ["Hello\n", "Hi there\n", "Bye"]
    messages = [{"role": "user", "content": "a\n"}, {"role": "assistant", "content": "b\n"}]
    assert GLM.parse_conversation(GLM.render(messages).text).messages == messages
    # A completion's first line is its metadata: 'a' names a call whose fence never opens,
    # so the whole text is content, every newline kept (as from token ids).
    assert GLM.parse("a\n\n\n<|user|>").message["content"] == "a\n\n\n"


def test_a_newline_before_a_role_token_is_kept_when_fed_as_a_token() -> None:
    parser = GLM.parser(conversation=True)
    events = parser.feed_marker("<|user|>") + parser.feed("\nHello\n")
    events += parser.feed_marker("<|assistant|>") + parser.feed("\nHi") + parser.finish()
    messages = fold(events, GLM.grammar.fields).messages
    assert [m.text for m in messages] == ["Hello\n", "Hi"]


def test_observations_pair_with_calls_by_position() -> None:
    text = (
        "<|user|>\nq<|assistant|>f\n```python\ntool_call()\n```<|assistant|>g\n```python\n"
        "tool_call()\n```<|observation|>\n1<|observation|>\n2<|observation|>\n3"
    )
    parsed = GLM.parse_conversation(text, strict=True)
    ids = [m.get("tool_call_id") for m in parsed.messages if m["role"] == "tool"]
    assert ids == ["call_0", "call_1", None]


def test_a_name_with_an_empty_turn_keeps_its_newline() -> None:
    messages = [{"role": "user", "name": "Ann", "content": ""}, {"role": "user", "content": "x"}]
    parsed = GLM.parse_conversation(GLM.render(messages).text, strict=True)
    assert parsed.messages == messages


def test_call_names_are_checked_against_the_tools_given() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    completion = "f\n```python\ntool_call()\n```"
    with pytest.raises(ParseError, match="no tool named 'f'"):
        GLM.parse(completion, strict=True, tools=tools)
    lenient = GLM.parse(completion, tools=tools)
    assert "tool_calls" not in lenient.message  # no call: its text, as written
    assert lenient.message["content"] == completion
    assert "no tool named 'f'" in lenient.warnings[0].message
    program = GLM.parse("interpreter\n```python\nx\n```", strict=True, tools=tools)
    assert program.message["tool_calls"][0]["function"]["name"] == "code_interpreter"  # built in


@pytest.mark.parametrize("case", ["multi_turn", "code_interpreter"])
def test_renders_the_seed_layout(case: str) -> None:
    # The seed's text is the rendering with [gMASK]sop in front and without the prompt
    # document's readability newlines (the tool-calling example differs in its hand-written,
    # unindented tools JSON only).  The seed's examples end with the last assistant turn's
    # text; the training render adds the stop token the model writes there (<|user|>).
    from ..test_golden import GOLDEN, load

    source = (GOLDEN / "chatglm3" / case / "source.txt").read_text(encoding="utf-8")
    expected = "[gMASK]sop" + re.sub(r"\n(?=<\|(system|user|assistant|observation)\|>)", "", source)
    rendered = GLM.render(load(GOLDEN / "chatglm3" / case)).text
    assert rendered == expected + "<|user|>"
    assert GLM.render(load(GOLDEN / "chatglm3" / case), add_generation_prompt=True).text == (
        expected + "<|assistant|>"
    )


def test_the_last_assistant_turn_learns_its_stop_token() -> None:
    # Single-turn data must teach the model to stop: after text with <|user|>, after a call
    # with <|observation|>; parsing reads that final role token as no turn.
    call = {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    answer = {"role": "assistant", "content": "Hi!"}
    calling = {"role": "assistant", "content": None, "tool_calls": [call]}
    for message, stop in ((answer, "<|user|>"), (calling, "<|observation|>")):
        request = {"messages": [{"role": "user", "content": "hi"}, message]}
        rendering = GLM.render(request)
        assert rendering.text.endswith(stop)
        last = rendering.segments[-1]
        assert (last.text, last.special, last.trainable, last.message_index) == (
            stop,
            True,
            True,
            1,
        )
        assert GLM.parse_conversation(rendering.text).to_request() == request
        prompt = GLM.render({"messages": request["messages"][:1]}, add_generation_prompt=True)
        completion = GLM.parse(rendering.text[len(prompt.text) :], id_factory=sequential_ids())
        assert completion.message == message
    # An empty user turn is written with its metadata line, so it stays a turn.
    request = {
        "messages": [{"role": "user", "content": "hi"}, answer, {"role": "user", "content": ""}]
    }
    assert GLM.parse_conversation(GLM.render(request).text).to_request() == request


# ------------------------------------------------------------------ ids as build_chat_input


def _reference_ids(history: list[dict[str, Any]], query: str, role: str = "user") -> list[int]:
    """The ids ChatGLM3's ``build_chat_input(query, history, role)`` gives (THUDM chatglm3-6b's
    ``tokenization_chatglm.py``, the revision with ``build_single_message`` and metadata),
    re-stated from its layout: ``[gMASK] sop``, then per history item the role token, the
    encoding of ``{metadata}\\n`` and the encoding of the content (a system item's ``tools``
    appended to it as ``\\n`` + their JSON, indented by 4), each ``encode`` a SentencePiece
    call of its own (with its own dummy prefix); then the query as an item of ``role`` and
    ``<|assistant|>``."""
    processor, special = spm_processor(), {}
    for number, token in enumerate(SPECIAL_TOKENS):
        special[token] = processor.get_piece_size() + number
    ids = [special["[gMASK]"], special["sop"]]
    for item in [*history, {"role": role, "content": query}]:
        content = item["content"]
        if "tools" in item:
            content += "\n" + json.dumps(item["tools"], indent=4, ensure_ascii=False)
        ids.append(special[f"<|{item['role']}|>"])
        ids += processor.encode(item.get("metadata", "") + "\n")
        ids += processor.encode(content)
    return [*ids, special["<|assistant|>"]]


WEATHER_FUNCTION = {
    "name": "get_weather",
    "description": "查询天气",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
# (OpenAI messages + tools, ChatGLM3 history + query + role): the same conversation twice.
CONVERSATIONS: list[tuple[list[dict[str, Any]], list[Any] | None, list[dict[str, Any]], str, str]]
CONVERSATIONS = [
    ([{"role": "user", "content": "Hi"}], None, [], "Hi", "user"),
    (
        [
            {"role": "system", "content": "You are a helpful assistant. 请用中文回答。"},
            {"role": "user", "content": "Hello  world\nwhat is 1234 + 5678?"},
            {"role": "assistant", "content": "It is 6912."},
            {"role": "user", "content": "  and the weather in 北京?"},
        ],
        None,
        [
            {"role": "system", "content": "You are a helpful assistant. 请用中文回答。"},
            {"role": "user", "content": "Hello  world\nwhat is 1234 + 5678?"},
            {"role": "assistant", "content": "It is 6912."},
        ],
        "  and the weather in 北京?",
        "user",
    ),
    (
        [
            {"role": "system", "content": "Answer with tools."},
            {"role": "user", "name": "Alice", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [call("get_weather", {"city": "Paris"}, "c1")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"temperature": 22}'},
        ],
        [{"type": "function", "function": WEATHER_FUNCTION}],
        [
            {"role": "system", "content": "Answer with tools.", "tools": [WEATHER_FUNCTION]},
            {"role": "user", "metadata": "Alice", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "Let me look."},
            {
                "role": "assistant",
                "metadata": "get_weather",
                "content": '```python\ntool_call(city="Paris")\n```',
            },
        ],
        '{"temperature": 22}',
        "observation",
    ),
    (
        [
            {"role": "user", "content": "Run it"},
            {
                "role": "assistant",
                "tool_calls": [call("code_interpreter", {"code": "print(1 + 1)"}, "c1")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "2"},
            {"role": "assistant", "content": "The result is 2."},
            {"role": "user", "content": ""},
        ],
        [{"type": "function", "function": WEATHER_FUNCTION}],
        [
            {"role": "system", "content": "", "tools": [WEATHER_FUNCTION]},
            {"role": "user", "content": "Run it"},
            {
                "role": "assistant",
                "metadata": "interpreter",
                "content": "```python\nprint(1 + 1)\n```",
            },
            {"role": "observation", "content": "2"},
            {"role": "assistant", "content": "The result is 2."},
        ],
        "",
        "user",
    ),
]


@pytest.mark.parametrize("number", range(len(CONVERSATIONS)))
def test_ids_are_build_chat_inputs(number: int) -> None:
    messages, tools, history, query, role = CONVERSATIONS[number]
    tokenizer = hf_tokenizer()
    ids = pawlette.tokenize(GLM, tokenizer, messages, tools, add_generation_prompt=True).input_ids
    assert ids == _reference_ids(history, query, role)
    # The same text encoded whole between markers (no declared cuts) gives other ids: the
    # header line's and the content's dummy prefixes are what the cuts keep.
    whole = dataclasses.replace(GLM, encode_cuts=None)
    whole_ids = pawlette.tokenize(whole, tokenizer, messages, tools, add_generation_prompt=True)
    assert whole_ids.input_ids != ids


def test_training_ids_are_the_reference_messages_then_the_stop_token() -> None:
    messages, tools, history, query, role = CONVERSATIONS[1]
    answer = {"role": "assistant", "content": "晴天, 25°C."}
    result = pawlette.tokenize(GLM, hf_tokenizer(), [*messages, answer], tools, mask="last")
    prompt = _reference_ids(history, query, role)
    processor = spm_processor()
    stop = processor.get_piece_size() + SPECIAL_TOKENS.index("<|user|>")
    expected = prompt + processor.encode("\n") + processor.encode(answer["content"]) + [stop]
    assert result.input_ids == expected
    # Learned (the last turn): the answer's header line, its text and the stop token.
    learned = [
        token for token, label in zip(result.input_ids, result.labels, strict=True) if label != -100
    ]
    assert learned == expected[len(prompt) :]


def test_the_converted_tokenizer_is_the_sentencepiece_model() -> None:
    processor, tokenizer = spm_processor(), hf_tokenizer()
    texts = [*random_texts(300, seed=5), "\n", "get_weather\n", 'tool_call(a="北京")\n```']
    for text in texts:
        assert tokenizer.encode(text, add_special_tokens=False).ids == processor.encode(text)
