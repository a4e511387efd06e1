"""omni behaviour beyond the golden cases: stops, the resumed turn, images, errors, streaming."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pawlette
from pawlette import (
    ActionPart,
    ChunkStream,
    ImagePart,
    ImageRequestPart,
    ParseError,
    ReasoningDelta,
    ReasoningStepAdded,
    RequestError,
    ToolCallDelta,
    ToolCallStart,
    UnsupportedFeature,
    VoicePart,
)
from pawlette.engine.fold import fold, merge_assistant
from pawlette.formats import omni

from ..helpers import sequential_ids

OMNI = pawlette.get_format("omni")
GOLDEN = Path(__file__).parent.parent / "golden" / "omni"
WEATHER = json.loads((GOLDEN / "seed_function_call" / "input.json").read_text(encoding="utf-8"))
CALL = '\n<|FUNCTION_START|>search_weather<|FUNCTION_ARGS|>{"city": "北京"}<|FUNCTION_RETURN|>'


def weather(count: int) -> dict[str, Any]:
    """The seed's function-call conversation, cut after ``count`` messages."""
    return {"messages": WEATHER["messages"][:count], "tools": WEATHER["tools"]}


# ------------------------------------------------------------------ stops and the resumed turn


def test_stop_markers_by_situation() -> None:
    assert OMNI.stop == ("<|ASSISTANT_END|>", "<|FUNCTION_RETURN|>")
    assert omni.STOPS == {"stop": ("<|ASSISTANT_END|>",), "tool_calls": ("<|FUNCTION_RETURN|>",)}


def test_prompt_after_a_result_resumes_the_same_turn() -> None:
    prompt = OMNI.render(weather(4), add_generation_prompt=True).text
    assert prompt.count("<|ASSISTANT_START|>") == 1
    assert prompt.endswith('"wind": "东北风3级"\n}\n<|FUNCTION_END|>\n')
    full = OMNI.render(weather(5)).text
    assert full.startswith(prompt)
    completion = full[len(prompt) :]
    assert (
        completion == "北京今天天气晴朗，气温25度，湿度45%，东北风3级。<|ASSISTANT_END|>\n<|EOS|>"
    )


def test_a_conversation_ending_with_a_result_closes_the_turn_when_not_prompted() -> None:
    text = OMNI.render(weather(4)).text
    assert text.endswith("<|FUNCTION_END|>\n<|ASSISTANT_END|>\n<|EOS|>")
    assert OMNI.parse_conversation(text, strict=True).messages == weather(4)["messages"]


def test_a_conversation_ending_with_a_call_ends_where_the_model_stopped() -> None:
    text = OMNI.render(weather(3)).text
    assert text.endswith(CALL)
    assert OMNI.parse_conversation(text, strict=True).messages == weather(3)["messages"]
    with pytest.raises(RequestError, match=r"messages\[2\]\.tool_calls: a call whose result"):
        OMNI.render(weather(3), add_generation_prompt=True)


def test_completion_stops_at_the_function_return_or_just_before_it() -> None:
    for text in (CALL, CALL.removesuffix("<|FUNCTION_RETURN|>")):  # engines may drop the stop
        result = OMNI.parse(text, strict=True, id_factory=sequential_ids())
        assert result.finish_reason == "tool_calls"
        assert result.message["tool_calls"][0]["function"] == {
            "name": "search_weather",
            "arguments": '{"city": "北京"}',
        }


def test_the_injected_result_is_not_trainable() -> None:
    rendering = OMNI.render(weather(5))
    trainable = {(s.kind, s.trainable) for s in rendering.segments if s.role == "tool"}
    assert trainable == {("tool_result", False), ("separator", False)}
    call = [s for s in rendering.segments if s.kind == "tool_call"]
    assert call and all(s.trainable for s in call)
    assert call[-1].text == "<|FUNCTION_RETURN|>"
    assert [s.message_index for s in rendering.segments if s.text == "<|ASSISTANT_END|>"] == [4]


def test_a_turn_that_moves_on_after_a_result_is_closed_by_the_system() -> None:
    messages = [*weather(4)["messages"], {"role": "user", "content": "谢谢"}]
    rendering = OMNI.render(messages)
    (end,) = [s for s in rendering.segments if s.text == "<|ASSISTANT_END|>"]
    assert (end.role, end.message_index, end.trainable) == ("tool", 3, False)
    assert OMNI.parse_conversation(rendering.text, strict=True).messages == messages


# ------------------------------------------------------------------ actions and streaming


def test_actions_do_not_stop_and_stream_as_content_parts() -> None:
    action = '<|ACTION_START|>wave<|ACTION_ARGS|>{"hand": "left"}<|ACTION_END|>'
    text = f"好的。\n{action}\n再见<|ASSISTANT_END|>"
    result = OMNI.parse(text, strict=True)
    assert result.finish_reason == "stop"
    assert result.message["content"] == [
        {"type": "text", "text": "好的。"},
        {"type": "action", "action": {"name": "wave", "arguments": '{"hand": "left"}'}},
        {"type": "text", "text": "再见"},
    ]
    parser = OMNI.parser()
    stream = ChunkStream(model="m", completion_id="c", created=0)
    chunks = [
        c for i in range(0, len(text), 3) for c in stream.chunks(parser.feed(text[i : i + 3]))
    ]
    chunks += stream.chunks(parser.finish())
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    parts = [d["content_parts"] for d in deltas if "content_parts" in d]
    assert parts == [[result.message["content"][1]]]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_thinking_streams_flat_text_and_steps() -> None:
    text = (
        "\n<|THINK_START|>先想\n<|THINK_STEP|>一\n<|THINK_REASONING|>理由\n<|THINK_CONCLUSION|>结论"
        "\n<|THINK_END|>\n答<|ASSISTANT_END|>"
    )
    parser = OMNI.parser(strict=True)
    events = [event for char in text for event in parser.feed(char)] + parser.finish()
    flat = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert flat == "先想\n一\n理由\n结论"
    steps = [e.step for e in events if isinstance(e, ReasoningStepAdded)]
    assert [(s.title, s.reasoning, s.conclusion) for s in steps] == [("一", "理由", "结论")]


def test_arguments_stream_before_the_return_when_asked() -> None:
    parser = OMNI.parser(stream_arguments=True)
    events = parser.feed('<|FUNCTION_START|>f<|FUNCTION_ARGS|> {"text": "hello wor')
    deltas = [e.arguments for e in events if isinstance(e, ToolCallDelta)]
    assert "".join(deltas) == '{"text": "hello wor'


def test_a_call_is_held_until_it_is_known_valid() -> None:
    parser = OMNI.parser()
    events = parser.feed('<|FUNCTION_START|>f<|FUNCTION_ARGS|> {"text": "hello wor')
    assert not [e for e in events if isinstance(e, (ToolCallStart, ToolCallDelta))]
    events = parser.feed('ld"}<|FUNCTION_RETURN|>')
    calls = [e for e in events if isinstance(e, (ToolCallStart, ToolCallDelta))]
    assert [type(e) for e in calls] == [ToolCallStart, ToolCallDelta]
    assert calls[1] == ToolCallDelta(0, '{"text": "hello world"}')


def test_feeding_markers_as_token_ids_gives_the_same_result() -> None:
    """With token ids, ``\\n`` before a marker arrives as text: the readers trim it, not the
    lexer, so the result is the same as from text."""
    text = (GOLDEN / "seed_voice" / "rendered.txt").read_text(encoding="utf-8")
    parser = OMNI.parser(conversation=True, id_factory=sequential_ids())
    events = []
    for piece in re.split(r"(<\|[A-Z_0-9]+\|>)", text):
        if piece in omni.SPECIAL:
            events += parser.feed_marker(piece)
        elif piece:
            events += parser.feed(piece)
    events += parser.finish()
    whole = OMNI.parse_conversation(text, strict=True)
    assert fold(events, OMNI.grammar.fields).messages == list(whole.core_messages)


# ------------------------------------------------------------------ images


def test_image_token_count_comes_from_the_caller() -> None:
    seen: list[ImagePart] = []

    def tokens(image: ImagePart) -> int:
        seen.append(image)
        return (image.width or 0) // 100

    fmt = OMNI.with_options(image_tokens=tokens)
    image = {"type": "image_url", "image_url": {"url": "a.png", "width": 300, "height": 200}}
    other = {"type": "image_url", "image_url": {"url": "b.png", "width": 100, "height": 50}}
    counted = {"type": "image_url", "image_url": {"url": "c.png", "tokens": 2}}  # it wins
    content = [image, {"type": "text", "text": " and "}, other, counted]
    text = fmt.render([{"role": "user", "content": content}]).text
    one, two, three = ("<|IMAGE_START|>" + "<|IMAGE|>" * n + "<|IMAGE_END|>" for n in (3, 1, 2))
    references = "<|IMAGE_1|> and <|IMAGE_2|><|IMAGE_3|>"
    assert text.endswith(f"<|USER_START|>{references}{one}{two}{three}<|USER_END|>\n<|EOS|>")
    assert [image.url for image in seen] == ["a.png", "b.png"]
    assert OMNI.render([{"role": "user", "content": content}]).text.count("<|IMAGE|>") == 514
    parsed = fmt.parse_conversation(text, strict=True).messages[0]["content"]
    assert [part.get("image_url") for part in parsed] == [
        {"url": "", "tokens": 3},
        None,
        {"url": "", "tokens": 1},
        {"url": "", "tokens": 2},
    ]
    assert fmt.render(fmt.parse_conversation(text).messages).text == text


def test_image_references_come_from_image_parts_never_from_text() -> None:
    image = {"type": "image_url", "image_url": {"url": "a.png", "tokens": 1}}
    request = [
        {"role": "user", "content": [{"type": "text", "text": "<|IMAGE_1|> is "}, image]},
        {"role": "assistant", "content": "<|IMAGE_1|>"},
    ]
    rendering = OMNI.render(request)
    marks = [(s.text, s.special, s.role) for s in rendering.segments if "IMAGE_1" in s.text]
    assert marks == [
        ("\\<|IMAGE_1|> is ", False, "user"),
        ("<|IMAGE_1|>", True, "user"),
        ("\\<|IMAGE_1|>", False, "assistant"),
    ]
    parsed = OMNI.parse_conversation(rendering.text, strict=True).to_request()
    assert parsed["messages"][0]["content"] == [
        {"type": "text", "text": "<|IMAGE_1|> is "},
        {"type": "image_url", "image_url": {"url": "", "tokens": 1}},
    ]


def test_at_most_sixteen_images_a_message() -> None:
    image = {"type": "image_url", "image_url": {"url": "a.png", "tokens": 0}}
    OMNI.render([{"role": "user", "content": [image] * 16}])
    with pytest.raises(RequestError, match=r"messages\[0\]\.content\[16\]: image 17"):
        OMNI.render([{"role": "user", "content": [image] * 17}])


@pytest.mark.parametrize(
    ("text", "warning", "kept"),
    [
        ("a<|IMAGE_2|>b", "after 0 reference(s)", "a<|IMAGE_2|>b"),
        ("a<|IMAGE_1|>b", "no image block", "a<|IMAGE_1|>b"),
        (
            "a<|IMAGE_1|>b<|IMAGE_1|><|IMAGE_START|><|IMAGE_END|>",
            "after 1 reference",
            "ab<|IMAGE_1|>",
        ),
    ],
)
def test_references_without_their_image_are_malformed(text: str, warning: str, kept: str) -> None:
    source = f"<|BOS|>\n<|USER_START|>{text}<|USER_END|>\n<|EOS|>"
    with pytest.raises(ParseError, match=re.escape(warning)):
        OMNI.parse_conversation(source, strict=True)
    parsed = OMNI.parse_conversation(source)
    assert [w.message for w in parsed.warnings if warning in w.message]
    content = parsed.messages[0]["content"]
    texts = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    assert texts == kept  # a reference without its image is kept as text


def test_an_image_block_without_a_reference_is_an_image_where_it_stands() -> None:
    source = "<|BOS|>\n<|USER_START|>look<|IMAGE_START|><|IMAGE|><|IMAGE_END|><|USER_END|>"
    parsed = OMNI.parse_conversation(source, strict=True).messages[0]["content"]
    assert parsed == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "", "tokens": 1}},
    ]


def test_bad_image_token_counts_are_refused() -> None:
    fmt = OMNI.with_options(image_tokens=lambda image: -1)
    request = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "a"}}]}]
    with pytest.raises(RequestError, match=r"messages\[0\]\.content\[0\]: -1 image tokens"):
        fmt.render(request)


def test_second_stage_prompt_from_an_image_request() -> None:
    data = json.loads((GOLDEN / "seed_text_to_image" / "input.json").read_text(encoding="utf-8"))
    part = data["messages"][2]["content"][0]
    expected = (
        "<|BOS|>\n<|USER_START|>一只可爱的橘色猫咪，大眼睛，毛茸茸的，坐姿，微笑表情<|USER_END|>"
        "\n\n<|IMAGE_OUTPUT_START|>"
    )
    for request in (part, part["image_request"], ImageRequestPart(part["image_request"])):
        rendering = omni.image_prompt(request)
        assert rendering.text == expected
    assert rendering.segments[-1].kind == "generation_prompt"
    with pytest.raises(RequestError, match=r"image_request\.prompt"):
        omni.image_prompt({"width": 512})


def test_image_output_prompt_and_turn() -> None:
    user = {
        "role": "user",
        "content": [
            {"type": "image_url", "image_url": {"url": "a.png"}},
            {"type": "text", "text": "和"},
            {"type": "image_url", "image_url": {"url": "b.png"}},
            {"type": "text", "text": "一起跳舞"},
        ],
    }
    fmt = OMNI.with_options(image_tokens=lambda image: 2)
    prompt = omni.image_output_prompt([user], fmt=fmt).text
    assert prompt.endswith("<|IMAGE_END|><|USER_END|>\n\n<|IMAGE_OUTPUT_START|>")
    output = {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": "c"}}]}
    text = fmt.render([user, output]).text
    assert text.startswith(prompt.removesuffix("<|IMAGE_OUTPUT_START|>"))
    assert text.endswith("<|IMAGE_OUTPUT_START|><|IMAGE|><|IMAGE|>\n<|EOS|>")
    parsed = OMNI.parse_conversation(text, strict=True).messages
    assert parsed[1] == {
        "role": "assistant",
        "content": [{"type": "image_url", "image_url": {"url": "", "tokens": 2}}],
    }


def test_one_output_image_at_most() -> None:
    image = {"type": "image_url", "image_url": {"url": "c"}}
    with pytest.raises(UnsupportedFeature, match="one image at most"):
        OMNI.render([{"role": "assistant", "content": [image, image]}])
    with pytest.raises(UnsupportedFeature, match="one image at most"):
        OMNI.render([{"role": "assistant", "content": [image, {"type": "text", "text": "x"}]}])


# ------------------------------------------------------------------ refusals


def test_refusals_name_the_place() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    cases: list[tuple[list[dict[str, Any]], type[Exception], str]] = [
        (
            [{"role": "assistant", "content": None, "tool_calls": [call, {**call, "id": "b"}]}],
            UnsupportedFeature,
            r"messages\[0\]\.tool_calls: 2 calls in one message",
        ),
        ([{"role": "tool", "content": "x"}], UnsupportedFeature, r"messages\[0\]: a tool message"),
        (
            [{"role": "user", "name": "A", "content": "x"}],
            UnsupportedFeature,
            r"messages\[0\]\.name",
        ),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "b", "content": "x"},
            ],
            RequestError,
            r"messages\[1\]\.tool_call_id: 'b'",
        ),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "user", "content": ""},
            ],
            RequestError,
            r"messages\[1\]: a user message right after a function call",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": "x",
                    "reasoning_content": "other text",
                    "reasoning_steps": [{"title": "t", "reasoning": "r", "conclusion": "c"}],
                }
            ],
            RequestError,
            r"messages\[0\]\.reasoning_content",
        ),
    ]
    for messages, error, pattern in cases:
        with pytest.raises(error, match=pattern):
            OMNI.render(messages)


def test_steps_alone_or_with_their_flat_text() -> None:
    step = {"title": "t", "reasoning": "r", "conclusion": "c"}
    for reasoning in (None, "t\nr\nc", "pre\nt\nr\nc"):
        message: dict[str, Any] = {"role": "assistant", "content": "x", "reasoning_steps": [step]}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        parsed = OMNI.parse_conversation(OMNI.render([message]).text, strict=True)
        assert parsed.messages[0]["reasoning_content"] == (reasoning or "t\nr\nc")
        assert parsed.messages[0]["reasoning_steps"] == [step]


# ------------------------------------------------------------------ malformed output

MALFORMED = {
    "unterminated arguments": (
        '<|FUNCTION_START|>f<|FUNCTION_ARGS|>{"city": "北',
        r"unterminated '<\|FUNCTION_ARGS\|>'",
    ),
    "invalid JSON arguments": (
        '<|FUNCTION_START|>f<|FUNCTION_ARGS|>{"city": 北京}<|FUNCTION_RETURN|>',
        "not valid JSON",
    ),
    "missing think end": (
        "<|THINK_START|>想\n<|THINK_STEP|>t\n<|THINK_REASONING|>r<|ASSISTANT_END|>",
        r"the thinking is not closed.*expected '<\|THINK_END\|>' first",
    ),
    "think cut short": ("<|THINK_START|>想一想", "the thinking is not closed: it ends at the end"),
    "invalid action": ("<|ACTION_START|>a<|ACTION_ARGS|>[1]<|ACTION_END|>", "not a JSON object"),
    "invalid voice": (
        "<|VOICE_START|>{oops<|VOICE_CONTENT|>\n说\n<|VOICE_END|>",
        "header '{oops': not valid JSON",
    ),
    "call without name": ("<|FUNCTION_START|><|FUNCTION_ARGS|>{}", "with no name"),
    "marker out of place": ("hi<|USER_START|>", r"marker '<\|USER_START\|>' in state"),
    "text after the end": ("hi<|ASSISTANT_END|>more", "text after the end of the turn"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_output_raises_in_strict_mode(case: str) -> None:
    text, pattern = MALFORMED[case]
    with pytest.raises(ParseError, match=pattern):
        OMNI.parse(text, strict=True)


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_output_loses_nothing_in_lenient_mode(case: str) -> None:
    text, _ = MALFORMED[case]
    result = OMNI.parse(text)
    assert result.warnings
    message = result.core
    kept = [message.text, message.reasoning or "", *(w.text for w in result.warnings)]
    kept += [f"{c.name}{c.arguments}" for c in message.tool_calls]
    joined = "".join(kept)
    for piece in re.split(r"<\|[A-Z_]+\|>", text):
        for word in piece.split():
            assert word in joined, (word, joined)


def test_unknown_function_name_needs_the_tools() -> None:
    text = "<|FUNCTION_START|>get_time<|FUNCTION_ARGS|>{}<|FUNCTION_RETURN|>"
    assert OMNI.parse(text, strict=True).finish_reason == "tool_calls"  # no tools: any name
    offered = r"a call to one of the request's tools \('search_weather'\)"
    with pytest.raises(ParseError, match=f"no tool named 'get_time'; expected {offered}"):
        OMNI.parse(text, strict=True, tools=WEATHER["tools"])
    lenient = OMNI.parse(text, tools=WEATHER["tools"])
    assert "tool_calls" not in lenient.message  # no call: its text, as written
    assert lenient.message["content"] == text
    assert lenient.finish_reason == "stop"
    assert "no tool named 'get_time'" in lenient.warnings[0].message
    action = "<|ACTION_START|>sing<|ACTION_ARGS|>{}<|ACTION_END|>"
    with pytest.raises(ParseError, match="no action named 'sing'; expected no action call"):
        OMNI.parse(action, strict=True, tools=WEATHER["tools"])
    assert OMNI.parse(action, tools=WEATHER["tools"]).message["content"] == action


def test_the_framing_schematic_is_not_a_conversation() -> None:
    """Seed example 0 (``<|BOS|>\\n...\\n<|EOS|>``) shows the framing; ``...`` is not a turn."""
    with pytest.raises(ParseError, match="only whitespace"):
        OMNI.parse_conversation("<|BOS|>\n...\n<|EOS|>\n", strict=True)
    lenient = OMNI.parse_conversation("<|BOS|>\n...\n<|EOS|>\n")
    # The stray text is reported from its first non-whitespace character (split invariance).
    assert lenient.messages == [] and [w.text for w in lenient.warnings] == ["...\n"]


def test_whole_parse_is_the_fold_of_the_stream() -> None:
    text = (GOLDEN / "action_completion" / "completion.txt").read_text(encoding="utf-8")
    parser = OMNI.parser()
    events = [event for char in text for event in parser.feed(char)] + parser.finish()
    streamed = merge_assistant(fold(events, OMNI.grammar.fields).messages)
    assert streamed == OMNI.parse(text).core


PIECES = st.one_of(
    st.text(st.characters(exclude_characters="\\"), max_size=10),
    st.sampled_from(sorted(omni.SPECIAL)),
    st.sampled_from(["{}", '{"a": 1}', "\n", "x"]),
)


@given(st.lists(PIECES, max_size=14), st.booleans())
def test_lenient_parsing_keeps_text_in_parts_too(pieces: list[str], conversation: bool) -> None:
    """Nothing lost, counting voice, action and image-request parts and declared tools (the
    shared battery skips parts).  Text inside an image block is the image's, not kept."""
    text = "".join(pieces)
    if conversation:
        parsed = OMNI.parse_conversation(text)
        messages, warnings = list(parsed.core_messages), parsed.warnings
        kept = [json.dumps(dict(tool.definition), ensure_ascii=False) for tool in parsed.core_tools]
    else:
        result = OMNI.parse(text)
        messages, warnings, kept = [result.core], result.warnings, []
    kept += [warning.text for warning in warnings]
    for message in messages:
        kept += [message.text, message.reasoning or ""]
        kept += [f"{call.name}\x00{call.arguments}" for call in message.tool_calls]
        for part in message.content or ():
            if isinstance(part, ActionPart):
                kept += [part.name, part.arguments]
            elif isinstance(part, VoicePart):
                kept += [part.text, json.dumps(dict(part.prosody))]
            elif isinstance(part, ImageRequestPart):
                kept.append(json.dumps(dict(part.request)))
    joined = "\x00".join(kept)
    in_image = False
    for piece in pieces:
        in_image |= conversation and piece in ("<|IMAGE_START|>", "<|IMAGE_OUTPUT_START|>")
        if piece not in omni.SPECIAL and piece.strip() and not in_image:
            assert piece.strip() in joined, (piece, text, joined)


def test_an_unclosed_thinking_is_reported_where_it_began_however_split() -> None:
    text = "a<|THINK_START|>\nb\n<|FUNCTION_START|>f<|ASSISTANT_END|>"
    for pieces in ([text], list(text)):
        parser = OMNI.parser()
        events = [event for piece in pieces for event in parser.feed(piece)] + parser.finish()
        offsets = [e.offset for e in events if isinstance(e, pawlette.ParseWarning)]
        assert offsets == [text.index("<|FUNCTION_START|>"), len("a<|THINK_START|>")]
