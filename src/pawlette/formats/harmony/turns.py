"""Harmony's messages: the writer and the Jinja template of :class:`HarmonyTurns`.

One concept writes every role but the user's (a plain frame): the system message the format
always writes, the developer message (the caller's first system message and the tools), the
assistant's messages on their channels, and the tool results named after the call they
answer.  The rules are the gpt-oss template's (see :mod:`pawlette.formats.harmony`); the
parse table and the turn grammar are in :mod:`.reading` and :mod:`.grammar`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from ...declare import Concept, Marker
from ...declare.calls import arguments_json, check_call_name
from ...declare.pieces import Option, piece_text
from ...emit.jinja_text import jinja_string
from ...engine.json_text import json_string
from ...errors import FormatError, RequestError
from ...types import Message
from . import typescript

if TYPE_CHECKING:
    from ...declare.grammar import Turn
    from ...declare.jinja import Template
    from ...declare.layout import Layout
    from ...declare.table import Table
    from ...declare.write import Render

START, MESSAGE, END = Marker("<|start|>"), Marker("<|message|>"), Marker("<|end|>")
CHANNEL, CONSTRAIN = Marker("<|channel|>"), Marker("<|constrain|>")
CALL, RETURN = Marker("<|call|>"), Marker("<|return|>")

IDENTITY = Option("model_identity")
CUTOFF = Option("knowledge_cutoff")
DATE = Option("date", "%Y-%m-%d")
EFFORT = Option("reasoning_effort")
CHANNELS_LINE = (
    "# Valid channels: analysis, commentary, final. Channel must be included for every message."
)
TOOLS_LINE = "\nCalls to these tools must go to the commentary channel: 'functions'."
OPTION_FIELDS = ("identity", "cutoff", "date", "effort")
CHANNEL_TAGS = ("<|channel|>analysis<|message|>", "<|channel|>final<|message|>")
"""Text the template refuses in an assistant message's content or reasoning."""
CHANNEL_REFUSAL = "a channel header, which the template refuses"
_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class HarmonyTurns(Concept):
    """Harmony's system, developer, assistant and tool messages: the one concept of a harmony
    layout (see :mod:`pawlette.formats.harmony`, which declares gpt-oss's and LLM-jp 4's with
    it).  Every default is gpt-oss's template.

    The special tokens (o200k_harmony's; another spelling only for a tokenizer that spells
    them otherwise, with the frames built from the same markers:
    :func:`~pawlette.formats.harmony.frames`):

    - ``start``: opens every message (``<|start|>``);
    - ``message``: ends a header, opens the body (``<|message|>``);
    - ``end``: ends a message (``<|end|>``);
    - ``channel``: opens the channel's name in a header (``<|channel|>``);
    - ``constrain``: the content type's marker in a call's header (``<|constrain|>``);
    - ``call``: ends the model's message that calls a tool, a stop (``<|call|>``);
    - ``return_``: ends the last answer of a conversation, a stop (``<|return|>``).

    The lines of the system message the format always writes, each an
    :class:`~pawlette.declare.Option` (text from the layout's options, set at run time with
    :meth:`pawlette.Format.with_options`):

    - ``identity``: its first line (``Option("model_identity")``);
    - ``cutoff``: the ``Knowledge cutoff`` line (``Option("knowledge_cutoff")``);
    - ``date``: the ``Current date`` line, a date option (``Option("date", "%Y-%m-%d")``);
    - ``effort``: the ``Reasoning`` line (``Option("reasoning_effort")``).

    Where templates of the format differ:

    - ``every_call``: every call of a message is written, each as a message of its own that
      ends with ``end``, the last with ``call`` (False: the first call only, the others
      recorded losses);
    - ``constrained``: a call's header is ``commentary <|constrain|> json`` (False:
      ``commentary json``);
    - ``analysis``: when the text or reasoning beside calls is written as an analysis
      message: ``"until_final"`` while no answer follows in the conversation, ``"last"``
      only in the last message of a render without a generation prompt (elsewhere a
      recorded loss);
    - ``results_by_position``: a result is named by its message's ``name``, else by the call
      of the turn before in the same position, else by the last call (False: always by the
      last call written);
    - ``defaults_json``: every default in the tools block written as JSON (False: an enum's
      or a ``oneOf``'s default joined to the text as it is).

    Declaring refuses a field of another type or value, naming the field, the value given
    and what is allowed.
    """

    start: Marker = START
    message: Marker = MESSAGE
    end: Marker = END
    channel: Marker = CHANNEL
    constrain: Marker = CONSTRAIN
    call: Marker = CALL
    return_: Marker = RETURN
    identity: Option = IDENTITY
    cutoff: Option = CUTOFF
    date: Option = DATE
    effort: Option = EFFORT
    every_call: bool = False
    constrained: bool = False
    analysis: Literal["until_final", "last"] = "until_final"
    results_by_position: bool = False
    defaults_json: bool = False

    claims: ClassVar[frozenset[str]] = frozenset({"system", "assistant", "tool"})
    handles: ClassVar[frozenset[str]] = frozenset(
        {"tools", "name", "tool_name", "reasoning", "calls"}
    )

    def markers(self) -> Iterator[Marker]:
        yield from (self.start, self.message, self.end, self.channel)
        yield from (self.constrain, self.call, self.return_)

    def validate(self, layout: Layout) -> None:
        # The Option fields are checked here, before an interpreter reads them (the layout
        # checked the Marker fields and the plain ones, as every concept's).  Whether each
        # names an option of the layout, of the right kind, the layout checks next.
        for name in OPTION_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, Option):
                raise FormatError(
                    f"{layout.name}: HarmonyTurns.{name}: {value!r}; expected an Option naming "
                    f"a field of Layout.options ({getattr(HarmonyTurns, name)!r})"
                )

    # ------------------------------------------------------------------ the writer

    def system_text(self, out: Render) -> str:
        options, name = out.layout.options, out.layout.name
        return (
            piece_text(self.identity, options, name)
            + "\nKnowledge cutoff: "
            + piece_text(self.cutoff, options, name)
            + "\nCurrent date: "
            + piece_text(self.date, options, name)
            + "\n\nReasoning: "
            + piece_text(self.effort, options, name)
            + "\n\n"
            + CHANNELS_LINE
            + (TOOLS_LINE if out.tools else "")
        )

    def check(self, out: Render) -> None:
        out.handles(*self.handles)
        messages = out.messages
        for index, message in enumerate(messages):
            if message.name and self.results_by_position and message.role == "tool":
                out.lose(
                    f"messages[{index}].name",
                    "written as the name of the function the result answers: not read back",
                )
            elif message.name is not None:
                out.lose(f"messages[{index}].name", "not written")
            if message.role == "system" and index > 0:
                out.lose(f"messages[{index}]", "a system message after the first is not written")
            if message.role == "system" and index == 0 and not out.message_text(0):
                # (with tools too: the developer turn the tools are in is the same without it)
                out.lose("messages[0]", "an empty system message writes nothing")
            if message.role != "assistant":
                continue
            self._check_assistant(out, index, message)

    def _check_readable_name(self, name: str, index: int, number: int) -> None:
        """Refuse a call's name that reading would not give back: the header's recipient is
        read up to the first whitespace, and a special token in it ends the header there."""
        where = f"messages[{index}].tool_calls[{number}].function.name"
        expected = (
            "a function name without whitespace or special tokens (harmony reads the "
            "recipient to=functions.NAME up to the first whitespace)"
        )
        if _WHITESPACE.search(name):
            raise RequestError(where, f"{name!r}, which holds whitespace", expected)
        for marker in self.markers():
            if marker.text in name:
                raise RequestError(where, f"{name!r}, which holds {marker.text}", expected)

    def _check_assistant(self, out: Render, index: int, message: Message) -> None:
        text = out.message_text(index)
        for tag in CHANNEL_TAGS:
            if tag in text:
                raise RequestError(f"messages[{index}].content", CHANNEL_REFUSAL, "plain text")
            if message.reasoning is not None and tag in message.reasoning:
                raise RequestError(
                    f"messages[{index}].reasoning_content", CHANNEL_REFUSAL, "plain text"
                )
        if not message.tool_calls:
            last = index == len(out.messages) - 1 and not out.prompt
            if message.reasoning is not None and not last:
                out.lose(f"messages[{index}].reasoning_content", "dropped before the last turn")
            return
        if text and message.reasoning:
            raise RequestError(
                f"messages[{index}]",
                "both content and reasoning_content beside tool calls",
                "one of them (the template writes either as the analysis before the call)",
            )
        for number, call in enumerate(message.tool_calls):
            check_call_name(call.name, index, number)  # an empty name parses back as no call
            self._check_readable_name(call.name, index, number)
        if not self.every_call:
            for number in range(1, len(message.tool_calls)):
                out.lose(
                    f"messages[{index}].tool_calls[{number}]", "only the first call is written"
                )
        if (text or message.reasoning) and not self.writes_analysis(out, index):
            what = "content" if text else "reasoning_content"
            if self.analysis == "until_final":
                why = "a final answer follows"
            else:
                why = "written only in the last message of a render without a generation prompt"
            out.lose(f"messages[{index}].{what}", f"dropped: {why}")
        elif text:
            out.lose(
                f"messages[{index}].content",
                "written as the analysis before the call: read back as reasoning_content",
            )

    def writes_analysis(self, out: Render, index: int) -> bool:
        """Whether the text or reasoning beside the calls of ``messages[index]`` is written
        (as an analysis message before them)."""
        if self.analysis == "last":
            return index == len(out.messages) - 1 and not out.prompt
        return not final_follows(out.messages, index)

    def write_start(self, out: Render) -> None:
        writer = out.writer
        writer.at("system", -1)
        writer.marker(self.start.text, "header")
        writer.raw("system", "header")
        writer.marker(self.message.text, "header")
        writer.raw(self.system_text(out), "system")
        writer.marker(self.end.text, "close")
        messages = out.messages
        instructions = out.message_text(0) if messages and messages[0].role == "system" else ""
        if not instructions and not out.tools:
            return
        writer.at("system", 0 if instructions else -1)
        writer.marker(self.start.text, "header")
        writer.raw("developer", "header")
        writer.marker(self.message.text, "header")
        if instructions:
            writer.raw("# Instructions\n\n", "header")
            writer.text(instructions, "content")
            writer.raw("\n\n", "header")
        if out.tools:
            definitions = [tool.definition for tool in out.tools]
            tools = typescript.namespace(definitions, self.defaults_json)
            writer.raw("# Tools\n\n" + tools, "tools")
        writer.marker(self.end.text, "close")

    def write_message(self, out: Render, index: int) -> None:
        message = out.messages[index]
        if message.role == "system":
            return  # the first is the developer message (write_start); later ones are dropped
        state = out.state(HarmonyTurns, _State)
        if message.role == "tool":
            self._write_result(out, index, state)
        else:
            self._write_assistant(out, index, message, state)

    def _header(self, out: Render, first: bool) -> None:
        """``<|start|>assistant``: the generation prompt's for the message's first (not
        trainable), the model's own for the others."""
        writer = out.writer
        writer.marker(self.start.text, "header", trainable=not first)
        writer.raw("assistant", "header", trainable=not first)

    def _write_assistant(self, out: Render, index: int, message: Message, state: _State) -> None:
        writer = out.writer
        writer.at("assistant", index)
        text = out.message_text(index)
        if message.tool_calls:
            first = True
            analysis = text or message.reasoning
            if analysis and self.writes_analysis(out, index):
                self._header(out, True)
                self._channel(out, "analysis")
                writer.text(analysis, "reasoning", trainable=True)
                writer.marker(self.end.text, "end", trainable=True)
                first = False
            calls = message.tool_calls if self.every_call else message.tool_calls[:1]
            for number, call in enumerate(calls):
                self._header(out, first)
                writer.raw(" to=functions." + call.name, "tool_call", trainable=True)
                writer.marker(self.channel.text, "tool_call", trainable=True)
                if self.constrained:
                    writer.raw("commentary ", "tool_call", trainable=True)
                    writer.marker(self.constrain.text, "tool_call", trainable=True)
                    writer.raw(" json", "tool_call", trainable=True)
                else:
                    writer.raw("commentary json", "tool_call", trainable=True)
                writer.marker(self.message.text, "tool_call", trainable=True)
                arguments = arguments_json(call.arguments, index, number)
                writer.text(arguments, "tool_call", trainable=True)
                last = number == len(calls) - 1
                writer.marker((self.call if last else self.end).text, "end", trainable=True)
                first = False
            state.last_call = calls[-1].name
            state.group = [call.name for call in calls]
            state.answered = 0
            return
        first = True
        last = index == len(out.messages) - 1 and not out.prompt
        if last and message.reasoning is not None:
            self._header(out, True)
            self._channel(out, "analysis")
            writer.text(message.reasoning, "reasoning", trainable=True)
            writer.marker(self.end.text, "end", trainable=True)
            first = False
        self._header(out, first)
        self._channel(out, "final")
        writer.text(text, "content", trainable=True)
        writer.marker((self.return_ if last else self.end).text, "end", trainable=True)
        state.last_call = None

    def _channel(self, out: Render, name: str) -> None:
        writer = out.writer
        writer.marker(self.channel.text, "header", trainable=True)
        writer.raw(name, "header", trainable=True)
        writer.marker(self.message.text, "header", trainable=True)

    def _write_result(self, out: Render, index: int, state: _State) -> None:
        name = state.last_call
        if self.results_by_position:
            given = out.messages[index].name
            if given:
                name = given
            elif state.answered < len(state.group):
                name = state.group[state.answered]
            state.answered += 1
        if name is None:
            raise RequestError(
                f"messages[{index}]",
                "a tool message with no assistant tool call before it",
                "a result after the assistant message that calls its tool",
            )
        writer = out.writer
        writer.at("tool", index)
        writer.marker(self.start.text, "header")
        writer.raw(f"functions.{name} to=assistant", "header")
        writer.marker(self.channel.text, "header")
        writer.raw("commentary", "header")
        writer.marker(self.message.text, "header")
        writer.text(json_string(out.message_text(index)), "tool_result")
        writer.marker(self.end.text, "close")

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        from .reading import harmony_rows

        harmony_rows(self, table)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        out.object_arguments = True
        out.macro("harmony", typescript.jinja_macros(self.defaults_json))
        out.ns("last_call", "none")
        if self.results_by_position:
            out.ns("group", "[]")
            out.ns("answered", "0")

    def jinja_start(self, out: Template) -> None:
        out.literal(f"{self.start.text}system{self.message.text}")
        out.fence((self.identity,))
        out.literal("\nKnowledge cutoff: ")
        out.fence((self.cutoff,))
        out.literal("\nCurrent date: ")
        out.fence((self.date,))
        out.literal("\n\nReasoning: ")
        out.fence((self.effort,))
        out.literal("\n\n" + CHANNELS_LINE)
        out.out("{%- if has_tools -%}")
        out.literal(TOOLS_LINE)
        out.out("{%- endif -%}")
        out.literal(self.end.text)
        first_system = 'messages and messages[0].role in ["system", "developer"]'
        out.out(f"{{%- if {first_system} -%}}")
        out.out(
            f"{{%- set instructions = text_of(messages[0], 0, {jinja_string(out.layout.name)}) -%}}"
        )
        out.out("{%- else -%}{%- set instructions = '' -%}{%- endif -%}")
        out.out("{%- if instructions or has_tools -%}")
        out.literal(f"{self.start.text}developer{self.message.text}")
        out.out("{%- if instructions -%}")
        out.literal("# Instructions\n\n")
        out.value("instructions")
        out.literal("\n\n")
        out.out("{%- endif -%}")
        out.out("{%- if has_tools -%}")
        out.literal("# Tools\n\n")
        out.out("{{- harmony_namespace(tools) -}}")
        out.out("{%- endif -%}")
        out.literal(self.end.text)
        out.out("{%- endif -%}")

    def jinja_message(self, out: Template, role: str) -> None:
        if role == "system":
            return
        if role == "tool":
            result_name = "ns.last_call"
            if self.results_by_position:
                result_name = "result_name"
                out.out(
                    "{%- set result_name = ns.last_call -%}"
                    "{%- if message.name is defined and message.name -%}"
                    "{%- set result_name = message.name -%}"
                    "{%- elif ns.answered < ns.group | length -%}"
                    "{%- set result_name = ns.group[ns.answered] -%}{%- endif -%}"
                    "{%- set ns.answered = ns.answered + 1 -%}"
                )
            out.raise_if(
                f"{result_name} is none",
                "a tool message with no assistant tool call before it",
            )
            out.literal(self.start.text + "functions.")
            out.out(f"{{{{- {result_name} -}}}}")
            out.literal(f" to=assistant{self.channel.text}commentary{self.message.text}")
            out.out(
                f"{{{{- text_of(message, index, {jinja_string(out.layout.name)}) | tojson -}}}}"
            )
            out.literal(self.end.text)
            return
        name = jinja_string(out.layout.name)
        start, channel, message = self.start.text, self.channel.text, self.message.text
        out.out(f"{{%- set text = text_of(message, index, {name}) -%}}")
        out.out(
            "{%- set thinking = message.reasoning_content if message.reasoning_content is defined"
            " else none -%}"
        )
        for tag in CHANNEL_TAGS:
            out.raise_if(f"{jinja_string(tag)} in text", f"content: {CHANNEL_REFUSAL}")
            out.raise_if(
                f"thinking is not none and {jinja_string(tag)} in thinking",
                f"reasoning_content: {CHANNEL_REFUSAL}",
            )
        out.out("{%- if message.tool_calls is defined and message.tool_calls -%}")
        out.raise_if("text and thinking", "both content and reasoning_content beside tool calls")
        if self.analysis == "until_final":
            out.out("{%- set later = namespace(final=false) -%}")
            out.out("{%- for following in messages[index + 1:] -%}")
            out.out(
                '{%- if following.role == "assistant" and not (following.tool_calls is defined'
                " and following.tool_calls) -%}{%- set later.final = true -%}{%- endif -%}"
            )
            out.out("{%- endfor -%}")
            writes_analysis = "not later.final"
        else:
            writes_analysis = "loop.last and not add_generation_prompt"
        out.out("{%- set analysis = text or thinking -%}")
        if self.every_call:
            out.out("{%- set names = namespace(written=[]) -%}")
        else:
            out.out("{%- set call = message.tool_calls[0].function -%}")
        out.literal(start + "assistant")
        out.out("{%- generation -%}")
        out.out(f"{{%- if analysis and {writes_analysis} -%}}")
        out.literal(f"{channel}analysis{message}")
        out.value("analysis")
        out.literal(self.end.text + start + "assistant")
        out.out("{%- endif -%}")
        if self.every_call:
            out.out("{%- for item in message.tool_calls -%}{%- set call = item.function -%}")
            out.out("{%- if not loop.first -%}")
            out.literal(self.end.text + start + "assistant")
            out.out("{%- endif -%}")
        out.literal(" to=functions.")
        out.out("{{- call.name -}}")
        if self.constrained:
            out.literal(f"{channel}commentary {self.constrain.text} json{message}")
        else:
            out.literal(f"{channel}commentary json{message}")
        out.out(
            "{%- if call.arguments is string -%}{{- call.arguments | trim -}}"
            "{%- else -%}{{- call.arguments | tojson -}}{%- endif -%}"
        )
        if self.every_call:
            out.out("{%- set names.written = names.written + [call.name] -%}")
            out.out("{%- endfor -%}")
        out.literal(self.call.text)
        out.out("{%- endgeneration -%}")
        last = "names.written[-1]" if self.every_call else "call.name"
        out.out(f"{{%- set ns.last_call = {last} -%}}")
        if self.results_by_position:
            names = "names.written" if self.every_call else "[call.name]"
            out.out(f"{{%- set ns.group = {names} -%}}{{%- set ns.answered = 0 -%}}")
        out.out("{%- else -%}")
        out.out("{%- set last = loop.last and not add_generation_prompt -%}")
        out.literal(start + "assistant")
        out.out("{%- generation -%}")
        out.out("{%- if last and thinking is not none -%}")
        out.literal(f"{channel}analysis{message}")
        out.value("thinking")
        out.literal(self.end.text + start + "assistant")
        out.out("{%- endif -%}")
        out.literal(f"{channel}final{message}")
        out.value("text")
        out.out("{%- if last -%}")
        out.literal(self.return_.text)
        out.out("{%- else -%}")
        out.literal(self.end.text)
        out.out("{%- endif -%}")
        out.out("{%- endgeneration -%}")
        out.out("{%- set ns.last_call = none -%}")
        out.out("{%- endif -%}")

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        from .grammar import harmony_grammar

        harmony_grammar(self, turn)


class _State:
    """What the writer remembers across messages: the name of the last call written, and
    (``results_by_position``) the names of the last turn's calls and how many results
    followed them."""

    __slots__ = ("answered", "group", "last_call")

    def __init__(self) -> None:
        self.last_call: str | None = None
        self.group: list[str] = []
        self.answered = 0


def final_follows(messages: tuple[Message, ...], index: int) -> bool:
    """Whether an assistant message without calls comes after ``messages[index]`` (then the
    template drops the analysis it would write before this message's call)."""
    return any(
        message.role == "assistant" and not message.tool_calls for message in messages[index + 1 :]
    )
