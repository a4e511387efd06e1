"""JSON calls whose close the end of the turn may replace, as vLLM's hermes parser reads
Hermes' calls: a call whose close (``</tool_call>``) never comes is still a call when its
object is whole at the end of the turn (an engine may cut the close as a stop string, or the
model end its turn after the object).  Hermes, Bielik and Reka Edge read their calls so."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.machine import ReaderFactory
from ..engine.readers import CallEnvelope
from .json_calls import JsonCalls
from .readers import CallReader, Described


@dataclass(frozen=True)
class CloseOptionalCalls(JsonCalls):
    """:class:`~pawlette.declare.JsonCalls` whose close the end of the turn may replace: a call
    whose close never comes is still a call when its object is whole at the end of the turn.

    Fields: those of :class:`~pawlette.declare.JsonCalls`, each meaning what it means there
    (``help(JsonCalls)``): ``open``, ``close``, ``separator``, ``name_key``,
    ``arguments_key``, ``id_key``, ``arguments``, ``parallel``, ``with_content``, ``loose``,
    ``also_arguments_keys``, ``text_after``, ``drops_content``, ``drops_calls``,
    ``first_only``, ``ascii`` and ``also_open``."""

    def closed_call_reader(self, close: str, closes: frozenset[str]) -> tuple[ReaderFactory, bool]:
        if not close:
            return super().closed_call_reader(close, closes)
        return optional_close_reader(self.envelope, close, closes), True


def optional_close_reader(
    envelope: CallEnvelope, close: str, also_close: frozenset[str]
) -> ReaderFactory:
    """A JSON call closed by ``close`` (or ``also_close``), or by the end of the turn."""
    closes = also_close | {close}
    make: ReaderFactory = lambda parser: CallReader(parser, envelope, close, closes, True)  # noqa: E731
    return Described("JSON call, its close optional", make, close=close)
