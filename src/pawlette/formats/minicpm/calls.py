"""MiniCPM 5's call values: a string holding ``<``, ``&`` or a newline is written in a CDATA
block, ``<![CDATA[...]]>``, as its template writes it; reading takes the text inside."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import XmlCalls
from pawlette.declare.pieces import text_of
from pawlette.declare.xml_calls import XmlCallSet
from pawlette.emit.grammar_ast import Lit, Node, Rules, Terminal, alt, gbnf_string, seq
from pawlette.emit.text_language import gbnf_text_rule

if TYPE_CHECKING:
    from pawlette.declare.grammar import Turn
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.xml_calls import Tags

CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"
WRAPPED = ("<", "&", "\n")
"""The characters that put a string value in a CDATA block (the template's test)."""


@dataclass(frozen=True)
class CdataXmlCalls(XmlCalls):
    """:class:`~pawlette.declare.XmlCalls` whose string values holding any of
    :data:`WRAPPED` are written as ``<![CDATA[`` + the text + ``]]>``; a value so written
    reads back as the text inside (a value written without one never starts with
    ``<![CDATA[``: it would hold ``<``)."""

    def string_text(self, value: str) -> str:
        if any(character in value for character in WRAPPED):
            return CDATA_OPEN + value + CDATA_CLOSE
        return value

    def jinja_string(self, out: Template) -> None:
        test = " or ".join(f"{character!r} in value" for character in WRAPPED)
        out.out(
            f"{{%- if {test} -%}}{{{{- {CDATA_OPEN!r} + value + {CDATA_CLOSE!r} -}}}}"
            "{%- else -%}{{- value -}}{%- endif -%}"
        )

    def tags(self, table: Table) -> Tags:
        return dataclasses.replace(super().tags(table), unwrap=(CDATA_OPEN, CDATA_CLOSE))

    def grammar(self, turn: Turn) -> None:
        turn.calls = JoinedXmlCallSet(self, turn)


class JoinedXmlCallSet(XmlCallSet):
    """The grammar of :class:`CdataXmlCalls`: text, the newline between it and the calls and
    the first call's opener (``\\n<function name="``, plain text) are one lexeme.
    llguidance's lexer is greedy: free text alone would take ``\\n<function name=`` (it may
    not hold the whole opener, but may hold all of it but its last character), and the turn
    could not go on."""

    def text_and_calls(self, turn: Turn, rules: Rules, parallel: bool) -> Node | None:
        layout = turn.layout
        separator = turn.nodes(self.calls.text_separator)
        first = self.first_nodes[0] if self.first_nodes else None
        plain = all(isinstance(node, Lit) for node in separator)
        if not (plain and isinstance(first, Lit) and first.text.strip()):
            return super().text_and_calls(turn, rules, parallel)
        joined = text_of(self.calls.text_separator, layout.options, layout.name) + first.text
        rules.lark_extra["TEXT_CALLS"] = f"TEXT_NE {gbnf_string(joined)}"
        rules.gbnf_extra["text-calls"] = f"{gbnf_text_rule('TEXT', 'NE')} {gbnf_string(joined)}"
        text: Node = Terminal("TEXT_CALLS", lark="", gbnf="text-calls")
        if any(concept.trims_content() for concept in layout.concepts):
            # A text the reasoning trims to nothing keeps the separator it asked for.
            text = alt(text, Lit(joined))
        return seq(text, self.after_prefix(turn, rules, first.text, parallel))
