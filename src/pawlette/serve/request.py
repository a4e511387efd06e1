"""A chat-completions request body, checked: what the server reads from it and what it refuses.

Everything here is pure (no HTTP, no optional dependency), so it is tested directly.

Read and honoured: ``messages``, ``tools``, ``tool_choice``, ``parallel_tool_calls``,
``stream``, ``stream_options.include_usage``, ``temperature``, ``top_p``, ``max_tokens`` /
``max_completion_tokens`` (the latter wins), ``seed``, ``stop`` (merged with the format's),
``presence_penalty``, ``frequency_penalty``, ``logit_bias`` (token ids to biases from -100 to
100), and the engine sampling keys :data:`~pawlette.openai.ENGINE_SAMPLING_KEYS` (``top_k``,
``min_p``, ``repetition_penalty``: checked, then sent to the upstream as given).

Refused with a 400 naming the field, because the server cannot honour them: ``n`` other than
1, ``logprobs: true`` / ``top_logprobs``, a ``response_format`` other than ``text``, audio
output, predicted outputs, ``reasoning_effort``, ``verbosity``, web search, and the legacy
``functions`` / ``function_call``.

Accepted and ignored, because they do not change the answer: ``model`` (this is a one-model
server) and ``user`` (both strings), ``store``, ``metadata``, ``service_tier``,
``safety_identifier``, ``prompt_cache_key``.

Any other key is refused with a 400 naming it (``param``), as OpenAI answers: a misspelt
``temprature`` or ``tool`` would otherwise change nothing, silently.  The whole body is checked
as JSON every format can print first (:mod:`pawlette.json_values`): no ``NaN``, no string with a
lone surrogate, nothing nested deeper than :data:`~pawlette.json_values.MAX_JSON_DEPTH`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..emit.tool_choice import ToolChoice
from ..errors import RequestError
from ..json_values import json_value_problem, shorten_path, show
from ..openai import REQUEST_KEYS, unknown_key_error


@dataclass(frozen=True)
class ChatRequest:
    """What the server needs from one request.

    ``sampling`` holds the upstream ``/v1/completions`` fields (``max_tokens``, ``temperature``,
    ...) exactly as they will be sent; ``stop`` is the request's own stop list (the format's
    markers are merged in later).
    """

    messages: Any
    tools: Any
    stream: bool
    include_usage: bool
    tool_choice: ToolChoice
    parallel_tool_calls: bool
    stop: tuple[str, ...]
    sampling: dict[str, Any] = field(default_factory=dict)


_REFUSED_HINTS: dict[str, str] = {
    "audio": "audio output is not supported by pawlette serve",
    "prediction": "predicted outputs are not supported by pawlette serve",
    "functions": "the legacy 'functions' field is not supported; send 'tools'",
    "function_call": "the legacy 'function_call' field is not supported; send 'tool_choice'",
    "web_search_options": "web search is not supported by pawlette serve",
    "reasoning_effort": "the model's reasoning is not configurable through pawlette serve",
    "verbosity": "verbosity is not configurable through pawlette serve",
}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(body: Mapping[str, Any], key: str, low: float, high: float) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if not _is_number(value) or not low <= value <= high:
        raise RequestError(key, f"found {show(value)}", f"a number from {low:g} to {high:g}")
    return float(value) if isinstance(value, float) else value


def _integer(body: Mapping[str, Any], key: str, low: int | None = None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if not _is_integer(value) or (low is not None and value < low):
        expected = "an integer" if low is None else f"an integer of at least {low}"
        raise RequestError(key, f"found {show(value)}", expected)
    return int(value)


def _boolean(body: Mapping[str, Any], key: str, default: bool) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError(key, f"found {show(value)}", "true or false")
    return value


def _logit_bias(value: object) -> dict[str, Any] | None:
    """OpenAI's ``logit_bias``: token ids (as JSON keys, so decimal strings) to biases from
    -100 to 100.  A key that is not an id is refused rather than sent on: llama.cpp reads
    such a key as text and biases the tokens it encodes to, which no OpenAI client means."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise RequestError("logit_bias", f"found {show(value)}", "an object of token ids to biases")
    for key, bias in value.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit()):
            raise RequestError(f"logit_bias.{key}", f"the key {show(key)}", "a token id")
        if not _is_number(bias) or not -100 <= bias <= 100:
            raise RequestError(
                f"logit_bias.{key}", f"found {show(bias)}", "a number from -100 to 100"
            )
    return dict(value)


def _stop(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise RequestError("stop", f"found {show(value)}", "a string or an array of strings")
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item:
            raise RequestError(f"stop[{index}]", f"found {show(item)}", "a non-empty string")
    return tuple(items)


def _tool_choice(value: object, tools: object) -> ToolChoice:
    names = _tool_names(tools)
    if value is None:
        return ToolChoice("auto")
    if value in ("auto", "none", "required"):
        if value == "required" and not names:
            raise RequestError(
                "tool_choice", "'required' with no tools", "tools in the request to choose from"
            )
        return ToolChoice(value)
    if isinstance(value, Mapping):
        function = value.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        if value.get("type", "function") != "function" or not isinstance(name, str):
            raise RequestError(
                "tool_choice",
                f"found {show(value)}",
                "'none', 'auto', 'required' or {'type': 'function', 'function': {'name': ...}}",
            )
        if name not in names:
            raise RequestError(
                "tool_choice.function.name",
                f"found {show(name)}",
                "the name of a function in 'tools'" + (f" ({', '.join(names)})" if names else ""),
            )
        return ToolChoice("function", name)
    raise RequestError(
        "tool_choice",
        f"found {show(value)}",
        "'none', 'auto', 'required' or {'type': 'function', 'function': {'name': ...}}",
    )


def _tool_names(tools: object) -> list[str]:
    """The function names declared in ``tools`` (the format validates the rest when rendering)."""
    names: list[str] = []
    if isinstance(tools, list):
        for tool in tools:
            if isinstance(tool, Mapping) and tool.get("type", "function") == "function":
                function = tool.get("function")
                if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                    names.append(function["name"])
    return names


def parse_chat_request(body: object) -> ChatRequest:
    """Check a decoded request body; raise :class:`RequestError` naming the offending field.

    >>> hello = [{"role": "user", "content": "Hi"}]
    >>> request = parse_chat_request({"messages": hello, "max_tokens": 5, "stop": "x"})
    >>> request.sampling, request.stop
    ({'max_tokens': 5}, ('x',))
    """
    if not isinstance(body, Mapping):
        raise RequestError("", "a body that is not a JSON object", "a chat-completions request")
    for key in body:
        if key not in REQUEST_KEYS:
            raise unknown_key_error(key, REQUEST_KEYS)
    problem = json_value_problem(body)
    if problem is not None:
        path, found, expected = problem
        raise RequestError(shorten_path(path.lstrip(".")), found, expected)
    if "messages" not in body:
        raise RequestError("messages", "missing", "an array of messages")
    if not isinstance(body["messages"], list):
        raise RequestError("messages", "not an array", "an array of messages")
    for key, hint in _REFUSED_HINTS.items():
        if body.get(key) is not None:
            raise RequestError(key, "a field pawlette serve cannot honour", "it absent", hint)
    for key in ("model", "user"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise RequestError(key, f"found {show(value)}", "a string")

    n = _integer(body, "n", 1)
    if n is not None and n != 1:
        raise RequestError("n", f"found {n}", "1", "send n separate requests for n answers")
    if _boolean(body, "logprobs", False) or body.get("top_logprobs") is not None:
        key = "logprobs" if body.get("logprobs") else "top_logprobs"
        raise RequestError(key, "log probabilities requested", "logprobs absent or false")
    response_format = body.get("response_format")
    if response_format is not None:
        kind = response_format.get("type") if isinstance(response_format, Mapping) else None
        if kind != "text":
            raise RequestError(
                "response_format.type",
                f"found {show(kind)}",
                "'text'",
                "JSON modes are not supported by pawlette serve",
            )
    modalities = body.get("modalities")
    if modalities is not None and modalities != ["text"]:
        raise RequestError("modalities", f"found {show(modalities)}", "['text']")

    stream = _boolean(body, "stream", False)
    include_usage = False
    options = body.get("stream_options")
    if stream and options is not None:
        if not isinstance(options, Mapping):
            raise RequestError("stream_options", f"found {show(options)}", "an object")
        value = options.get("include_usage")
        if value is not None and not isinstance(value, bool):
            # Named by its whole path (``_boolean`` names a top-level key).
            raise RequestError(
                "stream_options.include_usage", f"found {show(value)}", "true or false"
            )
        include_usage = bool(value)

    sampling: dict[str, Any] = {}
    max_tokens = _integer(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = _integer(body, "max_tokens", 1)
    if max_tokens is not None:
        sampling["max_tokens"] = max_tokens
    for key, low, high in (
        ("temperature", 0.0, 2.0),
        ("top_p", 0.0, 1.0),
        ("presence_penalty", -2.0, 2.0),
        ("frequency_penalty", -2.0, 2.0),
        ("min_p", 0.0, 1.0),
        ("repetition_penalty", 0.0, math.inf),
    ):
        value = _number(body, key, low, high)
        if value is not None:
            sampling[key] = value
    for key in ("seed", "top_k"):
        integer = _integer(body, key)
        if integer is not None:
            sampling[key] = integer
    logit_bias = _logit_bias(body.get("logit_bias"))
    if logit_bias:
        sampling["logit_bias"] = logit_bias

    if not body["messages"]:
        # OpenAI answers 400 too; a format would render only its generation prompt.
        raise RequestError("messages", "an empty array", "at least one message")
    tools = body.get("tools")
    return ChatRequest(
        messages=body["messages"],
        tools=tools,
        stream=stream,
        include_usage=include_usage,
        tool_choice=_tool_choice(body.get("tool_choice"), tools),
        parallel_tool_calls=_boolean(body, "parallel_tool_calls", True),
        stop=_stop(body.get("stop")),
        sampling=sampling,
    )
