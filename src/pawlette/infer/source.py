"""An inferred declaration as Python source a user can save, edit and register.

The source names each special token once (``IM_START = Marker("<|im_start|>")``), writes
fences with :func:`~pawlette.declare.fence`, and each concept with the fields that differ
from their defaults.  Executing it gives a layout equal to the inferred one (tested).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..declare import Layout
from ..declare.pieces import Lit, Marker, Option

__all__ = ["declaration_source"]

WIDTH = 96
_DECLARE = (
    "Alternation",
    "ConversationEnd",
    "FirstSystemText",
    "Frame",
    "GapAfterResults",
    "Ignored",
    "JsonCallList",
    "JsonCalls",
    "LastSystemPrompt",
    "Layout",
    "Marker",
    "NamedCalls",
    "Names",
    "NoPromptAfter",
    "Option",
    "PromptAlways",
    "Reasoning",
    "Results",
    "ResultsAsUser",
    "SystemPrompt",
    "ToolsBlock",
    "Trimmed",
    "UnwrittenResults",
    "XmlCalls",
)


def _string(text: str) -> str:
    """A Python string literal (double quotes, non-ASCII kept)."""
    return json.dumps(text, ensure_ascii=False)


def _long_string(text: str, indent: str) -> str:
    """A long text as adjacent literals, one line of the text each."""
    literal = _string(text)
    if len(literal) + len(indent) <= WIDTH or "\n" not in text[:-1]:
        return literal
    lines = text.splitlines(keepends=True)
    inner = indent + "    "
    return "(\n" + "".join(f"{inner}{_string(line)}\n" for line in lines) + f"{indent})"


def _name_of(text: str, taken: set[str]) -> str:
    core = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper() or "MARKER"
    if core[0].isdigit():
        core = "M_" + core
    name, number = core, 2
    while name in taken:
        name, number = f"{core}_{number}", number + 1
    taken.add(name)
    return name


class _Writer:
    def __init__(self, markers: Iterable[str]) -> None:
        taken: set[str] = set(_DECLARE) | {
            "LAYOUT",
            "FORMAT",
            "listed_tools",
            "InferredOptions",
            "Underived",
            "PromptRest",
        }
        self.names = {text: _name_of(text, taken) for text in markers}
        self.used: set[str] = set()
        self.classes: dict[str, type] = {}
        """The concept classes written, by name (imported where they are defined)."""

    def piece(self, piece: Any, indent: str) -> str:
        if isinstance(piece, Marker):
            return self.names[piece.text]
        if isinstance(piece, Lit):
            return _long_string(piece.text, indent)
        if isinstance(piece, Option):
            self.used.add("Option")
            if piece.date_format is None:
                return f"Option({_string(piece.name)})"
            return f"Option({_string(piece.name)}, {_string(piece.date_format)})"
        raise TypeError(piece)

    def fence(self, pieces: tuple[Any, ...], indent: str) -> str:
        if not pieces:
            return "()"
        self.used.add("fence")
        return self.call("fence", [self.piece(piece, indent + "    ") for piece in pieces], indent)

    def call(self, name: str, arguments: list[str], indent: str) -> str:
        flat = f"{name}({', '.join(arguments)})"
        if len(flat) + len(indent) <= WIDTH and "\n" not in flat:
            return flat
        inner = indent + "    "
        return (
            f"{name}(\n" + "".join(f"{inner}{argument},\n" for argument in arguments) + f"{indent})"
        )

    def value(self, value: Any, indent: str) -> str:
        if (
            isinstance(value, tuple)
            and value
            and all(isinstance(item, (Marker, Lit, Option)) for item in value)
        ):
            return self.fence(value, indent)
        if isinstance(value, str):
            return _long_string(value, indent)
        if value is None or isinstance(value, (bool, int, float)):
            return repr(value)
        if isinstance(value, datetime.date):
            return f"datetime.date({value.year}, {value.month}, {value.day})"
        if isinstance(value, tuple):
            items = [self.value(item, indent + "    ") for item in value]
            if len(items) == 1:
                return f"({items[0]},)"
            return self.call("", items, indent) if items else "()"
        if isinstance(value, Mapping):
            inner = indent + "    "
            items = [f"{_string(key)}: {self.value(item, inner)}" for key, item in value.items()]
            flat = "{" + ", ".join(items) + "}"
            if len(flat) + len(indent) <= WIDTH and "\n" not in flat:
                return flat
            return "{\n" + "".join(f"{inner}{item},\n" for item in items) + indent + "}"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self.dataclass(value, indent)
        raise TypeError(f"cannot write {value!r} as source")

    def dataclass(self, value: Any, indent: str) -> str:
        name = type(value).__name__
        self.used.add(name)
        self.classes[name] = type(value)
        arguments = []
        inner = indent + "    "
        for item in dataclasses.fields(value):
            if not item.init or not item.compare:
                continue
            current = getattr(value, item.name)
            if item.default is not dataclasses.MISSING and current == item.default:
                continue
            if (
                item.default_factory is not dataclasses.MISSING
                and current == item.default_factory()
            ):
                continue
            arguments.append(f"{item.name}={self.value(current, inner)}")
        if isinstance(value, Layout) and value.tools_variables is not None:
            from .listed_tools import listed_tools

            if value.tools_variables is not listed_tools:
                raise TypeError(f"cannot write {value.tools_variables!r} as source")
            self.used.add("listed_tools")
            arguments.append("tools_variables=listed_tools")
        return self.call(name, arguments, indent)


def _markers(layout: Layout) -> list[str]:
    found: dict[str, None] = {}

    def walk(value: Any) -> None:
        if isinstance(value, Marker):
            found.setdefault(value.text, None)
        elif isinstance(value, (tuple, list)):
            for item in value:
                walk(item)
        elif isinstance(value, Mapping):
            for item in value.values():
                walk(item)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for item in dataclasses.fields(value):
                walk(getattr(value, item.name))

    walk(layout.begin)
    walk(dict(layout.frames))
    walk(layout.concepts)
    return list(found)


def _constant(key: tuple[bool | None, ...], names: list[str]) -> str:
    """The name of the layout of one set of switch values (``LAYOUT_ENABLE_THINKING_FALSE``)."""
    parts = [f"{name}_{value}" for name, value in zip(names, key, strict=True)]
    return "_".join(["LAYOUT", *parts]).upper()


def declaration_source(layout: Layout, docstring: str) -> str:
    """``layout`` as a Python module defining ``LAYOUT`` and ``FORMAT``, opening with
    ``docstring``.  A layout with switches (:mod:`.switches`) is written as the layout of
    each set of the switches' values, and ``LAYOUT`` as
    :func:`~pawlette.infer.switches.switched_layout` of them."""
    layouts: dict[tuple[bool | None, ...], Layout] = {(): layout}
    names: list[str] = []
    if layout.switches:
        from .switches import switch_layouts

        layouts = switch_layouts(layout)
        names = [switch.option for switch in layout.switches]
    markers: dict[str, None] = {}
    for each in layouts.values():
        markers.update(dict.fromkeys(_markers(each)))
    writer = _Writer(markers)
    bodies = {key: writer.dataclass(each, "") for key, each in layouts.items()}
    body = "\n".join(bodies.values())
    from .. import declare as declared

    imports = sorted(
        name
        for name in writer.used
        if name in (*_DECLARE, "fence", "Option")
        or getattr(declared, name, None) is writer.classes.get(name, False)
    )
    if "Layout" not in imports:
        imports.append("Layout")
    if writer.names:
        imports.append("Marker")
    lines = [f'"""{docstring.strip()}\n"""', "", "# ruff: noqa: E501, RUF001", ""]
    lines.append("from __future__ import annotations")
    lines.append("")
    if "datetime.date(" in body:
        lines += ["import datetime", ""]
    lines.append(f"from pawlette.declare import {', '.join(sorted({*imports, 'declare'}))}")
    inferred = sorted(
        name for name in ("InferredOptions", "PromptRest", "Underived") if name in writer.used
    )
    if inferred:
        lines.append(f"from pawlette.infer import {', '.join(inferred)}")
    if "listed_tools" in writer.used:
        lines.append("from pawlette.infer.listed_tools import listed_tools")
    if names:
        lines.append("from pawlette.infer.switches import switched_layout")
    # A family's own concept (a tools presentation inference took from a declared family)
    # is imported from its module.
    families: dict[str, list[str]] = {}
    for name, kind in sorted(writer.classes.items()):
        if name not in (*imports, *inferred):
            families.setdefault(kind.__module__, []).append(name)
    for module, classes in sorted(families.items()):
        lines.append(f"from {module} import {', '.join(classes)}")
    lines.append("")
    for text, name in writer.names.items():
        lines.append(f"{name} = Marker({_string(text)})")
    if not names:
        lines += ["", f"LAYOUT = {bodies[()]}", "", "FORMAT = declare(LAYOUT)", ""]
        return "\n".join(lines)
    defaults = ", ".join(f"{_string(name)}: {getattr(layout.options, name)!r}" for name in names)
    for key, text in bodies.items():
        lines += ["", f"{_constant(key, names)} = {text}"]
    listed = "".join(
        f"        ({', '.join(map(repr, key))},): {_constant(key, names)},\n" for key in bodies
    )
    fallbacks = ", ".join(
        f"{_string(switch.option)}: {switch.fallback!r}"
        for switch in layout.switches
        if switch.fallback
    )
    lines += [
        "",
        "# The template's switches: each option selects the layout inferred for its value.",
        "LAYOUT = switched_layout(",
        f"    {{{defaults}}},",
        "    {",
        listed.rstrip("\n"),
        "    },",
        *([f"    {{{fallbacks}}},"] if fallbacks else []),
        ")",
        "",
        "FORMAT = declare(LAYOUT)",
        "",
    ]
    return "\n".join(lines)
