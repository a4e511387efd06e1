"""What reading IFM-K2-Horizon's Markdown tools (:mod:`.markdown`) gives back: which of each
tool's parameters are strings, so that a call's value written as it is reads back as the
string it was (``"0"`` stays ``"0"``, not the number 0).

The Markdown is not the JSON schema it was written from, and the tools are not given back
(a recorded loss); but each parameter's line names its type.  A parameter is read as a
string where its line says ``string`` (``- `code` *(string, required)*``), or says ``any``
with allowed values that are all text (an ``enum`` of strings without a ``type``, which the
schema's own reading takes as a string too; not when one of them is empty or holds a
backquote, since the list is then not told apart from one holding other values).  Every
other parameter is read as before: JSON where its text is JSON, else the text.  Only the
parameters at the top of a tool's ``**Parameters**`` count (a call's arguments are those;
deeper values are JSON).

The Markdown writes descriptions and some schema values as they are, so text can spell
what the presentation itself writes.  Reading is kept to what cannot be misread by the
ordinary shapes: each tool's section starts at a ``## NAME`` line, its parameters are the
unindented parameter lines after the section's last ``**Parameters**`` line (a tool's
description comes before it) and before ``**Returns**``; a tool named twice, or a parameter
listed twice in one tool with types that differ, gives no types.  A description or value
that spells a whole parameter line after the parameters heading can still mislead it.
"""

from __future__ import annotations

import re
from typing import Any

from pawlette.types import Tool

__all__ = ["string_parameters", "typed_tools"]

_PARAMETER = re.compile(r"- `(?P<name>.*?)` \*\((?P<type>.*?)(?:, required)?\)\*(?: - .*)?")
"""An unindented parameter line: its name, its type (as :func:`.markdown.type_text` names it),
whether required, its description."""
_ALLOWED = "  - Allowed values: "
_VALUES = re.compile(r'(?:`[^`]*`|"")(?:, (?:`[^`]*`|""))*')
"""A list of allowed values none of which holds a backquote: each in backquotes, or ``""``
(the empty text, as the Markdown writes it)."""
_VALUE = re.compile(r'`([^`]*)`|""')
"""One value of such a list (the empty text: an empty match)."""
_NOT_TEXT = re.compile(r"-?\d|True$|False$|None$|\[|\{")
"""How an allowed value that is no text starts as the Markdown writes it (a Python literal);
text is written as it is, so text that starts so is not told from such a value."""


def string_parameters(listing: str) -> dict[str, frozenset[str]]:
    """Each tool's name and the names of its parameters the Markdown ``listing`` (the tools
    block's text) says are strings."""
    sections: dict[str, list[str]] = {}
    named_twice: set[str] = set()
    lines = listing.split("\n")
    current: list[str] | None = None
    for line in lines:
        if line.startswith("## "):
            name = line[3:]
            if name in sections:
                named_twice.add(name)
            current = sections[name] = []
        elif current is not None:
            current.append(line)
    return {
        name: _strings(section) for name, section in sections.items() if name not in named_twice
    }


def typed_tools(listing: str) -> tuple[Tool, ...]:
    """The tools of ``listing`` as schemas that say only which parameters are strings: what
    types a call's values where a conversation's text gives no JSON schema."""
    return tuple(
        Tool(name, {"name": name, "parameters": _parameters(strings)})
        for name, strings in string_parameters(listing).items()
        if strings
    )


def _parameters(strings: frozenset[str]) -> dict[str, Any]:
    properties = {name: {"type": "string"} for name in sorted(strings)}
    return {"type": "object", "properties": properties}


def _strings(section: list[str]) -> frozenset[str]:
    """The string parameters of one tool's lines (after its ``## NAME``)."""
    starts = [
        index
        for index, line in enumerate(section)
        if line == "**Parameters**" and index > 0 and section[index - 1] == ""
    ]
    if not starts:
        return frozenset()
    found: dict[str, set[bool]] = {}
    body = section[starts[-1] + 1 :]
    for index, line in enumerate(body):
        if line == "**Returns**" and index > 0 and body[index - 1] == "":
            break
        matched = _PARAMETER.fullmatch(line)
        if matched is None:
            continue
        kind = matched["type"]
        string = kind == "string" or (kind == "any" and _text_values(body[index + 1 :]))
        found.setdefault(matched["name"], set()).add(string)
    return frozenset(name for name, kinds in found.items() if kinds == {True})


def _text_values(following: list[str]) -> bool:
    """Whether the parameter's lines (``following`` its own) list allowed values, each text:
    they follow its description's lines (indented), before its other lines."""
    for line in following:
        if line.startswith(_ALLOWED):
            values = line[len(_ALLOWED) :]
            # (a value holding a backquote makes the list ambiguous, and the empty text is
            # not told from an empty value: neither is read as text)
            if not _VALUES.fullmatch(values):
                return False
            return all(value and not _NOT_TEXT.match(value) for value in _VALUE.findall(values))
        if not line.startswith("  ") or line.startswith("  - "):
            return False
    return False
