"""Tokenizer backends: one ``tokenizers.Tokenizer`` made ready for pawlette.

A :class:`TokenizerBackend` wraps the tokenizer it is given and keeps, once:

- the ids of its added tokens (the *control ids*) and a map from their text to their id, so a
  format's markers are looked up, never encoded;
- a *plain copy* of the tokenizer: the same model, normaliser and pre-tokenizer, and no added
  token, post-processor, truncation or padding.  Encoding text with it runs the pipeline of
  the original, so for text that spells no added token it gives the same ids as
  ``tokenizer.encode(text, add_special_tokens=False)``; for text that does, the spelling is
  encoded as ordinary text, because the copy has no added token to match.  That is what
  :func:`pawlette.tokenization.encode_plain` does piece by piece in Python; the copy does it in
  Rust, in batches, on every core.  Every encoded run is still checked against the control
  ids: a vocabulary that lists a special token as an ordinary one could reach it from text;
- *where a run stands*.  The tokenizer splits its input at added tokens and normalises and
  pre-tokenizes each piece on its own, and some pipelines add a prefix there: a Metaspace
  pre-tokenizer puts ``▁`` before every piece (``prepend_scheme="always"``) or only before
  the piece at the very start of the input (``"first"``, Mistral and Llama 2 tokenizers: not
  after a special token); a legacy Llama 2 normaliser (``Prepend("▁")``) and ByteLevel with
  ``add_prefix_space`` prefix every piece.  A run is therefore encoded for its context
  (:data:`START` of the text, :data:`AFTER_MARKER`, or a :data:`CONTINUATION` of the text
  before it, where trainability cut it and no prefix belongs) by a copy whose pipeline adds
  exactly the prefix the tokenizer would add there.  When the backend is built, and for each
  marker of a format, a probe text is encoded both ways (the tokenizer's own ``encode`` and
  pawlette's runs) and any difference raises :class:`TokenizerMismatch`, so pawlette never
  silently writes ids the tokenizer would not;
- a bounded cache of encoded text runs: scaffolding, system prompts and tool listings repeat
  across a dataset and are encoded once;
- for byte-level BPEs whose pipeline adds no prefix, *cuts* (:mod:`.cuts`): a run the cache
  does not hold is cut into lines and words where the pre-tokenizer provably splits (each
  rule checked on probes when the backend is built), every piece's ids are remembered, and
  only pieces never seen are encoded, joined into as few texts as the cuts allow.  A tool
  listing shared by many conversations, or the words of a new system prompt, cost a lookup;
- for byte-level BPEs, each token's length in bytes (to map tokens back to the segments they
  came from) and, on first use, its bytes (to decode ids incrementally without splitting a
  UTF-8 character).

Accepted tokenizers (:func:`load_backend`): a ``tokenizers.Tokenizer``; a path to a
``tokenizer.json`` or to a directory holding one; a transformers *fast* tokenizer (its
``backend_tokenizer`` is used; transformers itself is never imported).
"""

from __future__ import annotations

import collections
import itertools
import json
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PawletteError, TokenizerMismatch
from .cuts import PieceCache, TextCuts, verified_cuts

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "AFTER_MARKER",
    "CONTINUATION",
    "START",
    "TokenizerBackend",
    "load_backend",
    "load_tokenizer",
]

CACHE_ENTRIES = 32768
"""How many encoded text runs a backend remembers (first in, first out)."""
CACHE_MAX_CHARACTERS = 20000
"""Longer runs are encoded every time (they would crowd the cache)."""

START = 0
"""A run at the very start of the encoded text (offset 0)."""
AFTER_MARKER = 1
"""A run right after an added token (a marker)."""
CONTINUATION = 2
"""A run that continues the text before it (cut there because trainability changes)."""

_CONTEXT_NAMES = ("at the start of the text", "after a special token", "continuing text")
_PROBE_TEXTS = ("Hello world, two  spaces", "\n next line ", " and:\tmore text\n")


def _import_tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError as error:  # pragma: no cover - depends on the installation
        raise PawletteError(
            "tokenizer: the 'tokenizers' package is not installed; expected it. "
            "Install with `pip install -e '.[tokenize]'` in pawlette's repository"
        ) from error
    return tokenizers


def load_tokenizer(source: object) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` from a tokenizer, a path or a transformers fast tokenizer.

    ``source`` is a ``tokenizers.Tokenizer`` (returned as is), a ``tokenizer.json`` path, a
    directory holding ``tokenizer.json`` (a Hugging Face model or tokenizer directory), or a
    transformers fast tokenizer (``PreTrainedTokenizerFast`` and subclasses).
    """
    tokenizers = _import_tokenizers()
    if isinstance(source, tokenizers.Tokenizer):
        return source  # type: ignore[no-any-return]
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            path = path / "tokenizer.json"
        if not path.is_file():
            raise PawletteError(
                f"tokenizer {os.fspath(source)}: no such file; expected a tokenizer.json "
                "or a directory holding one"
            )
        try:
            loaded: Tokenizer = tokenizers.Tokenizer.from_file(str(path))
        except Exception as error:
            raise PawletteError(
                f"tokenizer {path}: cannot load ({error}); expected a tokenizers JSON file"
            ) from error
        return loaded
    backend = getattr(source, "backend_tokenizer", None)
    if isinstance(backend, tokenizers.Tokenizer):
        return backend  # type: ignore[no-any-return]  # a transformers fast tokenizer: its Rust tokenizer does the work
    if getattr(source, "is_fast", None) is False:
        raise PawletteError(
            f"tokenizer: a slow (Python) {type(source).__name__}; expected a fast tokenizer. "
            "Load it with use_fast=True, or convert it to tokenizer.json"
        )
    raise PawletteError(
        f"tokenizer: a {type(source).__name__}; expected a tokenizers.Tokenizer, a path to "
        "tokenizer.json or a transformers fast tokenizer"
    )


def _plain_copy(
    tokenizer: Tokenizer, normalizer: Any = "same", pre_tokenizer: Any = "same"
) -> Tokenizer:
    """The tokenizer's pipeline without added tokens, post-processor, truncation or padding
    (and with another normaliser or pre-tokenizer when given; None: none).

    The model is shared, not copied (a new ``Tokenizer`` over the same model object).
    """
    tokenizers = _import_tokenizers()
    plain: Tokenizer = tokenizers.Tokenizer(tokenizer.model)
    if isinstance(normalizer, str):
        normalizer = tokenizer.normalizer
    if isinstance(pre_tokenizer, str):
        pre_tokenizer = tokenizer.pre_tokenizer
    if normalizer is not None:
        plain.normalizer = normalizer
    if pre_tokenizer is not None:
        plain.pre_tokenizer = pre_tokenizer
    if tokenizer.decoder is not None:
        plain.decoder = tokenizer.decoder
    return plain


def _component_json(component: object) -> Any:
    """A normaliser's or pre-tokenizer's settings as JSON (None for none)."""
    if component is None:
        return None
    return json.loads(component.__getstate__())  # type: ignore[attr-defined]  # its JSON


def _without_prefix(node: Any, *, keep_first: bool, keep_always: bool) -> tuple[Any, bool]:
    """A component's JSON with the prefixes it adds to a piece removed: Metaspace's
    ``prepend_scheme`` (``"first"`` kept when ``keep_first``), ``Prepend`` normalisers and
    ByteLevel's ``add_prefix_space`` (kept when ``keep_always``); and whether it changed."""
    if isinstance(node, list):
        changed = False
        result = []
        for item in node:
            new, item_changed = _without_prefix(
                item, keep_first=keep_first, keep_always=keep_always
            )
            changed |= item_changed
            if new is not None:
                result.append(new)
        return result, changed
    if not isinstance(node, dict):
        return node, False
    kind = node.get("type")
    if kind == "Prepend":
        return (node, False) if keep_always else (None, True)
    if kind == "Metaspace":
        scheme = node.get("prepend_scheme", "always" if node.get("add_prefix_space") else "never")
        keep = scheme == "never" or (scheme == "first" and keep_first)
        keep = keep or (scheme == "always" and keep_always)
        if keep:
            return node, False
        return {**node, "prepend_scheme": "never", "add_prefix_space": False}, True
    if kind == "ByteLevel" and node.get("add_prefix_space"):
        return (node, False) if keep_always else ({**node, "add_prefix_space": False}, True)
    changed = False
    copied = dict(node)
    for key in ("normalizers", "pretokenizers"):
        if isinstance(node.get(key), list):
            copied[key], item_changed = _without_prefix(
                node[key], keep_first=keep_first, keep_always=keep_always
            )
            changed |= item_changed
    return copied, changed


def _context_copies(tokenizer: Tokenizer, plain: Tokenizer) -> tuple[Tokenizer, ...]:
    """The plain copy for each context (:data:`START`, :data:`AFTER_MARKER`,
    :data:`CONTINUATION`): the same object three times when no component adds a prefix."""
    normalizer = _component_json(tokenizer.normalizer)
    pre_tokenizer = _component_json(tokenizer.pre_tokenizer)
    copies = [plain]
    for keep_first, keep_always in ((False, True), (False, False)):
        new_normalizer, normalizer_changed = _without_prefix(
            normalizer, keep_first=keep_first, keep_always=keep_always
        )
        new_pre_tokenizer, pre_changed = _without_prefix(
            pre_tokenizer, keep_first=keep_first, keep_always=keep_always
        )
        if not (normalizer_changed or pre_changed):
            copies.append(plain)
            continue
        # Components are built from JSON through a tokenizer with an empty model.
        holder = _import_tokenizers().Tokenizer.from_str(
            json.dumps(
                {
                    "version": "1.0",
                    "truncation": None,
                    "padding": None,
                    "added_tokens": [],
                    "normalizer": new_normalizer,
                    "pre_tokenizer": new_pre_tokenizer,
                    "post_processor": None,
                    "decoder": None,
                    "model": {"type": "WordLevel", "vocab": {"x": 0}, "unk_token": "x"},
                }
            )
        )
        copies.append(_plain_copy(tokenizer, holder.normalizer, holder.pre_tokenizer))
    return tuple(copies)


@cache
def _character_to_byte() -> dict[str, int]:
    from .tiktoken_file import byte_level_text

    return {byte_level_text(bytes([byte])): byte for byte in range(256)}


def _is_byte_level(tokenizer: Tokenizer) -> bool:
    decoders = _import_tokenizers().decoders
    return isinstance(tokenizer.decoder, decoders.ByteLevel) and tokenizer.normalizer is None


class TokenizerBackend:
    """A tokenizer made ready for pawlette (see the module docstring).

    Share one per tokenizer: building it copies the tokenizer (about a second for a
    128k-token vocabulary).  It is safe to use from one thread at a time.  ``cuts=False``
    encodes every run whole (the ids are the same; see :mod:`.cuts`).
    """

    def __init__(
        self, tokenizer: Tokenizer, *, source: str = "tokenizer", cuts: bool = True
    ) -> None:
        self.tokenizer = tokenizer
        self.source = source
        added = tokenizer.get_added_tokens_decoder()
        self.added: dict[int, str] = {token_id: token.content for token_id, token in added.items()}
        self.control_ids = frozenset(added)
        self._id_of_added = {content: token_id for token_id, content in self.added.items()}
        self._plain = _plain_copy(tokenizer)
        self._copies = _context_copies(tokenizer, self._plain)
        # Whether a run's context changes its ids (a pipeline that adds a prefix somewhere).
        self.contextual = any(copy is not self._plain for copy in self._copies)
        self._caches: tuple[dict[str, list[int]], ...] = ({}, {}, {})
        # encode_batch_fast (tokenizers >= 0.21) skips the offsets nobody reads here.
        self._encoders = tuple(
            getattr(copy, "encode_batch_fast", copy.encode_batch) for copy in self._copies
        )
        # Plain text can only reach a control id that the model's own vocabulary lists (the
        # plain copy has no added token): the check of every encoded run looks for those only,
        # and is skipped when there are none (the usual: added tokens live outside the model).
        vocabulary = tokenizer.get_vocab(with_added_tokens=False)
        self._reachable_control_ids = frozenset(self.control_ids.intersection(vocabulary.values()))
        self._byte_level = _is_byte_level(tokenizer)
        self._token_bytes: list[bytes] | None = None
        # Byte-level BPEs: a token's length in bytes is its length in byte-level characters.
        self._token_lengths: list[int] | None = None
        if self._byte_level:
            size = max(max(vocabulary.values(), default=-1), max(self.added, default=-1)) + 1
            lengths = [0] * size
            for token, token_id in vocabulary.items():
                lengths[token_id] = len(token)
            for token_id, content in self.added.items():
                lengths[token_id] = len(content.encode("utf-8"))
            self._token_lengths = lengths
        self._checked_markers: set[str] = set()
        self._check_contexts()
        # Text cut where the pre-tokenizer provably splits (see .cuts): byte-level BPEs whose
        # pipeline adds no prefix anywhere, so a piece's ids do not depend on what precedes it.
        self._pieces: PieceCache | None = None
        if cuts and self._token_lengths is not None and not self.contextual:
            found = verified_cuts(self._encode_plain)
            if found is not None:
                self._pieces = PieceCache(found, self._encode_plain, self._token_lengths, source)

    def _encode_plain(self, texts: Sequence[str]) -> list[list[int]]:
        """The plain copy's ids of each text, in one batch call."""
        encodings = self._encoders[START](list(texts), add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    @property
    def cuts(self) -> TextCuts | None:
        """Where text is cut before it is encoded (None: never; see :mod:`.cuts`)."""
        return None if self._pieces is None else self._pieces.cuts

    # ------------------------------------------------------------------ self-check

    def _own_ids(self, text: str) -> list[int] | None:
        """The tokenizer's own ids for ``text`` (added tokens matched), or None when its
        settings (``encode_special_tokens``) keep it from matching them."""
        if getattr(self.tokenizer, "encode_special_tokens", False):
            return None
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        if self.tokenizer.padding is None:
            return list(encoding.ids)
        return [i for i, keep in zip(encoding.ids, encoding.attention_mask, strict=True) if keep]

    def _compare(self, what: str, text: str, parts: list[tuple[int, str]]) -> None:
        """Raise :class:`TokenizerMismatch` unless ``parts`` (markers as ``(-1 - id, text)``,
        runs as ``(context, text)``) give the tokenizer's own ids for ``text``."""
        expected = self._own_ids(text)
        if expected is None:
            return
        ours: list[int] = []
        for context, piece in parts:
            if context < 0:
                ours.append(-1 - context)
            elif piece:
                ours += self._copies[context].encode(piece, add_special_tokens=False).ids
        if ours == expected:
            return
        first = next(
            (i for i, (a, b) in enumerate(zip(ours, expected, strict=False)) if a != b),
            min(len(ours), len(expected)),
        )
        shown = [self._plain.id_to_token(i) for i in expected[first : first + 4]]
        found = [self._plain.id_to_token(i) for i in ours[first : first + 4]]
        raise TokenizerMismatch(
            f"{self.source}: {what}: encoding {text!r} piece by piece gives the tokens"
            f" {found} from token {first} where the tokenizer itself gives {shown};"
            " expected pawlette to reproduce the tokenizer's own ids. Its normaliser,"
            " pre-tokenizer or added-token settings (lstrip, rstrip, normalized) do"
            " something pawlette does not model"
        )

    def _check_contexts(self) -> None:
        """Text at the start, after an added token, and continuing: the ids pawlette's runs
        give must be the tokenizer's own (see the module docstring)."""
        first, second, _ = _PROBE_TEXTS
        self._compare("text alone", first + second, [(START, first + second)])
        # A continuation is checked where the tokenizer's own tokens break at the cut.
        whole = self._plain.encode(first + second, add_special_tokens=False)
        if any(end == len(first) for _, end in whole.offsets):
            self._compare(
                "text continuing other text",
                first + second,
                [(START, first), (CONTINUATION, second)],
            )
        # One plain special token (a format's markers are checked one by one in marker_ids).
        for token_id, token in sorted(self.tokenizer.get_added_tokens_decoder().items()):
            plain = not (token.normalized or token.lstrip or token.rstrip or token.single_word)
            if token.content and token.special and plain:
                self.check_marker(token.content, token_id)
                break

    def check_marker(self, marker: str, token_id: int) -> None:
        """Text around ``marker`` (an added token): pawlette's ids must be the tokenizer's."""
        first, second, third = _PROBE_TEXTS
        text = first + marker + second + marker + third + marker
        parts = [
            (START, first),
            (-1 - token_id, marker),
            (AFTER_MARKER, second),
            (-1 - token_id, marker),
            (AFTER_MARKER, third),
            (-1 - token_id, marker),
        ]
        self._compare(f"text around {marker!r}", text, parts)
        self._compare(f"text after {marker!r}", marker + first, [parts[1], (AFTER_MARKER, first)])

    # ------------------------------------------------------------------ markers

    def added_id(self, text: str) -> int | None:
        """The id of the added token spelled ``text``, or None."""
        return self._id_of_added.get(text)

    def marker_ids(self, markers: Sequence[str], format_name: str) -> dict[str, int]:
        """Each marker's id; :class:`TokenizerMismatch` when one is not a special token."""
        ids: dict[str, int] = {}
        for marker in markers:
            token_id = self._id_of_added.get(marker)
            if token_id is None:
                found = self.tokenizer.token_to_id(marker)
                what = (
                    "not a token" if found is None else f"an ordinary token (id {found}), not added"
                )
                raise TokenizerMismatch(
                    f"{self.source}: marker {marker!r} of format {format_name!r} is {what};"
                    " expected every marker of the format as one special token. Add them with"
                    f" `pawlette tokenizer prepare -f {_format_argument(format_name)}"
                    " --base tokenizer.json -o DIR`"
                )
            if self._plain.encode(marker, add_special_tokens=False).ids == [token_id]:
                raise TokenizerMismatch(
                    f"{self.source}: marker {marker!r} of format {format_name!r} (id {token_id})"
                    " is also an ordinary token of the vocabulary, so text spelling it becomes"
                    " the control token; expected a special token no text can reach. Use a"
                    " tokenizer whose vocabulary does not hold the marker"
                )
            if marker not in self._checked_markers:
                self.check_marker(marker, token_id)
                self._checked_markers.add(marker)
            ids[marker] = token_id
        return ids

    # ------------------------------------------------------------------ encoding text

    def encode_texts(
        self, texts: Sequence[str], contexts: Sequence[int] | None = None
    ) -> list[list[int]]:
        """The ids of each text, encoded as plain text (no added token can come out).

        ``contexts`` says where each text stands (:data:`START`, :data:`AFTER_MARKER`,
        :data:`CONTINUATION`; default: every text at the start), which matters to tokenizers
        that add a prefix to some pieces (:attr:`contextual`).  Raises
        :class:`TokenizerMismatch` if the vocabulary turns some text into a control id.
        """
        if contexts is None or not self.contextual:
            return self._encode_in(START, texts)
        results: list[list[int]] = [[] for _ in texts]
        for context in (START, AFTER_MARKER, CONTINUATION):
            chosen = [index for index, found in enumerate(contexts) if found == context]
            if chosen:
                encoded = self._encode_in(context, [texts[index] for index in chosen])
                for index, ids in zip(chosen, encoded, strict=True):
                    results[index] = ids
        return results

    def _encode_in(self, context: int, texts: Sequence[str]) -> list[list[int]]:
        cache_ = self._caches[context]
        results: list[list[int] | None] = [cache_.get(text) for text in texts]
        missing = [index for index, found in enumerate(results) if found is None]
        if missing:
            unique = list(dict.fromkeys(texts[index] for index in missing))
            if self._pieces is not None:
                found = self._pieces.encode(unique)
            else:
                found = [e.ids for e in self._encoders[context](unique, add_special_tokens=False)]
            control = self._reachable_control_ids
            encoded: dict[str, list[int]] = {}
            for text, ids in zip(unique, found, strict=True):
                if control and not control.isdisjoint(ids):
                    self._reached_control(text, ids)
                encoded[text] = ids
                if len(text) <= CACHE_MAX_CHARACTERS:
                    if len(cache_) >= CACHE_ENTRIES:
                        del cache_[next(iter(cache_))]
                    cache_[text] = ids
            for index in missing:
                results[index] = encoded[texts[index]]
        return results  # type: ignore[return-value]  # every None was filled

    def clear_cache(self) -> None:
        """Forget every encoded text run (a benchmark's cold start; memory)."""
        for cache_ in self._caches:
            cache_.clear()
        if self._pieces is not None:
            self._pieces.clear()

    def _reached_control(self, text: str, ids: list[int]) -> None:
        position = next(index for index, token in enumerate(ids) if token in self.control_ids)
        before = self._plain.decode(ids[:position], skip_special_tokens=False)
        raise TokenizerMismatch(
            f"{self.source}: the text {text[:80]!r} encodes, after {len(before)} characters, to"
            f" the control token {self.added[ids[position]]!r}; expected only ordinary tokens."
            " The vocabulary lists that token as an ordinary one, so plain text reaches it"
        )

    def token_ends(
        self, pieces: Sequence[str], ids: list[int], context: int = START
    ) -> tuple[list[int], list[int]]:
        """Where each piece starts and each token ends, in one unit, for the encoding ``ids``
        of ``"".join(pieces)``: bytes for byte-level BPEs (each token's bytes are known),
        characters otherwise (from the tokenizer's offsets; a token that ends inside a
        character ends after it)."""
        token_lengths = self._token_lengths
        if token_lengths is not None and ids:
            lengths = [len(piece.encode("utf-8")) for piece in pieces]
            try:
                ends = list(itertools.accumulate(map(token_lengths.__getitem__, ids)))
            except IndexError:  # an id past the vocabulary: the offsets below tell
                ends = []
            # A negative id would count from the end: the total would not match.
            if ends and ends[-1] == sum(lengths) and min(ids) >= 0 and 0 not in lengths:
                return list(itertools.accumulate(lengths[:-1], initial=0)), ends
        starts = list(itertools.accumulate((len(piece) for piece in pieces[:-1]), initial=0))
        copy = self._copies[context]
        offsets = copy.encode("".join(pieces), add_special_tokens=False).offsets
        return starts, [end for _, end in offsets]

    # ------------------------------------------------------------------ decoding

    @property
    def byte_level(self) -> bool:
        """Whether every token stands for a fixed run of bytes (a byte-level BPE)."""
        return self._byte_level

    def token_bytes(self) -> list[bytes] | None:
        """Each id's bytes (byte-level BPEs only; added tokens as their UTF-8 text)."""
        if not self._byte_level:
            return None
        if self._token_bytes is None:
            table = _character_to_byte()
            vocabulary = self.tokenizer.get_vocab(with_added_tokens=False)
            size = max(max(vocabulary.values(), default=-1), max(self.added, default=-1)) + 1
            result = [b""] * size
            for token, token_id in vocabulary.items():
                try:
                    result[token_id] = bytes(table[character] for character in token)
                except KeyError:  # not byte-level text after all: decode it as text
                    result[token_id] = token.encode("utf-8")
            for token_id, content in self.added.items():
                result[token_id] = content.encode("utf-8")
            self._token_bytes = result
        return self._token_bytes

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` (added tokens spelled out)."""
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=False))


def file_key(path: str | os.PathLike[str]) -> tuple[object, ...]:
    """What identifies the tokenizer a path loads: the file actually read (``tokenizer.json``
    inside a directory), its inode, modification time (ns) and size; a directory prepared
    again in place gives another key."""
    target = Path(path)
    if target.is_dir():
        target = target / "tokenizer.json"
    try:
        status = target.stat()
    except OSError:
        return ("path", os.fspath(target))
    return ("path", os.fspath(target), status.st_ino, status.st_mtime_ns, status.st_size)


_BACKENDS: collections.OrderedDict[object, tuple[object, TokenizerBackend]]
_BACKENDS = collections.OrderedDict()
_BACKEND_CACHE_SIZE = 8


def load_backend(tokenizer: object, *, source: str | None = None) -> TokenizerBackend:
    """A :class:`TokenizerBackend` for any tokenizer :func:`load_tokenizer` accepts.

    The backends of the last few tokenizers are kept, so calling this again with the same
    tokenizer object (or path) is free.
    """
    if isinstance(tokenizer, TokenizerBackend):
        return tokenizer
    key: tuple[object, ...] = ("object", id(tokenizer))
    if isinstance(tokenizer, (str, os.PathLike)):
        key = file_key(tokenizer)
        if source is None:
            source = f"tokenizer {os.fspath(tokenizer)}"
    found = _BACKENDS.get(key)
    if found is not None:
        _BACKENDS.move_to_end(key)
        return found[1]
    backend = TokenizerBackend(load_tokenizer(tokenizer), source=source or "tokenizer")
    # Keep the object alive while cached, so its id is not reused by another.
    _BACKENDS[key] = (tokenizer, backend)
    while len(_BACKENDS) > _BACKEND_CACHE_SIZE:
        _BACKENDS.popitem(last=False)
    return backend


def _format_argument(format_name: str) -> str:
    """What ``-f`` takes for a format: its name where every process knows it; else what
    named it (a format inferred from a model directory, or loaded from a file, is registered
    under its name in this process alone: another command finds it by its path)."""
    from ..formats import formats, registered_in_this_process

    if format_name.split(":")[0] not in formats():
        return "YOUR_FORMAT.py"
    if registered_in_this_process(format_name):
        return "<the model directory or .py file you gave -f>"
    return format_name
