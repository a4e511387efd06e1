"""MediaTek's conversation checks (``MRPromptV3.check_conversations``), with clear messages.

``MRPromptV3.get_prompt`` (``mtkresearch`` 0.3.2) checks a conversation before writing it:
the role order (see :mod:`pawlette.blocks.role_order`), the function declarations
(``check_functions``), and every call and result against them.  It raises a bare
``ValueError`` for most of these; :func:`check_conversation` raises
:class:`~pawlette.errors.RequestError` naming the place and the rule instead::

    messages[2].tool_calls[0].function.arguments: missing required parameter 'city';
    incorrect value for 'unit': 'kelvin', not one of ['celsius', 'fahrenheit']; expected
    arguments that fit tools[0]'s parameters

The rules, as ``MRPromptV3`` applies them:

- **Functions**: each has a string ``name`` and ``description`` and a ``parameters`` that is
  null or an object; a non-empty ``parameters`` has ``type`` and an object ``properties``,
  and ``required`` (if any) is a list of names among them; a ``default`` of a ``string``,
  ``integer``, ``float`` or ``boolean`` parameter has that type.
- **Calls** need declared functions; each is a ``function`` call of a declared name, and its
  arguments fit the parameters: every required one given, no unexpected one, the JSON types
  ``string``, ``integer``, ``float`` (an int too), ``boolean`` and ``array`` as declared, and
  a value among ``enum`` when there is one.  A function whose ``parameters`` is null or
  ``{}`` takes anything.
- **Results** need declared functions; each is JSON text, names the call it answers
  (``tool_call_id``) among the calls of the assistant message before the run of results, and
  carries that call's function ``name``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import RequestError
from ..json_values import show
from ..types import Message, Tool

# JSON Schema type -> the Python types MRPromptV3 accepts for it (other types: unchecked).
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "float": (float, int),
    "boolean": (bool,),
    "array": (list,),
}
_DEFAULT_TYPES: dict[str, type] = {"string": str, "integer": int, "float": float, "boolean": bool}


def check_functions(tools: Sequence[Tool]) -> None:
    """Raise :class:`RequestError` at the first function declaration MRPromptV3 refuses."""
    for number, tool in enumerate(tools):
        path = f"tools[{number}].function"
        definition = tool.definition
        for key in ("name", "description", "parameters"):
            if key not in definition:
                raise RequestError(f"{path}.{key}", "missing", f"a {key} (MRPromptV3 needs it)")
        for key in ("name", "description"):
            if not isinstance(definition[key], str):
                raise RequestError(f"{path}.{key}", show(definition[key]), "a string")
        parameters = definition["parameters"]
        if parameters is None:
            continue
        if not isinstance(parameters, Mapping):
            raise RequestError(f"{path}.parameters", show(parameters), "an object or null")
        if parameters:
            _check_parameters(parameters, f"{path}.parameters")


def _check_parameters(parameters: Mapping[str, Any], path: str) -> None:
    for key in ("type", "properties"):
        if key not in parameters:
            raise RequestError(f"{path}.{key}", "missing", f"a {key} in non-empty parameters")
    properties = parameters["properties"]
    if not isinstance(properties, Mapping):
        raise RequestError(f"{path}.properties", show(properties), "an object")
    required = parameters.get("required", [])
    if not isinstance(required, list):
        raise RequestError(f"{path}.required", show(required), "a list of parameter names")
    for name in required:
        if name not in properties:
            raise RequestError(f"{path}.required", f"{name!r}", "names among the properties")
    for name, schema in properties.items():
        if not isinstance(schema, Mapping) or "default" not in schema:
            continue
        expected = _DEFAULT_TYPES.get(str(schema.get("type", "")).lower())
        default = schema["default"]
        # MRPromptV3 reads a default as its type (an int from a float, a bool from text);
        # what cannot be read so is refused.
        if expected is int and (isinstance(default, str) or not _is_number(default)):
            raise RequestError(f"{path}.properties.{name}.default", show(default), "an integer")
        if expected is float and not _is_number(default):
            raise RequestError(f"{path}.properties.{name}.default", show(default), "a number")
        if expected is str and not isinstance(default, str):
            raise RequestError(f"{path}.properties.{name}.default", show(default), "a string")


def _is_number(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def argument_problems(arguments: Mapping[str, Any], definition: Mapping[str, Any]) -> list[str]:
    """What MRPromptV3's argument check finds wrong with ``arguments`` (empty: they fit).

    >>> weather = {"parameters": {"type": "object", "required": ["city"],
    ...     "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}}}
    >>> argument_problems({"unit": "k", "day": 1}, weather)
    ["missing required parameter 'city'", "incorrect value for 'unit': 'k', not one of ['c', \
'f']", "unexpected parameter 'day'"]
    """
    parameters = definition.get("parameters")
    if not isinstance(parameters, Mapping) or not parameters:
        return []  # a function that takes no declared parameters takes anything
    properties = parameters.get("properties", {})
    problems = [
        f"missing required parameter {name!r}"
        for name in parameters.get("required", [])
        if name not in arguments
    ]
    for name, value in arguments.items():
        schema = properties.get(name)
        if not isinstance(schema, Mapping):
            problems.append(f"unexpected parameter {name!r}")
            continue
        kind = schema.get("type")
        accepted = _TYPES.get(kind) if isinstance(kind, str) else None
        if accepted is not None and not isinstance(value, accepted):
            found = type(value).__name__
            problems.append(f"incorrect type for {name!r}: {found}, expected {kind}")
        if "enum" in schema and value not in schema["enum"]:
            problems.append(
                f"incorrect value for {name!r}: {show(value)}, not one of {schema['enum']}"
            )
    return problems


def check_conversation(messages: Sequence[Message], tools: Sequence[Tool]) -> None:
    """Raise :class:`RequestError` at the first call or result MRPromptV3 refuses.

    The role order is :func:`pawlette.blocks.role_order.check_role_order`'s part; this checks
    the functions, the calls and the results.
    """
    if tools:
        check_functions(tools)
    declared = {tool.name: (number, tool) for number, tool in enumerate(tools)}
    calls: Sequence[Any] = ()
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            calls = message.tool_calls
            for number, call in enumerate(message.tool_calls):
                path = f"messages[{index}].tool_calls[{number}]"
                _check_call(call.name, call.arguments, declared, path)
        elif message.role == "tool":
            _check_result(message, calls, bool(tools), index)


def _check_call(
    name: str, arguments_text: str, declared: Mapping[str, tuple[int, Tool]], path: str
) -> None:
    if not declared:
        raise RequestError(path, "a tool call, but no tools are declared", "tools for the call")
    if name not in declared:
        raise RequestError(
            f"{path}.function.name", f"{name!r}", "one of " + ", ".join(map(repr, declared))
        )
    try:
        arguments = json.loads(arguments_text)
    except ValueError as error:
        found = f"not valid JSON ({error})"
        raise RequestError(f"{path}.function.arguments", found, "a JSON object") from error
    if not isinstance(arguments, dict):
        found = f"a JSON {type(arguments).__name__}"
        raise RequestError(f"{path}.function.arguments", found, "a JSON object")
    number, tool = declared[name]
    problems = argument_problems(arguments, tool.definition)
    if problems:
        raise RequestError(
            f"{path}.function.arguments",
            "; ".join(problems),
            f"arguments that fit tools[{number}]'s parameters",
        )


def _check_result(message: Message, calls: Sequence[Any], declared: bool, index: int) -> None:
    path = f"messages[{index}]"
    if not declared:
        raise RequestError(path, "a tool result, but no tools are declared", "tools for its call")
    text = "".join(getattr(part, "text", "") for part in message.content or ())
    try:
        json.loads(text)
    except ValueError as error:
        found = f"not valid JSON ({error})"
        raise RequestError(f"{path}.content", found, "a result as JSON text") from error
    ids = [call.id for call in calls]
    if message.tool_call_id not in ids:
        expected = "the id of a call in the assistant message before: " + ", ".join(map(repr, ids))
        raise RequestError(f"{path}.tool_call_id", f"{message.tool_call_id!r}", expected)
    call = calls[ids.index(message.tool_call_id)]
    if message.name != call.name:
        found = "missing" if message.name is None else f"{message.name!r}"
        raise RequestError(f"{path}.name", found, f"{call.name!r}, the name of the call it answers")
