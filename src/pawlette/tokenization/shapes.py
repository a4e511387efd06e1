"""Where a record keeps its conversation, and what to drop that a format cannot express.

**Record shapes** (:class:`RecordShape`):

- OpenAI chat completions (default): ``{"messages": [...], "tools": [...]}``; another key for
  the messages with ``messages_field`` (``--messages-field``).
- ShareGPT (``sharegpt=True``, ``--sharegpt``), as LLaMA-Factory and Axolotl read it:
  ``{"conversations": [{"from": "human", "value": "..."}, ...], "system": "...", "tools":
  "[...]"}``.  ``from`` is ``system``, ``human`` (or ``user``), ``gpt`` (or ``assistant``),
  ``function_call`` (its value a JSON call ``{"name", "arguments"}`` or a list of them: an
  assistant message with tool calls, ids ``call_<turn>_<n>``) or ``observation`` (or
  ``tool``: the result of the oldest call not yet answered).  A record's ``system`` string is
  a system message before the turns; ``tools`` (a list, or its JSON text) may hold bare
  function definitions, which are wrapped as ``{"type": "function", "function": ...}``.  A
  turn's ``weight`` is kept.

**Drop policies** (:data:`DROPPABLE`): a feature a format refuses (``UnsupportedFeature`` at
``messages[i].<key>``) can be dropped from that message instead of rejecting the record:

- ``reasoning``: ``reasoning_content`` and ``reasoning_steps`` (breeze, ChatGLM3 have no
  reasoning block);
- ``name``: a message's ``name`` (breeze has no names; ChatGLM3 none on assistant messages);
- ``metadata``: a message's ``metadata`` pairs (breeze, ChatGLM3);
- ``tools``: the record's tool listing, where the format has no tools block
  (``UnsupportedFeature`` at ``tools``; a format that cannot write one tool refuses the
  record still).

A feature is dropped only where the format refuses it (PCML keeps reasoning it can write), and
every drop is counted.  A format whose template leaves a feature out (DeepSeek V3.1's and
Gemma's ``tools``, most formats' user ``name``) renders the record without it and reports the
loss (:mod:`.losses`); dropping that feature makes its loss expected.  Everything else a
format cannot express is refused, record by record, with its reason: content parts other than
text (an image the text refers to cannot be removed without changing the text's meaning), text
beside tool calls (breeze), tools that are not functions, multi-line names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RequestError, UnsupportedFeature
from ..json_values import show

__all__ = ["DROPPABLE", "RecordShape", "droppable_feature", "parse_drop", "without_feature"]

DROPPABLE: dict[str, tuple[str, ...]] = {
    "reasoning": ("reasoning_content", "reasoning_steps"),
    "name": ("name",),
    "metadata": ("metadata",),
    "tools": (),
}
"""Each feature that can be dropped, and the message keys that hold it (``tools``: none, it is
the record's listing)."""
TOOLS = "tools"

_FEATURE_OF_KEY = {key: feature for feature, keys in DROPPABLE.items() for key in keys}
_REFUSED_PATH = re.compile(r"messages\[(\d+)\]\.(\w+)$")

SHAREGPT_ROLES = {
    "system": "system",
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "function_call": "function_call",
    "observation": "tool",
    "tool": "tool",
}


def comma_words(spec: str | Iterable[str] | None, option: str, expected: str) -> frozenset[str]:
    """The words of a command-line list (``"reasoning,name"``) or of an iterable of strings,
    stripped, empty ones left out; anything else is an error naming ``option``."""
    if spec is None:
        return frozenset()
    words = spec.split(",") if isinstance(spec, str) else None
    if words is None and isinstance(spec, Iterable):
        words = list(spec)
    if words is None or not all(isinstance(word, str) for word in words):
        raise RequestError(option, f"found {show(spec)}", expected)
    return frozenset(word.strip() for word in words if word.strip())


def parse_drop(spec: str | Iterable[str] | None) -> frozenset[str]:
    """The features to drop, from ``"reasoning,name"`` or an iterable of names."""
    found = comma_words(spec, "drop", '"reasoning,name" or a set of names')
    unknown = sorted(found - DROPPABLE.keys())
    if unknown:
        raise RequestError(
            "drop", f"found {', '.join(map(repr, unknown))}", "among " + ", ".join(DROPPABLE)
        )
    return found


def droppable_feature(error: object, drop: frozenset[str]) -> tuple[int | None, str] | None:
    """``(message index, feature)`` when ``error`` is a refusal the ``drop`` policy covers
    (the index None for the tool listing)."""
    if not drop or not isinstance(error, UnsupportedFeature):
        return None
    if error.path == TOOLS:  # (a refused tool, tools[0].type, is no refusal of the listing)
        return (None, TOOLS) if TOOLS in drop else None
    match = _REFUSED_PATH.match(error.path)
    if match is None:
        return None
    feature = _FEATURE_OF_KEY.get(match.group(2))
    if feature is None or feature not in drop:
        return None
    return int(match.group(1)), feature


def without_feature(
    conversation: tuple[object, object], index: int | None, feature: str
) -> tuple[object, object] | None:
    """A copy of ``(messages, tools)`` whose message ``index`` lacks ``feature`` (``tools``:
    without its tools); None: nothing to drop there, so the refusal stands."""
    messages, tools = conversation
    if feature == TOOLS:
        return (messages, None) if tools else None
    if not isinstance(messages, list) or index is None or not 0 <= index < len(messages):
        return None
    message = messages[index]
    if not isinstance(message, Mapping):
        return None
    keys = DROPPABLE[feature]
    if not any(key in message for key in keys):
        return None
    copy = list(messages)
    copy[index] = {key: value for key, value in message.items() if key not in keys}
    return copy, tools


@dataclass(frozen=True)
class RecordShape:
    """Where a record keeps its messages and tools (see the module docstring)."""

    messages_field: str | None = None
    """The key of the messages (default ``messages``; ``conversations`` for ShareGPT)."""
    tools_field: str = "tools"
    sharegpt: bool = False

    @property
    def field(self) -> str:
        return self.messages_field or ("conversations" if self.sharegpt else "messages")

    def conversation(self, record: object, *, drop_nulls: bool = False) -> tuple[object, object]:
        """``(messages, tools)`` of a record, as OpenAI JSON."""
        field = self.field
        if not isinstance(record, Mapping):
            raise RequestError("record", f"a JSON {json_kind(record)}", f"an object with {field!r}")
        if field not in record:
            keys = ", ".join(sorted(map(str, record))) or "none"
            hint = ""
            if not self.sharegpt and "conversations" in record:
                hint = "A ShareGPT record (conversations/from/value): use --sharegpt"
            elif self.sharegpt and "messages" in record:
                hint = "An OpenAI record (messages/role/content): leave out --sharegpt"
            raise RequestError("record", f"keys {keys}", f"a {field!r} list", hint)
        messages = maybe_json(record[field], field)
        tools = maybe_json(record.get(self.tools_field), self.tools_field)
        if drop_nulls:
            messages = without_nulls(messages)
            tools = without_nulls(tools)
        if not isinstance(messages, list):
            raise RequestError(field, f"a JSON {json_kind(messages)}", "a list of messages")
        if not messages:
            raise RequestError(field, "an empty list", "at least one message")
        if self.sharegpt:
            system = record.get("system")
            if system is not None and not isinstance(system, str):  # never dropped silently
                raise RequestError("system", f"a JSON {json_kind(system)}", "a string")
            messages = _from_sharegpt(messages, field, system or "")
            tools = _function_tools(tools)
        return messages, tools


def _from_sharegpt(turns: list[Any], field: str, system: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    unanswered: list[str] = []
    for number, turn in enumerate(turns):
        path = f"{field}[{number}]"
        if not isinstance(turn, Mapping):
            raise RequestError(path, f"a JSON {json_kind(turn)}", "an object with from and value")
        speaker = turn.get("from")
        role = SHAREGPT_ROLES.get(speaker) if isinstance(speaker, str) else None
        if role is None:
            raise RequestError(
                f"{path}.from", f"found {show(speaker)}", "one of " + ", ".join(SHAREGPT_ROLES)
            )
        value = turn.get("value")
        if not isinstance(value, str):
            raise RequestError(f"{path}.value", f"a JSON {json_kind(value)}", "a string")
        message: dict[str, Any]
        if role == "function_call":
            calls = maybe_json(value, f"{path}.value")
            listed = calls if isinstance(calls, list) else [calls]
            if not listed:  # else an assistant turn with nothing in it, learned as an answer
                raise RequestError(f"{path}.value", "an empty list", "at least one call")
            tool_calls = []
            for position, call in enumerate(listed):
                where = f"{path}.value" + (f"[{position}]" if isinstance(calls, list) else "")
                if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                    raise RequestError(where, f"a JSON {json_kind(call)}", '{"name", "arguments"}')
                arguments = call.get("arguments", {})
                identifier = f"call_{number}_{position}"
                unanswered.append(identifier)
                tool_calls.append(
                    {
                        "id": identifier,
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": arguments
                            if isinstance(arguments, str)
                            else json.dumps(arguments, ensure_ascii=False),
                        },
                    }
                )
            message = {"role": "assistant", "tool_calls": tool_calls}
        elif role == "tool":
            if not unanswered:
                raise RequestError(
                    f"{path}.from", f"found {speaker!r}", "a function_call before an observation"
                )
            message = {"role": "tool", "tool_call_id": unanswered.pop(0), "content": value}
        else:
            message = {"role": role, "content": value}
        if "weight" in turn:
            message["weight"] = turn["weight"]
        messages.append(message)
    return messages


def _function_tools(tools: object) -> object:
    if not isinstance(tools, list):
        return tools
    return [
        tool
        if not isinstance(tool, Mapping) or "type" in tool or "function" in tool
        else {"type": "function", "function": dict(tool)}
        for tool in tools
    ]


def maybe_json(value: object, path: str) -> object:
    """A string value parsed as JSON (Arrow columns often hold JSON text); others as they are."""
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


def json_kind(value: object) -> str:
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


def without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, (list, tuple)):
        return [without_nulls(item) for item in value]
    return value
