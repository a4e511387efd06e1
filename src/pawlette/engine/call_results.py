"""Pairing results with calls by position, for formats that write no call ids.

ChatGLM3 and Breeze never write a call's id: a result answers the call at the same position
among the latest assistant message's calls.  Readers that start calls :func:`remember_call`;
readers of tool results ask :func:`next_result_call_id` for the id of the call they answer
(None once every call has its result, or before any call).  The ids are the parser's own
(``call_0``, ``call_1``, ... when parsing a conversation), kept in the parser's
:class:`CallRound` context.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .machine import Parser


@dataclass
class CallRound:
    """The ids of the latest assistant message's calls, and how many results answered them."""

    calls: list[str] = field(default_factory=list)
    answered: int = 0


def remember_call(parser: Parser, call_id: str) -> None:
    """A call has started in the current message (after ``parser.next_call_index()``)."""
    round_ = parser.context(CallRound)
    if parser.calls_in_message <= 1:  # the first call of a message starts a new round
        round_.calls = []
        round_.answered = 0
    round_.calls.append(call_id)


def forget_call(parser: Parser) -> None:
    """The call last remembered turned out malformed: it is no call, no result answers it."""
    calls = parser.context(CallRound).calls
    if calls:
        calls.pop()


def next_result_call_id(parser: Parser) -> str | None:
    """The id of the call the next result answers, in call order (None: no call left)."""
    round_ = parser.context(CallRound)
    answered = round_.answered
    round_.answered = answered + 1
    return round_.calls[answered] if answered < len(round_.calls) else None
