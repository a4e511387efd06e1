"""What the call concepts share: the checks of a turn's calls, the text beside them, and the
skeletons of calls written one after another inside an optional section or as one list.

:class:`CallConcept` checks every assistant turn with calls (its text, their number, each
name, each id against ``id_pattern``), drops the text beside them where ``content`` says
so, and opens their template.  :class:`SectionedCallConcept` writes, reads and templates::

    [text_separator] section_open  open CALL close [separator open CALL close ...]  section_close

and a subclass gives only what stands between one call's ``open`` and ``close``
(:class:`~.named_calls.NamedCalls`: a name and JSON arguments; :class:`~.xml_calls.XmlCalls`:
a name and one tag per parameter).  :class:`ListedCallConcept`: ``[text_separator] open
LIST close``, the list read whole (a JSON array, a Python list).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..engine.call_scanner import unknown_tool
from ..engine.json_text import PARSED_ARGUMENTS, acyclic_json_string, written_as_is
from ..engine.kept import MISSING, Kept
from ..errors import RequestError, UnsupportedFeature
from ..types import ToolCall
from .call_ids import IdPiece, ReplacedCallIds, id_shape, mint_id
from .concept import Concept
from .pieces import Fence
from .readers import AfterSectionReader, BetweenCallsReader, SectionReader, next_state

if TYPE_CHECKING:
    from ..engine.machine import Parser, ReaderFactory
    from .jinja import Template
    from .table import Table
    from .write import Render


Content = Literal["written", "dropped", "refused", "replaces_calls"]
"""What a calls concept does with a turn's text beside its calls: writes it before them,
drops it (a recorded loss), refuses it, or writes it in their place (``"replaces_calls"``:
the calls are a recorded loss; Phi-4-mini's template writes a turn's text, else its calls)."""


def check_call_name(name: str, index: int, number: int) -> None:
    """An empty call name parses back as no call, so a render refuses it."""
    if not name:
        name_path = f"messages[{index}].tool_calls[{number}].function.name"
        raise RequestError(name_path, "an empty name", "a function name")


def arguments_value(arguments: str, index: int, number: int) -> Any:
    """The parsed arguments of ``messages[index].tool_calls[number]`` (empty: ``{}``); the
    value the OpenAI reader parsed of a new text is taken, not parsed again."""
    value = PARSED_ARGUMENTS.kept.pop(arguments, MISSING)
    if value is not MISSING:
        return value
    try:
        return json.loads(arguments.strip() or "{}")
    except json.JSONDecodeError as error:
        where = f"messages[{index}].tool_calls[{number}].function.arguments"
        raise RequestError(where, f"not valid JSON ({error.msg})", "a JSON object") from error


def arguments_object(arguments: str, index: int, number: int) -> dict[str, Any]:
    """The parsed arguments of ``messages[index].tool_calls[number]``, refused unless an
    object (formats that write each argument by its key)."""
    value = arguments_value(arguments, index, number)
    if not isinstance(value, dict):
        where = f"messages[{index}].tool_calls[{number}].function.arguments"
        raise RequestError(where, "not a JSON object", "a JSON object of arguments")
    return value


def arguments_json(
    arguments: str, index: int, number: int, verbatim: bool = False, *, ascii: bool = False
) -> str:
    """The arguments of ``messages[index].tool_calls[number]`` as Jinja's ``tojson`` writes
    the parsed object (``verbatim``: the caller's text, stripped; ``ascii``: as
    ``tojson(ensure_ascii=True)``)."""
    stripped = arguments.strip()
    if verbatim:
        return stripped
    kept = _WRITTEN_ASCII if ascii else WRITTEN_ARGUMENTS
    # A conversation's calls come back in every later request (the stores' dicts are read
    # directly: render's hot path, once per call).
    found = kept.kept.get(stripped, MISSING)
    if found is not MISSING:
        return found  # type: ignore[no-any-return]
    if not ascii:
        return new_arguments_json(stripped, index, number)
    written = json.dumps(arguments_value(stripped, index, number))
    kept.keep(stripped, written)
    return written


def new_arguments_json(stripped: str, index: int, number: int) -> str:
    """:func:`arguments_json` of arguments ``stripped`` (their text, stripped) that
    :data:`WRITTEN_ARGUMENTS` does not hold: written, and kept there."""
    value = arguments_value(stripped, index, number)  # (a new text: the reader's parse)
    # (most arguments are written as the caller wrote them: then nothing is written again;
    # json.loads gives no container twice on a path: json's circular check is not needed)
    written = stripped if written_as_is(stripped, value) else acyclic_json_string(value)
    WRITTEN_ARGUMENTS.keep(stripped, written)
    return written


WRITTEN_ARGUMENTS: Kept[str] = Kept(limit=4096, longest=1 << 14)
"""Arguments as :func:`arguments_json` writes them, by their stripped text (the text alone
decides what is written)."""
_WRITTEN_ASCII: Kept[str] = Kept(limit=4096, longest=1 << 14)
"""The same, written as ``tojson(ensure_ascii=True)`` writes them."""


@dataclass
class MessageCallIds:
    """The ids of the calls read so far in the message being read (a parser context)."""

    ids: set[str] = field(default_factory=set)
    deferred: tuple[int, str, str, str] | None = None
    """The warning of a repeated id, held until the streamed call it names is read whole
    (a call refused at its close is no call, and warns of nothing else)."""


class CallConcept(Concept):
    """A calls concept's checks and its text beside the calls (``content``), for subclasses
    that are frozen dataclasses declaring ``content``, ``parallel``, ``first_only`` and
    ``id_pattern`` (a regular expression every written call id must match; None: any) or
    keeping these defaults."""

    job: ClassVar[str | None] = "calls"
    handles: ClassVar[frozenset[str]] = frozenset({"calls"})
    content: Content = "written"
    parallel: bool = True
    first_only: bool = False
    id_pattern: str | None = None
    text_separator: Fence = ()
    """Between a turn's text and its calls."""
    loose: bool = False
    """The fences are also read without the whitespace they write around markers."""

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        """The writer's content hook only where it drops the text beside calls (render's hot
        path: it is asked at every assistant turn)."""
        kept = (
            self.content == "dropped" or type(self).write_content is not CallConcept.write_content
        )
        if hook == "write_content" and not kept:
            return frozenset()
        return self.turn_roles()

    def hook_needs(self, hook: str, role: str) -> str | None:
        """The writer's own content and closing hooks act on a turn with calls alone."""
        return "tool_calls" if getattr(type(self), hook, None) in _ACTING_ON_CALLS else None

    def check_is_local(self) -> bool:
        # (a subclass's check_call is given a call alone; its check_turn the render)
        kind = type(self)
        return kind.check is CallConcept.check and kind.check_turn is CallConcept.check_turn

    def check(self, out: Render) -> None:
        """Refuse, or record as lost, what a turn holds beside its calls that the format
        cannot write: its text (as ``content`` says), several calls (without ``parallel``;
        ``first_only``: the first is written, the others lost); then check each call."""
        out.handled.add("calls")  # (out.handles without its call: every render asks)
        if "calls" not in out.present:
            return
        content = self.content  # (the layout's: read once, not per turn)
        id_pattern = self._id_pattern
        # A subclass's own checks, called; the base's (which check nothing) are not.
        kind = type(self)
        check_turn = kind.check_turn is not CallConcept.check_turn
        check_call = kind.check_call is not CallConcept.check_call
        if (
            content == "written"
            and self.parallel
            and id_pattern is None
            and not (check_turn or check_call)
        ):
            # Nothing to check but that each call has a name (most formats): that alone.
            for index, message in enumerate(out.messages):
                calls = message.tool_calls
                if calls and message.role == "assistant":
                    for number, call in enumerate(calls):
                        if not call.name:
                            check_call_name(call.name, index, number)
            return
        for index, message in enumerate(out.messages):
            calls = message.tool_calls
            if not calls or message.role != "assistant":
                continue
            if check_turn:
                self.check_turn(out, index)
            if content != "written" and message.content and out.message_text(index):
                if content == "refused":
                    raise UnsupportedFeature(
                        f"messages[{index}].content",
                        "text alongside tool calls",
                        f"either text or calls: {out.layout.name} writes calls alone",
                    )
                elif content == "replaces_calls":
                    out.lose(
                        f"messages[{index}].tool_calls",
                        "not written: the text is written in their place",
                    )
                else:
                    out.lose(f"messages[{index}].content", "not written beside tool calls")
            if len(calls) > 1 and not self.parallel:
                if not self.first_only:
                    raise UnsupportedFeature(
                        f"messages[{index}].tool_calls",
                        f"{len(calls)} calls",
                        f"one call per turn: {out.layout.name} has no parallel calls",
                    )
                out.lose(f"messages[{index}].tool_calls", "calls after the first not written")
            for number, call in enumerate(calls):
                if not call.name:
                    check_call_name(call.name, index, number)
                if id_pattern is not None and not id_pattern.fullmatch(call.id or ""):
                    raise RequestError(
                        f"messages[{index}].tool_calls[{number}].id",
                        repr(call.id),
                        f"an id matching {self.id_pattern} ({out.layout.name} declares its "
                        f"call ids so: {type(self).__name__}.id_pattern)",
                    )
                if check_call:
                    self.check_call(call, index, number)

    @cached_property
    def _id_pattern(self) -> re.Pattern[str] | None:
        return None if self.id_pattern is None else re.compile(self.id_pattern)

    @cached_property
    def id_shape(self) -> tuple[IdPiece, ...] | None:
        """The pieces of ``id_pattern`` (None: any id), which the parser mints ids of and the
        forced grammar holds the model's ids to (:func:`~.call_ids.id_shape`)."""
        return id_shape(type(self).__name__, self.id_pattern)

    def new_id(self, parser: Parser) -> str:
        """An id for a call the model wrote without one: of ``id_pattern``'s shape unless the
        parser's caller gave its own ids (:meth:`~pawlette.engine.machine.Parser.mint_call_id`)."""
        shape = self.id_shape
        if shape is None:
            return parser.mint_call_id(None)
        return parser.mint_call_id(lambda seed: mint_id(shape, seed))

    def served_id(
        self,
        parser: Parser,
        written: str | None,
        name: str,
        offset: int,
        spare: str | None = None,
        *,
        deferred: bool = False,
    ) -> str:
        """The id a call is given: the one written, else ``spare`` (an id already made for a
        call given up), else a new one (:meth:`new_id`).  A written id that an earlier call of
        the same message holds, or that does not match ``id_pattern``, is replaced by
        :meth:`repeated_id`'s, after a warning (strict: a :class:`~pawlette.errors.ParseError`):
        a client answers calls by id, so two calls served under one id could not both be
        answered on its next turn, and an id the format's render refuses (Mistral's template
        takes nine letters and digits alone) would have that turn refused.  ``deferred``: the
        call is served before it is read whole, so the warning waits in
        :class:`MessageCallIds` for the reader to give it once the call is read
        (:func:`give_deferred`)."""
        taken = parser.context(MessageCallIds)
        if parser.calls_in_message == 0:  # the message's first call
            taken.ids.clear()
        if written is None:
            identifier = spare or self.new_id(parser)
        elif written in taken.ids or (
            self.id_pattern is not None and re.fullmatch(self.id_pattern, written) is None
        ):
            # An id the format's render refuses would have the client's next turn refused:
            # replaced by one of the shape it writes, as a repeated id is by a distinct one.
            identifier = self.repeated_id(parser, name, taken.ids, spare)
            if written in taken.ids:
                found, expected = "held by an earlier call of the message", "a distinct id"
                expected += " for each call"
            else:
                found = "is of a shape the format's render refuses"
                expected = f"an id matching {self.id_pattern}"
                parser.context(ReplacedCallIds).ids[written] = identifier
            warning = (
                offset,
                f"call id {written!r} {found} (served as {identifier!r})",
                expected,
                written,
            )
            if deferred:
                taken.deferred = warning
            else:
                parser.malformed(*warning)
        else:
            identifier = written
        taken.ids.add(identifier)
        return identifier

    def repeated_id(
        self, parser: Parser, name: str, taken: set[str], spare: str | None = None
    ) -> str:
        """An id none of ``taken`` is, for a call to ``name`` whose written id an earlier call
        of its message holds: ``spare`` (the id made for a streamed call then given up: the
        one a whole read makes next), else a new one (a format that numbers its calls gives
        the next free number)."""
        if spare is not None and spare not in taken:
            return spare
        identifier = self.new_id(parser)
        while identifier in taken:  # (a caller's id factory may repeat itself)
            identifier = self.new_id(parser) + "_" + str(len(taken))
        return identifier

    def check_turn(self, out: Render, index: int) -> None:
        """Check ``messages[index]``, an assistant turn with calls, before its calls."""

    def check_call(self, call: ToolCall, index: int, number: int) -> None:
        """Check ``messages[index].tool_calls[number]``, ``call``."""

    def write_content(self, out: Render, index: int) -> bool:
        # Not written: the text beside calls.
        return (
            self.content == "dropped"
            and 0 <= index < len(out.messages)
            and bool(out.messages[index].tool_calls)
        )

    def jinja_setup(self, out: Template) -> None:
        out.object_arguments = True

    def jinja_content(self, out: Template, role: str) -> bool:
        if self.content != "dropped":
            return False
        with out.when("not (message.tool_calls is defined and message.tool_calls)"):
            out.later_content(self, role)
        return True

    def opening_rows(
        self, table: Table, opening: Fence, state: str, reader: ReaderFactory, *, ends: bool
    ) -> list[str]:
        """Declare ``state``, read by ``reader`` (``ends``: the turn's end fences end the turn
        there), and the rows into it on ``opening``, after text or not, from every state a
        call may open in; the spellings of ``opening``, sorted."""
        table.state(state, reader, "assistant", ends=ends)
        loose = self.loose
        openings = {
            *table.spellings(loose, opening),
            *table.spellings(loose, self.text_separator, opening),
        }
        table.calls_open(openings, state)
        return sorted(openings)

    def jinja_closing(self, out: Template, role: str) -> None:
        """A turn's calls in ``{% if message.tool_calls %}``: refuses what :meth:`check`
        refuses, writes ``text_separator`` after a text, then :meth:`jinja_calls`."""
        written = "message.tool_calls is defined and message.tool_calls"
        if self.content == "replaces_calls":
            written += " and not (message.content is defined and message.content)"
        out.out(f"{{%- if {written} -%}}")
        if self.content == "refused":
            out.raise_if(
                "message.content is defined and message.content",
                f"content alongside tool calls: {out.layout.name}",
            )
        if not (self.parallel or self.first_only):
            out.raise_if("message.tool_calls | length > 1", f"one call per turn: {out.layout.name}")
        if self.content == "written" and self.text_separator:
            out.fence_if("message.content is defined and message.content", self.text_separator)
        self.jinja_calls(out)
        out.out("{%- endif -%}")

    def jinja_calls(self, out: Template) -> None:
        """The template's counterpart of :meth:`write_closing`, after the text separator."""
        raise NotImplementedError


class SectionedCallConcept(CallConcept):
    """Calls written one after another inside an optional section (see the module), for
    subclasses that are frozen dataclasses declaring ``open``, ``close``, ``section_open``,
    ``section_close``, ``separator``, ``text_separator`` and ``loose``.  A subclass writes
    one call's inside (:meth:`write_call`), reads it (:meth:`rows` declares its states, then
    :meth:`section_rows`) and templates it (:meth:`jinja_call`)."""

    open: Fence | None
    close: Fence
    section_open: Fence = ()
    section_close: Fence = ()
    separator: Fence

    # ------------------------------------------------------------------ the writer

    def write_call(self, out: Render, index: int, number: int, call: ToolCall) -> None:
        """Write what stands between the call's ``open`` and ``close``."""
        raise NotImplementedError

    @cached_property
    def openings(self) -> tuple[Fence, Fence, Fence]:
        """What comes before a turn's first call after text, before its first call without
        text, and before each other call: each one fence (one segment where a format escapes
        markers), kept (the writer keeps fences by identity)."""
        first = self.section_open + (self.open or ())
        return self.text_separator + first, first, self.separator + (self.open or ())

    def calls_written(self, out: Render, index: int) -> tuple[ToolCall, ...]:
        """The calls of ``messages[index]`` its turn writes (none: no calls, or a text that
        replaces them)."""
        messages = out.messages
        calls = messages[index].tool_calls if 0 <= index < len(messages) else ()
        if not calls or (self.content == "replaces_calls" and out.message_text(index)):
            return ()
        return calls[:1] if self.first_only else calls

    def write_closing(self, out: Render, index: int) -> None:
        # (render's hot path, every assistant turn: the calls and the text read here)
        calls = self.calls_written(out, index)
        if not calls:
            return
        after_text, first, between = self.openings
        close, fence, write_call = self.close, out.fence, self.write_call
        text = self.content == "written" and out.message_text(index)
        fence(after_text if text else first, "tool_call", trainable=True)
        for number, call in enumerate(calls):
            if number:
                fence(between, "tool_call", trainable=True)
            write_call(out, index, number, call)
            fence(close, "tool_call", trainable=True)
        if self.section_close:  # (render's hot path: no call for an empty fence)
            fence(self.section_close, "tool_call", trainable=True)

    # ------------------------------------------------------------------ the parse table

    def call_rows(self, table: Table) -> None:
        """The rows between the states of one call (after the rows into it)."""

    def after_text_spellings(self, table: Table, first: Fence) -> set[str]:
        """How the first call (its section's opener ``first``) is spelled after text."""
        return {*table.spellings(self.loose, self.text_separator, first)}

    def section_rows(self, table: Table, first: str, last: str) -> None:
        """The rows into, between and out of the calls, once a subclass's :meth:`rows` has
        declared one call's states (``first``: the one a call opens in, ``last``: the one
        its ``close`` ends; the states of a call end at the turn's end fences, since a turn
        may end in the middle of a call, which is then content)."""
        between = "assistant.after_call"
        table.state(between, BetweenCallsReader, "assistant", ends=not self.section_close)
        if self.section_open:
            table.state("assistant.calls", SectionReader, "assistant")
        after_text = self.after_text_spellings(table, self.section_open or self.open or ())
        table.calls_open(after_text, "assistant.calls" if self.section_open else first)
        if self.section_open:
            table.on_each("assistant.calls", table.spellings(self.loose, self.open or ()), first)
        self.call_rows(table)
        if self.close:
            table.on_each(last, table.spellings(self.loose, self.close), between)
            last = between
        table.on_each(last, table.spellings(self.loose, self.separator, self.open or ()), first)
        if self.section_close:
            table.state("assistant.after_calls", AfterSectionReader, "assistant", ends=True)
            closes = table.spellings(self.loose, self.section_close)
            table.on_each(last, closes, "assistant.after_calls")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_call(self, out: Template) -> None:
        """The template's counterpart of :meth:`write_call` (``call``, ``loop`` in scope)."""
        raise NotImplementedError

    def jinja_calls(self, out: Template) -> None:
        out.fence(self.section_open)
        written = "message.tool_calls[:1]" if self.first_only else "message.tool_calls"
        out.out(f"{{%- for call in {written} -%}}")
        if self.separator:
            out.fence_if("not loop.first", self.separator)
        out.fence(self.open or ())
        self.jinja_call(out)
        out.fence(self.close)
        out.out("{%- endfor -%}")
        out.fence(self.section_close)


class ListedCallConcept(CallConcept):
    """A turn's calls as one list read whole, ``[text_separator] open LIST close`` (see the
    module), for subclasses that are frozen dataclasses declaring ``open`` and ``close``: a
    subclass gives the list's text (:meth:`list_text`), template (:meth:`jinja_list`) and
    reader (its :meth:`rows`, through :meth:`opening_rows`)."""

    open: Fence | None
    close: Fence

    def list_text(self, out: Render, index: int, calls: tuple[ToolCall, ...]) -> str:
        """The list of ``calls``, those the writer writes in the turn of ``messages[index]``."""
        raise NotImplementedError

    def jinja_list(self, out: Template) -> None:
        """The template's counterpart of :meth:`list_text`."""
        raise NotImplementedError

    def write_closing(self, out: Render, index: int) -> None:
        calls = out.messages[index].tool_calls if 0 <= index < len(out.messages) else ()
        if not calls or (self.content == "replaces_calls" and out.message_text(index)):
            return
        if self.content == "written" and out.message_text(index):
            out.fence(self.text_separator, "tool_call", trainable=True)
        self.write_list(out, index, self.open or (), calls[:1] if self.first_only else calls)

    def write_list(
        self, out: Render, index: int, opening: Fence, calls: tuple[ToolCall, ...]
    ) -> None:
        """``opening`` + the list of ``calls`` (of ``messages[index]``) + ``close``."""
        out.fence(opening, "tool_call", trainable=True)
        out.text(self.list_text(out, index, calls), "tool_call", trainable=True)
        out.fence(self.close, "tool_call", trainable=True)

    def jinja_calls(self, out: Template) -> None:
        out.fence(self.open or ())
        self.jinja_list(out)
        out.fence(self.close)


def name_problem(parser: Parser, name: str) -> str | None:
    """What makes ``name`` (read, stripped) no call's name: empty, or none of the request's
    tools (when it has any); None: a name."""
    if not name:
        return "no call name"
    return unknown_tool(parser.tools, name)


def closing_marker(parser: Parser, marker: str | None) -> str:
    """``marker`` where its row leads out of the call being read (it closes the call), else
    ``""`` (the end of the turn or of the input, or a marker that cuts the call off)."""
    return (marker or "") if next_state(parser, marker) == "assistant.after_call" else ""


_ACTING_ON_CALLS = (
    CallConcept.write_content,
    SectionedCallConcept.write_closing,
    ListedCallConcept.write_closing,
)
"""The writer hooks that do nothing in a turn without calls (:meth:`CallConcept.hook_needs`)."""


def give_deferred(parser: Parser, read: bool) -> None:
    """Give the repeated-id warning :meth:`CallConcept.served_id` held for a streamed call,
    once the call is ``read`` whole (or drop it: the call was refused)."""
    taken = parser.context(MessageCallIds)
    warning, taken.deferred = taken.deferred, None
    if warning is not None and read:
        parser.malformed(*warning)
