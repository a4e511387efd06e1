"""Decision tokens: a concept of the declaration layer, with all four of its interpreters.

In a layout with a :class:`Decision`, the assistant turn the model writes last in a request
with tools (the final message of a conversation rendered for training, or what follows the
generation prompt) first says what it does: ``call`` opens its calls (in place of the calls'
``open``), ``answer`` opens its text.  Every other assistant turn is written without one: its
calls open with the calls' ``open`` and, when ``undecided_end`` is set, end with it instead
of the frame's end.  Parsing reads every spelling everywhere.  MediaTek's Breeze 2
(MRPromptV3)::

    decided:    <|use_tool|>[f(a=1)]<|eot_id|>      <|answer|>text<|eot_id|>
    undecided:  <|python_tag|>[f(a=1)]<|eom_id|>    text<|eot_id|>

A turn holds text or calls (the calls' ``with_content`` must be False) and has no reasoning
block; the calls are :class:`~.python_calls.PythonCalls` (the one call concept decision
layouts use today).

The interpreters, all here, each called from the shared one through one dispatch:
:func:`write_assistant` (writer), :func:`table_rows` (parse table), :func:`jinja_assistant`
(Jinja), :func:`build_turn` and :func:`forced_prefixes` (grammar and forced prefixes: ``none``
is the ``answer`` fence, ``required`` the ``call`` fence, a named function ``call`` +
``[name(``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from ..blocks.tool_choice import ForcedPrefixes
from ..engine.machine import Parser
from ..engine.readers import ContentReader
from ..errors import FormatError, UnsupportedFeature
from ..export.grammar_ast import Marker as Special
from ..export.grammar_ast import Node, Rules, alt, optional, seq
from ..types import Message, Tool
from . import parts, python_calls, rows
from .layout import Fence, Layout
from .rows import Row

if TYPE_CHECKING:  # the interpreters hand themselves in; importing them here would cycle
    from ..export.grammar import ToolChoice, TurnGrammar
    from ..format import Format
    from .jinja import _Emitter
    from .table import _Table
    from .write import _Render


@dataclass(frozen=True)
class Decision:
    """Decision tokens (see the module docstring)."""

    call: Fence
    answer: Fence
    undecided_end: Fence = ()
    """The end of a turn of calls written without a decision (empty: the frame's end); it
    must be one of the assistant frame's ends (``end`` or ``also_end``)."""


def check(layout: Layout) -> Decision:
    """The layout's decision, after checking the layout can have one."""
    decision = layout.decision
    assert decision is not None
    calls = layout.calls
    if not isinstance(calls, python_calls.PythonCalls) or calls.with_content:
        raise FormatError(
            f"{layout.name}: decision tokens need Python calls without text beside them"
        )
    if layout.reasoning is not None:
        raise FormatError(f"{layout.name}: decision tokens with reasoning are not a concept")
    frame = layout.frames["assistant"]
    if decision.undecided_end and decision.undecided_end not in (frame.end, *frame.also_end):
        raise FormatError(f"{layout.name}: decision.undecided_end is not an assistant end")
    return decision


def decided(layout: Layout, tools: tuple[Tool, ...], messages: int, index: int) -> bool:
    """Whether the assistant message at ``index`` (of ``messages``, rendered without a
    generation prompt) is written with its decision token."""
    return layout.decision is not None and bool(tools) and index == messages - 1


# ------------------------------------------------------------------ writer


@dataclass(frozen=True)
class _Rows:
    """What the writer derives from the layout once (:func:`.rows.once_per`): each
    assistant turn's runs of fences as rows, indexed by whether the turn is decided."""

    calls: python_calls.PythonCalls
    with_parts: bool  # content parts (:mod:`.parts`) write the answer
    call_head: tuple[Row, Row]  # the header, then the calls' open or the call token
    call_tail: tuple[Row, Row]  # the calls' close, the end (undecided or not), what follows
    text_head: tuple[Row, Row]  # the header, then (decided) the answer token
    text_tail: Row  # the end and what follows


def _derive(layout: Layout) -> _Rows:
    decision = check(layout)
    calls = layout.calls
    assert isinstance(calls, python_calls.PythonCalls)
    frame = layout.frames["assistant"]
    header = rows.pieces(layout, frame.open, "header")
    after = rows.pieces(layout, frame.after, "separator")
    end = rows.pieces(layout, frame.end, "end", True)
    undecided_end = rows.pieces(layout, decision.undecided_end or frame.end, "end", True)
    close = rows.pieces(layout, calls.close, "tool_call", True)
    return _Rows(
        calls=calls,
        with_parts=layout.parts is not None,
        call_head=(
            Row(header + rows.pieces(layout, calls.open, "tool_call", True)),
            Row(header + rows.pieces(layout, decision.call, "tool_call", True)),
        ),
        call_tail=(Row(close + undecided_end + after), Row(close + end + after)),
        text_head=(
            Row(header),
            Row(header + rows.pieces(layout, decision.answer, "content", True)),
        ),
        text_tail=Row(end + after),
    )


_rows_of = rows.once_per(_derive)


def write_assistant(render: _Render, message: Message, index: int, decide: bool) -> None:
    """The writer's assistant turn in a layout with decision tokens."""
    layout = render.layout
    derived = _rows_of(layout)
    writer = render.writer
    writer.at("assistant", index)
    if message.reasoning is not None or message.reasoning_steps is not None:
        raise UnsupportedFeature(
            f"messages[{index}].reasoning_content", "reasoning", f"none: {layout.name}"
        )
    text = ""
    if not derived.with_parts:
        from .write import message_text  # (write imports this module)

        text = message_text(message, index, layout.name)  # refuses names, metadata, parts
    if message.tool_calls:
        python_calls.check_calls(derived.calls, layout.name, message, index)
        listing = python_calls.encoded(derived.calls, message, index)
        derived.call_head[decide].write(writer)
        writer.text(listing, "tool_call", trainable=True)
        derived.call_tail[decide].write(writer)
        return
    derived.text_head[decide].write(writer)
    if derived.with_parts:
        parts.write_content(render, message, index, trainable=True)
    else:
        writer.text(text, "content", trainable=True)
    derived.text_tail.write(writer)


# ------------------------------------------------------------------ parse table


def table_rows(table: _Table, texts: tuple[str, ...]) -> None:
    """The decision rows: ``answer`` leads to the text, ``call`` to the calls."""
    decision = check(table.layout)
    head, body = texts
    table.on(head, table.text(decision.answer), body)
    table.on(head, table.text(decision.call), "assistant.call")
    # A turn holds text or calls: a decision or call marker after text is malformed.
    calls = table.layout.calls
    assert isinstance(calls, python_calls.PythonCalls)
    leads = frozenset(table.text(pieces) for pieces in (decision.answer, decision.call, calls.open))
    states = table.builder.states
    for name, decided in ((head, False), (body, True)):
        reader = partial(FirstInTurnReader, leads=leads, decided=decided)
        states[name] = replace(states[name], reader=reader)


class FirstInTurnReader(ContentReader):
    """Assistant text; a decision or call marker (``leads``) must come before any text (in
    the body state, entered by a decision, there is one already: ``decided``)."""

    __slots__ = ("_leads", "_text")

    def __init__(self, parser: Parser, leads: frozenset[str], decided: bool) -> None:
        super().__init__(parser)
        self._leads = leads
        self._text = decided

    def feed(self, text: str, offset: int) -> None:
        self._text = self._text or bool(text)
        super().feed(text, offset)

    def close(self, marker: str | None, offset: int) -> None:
        if self._text and marker in self._leads:
            self._parser.malformed(offset, f"{marker} after text", "it first in the turn", "")


# ------------------------------------------------------------------ Jinja


def jinja_assistant(emitter: _Emitter) -> None:
    """The Jinja branch of an assistant turn (``decide`` as :func:`decided` computes it)."""
    layout = emitter.layout
    decision = check(layout)
    calls = layout.calls
    assert isinstance(calls, python_calls.PythonCalls)
    frame = layout.frames["assistant"]
    emitter.out('{%- elif message.role == "assistant" -%}')
    emitter.fence(frame.open)
    emitter.raise_if(
        "message.reasoning_content is defined and message.reasoning_content is not none",
        f"reasoning_content: {layout.name} has no reasoning block",
    )
    emitter.out("{%- set decide = has_tools and loop.last and not add_generation_prompt -%}")
    emitter.out("{%- generation -%}")
    emitter.out("{%- if message.tool_calls is defined and message.tool_calls -%}")
    emitter.raise_if(
        "(message.content is defined and message.content)",
        f"content alongside tool calls: {layout.name}",
    )
    if not calls.parallel:
        emitter.raise_if("message.tool_calls | length > 1", f"one call per turn: {layout.name}")
    emitter.out("{%- if decide -%}")
    emitter.fence(decision.call)
    emitter.out("{%- else -%}")
    emitter.fence(calls.open)
    emitter.out("{%- endif -%}")
    emitter.out(f"{{{{- {python_calls.jinja_call_list(calls, 'message', 'loop.index0')} -}}}}")
    emitter.fence(calls.close)
    if decision.undecided_end:
        emitter.out("{%- if decide -%}")
        emitter.fence(frame.end)
        emitter.out("{%- else -%}")
        emitter.fence(decision.undecided_end)
        emitter.out("{%- endif -%}")
    else:
        emitter.fence(frame.end)
    emitter.out("{%- else -%}")
    emitter.out("{%- if decide -%}")
    emitter.fence(decision.answer)
    emitter.out("{%- endif -%}")
    emitter.text("message", "loop.index0")
    emitter.fence(frame.end)
    emitter.out("{%- endif -%}")
    emitter.out("{%- endgeneration -%}")
    emitter.fence(frame.after)


# ------------------------------------------------------------------ grammar


def forced_prefixes(layout: Layout) -> ForcedPrefixes:
    """``required``: the ``call`` fence; ``none``: the ``answer`` fence; a named function:
    the ``call`` fence and ``[name(`` (only in a request with tools, as the tokens are)."""
    from .table import joined

    decision = check(layout)
    calls = layout.calls
    assert isinstance(calls, python_calls.PythonCalls)
    opening = joined(layout, decision.call)
    return ForcedPrefixes(
        required=opening,
        none=joined(layout, decision.answer),
        named=lambda name: python_calls.call_prefix(calls, opening, name),
        only_with_tools=True,
    )


def decision_turn(
    fmt: Format,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
    *,
    calls: python_calls.PythonCallSet,
    answer: list[Node],
    content: Callable[[Rules], Node],
    end: Node,
    markers: tuple[str, ...] | None = None,
) -> TurnGrammar:
    """The turn grammar of decision tokens, from its parts (:func:`build_turn` takes them from
    a layout; a hand-written format passes its own)::

        with tools:     CALL [CALLS] END  |  ANSWER CONTENT END
        without tools:  CONTENT END

    ``calls``: the call list opened by the ``call`` fence; ``answer``: the ``answer`` fence's
    nodes; ``content(rules)``: the text of an answer; ``end``: up to the stop (the grammar
    ends where the engine's stop takes over).  The forced prefixes are ``fmt``'s own
    (:meth:`pawlette.Format.forced_prefix`: one source).
    """
    from ..export.grammar import TurnGrammar
    from ..export.turns._common import function_tools_only, rules_for

    function_tools_only(tools)
    rules = rules_for(fmt)
    answered = seq(*answer, content(rules), end)
    if not tools:
        rules.rules["start"] = seq(content(rules), end)
    elif choice.mode == "none":
        rules.rules["start"] = answered
    elif choice.mode == "auto":
        rules.rules["start"] = alt(seq(calls.many(rules, parallel), end), answered)
    else:
        rules.rules["start"] = seq(calls.many(rules, parallel), end)
    turn = TurnGrammar(
        rules=rules,
        markers=tuple(fmt.special_markers) if markers is None else markers,
        stop=fmt.stop,
        forced_prefixes={"auto": "", "none": "", "required": ""},
    )
    if not tools:
        return turn
    turn.forced_prefixes["none"] = fmt.forced_prefix("none", tools) or ""
    turn.forced_prefixes["required"] = fmt.forced_prefix("required", tools) or ""
    for tool in tools:
        named = {"type": "function", "function": {"name": tool.name}}
        turn.forced_prefixes[tool.name] = fmt.forced_prefix(named, tools) or ""
    after = rules_for(fmt)
    if choice.mode == "none":
        after.rules["start"] = seq(content(after), end)
        turn.after_prefix = after
        return turn
    turn.trigger = next((node.text for node in calls.opening if isinstance(node, Special)), None)
    if choice.mode == "auto":
        lazy = rules_for(fmt)
        lazy.rules["start"] = seq(calls.many(lazy, parallel), end)
        turn.lazy = lazy
        return turn
    prefix = turn.forced_prefixes["required" if choice.mode == "required" else choice.key()]
    after.rules["start"] = seq(calls.after_prefix(after, prefix, parallel), end)
    turn.after_prefix = after
    return turn


def build_turn(
    fmt: Format,
    layout: Layout,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
) -> TurnGrammar:
    """The turn grammar of a layout with decision tokens (:func:`decision_turn`, the text of
    an answer being the format's text language)."""
    from .grammar import TEXT, _end, nodes
    from .parts import grammar_content

    decision = check(layout)
    calls = layout.calls
    assert isinstance(calls, python_calls.PythonCalls)
    call_set = python_calls.PythonCallSet(
        calls, tools, choice.only, nodes(layout, decision.call), nodes(layout, calls.close)
    )
    return decision_turn(
        fmt,
        tools,
        choice,
        parallel,
        calls=call_set,
        answer=nodes(layout, decision.answer),
        content=lambda rules: grammar_content(layout, rules, optional(TEXT)),
        end=_end(layout, fmt.stop),
    )
