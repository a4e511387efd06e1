"""Llama 3's calls as vLLM, SGLang and llama.cpp read them, beside the writing every bare
JSON call format shares (:class:`~pawlette.declare.JsonCalls` with ``open=None``).

- ``also_open``: other fences that start a call running to the end of the turn, where a
  call may open (``<|python_tag|>``, which models write and Meta's templates do not), read
  as the turn's bare calls are, and as below.
- ``ignored_members``: ``(key, value)`` members a model may add, read and dropped (an added
  ``"type": "function"``).
- ``joined_by``: separators a model writes between several calls (``;``, which vLLM and
  SGLang read as several calls).
- ``arguments_optional``: a call without arguments has ``{}`` (SGLang's reading).

Reading only: never written, and allowed by no grammar.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

from pawlette.declare import JsonCalls
from pawlette.declare.bare_calls import DECODER, BareCallReader
from pawlette.declare.pieces import Fence
from pawlette.declare.readers import CallReader, Described
from pawlette.declare.table import Table
from pawlette.engine.call_arguments import load_json
from pawlette.engine.machine import Parser, Reader
from pawlette.engine.readers import CallEnvelope


@dataclass(frozen=True)
class Llama3Calls(JsonCalls):
    """:class:`~pawlette.declare.JsonCalls` read as the module says."""

    also_open: tuple[Fence, ...] = ()
    ignored_members: tuple[tuple[str, str], ...] = ()
    joined_by: tuple[str, ...] = ()
    arguments_optional: bool = False

    @property
    def envelope(self) -> CallEnvelope:
        return replace(super().envelope, ignored=self.ignored_members)

    def bare_reader(self) -> Callable[[Parser], Reader]:
        return bare_call_reader(self.envelope, self.joined_by, self.arguments_optional)

    def tagged_reader(self) -> Callable[[Parser], Reader]:
        """The reader of a call opened by one of ``also_open``: it runs to the end of the
        turn."""
        if self.joined_by or self.arguments_optional:
            return lenient_call_reader(self.envelope, self.joined_by, self.arguments_optional)
        return self.json_reader("the end", joined=True)

    def rows(self, table: Table) -> None:
        super().rows(table)
        if not self.also_open:
            return
        texts = tuple(table.call_states)
        table.state("assistant.tagged_call", self.tagged_reader(), "assistant", ends=True)
        for pieces in self.also_open:
            for state in texts:
                table.on(state, table.text(pieces), "assistant.tagged_call")


def _refuse_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key written twice")
    return dict(pairs)


def _has_duplicate_key(text: str) -> bool:
    """Whether an object anywhere in ``text`` holds a key twice (``json`` keeps the last:
    read so, the first would be silently lost)."""
    try:
        json.loads(text, object_pairs_hook=_refuse_duplicates)
    except ValueError:
        return True
    return False


def joined_calls(
    text: str, envelope: CallEnvelope, separators: tuple[str, ...], optional_arguments: bool
) -> list[tuple[str, str]] | None:
    """The calls in ``text`` when it is call objects joined by ``separators`` (``;``) with
    whitespace around them, a call without arguments meaning ``{}`` when
    ``optional_arguments``; None when it is not (then it is malformed as written)."""
    calls: list[tuple[str, str]] = []
    position = 0
    allowed = {envelope.name, *envelope.arguments_keys, *(key for key, _ in envelope.ignored)}
    while True:
        position = len(text) - len(text[position:].lstrip()) if position < len(text) else position
        if position >= len(text):
            break
        try:
            _, end = DECODER.raw_decode(text, position)
        except (ValueError, RecursionError):  # (json recurses per level of nesting)
            return None
        value, problem = load_json(text[position:end])
        if problem is None and _has_duplicate_key(text[position:end]):
            problem = "a key written twice"
        if problem is not None or not isinstance(value, dict) or not allowed.issuperset(value):
            return None
        name = value.get(envelope.name)
        present = [key for key in envelope.arguments_keys if key in value]
        if not isinstance(name, str) or not name or len(present) > 1:
            return None
        if not present and not optional_arguments:
            return None
        arguments = value[present[0]] if present else {}
        if not isinstance(arguments, dict):
            return None
        if any(key in value and value[key] != fixed for key, fixed in envelope.ignored):
            return None
        calls.append((name, json.dumps(arguments, ensure_ascii=False)))
        rest = text[end:].lstrip()
        separator = next((item for item in separators if rest.startswith(item)), None)
        if separator is None:
            if rest:
                return None
            break
        position = len(text) - len(rest) + len(separator)
    return calls or None


class LenientCallReader(CallReader):
    """A JSON call closed by the end of its turn that also reads several calls joined by
    ``separators`` and a call without arguments (``optional_arguments``), as vLLM and SGLang
    read Llama 3's; anything else is malformed as for the declared spelling."""

    def __init__(
        self,
        parser: Parser,
        envelope: CallEnvelope,
        close: str,
        separators: tuple[str, ...],
        optional_arguments: bool,
    ) -> None:
        super().__init__(parser, envelope, close, ends_turn=True)
        self._separators = separators
        self._optional = optional_arguments

    def recover(self, text: str) -> list[tuple[str, str | None, str]] | None:
        calls = joined_calls(text, self._envelope, self._separators, self._optional)
        return None if calls is None else [(name, None, arguments) for name, arguments in calls]


def lenient_call_reader(
    envelope: CallEnvelope, separators: tuple[str, ...], optional_arguments: bool
) -> Callable[[Parser], Reader]:
    return Described(
        "JSON calls read leniently",
        lambda parser: LenientCallReader(
            parser, envelope, "the end of the turn", separators, optional_arguments
        ),
        optional_arguments=optional_arguments,
    )


def bare_call_reader(
    envelope: CallEnvelope, separators: tuple[str, ...] = (), optional_arguments: bool = False
) -> Callable[[Parser], Reader]:
    reads = lenient_call_reader(envelope, separators, optional_arguments)
    return Described(
        "text or bare JSON calls read leniently",
        lambda parser: BareCallReader(parser, envelope, optional_arguments, reads=reads),
        optional_arguments=optional_arguments,
    )
