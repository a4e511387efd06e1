"""Seed-OSS's own concepts: the tools block of Python function stubs (:mod:`.stubs`, read
back by :mod:`.stub_reading`), and reasoning whose blank block is not written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING, ClassVar

from pawlette.codecs.python_stubs import Listing
from pawlette.declare import Reasoning, ToolsBlock
from pawlette.declare.readers import StubsReader
from pawlette.engine.kept import Kept, marshal_key
from pawlette.errors import RequestError
from pawlette.json_values import show

from . import stub_reading, stubs

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory


class _StubsReader(StubsReader):
    """The stubs of a tools block, read back into the tools they say (:mod:`.stub_reading`);
    from text that is no stub on, the block's text stays text, with a warning."""

    __slots__ = ("_separator",)

    def __init__(self, parser: Parser, separator: str) -> None:
        super().__init__(parser)
        self._separator = separator

    def _listing(self, text: str) -> Listing:
        return stub_reading.read_listing(text, self._separator)


@dataclass(frozen=True)
class StubTools(ToolsBlock):
    """The tools as Python function stubs after the system text: ``open`` before the first
    stub, ``item_separator`` between two, ``close`` (the call format's instructions) after
    the last."""

    item_separator: str = "\n\nFunction:\ndef "

    STATE: ClassVar[str] = "system.tools"

    @cached_property
    def _listings(self) -> Kept[str]:
        """The blocks' stubs, by the tools' content."""
        return Kept(limit=256, longest=1 << 14)

    def check(self, out: Render) -> None:
        super().check(out)
        for number, tool in enumerate(out.tools):
            # A stub lists a returns object's properties; any other schema (a boolean, an
            # object without properties) writes nothing, as the template does.  A value
            # that is no schema would be dropped unseen: refused.
            returns = tool.definition.get("returns")
            if returns is not None and not isinstance(returns, (Mapping, bool)):
                raise RequestError(
                    f"tools[{number}].function.returns",
                    f"found {show(returns)}",
                    "a JSON schema (an object or a boolean): Seed-OSS's stubs list the "
                    "properties of a returns object",
                )

    def block(self, out: Render, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open, "tools")
        definitions = [tool.definition for tool in out.tools]
        # (Kept by the tools' content: the same tools come with every request.)
        listing = self._listings.get(
            marshal_key(definitions),
            lambda: self.item_separator.join(stubs.stub(dict(d)) for d in definitions),
        )
        out.text(listing, "tools")
        out.fence(self.close, "tools")

    def items_reader(self, table: Table) -> ReaderFactory:
        return partial(_StubsReader, separator=self.item_separator)

    def jinja_setup(self, out: Template) -> None:
        super().jinja_setup(out)
        out.macro("seed_stub", stubs.JINJA_MACROS)

    def jinja_block(self, out: Template, *, separated: bool = False) -> None:
        out.fence(self.separated_open if separated else self.open)
        out.out("{%- for tool in tools -%}")
        out.out("{%- set tool = tool.function if tool.function is defined else tool -%}")
        out.out("{%- if not loop.first -%}")
        out.literal(self.item_separator)
        out.out("{%- endif -%}")
        out.out("{{- seed_stub(tool) -}}")
        out.out("{%- endfor -%}")
        out.fence(self.close)


@dataclass(frozen=True)
class BlankDroppedReasoning(Reasoning):
    """The reasoning block on every assistant turn whose reasoning is not blank; blank
    reasoning (empty or whitespace only) writes no block, a recorded loss when it held
    whitespace.  Everything else is :class:`~pawlette.declare.Reasoning`'s."""

    def written(self, out: Render, index: int) -> bool:
        reasoning = out.messages[index].reasoning
        return bool(reasoning and reasoning.strip(self.trim))

    def check(self, out: Render) -> None:
        out.handles("reasoning")
        if "reasoning" not in out.present:
            return
        for index, message in enumerate(out.messages):
            if message.role != "assistant" or not message.reasoning:
                continue
            where = f"messages[{index}].reasoning_content"
            if not self.written(out, index):
                out.lose(where, "dropped (blank)")
            elif message.reasoning != message.reasoning.strip(self.trim):
                out.lose(where, "trimmed at its ends")

    def _condition(self, out: Template) -> str:
        given = "message.reasoning_content is defined and message.reasoning_content is not none"
        return f"({given} and (message.reasoning_content | trim))"
