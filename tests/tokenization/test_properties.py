"""Invariants of tokenization, over every registered format (hypothesis).

- consistency with inference: the training ids up to each assistant turn are the ids of the
  completion prompt (``add_generation_prompt=True``) of the conversation before that turn;
- boundaries: ids are the tokenizer's own encoding of the text between markers, cut only
  where trainability changes, and those cuts fall exactly where a completion prompt ends;
- no injection: text built from every marker of every format never yields a control id;
  control ids come from marker segments only.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

import pawlette
from pawlette.engine.lexer import marker_pattern
from pawlette.format import Format, coerce_conversation
from pawlette.tokenization import ConversationEncoder, MaskPolicy, encode_plain
from pawlette.types import Rendering

from ..helpers import WITHOUT_CALLS, WITHOUT_SYSTEM
from ..support import sampling
from ..support.llama3 import LLAMA3_SPECIAL_TOKENS
from .support import (
    ALL_MARKERS,
    FORMATS,
    assistant_indices,
    call_ids,
    cut_positions,
    llama3_all,
    prefix_indices,
    small,
    small_all,
    strategy,
)

SMALL = 60
FEWER = 25  # the real Llama 3 tokenizer: slower per example


def examples(name: str, count: int) -> Any:
    """Hypothesis settings for ``count`` examples, a few for a format outside this run's draw
    for the check (tests/support/sampling.py)."""
    return settings(max_examples=sampling.examples(name, FORMATS, count))


def _tokenizer(kind: str, name: str) -> Tokenizer:
    return llama3_all() if kind == "llama3" else small(name)


# ------------------------------------------------------------------ consistency with inference


def check_prompt_prefixes(encoder: ConversationEncoder, request: dict[str, Any]) -> None:
    messages, tools = request["messages"], request.get("tools")
    full = encoder.encode(messages, tools)
    indices = prefix_indices(encoder.format)
    for index in indices(request):
        prompt = encoder.encode(messages[:index], tools, add_generation_prompt=True)
        size = len(prompt.input_ids)
        assert full.input_ids[:size] == prompt.input_ids, (index, messages)
        learned_here = [
            position
            for position, (label, owner) in enumerate(
                zip(full.labels, full.message_indices, strict=True)
            )
            if label >= 0 and owner == index
        ]
        assert all(position >= size for position in learned_here)


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_invariants_on_a_small_bpe(name: str) -> None:
    """Prompt prefixes, boundaries and cut places on one generated conversation."""
    fmt = pawlette.get_format(name)
    tokenizer = small(name)
    encoder = ConversationEncoder(fmt, tokenizer)

    @examples(name, SMALL)
    @given(strategy(name).conversations())
    def check(request: dict[str, Any]) -> None:
        check_prompt_prefixes(encoder, request)
        check_boundaries(fmt, tokenizer, encoder, request)
        check_cuts(fmt, request)

    check()


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_invariants_on_llama3(name: str) -> None:
    fmt = pawlette.get_format(name)
    tokenizer = llama3_all()
    encoder = ConversationEncoder(name, tokenizer)

    @examples(name, FEWER)
    @given(strategy(name).conversations())
    def check(request: dict[str, Any]) -> None:
        check_prompt_prefixes(encoder, request)
        check_boundaries(fmt, tokenizer, encoder, request)

    check()


def test_batches_equal_single_conversations() -> None:
    name = "omni"
    encoder = ConversationEncoder(name, small(name))

    @settings(max_examples=FEWER)
    @given(st.lists(strategy(name).conversations(), max_size=4))
    def check(requests: list[dict[str, Any]]) -> None:
        batch = encoder.encode_batch(requests)
        assert batch == [encoder.encode(request) for request in requests]

    check()


# ------------------------------------------------------------------ boundaries


def stretches(fmt: Format, rendering: Rendering, *, cut_at_trainability: bool) -> list[Any]:
    """The rendering as markers and stretches of text between them: ``(True, marker)`` or
    ``(False, text)``; with ``cut_at_trainability``, text is also cut where ``trainable``
    changes."""
    pattern = marker_pattern(fmt.special_markers)
    pieces: list[tuple[bool, str, bool]] = []
    for segment in rendering.segments:
        if not segment.special:
            pieces.append((False, segment.text, segment.trainable))
            continue
        position = 0
        for match in pattern.finditer(segment.text):
            if match.start() > position:
                pieces.append((False, segment.text[position : match.start()], segment.trainable))
            pieces.append((True, match.group(), segment.trainable))
            position = match.end()
        if position < len(segment.text):
            pieces.append((False, segment.text[position:], segment.trainable))
    result: list[Any] = []
    previous: bool | None = None
    for is_marker, text, trainable in pieces:
        joins = (
            not is_marker
            and result
            and not result[-1][0]
            and (previous == trainable or not cut_at_trainability)
        )
        if joins:
            result[-1] = (False, result[-1][1] + text)
        else:
            result.append((is_marker, text))
        previous = None if is_marker else trainable
    return result


def reference_ids(tokenizer: Tokenizer, parts: list[Any]) -> list[int]:
    """What the tokenizer itself gives: markers by id, each stretch encoded whole with special
    tokens matched (with ``encode_plain`` for a stretch that spells an added token)."""
    added = [token.content for token in tokenizer.get_added_tokens_decoder().values()]
    ids: list[int] = []
    for is_marker, text in parts:
        if is_marker:
            ids.append(tokenizer.token_to_id(text))
        elif any(token in text for token in added):
            ids += encode_plain(tokenizer, text)
        else:
            ids += tokenizer.encode(text, add_special_tokens=False).ids
    return ids


def spells_an_added_token(tokenizer: Tokenizer, parts: list[Any]) -> bool:
    added = [token.content for token in tokenizer.get_added_tokens_decoder().values()]
    return any(not is_marker and any(a in text for a in added) for is_marker, text in parts)


def check_boundaries(
    fmt: Format, tokenizer: Tokenizer, encoder: ConversationEncoder, request: dict[str, Any]
) -> None:
    rendering = fmt.render(request)
    ours = encoder.encode(request).input_ids
    cut = stretches(fmt, rendering, cut_at_trainability=True)
    if fmt.encode_cuts is not None:  # the reference encodes piece by piece (ChatGLM3)
        assert ours == call_ids(fmt, tokenizer, rendering), rendering.text
    else:
        assert ours == reference_ids(tokenizer, cut), rendering.text
    whole = stretches(fmt, rendering, cut_at_trainability=False)
    if not spells_an_added_token(tokenizer, whole):
        # The reference is the tokenizer's encoding of the whole text, as transformers does it.
        expected = tokenizer.encode(rendering.text, add_special_tokens=False).ids
        assert reference_ids(tokenizer, whole) == expected


def check_cuts(fmt: Format, request: dict[str, Any]) -> None:
    """Every place where two text pieces of different trainability meet (with no marker
    between) is the end of the completion prompt of some assistant turn."""
    messages, tools = request["messages"], request.get("tools")
    rendering = fmt.render(request)
    cuts = cut_positions(fmt, rendering)
    prompt_ends = {
        len(fmt.render(messages[:index], tools, add_generation_prompt=True).text)
        for index in assistant_indices(request)
    }
    # A format whose earlier turns render differently later (chatml) says where its model
    # starts writing in the whole render.
    prompt_ends |= set(getattr(strategy(fmt.name), "writing_starts", lambda r: ())(rendering))
    # A format whose turns end with plain text (RWKV World's blank line) says where its model
    # stops writing: the next turn's text follows with no marker between.
    prompt_ends |= set(getattr(strategy(fmt.name), "writing_ends", lambda r: ())(rendering))
    assert set(cuts) <= prompt_ends, (cuts, prompt_ends, rendering.text)


def test_why_text_is_cut_where_the_prompt_ends() -> None:
    """Breeze content that starts with a newline: encoding the whole text would merge the
    prompt's ``\\n\\n`` with it (Llama 3's ``\\n\\n\\n``), ids the model never saw: at inference
    the prompt is encoded alone and the model's ``\\n`` comes after it."""
    breeze = pawlette.get_format("breeze")
    tokenizer = llama3_all()
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "\nHello"}]
    ours = pawlette.tokenization.tokenize(breeze, tokenizer, messages)
    prompt = breeze.render(messages[:1], add_generation_prompt=True).text
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=False).ids
    assert ours.input_ids[: len(prompt_ids)] == prompt_ids
    whole = tokenizer.encode(breeze.render(messages).text, add_special_tokens=False).ids
    assert whole[: len(prompt_ids)] != prompt_ids  # "\n\n\n" took the prompt's last token
    assert tokenizer.id_to_token(whole[len(prompt_ids) - 1]) == "ĊĊĊ"


# ------------------------------------------------------------------ no injection

NEAR_MISSES = ["<|", "|>", "<|eot_id", "[/", "</", "\\", "\\\\", "sop", "[gMASK", "\n", " "]
SOUP_PIECES = [*ALL_MARKERS, *LLAMA3_SPECIAL_TOKENS.keys(), *NEAR_MISSES]
soup = st.lists(st.one_of(st.sampled_from(SOUP_PIECES), st.text(max_size=4)), max_size=8).map(
    "".join
)


@st.composite
def marker_soup_conversations(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """Every place a caller's text goes that format ``name`` expresses, filled with markers of
    every format (no system message where the format refuses one, no round of calls and
    results where it has no calls: :data:`tests.helpers.WITHOUT_SYSTEM`, ``WITHOUT_CALLS``)."""
    arguments = json.dumps({"q": draw(soup)}, ensure_ascii=draw(st.booleans()))
    system = {"role": "system", "content": draw(soup)}
    calls = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "callid001",
                "type": "function",
                "function": {"name": "f", "arguments": arguments},
            }
        ],
    }
    result = {"role": "tool", "tool_call_id": "callid001", "content": draw(soup)}
    return {
        "messages": [
            *([] if name in WITHOUT_SYSTEM else [system]),
            {"role": "user", "content": draw(soup)},
            *([] if name in WITHOUT_CALLS else [calls, result]),
            {"role": "assistant", "content": draw(soup)},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "f",
                    "description": draw(soup),
                    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                },
            }
        ],
    }


def marker_ids_of(fmt: Format, tokenizer: Tokenizer, rendering: Rendering) -> list[int]:
    pattern = marker_pattern(fmt.special_markers)
    return [
        tokenizer.token_to_id(match.group())
        for segment in rendering.segments
        if segment.special
        for match in pattern.finditer(segment.text)
    ]


@pytest.mark.deep
@pytest.mark.parametrize("kind", ["small", "llama3"])
@pytest.mark.parametrize("name", FORMATS)
def test_no_text_produces_a_control_id(name: str, kind: str) -> None:
    fmt = pawlette.get_format(name)
    tokenizer = small_all() if kind == "small" else llama3_all()
    control = set(tokenizer.get_added_tokens_decoder())
    encoder = ConversationEncoder(fmt, tokenizer)

    @examples(name, SMALL if kind == "small" else FEWER)
    @given(marker_soup_conversations(name))
    def check(request: dict[str, Any]) -> None:
        result = encoder.encode(request)
        rendering = fmt.render(request)
        found = [token for token in result.input_ids if token in control]
        assert found == marker_ids_of(fmt, tokenizer, rendering)
        assert tokenizer.decode(result.input_ids, skip_special_tokens=False) == rendering.text

    check()


# ------------------------------------------------------------------ labels and provenance

POLICIES = st.builds(
    MaskPolicy,
    turns=st.sampled_from(["all", "last"]),
    reasoning=st.booleans(),
    weights=st.booleans(),
)


def reference_labels(
    fmt: Format, tokenizer: Tokenizer, request: dict[str, Any], policy: MaskPolicy, ids: list[int]
) -> tuple[list[int], list[int], list[str]]:
    """Labels and provenance computed character by character from the module docstring's
    rules, for the ids the encoder gave."""
    messages, _ = coerce_conversation(request)
    rendering = fmt.render(request)
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)

    def chosen(owner: int) -> bool:
        if 0 <= owner < len(messages):
            weight = messages[owner].weight
            if policy.weights and weight is not None:
                return weight == 1
            return policy.turns == "all" or owner == last
        return owner == len(messages) or policy.turns == "all"

    # Every character (as UTF-8 bytes) with whether it is learned and its provenance.
    pattern = marker_pattern(fmt.special_markers)
    units: list[tuple[bool, str, bool, int, str]] = []  # (marker?, text, learned, index, kind)
    owner = -1
    for segment in rendering.segments:
        if segment.role == "assistant":
            owner = segment.message_index
        learned = (
            segment.trainable
            and chosen(owner)
            and segment.kind != "tool_result"
            and (policy.reasoning or segment.kind != "reasoning")
        )
        where = (learned, segment.message_index, segment.kind)
        if not segment.special:
            units.append((False, segment.text, *where))
            continue
        position = 0
        for match in pattern.finditer(segment.text):
            if match.start() > position:
                units.append((False, segment.text[position : match.start()], *where))
            units.append((True, match.group(), *where))
            position = match.end()
        if position < len(segment.text):
            units.append((False, segment.text[position:], *where))
    expected: list[tuple[int, int, str]] = []
    token_iter = iter(ids)
    pending: list[tuple[bool, int, str]] = []

    def drain() -> None:
        # Consume text tokens covering exactly the pending bytes.
        while pending:
            token = next(token_iter)
            size = len(tokenizer.id_to_token(token))  # byte-level: one character per byte
            covered, pending[:] = pending[:size], pending[size:]
            label = token if any(c[0] for c in covered) else -100
            expected.append((label, covered[-1][1], covered[-1][2]))

    for is_marker, text, learned, index, kind in units:
        if is_marker:
            drain()
            token = next(token_iter)
            assert token == tokenizer.token_to_id(text)
            expected.append((token if learned else -100, index, kind))
        else:
            pending += [(learned, index, kind)] * len(text.encode("utf-8"))
    drain()
    labels = [label for label, _, _ in expected]
    return labels, [i for _, i, _ in expected], [k for _, _, k in expected]


@st.composite
def weighted(draw: st.DrawFn, conversations: st.SearchStrategy[dict[str, Any]]) -> Any:
    request = draw(conversations)
    messages = []
    for message in request["messages"]:
        if message["role"] == "assistant" and draw(st.booleans()):
            message = {**message, "weight": draw(st.sampled_from([0, 1]))}
        messages.append(message)
    return {**request, "messages": messages}


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_labels_and_provenance_follow_the_policy_character_by_character(name: str) -> None:
    fmt = pawlette.get_format(name)
    tokenizer = small(name)

    @examples(name, SMALL)
    @given(weighted(strategy(name).conversations()), POLICIES)
    def check(request: dict[str, Any], policy: MaskPolicy) -> None:
        result = ConversationEncoder(fmt, tokenizer, mask=policy).encode(request)
        labels, indices, kinds = reference_labels(fmt, tokenizer, request, policy, result.input_ids)
        assert result.labels == labels
        assert result.message_indices == indices
        assert result.kinds == kinds

    check()
