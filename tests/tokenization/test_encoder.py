"""pawlette.tokenize: ids, labels and provenance; mask policies; adapters; errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer, decoders

import pawlette
from pawlette.errors import PawletteError, RequestError, TokenizerMismatch
from pawlette.tokenization import (
    IGNORE_INDEX,
    ConversationEncoder,
    MaskPolicy,
    load_backend,
    tokenize,
)
from pawlette.types import Rendering

from ..helpers import CLOSE, OPEN
from ..support.small_bpe import small_tokenizer
from .support import FORMATS, golden_cases, golden_input, llama3_all, small, token_text

PCML = pawlette.get_format("pcml")
TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "name": "Alice", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "reasoning_content": "I should call the tool.",
        "content": "Let me check.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "21 C"},
    {"role": "assistant", "content": "It is 21 C."},
]


def learned_text(tokenizer: Tokenizer, result: pawlette.tokenization.Tokenized) -> str:
    return token_text(tokenizer, [label for label in result.labels if label != IGNORE_INDEX])


def trainable_text(mask: str) -> str:
    """The text inside the ⟦ ⟧ of a golden mask.txt."""
    pieces = []
    for part in mask.split(OPEN)[1:]:
        pieces.append(part.split(CLOSE, 1)[0])
    return "".join(pieces)


# ------------------------------------------------------------------ golden cases


@pytest.mark.parametrize(
    "case",
    [case for name in FORMATS for case in golden_cases(name)],
    ids=lambda case: f"{case.parent.name}/{case.name}",
)
def test_golden_ids_decode_to_the_rendering_and_labels_to_the_mask(case: Path) -> None:
    name = case.parent.name
    fmt = pawlette.get_format(name)
    request = golden_input(case)
    prompt = bool(request.get("add_generation_prompt", False))
    result = tokenize(name, small(name), request, add_generation_prompt=prompt)
    rendered = (case / "rendered.txt").read_text(encoding="utf-8")
    assert token_text(small(name), result.input_ids) == rendered
    mask = (case / "mask.txt").read_text(encoding="utf-8")
    assert learned_text(small(name), result) == trainable_text(mask)
    assert len(result.labels) == len(result.message_indices) == len(result.kinds) == len(result)
    markers = {small(name).token_to_id(marker) for marker in fmt.special_markers}
    rendering = fmt.render(request, add_generation_prompt=prompt)
    expected_markers = sum(
        len(fmt.escape_pattern.findall(segment.text)) if fmt.escape_pattern else 1
        for segment in rendering.segments
        if segment.special
    )
    if fmt.escape_pattern is not None:  # every special segment holds exactly its markers
        assert sum(token in markers for token in result.input_ids) == expected_markers


# ------------------------------------------------------------------ ids, labels, provenance


def test_markers_by_id_text_as_text_and_provenance() -> None:
    tokenizer = small("pcml")
    messages = [{"role": "user", "content": "say [AST] or <end>"}, CONVERSATION[4]]
    result = tokenize(PCML, tokenizer, messages)
    end = tokenizer.token_to_id("<end>")
    assistant = tokenizer.token_to_id("[AST]")
    assert result.input_ids.count(end) == 1 and result.input_ids.count(assistant) == 1
    by_message: dict[int, str] = {}
    for token, index in zip(result.input_ids, result.message_indices, strict=True):
        by_message[index] = by_message.get(index, "") + token_text(tokenizer, [token])
    assert by_message == {
        0: "[USR]say \\[AST] or \\<end>[/USR]",
        1: "\n\n[AST]It is 21 C.<end>[/AST]",
    }
    kinds = dict(zip(result.input_ids, result.kinds, strict=True))
    assert kinds[end] == "end" and kinds[assistant] == "header"
    assert result.provenance[0] == (0, "header")
    assert learned_text(tokenizer, result) == "It is 21 C.<end>"
    assert result.learned == len([x for x in result.labels if x != IGNORE_INDEX])


def test_composite_marker_segments_split_into_marker_and_text() -> None:
    # PCML writes "\n<call>" and "</think>\n" as one special segment: a newline and a marker.
    tokenizer = small("pcml")
    result = tokenize(PCML, tokenizer, CONVERSATION, TOOLS)
    text = token_text(tokenizer, result.input_ids)
    assert text == PCML.render(CONVERSATION, TOOLS).text
    call = tokenizer.token_to_id("<call>")
    position = result.input_ids.index(call)
    assert token_text(tokenizer, result.input_ids[position - 1 : position]).endswith("\n")
    assert result.kinds[position] == "tool_call"


def test_default_policy_is_the_rendering_trainable_flags() -> None:
    tokenizer = small("pcml")
    result = tokenize(PCML, tokenizer, CONVERSATION, TOOLS)
    assert learned_text(tokenizer, result) == (
        "<think>I should call the tool.</think>\nLet me check.\n<call>"
        '{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}</call><end>'
        "It is 21 C.<end>"
    )


def test_last_turn_only() -> None:
    tokenizer = small("pcml")
    result = tokenize(PCML, tokenizer, CONVERSATION, TOOLS, mask="last")
    assert learned_text(tokenizer, result) == "It is 21 C.<end>"
    same_ids = tokenize(PCML, tokenizer, CONVERSATION, TOOLS)
    assert result.input_ids == same_ids.input_ids  # a policy changes labels, never ids


def test_weights_decide_per_message() -> None:
    tokenizer = small("pcml")
    messages = [dict(message) for message in CONVERSATION]
    messages[4]["weight"] = 0
    result = tokenize(PCML, tokenizer, messages, TOOLS)
    assert learned_text(tokenizer, result).endswith("</call><end>")
    messages[2]["weight"] = 1
    last = tokenize(PCML, tokenizer, messages, TOOLS, mask="last")
    assert "It is 21 C." not in learned_text(tokenizer, last)
    assert learned_text(tokenizer, last).startswith("<think>")
    ignored = tokenize(PCML, tokenizer, messages, TOOLS, mask="no-weights")
    assert learned_text(tokenizer, ignored).endswith("It is 21 C.<end>")


def test_reasoning_not_learned() -> None:
    tokenizer = small("pcml")
    result = tokenize(PCML, tokenizer, CONVERSATION, TOOLS, mask=MaskPolicy(reasoning=False))
    text = learned_text(tokenizer, result)
    assert "should call" not in text and "<think>" not in text
    assert text.startswith("Let me check.")


# A call, its result (written inside omni's assistant turn) and the answer after it.
CALL_RESULT_ANSWER = [
    {"role": "user", "content": "Weather?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "RESULT TEXT"},
    {"role": "assistant", "content": "Sunny."},
]


def test_omni_results_inside_the_turn_are_never_learned() -> None:
    omni = pawlette.get_format("omni")
    tokenizer = small("omni")
    messages = CALL_RESULT_ANSWER
    result = tokenize(omni, tokenizer, messages)
    text = learned_text(tokenizer, result)
    assert "RESULT" not in text
    assert (
        text == "\n<|FUNCTION_START|>f<|FUNCTION_ARGS|>{}<|FUNCTION_RETURN|>Sunny.<|ASSISTANT_END|>"
    )
    kinds = {kind for kind, label in zip(result.kinds, result.labels, strict=True) if label >= 0}
    assert "tool_result" not in kinds
    assert "tool_result" in result.kinds


class _ResultsMarkedTrainable:
    """omni, except that its rendering marks tool results trainable (a format declaration
    could): the encoder must still never learn them."""

    def __init__(self) -> None:
        self._omni = pawlette.get_format("omni")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._omni, name)

    def render(self, *arguments: Any, **keywords: Any) -> Rendering:
        rendering = self._omni.render(*arguments, **keywords)
        segments = tuple(
            segment._replace(trainable=True) if segment.kind == "tool_result" else segment
            for segment in rendering.segments
        )
        return Rendering(rendering.text, segments)


def test_tool_results_marked_trainable_are_still_never_learned() -> None:
    tokenizer = small("omni")
    fmt: Any = _ResultsMarkedTrainable()
    messages = CALL_RESULT_ANSWER
    rendering = fmt.render(messages)
    assert any(s.kind == "tool_result" and s.trainable for s in rendering.segments)
    result = ConversationEncoder(fmt, tokenizer).encode(messages)
    assert "RESULT" not in learned_text(tokenizer, result)
    kinds = {kind for kind, label in zip(result.kinds, result.labels, strict=True) if label >= 0}
    assert "tool_result" not in kinds and "tool_result" in result.kinds


def test_chatglm3_learns_the_role_token_that_ends_an_assistant_turn() -> None:
    glm = pawlette.get_format("chatglm3")
    tokenizer = small("chatglm3")
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]
    result = tokenize(glm, tokenizer, messages)
    assert learned_text(tokenizer, result) == "\nHello<|user|>"
    last = tokenize(glm, tokenizer, messages, mask="last")
    assert learned_text(tokenizer, last) == "\nHello<|user|>"  # it belongs to that turn
    messages[1]["weight"] = 0
    assert tokenize(glm, tokenizer, messages).learned == 0


def test_generation_prompt_is_not_learned() -> None:
    tokenizer = small("pcml")
    result = tokenize(PCML, tokenizer, CONVERSATION[:2], add_generation_prompt=True)
    assert result.learned == 0
    assert token_text(tokenizer, result.input_ids).endswith("[AST]")
    assert result.message_indices[-1] == 2


def test_mask_policy_spelling() -> None:
    assert MaskPolicy.parse("") == MaskPolicy()
    assert MaskPolicy.parse("last, no-reasoning,no-weights") == MaskPolicy("last", False, False)
    with pytest.raises(RequestError, match="'sometimes'"):
        MaskPolicy.parse("sometimes")
    with pytest.raises(RequestError, match=r"mask\.turns"):
        MaskPolicy(turns="first")  # type: ignore[arg-type]


# ------------------------------------------------------------------ batches


def test_batch_equals_one_by_one_and_keeps_errors_in_place() -> None:
    encoder = ConversationEncoder("pcml", small("pcml"))
    good = {"messages": CONVERSATION, "tools": TOOLS}
    bad = {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}
    pair = (CONVERSATION[:2], None)
    batch = encoder.encode_batch([good, bad, pair, CONVERSATION[:2]], errors="return")
    assert batch[0] == encoder.encode(CONVERSATION, TOOLS)
    assert isinstance(batch[1], PawletteError)
    assert "messages[0].content" in str(batch[1])
    assert batch[2] == batch[3] == encoder.encode(CONVERSATION[:2])
    with pytest.raises(RequestError):
        encoder.encode_batch([good, bad])


def test_repeated_text_comes_from_the_cache_with_the_same_ids() -> None:
    encoder = ConversationEncoder("pcml", small("pcml"))
    first = encoder.encode(CONVERSATION, TOOLS)
    second = encoder.encode(CONVERSATION, TOOLS)
    assert first == second
    assert first.input_ids is not second.input_ids


# ------------------------------------------------------------------ tokenizer adapters


def test_tokenizer_from_a_path_a_directory_and_transformers(tmp_path: Path) -> None:
    tokenizer = small("pcml")
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    expected = tokenize(PCML, tokenizer, CONVERSATION, TOOLS)
    assert tokenize(PCML, tmp_path / "tokenizer.json", CONVERSATION, TOOLS) == expected
    assert tokenize(PCML, str(tmp_path), CONVERSATION, TOOLS) == expected
    import transformers

    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer)
    assert tokenize(PCML, fast, CONVERSATION, TOOLS) == expected


def test_a_directory_prepared_again_in_this_process_gives_the_new_ids(tmp_path: Path) -> None:
    """Backends and encoders are cached by the tokenizer.json actually read (its inode,
    modification time and size), not by the path or the directory's own status."""
    first, second = small("pcml"), small_tokenizer(PCML.special_markers, vocab_size=600)
    first.save(str(tmp_path / "tokenizer.json"))
    expected_first = tokenize(PCML, first, CONVERSATION, TOOLS)
    assert tokenize(PCML, tmp_path, CONVERSATION, TOOLS) == expected_first
    assert load_backend(tmp_path).tokenizer.get_vocab_size() == first.get_vocab_size()
    # Prepared again in place: the file is rewritten, the directory's own status unchanged.
    second.save(str(tmp_path / "tokenizer.json"))
    expected_second = tokenize(PCML, second, CONVERSATION, TOOLS)
    assert expected_second != expected_first
    assert tokenize(PCML, tmp_path, CONVERSATION, TOOLS) == expected_second
    assert tokenize(PCML, tmp_path / "tokenizer.json", CONVERSATION, TOOLS) == expected_second
    assert load_backend(tmp_path).tokenizer.get_vocab_size() == second.get_vocab_size()


def test_tokenizer_that_is_not_one() -> None:
    with pytest.raises(PawletteError, match=r"expected a tokenizers\.Tokenizer"):
        load_backend(42)

    class Slow:
        is_fast = False

    with pytest.raises(PawletteError, match="slow"):
        load_backend(Slow())
    with pytest.raises(PawletteError, match="no such file"):
        load_backend("/nonexistent/tokenizer.json")


def test_a_marker_missing_from_the_tokenizer_names_it_and_the_fix() -> None:
    tokenizer = small_tokenizer([m for m in PCML.special_markers if m != "<end>"])
    with pytest.raises(TokenizerMismatch) as caught:
        tokenize(PCML, tokenizer, CONVERSATION)
    message = str(caught.value)
    assert "'<end>'" in message and "not a token" in message
    assert "pawlette tokenizer prepare -f pcml" in message


def test_the_fix_for_a_format_known_in_this_process_alone_names_no_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A format registered here (as -f DIR registers an inferred one) has a name another
    # command cannot find: the fix points at what named it.
    import dataclasses
    import importlib

    from pawlette import register_format
    from pawlette.formats import get_format

    registry = importlib.import_module("pawlette.formats")
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))  # undone after

    local = dataclasses.replace(get_format("pcml"), name="pcml-registered-here")
    register_format(local, replace=True)
    tokenizer = small_tokenizer([m for m in PCML.special_markers if m != "<end>"])
    with pytest.raises(TokenizerMismatch) as caught:
        tokenize(local, tokenizer, CONVERSATION)
    message = str(caught.value)
    assert "-f pcml-registered-here" not in message
    assert "prepare -f <the model directory or .py file you gave -f>" in message


def _with_word_made_special(word: str) -> Tokenizer:
    """The small PCML tokenizer with ``word``, an ordinary token, also added as special: the
    added token gets the vocabulary's id, so plain text spelling ``word`` reaches it."""
    tokenizer = Tokenizer.from_str(small("pcml").to_str())
    ordinary = tokenizer.token_to_id(word)
    assert ordinary is not None and ordinary < tokenizer.get_vocab_size(with_added_tokens=False)
    tokenizer.add_special_tokens([word])
    assert tokenizer.token_to_id(word) == ordinary
    return tokenizer


def test_a_marker_that_text_can_reach_is_refused() -> None:
    tokenizer = _with_word_made_special("Weather")
    fake = dataclasses.replace(PCML, special_markers=(*PCML.special_markers, "Weather"))
    with pytest.raises(TokenizerMismatch, match="also an ordinary token"):
        ConversationEncoder(fake, tokenizer)


def test_text_that_reaches_a_control_id_is_an_error_not_a_control_token() -> None:
    encoder = ConversationEncoder(PCML, _with_word_made_special("Weather"))
    with pytest.raises(TokenizerMismatch, match="control token 'Weather'"):
        encoder.encode(CONVERSATION, TOOLS)
    (result,) = encoder.encode_batch([CONVERSATION], errors="return")
    assert isinstance(result, TokenizerMismatch)


# ------------------------------------------------------------------ the real Llama 3


def test_llama3_breeze_ids_are_what_meta_and_transformers_write() -> None:
    breeze = pawlette.get_format("breeze")
    tokenizer = llama3_all()
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    result = tokenize(breeze, tokenizer, messages)
    # <|begin_of_text|>, the default system turn (MRPromptV3's), then <|start_header_id|> user
    # <|end_header_id|> \n\n Hi <|eot_id|> ...
    system = tokenizer.encode("You are a helpful AI assistant.", add_special_tokens=False).ids
    assert result.input_ids == [
        128000, 128006, 9125, 128007, 271, *system, 128009,
        128006, 882, 128007, 271, 13347, 128009,
        128006, 78191, 128007, 271, 9906, 128009,
    ]  # fmt: skip
    assert learned_text(tokenizer, result) == "Hello<|eot_id|>"


def test_a_token_straddling_reasoning_and_content_is_learned_as_content() -> None:
    # PCML's "</think>\n" gives its newline to the reasoning; content "\nHi" joins it in one run
    # and Llama 3 merges "\n\n" across the two segments.
    tokenizer = llama3_all()
    messages = [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "reasoning_content": "R", "content": "\nHi"},
    ]
    result = tokenize(PCML, tokenizer, messages, mask="no-reasoning")
    newline_pair = tokenizer.token_to_id("ĊĊ")
    think_end = tokenizer.token_to_id("</think>")
    position = result.input_ids.index(think_end) + 1
    assert result.input_ids[position] == newline_pair
    assert result.kinds[position] == "content"  # the segment of its last character
    assert result.labels[position] == newline_pair  # learned: it carries learned text
    assert learned_text(tokenizer, result) == "\n\nHi<end>"
    assert "R" not in learned_text(tokenizer, result)


def test_tokenizers_without_byte_tokens_map_tokens_by_offsets() -> None:
    # The same BPE behind a decoder that is not ByteLevel: mixed runs use the offsets.
    byte_level = small("pcml")
    generic = Tokenizer.from_str(byte_level.to_str())
    generic.decoder = decoders.Sequence([decoders.ByteLevel()])
    messages = [*CONVERSATION[:2], {**CONVERSATION[2], "content": "\n你好 🙂"}, *CONVERSATION[3:]]
    for mask in ("all", "no-reasoning"):
        expected = tokenize(PCML, byte_level, messages, TOOLS, mask=mask)
        assert tokenize(PCML, generic, messages, TOOLS, mask=mask) == expected


# ------------------------------------------------------------------ prompts for a server


@pytest.mark.parametrize("name", FORMATS)
def test_prompt_ids_are_the_ids_training_gives_the_prompt(name: str) -> None:
    fmt = pawlette.get_format(name)
    encoder = ConversationEncoder(fmt, small(name))
    for case in golden_cases(name):
        request = golden_input(case)
        rendering = fmt.render(request, add_generation_prompt=True)
        trained = encoder.encode(request, add_generation_prompt=True).input_ids
        assert encoder.prompt_ids(rendering) == trained, case.name


def test_a_forced_prefix_is_model_output_cut_from_the_prompt() -> None:
    tokenizer = small("pcml")
    encoder = ConversationEncoder(PCML, tokenizer)
    messages = [{"role": "user", "content": "Weather?"}]
    rendering = PCML.render(messages, add_generation_prompt=True)
    prompt = encoder.prompt_ids(rendering)
    ids = encoder.prompt_ids(rendering, '\n<call>{"name": "get_weather"')
    assert ids[: len(prompt)] == prompt
    rest = ids[len(prompt) :]
    newline = tokenizer.encode("\n", add_special_tokens=False).ids
    assert rest[: len(newline)] == newline
    assert rest[len(newline)] == tokenizer.token_to_id("<call>")  # the marker by its id
    text = tokenizer.encode('{"name": "get_weather"', add_special_tokens=False).ids
    assert rest[len(newline) + 1 :] == text
    assert encoder.marker_ids["<call>"] == tokenizer.token_to_id("<call>")


def test_a_cleared_cache_encodes_the_same_ids() -> None:
    backend = load_backend(small("pcml"))
    encoder = ConversationEncoder(PCML, backend)
    first = encoder.encode(CONVERSATION, TOOLS)
    assert any(backend._caches)  # the runs are remembered
    backend.clear_cache()
    assert not any(backend._caches)
    assert encoder.encode(CONVERSATION, TOOLS) == first


def test_arguments_of_the_wrong_type_are_refused() -> None:
    """Found by the audit: ``encode_batch(5)`` raised TypeError, ``encode_batch`` of one
    request dict encoded its keys, and ``add_generation_prompt="no"`` counted as true."""
    messages = [{"role": "user", "content": "hi"}]
    encoder = ConversationEncoder("pcml", small("pcml"))
    for conversations in (5, {"messages": messages}, "hi"):
        with pytest.raises(RequestError, match=r"conversations: .*expected a list"):
            encoder.encode_batch(conversations)  # type: ignore[arg-type]
    with pytest.raises(RequestError, match="add_generation_prompt: found 'no'"):
        pawlette.tokenize("pcml", small("pcml"), messages, add_generation_prompt="no")  # type: ignore[arg-type]
    assert len(encoder.encode_batch([messages, (messages, None)])) == 2
