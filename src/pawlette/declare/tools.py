"""The tools block: the request's tools, written where the format's template puts them.

>>> from pawlette.declare import Marker, ToolsBlock, fence
>>> block = ToolsBlock(place="before_last_user", open=fence(Marker("[AVAILABLE_TOOLS]")),
...                    close=fence(Marker("[/AVAILABLE_TOOLS]")), array=True)
>>> block.place
'before_last_user'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..emit.jinja_text import fill, jinja_string
from ..engine.json_text import (
    acyclic_json_string,
    c_encoder,
    indented_json,
    kept_indented_json,
    kept_json_string,
)
from ..engine.readers import ContentReader, ScaffoldReader
from ..errors import FormatError, RequestError, UnsupportedFeature
from ..openai import derived, new_tools
from ..types import Message, Tool
from .concept import Concept
from .pieces import Fence, Lit, Marker, markers_in
from .readers import tool_items_reader
from .table import begin

if TYPE_CHECKING:
    from ..engine.machine import ReaderFactory
    from .concept import Layout, Render, Table, Template

Place = Literal[
    "system",
    "first_user",
    "last_user",
    "before_last_user",
    "own_turn",
    "after_system",
    "user_after_system",
]
_WRITERS: dict[int | None, tuple[Callable[[Any], str], Callable[[Any], str]]] = {
    None: (kept_json_string, acyclic_json_string),
    4: (kept_indented_json, indented_json),
}
"""The spellings written by pawlette's own JSON writers (``indent``: none or 4), each as
(kept by content, for tools seen again; made at once, for a request's new tools)."""

_TURN_ROLES: dict[str, frozenset[str] | None] = {
    "system": frozenset({"system"}),
    "own_turn": frozenset(),
    "after_system": None,
    "user_after_system": frozenset({"user", "system"}),
}
"""The roles whose turns the block's turn hooks act on, by place (else the user's)."""
_ON_ITS_OWN = ("before_last_user", "own_turn", "after_system")
_IN_A_USER_TURN = ("first_user", "last_user", "user_after_system")
"""The places inside the turn of a message written as a user turn (its host)."""


@dataclass(frozen=True)
class ToolsBlock(Concept):
    """The tools the request declares.

    Fields:

    - ``place``: ``"system"`` (in the first system turn; one is written when the
      conversation has none: the layout's ``SystemPrompt`` writes that turn, so it needs
      one), ``"first_user"`` / ``"last_user"`` (inside that user turn),
      ``"before_last_user"`` (on its own just before the last user turn opens: Mistral), or
      ``"own_turn"`` (on its own at the start: ``open`` and ``close`` hold the whole turn's
      frame, Kimi's ``tool_declare``), or ``"after_system"`` (on its own right after the
      first system turn, written or default: Devstral, Ministral 3), or
      ``"user_after_system"`` (inside the message right after the leading system message, the
      first message when there is none, written as a user turn whatever its role: Meta's
      Llama 3.x with ``tools_in_user_message``).  Unlike ``"first_user"``, that host is found
      by its place, not its role: a system message, or an assistant answer without calls
      where the assistant frame ends as the user's, is written as the user turn holding the
      tools (its role a recorded loss; none of that turn is trainable, as the model writes
      none of it), any other message there is refused; the system and user frames must end
      alike.  Unlike ``"after_system"``, the block is inside
      that turn, not on its own.
    - ``open`` / ``close``: the fences around the block (instructions included).
    - ``first``: inside a host turn, the block comes before the host's text (else after it,
      with ``separator`` between when the host turn has a message; ``separator_when``
      ``"text"``: only when the message's text, or the default text written in its place,
      is not empty).  ``separator`` + ``open`` is
      one fence (one marker of the lexer).  With ``first``, a ``separator`` is written after
      the block when the host's text is not empty (Qwen3.5: the tools, a blank line, then
      the system text).
    - ``item_open`` / ``item_close``: around each tool; ``array``: the tools are one JSON
      array instead (no item fences).  Each tool is written as JSON; a listing in another
      syntax (XML tags per parameter, a TypeScript namespace) takes a concept of its own.
    - ``wrap``: each tool as OpenAI's whole tool object (``"openai"``:
      ``{"type": "function", "function": {...}}``) or its ``"function"`` object.
    - ``indent`` / ``separators``: the JSON as Jinja's ``tojson(indent=..., separators=...)``
      writes it (non-ASCII kept).
    - ``ascii``: the JSON with every non-ASCII character escaped (``\\u00fc``), as
      ``tojson(ensure_ascii=True)`` writes it (Reka's templates).  Default False: kept.
    - ``always``: with ``place="system"`` or ``"own_turn"``, ``open`` and ``close`` are
      written even when the request has no tools, with nothing between them (Firefunction
      v2's template writes its functions instruction and an empty list in every first system
      turn; Cohere's Command A MoE an empty tools listing in its first turn).
    - ``equal_users``: with ``place="before_last_user"``, the block also comes before every
      earlier user message equal to the last one (every field alike): Mistral Small 3.2's
      and Nemo's templates test ``message == user_messages[-1]``, a dict equality.  Default
      False: before the last user turn alone.
    """

    place: Place = "system"
    open: Fence = ()
    close: Fence = ()
    item_open: Fence = ()
    item_close: Fence = ()
    first: bool = False
    separator: Fence = ()
    indent: int | None = None
    wrap: Literal["openai", "function"] = "openai"
    array: bool = False
    separators: tuple[str, str] | None = None
    separator_when: Literal["message", "text"] = "message"
    always: bool = False
    ascii: bool = False
    equal_users: bool = False

    handles: ClassVar[frozenset[str]] = frozenset({"tools"})
    job: ClassVar[str | None] = "tools block"

    def __post_init__(self) -> None:
        if self.place == "user_after_system":
            # An answer holding the tools is written as a user turn (write_message).
            object.__setattr__(self, "claims", frozenset({"assistant"}))

    @cached_property
    def separated_open(self) -> Fence:
        """``separator`` + ``open``, one fence (kept: the writer keeps fences by identity)."""
        return self.separator + self.open

    def validate(self, layout: Layout) -> None:
        if self.array and (self.item_open or self.item_close):
            raise FormatError(
                f"{layout.name}: ToolsBlock: item_open/item_close with array=True; expected "
                "either items each in their fences or one JSON array"
            )
        if self.place in _ON_ITS_OWN and not (self.open or self.close):
            raise FormatError(
                f"{layout.name}: ToolsBlock(place={self.place!r}) has no open or close fence; "
                "expected fences that tell the block from the turns around it"
            )
        if self.always and self.place not in ("system", "own_turn"):
            raise FormatError(
                f"{layout.name}: ToolsBlock(always=True) with place={self.place!r}; "
                "expected place='system' or 'own_turn'"
            )
        if self.equal_users and self.place != "before_last_user":
            raise FormatError(
                f"{layout.name}: ToolsBlock(equal_users=True) with place={self.place!r}; "
                "expected place='before_last_user'"
            )
        if self.place in ("system", "user_after_system") and "system" not in layout.frames:
            raise FormatError(
                f"{layout.name}: ToolsBlock(place={self.place!r}) and no 'system' frame; "
                "expected one"
            )
        if self.place == "system" and not any(
            "system" in concept.claims for concept in layout.concepts
        ):
            # (the system turn is written by the concept that claims system messages: without
            # one the block would be written nowhere, and no loss would say so)
            raise FormatError(
                f"{layout.name}: ToolsBlock(place='system') and no concept that writes the "
                "system turn; expected a SystemPrompt (or LastSystemPrompt) in Layout.concepts"
            )
        if self.place == "user_after_system":
            system, user = layout.frames["system"], layout.frames["user"]
            if (system.end, system.after) != (user.end, user.after):
                raise FormatError(
                    f"{layout.name}: ToolsBlock(place='user_after_system') with system and user "
                    "frames that end differently; expected the same end and after (a system "
                    "message there is written as the user turn holding the tools)"
                )
        if self.place not in _ON_ITS_OWN and not (self.open or self.item_open or self.separator):
            raise FormatError(
                f"{layout.name}: ToolsBlock.open: empty with place={self.place!r}; expected a "
                "fence with text (or an item_open or a separator): inside a turn, reading "
                "tells the block from the turn's text where it opens"
            )

    # ------------------------------------------------------------------ JSON

    def value(self, tool: Tool) -> Any:
        # (written, never changed: the reader's own dict as it is, no copy per render)
        definition = tool.definition
        if type(definition) is not dict:  # (a core Tool's other mapping: JSON writes a dict)
            definition = dict(definition)
        return {"type": "function", "function": definition} if self.wrap == "openai" else definition

    @cached_property
    def _writers(self) -> tuple[Callable[[Any], str], Callable[[Any], str]] | None:
        """The own writers of this block's JSON spelling (one that keeps texts by content,
        one that does not), or None: json.dumps writes it."""
        if self.ascii or self.separators is not None:
            return None
        return _WRITERS.get(self.indent)

    def dump(self, value: Any) -> str:
        writers = self._writers
        if writers is not None:
            return writers[0](value)
        # Other spellings through json.dumps: a request's tools are written once (tool_texts).
        return json.dumps(
            value, ensure_ascii=self.ascii, indent=self.indent, separators=self.separators
        )

    def _tojson(self) -> str:
        options = ["ensure_ascii=True"] if self.ascii else []
        if self.indent is not None:
            options.append(f"indent={self.indent}")
        if self.separators is not None:
            options.append(f'separators=("{self.separators[0]}", "{self.separators[1]}")')
        return "tojson" + (f"({', '.join(options)})" if options else "")

    # ------------------------------------------------------------------ the writer

    def turn_roles(self) -> frozenset[str] | None:
        return _TURN_ROLES.get(self.place, frozenset({"user"}))

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        """Each turn hook only where it writes (the block before the turn, or first or last
        in it)."""
        if hook.endswith("_before") and self.place not in ("before_last_user", "after_system"):
            return frozenset()
        if hook in ("turn_open", "jinja_open"):  # (a system host opens as a user turn)
            return self._host_roles - {"user"} if self.place == "user_after_system" else frozenset()
        if hook.endswith(("_opening", "_closing")) and self.place in _ON_ITS_OWN:
            return frozenset()  # (a block on its own is in no turn)
        if hook.endswith("_opening") and not self.first:
            return frozenset()
        if hook.endswith("_closing") and self.first:
            return frozenset()
        return self.turn_roles()

    def check_is_local(self) -> bool:
        kind = type(self)
        return all(
            getattr(kind, name) is getattr(ToolsBlock, name)
            for name in ("check", "host_index", "_check_host")
        )

    def check(self, out: Render) -> None:
        out.handled.add("tools")  # (out.handles without its call: every render asks)
        for number, tool in enumerate(out.tools):
            if tool.kind != "function":
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
        if not out.tools:
            return
        host = self.host_index(out)
        if self.place == "user_after_system":
            self._check_host(out, host)
        elif host == -1:  # (a user turn holds them, and none is)
            raise RequestError(
                "messages",
                "no user message",
                f"a user message: {out.layout.name} writes the tools "
                + self.place.replace("_", " ").replace("before", "before the"),
            )

    def _check_host(self, out: Render, host: int) -> None:
        """The message after the first system message holds the tools as a user turn: a
        system message or an answer loses its role there, anything else is refused."""
        where = "the message after the first system message (the first when there is none)"
        if host == -1:
            raise RequestError(
                "messages",
                "no message to hold the tools",
                f"{where}: {out.layout.name} writes the tools into it, as a user turn",
            )
        message = out.messages[host]
        role = message.role
        if role == "system" or (role == "assistant" and self._answer_hosts(out, message)):
            out.lose(f"messages[{host}].role", "written as the user turn holding the tools")
        elif role == "user" and not out.message_text(host):
            # (its turn holds the block alone, which reading takes for no message)
            out.lose(f"messages[{host}]", "a user message with empty text, read back as none")
        elif role != "user":
            answer = " or an answer without calls" if _ends_alike(out.layout) else ""
            raise RequestError(
                f"messages[{host}]" + (".tool_calls" if message.tool_calls else ".role"),
                "calls" if message.tool_calls else repr(role),
                f"a user message{answer}: {out.layout.name} writes the tools into {where}",
            )

    @staticmethod
    def _answer_hosts(out: Render, message: Message) -> bool:
        """Whether an answer at the host's place is written as the user turn holding the
        tools: one without calls, where the assistant frame ends as the user's (Meta's
        templates write that message's text as the user's, whatever its role)."""
        return not message.tool_calls and _ends_alike(out.layout)

    def host_index(self, out: Render) -> int:
        """The index of the message whose turn holds the block (-1: none; -2: not a
        message's turn)."""
        if self.place == "first_user":
            return next((n for n, m in enumerate(out.messages) if m.role == "user"), -1)
        if self.place in ("last_user", "before_last_user"):
            return out.last_query
        if self.place == "user_after_system":
            host = _after_first_system(out)
            return host if host < len(out.messages) else -1
        return -2

    def _hosts(self, out: Render, index: int) -> bool:
        if not out.tools and not self.always:
            return False
        if self.place == "system":
            return out.role == "system" and index <= 0
        if index > 1 and self.place == "user_after_system":
            return False  # (its host is the first or the second message: most turns are past)
        # (the index first: most turns are not the host's)
        return (
            self.place in _IN_A_USER_TURN
            and index == self.host_index(out)
            and out.role in self._host_roles
        )

    @cached_property
    def _host_roles(self) -> frozenset[str]:
        return self.turn_roles() or frozenset()

    @cached_property
    def kept(self) -> dict[int, tuple[Any, Any]]:
        """What the block derives from a request's tools (:func:`~pawlette.openai.derived`)."""
        return {}

    def tool_texts(self, tools: tuple[Tool, ...]) -> tuple[str, ...]:
        """Each tool's JSON (``array``: the one array's, if there are tools)."""
        if new_tools(tools):  # (never kept: written at once, without the store's look)
            if self.array:
                return (self._dump_new([*map(self.value, tools)]),)
            return tuple(map(self._dump_new, map(self.value, tools)))
        dump = self.dump
        if self.array:  # (no tools: an always-written block holds no array)
            return derived(
                self.kept, tools, lambda: (dump([*map(self.value, tools)]),)[: len(tools)]
            )
        return derived(self.kept, tools, lambda: tuple(map(dump, map(self.value, tools))))

    def _dump_new(self, value: Any) -> str:
        """:meth:`dump` of a request's new tools (checked plain: no container twice on a
        path), not looked for among the texts kept by content; a subclass's own dump as it is."""
        if type(self).dump is not ToolsBlock.dump:
            return self.dump(value)
        writers = self._writers
        return self._new_json(value) if writers is None else writers[1](value)

    @cached_property
    def _new_json(self) -> Callable[[Any], str]:
        """The ``json.dumps`` spelling of :meth:`dump` for a request's new tools: through
        json's C encoder made once (``json.dumps`` with options makes one per call) when the
        JSON is on one line and keeps non-ASCII text (the reader's check refuses a value that
        holds itself, the one thing the encoder made once does not look for)."""
        if self.indent is not None or self.ascii:
            return self.dump
        separators = self.separators or (", ", ": ")
        return c_encoder(
            lambda value: json.dumps(value, ensure_ascii=False, separators=separators),
            separators,
            allow_nan=True,
        )

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open, "tools")
        for text in self.tool_texts(out.tools):  # (an array has no item fences)
            out.fence(self.item_open, "tools")
            out.text(text, "tools")
            out.fence(self.item_close, "tools")
        out.fence(self.close, "tools")

    def wants_system_turn(self, out: Render) -> bool:
        return self.place == "system" and (self.always or bool(out.tools))

    def write_message(self, out: Render, index: int) -> None:
        # (claims: an answer, with place "user_after_system") the host's turn is a user turn
        if index <= 1 and out.tools and index == _after_first_system(out):
            out.turn(index, "user")
        else:
            out.turn(index)

    def hook_needs(self, hook: str, role: str) -> str | None:
        # (place "user_after_system": the block is in the turn of the message at 0 or 1)
        kind = type(self)
        own = kind._hosts is ToolsBlock._hosts and hook in ("write_opening", "write_closing")
        if (
            own
            and self.place == "user_after_system"
            and getattr(kind, hook) is getattr(ToolsBlock, hook)
        ):
            return "first_two_messages"
        return None

    def claims_up_to(self, role: str) -> int | None:
        # (write_message: an answer at index 0 or 1 may host the tools; any other is its own
        # framed turn)
        return 1 if type(self).write_message is ToolsBlock.write_message else None

    def write_start(self, out: Render) -> None:
        if self.place == "own_turn" and (out.tools or self.always):
            out.at(None, -1)
            self.block(out)

    def hook_reads_tools(self, hook: str, role: str) -> bool:
        # (in the system turn, the block at its first message: the tools, and the message's
        # own text beside them)
        kind = type(self)
        return (
            self.place == "system"
            and hook in ("write_opening", "write_closing")
            and all(
                getattr(kind, name) is getattr(ToolsBlock, name)
                for name in ("write_opening", "write_closing", "_hosts", "block")
            )
        )

    def hooks_outside_turn(self) -> frozenset[str]:
        # (its own write_before writes its own block before the turn and moves nothing else)
        kind = type(self)
        own = kind.write_before is ToolsBlock.write_before and kind.block is ToolsBlock.block
        return frozenset({"write_before"}) if own else frozenset()

    def write_before(self, out: Render, index: int) -> None:
        if not out.tools:
            return
        if (self.place == "before_last_user" and self._before_user(out, index)) or (
            self.place == "after_system" and index == _after_first_system(out)
        ):
            out.at(None, -1)
            self.block(out)

    def _before_user(self, out: Render, index: int) -> bool:
        """Whether the block comes before the user turn of ``messages[index]`` (``place``
        ``"before_last_user"``): the last user message's, and with ``equal_users`` each one
        equal to it."""
        last = out.last_query
        if index == last:
            return True
        return self.equal_users and index < last and out.messages[index] == out.messages[last]

    def turn_open(self, out: Render, index: int) -> Fence | None:
        # (hook_roles: a system turn, with place "user_after_system")
        if self._hosts(out, index):  # a system message holding the tools: a user turn
            return out.layout.frames["user"].opener(out.previous)
        return None

    def write_opening(self, out: Render, index: int) -> None:
        if self.first and self._hosts(out, index):
            self.block(out)
            if self.separator and index >= 0 and out.message_text(index):
                out.fence(self.separator, "tools")

    def write_closing(self, out: Render, index: int) -> None:
        if not self.first and self._hosts(out, index):
            if self.separator_when == "text":
                separated = bool(out.message_text(index)) if index >= 0 else out.has_content
            else:
                separated = out.has_content
            self.block(out, separated=separated)

    # ------------------------------------------------------------------ the parse table

    def items_reader(self, table: Table) -> ReaderFactory:
        """The reader of the tools the block writes (JSON items or one JSON array; a concept
        that writes its tools otherwise reads them with its own)."""
        return tool_items_reader(
            table.text(self.item_open),
            table.text(self.item_close),
            self.wrap,
            text_after=self.first and not self.close,
            array=self.array,
        )

    def rows(self, table: Table) -> None:
        reader = self.items_reader(table)
        # The markers around and between the tools are the block's own text, read by its
        # reader (Solar's ``<|tool:begin|>``), not a control token out of place.
        inner = markers_in((*self.item_open, *self.item_close, *self.separator))
        if self.place in _ON_ITS_OWN:
            table.state("tools.block", reader, inner=inner)
            # Whitespace after the close's marker is layout between turns (read outside),
            # not part of a marker the lexer would read everywhere (Granite 3.3's "\n").
            close = table.text(self.close)
            if close.rstrip() and isinstance(self.close[-1], Lit):
                close = close.rstrip()
            if close:
                table.on("tools.block", close, "outside")
                table.on("outside", table.text(self.open), "tools.block")
            else:
                raise FormatError(
                    f"{table.layout.name}: ToolsBlock(place={self.place!r}) needs a close fence"
                )
            return
        role = "system" if self.place == "system" else "user"  # (a system host reads as user)
        frame = table.layout.frames[role]
        tools_state = table.state(f"{role}.tools", reader, role, ends=not self.close, inner=inner)
        openers = {
            spelling
            for (state, spelling), (target, _) in table.steps.items()
            if state == "outside" and target == f"{role}.body"
        } or {table.text(frame.open)}
        # A block whose open fence begins with a marker is read from the host's text (that
        # marker is one of the lexer); one that begins with text is read with the opener.
        marked = bool(self.open) and isinstance(self.open[0], Marker)
        if (self.first or role == "system") and not marked:
            for opener in sorted(openers):
                table.on("outside", opener + table.text(self.open), tools_state, begin(role))
        elif marked:
            table.on(f"{role}.body", table.text(self.open), tools_state)
        if not self.first:
            table.on(f"{role}.body", table.text(self.separator, self.open), tools_state)
        if self.close:
            after = ContentReader if self.first else ScaffoldReader
            table.state(f"{role}.after_tools", after, role, ends=True)
            table.on(tools_state, table.text(self.close), f"{role}.after_tools")
            if self.first and self.separator:
                table.on(tools_state, table.text(self.close, self.separator), f"{role}.after_tools")

    # ------------------------------------------------------------------ the Jinja template

    def jinja_wants_system_turn(self) -> str | None:
        if self.place != "system":
            return None
        return "true" if self.always else "has_tools"

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open)
        if self.array:
            listed = (
                "tools" if self.wrap == "openai" else 'tools | map(attribute="function") | list'
            )
            if self.always:
                with out.when("has_tools"):
                    out.value(f"{listed} | {self._tojson()}")
            else:
                out.value(f"{listed} | {self._tojson()}")
        else:
            # (A block written without tools too loops over none: ``tools`` is then None.)
            listed = "(tools if has_tools else [])" if self.always else "tools"
            out.out(f"{{%- for tool in {listed} -%}}")
            out.fence(self.item_open)
            self.jinja_item(out)
            out.fence(self.item_close)
            out.out("{%- endfor -%}")
        out.fence(self.close)

    def jinja_item(self, out: Template) -> None:
        """One tool's text in the exported template (``tool`` in scope, between the item
        fences): its JSON.  A block that writes tools otherwise says how here."""
        value = "tool" if self.wrap == "openai" else "tool.function"
        out.value(f"{value} | {self._tojson()}")

    def jinja_host(self, out: Template, role: str) -> str | None:
        if self.place == "system":
            if role != "system":
                return None
            return "index <= 0" if self.always else "has_tools and index <= 0"
        if self.place == "user_after_system":
            if role not in ("user", "system"):
                return None
            return "has_tools and index == first_user.index"  # (set up in jinja_setup)
        if role != "user":
            return None
        if self.place == "first_user":
            out.macro(
                "first_user",
                "{%- set first_user = namespace(index=-1) -%}{%- for message in messages -%}"
                '{%- if message.role == "user" and first_user.index < 0 -%}'
                "{%- set first_user.index = loop.index0 -%}{%- endif -%}{%- endfor -%}",
            )
            return "has_tools and index == first_user.index"
        if self.place == "last_user":
            return f"has_tools and index == {out.needs_last_query()}"
        return None

    def jinja_setup(self, out: Template) -> None:
        with out.when("has_tools"):
            out.out(fill("@CHECK_FUNCTION_TOOLS@", {}))  # function tools only, as render
        if self.separator and self.separator_when == "message":
            out.has_content()
        if self.place == "user_after_system":
            answer_role = answer = calls = ""
            if _ends_alike(out.layout):  # an answer without calls is written as the user's
                answer_role, answer = ', "assistant"', " or an answer without calls"
                calls = (
                    "{%- elif messages[first_user.index].tool_calls is defined and "
                    "messages[first_user.index].tool_calls -%}"
                    "{{- raise_exception('messages[' ~ first_user.index ~ '].tool_calls: calls; "
                    f"expected a user message{answer}: {out.layout.name} writes the tools "
                    "into the message after the first system message') -}}"
                )
            # The host's index, found once: the check below and every turn's test read it
            # (named for the first turn written as a user turn, which the host's is).
            out.macro(
                "first_user",
                "{%- set first_user = namespace(index=1 if messages and messages[0].role in "
                '["system", "developer"] else 0) -%}',
            )
            out.macro(
                "tools_host",
                # (a macro comes before has_tools is set: the test is spelled out)
                "{%- if tools is defined and tools is not none and tools -%}"
                "{%- if first_user.index >= messages | length -%}"
                "{{- raise_exception('messages: no message to hold the tools; expected the "
                "message after the first system "
                f"message: {out.layout.name} writes the tools into it') -}}}}"
                "{%- elif messages[first_user.index].role not in "
                f'["user", "system", "developer"{answer_role}] -%}}'
                "{{- raise_exception('messages[' ~ first_user.index ~ '].role: ' ~ "
                "messages[first_user.index].role ~ "
                f"'; expected a user message{answer}: {out.layout.name} writes the tools "
                "into the message after the first system message') -}}"
                f"{calls}{{%- endif -%}}{{%- endif -%}}",
            )
        elif self.place in ("first_user", "last_user", "before_last_user"):
            where = "first" if self.place == "first_user" else "last"
            out.macro(
                f"tools_need_user_{where}",
                # (a macro comes before has_tools is set: the test is spelled out)
                "{%- if tools is defined and tools is not none and tools and not (messages "
                '| selectattr("role", "equalto", "user") '
                '| list) -%}{{- raise_exception("messages: no user message; expected a user '
                'message to hold the tools") -}}{%- endif -%}',
            )

    def jinja_message(self, out: Template, role: str) -> None:
        # (claims: an answer, with place "user_after_system"), as write_message
        with out.when("has_tools and index == first_user.index"):
            out.turn("user")
            out.out("{%- else -%}")
            out.turn("assistant")

    def jinja_start(self, out: Template) -> None:
        if self.place == "own_turn":
            with out.when("true" if self.always else "has_tools"):
                self.jinja_block(out)

    def jinja_before(self, out: Template, role: str) -> None:
        if self.place == "before_last_user" and role == "user":
            last = out.needs_last_query()
            test = f"index == {last}"
            if self.equal_users:  # (the template's own test: a dict equality)
                test = f"(index == {last} or message == messages[{last}])"
            with out.when(f"has_tools and {test}"):
                self.jinja_block(out)
        if self.place == "after_system":
            with out.when(
                'has_tools and index == (1 if messages and messages[0].role == "system" else 0)'
            ):
                self.jinja_block(out)

    def jinja_open(self, out: Template, role: str) -> bool:
        # (hook_roles: a system turn, with place "user_after_system")
        if out.prompt:  # (the generation prompt's opener: never a host's)
            out.opener(out.layout.frames[role], prompt=True)
            return True
        with out.when(str(self.jinja_host(out, role))):
            out.opener(out.layout.frames["user"])  # a message holding the tools: a user turn
            out.out("{%- else -%}")
            out.opener(out.layout.frames[role])
        return True

    def jinja_opening(self, out: Template, role: str) -> None:
        host = self.jinja_host(out, role)
        if self.first and host is not None:
            with out.when(host):
                self.jinja_block(out)
                if self.separator:
                    name = jinja_string(out.layout.name)
                    out.fence_if(
                        f"message is not none and text_of(message, index, {name})", self.separator
                    )

    def jinja_closing(self, out: Template, role: str) -> None:
        host = self.jinja_host(out, role)
        if self.first or host is None:
            return
        with out.when(host):
            if not self.separator:
                self.jinja_block(out)
                return
            condition = out.has_content()
            if self.separator_when == "text":
                name = jinja_string(out.layout.name)
                condition = (
                    f"(message is not none and text_of(message, index, {name})) or "
                    f"(message is none and {condition})"
                )
            with out.when(condition):
                self.jinja_block(out, separated=True)
                out.out("{%- else -%}")
                self.jinja_block(out)


def _ends_alike(layout: Layout) -> bool:
    """Whether the layout's assistant frame ends as its user frame (an answer may then be
    written as a user turn)."""
    frames = layout.frames
    assistant, user = frames.get("assistant"), frames.get("user")
    if assistant is None or user is None:
        return False
    return (assistant.end, assistant.after) == (user.end, user.after)


def _after_first_system(out: Render) -> int:
    """The index of the message after the first system message (0: the conversation opens
    with no system message, so the block follows a default system turn)."""
    return 1 if out.messages and out.messages[0].role == "system" else 0
