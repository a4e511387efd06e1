"""Declare a chat format once; pawlette derives everything else from the declaration.

A :class:`Layout` (see :mod:`pawlette.legacy.layout` for the concepts and why they look like
this) is turned into a :class:`pawlette.Format` by :func:`declare`: the writer, the parse
table and its readers, the forced prefixes and stop set come from it at once; the Jinja chat
template (:mod:`.jinja`) and the turn grammars (:mod:`.grammar`) are emitted from the same
value when asked.  :func:`pawlette.register_format` makes a declared format known by name to
everything that takes one (``get_format``, the CLI's ``-f``, the server, the exporters,
``tokenize``, the prompters).

>>> from pawlette.legacy import Frame, Layout, Marker, declare, fence
>>> END = Marker("<|end|>")
>>> tiny = declare(Layout(
...     name="tiny", summary="a tiny example",
...     frames={role: Frame(fence(Marker("<|" + role + "|>")), fence(END), fence("\\n"))
...             for role in ("system", "user", "assistant")}))
>>> tiny.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
'<|user|>Hi<|end|>\\n<|assistant|>'
>>> tiny.parse("Hello!<|end|>").message["content"]
'Hello!'
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..format import Format
from .containers import Containers, Headers, escape_pattern
from .decision import Decision
from .layout import (
    Fence,
    Frame,
    JsonCalls,
    Layout,
    Lit,
    Marker,
    Option,
    Reasoning,
    Results,
    SystemTurn,
    ToolsBlock,
    fence,
)
from .media import Boxes, PlaceholderImages
from .parts import ContentParts
from .python_calls import PythonCalls
from .python_results import PythonResults
from .python_tools import PythonToolsBlock
from .table import compile_table, forced_prefixes, joined
from .turn_reading import TurnReading
from .write import writer_of

__all__ = [
    "Boxes",
    "Containers",
    "ContentParts",
    "Decision",
    "Fence",
    "Frame",
    "Headers",
    "JsonCalls",
    "Layout",
    "Lit",
    "Marker",
    "Option",
    "PlaceholderImages",
    "PythonCalls",
    "PythonResults",
    "PythonToolsBlock",
    "Reasoning",
    "Results",
    "SystemTurn",
    "ToolsBlock",
    "TurnReading",
    "declare",
    "fence",
    "layout_of",
    "markers_of",
]


def markers_of(layout: Layout) -> tuple[str, ...]:
    """Every special token the layout writes (then ``extra_special``), first use first."""
    if layout.blocks is not None:  # in the blocks' declaration order
        from .blocks import special_markers as block_markers

        return block_markers(layout)
    if layout.containers is not None:  # in the containers' reading order
        from .containers import special_markers

        return special_markers(layout)
    seen: dict[str, None] = {}

    def visit(value: Any) -> None:
        if isinstance(value, Marker):
            seen.setdefault(value.text, None)
        elif isinstance(value, (tuple, list)):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for item in dataclasses.fields(value):
                visit(getattr(value, item.name))

    visit(layout.begin)
    visit(dict(layout.frames))
    for concept in (layout.system, layout.tools, layout.reasoning, layout.calls, layout.results):
        visit(concept)
    visit(layout.decision)
    visit(layout.turn_reading)
    if layout.parts is not None:  # a concept of its own module (markers as text)
        from .parts import markers

        for text in markers(layout.parts):
            seen.setdefault(text, None)
    for text in layout.extra_special:
        seen.setdefault(text, None)
    return tuple(seen)


def declare(layout: Layout) -> Format:
    """The :class:`pawlette.Format` a layout declares (not registered: see
    :func:`pawlette.register_format`)."""
    assistant = layout.frames["assistant"]
    stop = tuple(joined(layout, pieces) for pieces in (assistant.end, *assistant.also_end))
    escape = escape_pattern(layout) if layout.containers is not None else None
    if layout.blocks is not None:  # text escaped (a concept of its own module)
        from .blocks import escape_pattern as blocks_escape

        escape = blocks_escape(layout)

    def variant(options: Any) -> Format:
        if layout.from_options is not None:
            return declare(layout.from_options(options))
        return declare(dataclasses.replace(layout, options=options))

    return Format(
        name=layout.name,
        summary=layout.summary,
        grammar=compile_table(layout),
        write=writer_of(layout),
        stop=stop,
        special_markers=markers_of(layout),
        forced_prefixes=forced_prefixes(layout),
        escape_pattern=escape,
        options=layout.options,
        variant=variant if layout.options is not None else None,
        declaration=layout,
        encode_cuts=layout.headed.encode_cuts if layout.headed is not None else None,
    )


def layout_of(fmt: Format) -> Layout | None:
    """The layout a format was declared from (None: a hand-written format)."""
    declaration = getattr(fmt, "declaration", None)
    return declaration if isinstance(declaration, Layout) else None
