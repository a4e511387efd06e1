"""The OpenAI edge: the only module that knows OpenAI's chat JSON shapes.

Accepted input is what real clients send to ``/v1/chat/completions``: a request object with
``messages`` (and ``tools``), or a bare list of messages.  Output has the same shapes.

Extensions (fields OpenAI has no slot for) are explicit and documented here, never smuggled
into strings:

- message ``reasoning_content``: the model's reasoning text (the de-facto field of vLLM/DeepSeek).
- message ``reasoning_steps``: ``[{"title", "reasoning", "conclusion"}]``, structured thinking.
- message ``metadata``: ``{"key": "value"}`` string pairs a format can carry in its headers.
- message ``weight``: 0 or 1, whether an assistant message is learned in fine-tuning.
- ``developer`` role: read as ``system``.
- content part ``image_url``: the ``image_url`` object may carry ``width`` and ``height``, and
  ``tokens``: how many placeholder tokens the image takes (formats that expand images, breeze).
- content part ``{"type": "voice", "voice": {"text": ..., "prosody": {...}}}``.
- content part ``{"type": "action", "action": {"name": ..., "arguments": "<json>"}}``.
- content part ``{"type": "image_request", "image_request": {...}}``.
- content part ``{"type": "bbox", "bbox": {"boxes": [[x1, y1, x2, y2], ...]}}`` (0..1000).
- tool ``{"type": "action", "action": {name, description, parameters}}``: a fire-and-forget
  action; a function object may carry ``returns``, any JSON value (a JSON schema of its
  result as a rule; a format whose template cannot write a value refuses it).

Invalid input raises :class:`~pawlette.errors.RequestError` naming the JSON path: among it
a top-level key that is not a chat-completions key (:data:`REQUEST_KEYS`, plus
``add_generation_prompt`` when rendering; a misspelt ``tool`` would otherwise drop the tools
silently), an unknown key in a message or a call, a system, user or tool message without
``content``, text with a lone surrogate, and values no format can print (see
:mod:`pawlette.json_values`: ``NaN``, ``bytes``, non-string keys, integers too long to print,
nesting deeper than 100).
"""

from __future__ import annotations

import json
import json.scanner
import marshal
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar, cast

from .engine.json_text import PARSED_ARGUMENTS
from .engine.kept import Kept, shared_key
from .errors import RequestError
from .json_values import (
    MAX_INTEGER_DIGITS,
    MAX_JSON_DEPTH,
    check_json_value,
    check_text,
    json_value_problem,
    key_path,
    load_json_text,
    refuse_json_constant,
    show,
    surrogate_problem,
)
from .types import (
    ROLES,
    ActionPart,
    BoxPart,
    ContentPart,
    ImagePart,
    ImageRequestPart,
    Message,
    Role,
    TextPart,
    ThinkStep,
    Tool,
    ToolCall,
    VoicePart,
    new_message,
    new_text_message,
    new_text_part,
    new_tool,
    new_tool_call,
)

MAX_IMAGE_SIZE = 1 << 16
"""The largest ``image_url`` ``width``, ``height`` and ``tokens`` accepted (a placeholder count
beyond it would be a prompt of millions of tokens)."""

CHAT_REQUEST_KEYS = frozenset(
    {
        "messages",
        "model",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "stream",
        "stream_options",
        "temperature",
        "top_p",
        "n",
        "stop",
        "max_tokens",
        "max_completion_tokens",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "response_format",
        "seed",
        "user",
        "store",
        "metadata",
        "service_tier",
        "modalities",
        "audio",
        "prediction",
        "reasoning_effort",
        "verbosity",
        "web_search_options",
        "safety_identifier",
        "prompt_cache_key",
        "functions",
        "function_call",
    }
)
"""The top-level keys of OpenAI's chat-completions request."""

ENGINE_SAMPLING_KEYS = ("top_k", "min_p", "repetition_penalty")
"""Sampling keys OpenAI does not have that engines take (vLLM, SGLang, llama.cpp, TGI):
``pawlette serve`` forwards them to the upstream as given; rendering ignores them."""

REQUEST_KEYS = CHAT_REQUEST_KEYS | frozenset(ENGINE_SAMPLING_KEYS)
"""Every top-level key a request to ``pawlette serve`` may hold; any other is refused (a
misspelt ``temprature`` or ``tool`` would otherwise be silently ignored)."""

RENDER_REQUEST_KEYS = REQUEST_KEYS | {"add_generation_prompt"}
"""The keys of a request given to render (Python API, ``pawlette render``): the server's, and
vLLM's ``add_generation_prompt`` (a boolean; ``pawlette render`` honours it like
``--generation-prompt``, ``Format.render`` takes it as its keyword argument)."""


def unknown_key_error(key: object, known: frozenset[str], path: str = "") -> RequestError:
    """The error for an unknown key, with the closest known key as a hint."""
    import difflib

    name = key if isinstance(key, str) else show(key)
    close = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f"Did you mean {close[0]!r}?" if close else ""
    return RequestError(
        key_path(path, name),
        "an unknown key",
        "a key of a chat-completions request (messages, tools, ...)",
        hint,
    )


# Keys OpenAI clients echo back on assistant messages; accepted when null, refused otherwise.
_NULLABLE_ECHO_KEYS = frozenset({"refusal", "audio", "function_call", "annotations"})
_MESSAGE_KEYS = frozenset(
    {
        "role",
        "content",
        "name",
        "tool_calls",
        "tool_call_id",
        "reasoning_content",
        "reasoning_steps",
        "metadata",
        "weight",
    }
)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def _require_str(value: object, path: str, what: str = "a string") -> str:
    if not isinstance(value, str):
        raise RequestError(path, f"found {_kind(value)}", what)
    return check_text(value, path)


def _require_object(value: object, path: str) -> Mapping[str, Any]:
    if type(value) is dict:  # the common case, without the slower ABC check
        return value
    if not isinstance(value, Mapping):
        raise RequestError(path, f"found {_kind(value)}", "an object")
    return cast(Mapping[str, Any], value)


def _require_list(value: object, path: str) -> Sequence[Any]:
    if not isinstance(value, (list, tuple)):
        raise RequestError(path, f"found {_kind(value)}", "an array")
    return value


def check_json_text(text: str, path: str, *, want_object: bool = True) -> None:
    """Raise :class:`RequestError` unless ``text`` is JSON (an object when ``want_object``)
    that every format can print (see :mod:`pawlette.json_values`)."""
    value = load_json_text(text, path)
    if want_object and not isinstance(value, dict):
        raise RequestError(path, f"JSON {_kind(value)}", "a JSON object as text")


# --------------------------------------------------------------------------- input


def conversation_from_openai(
    data: object, tools: object = None
) -> tuple[tuple[Message, ...], tuple[Tool, ...]]:
    """Read a chat-completions request (or a bare message list) into core values.

    >>> messages, tools = conversation_from_openai([{"role": "user", "content": "hi"}])
    >>> messages[0].text
    'hi'
    """
    messages, core_tools, _ = read_conversation(data, tools)
    return messages, core_tools


def read_conversation(
    data: object, tools: object = None
) -> tuple[tuple[Message, ...], tuple[Tool, ...], AbstractSet[str]]:
    """:func:`conversation_from_openai`, and what the messages hold (:func:`present_in`),
    found as they are read: a message of a role and a text alone (or a result with its
    call's id) holds nothing of it, so only the others are walked (a render reads it
    instead of walking every message again)."""
    if type(data) is dict or isinstance(data, Mapping):
        if "messages" not in data:
            raise RequestError("request", "no 'messages' key", "a request with 'messages'")
        size = len(data)  # (a request of messages, or of messages and tools: no key to test)
        if (size > 2 or (size == 2 and "tools" not in data)) and not REQUEST_KEYS.issuperset(data):
            _check_render_keys(data)
        raw_messages = data["messages"]
        if tools is None:
            tools = data.get("tools")
        prefix = "messages"
    else:
        raw_messages = data
        prefix = "messages"
    items = _require_list(raw_messages, prefix)
    # (methods called as such, not bound to locals first: a bound method is an object made
    # and freed in every call, which costs more than a short conversation's lookups)
    messages: list[Message] = []
    others: list[Message] | None = None  # (the messages that may hold what present_in finds)
    kept_calls = False  # (a turn of calls alone read before: it holds calls, nothing more)
    named = reasoned = False  # (a text with a name, a turn of reasoning and calls, read before)
    for item in items:
        # Most messages are a role and a text read before: found in the kept messages here,
        # without a call (a role other than a core one, "developer", is never a key there:
        # _plain_message reads it).  The rest, and a miss, go through the readers below.
        shape: tuple[str | None, ...] | None = None  # (a miss kept under these strings)
        if type(item) is dict:
            size = len(item)
            try:  # (subscripts cost less than get calls; a missing key: the readers below)
                if size == 2:
                    role = item["role"]
                    text = item["content"]
                    if (
                        type(role) is str
                        and type(text) is str
                        and len(text) <= _TEXT_MESSAGE_LONGEST
                    ):
                        message = _TEXT_MESSAGES.get((role, text))
                        if message is not None:
                            messages.append(message)
                            continue
                elif size == 3:  # a result and its call's id, read before (as _plain_message)
                    role = item["role"]
                    if type(role) is str and role == "tool":
                        text = item["content"]
                        call_id = item["tool_call_id"]
                        if (
                            type(text) is str
                            and type(call_id) is str
                            and len(text) <= _TEXT_MESSAGE_LONGEST
                        ):
                            message = _TEXT_MESSAGES.get(("tool", text, call_id))
                            if message is not None:
                                messages.append(message)
                                continue
                    elif type(role) is str and role == "assistant":
                        # A turn of calls alone read before (as _plain_message finds it; its
                        # text was checked when it was kept).
                        text = item["content"]
                        if text is None or type(text) is str:
                            key = _calls_key(item["tool_calls"], text)
                            if key is not None:
                                message = _CALL_TURNS.get(key)
                                if message is None and (
                                    text is None
                                    or text.isascii()
                                    or surrogate_problem(text) is None
                                ):
                                    message = _call_turn(text, key)
                                if message is not None:
                                    messages.append(message)
                                    kept_calls = True
                                    continue
                    elif type(role) is str:
                        # A role, a text and a name (the plain reader keeps a miss by them;
                        # an assistant's, looked for as a turn of calls above, is its own).
                        text = item["content"]
                        name = item["name"]
                        if (
                            type(text) is str
                            and type(name) is str
                            and len(text) + len(name) <= _TEXT_MESSAGE_LONGEST
                        ):
                            shape = (role, text, name, "name")  # (4 strings: no other's)
                            message = _TEXT_MESSAGES.get(shape)
                elif size == 4:
                    # A turn of reasoning and calls: its strings, as a turn of calls alone's
                    # and the reasoning (the plain reader keeps a miss by them).
                    role = item["role"]
                    reasoning = item["reasoning_content"]
                    if (
                        type(role) is str
                        and role == "assistant"
                        and type(reasoning) is str
                        and len(reasoning) <= _TEXT_MESSAGE_LONGEST
                    ):
                        text = item["content"]
                        if text is None or type(text) is str:
                            key = _calls_key(item["tool_calls"], text)
                            if key is not None:
                                shape = (*key, reasoning)  # (2 + 3 per call: no other's)
                                message = _CALL_TURNS.get(shape)
            except KeyError:
                pass
            if shape is not None and message is not None:
                messages.append(message)
                if len(shape) == 4:
                    named = True
                else:
                    reasoned = True
                continue
        message = _plain_message(item)
        if message is None:  # not the plain shape (or invalid): the general reader words errors
            message = _read_message(item, f"{prefix}[{len(messages)}]")
        elif shape is not None:
            # (a text with a name among the texts, a turn of reasoning among the turns)
            shapes: dict[Any, Message] = _TEXT_MESSAGES if len(shape) == 4 else _CALL_TURNS
            if len(shapes) >= _TEXT_MESSAGES_KEPT:
                shapes.clear()
            shapes[shape] = message
        messages.append(message)
        if others is None:
            others = [message]
        else:
            others.append(message)
    if others is not None:
        present = present_in(others)
        if kept_calls:
            present = present | _CALLS_PRESENT
    else:
        present = _CALLS_PRESENT if kept_calls else _NOTHING_PRESENT
    if named:
        present = present | _NAME_PRESENT
    if reasoned:
        present = present | _REASONED_CALLS_PRESENT
    return tuple(messages), tools_from_openai(tools), present


_NOTHING_PRESENT: AbstractSet[str] = frozenset()
"""What messages of a role and a text alone hold (:func:`present_in`): nothing."""
_CALLS_PRESENT: AbstractSet[str] = frozenset({"calls"})
"""What turns of calls alone (:data:`_CALL_TURNS`) hold besides those: calls."""
_NAME_PRESENT: AbstractSet[str] = frozenset({"name"})
"""What a text with a name (of a role other than a result's) holds: a name."""
_REASONED_CALLS_PRESENT: AbstractSet[str] = frozenset({"calls", "reasoning"})
"""What a turn of reasoning (a string) and calls holds: both."""


def present_in(messages: Iterable[Message]) -> AbstractSet[str]:
    """What ``messages`` hold that a format must write or refuse: ``"parts"`` (content other
    than text), ``"calls"``, ``"name"`` (``"tool_name"``: a tool message's), ``"metadata"``,
    ``"reasoning"``, ``"steps"`` (see :data:`pawlette.declare.write.HANDLED`)."""
    found: set[str] = set()
    for message in messages:
        content = message.content
        if content and (len(content) != 1 or type(content[0]) is not TextPart):
            for part in content:
                if type(part) is not TextPart:
                    found.add("parts")
                    break
        if message.tool_calls:
            found.add("calls")
        if (
            message.name is None
            and not message.metadata
            and message.reasoning is None
            and message.reasoning_steps is None
        ):
            continue  # the common message
        if message.name is not None:
            found.add("tool_name" if message.role == "tool" else "name")
        if message.metadata:
            found.add("metadata")
        if message.reasoning is not None:
            found.add("reasoning")
        if message.reasoning_steps is not None:
            found.add("steps")
    return found


def _check_render_keys(data: Mapping[Any, Any]) -> None:
    for key in data:
        if key not in RENDER_REQUEST_KEYS:
            raise unknown_key_error(key, RENDER_REQUEST_KEYS)
    prompt = data.get("add_generation_prompt")
    if prompt is not None and not isinstance(prompt, bool):
        raise RequestError("add_generation_prompt", f"found {_kind(prompt)}", "true or false")


Made = TypeVar("Made")

_PLAIN_TOOLS: Kept[tuple[Tool, ...] | bool] = Kept(limit=64, longest=1 << 18)
"""Tool lists found plain (every tool read by :func:`plain_tool_definition`), by content:
True when met once, then the tools themselves."""


def tools_from_openai(data: object, path: str = "tools") -> tuple[Tool, ...]:
    if data is None:
        return ()
    if type(data) is list and data:
        # A server gets the same tools in every request: a list found plain before (equal
        # ``marshal`` bytes: an equal value of the same exact types, which passes the same
        # checks) is read once more when met again, from a copy of its own (the bytes
        # loaded: a caller's later change to its dicts changes nothing kept), and those same
        # Tool values serve every later request (the writers keep what they derive from them
        # by identity).  A list met once is not copied: new tools in each request cost no more.
        key = shared_key(data)  # (a list holding itself is never found plain: never kept)
        if key is not None:
            found = _PLAIN_TOOLS.kept.get(key)
            if found is True:
                found = _read_tools(marshal.loads(key), path)[0]
                _PLAIN_TOOLS.keep(key, found)
                if len(_KEPT_TOOLS) >= _PLAIN_TOOLS.limit:
                    _KEPT_TOOLS.clear()
                _KEPT_TOOLS[id(found)] = found
            if isinstance(found, tuple):
                return found
        tools, plain = _read_tools(data, path)
        if plain and key is not None:
            _PLAIN_TOOLS.keep(key, True)
            _NEW_TOOLS[0] = tools
        return tools
    return _read_tools(data, path)[0]


_KEPT_TOOLS: dict[int, tuple[Tool, ...]] = {}
"""The tool tuples :data:`_PLAIN_TOOLS` holds, by identity (see :func:`kept_tools`)."""


_NEW_TOOLS: list[tuple[Tool, ...]] = [()]
"""The tools :func:`tools_from_openai` last read from a list it had not found plain before."""


def new_tools(tools: tuple[Tool, ...]) -> bool:
    """Whether ``tools`` is what :func:`tools_from_openai` last read from a list of tools it had
    not found plain before (a request's new tools): what a writer keeps by content is not
    looked for then, made at once (making its key costs about as much as the text itself,
    and a list met again is kept whole: :func:`derived`)."""
    return tools is _NEW_TOOLS[0] and bool(tools)


def kept_tools(tools: tuple[Tool, ...]) -> bool:
    """Whether ``tools`` is a tuple :func:`tools_from_openai` keeps: its values are its own
    copies, never changed, so what is derived from them may be kept by its identity."""
    return _KEPT_TOOLS.get(id(tools)) is tools


def derived(
    store: dict[int, tuple[Any, Made]], tools: tuple[Tool, ...], make: Callable[[], Made]
) -> Made:
    """``make()``, kept in ``store`` by the identity of ``tools`` when :func:`kept_tools`
    (what a writer derives from a server's tools, made once), else made each time."""
    found = store.get(id(tools))
    if found is not None and found[0] is tools:
        return found[1]
    made = make()
    if kept_tools(tools):
        if len(store) >= 64:
            store.clear()
        store[id(tools)] = (tools, made)
    return made


def _read_tools(data: object, path: str) -> tuple[tuple[Tool, ...], bool]:
    """The tools, and whether every one was plain."""
    items = _require_list(data, path)
    tools = []
    plain = True
    for index, item in enumerate(items):
        tool = _plain_tool(item)
        if tool is None:
            plain = False
            tool = _read_tool(item, f"{path}[{index}]")
        tools.append(tool)
    return tuple(tools), plain


def tool_from_openai(data: object, path: str) -> Tool:
    """One OpenAI tool (``{"type": "function", "function": {...}}``) as a core :class:`Tool`."""
    tool = _plain_tool(data)
    return _read_tool(data, path) if tool is None else tool


def message_from_openai(data: object, path: str) -> Message:
    """One OpenAI message as a core :class:`Message`; errors name ``path``."""
    message = _plain_message(data)
    return _read_message(data, path) if message is None else message


# The plain shapes: what nearly every request holds, read without building error paths.
#
# Rendering is on the serving path, and reading the request was close to half of a render.  A
# plain reader takes only the common shape (a dict with string or text-part content, calls,
# names, ids and reasoning, no extensions) and never raises: it returns None for anything else,
# valid or not, and the general reader below (the reference) reads that and words any error.
# For every input a plain reader takes, it returns what the general reader returns (tested in
# tests/test_openai.py).

PLAIN_MESSAGE_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "reasoning_content"}
)
PLAIN_ROLES: dict[str, Role] = {role: role for role in ROLES}
PLAIN_ROLES["developer"] = "system"


_TEXT_MESSAGES: dict[tuple[str, ...], Message] = {}
"""Messages of a role and a text (a result: and its call's id) read before, by those strings:
a conversation's messages come back in every later request of it, and a Message is an
immutable value, so the same one serves every request that holds an equal message."""
_TEXT_MESSAGES_KEPT = 4096
"""Messages kept at most (then the store starts over: the messages that recur come back)."""
_TEXT_MESSAGE_LONGEST = 1 << 13
"""Characters of text a kept message holds at most (a bound on the store's memory)."""


def _keep_message(key: tuple[str, ...], message: Message) -> Message:
    """``message``, kept under ``key`` (see :data:`_TEXT_MESSAGES`) when its text is short."""
    if len(key[1]) <= _TEXT_MESSAGE_LONGEST:
        if len(_TEXT_MESSAGES) >= _TEXT_MESSAGES_KEPT:
            _TEXT_MESSAGES.clear()
        _TEXT_MESSAGES[key] = message
    return message


def _plain_message(data: object) -> Message | None:
    """``data`` read as a plain message, or None: not plain (or not valid)."""
    if type(data) is not dict:
        return None
    get = data.get
    role_value = get("role")
    role = PLAIN_ROLES.get(role_value) if type(role_value) is str else None
    if role is None:
        return None
    text = get("content")
    if type(text) is str:
        size = len(data)
        if size == 2:  # a role and a text (both found): nothing else
            key: tuple[str, ...] = (role, text)
        elif size == 3 and role == "tool" and type(call_id := get("tool_call_id")) is str:
            key = (role, text, call_id)  # a result with its call's id: nothing else
        else:
            key = ()
        # A kept message's texts were checked when it was read (a longer text is never kept:
        # no hash of it for a lookup that cannot find it).
        if key and len(text) <= _TEXT_MESSAGE_LONGEST:
            kept = _TEXT_MESSAGES.get(key)
            if kept is not None:
                return kept
        if not text.isascii() and surrogate_problem(text) is not None:
            return None
        if size == 2:
            return _keep_message(key, new_text_message(role, text))
        if key:  # a result with its call's id
            call_id = key[2]
            if call_id.isascii() or surrogate_problem(call_id) is None:
                return _keep_message(key, new_text_message(role, text, call_id))
    if (
        role == "assistant"
        and len(data) == 3
        and (type(text) is str or (text is None and "content" in data))
    ):
        # A turn of calls alone, the shape clients send back: kept by its strings (cheaper
        # than ``marshal`` writing the message; a miss is read by the plain reader).
        calls_key = _calls_key(get("tool_calls"), text)
        if calls_key is not None:
            kept = _CALL_TURNS.get(calls_key)
            return _call_turn(text, calls_key) if kept is None else kept
    # Any other shape (a text with a name or reasoning) is kept by its content: reading its
    # calls costs more than ``marshal`` writing the whole message.
    content_key = shared_key(data)  # (a message holding itself is never plain: never kept)
    if content_key is not None:
        kept = _KEPT_MESSAGES.kept.get(content_key)
        if kept is not None:
            return kept
    message = _plain_other_message(data, role, text)
    if message is not None and content_key is not None:
        _KEPT_MESSAGES.keep(content_key, message)
    return message


_CALL_TURNS: dict[tuple[str | None, ...], Message] = {}
"""Turns of calls alone read plain before, by :func:`_calls_key` (as :data:`_TEXT_MESSAGES`)."""


def _call_turn(text: str | None, key: tuple[str | None, ...]) -> Message | None:
    """The assistant message of ``content`` ``text`` (checked) and ``tool_calls`` alone, of
    :func:`_calls_key` ``key`` and not kept, read plain and kept (None: not plain).

    Built from ``key`` itself: :func:`_calls_key` has proven the exact shape (every call
    ``{"id", "type": "function", "function": {"name", "arguments"}}`` of exact strings), so
    only what it does not prove is checked here, as :func:`_plain_call` checks it (a name,
    no lone surrogate in the id or name, plain arguments), without walking the calls again.
    The arguments' own store (:data:`_PLAIN_ARGUMENTS`) is neither read nor written: the
    turn is kept whole, and the same text in another turn is parsed again (a new text's
    value is handed to the writer, which writes it once, :data:`PARSED_ARGUMENTS`)."""
    calls: list[ToolCall] = []
    parsed = PARSED_ARGUMENTS.kept
    # (after the text: each call's strings; annotated, not cast: a cast is a call)
    strings: tuple[str, ...] = key  # type: ignore[assignment]
    for start in range(1, len(strings), 3):
        call_id, name, arguments = strings[start], strings[start + 1], strings[start + 2]
        if (
            not name
            or (not name.isascii() and surrogate_problem(name) is not None)
            or (not call_id.isascii() and surrogate_problem(call_id) is not None)
        ):
            return None
        value = plain_arguments_value(arguments)
        if value is None:
            return None
        stripped = arguments.strip()
        # (new arguments: the writer's parse, done; Kept.keep without its call, the key
        # short enough: _calls_key bounds it)
        if len(parsed) >= PARSED_ARGUMENTS.limit:
            parsed.clear()
        parsed[stripped] = value
        calls.append(new_tool_call(call_id, name, stripped))
    # ("" and null mean the same beside tool calls; null is canonical)
    kept = new_message("assistant", (new_text_part(text),) if text else None, None, tuple(calls))
    if len(_CALL_TURNS) >= _TEXT_MESSAGES_KEPT:
        _CALL_TURNS.clear()
    _CALL_TURNS[key] = kept
    return kept


def _calls_key(raw_calls: object, text: str | None) -> tuple[str | None, ...] | None:
    """The strings that decide how an assistant message of ``content`` (``text``, a string
    or null) and ``tool_calls`` (``raw_calls``) alone reads: the text, then each call's id,
    name and arguments, when every call is exactly ``{"id", "type": "function", "function":
    {"name", "arguments"}}`` of strings and they are short; else None."""
    if type(raw_calls) is not list or not raw_calls:
        return None
    key: tuple[str | None, ...] = (text,)
    size = 0 if text is None else len(text)
    try:  # (a missing key is a KeyError: subscripts cost less than get calls)
        for call in raw_calls:
            if type(call) is not dict or len(call) != 3 or call["type"] != "function":
                return None
            function = call["function"]
            call_id = call["id"]
            if type(function) is not dict or len(function) != 2 or type(call_id) is not str:
                return None
            name = function["name"]
            arguments = function["arguments"]
            if type(name) is not str or type(arguments) is not str:
                return None
            size += len(arguments)
            key += (call_id, name, arguments)
    except KeyError:
        return None
    return key if size <= _TEXT_MESSAGE_LONGEST else None


_KEPT_MESSAGES: Kept[Message] = Kept(limit=4096, longest=1 << 14)
"""Messages of other shapes read plain before, by content (:func:`shared_key`: equal bytes
are an equal value of the same exact types, which reads the same)."""


def _plain_other_message(data: dict[Any, Any], role: Role, text: object) -> Message | None:
    """``data`` (a dict of ``role``, its ``content`` ``text``), not a role and a text alone
    nor a result with its call's id, read as a plain message, or None."""
    get = data.get
    if type(text) is str:
        if len(data) == 3 and role == "assistant":  # a turn of calls: nothing else
            raw_calls = get("tool_calls")
            if type(raw_calls) is list and raw_calls:
                calls = _plain_calls(raw_calls)
                if calls is None:
                    return None
                # ("" and null mean the same beside tool calls; null is canonical)
                content = (new_text_part(text),) if text else None
                return new_message(role, content, None, calls)
        if not PLAIN_MESSAGE_KEYS.issuperset(data):
            return None  # (a text was checked by _plain_message)
    elif not PLAIN_MESSAGE_KEYS.issuperset(data):
        return None
    elif text is None:
        if role != "assistant" or not (get("tool_calls") or get("reasoning_content")):
            return None  # content is required (the general reader says so)
        text = ""  # null, "" and [] all read as no content (which is None beside calls)
    else:
        text = plain_text_parts(text)
        if text is None or (not text.isascii() and surrogate_problem(text) is not None):
            return None
    name = get("name")
    if name is not None and (
        type(name) is not str or (not name.isascii() and surrogate_problem(name) is not None)
    ):
        return None
    if role == "assistant":
        if get("tool_call_id") is not None:
            return None
        reasoning = get("reasoning_content")
        if reasoning is not None and (
            type(reasoning) is not str
            or (not reasoning.isascii() and surrogate_problem(reasoning) is not None)
        ):
            return None
        raw_calls = get("tool_calls")
        tool_calls: tuple[ToolCall, ...] = ()
        if raw_calls is not None:
            if type(raw_calls) is not list:
                return None
            if raw_calls:
                calls = _plain_calls(raw_calls)
                if calls is None:
                    return None
                tool_calls = calls
        if text:
            return new_message(role, (new_text_part(text),), name, tool_calls, None, reasoning)
        # "" and null mean the same beside tool calls; null is canonical
        return new_message(role, None if tool_calls else (), name, tool_calls, None, reasoning)
    if get("reasoning_content") is not None or get("tool_calls") is not None:
        return None
    tool_call_id = get("tool_call_id")
    if tool_call_id is not None and (
        role != "tool"
        or type(tool_call_id) is not str
        or (not tool_call_id.isascii() and surrogate_problem(tool_call_id) is not None)
    ):
        return None
    return new_message(role, (new_text_part(text),) if text else (), name, (), tool_call_id)


def plain_text_parts(value: object) -> str | None:
    """A list of text parts, joined (the general reader merges them), or None: not that."""
    if type(value) is not list:
        return None
    texts = []
    for part in value:
        if type(part) is not dict or part.get("type") != "text":
            return None
        text = part.get("text")
        if type(text) is not str:
            return None
        texts.append(text)
    return "".join(texts)


def _plain_calls(raw_calls: list[Any]) -> tuple[ToolCall, ...] | None:
    """Each of a message's calls read plainly (None: one needs the general reader)."""
    calls = []
    for raw_call in raw_calls:
        call = _plain_call(raw_call)
        if call is None:
            return None
        calls.append(call)
    return tuple(calls)


def _plain_call(data: object) -> ToolCall | None:
    """A call of the plain shape (``id``, ``type``, ``function`` with ``name`` and
    ``arguments``), its texts checked, or None: not that shape, or not valid (the general
    reader says what is wrong)."""
    if type(data) is not dict or not _CALL_KEYS.issuperset(data):
        return None
    # (dict methods called as such: a bound method is an object made and freed per call)
    function = data.get("function")
    if (
        data.get("type", "function") != "function"
        or type(function) is not dict
        or not _FUNCTION_CALL_KEYS.issuperset(function)
    ):
        return None
    name = function.get("name")
    arguments = function.get("arguments")
    if type(name) is not str or not name or type(arguments) is not str:
        return None
    call_id = data.get("id", "")
    if call_id is None:
        call_id = ""
    elif type(call_id) is not str or (
        not call_id.isascii() and surrogate_problem(call_id) is not None
    ):
        return None
    if not name.isascii() and surrogate_problem(name) is not None:
        return None
    stripped = arguments.strip()
    if _PLAIN_ARGUMENTS.kept.get(arguments) is None:
        value = plain_arguments_value(arguments)
        if value is None:
            return None
        _PLAIN_ARGUMENTS.keep(arguments, True)
        PARSED_ARGUMENTS.keep(stripped, value)  # (new arguments: the writer's parse, done)
    return new_tool_call(call_id, name, stripped)


_PLAIN_ARGUMENTS: Kept[bool] = Kept(limit=4096, longest=1 << 14)
"""Argument texts found plain (:func:`plain_arguments`), by their text: a conversation's calls
come back in every later request of it, and the text alone decides (the writers keep what
they write of the same texts, :mod:`pawlette.declare.calls`)."""


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: JSON text, but no number a format can print
        raise ValueError(text)
    return value


# json's C scanner, refusing what JSON text can hold but no format prints (NaN, Infinity and
# floats beyond the double range), so that a scanned value needs no walk when its text is short,
# shallow and holds no \u escape (see plain_arguments).
_scan_printable: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder(parse_constant=refuse_json_constant, parse_float=_finite_float)  # type: ignore[arg-type]
)


def plain_arguments(text: str) -> bool:
    """Whether ``text`` is a JSON object that every format can print (``json.loads`` gives an
    object that ``json_value_problem`` passes), or False: not plain, the general reader
    decides (see :func:`plain_arguments_value`)."""
    return plain_arguments_value(text) is not None


def plain_arguments_value(text: str) -> dict[str, Any] | None:
    """``json.loads(text)`` when :func:`plain_arguments`, else None.  Nearly always without
    walking the value: a text of at most 4,000 characters holds no integer too long, one with
    at most 100 brackets nests no deeper than 100, one without ``\\u`` escapes or raw lone
    surrogates holds no lone surrogate, and the scanner refuses NaN and infinities."""
    # (Arguments nearly always start with "{" and end with "}": no stripping then.)
    if text[:1] == "{":
        start = 0
    else:
        start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
        if not text.startswith("{", start):
            return None
    try:
        value, end = _scan_printable(text, start)
    except (StopIteration, ValueError, RecursionError):
        return None
    # An object ends with "}", so the rest is whitespace when stripping it ends there.
    if type(value) is not dict or (end != len(text) and len(text.rstrip(_JSON_WHITESPACE)) != end):
        return None
    # (A backslash is searched for alone first: a one-character search is the fast one; a
    # text no longer than the depth allowed has no more brackets than that.)
    length = len(text)
    if (
        length <= MAX_INTEGER_DIGITS
        and ("\\" not in text or "\\u" not in text)
        and (length <= MAX_JSON_DEPTH or text.count("{") + text.count("[") <= MAX_JSON_DEPTH)
        and (text.isascii() or surrogate_problem(text) is None)
    ) or json_value_problem(value) is None:
        found: dict[str, Any] = value  # (not a cast: a call, in every new call's read)
        return found
    return None


# json's C scanner, called directly: ``json.loads`` wraps it in Python steps (type checks, a
# decoder method, two whitespace matches) that cost about as much as scanning short arguments.
_DECODER: Any = json.JSONDecoder()  # (typeshed types make_scanner's argument as itself)
_scan_json: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(_DECODER)
_JSON_WHITESPACE = " \t\n\r"


def _plain_json_object(text: str) -> dict[str, Any] | None:
    """``json.loads(text)`` when that is an object, or None: anything else, or an error."""
    start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
    if not text.startswith("{", start):
        return None
    try:
        value, end = _scan_json(text, start)
    except (StopIteration, ValueError, RecursionError):
        return None
    # An object ends with "}", so the rest is whitespace when stripping it ends there.
    if type(value) is not dict or len(text.rstrip(_JSON_WHITESPACE)) != end:
        return None
    return cast("dict[str, Any]", value)


def plain_tool_definition(data: object) -> dict[str, Any] | None:
    """``{"type": "function", "function": {...}}``'s definition, checked, or None: not plain
    (the general reader says what is wrong)."""
    if (
        type(data) is not dict
        or data.get("type", "function") != "function"
        or not _TOOL_KEYS.issuperset(data)
    ):
        return None
    definition = data.get("function")
    if type(definition) is not dict:
        return None
    name = definition.get("name")
    parameters = definition.get("parameters")
    if (
        type(name) is not str
        or not name
        or (parameters is not None and type(parameters) is not dict)
        or json_value_problem(definition) is not None
    ):
        return None
    found: dict[str, Any] = definition  # (not a cast: a call, in every new tool's read)
    return found


def _plain_tool(data: object) -> Tool | None:
    """``{"type": "function", "function": {...}}`` read as a Tool, or None: not plain."""
    definition = plain_tool_definition(data)
    if definition is None:
        return None
    return new_tool(definition["name"], dict(definition), "function")


# The general readers: every accepted shape, and the errors.


_TOOL_KEYS = frozenset({"type", "function", "action"})


def _read_tool(data: object, path: str) -> Tool:
    obj = _require_object(data, path)
    _refuse_unknown_keys(obj, _TOOL_KEYS, path)
    kind = obj.get("type", "function")
    if kind not in ("function", "action"):
        raise RequestError(f"{path}.type", f"found {show(kind)}", "'function' or 'action'")
    definition = _require_object(obj.get(kind), f"{path}.{kind}")
    name = _require_str(definition.get("name"), f"{path}.{kind}.name")
    if not name:
        raise RequestError(f"{path}.{kind}.name", "an empty name", "a tool name")
    if definition.get("parameters") is not None:
        _require_object(definition["parameters"], f"{path}.{kind}.parameters")
    # ``returns`` may be any JSON value: a JSON schema (an object or a boolean), or what a
    # template prints as it is (IFM-K2-Horizon's ``Returns``); a format that cannot write
    # the value given refuses it.
    check_json_value(definition, f"{path}.{kind}")
    return Tool(name=name, definition=dict(definition), kind=kind)


def _read_message(data: object, path: str) -> Message:
    obj = _require_object(data, path)
    for key, value in () if _MESSAGE_KEYS.issuperset(obj) else obj.items():
        if key in _MESSAGE_KEYS:
            continue
        if key in _NULLABLE_ECHO_KEYS and value is None:
            continue
        raise RequestError(
            key_path(path, key) if isinstance(key, str) else f"{path}[{show(key)}]",
            "an unknown key",
            "one of " + ", ".join(sorted(_MESSAGE_KEYS)),
            "Put format header values under 'metadata'",
        )
    role_value = obj.get("role")
    if role_value == "developer":
        role_value = "system"
    if role_value not in ROLES:
        raise RequestError(
            f"{path}.role", f"found {show(role_value)}", "'system', 'user', 'assistant' or 'tool'"
        )
    role = cast(Role, role_value)
    content = _content_from_openai(obj.get("content"), f"{path}.content", role)
    name = obj.get("name")
    if name is not None:
        _require_str(name, f"{path}.name")
    tool_calls = _tool_calls_from_openai(obj.get("tool_calls"), f"{path}.tool_calls", role)
    tool_call_id = obj.get("tool_call_id")
    if tool_call_id is not None:
        if role != "tool":
            raise RequestError(
                f"{path}.tool_call_id", f"on a {role} message", "it on tool messages"
            )
        _require_str(tool_call_id, f"{path}.tool_call_id")
    reasoning = obj.get("reasoning_content")
    if reasoning is not None:
        _require_str(reasoning, f"{path}.reasoning_content")
    steps = _steps_from_openai(obj.get("reasoning_steps"), f"{path}.reasoning_steps")
    if role != "assistant":
        for key, value in (("reasoning_content", reasoning), ("reasoning_steps", steps)):
            if value is not None:
                raise RequestError(f"{path}.{key}", f"on a {role} message", "it on assistant")
    metadata: tuple[tuple[str, str], ...] = ()
    raw_metadata = obj.get("metadata")
    if raw_metadata is not None:
        meta = _require_object(raw_metadata, f"{path}.metadata")
        metadata = tuple(
            (
                _require_str(key, f"{path}.metadata", "string keys"),
                _require_str(value, f"{path}.metadata.{key}"),
            )
            for key, value in meta.items()
        )
    weight = obj.get("weight")
    if weight is not None and (isinstance(weight, bool) or weight not in (0, 1)):
        raise RequestError(f"{path}.weight", f"found {show(weight)}", "0 or 1")
    if content is None and role != "assistant":
        raise RequestError(
            f"{path}.content",
            "missing" if "content" not in obj else "null",
            f"the {role} message's text or content parts ('' for none)",
        )
    if content is None and not (tool_calls or reasoning is not None or steps):
        # OpenAI requires an assistant's content unless it calls tools; an assistant with
        # neither would render as an empty answer (and be learned as one).
        raise RequestError(
            f"{path}.content",
            "missing" if "content" not in obj else "null",
            "the assistant's text ('' for an empty answer), or tool_calls beside it",
        )
    if content is None and not (role == "assistant" and tool_calls):
        content = ()
    elif content == () and role == "assistant" and tool_calls:
        content = None  # "" and null mean the same beside tool calls; null is canonical
    return Message(
        role=role,
        content=content,
        name=name,
        tool_calls=tool_calls,
        tool_call_id=tool_call_id,
        reasoning=reasoning,
        reasoning_steps=steps,
        metadata=metadata,
        weight=None if weight is None else float(weight),
    )


def _content_from_openai(value: object, path: str, role: Role) -> tuple[ContentPart, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (TextPart(check_text(value, path)),) if value else ()
    items = _require_list(value, path)
    parts: list[ContentPart] = []
    for index, item in enumerate(items):
        part = _part_from_openai(item, f"{path}[{index}]")
        if isinstance(part, TextPart) and parts and isinstance(parts[-1], TextPart):
            parts[-1] = TextPart(parts[-1].text + part.text)
        elif not (isinstance(part, TextPart) and not part.text):
            parts.append(part)
    return tuple(parts)


def _part_from_openai(value: object, path: str) -> ContentPart:
    obj = _require_object(value, path)
    kind = obj.get("type")
    if kind == "text":
        return TextPart(_require_str(obj.get("text"), f"{path}.text"))
    if kind == "image_url":
        image = obj.get("image_url")
        if isinstance(image, str):
            return ImagePart(url=check_text(image, f"{path}.image_url"))
        image_obj = _require_object(image, f"{path}.image_url")
        sizes = []
        for key in ("width", "height", "tokens"):
            size = image_obj.get(key)
            if size is not None and (
                isinstance(size, bool)
                or not isinstance(size, int)
                or not 0 <= size <= MAX_IMAGE_SIZE
            ):
                raise RequestError(
                    f"{path}.image_url.{key}",
                    f"found {show(size)}",
                    f"an integer from 0 to {MAX_IMAGE_SIZE}",
                )
            sizes.append(size)
        detail = image_obj.get("detail")
        return ImagePart(
            url=_require_str(image_obj.get("url"), f"{path}.image_url.url"),
            detail=None if detail is None else _require_str(detail, f"{path}.image_url.detail"),
            width=sizes[0],
            height=sizes[1],
            tokens=sizes[2],
        )
    if kind == "voice":
        voice = _require_object(obj.get("voice"), f"{path}.voice")
        prosody = voice.get("prosody", {})
        prosody_object = _require_object(prosody, f"{path}.voice.prosody")
        check_json_value(prosody_object, f"{path}.voice.prosody")
        return VoicePart(
            text=_require_str(voice.get("text"), f"{path}.voice.text"),
            prosody=dict(prosody_object),
        )
    if kind == "action":
        action = _require_object(obj.get("action"), f"{path}.action")
        arguments = _require_str(action.get("arguments"), f"{path}.action.arguments")
        check_json_text(arguments, f"{path}.action.arguments")
        return ActionPart(
            name=_require_str(action.get("name"), f"{path}.action.name"), arguments=arguments
        )
    if kind == "image_request":
        request = _require_object(obj.get("image_request"), f"{path}.image_request")
        check_json_value(request, f"{path}.image_request")
        return ImageRequestPart(dict(request))
    if kind == "bbox":
        bbox = _require_object(obj.get("bbox"), f"{path}.bbox")
        boxes = []
        for index, box in enumerate(_require_list(bbox.get("boxes"), f"{path}.bbox.boxes")):
            box_path = f"{path}.bbox.boxes[{index}]"
            coordinates = _require_list(box, box_path)
            if len(coordinates) != 4 or not all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 1000
                for c in coordinates
            ):
                raise RequestError(
                    box_path, f"found {show(list(coordinates))}", "four integers from 0 to 1000"
                )
            boxes.append((coordinates[0], coordinates[1], coordinates[2], coordinates[3]))
        return BoxPart(tuple(boxes))
    raise RequestError(
        f"{path}.type",
        f"found {show(kind)}",
        "'text', 'image_url', 'voice', 'action', 'image_request' or 'bbox'",
    )


# A call's keys (``index`` is what streamed calls carry, and clients echo it back).
_CALL_KEYS = frozenset({"id", "type", "function", "index"})
_FUNCTION_CALL_KEYS = frozenset({"name", "arguments"})


def _refuse_unknown_keys(obj: Mapping[str, Any], known: frozenset[str], path: str) -> None:
    if known.issuperset(obj):
        return
    key = next(key for key in obj if key not in known)
    raise RequestError(
        key_path(path, key) if isinstance(key, str) else f"{path}[{show(key)}]",
        "an unknown key",
        "one of " + ", ".join(sorted(known)),
    )


def _tool_calls_from_openai(value: object, path: str, role: Role) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if role != "assistant":
        raise RequestError(path, f"tool calls on a {role} message", "them on assistant messages")
    calls = []
    for index, item in enumerate(_require_list(value, path)):
        call_path = f"{path}[{index}]"
        obj = _require_object(item, call_path)
        _refuse_unknown_keys(obj, _CALL_KEYS, call_path)
        kind = obj.get("type", "function")
        if kind != "function":
            raise RequestError(f"{call_path}.type", f"found {show(kind)}", "'function'")
        function = _require_object(obj.get("function"), f"{call_path}.function")
        _refuse_unknown_keys(function, _FUNCTION_CALL_KEYS, f"{call_path}.function")
        name = _require_str(function.get("name"), f"{call_path}.function.name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            raise RequestError(
                f"{call_path}.function.arguments",
                f"found {_kind(arguments)}",
                "a JSON object as text",
                "OpenAI sends arguments as a string: json.dumps them",
            )
        check_json_text(arguments, f"{call_path}.function.arguments")
        call_id = obj.get("id")
        calls.append(
            ToolCall(
                id="" if call_id is None else _require_str(call_id, f"{call_path}.id"),
                name=name,
                arguments=arguments.strip(),
            )
        )
    return tuple(calls)


def _steps_from_openai(value: object, path: str) -> tuple[ThinkStep, ...] | None:
    if value is None:
        return None
    steps = []
    for index, item in enumerate(_require_list(value, path)):
        step = _require_object(item, f"{path}[{index}]")
        fields = [
            _require_str(step.get(key, ""), f"{path}[{index}].{key}")
            for key in ("title", "reasoning", "conclusion")
        ]
        steps.append(ThinkStep(*fields))
    return tuple(steps)


# --------------------------------------------------------------------------- output


def content_to_openai(content: tuple[ContentPart, ...] | None) -> str | list[dict[str, Any]] | None:
    """Text-only content becomes a string; anything else a list of parts."""
    if content is None:
        return None
    if all(isinstance(part, TextPart) for part in content):
        return "".join(cast(TextPart, part).text for part in content)
    return [part_to_openai(part) for part in content]


def part_to_openai(part: ContentPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        image: dict[str, Any] = {"url": part.url}
        if part.detail is not None:
            image["detail"] = part.detail
        if part.width is not None:
            image["width"] = part.width
        if part.height is not None:
            image["height"] = part.height
        if part.tokens is not None:
            image["tokens"] = part.tokens
        return {"type": "image_url", "image_url": image}
    if isinstance(part, VoicePart):
        return {"type": "voice", "voice": {"text": part.text, "prosody": dict(part.prosody)}}
    if isinstance(part, ActionPart):
        return {"type": "action", "action": {"name": part.name, "arguments": part.arguments}}
    if isinstance(part, ImageRequestPart):
        return {"type": "image_request", "image_request": dict(part.request)}
    return {"type": "bbox", "bbox": {"boxes": [list(box) for box in part.boxes]}}


def tool_call_to_openai(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def message_to_openai(message: Message) -> dict[str, Any]:
    """A core message as an OpenAI message dict (extensions only when set)."""
    name = message.name
    content = message.content
    if content is not None and len(content) == 1 and type(content[0]) is TextPart:
        text: str | list[dict[str, Any]] | None = content[0].text  # the usual: one text
    elif not content:  # no part: calls alone (None) or an empty turn ("")
        text = None if content is None else ""
    else:
        text = content_to_openai(content)
    if name is None:
        result: dict[str, Any] = {"role": message.role, "content": text}
    else:
        result = {"role": message.role, "name": name, "content": text}
    if message.reasoning is not None:
        result["reasoning_content"] = message.reasoning
    if message.reasoning_steps is not None:
        result["reasoning_steps"] = [
            {"title": s.title, "reasoning": s.reasoning, "conclusion": s.conclusion}
            for s in message.reasoning_steps
        ]
    if message.tool_calls:
        result["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]  # tool_call_to_openai's, inline (a call each)
    if message.tool_call_id is not None:
        result["tool_call_id"] = message.tool_call_id
    if message.metadata:
        result["metadata"] = dict(message.metadata)
    if message.weight is not None:
        result["weight"] = int(message.weight)
    return result


def tool_to_openai(tool: Tool) -> dict[str, Any]:
    return {"type": tool.kind, tool.kind: dict(tool.definition)}


def conversation_to_openai(
    messages: Iterable[Message], tools: Iterable[Tool] = ()
) -> dict[str, Any]:
    """``{"messages": [...], "tools": [...]}`` (``tools`` only when there are some)."""
    result: dict[str, Any] = {"messages": [message_to_openai(m) for m in messages]}
    tool_list = [tool_to_openai(tool) for tool in tools]
    if tool_list:
        result["tools"] = tool_list
    return result
