"""PCML behaviour beyond the golden cases: strict errors, lenient recovery, refusals."""

from __future__ import annotations

import pytest

import pawlette
from pawlette import ParseError, TextDelta, ToolCallDelta, UnsupportedFeature
from pawlette.engine.fold import fold

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


def test_lenient_call_that_fails_after_its_arguments_is_content_only() -> None:
    text = '<call>{"id": "1", "name": "f", "arguments": {"a": 1}, "oops": 2}</call><end>'
    for stream_arguments in (False, True):
        parser = PCML.parser(stream_arguments=stream_arguments)
        (message,) = fold(parser.feed(text) + parser.finish()).messages
        assert message.text == text.removesuffix("<end>") and not message.tool_calls
    result = PCML.parse(text)
    assert result.message == {"role": "assistant", "content": text.removesuffix("<end>")}
    assert result.finish_reason == "stop"
    (warning,) = result.warnings
    assert warning.text == text.removesuffix("<end>")
    assert warning.offset == len("<call>")


def test_arguments_stream_before_the_call_closes_when_asked() -> None:
    parser = PCML.parser(stream_arguments=True)
    events = parser.feed('<call>{"id": "a", "name": "f", "arguments": {"text": "hello wor')
    deltas = [event.arguments for event in events if isinstance(event, ToolCallDelta)]
    assert "".join(deltas) == '{"text": "hello wor'


def test_a_call_is_held_until_it_closes() -> None:
    parser = PCML.parser()
    events = parser.feed('<call>{"id": "a", "name": "f", "arguments": {"text": "hello wor')
    assert events == [pawlette.MessageStart("assistant")]
    assert parser.feed('ld"}}</call>') == [
        pawlette.ToolCallStart(0, "a", "f"),
        ToolCallDelta(0, '{"text": "hello world"}'),
        pawlette.ToolCallEnd(0),
    ]


def test_marker_split_across_chunks_is_held_back() -> None:
    parser = PCML.parser()
    first = parser.feed("Hello <e")
    assert first == [pawlette.MessageStart("assistant"), TextDelta("Hello ")]
    assert parser.feed("nd>") == []  # the message ends once, at finish()
    assert parser.finish() == [pawlette.MessageEnd("stop")]


def test_text_after_end_is_content_with_a_warning() -> None:
    text = "Done.<end>extra words"
    for pieces in ([text], list(text)):
        parser = PCML.parser()
        events = [event for piece in pieces for event in parser.feed(piece)] + parser.finish()
        folder = fold(events)
        assert folder.messages[0].text == "Done.extra words"
        assert [w.text for w in folder.warnings] == ["extra words"]
        assert events[-1] == pawlette.MessageEnd("stop")


def test_a_second_turn_in_a_completion_is_content_not_merged() -> None:
    text = "Hi[/AST]\n\n[USR]secret text[/USR]\n\n[AST]more"
    result = PCML.parse(text)
    assert result.message["content"] == "Hi\n\n[USR]secret text[/USR]\n\n[AST]more"
    (warning,) = result.warnings
    assert warning.offset == len("Hi[/AST]") and "after the end of the turn" in warning.message
    with pytest.raises(ParseError, match="after the end of the turn"):
        PCML.parse(text, strict=True)


def test_the_closing_marker_after_end_is_layout() -> None:
    result = PCML.parse("Done.<end>[/AST]\n")
    assert result.message["content"] == "Done." and not result.warnings


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


@pytest.mark.parametrize(
    ("message", "lost"),
    [
        ({"role": "assistant", "content": "a", "name": "Bot"}, ["messages[1].name"]),
        ({"role": "tool", "tool_call_id": "c1", "content": "1", "name": "f"}, ["messages[1].name"]),
        ({"role": "user", "content": "u", "name": "Alice"}, []),
    ],
)
def test_a_name_without_its_header_is_lost_and_one_with_it_written(
    message: dict[str, str], lost: list[str]
) -> None:
    # Headers walks the messages only when one may hold what it must record or refuse: a
    # name on a role with no name field (user-boxes names users alone), or metadata.
    from tests.declare import user_containers

    with user_containers.registered() as fmt:
        rendering = fmt.render([{"role": "user", "content": "q"}, message])
        assert [loss.split(":")[0] for loss in rendering.losses] == lost
        with pytest.raises(pawlette.RequestError, match=r"messages\[0\]\.metadata\.1x"):
            fmt.render([{"role": "user", "content": "q", "metadata": {"1x": "v"}}])
