"""Tool results written as one list (breeze's ``ipython`` turn), in the order of the calls.

Formats that write no call ids answer a round of calls with one list: the result of the first
call first.  :func:`results_in_call_order` puts OpenAI tool messages in that order (matched by
``tool_call_id``; a call without a result leaves a ``None`` slot, as MediaTek's
``MRPromptV3`` writes it; messages matching no call follow, in their order).

A result is written as a value: :func:`result_value` reads a tool message's content as JSON
when it is JSON (other than a JSON string), else keeps the text; :func:`result_text` is the
way back, so ``{"a":1}`` comes back as ``{"a": 1}`` and any other text exactly.

>>> result_value('{"temperature": 22}'), result_value("22°C, sunny")
({'temperature': 22}, '22°C, sunny')
>>> result_text({"temperature": 22})
'{"temperature": 22}'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..types import Message


def results_in_call_order(run: Sequence[Message], call_ids: Sequence[str]) -> list[Message | None]:
    """The tool messages of ``run`` in the order of ``call_ids`` (see the module docstring)."""
    slots: list[Message | None] = [None] * len(call_ids)
    extra: list[Message] = []
    for message in run:
        free = [k for k, call_id in enumerate(call_ids) if call_id == message.tool_call_id]
        free = [k for k in free if slots[k] is None]
        if free:
            slots[free[0]] = message
        else:
            extra.append(message)
    return [*slots, *extra]


def result_value(content: str) -> Any:
    """A result's content as the value to write: its JSON value, or the text itself."""
    try:
        value = json.loads(content)
        json.dumps(value, allow_nan=False)  # NaN and infinities are not JSON values
    except ValueError:
        return content
    return content if isinstance(value, str) else value


def result_text(value: Any) -> str:
    """A written result as a tool message's content (the inverse of :func:`result_value`)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
