"""MiniCPM 5's call values: a string holding ``<``, ``&`` or a newline is written in a CDATA
block, ``<![CDATA[...]]>``, as its template writes it; reading takes the text inside."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import XmlCalls

if TYPE_CHECKING:
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
