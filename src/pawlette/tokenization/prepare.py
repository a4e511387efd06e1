"""Prepare a tokenizer for a format: its markers as special tokens, saved for transformers.

``pawlette tokenizer prepare -f FORMAT --base tokenizer.json -o DIR`` writes:

- ``DIR/tokenizer.json``: the base tokenizer with every marker of the format
  (``fmt.special_markers``) as a special token.  Markers the base already has as added tokens
  keep their ids (breeze's ``<|eot_id|>`` on Llama 3); the others get new ids after the
  vocabulary, in the format's order.  A marker that is an ordinary token of the base
  vocabulary is refused (:class:`~pawlette.errors.TokenizerMismatch`): ``tokenizers`` would
  give the special token that same id, and text spelling the marker would reach it;
- ``DIR/tokenizer_config.json``: ``PreTrainedTokenizerFast``, ``eos_token`` the format's first
  stop marker, ``bos_token`` and ``pad_token`` (below), and the format's chat template
  (``pawlette.export.export_jinja``; every registered format has one, and a format that
  raises ``UnsupportedFeature`` there is written without one, with the reason in
  :attr:`PreparedTokenizer.note`);
- ``DIR/generation_config.json``: ``eos_token_id``, the ids of every stop marker (which is
  what transformers' ``generate`` and vLLM stop on), ``bos_token_id`` and ``pad_token_id``.

**bos and pad.**  ``bos_token`` is the base's: its ``tokenizer_config.json`` when the base is
a directory holding one, else the first special token of the base's post-processor template,
else a special token of the base spelled as a beginning of text (``<|begin_of_text|>``,
``<s>``, ``<bos>``, ...); none when the base has none.  ``pad_token`` is likewise the base's
(its config, else a special token spelled as padding: Llama 3.1's
``<|finetune_right_pad_id|>``, ``<pad>``, ``[PAD]``, ...); a base without one gets a new
special token ``<|pad|>``.  Never the end-of-turn token: collators that mask padding in the
labels (transformers' ``DataCollatorForLanguageModeling``) would then never teach the model
to stop.

``transformers.AutoTokenizer.from_pretrained(DIR)`` loads the directory offline.  The model's
embedding matrix must grow to the new vocabulary size
(``model.resize_token_embeddings(len(tokenizer))``): :attr:`PreparedTokenizer.vocabulary_size`,
printed by the command with how many tokens were added.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import PawletteError, RequestError, TokenizerMismatch, UnsupportedFeature
from ..format import Format
from ..formats import get_format
from .backend import TokenizerBackend, load_tokenizer

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "PreparedTokenizer",
    "add_markers",
    "end_of_answer_id",
    "end_of_sequence",
    "prepare_tokenizer",
    "write_tokenizer_directory",
]


def prepare_tokenizer(fmt: Format | str, base: object) -> Tokenizer:
    """A copy of ``base`` with every marker of ``fmt`` as a special token (``base`` is kept).

    ``base`` is anything :func:`~pawlette.tokenization.load_tokenizer` accepts.
    """
    resolved = get_format(fmt) if isinstance(fmt, str) else fmt
    return add_markers(base, resolved.special_markers, owner=f"format {resolved.name!r}")


def add_markers(base: object, markers: Sequence[str], *, owner: str = "the format") -> Tokenizer:
    """A copy of ``base`` with ``markers`` as special tokens (new ids after the vocabulary, in
    order; markers already special keep their ids).  ``owner`` names them in errors."""
    from tokenizers import AddedToken, Tokenizer

    original = load_tokenizer(base)
    tokenizer = Tokenizer.from_str(original.to_str())
    added = {token.content: token for token in tokenizer.get_added_tokens_decoder().values()}
    new_tokens = []
    for marker in dict.fromkeys(markers):
        existing = added.get(marker)
        if existing is not None:
            if not existing.special:
                raise TokenizerMismatch(
                    f"base tokenizer: marker {marker!r} of {owner} is an added token that is"
                    " not special; expected a special token (decoding with skip_special_tokens"
                    " would keep it)"
                )
            continue
        vocabulary_id = tokenizer.model.token_to_id(marker)
        if vocabulary_id is not None:
            raise TokenizerMismatch(
                f"base tokenizer: marker {marker!r} of {owner} is the ordinary token"
                f" {vocabulary_id} of the vocabulary; expected a string the vocabulary does not"
                " hold, so the marker can get its own id that no text reaches"
            )
        new_tokens.append(
            AddedToken(
                marker,
                special=True,
                normalized=False,
                lstrip=False,
                rstrip=False,
                single_word=False,
            )
        )
    tokenizer.add_special_tokens(new_tokens)
    return tokenizer


BOS_SPELLINGS = ("<|begin_of_text|>", "<s>", "<bos>", "[BOS]", "<|startoftext|>", "<BOS>")
PAD_SPELLINGS = ("<|finetune_right_pad_id|>", "<pad>", "<|pad|>", "[PAD]", "<|padding|>", "<PAD>")
NEW_PAD = "<|pad|>"
EOS_SPELLINGS = ("<|end_of_text|>", "</s>", "<eos>", "<|endoftext|>", "[EOS]", "<EOS>")


def end_of_sequence(tokenizer: object) -> str | None:
    """The tokenizer's end-of-sequence token: a transformers tokenizer's ``eos_token``, the
    ``eos_token`` of the ``tokenizer_config.json`` beside a ``tokenizer.json`` path (or in a
    directory), else a special token spelled as an end of text (``<|end_of_text|>``,
    ``</s>``, ``<eos>``, ``<|endoftext|>``, ...); None when there is none."""
    if isinstance(tokenizer, TokenizerBackend):
        tokenizer = tokenizer.tokenizer
    configured = getattr(tokenizer, "eos_token", None)
    if isinstance(configured, str) and configured:
        return configured
    found = _configured(_base_config(tokenizer), "eos_token")
    if found is not None:
        return found
    return _special_spelled(load_tokenizer(tokenizer), EOS_SPELLINGS)


def end_of_answer_id(tokenizer: object, backend: TokenizerBackend, eos_token: str | None) -> int:
    """The id that ends a learned answer: ``eos_token``'s, else :func:`end_of_sequence`'s
    (``backend`` is ``tokenizer``'s)."""
    name = eos_token or end_of_sequence(tokenizer)
    if name is None:
        raise RequestError(
            "tokenizer",
            "no end-of-sequence token (no eos_token in a tokenizer_config.json, no special"
            " token such as </s> or <|end_of_text|>)",
            "a tokenizer with one, or eos_token=",
            "Without it the model never learns to stop",
        )
    token_id = backend.added_id(name)
    if token_id is None:
        raise RequestError("eos_token", f"{name!r}", "a special token of the tokenizer")
    return token_id


@dataclass(frozen=True)
class PreparedTokenizer:
    """What :func:`write_tokenizer_directory` wrote."""

    directory: Path
    added: tuple[tuple[str, int], ...]
    """The markers added, with their ids."""
    stop_ids: tuple[int, ...]
    chat_template: bool
    note: str
    """Why the chat template is missing, or ``""``."""
    bos_token: str | None = None
    pad_token: str | None = None
    pad_note: str = ""
    """Where ``pad_token`` comes from."""
    base_size: int = 0
    """The base's vocabulary, added tokens included."""
    vocabulary_size: int = 0
    """The prepared vocabulary (what the embeddings must be resized to)."""


def _end_token(fmt: Format) -> str | None:
    """The tokenizer's end-of-sequence token: the marker the turn ends on, the first of
    :attr:`~pawlette.Format.stop_markers` (Poolside Laguna XS's ``\\n</assistant>`` ends on
    ``</assistant>``).  A stop spelled with text before its marker (Nemotron Nano 2's
    ``"\\n<SPECIAL_12>"``) is no token of the vocabulary: transformers would add it as a token
    of its own and encode the template's text with it, ids the model never saw; an
    end-of-sequence is one token, and the text before it is the turn's.  A format whose stops
    end with no marker has no such token: its first stop is named, as the only end there is."""
    if fmt.stop_markers:
        return fmt.stop_markers[0]
    return fmt.stop[0] if fmt.stop else None


def write_tokenizer_directory(
    fmt: Format | str, base: object, directory: str | os.PathLike[str]
) -> PreparedTokenizer:
    """Prepare ``base`` for ``fmt`` and write a directory transformers loads offline."""
    resolved = get_format(fmt) if isinstance(fmt, str) else fmt
    base_tokenizer = load_tokenizer(base)
    before = {token.content for token in base_tokenizer.get_added_tokens_decoder().values()}
    # The base loaded once (a Llama 3 tokenizer.json takes most of a second to read).
    tokenizer = prepare_tokenizer(resolved, base_tokenizer)
    ids = {marker: tokenizer.token_to_id(marker) for marker in resolved.special_markers}
    base_config = _base_config(base)
    bos = _configured(base_config, "bos_token") or _template_bos(base_tokenizer)
    bos = bos or _special_spelled(base_tokenizer, BOS_SPELLINGS)
    pad = _configured(base_config, "pad_token")
    pad_note = "the base's tokenizer_config.json"
    if pad is None:
        pad = _special_spelled(base_tokenizer, PAD_SPELLINGS)
        pad_note = "a special token of the base"
    if pad is None or pad in resolved.stop:
        tokenizer = add_markers(tokenizer, [NEW_PAD], owner="the padding token")
        pad, pad_note = NEW_PAD, "new: the base has no padding token"
    template: str | None = None
    note = ""
    try:
        from ..export import export_jinja

        template = export_jinja(resolved)  # the value: a format from a file has no registered name
    except UnsupportedFeature as error:
        note = f"no chat template: {error}"
    except ImportError as error:  # pragma: no cover - the export package is part of pawlette
        note = f"no chat template: {error}"
    target = Path(directory)
    try:
        target.mkdir(parents=True, exist_ok=True)
        tokenizer.save(str(target / "tokenizer.json"))
        config: dict[str, object] = {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "eos_token": _end_token(resolved),
            "clean_up_tokenization_spaces": False,
            "model_input_names": ["input_ids", "attention_mask"],
        }
        if bos is not None:
            config["bos_token"] = bos
        config["pad_token"] = pad
        if template is not None:
            config["chat_template"] = template
        _write_json(target / "tokenizer_config.json", config)
        stop_ids = [token for marker in resolved.stop if (token := ids.get(marker)) is not None]
        generation: dict[str, object] = {"eos_token_id": stop_ids}
        if bos is not None:
            generation["bos_token_id"] = tokenizer.token_to_id(bos)
        generation["pad_token_id"] = tokenizer.token_to_id(pad)
        _write_json(target / "generation_config.json", generation)
    except OSError as error:
        raise PawletteError(
            f"-o {os.fspath(directory)}: cannot write ({error.strerror}); expected a writable"
            " directory"
        ) from error
    added = tuple(
        (marker, token_id)
        for marker, token_id in ids.items()
        if marker not in before and token_id is not None
    )
    return PreparedTokenizer(
        directory=target,
        added=added,
        stop_ids=tuple(stop_ids),
        chat_template=template is not None,
        note=note,
        bos_token=bos,
        pad_token=pad,
        pad_note=pad_note,
        base_size=base_tokenizer.get_vocab_size(with_added_tokens=True),
        vocabulary_size=tokenizer.get_vocab_size(with_added_tokens=True),
    )


def _base_config(base: object) -> dict[str, object]:
    """The base's ``tokenizer_config.json`` when it is a directory holding one."""
    if isinstance(base, (str, os.PathLike)):
        path = Path(base)
        config = (path if path.is_dir() else path.parent) / "tokenizer_config.json"
        if config.is_file():
            # A damaged config is an error: guessing bos and pad without it would be silent.
            try:
                loaded = json.loads(config.read_text(encoding="utf-8"))
            except ValueError as error:  # UnicodeDecodeError is one too
                raise RequestError(
                    str(config), f"unreadable JSON ({error})", "a JSON object"
                ) from error
            if not isinstance(loaded, dict):
                raise RequestError(str(config), f"a {type(loaded).__name__}", "a JSON object")
            return loaded
    return {}


def _configured(config: dict[str, object], key: str) -> str | None:
    value = config.get(key)
    if isinstance(value, dict):  # transformers' AddedToken form
        value = value.get("content")
    return value if isinstance(value, str) and value else None


def _template_bos(tokenizer: Tokenizer) -> str | None:
    """The first special token the base's post-processor puts before a single text."""
    # The post-processor's own JSON (its pickled state), not the whole tokenizer's: the JSON of
    # a 128k-token vocabulary takes half a second to write and read back.
    found = tokenizer.post_processor
    processor = json.loads(found.__getstate__()) if found is not None else {}
    processors = processor.get("processors", [processor])  # a Sequence, or one processor
    for item in processors:
        if item.get("type") != "TemplateProcessing":
            continue
        for piece in item.get("single", []):
            if "Sequence" in piece:
                return None  # the text comes first: no bos
            token = piece.get("SpecialToken", {}).get("id")
            if isinstance(token, str):
                return token
    return None


def _special_spelled(tokenizer: Tokenizer, spellings: Sequence[str]) -> str | None:
    special = {
        token.content for token in tokenizer.get_added_tokens_decoder().values() if token.special
    }
    return next((spelling for spelling in spellings if spelling in special), None)


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
