"""SentencePiece-style tokenizers (a prefix added to some pieces): pawlette's ids are the
tokenizer's own.

Such a tokenizer splits its input at added tokens and adds a prefix (``▁`` or a space) to some
pieces: a Metaspace pre-tokenizer with ``prepend_scheme="first"`` only to the piece at the start
of the text, ``"always"`` to every piece, a legacy ``Prepend("▁")`` normaliser and ByteLevel's
``add_prefix_space`` to every piece.  Text runs encoded one by one must get the same prefixes, so
the ids are those of ``tokenizer.encode(rendered_text)`` wherever the text spells no marker
(and no token of that encoding straddles a cut where trainability changes: there the prompt
ends at inference, see :mod:`pawlette.tokenization.encoder`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from tokenizers import AddedToken, Tokenizer, normalizers, pre_tokenizers

import pawlette
from pawlette.engine.lexer import marker_pattern
from pawlette.errors import TokenizerMismatch
from pawlette.format import Format
from pawlette.tokenization import ConversationEncoder, TokenizerBackend
from pawlette.types import Rendering

from ..support import sampling
from ..support.small_spm import STYLES, spm_tokenizer
from .support import (
    FORMATS,
    assistant_indices,
    call_ids,
    cut_positions,
    golden_cases,
    golden_input,
    strategy,
)


def text_spells_an_added_token(fmt: Format, tokenizer: Tokenizer, rendering: Rendering) -> bool:
    added = [token.content for token in tokenizer.get_added_tokens_decoder().values()]
    pattern = marker_pattern(fmt.special_markers)
    for segment in rendering.segments:
        text = pattern.sub("\0", segment.text) if segment.special else segment.text
        if any(token in text for token in added):
            return True
    return False


def own_ids(tokenizer: Tokenizer, text: str, cuts: list[int]) -> list[int] | None:
    """The tokenizer's own ids for ``text`` with the prompt ending at each cut: the text up
    to the first cut encoded alone (a completion prompt), then for each cut the tokens the
    tokenizer gives the text after it (from an encoding of the text up to the next cut, where
    a regex's lookahead cannot see past the next prompt's end).  None when the encoding up to
    the next cut does not begin with the encoding of the text before the cut (a cut inside
    one of the tokenizer's tokens: there no ids can be the tokenizer's own).

    Found by token ids, not the encoding's offsets: after a character the tokenizer has no
    token for (the small models here drop it), tokenizers 0.23 places the next tokens'
    offsets too early (``<result>中</result>``: ``<``, ``/`` and ``re`` at 8, ``s`` at 10
    for 11), which took a token after the cut for one before it."""
    ends = [*cuts, len(text)]
    ids = tokenizer.encode(text[: ends[0]], add_special_tokens=False).ids
    for start, end in itertools.pairwise(ends):
        before = tokenizer.encode(text[:start], add_special_tokens=False).ids
        through = tokenizer.encode(text[:end], add_special_tokens=False).ids
        if through[: len(before)] != before:
            return None
        ids += through[len(before) :]
    return ids


def expected_ids(fmt: Format, tokenizer: Tokenizer, rendering: Rendering) -> list[int] | None:
    """The tokenizer's own ids of the rendering, as the format's reference encodes it: whole
    between markers, or piece by piece for a format that declares ``encode_cuts``."""
    if fmt.encode_cuts is not None:
        return call_ids(fmt, tokenizer, rendering)
    return own_ids(tokenizer, rendering.text, cut_positions(fmt, rendering))


def check(fmt: Format, tokenizer: Tokenizer, encoder: ConversationEncoder, request: Any) -> int:
    """Compare with the tokenizer's own ids; the number of comparisons made."""
    compared = 0
    rendering = fmt.render(request)
    if not text_spells_an_added_token(fmt, tokenizer, rendering):
        expected = expected_ids(fmt, tokenizer, rendering)
        if expected is not None:
            assert encoder.encode(request).input_ids == expected, rendering.text
            compared += 1
    messages, tools = request["messages"], request.get("tools")
    for index in assistant_indices(request):
        prompt = fmt.render(messages[:index], tools, add_generation_prompt=True)
        if text_spells_an_added_token(fmt, tokenizer, prompt):
            continue
        # An earlier turn may hold a cut too (omni's tool results inside the assistant turn).
        expected = expected_ids(fmt, tokenizer, prompt)
        if expected is None:
            continue
        ours = encoder.encode(messages[:index], tools, add_generation_prompt=True).input_ids
        assert ours == expected, prompt.text
        compared += 1
    return compared


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", FORMATS)
def test_golden_ids_are_the_tokenizers_own(name: str, style: str) -> None:
    fmt = pawlette.get_format(name)
    tokenizer = spm_tokenizer(style, fmt.special_markers)
    encoder = ConversationEncoder(fmt, tokenizer)
    compared = sum(
        check(fmt, tokenizer, encoder, golden_input(case)) for case in golden_cases(name)
    )
    assert compared >= len(golden_cases(name))


@pytest.mark.deep
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", FORMATS)
def test_generated_conversations_get_the_tokenizers_own_ids(name: str, style: str) -> None:
    fmt = pawlette.get_format(name)
    tokenizer = spm_tokenizer(style, fmt.special_markers)
    encoder = ConversationEncoder(fmt, tokenizer)

    @settings(
        max_examples=sampling.examples(name, FORMATS, 25),
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(strategy(name).conversations())
    def run(request: dict[str, Any]) -> None:
        check(fmt, tokenizer, encoder, request)

    run()


def test_metaspace_first_prefixes_only_the_start_of_the_text() -> None:
    fmt = pawlette.get_format("pcml")
    tokenizer = spm_tokenizer("metaspace-first", fmt.special_markers)
    backend = TokenizerBackend(tokenizer)
    assert backend.contextual
    marker = fmt.special_markers[0]
    text = f"hello{marker}hello"
    own = tokenizer.encode(text, add_special_tokens=False).tokens
    assert own[0].startswith("▁") and not own[-1].startswith("▁")  # the fact modelled


def test_a_tokenizer_pawlette_cannot_reproduce_is_refused() -> None:
    """A marker that eats the whitespace after it (``rstrip``): the tokenizer's own ids drop
    the space, pawlette's would not; so the encoder refuses the tokenizer, naming the marker."""
    fmt = pawlette.get_format("pcml")
    base = spm_tokenizer("metaspace-first", [])
    tokenizer = Tokenizer.from_str(base.to_str())
    tokenizer.add_special_tokens(
        [AddedToken(marker, special=True, normalized=False) for marker in fmt.special_markers[1:]]
    )
    tokenizer.add_special_tokens(
        [AddedToken(fmt.special_markers[0], special=True, normalized=False, rstrip=True)]
    )
    with pytest.raises(
        TokenizerMismatch, match=re.escape(f"text around {fmt.special_markers[0]!r}")
    ):
        ConversationEncoder(fmt, tokenizer)


def test_a_marker_matched_after_normalisation_is_refused() -> None:
    """An added token with ``normalized=True`` is matched in the normalised text, after the
    normaliser's ``Prepend("▁")`` ran over the whole input, not over each piece: pawlette,
    which encodes the text around a marker piece by piece, cannot give those ids, and says so
    (the backend builds, having no plain special token to probe; the marker check refuses)."""
    base = spm_tokenizer("legacy", [])
    tokenizer = Tokenizer.from_str(base.to_str())
    tokenizer.add_special_tokens([AddedToken("<x>", special=True, normalized=True)])
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="never", split=False)
    backend = TokenizerBackend(tokenizer)  # builds: no plain special token to probe
    with pytest.raises(TokenizerMismatch, match="expected pawlette to reproduce"):
        backend.marker_ids(["<x>"], "test")
