"""Forced prefixes: what a server appends to the generation prompt to force a ``tool_choice``.

Some formats let the prompt decide the model's next move with a token or two (breeze's
decision tokens).  A format declares them once, as :class:`ForcedPrefixes`; a server asks
:meth:`pawlette.Format.forced_prefix` for the suffix of one request, appends it to the
prompt, and feeds the same suffix to the parser before the model's output, so the parsed turn
(and what the client sees) is the whole turn::

    tool_choice                         breeze appends
    "auto" (or absent)                  nothing (None)
    "none"                              <|answer|>
    "required"                          <|use_tool|>
    {"type": "function",
     "function": {"name": "f"}}         <|use_tool|>[f(

A format without forced prefixes answers None for every choice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import RequestError
from ..json_values import show
from ..types import Tool


@dataclass(frozen=True)
class ForcedPrefixes:
    """A format's generation-prompt suffixes per ``tool_choice``.

    ``named`` writes the suffix that forces one function (it may raise
    :class:`~pawlette.errors.UnsupportedFeature` for a name the format cannot write).
    ``only_with_tools``: the prefixes exist only when the prompt declares tools (breeze writes
    its decision tokens only then).
    """

    required: str
    none: str
    named: Callable[[str], str]
    only_with_tools: bool = True
    required_for: Callable[[Sequence[Tool] | None], str | None] | None = None
    """``required``'s prefix when it depends on the tools (None: ``required``): ChatGLM3's
    calls begin with the function's name, so only a single function has one."""


def tool_choice_name(tool_choice: object) -> str | None:
    """The function a ``tool_choice`` names, or None for ``"auto"``, ``"none"``, ``"required"``.

    >>> tool_choice_name({"type": "function", "function": {"name": "get_weather"}})
    'get_weather'
    """
    if tool_choice is None or isinstance(tool_choice, str):
        if tool_choice not in (None, "auto", "none", "required"):
            raise RequestError(
                "tool_choice",
                f"found {show(tool_choice)}",
                "'auto', 'none', 'required' or {'type': 'function', 'function': {'name': ...}}",
            )
        return None
    if isinstance(tool_choice, Mapping):
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        if tool_choice.get("type", "function") == "function" and isinstance(name, str) and name:
            return name
    raise RequestError(
        "tool_choice",
        f"found {show(tool_choice)}",
        "'auto', 'none', 'required' or {'type': 'function', 'function': {'name': ...}}",
    )


def forced_prefix(
    prefixes: ForcedPrefixes | None, tool_choice: object, tools: Sequence[Tool] | None = None
) -> str | None:
    """The suffix that forces ``tool_choice`` (OpenAI's JSON shape), or None.

    ``tools``: the request's tools, when known.  A named function must be one of them, and a
    format whose prefixes exist only with tools gives None when there are none.
    """
    name = tool_choice_name(tool_choice)
    if prefixes is None or tool_choice in (None, "auto"):
        return None
    if tools is not None and not tools and prefixes.only_with_tools:
        return None
    if name is None:
        if tool_choice == "required" and prefixes.required_for is not None:
            return prefixes.required_for(tools)
        return prefixes.required if tool_choice == "required" else prefixes.none
    if tools is not None and name not in {tool.name for tool in tools}:
        raise RequestError(
            "tool_choice.function.name",
            f"found {show(name)}",
            "the name of one of the request's tools: "
            + ", ".join(repr(tool.name) for tool in tools),
        )
    return prefixes.named(name)
