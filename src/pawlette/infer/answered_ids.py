"""A call list that writes each call's id once the call is answered (Apriel 1.5 and 1.6).

Their templates write a turn of calls as a JSON list of ``{"name": ..., "arguments": ...}``
objects when it ends the conversation (what the model writes), and with ``"id": ...`` after
the arguments when something follows it.  The calls stage sees the last turn alone and
derives the list without ids; the results stage sees the ids appear.  Where a result changes
the turn of calls before it by exactly that, the list is declared as Apriel's family declares
it (:class:`~pawlette.formats.apriel.calls.IdsBeforeLast`: the ids in every message but the
conversation's last), and verification checks it on generated conversations.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..declare import JsonCallList
from ..formats.apriel.calls import IdsBeforeLast
from .draft import Draft

__all__ = ["ids_once_answered"]


def ids_once_answered(
    draft: Draft, base: str, written: str, before: Sequence[Mapping[str, Any]]
) -> str | None:
    """What ``written`` adds after ``base`` (the render of ``before``, which ends with a turn
    of calls) where the only other change is each of those calls' id written after its
    arguments, the draft's call list then made to write them so; None: some other change."""
    found = [
        (number, concept)
        for number, concept in enumerate(draft.concepts)
        if isinstance(concept, JsonCallList)
    ]
    if len(found) != 1 or not before:
        return None
    number, concept = found[0]
    roles = [role for role, _ in concept.keys]
    if "id" in roles and not isinstance(concept, IdsBeforeLast):
        return None  # (the ids are written everywhere: not this change)
    plain = dataclasses.replace(
        concept, keys=tuple((role, key) for role, key in concept.keys if role != "id")
    )
    answered = IdsBeforeLast(
        **{field.name: getattr(plain, field.name) for field in dataclasses.fields(plain)}
    )
    answered = dataclasses.replace(answered, keys=(*plain.keys, ("id", "id")))
    expected = base
    for item in before[-1].get("tool_calls") or ():
        function = item["function"]
        arguments = json.dumps(json.loads(function["arguments"]), ensure_ascii=False)
        last = plain.item(function["name"], str(item["id"]), arguments)
        if expected.count(last) != 1:
            return None
        expected = expected.replace(
            last, answered.item(function["name"], str(item["id"]), arguments)
        )
    if expected == base or not written.startswith(expected):
        return None
    if not isinstance(concept, IdsBeforeLast):
        said = next((item for item in draft.capabilities if item.name == "tool calls"), None)
        if said is not None:
            draft.capability(
                said.name,
                said.status,
                f"{said.detail}, each with its id after the arguments but in the "
                "conversation's last message (the template writes it once the call is answered)",
            )
    draft.concepts[number] = answered
    return written[len(expected) :]
