"""The date a template reads from its clock, found and declared as an option.

A template that calls ``strftime_now`` writes the day it is rendered on.  Inference renders it
on two days and compares: the text that changed is the date, and its format is read back from
the text (``26 Jul 2024`` is ``%d %b %Y``) and checked on a third day.  The declaration then
writes the date from its ``today`` option (:class:`~pawlette.declare.Option`), never from the
clock.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Callable
from typing import Any

from ..declare import Layout
from ..declare.pieces import Fence, Lit, Marker, Option

__all__ = ["OTHER_DAYS", "date_format", "with_date_option"]

OTHER_DAYS = (datetime.date(2025, 11, 3), datetime.date(2023, 2, 14))
"""Days on which a template's date is read again: every part differs from the default's."""

_ALNUM = re.compile(r"[0-9A-Za-z]")


def _parts(day: datetime.date) -> list[tuple[str, str]]:
    """The texts a format writes for ``day``, longest first, with their directives."""
    moment = datetime.datetime.combine(day, datetime.time())
    parts = [
        ("%Y", moment.strftime("%Y")),
        ("%B", moment.strftime("%B")),
        ("%A", moment.strftime("%A")),
        ("%b", moment.strftime("%b")),
        ("%a", moment.strftime("%a")),
        ("%m", moment.strftime("%m")),
        ("%d", moment.strftime("%d")),
        ("%y", moment.strftime("%y")),
    ]
    return sorted(parts, key=lambda item: len(item[1]), reverse=True)


def _format_of(text: str, day: datetime.date) -> str:
    """``text`` as a strftime format for ``day`` (its date parts as directives)."""
    parts = _parts(day)
    result: list[str] = []
    position = 0
    while position < len(text):
        for directive, written in parts:
            if written and text.startswith(written, position):
                before = text[position - 1] if position else ""
                after = text[position + len(written) : position + len(written) + 1]
                # A number inside a longer number is not a date part ("2024" in "120248").
                if written.isdigit() and (before.isdigit() or after.isdigit()):
                    continue
                result.append(directive)
                position += len(written)
                break
        else:
            result.append(text[position].replace("%", "%%"))
            position += 1
    return "".join(result)


def _written(day: datetime.date, date_format: str) -> str:
    return datetime.datetime.combine(day, datetime.time()).strftime(date_format)


def date_format(render: Callable[[datetime.date], str | None], today: datetime.date) -> str | None:
    """The strftime format of the date the template writes (None: no date found).

    ``render`` renders the same conversation with the clock at a given day."""
    renders: dict[datetime.date, str | None] = {}

    def at(day: datetime.date) -> str | None:
        if day not in renders:
            renders[day] = render(day)
        return renders[day]

    first, second = at(today), at(OTHER_DAYS[0])
    if first is None or second is None or first == second:
        return None
    start = 0
    while start < min(len(first), len(second)) and first[start] == second[start]:
        start += 1
    end_first, end_second = len(first), len(second)
    while (
        end_first > start and end_second > start and first[end_first - 1] == second[end_second - 1]
    ):
        end_first -= 1
        end_second -= 1
    # Widen to whole words and numbers ("2024-07-26" and "2025-11-03" share "202"), then
    # word by word: parts the two days share ("2025") are part of the date too.
    while start > 0 and _ALNUM.match(first[start - 1]):
        start -= 1
    while end_first < len(first) and _ALNUM.match(first[end_first]):
        end_first += 1
    before = [match.start() for match in _WORD.finditer(first, max(0, start - 24), start)]
    after = [match.end() for match in _WORD.finditer(first, end_first, end_first + 24)]
    starts = [start, *reversed(before)]
    ends = [end_first, *after]
    for left in starts:
        for right in ends:
            candidate = _format_of(first[left:right], today)
            if "%" not in candidate.replace("%%", ""):
                continue
            if all(_same(at(day), first, day, today, candidate) for day in OTHER_DAYS):
                return candidate
    return None


_WORD = re.compile(r"[0-9A-Za-z]+")


def _same(
    again: str | None, first: str, day: datetime.date, today: datetime.date, candidate: str
) -> bool:
    if again is None:
        return False
    return again.replace(_written(day, candidate), _written(today, candidate)) == first


def _with_option(pieces: Fence, written: str, option: Option) -> Fence:
    result: list[Any] = []
    for piece in pieces:
        if isinstance(piece, Lit) and written in piece.text:
            parts = piece.text.split(written)
            for number, part in enumerate(parts):
                if number:
                    result.append(option)
                if part:
                    result.append(Lit(part))
        else:
            result.append(piece)
    return tuple(result)


def _is_fence(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and bool(value)
        and all(isinstance(piece, (Marker, Lit, Option)) for piece in value)
    )


def _replace(value: Any, change: Callable[[Fence], Fence], written: str) -> Any:
    if _is_fence(value):
        return change(value)
    if isinstance(value, str) and written in value:
        return change((Lit(value),))
    if isinstance(value, tuple):
        return tuple(_replace(item, change, written) for item in value)
    if isinstance(value, dict):
        return {key: _replace(item, change, written) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            item.name: _replace(getattr(value, item.name), change, written)
            for item in dataclasses.fields(value)
            if item.init and item.name not in ("options", "name", "summary", "notes", "today")
        }
        changed = {key: item for key, item in changes.items() if item != getattr(value, key)}
        return dataclasses.replace(value, **changed) if changed else value
    return value


def with_date_option(layout: Layout, today: datetime.date, date_format: str) -> Layout:
    """``layout`` with every text of ``today`` written as ``date_format`` made the
    ``today`` option."""
    written = _written(today, date_format)
    option = Option("today", date_format)
    result: Layout = _replace(layout, lambda pieces: _with_option(pieces, written, option), written)
    return result


def derive_date(probe: Any, draft: Any) -> None:
    """The date the template writes from its clock, as the ``today`` option."""
    from .probe import message
    from .tools import PROBE_TOOLS

    runner = probe.runner
    if not runner.read_clock:
        return
    user = [message("user", probe.sentinel("u", 1))]
    today = runner.today
    found = None
    for tools in (None, list(PROBE_TOOLS)):

        def render(day: datetime.date, tools: Any = tools) -> str | None:
            runner.today = day
            try:
                written: str | None = runner.text(user, tools)
                return written
            finally:
                runner.today = today

        found = date_format(render, today)
        if found is not None:
            break
    if found is None:
        draft.notes.append(
            "The template reads its clock; no date written as the probes show was found, so "
            f"its text is declared as written on {today.isoformat()}."
        )
        return
    draft.date_format = found
    draft.today = today
    draft.capability(
        "date", "derived", f"the template writes today's date as {found!r}: the today option"
    )
