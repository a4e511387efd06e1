"""The text of a past assistant turn cut after its reasoning's close, and stripped at its start.

QwQ's template writes every assistant message but the conversation's last as
``content.split('</think>')[-1].lstrip('\\n')``: the text after the last close of the
reasoning block, without the newlines at its start, in a turn of calls too.  The last
message is written whole.  :class:`~pawlette.declare.TextAfter` says it (``last=False``,
``strip``: the characters taken off).

Probes (``Za1q`` the past answer's text, ``Zx1q`` reasoning written into it)::

    [user, assistant "\\n" + Za1q]                 → the last turn keeps the newline
    [user, assistant "\\n" + Za1q, user]           → a past one loses it
    [user, assistant "Zx1q</think>" + Za1q, user]  → a past one keeps the text after the close
    [user, assistant "\\n" + Za1q + calls, tool, user], [..., tool, assistant "\\n" + Za1q, user]
                                                    → a turn of calls, a turn after results
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from ..declare import Reasoning, TextAfter
from .draft import Draft
from .probe import Probe, call, message
from .tools import PROBE_TOOLS

__all__ = ["derive_past_texts"]

_STRIPPED = ("\n", " ", "\t")
"""The characters tried one by one at the start of a past turn's text."""


def derive_past_texts(probe: Probe, draft: Draft) -> None:
    """:class:`~pawlette.declare.TextAfter` where the template writes a past assistant
    turn's text from after the reasoning's last (or first) close on, stripped at its start,
    and the last message's whole; nothing otherwise (a template that strips every turn's
    text is :mod:`.fields`'s, through ``Trimmed``)."""
    reasoning = next(
        (concept for concept in draft.concepts if isinstance(concept, Reasoning)), None
    )
    if reasoning is None or draft.skip("text of past assistant turns"):
        return
    separator = reasoning.content_markers[1]
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    user, later = message("user", u1), message("user", u2)

    def past(text: str) -> str | None:
        return probe.render([user, message("assistant", text), later])

    plain = past(a1)
    last_plain = probe.render([user, message("assistant", a1)])
    if not separator or plain is None or last_plain is None:
        return
    # The last message keeps what a past one loses: written whole.
    if probe.render([user, message("assistant", "\n" + a1)]) != last_plain.replace(a1, "\n" + a1):
        return
    stripped = "".join(character for character in _STRIPPED if past(character + a1) == plain)
    if "\n" not in stripped:
        return
    x1, x2 = probe.sentinel("x", 1), probe.sentinel("x", 2)
    if past(f"{x1}{separator}{a1}") != plain:
        return
    twice = past(f"{x1}{separator}{x2}{separator}{a1}")
    occurrence: Literal["first", "last"]
    if twice == plain:
        occurrence = "last"
    elif twice == past(f"{x2}{separator}{a1}"):
        occurrence = "first"
    else:
        return
    result = message("tool", probe.sentinel("t", 1), tool_call_id="c1")
    called = message("assistant", None, tool_calls=[_probe_call()])

    def with_calls(text: str) -> list[dict[str, Any]]:
        return [user, message("assistant", text, tool_calls=[_probe_call()]), result, later]

    def after_results(text: str) -> list[dict[str, Any]]:
        return [user, called, result, message("assistant", text), later]

    calls = _stripped(probe, with_calls, a1)
    answered = _stripped(probe, after_results, a1)
    draft.concepts.append(
        TextAfter(
            separator=separator,
            occurrence=occurrence,
            calls=calls,
            after_results=answered,
            last=False,
            strip=stripped,
        )
    )
    where = [
        *(["a turn of calls too"] if calls else ["not a turn of calls"]),
        *([] if answered else ["nor a turn right after results"]),
    ]
    draft.capability(
        "text of past assistant turns",
        "derived",
        f"written from after the {occurrence} {separator!r} in it on, without "
        f"{stripped!r} at its start, but for the conversation's last message ("
        + ", ".join(where)
        + "): a recorded loss where it changes the text",
    )


def _probe_call() -> dict[str, Any]:
    return call("c1", PROBE_TOOLS[0]["function"]["name"], {"zk1": "v1"})


def _stripped(probe: Probe, conversation: Callable[[str], list[dict[str, Any]]], a1: str) -> bool:
    """Whether the past turn of text ``a1`` that ``conversation`` builds loses a newline at
    the text's start as a past answer does (False: written whole, or the template refuses
    the conversation)."""
    tools = list(PROBE_TOOLS)
    newline = probe.render(conversation("\n" + a1), tools)
    return newline is not None and newline == probe.render(conversation(a1), tools)
