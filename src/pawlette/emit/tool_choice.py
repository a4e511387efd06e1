"""``tool_choice`` read once, for every face that honours it (grammars, forced prefixes, the
server): one normalised value instead of OpenAI's three spellings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..errors import RequestError
from ..json_values import show

ToolChoiceMode: TypeAlias = Literal["auto", "none", "required", "function"]


@dataclass(frozen=True)
class ToolChoice:
    """``tool_choice`` normalised: a mode, and the function's name for a named choice."""

    mode: ToolChoiceMode
    name: str | None = None

    @classmethod
    def read(cls, value: object) -> ToolChoice:
        """``"auto"``/``"none"``/``"required"``, a function name, or OpenAI's
        ``{"type": "function", "function": {"name": ...}}``."""
        if isinstance(value, ToolChoice):
            return value
        if value is None:
            return cls("auto")
        if isinstance(value, str):
            if value in ("auto", "none", "required"):
                return cls(value)  # type: ignore[arg-type]
            if value:
                return cls("function", value)
        if isinstance(value, Mapping):
            function = value.get("function")
            if value.get("type") == "function" and isinstance(function, Mapping):
                name = function.get("name")
                if isinstance(name, str) and name:
                    return cls("function", name)
        raise RequestError(
            "tool_choice",
            f"found {show(value)}",
            "'auto', 'none', 'required' or {'type': 'function', 'function': {'name': ...}}",
        )

    def key(self) -> str:
        return self.name if self.mode == "function" and self.name else self.mode

    def describe(self) -> str:
        """The choice as a client wrote it, for error messages."""
        return (
            f"{{'function': {{'name': {self.name!r}}}}}"
            if self.mode == "function"
            else repr(self.mode)
        )

    @property
    def only(self) -> str | None:
        """The one function a named choice allows (None: any tool)."""
        return self.name if self.mode == "function" else None
