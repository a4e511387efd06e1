"""Chat-completions records to ids and labels: one function for pipelines beyond one machine.

A *record* is one line of a fine-tuning JSONL file: an object with ``messages`` and, optionally,
``tools`` (other keys are ignored).  :class:`RecordTokenizer` turns records into ``input_ids``
and ``labels`` and is, as it stands, both

- a Hugging Face ``datasets`` ``map`` function, per record or batched::

      dataset.map(RecordTokenizer("pcml", "tokenizer.json"), batched=True,
                  remove_columns=dataset.column_names)

- a Ray Data ``map_batches`` function (any batch format: numpy, pandas or pyarrow)::

      ray_dataset.map_batches(RecordTokenizer("pcml", "tokenizer.json"))

It pickles as its arguments (the format's name, the tokenizer's path, the mask policy) and
builds its encoder on first use in each process, so ``num_proc``/Ray workers each load the
tokenizer once.  Arrow (``datasets``, Ray) stores a list of messages as one struct type and
fills the keys a message lacks with nulls, and a tool's JSON schema likewise: null-valued keys
are dropped before the records are read (a null ``content`` means the same as none).  For a
byte-exact tool listing, store ``tools`` (and ``messages``) as JSON strings: a string column
is parsed as JSON.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import PawletteError, RequestError
from ..format import Format
from ..formats import get_format
from .encoder import ConversationEncoder, MaskPolicy, Tokenized, coerce_mask, record_error
from .lengths import TooLong, check_length_options, fit_length
from .losses import parse_reject_losses, rejected_loss
from .shapes import (
    RecordShape,
    droppable_feature,
    json_error,
    parse_drop,
    without_feature,
)

__all__ = [
    "EncodedRecords",
    "RecordShape",
    "RecordTokenizer",
    "conversation_of_record",
    "encode_records",
    "json_error",
]

_DEFAULT_SHAPE = RecordShape()


def conversation_of_record(record: object, *, drop_nulls: bool = False) -> tuple[object, object]:
    """``(messages, tools)`` of a chat-completions record.

    ``messages`` and ``tools`` may be JSON strings.  ``drop_nulls`` drops null-valued keys at
    every depth (for records read from Arrow, which writes absent keys as nulls).
    """
    return _DEFAULT_SHAPE.conversation(record, drop_nulls=drop_nulls)


@dataclass
class EncodedRecords:
    """What :func:`encode_records` made of some records, one entry per record."""

    results: list[Tokenized | PawletteError]
    dropped: dict[int, Counter[str]] = field(default_factory=dict)
    """Record number -> how many messages lost each dropped feature (``tools``: 1, the
    record's listing)."""


def encode_records(
    encoder: ConversationEncoder,
    records: Sequence[object],
    *,
    shape: RecordShape = _DEFAULT_SHAPE,
    drop: frozenset[str] = frozenset(),
    drop_nulls: bool = False,
) -> EncodedRecords:
    """Tokenize records (one batch for all their text); a record that cannot be tokenized gets
    its error in its place.  A feature the format refuses is dropped from the message that
    holds it when ``drop`` names it (see :mod:`.shapes`), and the record encoded again."""
    pairs: list[tuple[object, object]] = []
    failures: dict[int, PawletteError] = {}
    for number, record in enumerate(records):
        try:
            pairs.append(shape.conversation(record, drop_nulls=drop_nulls))
        except Exception as error:
            failures[number] = record_error(error)
            pairs.append(([], None))
    results = encoder.encode_batch(pairs, errors="return")
    for number, failure in failures.items():
        results[number] = failure
    encoded = EncodedRecords(results)
    pending = [number for number in range(len(results)) if number not in failures]
    while drop and pending:
        retry: list[int] = []
        for number in pending:
            found = droppable_feature(results[number], drop)
            if found is None:
                continue
            index, feature = found
            dropped = without_feature(pairs[number], index, feature)
            if dropped is None:
                continue
            pairs[number] = dropped
            encoded.dropped.setdefault(number, Counter())[feature] += 1
            retry.append(number)
        if not retry:
            break
        again = encoder.encode_batch([pairs[number] for number in retry], errors="return")
        for number, result in zip(retry, again, strict=True):
            results[number] = result
        pending = retry
    return encoded


def _python(value: Any) -> Any:
    """numpy arrays and scalars (Ray, datasets' numpy format) as plain Python values."""
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {key: _python(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_python(item) for item in value]
    to_list = getattr(value, "tolist", None)
    if to_list is not None:
        return _python(to_list())
    return value


class RecordTokenizer:
    """Records to ``input_ids``, ``labels`` and ``length``: a ``datasets.map`` and Ray
    ``map_batches`` function (see the module docstring).

    ``fmt`` is a format name (or a registered :class:`~pawlette.Format`); ``tokenizer`` a
    ``tokenizer.json`` path or directory (or a ``tokenizers.Tokenizer``, carried as its JSON
    when pickled).  ``errors="raise"`` (default) raises on a record that cannot be tokenized,
    naming it; ``errors="keep"`` adds an ``error`` column (None, or the reason, with empty ids
    and labels) so the caller can count and filter them.

    The options of ``pawlette tokenize``: ``drop`` (features to drop where the format refuses
    them, ``"reasoning,name"``; see :mod:`.shapes`), ``messages_field`` and ``sharegpt`` (the
    record's shape), ``max_length`` and ``overflow`` (``"drop"`` or ``"truncate"``; see
    :mod:`.lengths`), ``reject_losses`` (loss fields, ``"tools,messages.name"`` or ``"all"``,
    whose loss where the format leaves it out rejects the record, unless ``drop`` makes it
    expected; see :mod:`.losses`).  A record dropped for its length is an error
    (``errors="keep"``: its reason in the ``error`` column); with ``errors="raise"`` a batch
    leaves it out (``datasets`` batched ``map`` and Ray take fewer rows than they gave) and a
    single record raises.  A record rejected for a loss is an error like any other: it raises
    (:class:`~pawlette.tokenization.losses.RejectedLoss`, named by its record) or, with
    ``errors="keep"``, has its reason in the ``error`` column.  The losses of the records kept
    are in :attr:`Tokenized.losses <pawlette.tokenization.Tokenized.losses>`
    (:meth:`tokenize_records`).
    """

    def __init__(
        self,
        fmt: Format | str,
        tokenizer: object,
        *,
        mask: MaskPolicy | str | None = None,
        errors: Literal["raise", "keep"] = "raise",
        drop: str | Iterable[str] | None = None,
        messages_field: str | None = None,
        sharegpt: bool = False,
        max_length: int | None = None,
        overflow: Literal["drop", "truncate"] = "drop",
        reject_losses: str | Iterable[str] | None = None,
    ) -> None:
        if errors not in ("raise", "keep"):
            raise RequestError("errors", f"found {errors!r}", "'raise' or 'keep'")
        check_length_options(max_length, overflow)
        self.format_name = fmt if isinstance(fmt, str) else fmt.name
        self._format = get_format(fmt) if isinstance(fmt, str) else fmt
        if isinstance(tokenizer, (str, os.PathLike)):
            self.tokenizer: object = os.fspath(tokenizer)
        else:
            self.tokenizer = tokenizer
        self.mask = coerce_mask(mask)
        self.errors = errors
        self.drop = parse_drop(drop)
        self.reject_losses = parse_reject_losses(reject_losses, self.drop)
        self.shape = RecordShape(messages_field=messages_field, sharegpt=sharegpt)
        self.max_length = max_length
        self.overflow = overflow
        self._encoder: ConversationEncoder | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_encoder"] = None
        registered = get_format(self.format_name)
        if self._format is not registered:
            raise PawletteError(
                f"RecordTokenizer: the format {self.format_name!r} with other options cannot be"
                " sent to another process; expected a registered format"
            )
        state["_format"] = None
        to_str = getattr(self.tokenizer, "to_str", None)
        if to_str is not None:  # a tokenizers.Tokenizer travels as its JSON
            state["tokenizer"] = ("json", to_str())
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._format = get_format(self.format_name)
        if isinstance(self.tokenizer, tuple) and self.tokenizer[0] == "json":
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_str(self.tokenizer[1])

    @property
    def encoder(self) -> ConversationEncoder:
        """The encoder, built on first use."""
        if self._encoder is None:
            self._encoder = ConversationEncoder(self._format, self.tokenizer, mask=self.mask)
        return self._encoder

    def __call__(self, batch: Any) -> dict[str, list[Any]]:
        """Tokenize one record (a dict whose messages field is a list of message objects) or a
        batch (a dict of columns, a pandas DataFrame or a pyarrow Table)."""
        records, single = _records(batch, self.shape.field)
        keep = self.errors == "keep"
        results = self._tokenize(records, keep_errors=True)
        columns: dict[str, list[Any]] = {"input_ids": [], "labels": [], "length": []}
        if keep:
            columns["error"] = []
        for number, result in enumerate(results):
            if isinstance(result, Tokenized):
                columns["input_ids"].append(result.input_ids)
                columns["labels"].append(result.labels)
                columns["length"].append(len(result))
                if keep:
                    columns["error"].append(None)
            elif keep:
                columns["input_ids"].append([])
                columns["labels"].append([])
                columns["length"].append(0)
                columns["error"].append(str(result))
            elif single or not isinstance(result, TooLong):
                raise PawletteError(f"records[{number}]: {result}") from result
        if single:
            return {name: values[0] for name, values in columns.items()}
        return columns

    def tokenize_records(
        self, records: Sequence[object], *, drop_nulls: bool = True
    ) -> list[Tokenized | PawletteError]:
        """Tokenize records; a bad record raises (``errors="raise"``) or is returned as its
        error (``errors="keep"``)."""
        results = self._tokenize(records, drop_nulls=drop_nulls, keep_errors=False)
        return results

    def _tokenize(
        self, records: Sequence[object], *, drop_nulls: bool = True, keep_errors: bool
    ) -> list[Tokenized | PawletteError]:
        encoded = encode_records(
            self.encoder, records, shape=self.shape, drop=self.drop, drop_nulls=drop_nulls
        )
        results = encoded.results
        for number, result in enumerate(results):
            if not isinstance(result, Tokenized):
                continue
            if result.losses and self.reject_losses:
                refused = rejected_loss(
                    result.losses, self.reject_losses, self.drop, self.format_name
                )
                if refused is not None:
                    results[number] = refused
                    continue
            if self.max_length is not None:
                fitted, outcome = fit_length(result, self.max_length, self.overflow)
                results[number] = fitted if fitted is not None else TooLong(outcome)
        if self.errors == "raise" and not keep_errors:
            for number, result in enumerate(results):
                if isinstance(result, PawletteError):
                    raise PawletteError(f"records[{number}]: {result}") from result
        return results


def _records(batch: Any, field: str = "messages") -> tuple[list[Any], bool]:
    """The records of a batch, and whether it was a single record."""
    if hasattr(batch, "to_pylist"):  # pyarrow Table or RecordBatch
        return list(batch.to_pylist()), False
    if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # pandas DataFrame
        return [_python(row) for row in batch.to_dict("records")], False
    if not isinstance(batch, Mapping):
        raise RequestError("batch", f"a {type(batch).__name__}", "a record or a batch of records")
    messages = _python(batch.get(field))
    if isinstance(messages, str) or (messages and isinstance(messages[0], Mapping)):
        record = {key: _python(value) for key, value in batch.items()}
        return [record], True
    columns = {key: _python(value) for key, value in batch.items()}
    count = len(messages or [])
    return [{key: values[row] for key, values in columns.items()} for row in range(count)], False
