"""IdParser: parsing model output from token ids, token by token, on the real Llama 3."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders

import pawlette
from pawlette.engine.fold import fold, merge_assistant
from pawlette.errors import RequestError
from pawlette.openai import message_to_openai
from pawlette.tokenization import ConversationEncoder, IdParser
from pawlette.types import Event

from ..helpers import prompt_past_opener, sequential_ids
from ..support import sampling
from ..support.template_compare import always_prompt
from .support import (
    FORMATS,
    assistant_indices,
    llama3_all,
    small,
    strategy,
    token_text,
)


def folded(fmt: pawlette.Format, events: list[Event]) -> Any:
    result = fold(events, fmt.grammar.fields)
    return result.messages, result.tools, result.finish_reason, [w.text for w in result.warnings]


def parse_ids(
    fmt: pawlette.Format, tokenizer: object, ids: list[int], sizes: list[int], **options: Any
) -> Any:
    parser = IdParser(fmt, tokenizer, id_factory=sequential_ids(), **options)
    events: list[Event] = []
    position = 0
    turn = 0
    while position < len(ids):
        size = sizes[turn % len(sizes)]
        events += parser.feed_ids(ids[position : position + size])
        position += size
        turn += 1
    return folded(fmt, events + parser.finish())


def parse_text(fmt: pawlette.Format, text: str, **options: Any) -> Any:
    parser = fmt.parser(id_factory=sequential_ids(), **options)
    return folded(fmt, parser.feed(text) + parser.finish())


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_completions_parse_the_same_token_by_token(name: str) -> None:
    """Each assistant turn's ids, fed whole, one id at a time and in random runs, parse as
    its text does (strict), with characters split across ids held back."""
    fmt = pawlette.get_format(name)
    tokenizer = llama3_all()
    encoder = ConversationEncoder(fmt, tokenizer)

    @settings(max_examples=sampling.examples(name, FORMATS, 25))
    @given(strategy(name).conversations(), st.randoms(use_true_random=False))
    def check(request: dict[str, Any], rng: random.Random) -> None:
        messages, tools = request["messages"], request.get("tools")
        for index in assistant_indices(request):
            prompt = encoder.encode(messages[:index], tools, add_generation_prompt=True)
            turn = encoder.encode(messages[: index + 1], tools).input_ids
            if turn[: len(prompt.input_ids)] != prompt.input_ids:
                # Only a prompt written after every render may go past the assistant's
                # opener where the turn writes otherwise (Command R7B's empty reasoning
                # block before an answer): no completion follows that prompt.
                # Or a prompt that writes more than the opener (Gemma 4's empty thought block).
                full = fmt.render(messages[: index + 1], tools).text
                assert always_prompt(fmt, messages[:index], tools) is not None or (
                    prompt_past_opener(fmt, messages[:index], tools, full)
                ), (index, messages)
                continue
            ids = turn[len(prompt.input_ids) :]
            text = token_text(tokenizer, ids)
            expected = parse_text(fmt, text, strict=True)
            assert parse_ids(fmt, tokenizer, ids, [len(ids) or 1], strict=True) == expected
            assert parse_ids(fmt, tokenizer, ids, [1], strict=True) == expected
            sizes = [rng.choice([1, 2, 3, 5]) for _ in range(16)]
            assert parse_ids(fmt, tokenizer, ids, sizes, strict=True) == expected

    check()


def test_split_characters_are_held_back() -> None:
    tokenizer = llama3_all()
    text = "你好🙂"
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    assert len(ids) > len(text)  # some character spans two ids
    parser = IdParser("pcml", tokenizer)
    deltas = []
    for token in ids:
        deltas += [e.text for e in parser.feed_ids([token]) if isinstance(e, pawlette.TextDelta)]
    deltas += [e.text for e in parser.finish() if isinstance(e, pawlette.TextDelta)]
    assert "".join(deltas) == text
    assert all("\ufffd" not in delta for delta in deltas)


def test_a_character_cut_off_by_a_marker_becomes_a_replacement_character() -> None:
    tokenizer = llama3_all()
    first = tokenizer.encode("🙂", add_special_tokens=False).ids[0]
    parser = IdParser("pcml", tokenizer)
    events = parser.feed_ids([first, tokenizer.token_to_id("<end>")]) + parser.finish()
    assert folded(pawlette.get_format("pcml"), events)[0][0].text == "\ufffd"


def test_breeze_text_spelling_a_marker_is_text_when_it_comes_as_text_ids() -> None:
    breeze = pawlette.get_format("breeze")
    tokenizer = llama3_all()
    encoder = ConversationEncoder(breeze, tokenizer)
    messages = [
        {"role": "user", "content": "How do I end a turn?"},
        {"role": "assistant", "content": "Write <|eot_id|> and then <|start_header_id|>."},
    ]
    prompt = encoder.encode(messages[:1], add_generation_prompt=True).input_ids
    ids = encoder.encode(messages).input_ids[len(prompt) :]
    parser = IdParser(breeze, tokenizer, strict=True)
    events = parser.feed_ids(ids) + parser.finish()
    (message,) = folded(breeze, events)[0]
    assert message.text == messages[1]["content"]
    # The text form cannot tell: the turn ends at the first spelling, the rest is text after
    # the end of the turn (content, with a warning).
    from_text = breeze.parse(token_text(tokenizer, ids))
    assert from_text.message["content"] == "Write  and then <|start_header_id|>.<|eot_id|>"
    assert [w.text for w in from_text.warnings] == [" and then <|start_header_id|>.<|eot_id|>"]


def test_chatglm3_conversation_from_ids_joins_gmask_and_sop() -> None:
    glm = pawlette.get_format("chatglm3")
    tokenizer = llama3_all()
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]
    ids = pawlette.tokenization.tokenize(glm, tokenizer, messages).input_ids
    parsed = parse_ids(glm, tokenizer, ids, [1], conversation=True, strict=True)
    expected = glm.parse_conversation(glm.render(messages).text, strict=True)
    assert parsed[0] == list(expected.core_messages)


def test_pcml_newline_markers_from_two_ids() -> None:
    # "\n<call>" is a newline token then the <call> token: read as the one marker it is.
    pcml = pawlette.get_format("pcml")
    tokenizer = llama3_all()
    completion = 'Checking.\n<call>{"id": "c1", "name": "f", "arguments": {}}</call><end>'
    ids = pawlette.tokenization.tokenize(
        pcml,
        tokenizer,
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
        ],
    ).input_ids
    start = ids.index(tokenizer.token_to_id("[AST]")) + 1
    turn = ids[start : ids.index(tokenizer.token_to_id("<end>")) + 1]
    assert token_text(tokenizer, turn) == completion
    result = parse_ids(pcml, tokenizer, turn, [1], strict=True)
    (message,) = result[0]
    assert message.text == "Checking." and message.tool_calls[0].name == "f"


def test_tokenizers_without_byte_tokens_decode_by_windows() -> None:
    # The same BPE with a decoder that is not ByteLevel: the generic decoder is used.
    pcml = pawlette.get_format("pcml")
    byte_level = small("pcml")
    generic = Tokenizer.from_str(byte_level.to_str())
    generic.decoder = decoders.Sequence([decoders.ByteLevel()])
    text = "naïve 你好 🙂 done"
    ids = byte_level.encode(text, add_special_tokens=False).ids
    ids.append(byte_level.token_to_id("<end>"))
    assert IdParser(pcml, generic).backend.token_bytes() is None
    expected = parse_ids(pcml, byte_level, ids, [1])
    assert parse_ids(pcml, generic, ids, [1]) == expected
    assert expected[0][0].text == text


def test_the_generic_decoder_keeps_only_the_ids_it_may_decode_again() -> None:
    pcml = pawlette.get_format("pcml")
    byte_level = small("pcml")
    generic = Tokenizer.from_str(byte_level.to_str())
    generic.decoder = decoders.Sequence([decoders.ByteLevel()])
    text = "naïve 你好 🙂 done, " * 200
    ids = byte_level.encode(text, add_special_tokens=False).ids
    parser = IdParser(pcml, generic)
    for token in ids:
        parser.feed_ids([token])
        assert len(parser._text_ids) <= 2 * 256
    ids.append(byte_level.token_to_id("<end>"))
    assert parse_ids(pcml, generic, ids, [1]) == parse_ids(pcml, byte_level, ids, [1])


def test_an_id_outside_the_vocabulary_is_refused() -> None:
    parser = IdParser("pcml", small("pcml"))
    with pytest.raises(RequestError, match="id 999999"):
        parser.feed_ids([999999])


def test_feed_text_reads_no_marker_and_flushes_held_text() -> None:
    # The engine hook IdParser uses for formats that do not escape markers.
    parser = pawlette.get_format("breeze").parser(strict=True)
    events = parser.feed("Hi <|eo")  # "<|eo" may begin a marker: held back
    events += parser.feed_text("<|eot_id|> stays text")
    events += parser.feed_marker("<|eot_id|>") + parser.finish()
    (message,) = folded(pawlette.get_format("breeze"), events)[0]
    assert message.text == "Hi <|eo<|eot_id|> stays text"


@pytest.mark.parametrize(
    ("name", "text", "marker", "content"),
    [
        ("chatml", "Hi <|im_start|> there", "<|im_start|>", "Hi <|im_start|> there"),
        ("chatml", "Hi <|im_start|>user there", "<|im_start|>", "Hi <|im_start|>user there"),
        (
            "seed_oss",
            "Hi </seed:tool_call> there",
            "</seed:tool_call>",
            "Hi </seed:tool_call> there",
        ),
        ("seed_oss", "<seed:think>a</seed:think>b <seed:bos>", "<seed:bos>", "b <seed:bos>"),
    ],
)
def test_a_control_token_out_of_place_warns_from_text_as_from_ids(
    name: str, text: str, marker: str, content: str
) -> None:
    """A special token that no row reads alone (a part of ``<|im_start|>user\\n``), where no
    row takes it: content with a warning, from its spelling as from its id (the text form
    read it as plain text, with no warning, while the id warned)."""
    fmt = pawlette.get_format(name)
    tokenizer = small(name)
    whole = fmt.parse(text)
    parser = IdParser(fmt, tokenizer)
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    events = [event for token in ids for event in parser.feed_ids([token])]
    result = fold(events + parser.finish(), fmt.grammar.fields)
    offset = text.index(marker)
    assert [(w.offset, w.text) for w in whole.warnings] == [(offset, marker)]
    assert [(w.offset, w.text) for w in result.warnings] == [(offset, marker)]
    assert whole.message["content"] == content
    assert message_to_openai(merge_assistant(result.messages))["content"] == content


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_model_output_of_every_kind_parses_from_ids_as_from_text(name: str) -> None:
    """Malformed calls, marker spellings, text after the stop: the ids (markers as their
    special tokens), fed one at a time, fold to what the text parses to, warnings included."""
    from ..strategies.completions import completion, output_text

    fmt = pawlette.get_format(name)
    tokenizer = small(name)

    @settings(max_examples=sampling.examples(name, FORMATS, 40))
    @given(st.randoms(use_true_random=False), st.sampled_from([None, "length"]))
    def check(rng: random.Random, reason: str | None) -> None:
        text = completion(fmt, rng, ids=True)
        whole = fmt.parse(text, finish_reason=reason, id_factory=sequential_ids())
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        parser = IdParser(fmt, tokenizer, id_factory=sequential_ids())
        events = [event for token in ids for event in parser.feed_ids([token])]
        result = fold(events + parser.finish(reason), fmt.grammar.fields)
        message = message_to_openai(merge_assistant(result.messages))
        assert output_text(message) == output_text(whole.message), text
        assert result.finish_reason == whole.finish_reason
        assert [(w.offset, w.text) for w in result.warnings] == [
            (w.offset, w.text) for w in whole.warnings
        ]

    check()


@pytest.mark.parametrize("bad", ["a", 1.5, None])
def test_an_id_that_is_not_an_int_is_a_request_error(bad: Any) -> None:
    parser = IdParser("pcml", llama3_all())
    with pytest.raises(RequestError, match=r"ids: found .*; expected token ids"):
        parser.feed_ids([bad])


def holdback_by_definition(parser: IdParser, text: str) -> int:
    """The longest end of ``text`` that is a proper start of a marker's leading layout text,
    by trying every length (what ``IdParser._holdback`` finds with a regex)."""
    leads = parser._lead_prefixes
    return max((n for n in range(1, len(text) + 1) if text[len(text) - n :] in leads), default=0)


@pytest.mark.parametrize("name", FORMATS)
def test_the_held_end_of_a_text_is_the_longest_start_of_a_markers_lead(name: str) -> None:
    parser = IdParser(name, small(name))
    leads = sorted({lead for lead in parser._lead_prefixes})
    pieces = [*leads, "\n", " ", "a", "x\n", "<", "</", "{"]
    rng = random.Random(19)
    texts = [lead[cut:] for lead in leads for cut in range(len(lead))]
    texts += ["".join(rng.choices(pieces, k=rng.randint(1, 4))) for _ in range(300)]
    for text in texts:
        assert parser._holdback(text) == holdback_by_definition(parser, text), repr(text)


def test_chatml_text_ending_in_a_markers_lead_is_held_until_the_next_id() -> None:
    # "\n" may begin "\n<tool_call>": held, then joined with the marker id into that marker;
    # text ending in letters of the long tools-block lead holds nothing.
    chatml = pawlette.get_format("chatml")
    tokenizer = small("chatml")
    parser = IdParser(chatml, tokenizer, strict=True, id_factory=sequential_ids())
    assert parser._holdback("Let me check\n") == 1
    assert parser._holdback("For each") == 0
    text = 'Let me check\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call><|im_end|>'
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    events = [event for token in ids for event in parser.feed_ids([token])]
    whole = chatml.parse(text, strict=True, id_factory=sequential_ids())
    message = message_to_openai(merge_assistant(fold(events + parser.finish()).messages))
    assert message["content"] == whole.message["content"] == "Let me check"
    assert message["tool_calls"] == whole.message["tool_calls"]


def test_a_held_run_grown_past_a_marker_feeds_that_marker() -> None:
    # "\n", "</think>", "\n" may still become "\n</think>\n\n"; when "<tool_call>" comes
    # instead, the run begins with the marker "\n</think>", which the text form reads (a
    # stray close: warned at its newline), and "\n<tool_call>" joins after it.
    chatml = pawlette.get_format("chatml")
    tokenizer = small("chatml")
    text = (
        "<think>\n a \n</think>\n\n b \n</think>\n<tool_call>\n"
        '{"name": "f", "arguments": {}}\n</tool_call><|im_end|>'
    )
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    parser = IdParser(chatml, tokenizer, id_factory=sequential_ids())
    events = [event for token in ids for event in parser.feed_ids([token])]
    result = fold(events + parser.finish(), chatml.grammar.fields)
    whole = chatml.parse(text, id_factory=sequential_ids())
    assert [(w.offset, w.text) for w in result.warnings] == [
        (w.offset, w.text) for w in whole.warnings
    ]
    assert [w.text for w in whole.warnings] == ["\n</think>"]
    assert message_to_openai(merge_assistant(result.messages)) == whole.message


def test_a_marker_that_begins_inside_held_layout_text_is_read_as_in_text() -> None:
    # SmolLM3 holds "\n\n" (it may lead a marker); "</think>" then comes: the text form reads
    # "\n" as reasoning and "\n</think>\n" as the close, and the ids do too.
    smollm3 = pawlette.get_format("smollm3")
    tokenizer = small("smollm3")
    text = "<think>\n a \n\n</think>\n b <|im_end|>"
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    parser = IdParser(smollm3, tokenizer, id_factory=sequential_ids())
    events = [event for token in ids for event in parser.feed_ids([token])]
    message = message_to_openai(merge_assistant(fold(events + parser.finish()).messages))
    assert message == smollm3.parse(text, id_factory=sequential_ids()).message
    assert message["reasoning_content"] == " a \n"
