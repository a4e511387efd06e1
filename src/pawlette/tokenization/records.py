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

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..errors import PawletteError, RequestError
from ..format import Format
from ..formats import get_format
from .encoder import ConversationEncoder, MaskPolicy, Tokenized, _coerce_mask, _record_error

__all__ = ["RecordTokenizer", "conversation_of_record", "json_error"]


def conversation_of_record(record: object, *, drop_nulls: bool = False) -> tuple[object, object]:
    """``(messages, tools)`` of a chat-completions record.

    ``messages`` and ``tools`` may be JSON strings.  ``drop_nulls`` drops null-valued keys at
    every depth (for records read from Arrow, which writes absent keys as nulls).
    """
    if not isinstance(record, Mapping):
        raise RequestError("record", f"a JSON {_json_kind(record)}", "an object with 'messages'")
    if "messages" not in record:
        keys = ", ".join(sorted(map(str, record))) or "none"
        raise RequestError("record", f"keys {keys}", "a 'messages' list")
    messages = _maybe_json(record["messages"], "messages")
    tools = _maybe_json(record.get("tools"), "tools")
    if drop_nulls:
        messages = _without_nulls(messages)
        tools = _without_nulls(tools)
    if not isinstance(messages, list):
        raise RequestError("messages", f"a JSON {_json_kind(messages)}", "a list of messages")
    if not messages:
        raise RequestError("messages", "an empty list", "at least one message")
    return messages, tools


def _maybe_json(value: object, path: str) -> object:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError) as error:
        raise RequestError(
            path, f"a string that is not JSON ({json_error(error)})", "JSON"
        ) from error


def json_error(error: BaseException) -> str:
    """Why ``json.loads`` refused a text, in a few words."""
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg.removesuffix(' at')} at column {error.colno}"
    if isinstance(error, RecursionError):
        return "nested too deeply"
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8: byte 0x{error.object[error.start]:02x} at byte {error.start}"
    return str(error)


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        dict: "object",
        list: "array",
        str: "string",
        bool: "boolean",
        int: "number",
        float: "number",
    }.get(type(value), type(value).__name__)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, (list, tuple)):
        return [_without_nulls(item) for item in value]
    return value


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
    """Records to ``input_ids`` and ``labels``: a ``datasets.map`` and Ray ``map_batches``
    function (see the module docstring).

    ``fmt`` is a format name (or a registered :class:`~pawlette.Format`); ``tokenizer`` a
    ``tokenizer.json`` path or directory (or a ``tokenizers.Tokenizer``, carried as its JSON
    when pickled).  ``errors="raise"`` (default) raises on a record that cannot be tokenized,
    naming it; ``errors="keep"`` adds an ``error`` column (None, or the reason, with empty ids
    and labels) so the caller can count and filter them.
    """

    def __init__(
        self,
        fmt: Format | str,
        tokenizer: object,
        *,
        mask: MaskPolicy | str | None = None,
        errors: Literal["raise", "keep"] = "raise",
    ) -> None:
        if errors not in ("raise", "keep"):
            raise RequestError("errors", f"found {errors!r}", "'raise' or 'keep'")
        self.format_name = fmt if isinstance(fmt, str) else fmt.name
        self._format = get_format(fmt) if isinstance(fmt, str) else fmt
        if isinstance(tokenizer, (str, os.PathLike)):
            self.tokenizer: object = os.fspath(tokenizer)
        else:
            self.tokenizer = tokenizer
        self.mask = _coerce_mask(mask)
        self.errors = errors
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
        """Tokenize one record (a dict whose ``messages`` is a list of message objects) or a
        batch (a dict of columns, a pandas DataFrame or a pyarrow Table)."""
        records, single = _records(batch)
        results = self.tokenize_records(records)
        columns: dict[str, list[Any]] = {"input_ids": [], "labels": []}
        if self.errors == "keep":
            columns["error"] = []
        for result in results:
            if isinstance(result, Tokenized):
                columns["input_ids"].append(result.input_ids)
                columns["labels"].append(result.labels)
                if self.errors == "keep":
                    columns["error"].append(None)
            else:
                columns["input_ids"].append([])
                columns["labels"].append([])
                columns["error"].append(str(result))
        if single:
            return {name: values[0] for name, values in columns.items()}
        return columns

    def tokenize_records(
        self, records: Sequence[object], *, drop_nulls: bool = True
    ) -> list[Tokenized | PawletteError]:
        """Tokenize records; a bad record raises (``errors="raise"``) or is returned as its
        error (``errors="keep"``)."""
        pairs: list[object] = []
        failures: dict[int, PawletteError] = {}
        for number, record in enumerate(records):
            try:
                pairs.append(conversation_of_record(record, drop_nulls=drop_nulls))
            except Exception as error:
                failure = _record_error(error)
                if self.errors == "raise":
                    raise PawletteError(f"records[{number}]: {failure}") from error
                failures[number] = failure
                pairs.append(([], None))
        results = self.encoder.encode_batch(pairs, errors="return")
        for number, failure in failures.items():
            results[number] = failure
        if self.errors == "raise":
            for number, result in enumerate(results):
                if isinstance(result, PawletteError):
                    raise PawletteError(f"records[{number}]: {result}") from result
        return results


def _records(batch: Any) -> tuple[list[Any], bool]:
    """The records of a batch, and whether it was a single record."""
    if hasattr(batch, "to_pylist"):  # pyarrow Table or RecordBatch
        return list(batch.to_pylist()), False
    if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # pandas DataFrame
        return [_python(row) for row in batch.to_dict("records")], False
    if not isinstance(batch, Mapping):
        raise RequestError("batch", f"a {type(batch).__name__}", "a record or a batch of records")
    messages = _python(batch.get("messages"))
    if isinstance(messages, str) or (messages and isinstance(messages[0], Mapping)):
        record = {key: _python(value) for key, value in batch.items()}
        return [record], True
    columns = {key: _python(value) for key, value in batch.items()}
    count = len(messages or [])
    return [{key: values[row] for key, values in columns.items()} for row in range(count)], False
