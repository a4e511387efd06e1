"""The marker lexer: escaping round trips, split invariance, holdback."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pawlette.engine import lexer as lexer_module
from pawlette.engine.lexer import Lexer, Token, _tables, escape_text, marker_pattern

MARKERS = ["[SYS]", "[/SYS]", "<call>", "\n<call>", "</think>", "</think>\n", "<end>", "<|x|>"]
PATTERN = marker_pattern(MARKERS)
pieces = st.one_of(st.text(max_size=6), st.sampled_from([*MARKERS, "\\", "\\\\", "\n", "<", "["]))
texts = st.lists(pieces, max_size=10).map("".join)


def run(text: str, sizes: list[int], *, escape: bool = True) -> list[Token]:
    lexer = Lexer(MARKERS, escape=escape)
    tokens: list[Token] = []
    position = 0
    index = 0
    while position < len(text):
        size = sizes[index % len(sizes)] if sizes else len(text)
        tokens += lexer.feed(text[position : position + size])
        position += size
        index += 1
    return merge(tokens + lexer.finish())


def merge(tokens: list[Token]) -> list[Token]:
    merged: list[Token] = []
    for token in tokens:
        if token[0] is None and merged and merged[-1][0] is None:
            merged[-1] = (None, merged[-1][1] + token[1], merged[-1][2])
        else:
            merged.append(token)
    return merged


# A marker that ends another marker ("<call>" ends "\n<call>") cannot follow caller text that
# ends with the rest of it: declarations write the longer spelling after text (see pcml).
TRAILING = [m for m in MARKERS if not any(o != m and o.endswith(m) for o in MARKERS)]


@given(texts, st.sampled_from(TRAILING))
def test_escaped_text_reads_back_as_one_text_run(text: str, marker: str) -> None:
    escaped = escape_text(text, PATTERN, before_marker=True)
    tokens = run(escaped + marker, [])
    expected: list[Token] = [(None, text, 0)] if text else []
    assert tokens == [*expected, (marker, marker, len(escaped))]


@given(texts, st.lists(st.integers(1, 7), min_size=1, max_size=5))
def test_split_invariance(text: str, sizes: list[int]) -> None:
    assert run(text, sizes) == run(text, [])
    assert run(text, sizes, escape=False) == run(text, [], escape=False)


@given(texts)
def test_every_character_is_accounted_for_without_escaping(text: str) -> None:
    assert "".join(token[1] for token in run(text, [1], escape=False)) == text


def test_a_marker_split_across_feeds_is_held_back() -> None:
    lexer = Lexer(MARKERS, escape=False)
    assert lexer.feed("abc<ca") == [(None, "abc", 0)]
    assert lexer.feed("ll>z") == [("<call>", "<call>", 3), (None, "z", 9)]


def test_a_marker_that_may_grow_waits_for_the_next_character() -> None:
    lexer = Lexer(MARKERS, escape=False)
    assert lexer.feed("x</think>") == [(None, "x", 0)]
    assert lexer.feed("\ny") == [("</think>\n", "</think>\n", 1), (None, "y", 10)]


def test_escaped_marker_is_the_shortest_at_its_place() -> None:
    # "\</think>" then a real "\n<call>": the newline belongs to the real marker.
    assert run("\\</think>\n<call>", [1]) == [
        (None, "</think>", 0),
        ("\n<call>", "\n<call>", 9),
    ]


def test_feed_marker_flushes_held_text() -> None:
    lexer = Lexer(MARKERS, escape=False)
    assert lexer.feed("ab<") == [(None, "ab", 0)]
    assert lexer.feed_marker("<end>") == [(None, "<", 2), ("<end>", "<end>", 3)]


def test_feed_marker_halves_the_backslash_run_the_writer_doubled() -> None:
    escaped = escape_text("a\\", PATTERN, before_marker=True)  # content "a\" before <end>
    assert escaped == "a\\\\"
    lexer = Lexer(MARKERS, escape=True)
    tokens = lexer.feed(escaped) + lexer.feed_marker("<end>")
    assert merge(tokens) == [(None, "a\\", 0), ("<end>", "<end>", 3)]


# Long texts: a feed longer than a few dozen characters is searched one marker group (first
# character) at a time, a short one with the whole pattern; both must find the same markers.
long_texts = st.lists(pieces, min_size=20, max_size=80).map("".join)


@given(long_texts, st.lists(st.integers(1, 40), min_size=1, max_size=5))
def test_long_feeds_find_what_short_feeds_find(text: str, sizes: list[int]) -> None:
    for escape in (True, False):
        assert run(text, [], escape=escape) == run(text, [1], escape=escape)
        assert run(text, sizes, escape=escape) == run(text, [1], escape=escape)


@given(st.lists(st.text(alphabet="ab<\n", min_size=1, max_size=5), min_size=1, max_size=6))
def test_the_holdback_regex_matches_exactly_the_proper_prefixes(markers: list[str]) -> None:
    tables = _tables(frozenset(markers))
    prefixes = {marker[:length] for marker in markers for length in range(1, len(marker))}
    assert tables.prefixes == prefixes
    candidates = {marker[:length] for marker in markers for length in range(len(marker) + 1)}
    candidates |= {candidate + extra for candidate in candidates for extra in "ab<\n"}
    for candidate in candidates:
        found = tables.holdback is not None and tables.holdback.fullmatch(candidate) is not None
        assert found == (candidate in prefixes), candidate


def test_tables_are_built_once_per_marker_set() -> None:
    first = Lexer(MARKERS, escape=True)
    second = Lexer(list(reversed(MARKERS)), escape=False)
    assert first._tables is second._tables


LONG = "<|system|>" + "A fixed system text the format writes whole. " * 40 + "<|end|>"


@given(st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=8))
def test_a_marker_longer_than_the_trie_regex_is_still_held_back(sizes: list[int]) -> None:
    # Markers far longer than the holdback regex nests (an inferred format's fixed system
    # turn) are held back by the lexer's own search past that depth.
    markers = [LONG, "<|system|>", "<|end|>"]
    text = "before " + LONG + " middle <|end|> after <|system|>x"
    tokens: list[Token] = []
    lexer = Lexer(markers, escape=False)
    position = 0
    for size in sizes * (len(text) // sum(sizes) + 1):
        tokens += lexer.feed(text[position : position + size])
        position += size
    tokens += lexer.finish()
    found = [marker for marker, _, _ in tokens if marker is not None]
    assert found == [LONG, "<|end|>", "<|system|>"]
    assert "".join(piece for _, piece, _ in tokens) == text


LONG_MARKERS = [*MARKERS, LONG, "<|system|>", "<|end|>", " </tools>"]
whole_pieces = st.one_of(
    st.text(alphabet="ab <\n\\[|>", max_size=6),
    st.sampled_from(LONG_MARKERS),
    st.sampled_from(LONG_MARKERS).flatmap(
        lambda marker: st.integers(0, len(marker)).map(lambda cut: marker[:cut])
    ),
)


@given(st.lists(whole_pieces, max_size=10).map("".join), st.booleans())
def test_read_all_gives_the_runs_of_a_feed_and_its_finish(text: str, escape: bool) -> None:
    # A whole text read at once (Format.parse) gives the very runs a feed of it and the
    # finish give, held-back ends included, as separate runs where the feed held them.
    fed = Lexer(LONG_MARKERS, escape=escape)
    expected = fed.feed(text) + fed.finish()
    whole = Lexer(LONG_MARKERS, escape=escape)
    assert whole.read_all(text) == expected
    assert whole.offset == fed.offset
    tables = _tables(frozenset(LONG_MARKERS))
    assert tables.ends_unfinished(text) == (tables.held_start(text, 0) is not None)


# Two long markers sharing all but their ends, and markers inside them: a stream held
# whole while it is a prefix of one (rather than scanned again on every feed) must give, feed
# by feed, what a lexer that scans every feed gives, when the stream leaves that marker for
# the other, for an inner one or for text.
TWIN = LONG[:-7] + "and more.<|end|>"
TWIN_MARKERS = [*LONG_MARKERS, TWIN, "fixed system"]
twin_pieces = st.one_of(
    st.text(alphabet="ab <\n\\[|>", max_size=6),
    st.sampled_from(TWIN_MARKERS),
    st.sampled_from([LONG, TWIN]).flatmap(
        lambda marker: st.integers(0, len(marker)).map(lambda cut: marker[:cut])
    ),
)


def feeds(text: str, sizes: list[int], escape: bool) -> list[list[Token]]:
    lexer = Lexer(TWIN_MARKERS, escape=escape)
    out: list[list[Token]] = []
    position = 0
    index = 0
    while position < len(text):
        size = sizes[index % len(sizes)]
        out.append(lexer.feed(text[position : position + size]))
        position += size
        index += 1
    return [*out, lexer.finish()]


# (Fewer, shorter feeds than elsewhere: the lexer it is compared with scans the held marker
# again on every feed, quadratic in the marker's length.)
@settings(max_examples=150)
@given(
    st.lists(twin_pieces, max_size=4).map("".join),
    st.lists(st.integers(1, 30), min_size=1, max_size=4),
    st.booleans(),
)
def test_a_stream_through_long_markers_reads_as_one_scanned_every_feed(
    text: str, sizes: list[int], escape: bool
) -> None:
    held = feeds(text, sizes, escape)
    remembered = lexer_module._LONG_HOLD
    lexer_module._LONG_HOLD = 10**9  # never held whole: every feed scanned
    try:
        scanned = feeds(text, sizes, escape)
    finally:
        lexer_module._LONG_HOLD = remembered
    assert held == scanned
    whole = feeds(text, [max(len(text), 1)], escape)
    assert merge([token for feed in held for token in feed]) == merge(
        [token for feed in whole for token in feed]
    )
