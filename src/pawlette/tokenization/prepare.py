"""Prepare a tokenizer for a format: its markers as special tokens, saved for transformers.

``pawlette tokenizer prepare -f FORMAT --base tokenizer.json -o DIR`` writes:

- ``DIR/tokenizer.json``: the base tokenizer with every marker of the format
  (``fmt.special_markers``) as a special token.  Markers the base already has as added tokens
  keep their ids (breeze's ``<|eot_id|>`` on Llama 3); the others get new ids after the
  vocabulary, in the format's order.  A marker that is an ordinary token of the base
  vocabulary is refused (:class:`~pawlette.errors.TokenizerMismatch`): ``tokenizers`` would
  give the special token that same id, and text spelling the marker would reach it;
- ``DIR/tokenizer_config.json``: ``PreTrainedTokenizerFast``, ``eos_token`` the format's first
  stop marker, and the format's chat template (``pawlette.export.export_jinja``; every
  registered format has one, and a format that raises ``UnsupportedFeature`` there is written
  without one, with the reason in :attr:`PreparedTokenizer.note`);
- ``DIR/generation_config.json``: ``eos_token_id``, the ids of every stop marker, which is
  what transformers' ``generate`` and vLLM stop on.

``transformers.AutoTokenizer.from_pretrained(DIR)`` loads the directory offline.  The model's
embedding matrix must grow to the new vocabulary size
(``model.resize_token_embeddings(len(tokenizer))``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import PawletteError, TokenizerMismatch, UnsupportedFeature
from ..format import Format
from ..formats import get_format
from .backend import load_tokenizer

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["PreparedTokenizer", "add_markers", "prepare_tokenizer", "write_tokenizer_directory"]


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


def write_tokenizer_directory(
    fmt: Format | str, base: object, directory: str | os.PathLike[str]
) -> PreparedTokenizer:
    """Prepare ``base`` for ``fmt`` and write a directory transformers loads offline."""
    resolved = get_format(fmt) if isinstance(fmt, str) else fmt
    before = {token.content for token in load_tokenizer(base).get_added_tokens_decoder().values()}
    tokenizer = prepare_tokenizer(resolved, base)
    ids = {marker: tokenizer.token_to_id(marker) for marker in resolved.special_markers}
    template: str | None = None
    note = ""
    try:
        from ..export import export_jinja

        template = export_jinja(resolved.name)
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
            "eos_token": resolved.stop[0] if resolved.stop else None,
            "clean_up_tokenization_spaces": False,
            "model_input_names": ["input_ids", "attention_mask"],
        }
        if template is not None:
            config["chat_template"] = template
        _write_json(target / "tokenizer_config.json", config)
        stop_ids = [token for marker in resolved.stop if (token := ids.get(marker)) is not None]
        _write_json(target / "generation_config.json", {"eos_token_id": stop_ids})
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
    )


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
