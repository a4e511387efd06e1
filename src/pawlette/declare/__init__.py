"""Declare a chat format once; pawlette derives everything else from the declaration.

A :class:`Layout` is frames (how each role's turn opens and ends) and an ordered tuple of
concepts (:mod:`.concept`: the protocol every concept follows).  :func:`declare` turns it into
a :class:`pawlette.Format`: the writer, the parse table and its readers, the forced prefixes
and the stop set come from it at once; the Jinja chat template (:mod:`.jinja`) and the turn
grammars (:mod:`.grammar`) are emitted from the same value when asked.
:func:`pawlette.register_format` makes a declared format known by name everywhere.

>>> from pawlette.declare import Frame, Layout, Marker, declare, fence
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

from ..compile import wrapped_writer
from ..engine.lexer import marker_pattern
from ..format import Format
from .answer_fence import AnswerFence
from .call_list import JsonCallList
from .call_turn_end import CallTurnEnd
from .checks import Alternation
from .concept import Concept
from .content import Ignored, ResultsAsUser, TextAfter, Trimmed, UnwrittenResults
from .conversation_end import ConversationEnd
from .first_system import FirstSystemText
from .grammar import forced_prefixes, markers_of
from .joined_results import JoinedResults
from .json_calls import JsonCalls
from .layout import Frame, Layout
from .named_calls import NamedCalls
from .names import Names
from .no_prompt import NoPromptAfter
from .pieces import Fence, Lit, Marker, Option, fence, text_of
from .prompt_always import PromptAlways
from .prompt_rest import PromptRest
from .python_calls import PythonCalls
from .reasoning import Reasoning
from .results import GapAfterResults, Results
from .switch import Switch
from .system import LastSystemPrompt, SystemPrompt
from .system_in_turn import SystemInTurn
from .table import compile_table
from .tools import ToolsBlock
from .write import compiled_writer_of
from .xml_calls import XmlCalls

__all__ = [
    "Alternation",
    "AnswerFence",
    "CallTurnEnd",
    "Concept",
    "ConversationEnd",
    "Fence",
    "FirstSystemText",
    "Frame",
    "GapAfterResults",
    "Ignored",
    "JoinedResults",
    "JsonCallList",
    "JsonCalls",
    "LastSystemPrompt",
    "Layout",
    "Lit",
    "Marker",
    "NamedCalls",
    "Names",
    "NoPromptAfter",
    "Option",
    "PromptAlways",
    "PromptRest",
    "PythonCalls",
    "Reasoning",
    "Results",
    "ResultsAsUser",
    "Switch",
    "SystemInTurn",
    "SystemPrompt",
    "TextAfter",
    "ToolsBlock",
    "Trimmed",
    "UnwrittenResults",
    "XmlCalls",
    "declare",
    "fence",
    "layout_of",
    "markers_of",
]


def declare(layout: Layout) -> Format:
    """The :class:`pawlette.Format` a layout declares (not registered: see
    :func:`pawlette.register_format`)."""
    if not isinstance(layout, Layout):
        from ..errors import FormatError

        raise FormatError(f"declare: a {type(layout).__name__}; expected a pawlette.declare.Layout")
    assistant = layout.frames["assistant"]
    table = compile_table(layout)
    ends = (assistant.end,) if assistant.end_stops else ()
    stops = [stop for concept in layout.concepts for stop in concept.stops()]
    texts = (
        text_of(pieces, layout.options, layout.name)
        for pieces in (*ends, *assistant.also_end, *stops)
    )
    stop = tuple(text for text in texts if text)

    escaping = any(concept.escapes_markers() for concept in layout.concepts)
    cuts = next(
        (found for concept in layout.concepts if (found := concept.encode_cuts()) is not None),
        None,
    )

    def variant(options: Any) -> Format:
        if layout.from_options is not None:
            return declare(layout.from_options(options))
        return declare(dataclasses.replace(layout, options=options))

    write = compiled_writer_of(layout)
    for concept in layout.concepts:
        if (rewrite := concept.rewrite_messages()) is not None:
            write = wrapped_writer(write, rewrite)
    return Format(
        name=layout.name,
        summary=layout.summary,
        grammar=table,
        write=write,
        stop=stop,
        special_markers=markers_of(layout),
        forced_prefixes=forced_prefixes(layout),
        escape_pattern=marker_pattern(table.markers) if escaping else None,
        encode_cuts=cuts,
        options=layout.options,
        variant=variant if layout.options is not None else None,
        declaration=layout,
    )


def layout_of(fmt: Format) -> Layout | None:
    """The layout a format was declared from (None: not declared with this layer)."""
    declaration = getattr(fmt, "declaration", None)
    return declaration if isinstance(declaration, Layout) else None
