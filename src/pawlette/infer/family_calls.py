"""Calls written as a declared family writes them, in a syntax no generic concept reads.

Each candidate is a family's calls concept with its section fences left open: it writes the
probe calls alone, and where a turn of calls holds exactly that text (between fences found
around it, one call and two alike), the concept is declared with those fences.  Kimi K3's
tagged calls are one: ``<|open|>call tool="NAME" index="1"<|sep|>`` then a tag per
argument typed by its value, numbered per turn (no generic concept numbers calls so).
Apertus' ``[{"NAME": ARGUMENTS}, ...]`` is another: read as named calls, the arguments would
end at their own ``}``.  Kimi K2's ``functions.NAME:N`` labels, N counting the turn's calls,
are a third: generic named calls would keep the ``:0`` of the first call as literal text.
MiniMax-M3's ``<invoke name="NAME">`` with a tag named by each argument's key (``<city>Paris
</city>``, objects and arrays nested as tags) is a fourth: a key is written twice, in its open
and close tags, which no generic concept writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..declare import Frame, Layout, Marker, declare, fence
from ..declare.concept import Concept
from ..declare.pieces import Fence
from ..errors import PawletteError
from ..formats.apertus.calls import NameKeyedCalls
from ..formats.gemma4 import CALL, CALL_END
from ..formats.gemma4.concepts import GemmaCalls
from ..formats.kimi import ARGUMENTS as KIMI_ARGUMENTS
from ..formats.kimi import CALL as KIMI_CALL
from ..formats.kimi import CALL_END as KIMI_CALL_END
from ..formats.kimi.concepts import CallLabel, LabelledCalls
from ..formats.kimi.k3 import TaggedCalls
from ..formats.minimax_m2 import key_tag_calls
from .draft import Draft

__all__ = ["derive_family_calls"]

Make = Callable[[Fence, Fence], Concept]


@dataclass(frozen=True)
class Candidate:
    """A family's calls concept, by ``name``, made from its section fences (``make``).
    ``opened``: each call opens with a marker of its own, so the calls need no section
    opener to be read (else the text before the first call must be one)."""

    name: str
    make: Make
    opened: bool = False


def _gemma_calls(section_open: Fence, section_close: Fence) -> Concept:
    return GemmaCalls(
        open=fence(CALL, "call:"),
        arguments_open=fence("{"),
        close=fence("}", CALL_END),
        section_open=section_open,
        section_close=section_close,
    )


def _labelled_calls(section_open: Fence, section_close: Fence) -> Concept:
    return LabelledCalls(
        section_open=section_open,
        section_close=section_close,
        open=fence(KIMI_CALL),
        arguments_open=fence(KIMI_ARGUMENTS),
        close=fence(KIMI_CALL_END),
        label=CallLabel(prefix="functions.", separator=":", count="turn"),
    )


CANDIDATES: tuple[Candidate, ...] = (
    Candidate(
        "tagged calls (Kimi K3)",
        lambda section_open, section_close: TaggedCalls(section_open, section_close),
    ),
    Candidate("calls in Gemma 4's value syntax", _gemma_calls, opened=True),
    Candidate(
        "a JSON list of objects keyed by the function's name (Apertus)",
        lambda section_open, section_close: NameKeyedCalls(open=section_open, close=section_close),
    ),
    Candidate("calls labelled functions.NAME:N, numbered per turn (Kimi K2)", _labelled_calls),
    Candidate("a tag named by each key, nested for objects and arrays (MiniMax-M3)", key_tag_calls),
)
"""The families' calls concepts inference tries."""

_OPEN, _CLOSE = Marker("<zq_open>"), Marker("<zq_close>")


def _written(make: Make, calls: list[dict[str, Any]]) -> str | None:
    """What the concept writes for ``calls`` alone (None: it refuses them)."""
    frame = {
        "user": Frame(open=fence(Marker("<zq_user>")), end=fence(Marker("</zq_user>"))),
        "assistant": Frame(open=fence(Marker("<zq_turn>")), end=fence(Marker("</zq_turn>"))),
    }
    try:
        fmt = declare(
            Layout(
                name="probe-calls",
                summary="a family's calls alone",
                frames=frame,
                concepts=(make(fence(_OPEN), fence(_CLOSE)),),
            )
        )
        text = fmt.render(
            [{"role": "user", "content": "u"}, {"role": "assistant", "tool_calls": calls}]
        ).text
    except (PawletteError, TypeError, ValueError, LookupError):
        return None
    start, end = text.find(_OPEN.text), text.rfind(_CLOSE.text)
    return None if start < 0 or end < 0 else text[start + len(_OPEN.text) : end]


def derive_family_calls(
    draft: Draft,
    single: str,
    pair: str | None,
    with_text: str | None,
    first: dict[str, Any],
    second: dict[str, Any],
) -> bool:
    """Declare the first candidate whose calls the turn of one call (``single``, its body)
    and of two (``pair``) hold; whether one was.  Text beside the calls (``with_text``: the
    body of a turn of ``Za1q`` and one call) is derived written before them; written after
    them (Gemma 4's), it is not derived (no concept writes it there)."""
    for candidate in CANDIDATES:
        make = candidate.make
        items = _written(make, [first])
        if not items or single.count(items) != 1:
            continue
        at = single.find(items)
        section_open, section_close = single[:at], single[at + len(items) :]
        both = _written(make, [first, second])
        if pair is not None and (both is None or pair != section_open + both + section_close):
            continue
        if not section_open and not candidate.opened:
            continue  # (reading needs a fence where calls start)
        after = with_text is not None and with_text == single + "Za1q"
        if with_text is not None and with_text != "Za1q" + single and not after:
            continue  # (the text goes before the calls, or after them)
        draft.concepts.append(make(draft.fence(section_open), draft.fence(section_close)))
        name = candidate.name
        if pair is not None:
            draft.capability("parallel tool calls", "derived", "calls written one after another")
        else:
            draft.capability(
                "parallel tool calls", "refused", "the template refuses several calls in a turn"
            )
        if after:
            draft.capability(
                "text with tool calls",
                "not derived",
                "the template writes the text after the calls, where a model writes it before "
                "them (needs concept: text written after calls)",
            )
        elif with_text is not None:
            draft.capability(
                "text with tool calls", "derived", "the text is written before the calls"
            )
        draft.capability("tool calls", "derived", f"{name}, in {section_open!r}")
        return True
    return False
