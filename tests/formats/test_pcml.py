"""PCML behaviour beyond the golden cases: strict errors, lenient recovery, refusals."""

from __future__ import annotations

import pytest

import pawlette
from pawlette import ParseError, ParseWarning, TextDelta, ToolCallDelta, UnsupportedFeature

PCML = pawlette.get_format("pcml")


def test_stop_is_the_end_marker() -> None:
    assert PCML.stop == ("<end>",)


def test_strict_unterminated_call_names_the_offset() -> None:
    with pytest.raises(ParseError) as caught:
        PCML.parse('Hi\n<call>{"name": "f", "arguments": {', strict=True)
    assert caught.value.offset == 9  # where the call's JSON begins
    assert "the call is not closed" in str(caught.value)


def test_strict_invalid_json_arguments() -> None:
    with pytest.raises(ParseError, match="not valid JSON"):
        PCML.parse('<call>{"name": "f", "arguments": {"a": }}</call>', strict=True)


def test_strict_unknown_call_key() -> None:
    with pytest.raises(ParseError, match=r"unknown keys \['extra'\]"):
        PCML.parse('<call>{"name": "f", "arguments": {}, "extra": 1}</call>', strict=True)


def test_lenient_unterminated_call_keeps_every_character() -> None:
    text = 'Hi\n<call>{"name": "f", "argu'
    result = PCML.parse(text)
    assert result.message["content"] == text
    assert result.finish_reason == "stop"
    assert len(result.warnings) == 1


def test_lenient_call_that_fails_after_streaming_keeps_raw_text_in_a_warning() -> None:
    text = '<call>{"id": "1", "name": "f", "arguments": {"a": 1}, "oops": 2}</call><end>'
    result = PCML.parse(text)
    assert result.message["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    (warning,) = result.warnings
    assert warning.text == text.removesuffix("<end>")


def test_arguments_stream_before_the_call_closes() -> None:
    parser = PCML.parser()
    events = parser.feed('<call>{"id": "a", "name": "f", "arguments": {"text": "hello wor')
    deltas = [event.arguments for event in events if isinstance(event, ToolCallDelta)]
    assert "".join(deltas) == '{"text": "hello wor'


def test_marker_split_across_chunks_is_held_back() -> None:
    parser = PCML.parser()
    first = parser.feed("Hello <e")
    assert first == [pawlette.MessageStart("assistant"), TextDelta("Hello ")]
    assert parser.feed("nd>") == [pawlette.MessageEnd("stop")]


def test_text_after_end_is_kept_as_a_warning() -> None:
    result = PCML.parse("Done.<end>extra words")
    assert result.message["content"] == "Done."
    assert [w.text for w in result.warnings] == ["extra words"]
    assert isinstance(result.warnings[0], ParseWarning)


def test_length_finish_reason_wins() -> None:
    assert PCML.parse("partial answ", finish_reason="length").finish_reason == "length"


def test_refuses_images() -> None:
    request = [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}],
        }
    ]
    with pytest.raises(UnsupportedFeature, match=r"messages\[0\]\.content\[0\]"):
        PCML.render(request)


def test_refuses_metadata_keys_that_are_fields() -> None:
    with pytest.raises(pawlette.RequestError, match=r"messages\[0\]\.metadata\.name"):
        PCML.render([{"role": "user", "content": "x", "metadata": {"name": "y"}}])


def test_metadata_round_trips_in_order() -> None:
    request = {
        "messages": [
            {"role": "user", "name": "A", "metadata": {"z": '1"2', "a": "[SEP]"}, "content": "c"}
        ]
    }
    text = PCML.render(request).text
    assert text == '[USR]name="A"[SEP]z="1\\"2"[SEP]a="\\[SEP]"[SEP]c[/USR]'
    assert PCML.parse_conversation(text, strict=True).messages == request["messages"]


def test_content_that_looks_like_a_header_is_content() -> None:
    parsed = PCML.parse_conversation('[USR]key="value" and more[/USR]', strict=True)
    assert parsed.messages == [{"role": "user", "content": 'key="value" and more'}]


def test_segments_join_to_the_text_and_flag_markers() -> None:
    rendering = PCML.render([{"role": "user", "content": "a"}], add_generation_prompt=True)
    assert [(s.text, s.special, s.kind) for s in rendering.segments] == [
        ("[USR]", True, "header"),
        ("a", False, "content"),
        ("[/USR]", True, "close"),
        ("\n\n", False, "separator"),
        ("[AST]", True, "generation_prompt"),
    ]
