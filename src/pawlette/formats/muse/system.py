"""What Muse Glimmer's template writes at the end of every system turn: the reasoning
strength, the tools with their namespaces, and the valid recipients."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pawlette.declare import Concept, SystemPrompt
from pawlette.declare.pieces import Fence
from pawlette.declare.readers import DeclaredTools, Described, HostTextReader
from pawlette.engine.json_text import kept_json_string
from pawlette.engine.kept import Kept, marshal_key
from pawlette.errors import UnsupportedFeature
from pawlette.types import Tool, ToolsDeclared

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.table import Table
    from pawlette.declare.write import Render
    from pawlette.engine.machine import Parser, ReaderFactory

EFFORT_SPELLINGS = (
    ("Reasoning effort", "Reasoning strength"),
    ("Reasoning Effort", "Reasoning Strength"),
    ("reasoning effort", "reasoning strength"),
    ("REASONING EFFORT", "REASONING STRENGTH"),
)
"""The spellings the template reads as its own directive in a system text (it has no
case-insensitive replace)."""


def normalised(text: str) -> str:
    """A system text as the template writes it: its four spellings of "reasoning effort"
    as "reasoning strength"."""
    for spelling, replacement in EFFORT_SPELLINGS:
        text = text.replace(spelling, replacement)
    return text


def states_strength(text: str) -> bool:
    """Whether a system text already states the reasoning strength (the template then
    writes no line of its own), read as the template writes it (:func:`normalised`)."""
    return "reasoning strength" in normalised(text).lower()


def namespaces(tools: Sequence[Tool]) -> list[str]:
    """The tools' namespaces (each name's part before its first dot), in first-seen order."""
    seen: list[str] = []
    for tool in tools:
        space = tool.name.split(".")[0]
        if space not in seen:
            seen.append(space)
    return seen


@dataclass(frozen=True)
class DefaultWithoutSystem(SystemPrompt):
    """:class:`~pawlette.declare.SystemPrompt` whose default turn is written only when no
    message of the conversation is a system message (the template looks at every message,
    not the first): a conversation whose only system message comes later has no default
    turn.  Every system message is written in place, as :func:`normalised` writes its text
    (a text that changes is a recorded loss)."""

    def _has_first(self, out: Render) -> bool:
        return any(message.role == "system" for message in out.messages)

    def check(self, out: Render) -> None:
        super().check(out)
        for index, message in enumerate(out.messages):
            text = out.message_text(index) if message.role == "system" else ""
            if normalised(text) != text:
                out.lose(
                    f"messages[{index}].content",
                    "'reasoning effort' written as 'reasoning strength'",
                )

    def write_content(self, out: Render, index: int) -> bool:
        if out.role != "system" or index < 0:
            return super().write_content(out, index)
        text = normalised(out.message_text(index))
        out.text(text, "content")
        out.has_content = bool(text)
        return True

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "system":
            return False
        out.out("{%- if index == -1 -%}")
        self.jinja_default(out)
        out.out("{%- set ns.content = true -%}")
        out.out("{%- else -%}")
        replaced = "".join(
            f" | replace({spelling!r}, {replacement!r})"
            for spelling, replacement in EFFORT_SPELLINGS
        )
        out.value(f"text_of(message, index, {out.layout.name!r}){replaced}")
        out.out("{%- endif -%}")
        return True

    def body_reader(self, table: Table, default: str | None) -> ReaderFactory:
        tail = table.layout.concept(SystemTail)
        if tail is None:
            return super().body_reader(table, default)
        texts = TailTexts(
            strength=table.text(tail.strength),
            tools_open=table.text(tail.tools_open),
            schemas=table.text(tail.schemas),
            recipients_open=table.text(tail.recipients_open),
        )
        make: ReaderFactory = lambda parser: TailDroppedReader(parser, texts, default)  # noqa: E731
        return Described(
            "system text, its tail dropped",
            make,
            default=default,
            recipients_open=texts.recipients_open,
            schemas=texts.schemas,
            strength=texts.strength,
            tools_open=texts.tools_open,
        )

    def jinja_setup(self, out: Template) -> None:
        out.macro(
            "has_system",
            "{%- set found = namespace(system=false) -%}{%- for message in messages -%}"
            '{%- if message.role in ["system", "developer"] -%}'
            "{%- set found.system = true -%}{%- endif -%}{%- endfor -%}"
            "{%- set has_system = found.system -%}",
        )
        super().jinja_setup(out)


def _written(tools: Sequence[Tool]) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """The tools block's lines, one per namespace and one per tool, and the recipients."""
    spaces = namespaces(tools)
    items = tuple(
        f'\n{{"name": {_json(tool.name)}, '
        f'"description": {_json(tool.definition.get("description"))}, '
        f'"parameters": {kept_json_string(tool.definition.get("parameters"))}}}'
        for tool in tools
    )
    listed = ['"self"', *(f'"{space}.*"' for space in spaces), '"user"']
    return (
        tuple(f'{{"name": {_json(space)}, "description": ""}}\n' for space in spaces),
        items,
        ", ".join(listed) + ".",
    )


_WRITTEN: Kept[tuple[tuple[str, ...], tuple[str, ...], str]] = Kept(limit=256, longest=1 << 14)
"""What :func:`_written` gives, by the tools' names and content."""


@dataclass(frozen=True)
class SystemTail(Concept):
    """After the text of every system turn (the default one included): ``strength`` (unless
    the message's text states a reasoning strength), the tools block when the request has
    tools (``tools_open``, one metadata line per namespace, ``schemas``, one line per tool,
    ``tools_close``), then ``recipients_open`` and the recipients: ``"self"``, each
    namespace's ``"NS.*"``, ``"user"``."""

    strength: Fence
    tools_open: Fence
    schemas: Fence
    tools_close: Fence
    recipients_open: Fence

    handles: ClassVar[frozenset[str]] = frozenset({"tools"})

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"system"})

    def check(self, out: Render) -> None:
        out.handles("tools")
        for number, tool in enumerate(out.tools):
            if tool.kind != "function":
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")

    def write_closing(self, out: Render, index: int) -> None:
        if index < 0 or not states_strength(out.message_text(index)):
            out.fence(self.strength, "system")
        tools = out.tools
        # (Kept by the tools' names and content: the same tools come with every request.)
        spaces, items, recipients = _WRITTEN.get(
            marshal_key([(tool.name, tool.definition) for tool in tools]),
            lambda: _written(tools),
        )
        if tools:
            out.fence(self.tools_open, "tools")
            for space in spaces:
                out.text(space, "tools")
            out.fence(self.schemas, "tools")
            for item in items:
                out.text(item, "tools")
            out.fence(self.tools_close, "tools")
        out.fence(self.recipients_open, "system")
        out.text(recipients, "system")

    def jinja_closing(self, out: Template, role: str) -> None:
        if role != "system":
            return
        name = repr(out.layout.name)
        out.out(
            "{%- set tail = namespace(text=(text_of(message, index, " + name + ") "
            "if message is not none else '')) -%}"
        )
        for spelling, replacement in EFFORT_SPELLINGS:
            out.out(f"{{%- set tail.text = tail.text | replace({spelling!r}, {replacement!r}) -%}}")
        out.fence_if(
            "message is none or 'reasoning strength' not in (tail.text | lower)", self.strength
        )
        out.out("{%- set spaces = namespace(seen=[]) -%}")
        out.out("{%- if has_tools -%}{%- for tool in tools -%}")
        out.out("{%- set space = tool.function.name.split('.')[0] -%}")
        out.out("{%- if space not in spaces.seen -%}{%- set spaces.seen = spaces.seen + [space]")
        out.out(" -%}{%- endif -%}{%- endfor -%}")
        out.fence(self.tools_open)
        out.out("{%- for space in spaces.seen -%}")
        out.out('{{- \'{"name": \' ~ (space | tojson) ~ \', "description": ""}\\n\' -}}')
        out.out("{%- endfor -%}")
        out.fence(self.schemas)
        out.out("{%- for tool in tools -%}")
        out.out(
            "{{- '\\n{\"name\": ' ~ (tool.function.name | tojson) ~ ', \"description\": ' ~ "
            "((tool.function.description if tool.function.description is defined else none) "
            "| tojson) ~ ', \"parameters\": ' ~ ((tool.function.parameters "
            "if tool.function.parameters is defined else none) | tojson) ~ '}' -}}"
        )
        out.out("{%- endfor -%}")
        out.fence(self.tools_close)
        out.out("{%- endif -%}")
        out.fence(self.recipients_open)
        out.out("{%- for space in spaces.seen -%}")
        out.out("{%- if loop.first -%}{{- '\"self\", ' -}}{%- endif -%}")
        out.out("{{- '\"' ~ space ~ '.*\", ' -}}")
        out.out("{%- else -%}{{- '\"self\", ' -}}{%- endfor -%}")
        out.out("{{- '\"user\".' -}}")


@dataclass(frozen=True)
class TailTexts:
    """The texts of a :class:`SystemTail` that reading looks for."""

    strength: str
    tools_open: str
    schemas: str
    recipients_open: str


def split_tail(text: str, tail: TailTexts) -> tuple[str, str]:
    """A system turn's text without what :class:`SystemTail` writes after it, and the
    tools block's text in it (empty: none).  A text that states the reasoning strength and
    ends with the template's own line reads back without that line, as a text that does
    not state it (the two render alike)."""
    cut = text.rfind(tail.recipients_open)
    if cut < 0:
        return text, ""
    text, block = text[:cut], ""
    cut = text.rfind(tail.tools_open)
    if cut >= 0:
        text, block = text[:cut], text[cut:]
    strength = tail.strength
    if text.endswith(strength) and not states_strength(text[: len(text) - len(strength)]):
        text = text[: len(text) - len(strength)]
    return text, block


_DECODER = json.JSONDecoder()


def block_tools(block: str, tail: TailTexts) -> tuple[Tool, ...]:
    """The tools a tools block lists after its schemas heading, one JSON object a line
    (the ``description`` and ``parameters`` written as null where a tool has none are left
    out)."""
    start = block.find(tail.schemas)
    if start < 0:
        return ()
    position = start + len(tail.schemas)
    tools: list[Tool] = []
    while block.startswith("\n{", position):
        try:
            value, position = _DECODER.raw_decode(block, position + 1)
        except json.JSONDecodeError:
            break
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            break
        definition = {key: item for key, item in value.items() if item is not None}
        tools.append(Tool(name=value["name"], definition=definition))
    return tuple(tools)


class TailDroppedReader(HostTextReader):
    """A system turn's text without its tail (:func:`split_tail`); the default text leaves
    no message, as :class:`~pawlette.declare.readers.HostTextReader` reads it.  The tools
    of the first tools block read are the conversation's declared tools (every system turn
    repeats them)."""

    __slots__ = ("_tail",)

    def __init__(self, parser: Parser, tail: TailTexts, default: str | None) -> None:
        super().__init__(parser, default)
        self._tail = tail

    def _text(self) -> str:
        return split_tail(super()._text(), self._tail)[0]

    def close(self, marker: str | None, offset: int) -> None:
        block = split_tail(super()._text(), self._tail)[1]
        declared = self._parser.context(DeclaredTools)
        tools = block_tools(block, self._tail) if block else ()
        if tools and not declared.tools:
            self._parser.emit(ToolsDeclared(tools))
            declared.tools = tools
        super().close(marker, offset)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)
