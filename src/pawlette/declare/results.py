"""Tool results: each tool message in the ``tool`` frame, alone or grouped with its neighbours.

The format writes no call ids here: a result answers the call at its position among the
calls of the assistant message before it (parsing pairs them so: the fold's
:func:`~pawlette.engine.fold.pair_results`).  A result given out of that order, or after the
last call, is written where it is given and recorded as a loss.

>>> from pawlette.declare import Results, fence
>>> Results(grouped=True, item_open=fence("\\n<tool_response>\\n")).grouped
True
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from ..engine.fold import positional_answers
from ..engine.readers import ScaffoldReader, WholeTextReader
from ..errors import FormatError, RequestError
from .concept import Concept
from .pieces import Fence, text_of
from .readers import (
    ResultBeforeIdReader,
    ResultIdAfterReader,
    ResultIdReader,
    ResultReader,
    ResultTextReader,
)
from .table import begin

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..engine.machine import ReaderFactory
    from ..types import Message
    from .concept import Layout, Render, Table, Template


@dataclass(frozen=True)
class Results(Concept):
    """Tool results in ``Layout.frames["tool"]``.

    Fields:

    - ``grouped``: consecutive tool messages share one turn (its frame opens before the
      first and ends after the last); else each is a turn of its own.
    - ``item_open`` / ``item_close``: around each result's text.
    - ``id_close``: the format writes the ``tool_call_id`` of the call a result answers
      first, then this fence (Mistral's ``[TOOL_RESULTS]ID[TOOL_CONTENT]...``); None: no
      ids (results answer calls by position).  ``id_pattern``: what a written id must match
      (with ``id_close`` or ``id_after``: without them no id is written, and it is refused).
    - ``json_text``: each result's text is written as a JSON string (Jinja's ``tojson`` of
      it, non-ASCII kept: Meta's Llama 3 templates quote every text result so); reading
      decodes a whole JSON string back, and keeps any other text as written.
    - ``trim``: each result's text is written without the whitespace at its ends (Jinja's
      ``trim``: Qwen3.5); a text that changes is a recorded loss.
    - ``item_gap``: written after each result's ``item_close`` unless that result is the
      conversation's last message (Hermes 2 Pro's template writes ``\\n`` so); read as the
      layout between results.  ``gap_ends_group`` False: only between the results of a
      group, never after its last one.
    - ``name_close``: with ``id_close``, the format writes the name of the call a result
      answers after the id's fence (looked up by ``tool_call_id`` among the conversation's
      calls; empty when none matches), then this fence (Solar Open's
      ``ID<|tool_response:name|>NAME<|tool_response:result|>``); reading skips the name (the
      call names the tool).  None (the default): no name there.  In a group with an
      ``item_gap``, the results after the first begin with the gap, then the id.
    - ``id_after``: the format writes the ``tool_call_id`` of the call a result answers
      after its text, between this fence and ``item_close`` (Mistral Nemo's ``{"content":
      TEXT, "call_id": "ID"}``); None (the default): not there.  Not with ``id_close``
      (the id is written once), and only with an ``item_close`` (which ends the id).
    - ``ids``: with ``id_close``, ``"given"`` writes the ``tool_call_id`` as given;
      ``"positional"`` writes the position, among all the conversation's calls, of the first
      call with that id (empty when none has it: Cohere's templates, whose calls are
      numbered so, see ``JsonCallList.ids``); a given id that differs is a recorded loss.

    A tool message's ``name`` is accepted and not written (the call it answers names it);
    the rendering records the loss, unless another concept writes it.  A results turn gets
    the turn hooks ``write_before`` and ``write_opening`` (at its first result when grouped).
    """

    grouped: bool = False
    item_open: Fence = ()
    item_close: Fence = ()
    id_close: Fence | None = None
    id_pattern: str | None = None
    json_text: bool = False
    trim: bool = False
    item_gap: Fence = ()
    gap_ends_group: bool = True
    name_close: Fence | None = None
    ids: Literal["given", "positional"] = "given"
    id_after: Fence | None = None

    claims: ClassVar[frozenset[str]] = frozenset({"tool"})
    handles: ClassVar[frozenset[str]] = frozenset({"tool_name"})

    def validate(self, layout: Layout) -> None:
        if "tool" not in layout.frames:
            raise FormatError(
                f"{layout.name}: Results: no 'tool' frame; expected Layout.frames['tool'], the "
                "frame of a results turn"
            )
        if self.name_close is not None and self.id_close is None:
            raise FormatError(
                f"{layout.name}: Results.name_close without id_close: name_close="
                f"{self.name_close!r}, id_close=None; expected an id_close too (the format writes "
                "the call's id, id_close, then its name and name_close; a result that names "
                "its call with no id before it is no field of Results)"
            )
        if self.id_pattern is not None and not self.writes_ids():
            raise FormatError(
                f"{layout.name}: {type(self).__name__}.id_pattern: {self.id_pattern!r} without "
                "id_close or id_after; expected one of them too (the pattern checks the "
                "tool_call_id the format writes, and without them no id is written), or "
                "id_pattern left out"
            )
        if self.id_after is not None and (
            not self.id_after or self.id_close is not None or not self.item_close
        ):
            raise FormatError(
                f"{layout.name}: Results.id_after empty, or with id_close or without "
                "item_close; expected the id written once, after the text and before an "
                "item_close fence"
            )
        if self.ids not in ("given", "positional") or (
            self.ids == "positional" and self.id_close is None
        ):
            raise FormatError(
                f"{layout.name}: Results.ids: {self.ids!r}; expected 'given', or 'positional' "
                "with id_close"
            )
        if self.grouped and not (self.item_close or self.item_open):
            raise FormatError(
                f"{layout.name}: Results(grouped=True) without item_open or item_close; "
                "expected a fence that begins or ends each result, or the results of a group "
                "run together"
            )

    # ------------------------------------------------------------------ the writer

    def hook_is_local(self, hook: str, role: str) -> bool:
        """A result alone in its turn, with no id or gap to place, is its message's own."""
        alone = not (self.grouped or self.writes_ids() or self.item_gap)
        return hook == "write_message" and alone and self.inherits(Results, "write_message")

    def hook_reads_neighbours(self, hook: str, role: str) -> bool:
        """A grouped result with no id or gap to place: its turn opens before it when the
        message before is not a result, and ends after it when the one after is not."""
        alone = not (self.writes_ids() or self.item_gap)
        return hook == "write_message" and self.grouped and alone and self.inherits(Results, hook)

    def check_is_local(self) -> bool:
        return self.inherits(Results, "check", "written_id", "_written_by_another")

    def check(self, out: Render) -> None:
        out.handled.add("tool_name")  # (out.handles without its call: every render asks)
        writes_id = self.writes_ids()
        if not writes_id and "calls" in out.present and not self._written_by_another(out):
            _paired_by_position(out)
        if not (writes_id or self.trim or "tool_name" in out.present):
            return  # (most formats: nothing to check, and no walk through the messages)
        pattern = None if self.id_pattern is None else re.compile(self.id_pattern)
        for index, message in enumerate(out.messages):
            if message.role != "tool":
                continue
            if self.trim and (text := out.message_text(index)) != text.strip():
                out.lose(f"messages[{index}].content", "whitespace at its ends trimmed")
            position = self.written_id(out, index)
            if self.ids == "positional" and position != (message.tool_call_id or ""):
                out.lose(
                    f"messages[{index}].tool_call_id",
                    f"written as the position of the call it answers ({position!r})",
                )
            if message.name is not None and not self._written_by_another(out, "tool_name"):
                out.lose(f"messages[{index}].name", "not written (the call names the tool)")
            if writes_id:
                found = message.tool_call_id or ""
                if not found or (pattern is not None and not pattern.fullmatch(found)):
                    expected = "the id of the call it answers"
                    if self.id_pattern is not None:
                        expected += f", matching {self.id_pattern}"
                    raise RequestError(
                        f"messages[{index}].tool_call_id", repr(message.tool_call_id), expected
                    )

    def _written_by_another(self, out: Render, field: str = "tool_call_id") -> bool:
        """Whether another concept writes a result's ``field`` (``"tool_name"``, or
        ``"tool_call_id"``: PCML's headers write it)."""
        return any(
            field in getattr(concept, "handles", ()) and concept is not self
            for concept in out.layout.concepts
        )

    def write_message(self, out: Render, index: int) -> None:
        # (Every tool result of most formats comes through here: empty fences are not
        # written, and the frame's fences are the turn skeleton's, kept by message index.)
        messages = out.messages
        hooks = out.plan.turns["tool"]
        writer = out.writer
        grouped = self.grouped
        first = not grouped or index == 0 or messages[index - 1].role != "tool"
        last = not grouped or index == len(messages) - 1 or messages[index + 1].role != "tool"
        out.role, out.index = "tool", index
        writer.role, writer.message_index = "tool", index
        fence = out.fence
        if first:
            if hooks.before:
                for hook in hooks.before:
                    hook(out, index)
                out.role, out.index = "tool", index
                writer.role, writer.message_index = "tool", index
            if hooks.opens:
                segments = hooks.opened.get(index)
                if segments is None:
                    segments = out._frame_segments(hooks, index, opening=True)
                writer.extend(segments)
            else:
                fence(hooks.frame.opener(out.previous), "header")  # type: ignore[union-attr]
            for hook in hooks.opening:
                hook(out, index)
        if self.id_close is not None:
            out.text(self.written_id(out, index), "tool_result")
            fence(self.id_close, "tool_result")
            if self.name_close is not None:
                out.text(self.call_name(out, index), "tool_result")
                fence(self.name_close, "tool_result")
        if self.item_open:
            fence(self.item_open, "tool_result")
        text = out.message_text(index).strip() if self.trim else out.message_text(index)
        out.text(_json_string(text) if self.json_text else text, "tool_result")
        if self.id_after is not None:
            fence(self.id_after, "tool_result")
            out.text(messages[index].tool_call_id or "", "tool_result")
        if self.item_close:
            fence(self.item_close, "tool_result")
        if self.item_gap and index < len(messages) - 1 and (self.gap_ends_group or not last):
            fence(self.item_gap, "tool_result")
        if last:
            segments = hooks.ended.get(index)
            if segments is None:
                segments = out._frame_segments(hooks, index, opening=False)
            writer.extend(segments)
            out.previous = "tool"

    def writes_ids(self) -> bool:
        """Whether each result's ``tool_call_id`` is written (so it must be given)."""
        return self.id_close is not None or self.id_after is not None

    def written_id(self, out: Render, index: int) -> str:
        """The id written for the result at ``index`` (see ``ids``)."""
        given = out.messages[index].tool_call_id or ""
        if self.ids == "given":
            return given
        # (The positions depend on the messages alone: found once per render.)
        return out.state(positions, lambda: positions(out.messages)).get(given, "")

    @staticmethod
    def call_name(out: Render, index: int) -> str:
        """The name of every call whose id is the ``tool_call_id`` of ``messages[index]``
        (the templates' lookup writes each match)."""
        wanted = out.messages[index].tool_call_id
        return "".join(
            call.name
            for message in out.messages
            if message.role == "assistant"
            for call in message.tool_calls or ()
            if call.id == wanted
        )

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        openers = table.openers("tool")  # (a tool frame has no prompt_after)
        item_open, item_close = table.text(self.item_open), table.text(self.item_close)
        if self.writes_ids():
            table.fields["tool"] = {"tool_call_id": "tool_call_id"}
        # (a written id of a shape the render refuses is served under one it takes)
        pattern = self.id_pattern
        id_before: ReaderFactory = ResultIdReader
        id_after: ReaderFactory = ResultIdAfterReader
        if pattern is not None:
            id_before = functools.partial(ResultIdReader, pattern=pattern)
            id_after = functools.partial(ResultIdAfterReader, pattern=pattern)
        if self.id_close is not None:
            table.state("tool.id", id_before, "tool")
            text_reader = JsonResultTextReader if self.json_text else ResultTextReader
            table.state("tool.item", text_reader, "tool", ends=not item_close)
            for opener in sorted(openers - {""}):
                table.on("outside", opener, "tool.id")
            if self.name_close is None:
                table.on("tool.id", table.text(self.id_close) + item_open, "tool.item")
            else:
                table.state("tool.name", ResultNameReader, "tool")
                table.on("tool.id", table.text(self.id_close), "tool.name")
                table.on("tool.name", table.text(self.name_close) + item_open, "tool.item")
        else:
            if self.id_after is not None:  # the text up to the id's fence, the id after it
                table.state("tool.item", ResultBeforeIdReader, "tool")
                table.state("tool.id", id_after, "tool")
            else:
                reader = JsonResultReader if self.json_text else ResultReader
                table.state("tool.item", reader, "tool", ends=not item_close)
            for opener in sorted(openers):
                if opener + item_open:
                    table.on("outside", opener + item_open, "tool.item", begin("tool"))
        if not item_close:
            if self.grouped and self.id_close is None:
                # Nothing ends a result: the next one's open does (Bielik's
                # ``<|function_output|>A<|function_output|>B``).
                table.on("tool.item", item_open, "tool.item", begin("tool"))
            return
        if self.id_after is not None:
            table.on("tool.item", table.text(self.id_after), "tool.id")
        table.state("tool.between", ScaffoldReader, "tool", ends=True)
        table.on(
            "tool.id" if self.id_after is not None else "tool.item", item_close, "tool.between"
        )
        if self.grouped and self.id_close is not None and self.item_gap:
            table.on("tool.between", table.text(self.item_gap), "tool.id")
        elif self.grouped:
            actions = (begin("tool"),) if self.id_close is None else ()
            table.on("tool.between", item_open, "tool.item", *actions)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_message(self, out: Template, role: str) -> None:
        frame = out.layout.frames["tool"]
        if self.grouped:
            out.out('{%- if index == 0 or messages[index - 1].role != "tool" -%}')
        out.each("jinja_before", "tool")
        out.open_fence("tool")
        out.each("jinja_lead", "tool")
        out.each("jinja_opening", "tool")
        if self.grouped:
            out.out("{%- endif -%}")
        if self.id_close is not None and self.ids == "positional":
            out.out(
                "{%- set position = namespace(count=0, found=none) -%}"
                + _each_call(
                    "{%- if position.found is none and call.id == message.tool_call_id -%}"
                    "{%- set position.found = position.count -%}{%- endif -%}"
                    "{%- set position.count = position.count + 1 -%}"
                )
                + "{%- if position.found is not none -%}{{- position.found -}}{%- endif -%}"
            )
            out.fence(self.id_close)
        elif self.id_close is not None:
            out.out("{{- message.tool_call_id -}}")
            out.fence(self.id_close)
            if self.name_close is not None:
                out.out(
                    _each_call(
                        "{%- if call.id == message.tool_call_id -%}{{- call.function.name -}}"
                        "{%- endif -%}"
                    )
                )
                out.fence(self.name_close)
        out.fence(self.item_open)
        if self.json_text:
            out.out(f"{{{{- text_of(message, index, {out.layout.name!r}) | tojson -}}}}")
        elif self.trim:
            out.value(f"text_of(message, index, {out.layout.name!r}) | trim")
        else:
            out.text()
        if self.id_after is not None:
            out.fence(self.id_after)
            out.out("{{- message.tool_call_id -}}")
        out.fence(self.item_close)
        if self.item_gap:
            more = "" if self.gap_ends_group else ' and messages[index + 1].role == "tool"'
            out.fence_if(f"not loop.last{more}", self.item_gap)
        if self.grouped:
            out.out('{%- if loop.last or messages[index + 1].role != "tool" -%}')
        out.fence(frame.end)
        out.fence(frame.after)
        out.out('{%- set ns.previous = "tool" -%}')
        if self.grouped:
            out.out("{%- endif -%}")


@dataclass(frozen=True)
class GapAfterResults(Concept):
    """``gap``: whitespace the template writes between results and the answer (or the
    generation prompt) after them, in place of the assistant's opener (DeepSeek V3.2's blank
    line; the assistant's frame then opens with nothing after a tool turn:
    ``open_after={"tool": ()}``).  Written as layout, and read as the whitespace between
    turns: a gap cannot be an opener, since texts hold blank lines."""

    gap: Fence

    def validate(self, layout: Layout) -> None:
        text = text_of(self.gap, layout.options, layout.name)
        if not text or text.strip():
            raise FormatError(
                f"{layout.name}: GapAfterResults.gap: {text!r}; expected whitespace (a gap "
                "is read as the layout between turns)"
            )

    acts_on: ClassVar[frozenset[str] | None] = frozenset({"assistant"})

    def write_before(self, out: Render, index: int) -> None:
        if out.previous == "tool":
            out.fence(self.gap, "separator")

    def jinja_before(self, out: Template, role: str) -> None:
        if role == "assistant":
            out.fence_if('ns.previous == "tool"', self.gap)


def _each_call(body: str) -> str:
    """The Jinja loop through every call of the conversation's messages, ``call`` each."""
    return (
        "{%- for called in messages -%}"
        '{%- if called.role == "assistant" and called.tool_calls is defined '
        "and called.tool_calls -%}{%- for call in called.tool_calls -%}"
        + body
        + "{%- endfor -%}{%- endif -%}{%- endfor -%}"
    )


_json_string = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(text, ensure_ascii=False)`` without making its encoder in each call."""


def _paired_by_position(out: Render) -> None:
    """Record a loss for each result a reader would pair with another call: where no call
    id is written, the model and the parser (:func:`~pawlette.engine.fold.pair_results`)
    match a run of results with the calls before it in order, so a result given out of that
    order, or beyond the last call, no longer says which call it answers."""
    messages = out.messages
    for index, position, call_id in positional_answers(messages):
        given = messages[index].tool_call_id
        if given is not None and given != call_id:
            paired = (
                "no call (there are fewer calls before it)"
                if call_id is None
                else f"call {position} ({call_id!r})"
            )
            out.lose(
                f"messages[{index}].tool_call_id",
                f"{given!r} not written: results are matched with calls by position, and "
                f"this one is read as the answer to {paired}",
            )


def positions(messages: Sequence[Message]) -> dict[str, str]:
    """Each call id's position among the calls of ``messages`` (its first call's)."""
    found: dict[str, str] = {}
    position = 0
    for message in messages:
        if message.role != "assistant":
            continue
        for call in message.tool_calls or ():
            found.setdefault(call.id or "", str(position))
            position += 1
    return found


class JsonResultReader(ResultReader):
    """A result written as a JSON string (``Results.json_text``): its decoded text; text that
    is not one whole JSON string is kept as written."""

    __slots__ = ()

    def _text(self) -> str:
        text = super()._text()
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, str) else text


class JsonResultTextReader(JsonResultReader):
    """A :class:`JsonResultReader` after the result's id (the message began at the id)."""

    __slots__ = ()


class ResultNameReader(WholeTextReader):
    """The name of the call a result answers (``Results.name_close``): layout, not part of
    the message (the call names the tool)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        return
