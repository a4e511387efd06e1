"""Apertus' calls: one JSON array of objects each keyed by the function's name,
``[{"get_weather": {"city": "Paris"}}, {"get_time": {}}]``.

Written as the template writes them: the name as a JSON string (the template pastes it
between quotes as it is: identical for every name without ``"``, ``\\`` or a control
character), ``": "``, the arguments as ``tojson`` writes the parsed object, items joined by
``", "``.  Read as vLLM's and llama.cpp's ``apertus`` parsers read them: each item an object
with one key, the name, whose value is the arguments object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.encoder import encode_basestring as string
from typing import TYPE_CHECKING, Any

from pawlette.declare import JsonCallList
from pawlette.declare.call_list import CallListReader, CallListSet
from pawlette.declare.readers import Described
from pawlette.emit.grammar_ast import Lit, Node

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.emit.grammar_ast import Rules


@dataclass(frozen=True)
class NameKeyedCalls(JsonCallList):
    """:class:`~pawlette.declare.JsonCallList` whose items are ``{NAME: ARGUMENTS}`` (see
    the module); ``keys`` is not read."""

    def item(self, name: str, call_id: str, arguments: str) -> str:
        return "{" + string(name) + self.separators[1] + arguments + "}"

    def rows(self, table: Table) -> None:
        super().rows(table)
        closed = bool(self.close)
        reader = Described(
            "JSON call list keyed by name",
            lambda parser: NameKeyedReader(
                parser, {"name": "name", "arguments": "arguments"}, closed, concept=self
            ),
            closed=closed,
        )
        table.reader("call.list", reader)

    def jinja_item(self, out: Template) -> None:
        out.literal("{")
        out.out("{{- call.function.name | tojson -}}")
        out.literal(self.separators[1])
        out.out("{%- if call.function.arguments is string -%}")
        out.out("{{- call.function.arguments | trim -}}")
        out.out("{%- else -%}{{- call.function.arguments | tojson -}}{%- endif -%}")
        out.literal("}")

    def grammar(self, turn: Turn) -> None:
        turn.calls = _NameKeyedSet(self, turn)


class NameKeyedReader(CallListReader):
    """The array of ``{NAME: ARGUMENTS}`` items, read whole."""

    __slots__ = ()

    def read_item(self, item: Any, calls: list[tuple[str, str | None, str]]) -> str | None:
        if not isinstance(item, dict) or len(item) != 1:
            return "an item that is not an object with one key, the function's name"
        name, arguments = next(iter(item.items()))
        # (Arguments given as JSON text are no object here, as the peers read them.)
        written = None if isinstance(arguments, str) else arguments
        return super().read_item({"name": name, "arguments": written}, calls)


class _NameKeyedSet(CallListSet):
    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        from pawlette.emit.turn_rules import json_arguments

        tool = turn.tools[number]
        name = json.dumps(tool.name, ensure_ascii=False)
        return [
            Lit("{" + name + self.calls.separators[1]),
            json_arguments(rules, number, tool),
            Lit("}"),
        ]

    def prefix(self, name: str | None) -> str:
        if name is None:
            return self.lead
        return self.lead + "{" + json.dumps(name, ensure_ascii=False) + self.calls.separators[1]
