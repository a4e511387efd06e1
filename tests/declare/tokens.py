"""Token ids for the cross-artifact checks: the small offline BPE with a format's markers as
special tokens, llguidance over it, and random walks through a grammar."""

from __future__ import annotations

import json
import random
import re
from functools import cache
from typing import Any

import llguidance
from tokenizers import Tokenizer

import pawlette
from pawlette.types import Rendering

from ..helpers import stop_texts, without_stop
from ..support.gguf_model import fences
from ..support.small_bpe import small_tokenizer

EOS = "<|eos|>"  # llguidance needs an end-of-sequence token; it is no marker


@cache
def tokenizer(name: str) -> Tokenizer:
    """A private copy (``encode_special_tokens`` is switched on it)."""
    shared = small_tokenizer((*pawlette.get_format(name).special_markers, EOS))
    copy = Tokenizer.from_str(shared.to_str())
    copy.encode_special_tokens = True  # text is text: a marker spelled in it stays text
    return copy


@cache
def ll_tokenizer(name: str) -> Any:
    tok = tokenizer(name)
    return llguidance.LLTokenizer(tok.to_str(), eos_token=tok.token_to_id(EOS))


def marker_ids(name: str) -> dict[str, int] | None:
    """The format's markers by id, for a grammar that must spell them so (a marker not shaped
    ``<...>``, Mistral's ``[INST]``, has no other special-token reference); None: the format's
    markers are all spelled by their text."""
    markers = pawlette.get_format(name).special_markers
    if all(marker.startswith("<") and marker.endswith(">") for marker in markers):
        return None
    tok = tokenizer(name)
    return {marker: tok.token_to_id(marker) for marker in markers}


def special_ids(name: str, text: str) -> list[int]:
    """A special segment's ids: its markers by id, layout it carries (PCML's ``</think>\\n``,
    one segment) as text."""
    tok = tokenizer(name)
    markers = pawlette.get_format(name).special_markers
    pattern = re.compile("|".join(re.escape(marker) for marker in sorted(markers, key=len)[::-1]))
    ids: list[int] = []
    position = 0
    for match in pattern.finditer(text):
        ids += tok.encode(text[position : match.start()], add_special_tokens=False).ids
        ids.append(tok.token_to_id(match.group()))
        position = match.end()
    assert position, f"the special segment {text!r} holds no marker"
    return ids + tok.encode(text[position:], add_special_tokens=False).ids


def segment_ids(
    name: str, rendering: Rendering, *, trainable_from: int | None = None, start: int = 0
) -> list[int]:
    """Ids of the rendering's segments from character ``start`` on (markers by id, text
    with special tokens off); ``trainable_from``: only trainable segments of messages from
    that index on.  A text segment ``start`` cuts gives its part from ``start`` on: a
    generation prompt may stop inside the assistant's opener, whose rest the model writes
    (Reka Edge prompts ``assistant:``, its turns open ``assistant: ``)."""
    tok = tokenizer(name)
    ids: list[int] = []
    position = 0
    for segment in rendering.segments:
        begin, position = position, position + len(segment.text)
        if position <= start or not segment.text:
            continue
        if trainable_from is not None and not (
            segment.trainable and segment.message_index >= trainable_from
        ):
            continue
        if segment.special:
            assert begin >= start, f"the start {start} cuts the marker {segment.text!r}"
            ids += special_ids(name, segment.text)
        else:
            text = segment.text[max(start - begin, 0) :]
            ids += tok.encode(text, add_special_tokens=False).ids
    return ids


def feed_pieces(parser: Any, tok: Tokenizer, pieces: list[tuple[bool, str]]) -> list[Any]:
    """Feed (is a marker, text) pieces to an ``IdParser`` as ids: markers by id, text one
    token per character (the worst cut); the events, finished."""
    events: list[Any] = []
    for is_marker, text in pieces:
        if is_marker:
            events += parser.feed_ids([tok.token_to_id(text)])
        else:
            for character in text:
                events += parser.feed_ids(tok.encode(character, add_special_tokens=False).ids)
    return events + parser.finish()


@cache
def compiled(name: str, lark: str) -> str:
    grammar: str = llguidance.LLMatcher.grammar_from_lark(lark)
    error = llguidance.LLMatcher.validate_grammar(grammar, ll_tokenizer(name))
    assert not error, error
    return grammar


def accepts(name: str, lark: str, ids: list[int]) -> bool:
    """Whether the grammar accepts the turn ``ids`` whole.  The turn's own stop marker (or stop
    of text) at its end is left out: a grammar ends where the engine's stop takes over (an
    engine accepts no end-of-generation token through a grammar), so it must be complete
    right there; a stop marker anywhere else is a token the grammar must refuse."""
    stops = {
        tokenizer(name).token_to_id(marker) for marker in pawlette.get_format(name).stop_markers
    }
    texts = stop_texts(pawlette.get_format(name))
    tails = [tokenizer(name).encode(text, add_special_tokens=False).ids for text in texts]
    ids = without_stop(ids, stops, tails)
    matcher = fresh_matcher(name, lark).deep_copy()
    return bool(matcher.consume_tokens(ids) and matcher.is_accepting())


@cache
def fresh_matcher(name: str, lark: str) -> Any:
    """A matcher at the grammar's start, built once and copied for each use (building one
    costs about 0.1 s for a big grammar, a copy microseconds)."""
    return llguidance.LLMatcher(ll_tokenizer(name), compiled(name, lark), log_level=0)


def _allowed(matcher: Any, vocabulary: int) -> list[int]:
    mask = int.from_bytes(bytes(matcher.compute_bitmask()), "little")
    return [token for token in range(vocabulary) if mask >> token & 1]


def _literals(lark: str) -> list[str]:
    """The grammar's string literals (those JSON can read: the rest are no help here)."""
    found = []
    for text in re.findall(r'"((?:[^"\\]|\\.)+)"', lark):
        try:
            found.append(json.loads(f'"{text}"'))
        except ValueError:
            continue
    return found


def random_walk(name: str, lark: str, seed: int, steps: int = 400) -> list[int] | None:
    """Ids a random model constrained by the grammar writes (None: not done in ``steps``).

    Tokens are drawn uniformly among those the grammar allows, except that, more and more
    often as the walk goes on, one that can close something (a quote, a brace, a parenthesis, a
    backtick, a newline, a ``<``, a special token or the end) is preferred, or the tokens of
    one of the grammar's literal strings in a row (a close written as text,
    ``\n</parameter>\n`` or ``</parameter>\n``; after ``<``, a closing tag), so walks end.
    """
    tok = tokenizer(name)
    vocabulary = tok.get_vocab_size()
    closers = {
        token
        for text, token in tok.get_vocab().items()
        if text in ('"', "'", ")", "`", "}", "]", "Ċ", "0", "1", "<")
        or token >= vocabulary - len(pawlette.get_format(name).special_markers) - 1
    }
    # The first token of a close written as text (Seed-OSS's ``</parameter>\n`` begins with
    # ``<``; the others with a newline, a closer already).
    for fence in fences(pawlette.get_format(name)):
        closers.update(tok.encode(fence, add_special_tokens=False).ids[:1])
    literals = [text for text in _literals(lark) if len(text) > 1]
    generator = random.Random(seed)
    planner = random.Random(seed + 1)  # its own draws: the walk's own sequence is kept
    matcher = llguidance.LLMatcher(ll_tokenizer(name), compiled(name, lark), log_level=0)
    eos = tok.token_to_id(EOS)
    ids: list[int] = []
    plan: list[int] = []
    for step in range(steps):
        allowed = _allowed(matcher, vocabulary)
        if not allowed:
            return None
        if plan and plan[0] in allowed:  # the rest of a literal begun by the last token
            token = plan.pop(0)
            assert matcher.consume_token(token), matcher.get_error()
            ids.append(token)
            if matcher.is_stopped():
                return ids
            continue
        plan = []
        if eos in allowed and (len(allowed) == 1 or generator.random() < step / 40):
            return ids
        preferred = [token for token in allowed if token in closers and token != eos]
        closing = bool(preferred) and generator.random() < min(0.9, step / 30)
        pool = preferred if closing else allowed
        pool = [token for token in pool if token != eos] or pool
        token = generator.choice(pool)
        if closing:
            written = tok.decode([token])
            begun = [text for text in literals if written and text.startswith(written)]
            # After "<", a closing tag ends what is open (DeepSeek V3.2's text tags).
            begun = [text for text in begun if text.startswith("</")] or begun
            if begun and planner.random() < 0.5:
                rest = planner.choice(begun)[len(written) :]
                plan = tok.encode(rest, add_special_tokens=False).ids
        assert matcher.consume_token(token), matcher.get_error()
        ids.append(token)
        if matcher.is_stopped():
            return ids
    return None
