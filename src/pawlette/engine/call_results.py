"""Pairing results with calls by position, for formats that write no call ids.

ChatGLM3 and Breeze never write a call's id: a result answers the call at the same position
among the latest assistant message's calls.  Readers that start calls :func:`remember_call`;
readers of tool results ask :func:`next_result_call_id` for the id of the call they answer
(None once every call has its result, or before any call).  The ids are the parser's own
(``call_0``, ``call_1``, ... when parsing a conversation), kept in ``parser.shared``.
"""

from __future__ import annotations

from .machine import Parser

_CALLS = "call_results.calls"
_ANSWERED = "call_results.answered"


def remember_call(parser: Parser, call_id: str) -> None:
    """A call has started in the current message (after ``parser.next_call_index()``)."""
    if parser.calls_in_message <= 1:  # the first call of a message starts a new round
        parser.shared[_CALLS] = []
        parser.shared[_ANSWERED] = 0
    parser.shared[_CALLS].append(call_id)


def forget_call(parser: Parser) -> None:
    """The call last remembered turned out malformed: it is no call, no result answers it."""
    calls: list[str] = parser.shared.get(_CALLS, [])
    if calls:
        calls.pop()


def next_result_call_id(parser: Parser) -> str | None:
    """The id of the call the next result answers, in call order (None: no call left)."""
    calls: list[str] = parser.shared.get(_CALLS, [])
    answered: int = parser.shared.get(_ANSWERED, 0)
    parser.shared[_ANSWERED] = answered + 1
    return calls[answered] if answered < len(calls) else None
