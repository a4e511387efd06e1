"""Convert a tiktoken BPE rank file into a Hugging Face ``tokenizers.Tokenizer``.

A tiktoken file (Meta's Llama 3 ``tokenizer.model``, OpenAI's ``cl100k_base.tiktoken``) holds one
line per token::

    IQ== 0
    Ig== 1
    ...
    IHRoZQ== 1820          <- base64 of the bytes " the", then its rank

The rank is both the token id and its merge priority: to encode a piece of text, tiktoken starts
from single bytes and keeps joining the adjacent pair whose *joined bytes* have the lowest rank
(the leftmost pair on a tie).  A Hugging Face BPE joins the adjacent pair that comes first in an
explicit merge list (also the leftmost on a tie).  So the merge list here holds, for each token,
the last join tiktoken makes when it encodes that token's bytes alone, in the order of the
tokens' ranks.  That is exact: while a token is being built inside longer text, no join crosses
its edges (or it would not be built), so the joins inside it are those of encoding it alone, in
the same order; every token is only ever made from that one pair, and both sides pick the same
pair at every step.  Two common recipes are not exact.  Cutting a token with joins ranked below
it only (``bpe(..., max_rank=rank)``, from tiktoken issue 60 and older converters) finds no cut
for tokens whose path passes through a higher-ranked token (90 in Llama 3; ``'.:.:.:.:.:.:'``
then comes out as three tokens instead of two).  Listing every cut into two tokens (transformers'
``TikTokenConverter``) gives one token several places in the list, so a tie between two
different cuts of one token is settled by list order, not by position as tiktoken settles it;
one join per token leaves no such tie.  Tokens that encoding alone never builds (588 in
Llama 3) get no merge; ``ignore_merges`` still yields them when a whole piece spells one, which
is tiktoken's first step too.

Bytes become text through GPT-2's byte-to-character table, as every byte-level BPE in
``tokenizers`` expects.  ``tokenizers`` is an optional dependency (the ``tokenize`` extra) and is
imported only inside :func:`tokenizer_from_tiktoken`.

Example (needs a rank file on disk)::

    ranks_path = "tokenizer.model"  # from Meta's llama-models wheel
    tokenizer = tokenizer_from_tiktoken(
        ranks_path, pattern=LLAMA3_PATTERN, special_tokens=llama3_special_tokens(128000)
    )
    tokenizer.encode("This is a test sentence.").ids  # [2028, 374, 264, 1296, 11914, 13]
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "LLAMA3_PATTERN",
    "LLAMA3_SPECIAL_TOKEN_COUNT",
    "byte_level_text",
    "llama3_special_tokens",
    "read_tiktoken_ranks",
    "tokenizer_from_tiktoken",
]

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
"""The pre-tokenizer regex of Llama 3 (``pat_str`` in Meta's ``llama3/tokenizer.py``)."""

LLAMA3_SPECIAL_TOKEN_COUNT = 256
"""Llama 3 reserves this many ids for special tokens, right after the base vocabulary."""

# The named special tokens at the start of Llama 3's special range, in id order, as Meta's
# llama-models package (llama3/tokenizer.py, Llama 3.2 era) names them.  Llama 3.0 named
# ids +4, +5, +8, +10 and +11 reserved_special_token_2..5 and had no eom/python_tag; the ids of
# begin/end of text, the header markers and eot_id are the same in every Llama 3 release.
_LLAMA3_NAMED_SPECIAL_TOKENS = (
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>",
    "<|step_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
    "<|image|>",
)


def llama3_special_tokens(num_base_tokens: int) -> dict[str, int]:
    """Llama 3's 256 special tokens and their ids, which start at ``num_base_tokens`` (128000).

    The layout is the one in Meta's llama-models package (Llama 3.1/3.2 names):
    ``<|begin_of_text|>`` 128000, ``<|end_of_text|>`` 128001, ``<|reserved_special_token_0|>``
    128002, ``<|reserved_special_token_1|>`` 128003, ``<|finetune_right_pad_id|>`` 128004,
    ``<|step_id|>`` 128005, ``<|start_header_id|>`` 128006, ``<|end_header_id|>`` 128007,
    ``<|eom_id|>`` 128008, ``<|eot_id|>`` 128009, ``<|python_tag|>`` 128010, ``<|image|>``
    128011, then ``<|reserved_special_token_2|>`` .. ``<|reserved_special_token_245|>``.

    >>> tokens = llama3_special_tokens(128000)
    >>> tokens["<|eot_id|>"], tokens["<|reserved_special_token_245|>"], len(tokens)
    (128009, 128255, 256)
    """
    reserved_count = LLAMA3_SPECIAL_TOKEN_COUNT - len(_LLAMA3_NAMED_SPECIAL_TOKENS)
    # Meta's numbering of the tail continues after reserved_special_token_0 and _1 above.
    names = _LLAMA3_NAMED_SPECIAL_TOKENS + tuple(
        f"<|reserved_special_token_{2 + index}|>" for index in range(reserved_count)
    )
    return {name: num_base_tokens + offset for offset, name in enumerate(names)}


@cache
def _byte_to_character() -> tuple[str, ...]:
    # GPT-2's table: printable Latin-1 bytes stand for themselves; the others (controls, space,
    # soft hyphen...) move to code points from U+0100 up, so every byte is one visible character.
    kept = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table: dict[int, str] = {byte: chr(byte) for byte in kept}
    next_code_point = 256
    for byte in range(256):
        if byte not in table:
            table[byte] = chr(next_code_point)
            next_code_point += 1
    return tuple(table[byte] for byte in range(256))


def byte_level_text(token: bytes) -> str:
    """The text that stands for ``token`` in a byte-level BPE vocabulary.

    >>> byte_level_text(b" the\\n")
    'ĠtheĊ'
    """
    table = _byte_to_character()
    return "".join(table[byte] for byte in token)


def read_tiktoken_ranks(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Read a tiktoken rank file: ``{token bytes: rank}``.

    Raises ``ValueError`` naming the line for a malformed line, a repeated token or a repeated
    rank.
    """
    ranks: dict[bytes, int] = {}
    token_of_rank: dict[int, bytes] = {}
    with open(path, "rb") as file:
        for line_number, line in enumerate(file, start=1):
            fields = line.split()
            if not fields:
                continue
            where = f"{os.fspath(path)}:{line_number}"
            if len(fields) != 2:
                raise ValueError(
                    f"{where}: {len(fields)} fields in {line[:80]!r}; "
                    "expected '<base64 token> <rank>'"
                )
            encoded, rank_text = fields
            try:
                token = base64.b64decode(encoded, validate=True)
                rank = int(rank_text)
            except (binascii.Error, ValueError) as error:
                raise ValueError(
                    f"{where}: {line[:80]!r} does not parse ({error}); "
                    "expected '<base64 token> <rank>'"
                ) from error
            if not token or rank < 0:
                raise ValueError(
                    f"{where}: token {token!r} with rank {rank}; "
                    "expected a non-empty token and a rank >= 0"
                )
            if token in ranks:
                raise ValueError(
                    f"{where}: token {token!r} again (first with rank {ranks[token]}); "
                    "expected each token once"
                )
            if rank in token_of_rank:
                raise ValueError(
                    f"{where}: rank {rank} again (first for {token_of_rank[rank]!r}); "
                    "expected each rank once"
                )
            ranks[token] = rank
            token_of_rank[rank] = token
    return ranks


def _last_join(token: bytes, ranks: Mapping[bytes, int]) -> tuple[bytes, bytes] | None:
    """The pair tiktoken joins last when it encodes ``token`` alone, or None if it never joins
    its bytes into one token."""
    parts = [token[index : index + 1] for index in range(len(token))]
    last: tuple[bytes, bytes] | None = None
    while len(parts) > 1:
        best_rank = -1
        best_index = -1
        for index in range(len(parts) - 1):
            rank = ranks.get(parts[index] + parts[index + 1])
            # Strictly lower, so the leftmost pair wins a tie, as in tiktoken.
            if rank is not None and (best_index < 0 or rank < best_rank):
                best_rank = rank
                best_index = index
        if best_index < 0:
            return None
        last = (parts[best_index], parts[best_index + 1])
        parts[best_index : best_index + 2] = [last[0] + last[1]]
    return last


def _merges_from_ranks(ranks: Mapping[bytes, int]) -> list[tuple[str, str]]:
    """One merge per token that BPE can build, ordered by the token's rank."""
    joins: list[tuple[int, bytes, bytes]] = []
    for token, rank in ranks.items():
        if len(token) < 2:
            continue
        join = _last_join(token, ranks)
        if join is not None:
            joins.append((rank, *join))
    joins.sort()
    return [(byte_level_text(left), byte_level_text(right)) for _, left, right in joins]


def tokenizer_from_tiktoken(
    path: str | os.PathLike[str],
    *,
    pattern: str,
    special_tokens: Mapping[str, int],
) -> Tokenizer:
    """Build a byte-level BPE ``tokenizers.Tokenizer`` that encodes exactly as tiktoken does.

    ``path`` is a tiktoken rank file, ``pattern`` tiktoken's ``pat_str`` (for Llama 3,
    :data:`LLAMA3_PATTERN`), ``special_tokens`` the special token strings and their ids (for
    Llama 3, ``llama3_special_tokens(128000)``).  The special tokens become special added tokens
    with exactly those ids.

    Raises ``ValueError`` when the file is malformed, lacks one of the 256 single bytes, or a
    special token's id or text clashes with the vocabulary.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    ranks = read_tiktoken_ranks(path)
    where = os.fspath(path)
    missing_bytes = [byte for byte in range(256) if bytes([byte]) not in ranks]
    if missing_bytes:
        raise ValueError(
            f"{where}: no token for {len(missing_bytes)} single bytes"
            f" (the first is {missing_bytes[0]:#04x}); expected all 256,"
            " which byte-level BPE needs to encode any text"
        )
    vocabulary = {byte_level_text(token): rank for token, rank in ranks.items()}

    ordered_special = sorted(special_tokens.items(), key=lambda item: item[1])
    rank_ids = set(ranks.values())
    seen_ids: dict[int, str] = {}
    for text, token_id in ordered_special:
        if token_id in rank_ids or token_id in seen_ids:
            holder = (
                repr(seen_ids[token_id]) if token_id in seen_ids else "a token of the rank file"
            )
            raise ValueError(
                f"special_tokens[{text!r}]: id {token_id} is already {holder}; "
                "expected an id of its own"
            )
        if text in vocabulary:
            raise ValueError(
                f"special_tokens[{text!r}]: the rank file's vocabulary already has this text"
                f" (id {vocabulary[text]}); expected a string no ordinary token spells"
            )
        seen_ids[token_id] = text

    # ``tokenizers`` gives a new added token the next id after the model's vocabulary and cannot
    # be told otherwise.  When the ids run on from a dense rank range (Llama 3: 128000..128255)
    # that is exactly right.  Otherwise (cl100k_base leaves a gap before <|endoftext|>) the special
    # tokens also go into the BPE vocabulary, where an added token finds and keeps its id.  No
    # merge leads to them; only a pre-token spelling one whole reaches it (ignore_merges), and
    # encode_plain reports that rather than return a control id for text.
    first_free_id = len(ranks)
    dense = sorted(rank_ids) == list(range(first_free_id)) and [
        token_id for _, token_id in ordered_special
    ] == list(range(first_free_id, first_free_id + len(ordered_special)))
    if not dense:
        vocabulary.update(ordered_special)

    model = models.BPE(
        vocab=vocabulary,
        merges=_merges_from_ranks(ranks),
        ignore_merges=True,
        fuse_unk=False,
    )
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
            # The regex above already split the text the tiktoken way; ByteLevel only maps bytes.
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(
        [
            AddedToken(text, special=True, normalized=False, lstrip=False, rstrip=False)
            for text, _ in ordered_special
        ]
    )
    for text, token_id in ordered_special:
        given = tokenizer.token_to_id(text)
        if given != token_id:
            raise ValueError(
                f"special_tokens[{text!r}]: tokenizers gave it id {given}; expected {token_id}"
            )
    return tokenizer
