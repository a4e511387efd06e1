"""Every call of a turn written as one JSON array of call objects (:class:`JsonCallList`).

>>> from pawlette.declare import JsonCallList, Marker, fence
>>> JsonCallList(open=fence(Marker("<TOOLCALL>")), close=fence(Marker("</TOOLCALL>"))).keys
(('name', 'name'), ('arguments', 'arguments'))
"""

# ruff: noqa: E501  (the docstring shows the wire formats as they are)

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from functools import cached_property
from json.encoder import encode_basestring as string
from json.encoder import encode_basestring_ascii as ascii_string
from typing import TYPE_CHECKING, Any, Literal

from ..emit.grammar_ast import CharClass, JsonSchemaValue, Lit, Node, Repeat, Rules, seq
from ..emit.json_lark import define_json_base
from ..engine.call_arguments import arguments_problem, load_json
from ..engine.call_scanner import NO_TOOL_NAMED, offered_tools, unknown_tool
from ..engine.machine import Parser
from ..engine.readers import CallEnvelope, WholeTextReader
from ..errors import FormatError
from ..types import ToolCall
from .bare_calls import BareCallReader, bare_text
from .call_ids import IdPiece, id_node
from .calls import CallConcept, Content, ListedCallConcept, arguments_json, closing_marker
from .grammar import CallItems, CallOpening, text_then
from .pieces import Fence
from .readers import Described, give_back

if TYPE_CHECKING:
    from .grammar import Turn
    from .jinja import Template
    from .layout import Layout
    from .table import Table
    from .write import Render


class JsonCallObject:
    """A call written as one JSON object, for the concepts that write one (a frozen dataclass
    with ``keys``, ``(role, key)`` pairs in writing order, roles ``"name"``, ``"arguments"``
    and ``"id"``, and ``separators``, JSON's item and key separators): the object's text and
    the text before each value, made here alone (:class:`JsonCallList`,
    :class:`~.json_calls.JsonCalls`)."""

    keys: tuple[tuple[str, str], ...]
    separators: tuple[str, str]

    def item(self, name: str, call_id: str, arguments: str) -> str:
        """The object of a call to ``name`` with the id ``call_id`` and ``arguments`` (JSON)."""
        # (json_string of a str is json's C encode_basestring: called directly.)
        return self._item_format.format(string(name), arguments, string(call_id))

    @cached_property
    def _item_format(self) -> str:
        """An item as a :meth:`str.format` template of its name (``{0}``), arguments
        (``{1}``) and id (``{2}``): each key's text before its value is made once."""
        fields = {"name": "{0}", "arguments": "{1}", "id": "{2}"}
        escaped = [(head.replace("{", "{{").replace("}", "}}"), role) for role, head in self.heads]
        return "".join(head + fields[role] for head, role in escaped) + "}}"

    @cached_property
    def heads(self) -> tuple[tuple[str, str], ...]:
        """Each member's role and the item's text before its value (``{"name": ``,
        ``, "arguments": ``)."""
        item_separator, key_separator = self.separators
        return tuple(
            (role, ("{" if number == 0 else item_separator) + ascii_string(key) + key_separator)
            for number, (role, key) in enumerate(self.keys)
        )


@dataclass(frozen=True)
class JsonCallList(JsonCallObject, ListedCallConcept):
    """The calls of a turn as one JSON array::

        Mistral Nemo     [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]
        Nemotron Nano 2  <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>
        Cohere           <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {...}}]<|END_ACTION|>

    Reading takes the members in any order; an object without a name or with arguments that
    are not an object makes the whole list content, with one warning.

    Fields: ``open`` / ``close`` around the array (``close`` empty: the array runs to the end
    of the turn; ``open=None``: the array is the whole turn, with no opener and no close, and
    a turn whose first character other than whitespace is ``[`` is read as the calls: its
    text may not start so, and text beside calls is not ``"written"``); ``keys``: ``(role, key)`` pairs in writing order, roles ``"name"``,
    ``"arguments"``, ``"id"``, each mapped to the key the format spells
    (``(("id", "tool_call_id"), ("name", "tool_name"), ("arguments", "parameters"))``);
    ``separators``: the JSON item and key separators as the template writes them
    (``(", ", ": ")``, Jinja's ``tojson``); ``text_separator``: between text and the array; ``content``: text alongside calls is ``"written"`` before them,
    ``"dropped"`` (a recorded loss), ``"refused"``, or ``"replaces_calls"`` (written in their
    place: the calls are a recorded loss); ``parallel``: several calls in one
    array; ``loose``: the fences are also read without their whitespace; ``id_pattern``: a
    regular expression every written call id must match (Mistral Nemo's template refuses ids
    that are not 9 characters long; None: any id).

    The array's layout: ``list_open`` / ``list_close`` around its items (``"["`` / ``"]"``)
    and ``item_separator`` between them (None: ``separators[0]``); Cohere writes
    ``[\\n    {...},\\n    {...}\\n]``.  Both empty: the objects one after another, no
    brackets (MiniMax M1 writes one a line).  Reading takes any JSON whitespace.
    ``close_optional``: the end of the turn may replace ``close`` (a list the turn ends in
    before its close is read as well: vLLM reads MiniMax M1's so).

    ``ids``: ``"given"`` writes each call's own id; ``"positional"`` writes its position
    among all the conversation's calls (``"0"``, ``"1"``, ...: Cohere's templates renumber
    them so), and a given id that differs is a recorded loss.
    """

    open: Fence | None
    close: Fence = ()
    keys: tuple[tuple[str, str], ...] = (("name", "name"), ("arguments", "arguments"))
    separators: tuple[str, str] = (", ", ": ")
    text_separator: Fence = ()
    content: Content = "written"
    parallel: bool = True
    loose: bool = True
    id_pattern: str | None = None
    list_open: str = "["
    list_close: str = "]"
    item_separator: str | None = None
    ids: Literal["given", "positional"] = "given"
    close_optional: bool = False

    def validate(self, layout: Layout) -> None:
        roles = [role for role, _ in self.keys]
        if sorted(roles) not in (["arguments", "name"], ["arguments", "id", "name"]):
            raise FormatError(
                f"{layout.name}: JsonCallList.keys: {self.keys!r}; expected ('name', KEY), "
                "('arguments', KEY) and optionally ('id', KEY), each once"
            )
        # With no opener, the array is the whole turn: nothing closes it, and text before it
        # could not be told from it.
        if self.open is None and self.close:
            raise FormatError(
                f"{layout.name}: JsonCallList.close: {self.close!r} with open=None; expected "
                "no close (the bare array runs to the end of the turn)"
            )
        if self.open is None and self.content == "written":
            raise FormatError(
                f"{layout.name}: JsonCallList.content: 'written' with open=None; expected "
                "'refused', 'dropped' or 'replaces_calls' (text before a bare array could not "
                "be told from it)"
            )
        if self.open is not None and not self.open:
            raise FormatError(
                f"{layout.name}: JsonCallList.open: empty; expected a fence, or open=None for "
                "one bare JSON array as the whole turn"
            )
        brackets = (self.list_open.strip(), "]" in self.list_close)
        if brackets not in (("[", True), ("", False)):
            raise FormatError(
                f"{layout.name}: JsonCallList.list_open / list_close: {self.list_open!r} / "
                f"{self.list_close!r}; expected '[' and ']' (a JSON array), or neither (the "
                "objects one after another), with whitespace around"
            )

    @property
    def between_items(self) -> str:
        """What the array writes between two items."""
        return self.separators[0] if self.item_separator is None else self.item_separator

    # ------------------------------------------------------------------ the writer

    def check_turn(self, out: Render, index: int) -> None:
        if self.ids != "positional":
            return
        first = self._first_position(out, index)
        for number, call in enumerate(out.messages[index].tool_calls):
            if call.id != str(first + number):
                out.lose(
                    f"messages[{index}].tool_calls[{number}].id",
                    f"written as its position among the calls ({first + number})",
                )

    def list_text(self, out: Render, index: int, calls: tuple[ToolCall, ...]) -> str:
        first = self._first_position(out, index) if self.ids == "positional" else 0
        items = []
        for number, call in enumerate(calls):
            call_id = str(first + number) if self.ids == "positional" else call.id
            arguments = arguments_json(call.arguments, index, number)
            items.append(self.item(call.name, call_id, arguments))
        return self.list_open + self.between_items.join(items) + self.list_close

    @staticmethod
    def _first_position(out: Render, index: int) -> int:
        """The position of ``messages[index]``'s first call among the conversation's calls."""
        return sum(
            len(message.tool_calls)
            for message in out.messages[:index]
            if message.role == "assistant" and message.tool_calls
        )

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        _ = self.id_shape  # (a pattern the parser could not mint ids of is refused here)
        closed = bool(self.close) and not self.close_optional
        keys = {role: key for role, key in self.keys}
        if self.open is None:  # (CallListReader gives back the array, the opener not in it)
            envelope = CallEnvelope(keys["name"], keys["arguments"])
            reads = functools.partial(CallListReader, keys=keys, closed=False, concept=self)
            bare = Described(
                "text or a bare JSON call list",
                functools.partial(BareCallReader, envelope=envelope, reads=reads, opening="["),
            )
            for state in ("assistant.head", "assistant.body"):
                table.reader(state, bare)
            return
        bracketed = bool(self.list_open.strip())  # (else the objects one after another)
        reader = Described(
            "JSON call list" if bracketed else "JSON call objects",
            functools.partial(
                CallListReader,
                keys=keys,
                closed=closed,
                bracketed=bracketed,
                concept=self,
            ),
            closed=closed,
        )
        self.opening_rows(table, self.open, "call.list", reader, ends=True)
        table.after_calls("call.list", table.spellings(self.loose, self.close))

    # ------------------------------------------------------------------ the Jinja template

    def jinja_list(self, out: Template) -> None:
        out.literal(self.list_open)
        out.out("{%- for call in message.tool_calls -%}")
        with out.when("not loop.first"):
            out.literal(self.between_items)
        self.jinja_item(out)
        if self.ids == "positional":
            position = out.ns("call_position", "0")
            out.out(f"{{%- set {position} = {position} + 1 -%}}")
        out.out("{%- endfor -%}")
        out.literal(self.list_close)

    def jinja_item(self, out: Template) -> None:
        """The template's counterpart of :meth:`item` (``call`` in scope)."""
        for role_name, head in self.heads:
            out.literal(head)
            if role_name == "name":
                out.out("{{- call.function.name | tojson -}}")
            elif role_name == "id" and self.ids == "positional":
                position = out.ns("call_position", "0")
                out.out(f"{{{{- '\"' ~ {position} ~ '\"' -}}}}")
            elif role_name == "id":
                out.out("{{- call.id | tojson -}}")
            else:
                out.arguments()
        out.literal("}")

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        turn.calls = CallListSet(self, turn)
        if self.open is None:
            turn.content = bare_text(turn, "[")


class CallListReader(WholeTextReader):
    """The array of calls, read whole at its close (or at the turn's end when the format
    writes no close)."""

    __slots__ = ("_bracketed", "_closed", "_concept", "_keys")

    def __init__(
        self,
        parser: Parser,
        keys: dict[str, str],
        closed: bool,
        bracketed: bool = True,
        *,
        concept: CallConcept,
    ) -> None:
        super().__init__(parser)
        self._keys = keys
        self._closed = closed
        self._bracketed = bracketed
        self._concept = concept  # (whose served_id gives each call its id)

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        text = self._text()
        closing = closing_marker(parser, marker)
        problem: str | None
        calls: list[tuple[str, str | None, str]] = []
        if self._closed and not closing:
            problem = "the call list is not closed"
        else:
            problem = self._read(text, calls)
        where = self._offset if self._chunks else offset
        if problem is not None:
            raw = (parser.entered_by or "") + text + closing
            expected = "a JSON array of calls"
            if problem.startswith(NO_TOOL_NAMED):  # (the whole list: no call of it dropped)
                expected = f"{expected}, each {offered_tools(parser.tools)}"
            give_back(parser, where, f"calls {raw[:60]!r}: {problem}", expected, raw)
            return
        for name, call_id, arguments in calls:
            served = self._concept.served_id(parser, call_id or None, name, where)
            parser.emit_call(parser.next_call_index(), served, name, arguments)

    def _read(self, text: str, calls: list[tuple[str, str | None, str]]) -> str | None:
        if not self._bracketed:
            text, problem = _as_array(text)
            if problem is not None:
                return problem
        value, problem = load_json(text.strip() or "null")
        if problem is not None:
            return problem
        if not isinstance(value, list) or not value:
            return "not a non-empty JSON array"
        twice = key_written_twice(text)
        if twice is not None:  # JSON keeps the last: the first would be lost unseen
            return f"the key {twice!r} written twice in an object"
        for item in value:
            problem = self.read_item(item, calls)
            if problem is not None:
                return problem
        return None

    def read_item(self, item: Any, calls: list[tuple[str, str | None, str]]) -> str | None:
        """Add the call of ``item``, an item of the array, to ``calls``; else the problem
        that makes it none."""
        keys = self._keys
        if not isinstance(item, dict):
            return "an item that is not an object"
        name = item.get(keys["name"])
        arguments: Any = item.get(keys["arguments"], {})
        call_id = item.get(keys["id"]) if "id" in keys else None
        if not isinstance(name, str) or not name:
            return "an item without a name"
        refused = unknown_tool(self._parser.tools, name)
        if refused is not None:
            return refused
        if isinstance(arguments, str):  # arguments given as JSON text holding an object
            arguments, problem = load_json(arguments)
            if problem is not None:
                return f"{name}: arguments {problem}"
        if not isinstance(arguments, dict):
            return f"{name}: arguments that are not an object"
        written = json.dumps(arguments, ensure_ascii=False)
        problem = arguments_problem(written)
        if problem is not None:
            return f"{name}: {problem}"
        calls.append((name, call_id if isinstance(call_id, str) else None, written))
        return None


def _as_array(text: str) -> tuple[str, str | None]:
    """The JSON values of ``text`` one after another (any whitespace between them, a value
    over several lines too) as the text of one array, or the problem."""
    decoder = json.JSONDecoder()
    values: list[str] = []
    position, end = 0, len(text)
    while True:
        while position < end and text[position] in " \t\r\n":
            position += 1
        if position == end:
            break
        try:
            _, after = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):  # (json recurses per level: load_json says why)
            _, problem = load_json(text[position:])
            return text, problem or "not one JSON object after another"
        values.append(text[position:after])
        position = after
    if not values:
        return text, "no call between the fences"
    return "[" + ", ".join(values) + "]", None


def key_written_twice(text: str) -> str | None:
    """A key some object of the (valid) JSON ``text`` holds twice, else None."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and not found:
                found.append(key)
            seen.add(key)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return found[0] if found else None


class CallListSet(CallOpening, CallItems):
    """The grammar of a :class:`JsonCallList`'s calls (a :class:`CallItems`); public, since
    a format whose list items are written otherwise (Apertus, Apriel) subclasses it."""

    calls: JsonCallList

    def __init__(self, calls: JsonCallList, turn: Turn) -> None:
        super().__init__(calls, turn, calls.open or (), calls.list_open)

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        from ..emit.turn_rules import json_arguments

        calls = self.calls
        tool = turn.tools[number]
        nodes: list[Node] = []
        for role, head in calls.heads:
            nodes.append(Lit(head))
            if role == "name":
                nodes.append(Lit(json.dumps(tool.name, ensure_ascii=False)))
            elif role == "id" and calls.ids == "positional":
                # A position, as the renderer writes it: a free string lets a model wander.
                nodes += [Lit('"'), Repeat(CharClass("0123456789"), 1, 6), Lit('"')]
            elif role == "id" and calls.id_shape is not None and _json_plain(calls.id_shape):
                # The id's shape, as the render takes it back (Mistral Nemo's).
                nodes += [Lit('"'), id_node(calls.id_shape), Lit('"')]
            elif role == "id":
                define_json_base(rules)
                nodes.append(
                    JsonSchemaValue({"type": "string"}, gbnf="json-string", lark="JSON_STRING")
                )
            else:
                nodes.append(json_arguments(rules, number, tool))
        return [*nodes, Lit("}")]

    def opening(self, turn: Turn) -> list[Node]:
        return [*turn.nodes(self.calls.open or ()), Lit(self.calls.list_open)]

    def rest(self, turn: Turn, rules: Rules, parallel: bool) -> list[Node]:
        others: list[Node] = []
        if parallel and self.calls.parallel:
            others.append(Repeat(seq(Lit(self.calls.between_items), self.call(turn, rules))))
        return [*others, Lit(self.calls.list_close), *turn.nodes(self.calls.close)]

    def text_and_calls(self, turn: Turn, rules: Rules, parallel: bool) -> Node | None:
        """Text, then calls whose open fence begins with layout text and nothing else
        separates them (Firefunction v2's `` functools``): the text and that layout text are
        one lexeme (llguidance's lexer is greedy: text would take the fence's first
        characters).  None: text then :meth:`many`."""
        nodes = turn.nodes(self.calls.open or ())
        if self.calls.text_separator or not nodes or not isinstance(nodes[0], Lit):
            return None
        lead = nodes[0].text
        if lead.startswith("\n"):
            return None  # text_before makes text and newlines one lexeme
        return seq(text_then(rules, lead), self.after_prefix(turn, rules, lead, parallel))

    def prefix(self, name: str | None) -> str:
        if name is None:
            return self.lead
        head = ""
        for role, text in self.calls.heads:
            head += text
            if role != "name":
                return self.lead + head  # the prefix ends at the first value after the name
            head += json.dumps(name, ensure_ascii=False)
        return self.lead + head


def _json_plain(shape: tuple[IdPiece, ...]) -> bool:
    """Whether an id of ``shape`` is written in a JSON string as it is (nothing escaped)."""
    return all(
        character not in '"\\' and character >= " " for piece in shape for character in piece.chars
    )
