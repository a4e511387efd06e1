"""Harmony's parse table: headers read as text between markers, then the message's body.

A message is ``<|start|>`` + a header + ``<|message|>`` + its body + its end.  The header is
read as text (the role, a recipient ``to=...``, ``<|channel|>`` and the channel's name, an
optional ``<|constrain|>`` and content type) and decides at ``<|message|>`` which body state
reads on (:meth:`~pawlette.engine.machine.Parser.goto`)::

    outside          <|start|>system<|message|>     → system.scaffold  (the format's own)
    outside          <|start|>developer<|message|>  → developer.body   (a system message)
    outside          <|start|>user<|message|>       → user.body        (the frame's rows)
    outside          <|start|>assistant             → assistant.head
    outside          <|start|>functions.            → tool.head        (a result)
    assistant.head   <|channel|>                    → assistant.channel
    (a header)       <|constrain|>                  → assistant.constrain
    (a header)       <|message|>                    → the body the header names:
        a recipient functions.NAME (in the role header or the channel's), on any channel:
            assistant.arguments (a call); another recipient (python, browser.search): a call
            named by it;
        the analysis channel: assistant.analysis (reasoning);
        commentary without a recipient: assistant.commentary (content, a preamble);
        final, or no channel: assistant.final (content)
    analysis, commentary   <|end|>                  → assistant.between (the message goes on)
    assistant.arguments    <|call|>                 → assistant.between
    assistant.final        <|end|>, <|return|>      → outside (the message ends)
    assistant.between      <|start|>assistant       → assistant.head (the same message)

What models write beyond the template (the peers' cases): the recipient after the channel
(``<|channel|>commentary to=functions.f <|constrain|>json<|message|>``), calls on the
analysis channel, no ``<|constrain|>``, an analysis followed by ``<|start|>assistant`` with
no ``<|end|>``, and no ``<|call|>`` or ``<|return|>`` at the end (engines cut the stop).
A channel header that another follows before any ``<|message|>`` (``<|channel|>commentary
to=assistant<|channel|>analysis<|message|>``) is left out with a warning (llama.cpp skips it
silently); ``to=assistant`` names no call.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ...declare.readers import give_back
from ...declare.table import begin, end
from ...engine.call_arguments import arguments_problem
from ...engine.readers import ContentReader, ReasoningReader, ScaffoldReader, WholeTextReader
from ...types import TextDelta

if TYPE_CHECKING:
    from ...declare.table import Table
    from ...engine.machine import Parser
    from .turns import HarmonyTurns

_RECIPIENT = re.compile(r"(?:^|\s)to=(\S+)")
_CHANNELS = frozenset({"analysis", "commentary", "final"})
_CONTENT_TYPE = re.compile(r"<\|constrain\|>[A-Za-z][\w.+-]*|[A-Za-z][\w.+-]*")
_HEAD_TEXT = re.compile(r"\s*(?:to=\S+)?\s*")
"""What the role header of an assistant message may hold after ``assistant``."""


class Header:
    """The header being read (the parser's context across the header's states)."""

    __slots__ = ("channel", "constrain", "head")

    def __init__(self) -> None:
        self.head = ""
        self.channel = ""
        self.constrain = ""

    def recipient(self) -> str | None:
        found = _RECIPIENT.search(self.head) or _RECIPIENT.search(self.channel)
        if found is None or found.group(1) == "assistant":
            return None  # a message to the assistant is no call
        return found.group(1)

    def channel_name(self) -> str:
        words = _RECIPIENT.sub(" ", self.channel).split()
        return words[0] if words else ""

    def raw(self) -> str:
        """The header as written (what a warning about it quotes)."""
        text = self.head
        if self.channel:
            text += "<|channel|>" + self.channel
        if self.constrain:
            text += "<|constrain|>" + self.constrain
        return text

    def problem(self) -> str | None:
        """What in the header is none of its parts (None: all of it is)."""
        words = self.channel.split()
        if words and words[0] not in _CHANNELS:
            return f"the channel {words[0][:40]!r}"
        for word in words[1:]:
            if not word.startswith("to=") and not _CONTENT_TYPE.fullmatch(word):
                return f"{word[:40]!r} in the channel header"
        if self.constrain and not _CONTENT_TYPE.fullmatch(self.constrain.strip()):
            return f"the content type {self.constrain.strip()[:40]!r}"
        return None

    def open_body(self, parser: Parser, offset: int) -> None:
        """At ``<|message|>``: enter the body this header names (a header with parts that
        are none of a header's is reported, and its body read as the header says)."""
        body = self.body()
        problem = self.problem()
        if problem is not None and body != "assistant.arguments":
            parser.malformed(
                offset, problem, "a channel: analysis, commentary or final", self.raw()
            )
        parser.goto(body)

    def body(self) -> str:
        """The body state this header opens."""
        if self.recipient() is not None:
            return "assistant.arguments"
        channel = self.channel_name()
        if channel == "analysis":
            return "assistant.analysis"
        if channel == "commentary":
            return "assistant.commentary"
        return "assistant.final"


def _cut_short(parser: Parser, offset: int, text: str) -> None:
    """A completion that ends inside a header: its text is kept as content, reported."""
    parser.malformed(offset, f"a header cut short: {text[-40:]!r}", "<|message|>", text)
    parser.emit(TextDelta(text))


class HeadReader(WholeTextReader):
    """An assistant message's role header after ``<|start|>assistant`` (a recipient, or
    nothing); a completion starts here, after the generation prompt."""

    __slots__ = ()

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        header = parser.context(Header)
        header.head = header.channel = header.constrain = ""

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        header = self._parser.context(Header)
        header.head = text
        if marker is None or not _HEAD_TEXT.fullmatch(text):
            if text:
                self._parser.malformed(
                    self._offset, f"assistant header {text[:40]!r}", "a channel header", text
                )
                self._parser.emit(TextDelta(text))
            header.head = ""
            return
        if marker == "<|message|>":
            header.open_body(self._parser, offset)


class ChannelReader(WholeTextReader):
    """The channel's name after ``<|channel|>`` (and perhaps a recipient, a content type)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        header = self._parser.context(Header)
        header.channel = self._text()
        if marker == "<|message|>":
            header.open_body(self._parser, offset)
        elif marker == "<|channel|>":  # a second channel header: the first had no message
            text = "<|channel|>" + header.channel
            expected = "<|message|> (a channel header without a message is left out)"
            self._parser.malformed(offset, f"a stray header {text[:40]!r}", expected, text)
        elif marker is None:
            _cut_short(self._parser, self._offset, header.head + "<|channel|>" + header.channel)


class ConstrainReader(WholeTextReader):
    """The content type after ``<|constrain|>`` (``json``)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        header = self._parser.context(Header)
        header.constrain = self._text()
        if marker == "<|message|>":
            header.open_body(self._parser, offset)
        elif marker is None:
            text = header.head + ("<|channel|>" + header.channel if header.channel else "")
            _cut_short(self._parser, self._offset, text + "<|constrain|>" + header.constrain)


class ArgumentsReader(WholeTextReader):
    """A call's arguments: one JSON object, the call named by the header's recipient."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        parser = self._parser
        text = self._text()
        recipient = parser.context(Header).recipient() or ""
        name = recipient.removeprefix("functions.")
        problem = "no function name" if not name else arguments_problem(text)
        if problem is not None:
            # The call comes back as the text it was, header included, as every format's
            # unreadable call does: the content alone would hide where it was addressed.
            written = parser.context(Header).raw() + "<|message|>" + text
            where = f"a call to {recipient[:40]!r}: its arguments {problem}"
            give_back(parser, self._offset, where, "a JSON object", written)
            return
        parser.emit_call(parser.next_call_index(), parser.new_call_id(), name, text)


class ResultReader(WholeTextReader):
    """A tool result: the template writes its text as a JSON string, read back decoded."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        self._parser.emit(TextDelta(value if isinstance(value, str) else text))


class QuietReader(WholeTextReader):
    """Text the format writes itself and parsing drops (the system message)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        pass


class DeveloperReader(WholeTextReader):
    """The developer message: its ``# Instructions`` are the caller's system message (its
    tools block is the request's tools, not read back)."""

    __slots__ = ()

    def close(self, marker: str | None, offset: int) -> None:
        text = self._text()
        if "# Tools\n\n## functions\n\nnamespace functions {" in text:
            self._parser.lose_tools("TypeScript types")
        prefix = "# Instructions\n\n"
        if not text.startswith(prefix):
            return  # tools alone: no system message
        body = text[len(prefix) :]
        cut = body.find("\n\n# Tools\n\n## functions\n\nnamespace functions {")
        if cut >= 0:
            body = body[: cut + 2]
        body = body.removesuffix("\n\n")
        self._parser.confirm_message()
        self._parser.emit(TextDelta(body))


class BetweenReader(ScaffoldReader):
    """Between two messages of one assistant turn: only whitespace (stray text is content,
    reported).  Not a scaffold state: the turn goes on."""

    __slots__ = ()
    scaffold = False

    def _report(self, text: str) -> None:
        super()._report(text)
        self._parser.emit(TextDelta(text))


def harmony_rows(turns: HarmonyTurns, table: Table) -> None:
    start, message, end_marker = turns.start.text, turns.message.text, turns.end.text
    channel, constrain = turns.channel.text, turns.constrain.text
    call, returned = turns.call.text, turns.return_.text
    assistant = start + "assistant"
    table.state("system.scaffold", QuietReader)
    table.on("outside", start + "system" + message, "system.scaffold")
    table.on("system.scaffold", end_marker, "outside")
    table.state("developer.body", DeveloperReader, "system")
    table.on(
        "outside", start + "developer" + message, "developer.body", begin("system", pending=True)
    )
    table.on("developer.body", end_marker, "outside", end)

    table.reader("assistant.head", HeadReader, ends=False)
    table.reader("assistant.body", BetweenReader, ends=False)
    table.state("assistant.channel", ChannelReader, "assistant")
    table.state("assistant.constrain", ConstrainReader, "assistant")
    table.state("assistant.analysis", ReasoningReader, "assistant")
    table.state("assistant.commentary", ContentReader, "assistant")
    table.state("assistant.final", ContentReader, "assistant")
    table.state("assistant.arguments", ArgumentsReader, "assistant")
    for header in ("assistant.head", "assistant.channel"):
        table.on(header, constrain, "assistant.constrain")
        table.on(header, message, "assistant.final")
    table.on("assistant.head", channel, "assistant.channel")
    table.on("assistant.channel", channel, "assistant.channel")
    table.on("assistant.constrain", message, "assistant.final")
    # assistant.body: between two messages of the same turn.
    for state in ("assistant.analysis", "assistant.commentary"):
        table.on(state, end_marker, "assistant.body")
        table.on(state, assistant, "assistant.head")  # an analysis left without its end
    table.on("assistant.arguments", call, "assistant.body")
    table.on("assistant.arguments", end_marker, "assistant.body")
    table.on("assistant.body", assistant, "assistant.head")
    for state in ("assistant.final", "assistant.body"):
        table.on(state, returned, "outside", end)
    table.on("assistant.final", end_marker, "outside", end)
    table.on("assistant.final", call, "outside", end)

    table.state("tool.head", QuietReader, "tool")
    table.state("tool.channel", QuietReader, "tool")
    table.state("tool.body", ResultReader, "tool")
    table.on("outside", start + "functions.", "tool.head", begin("tool"))
    table.on("tool.head", channel, "tool.channel")
    table.on("tool.head", message, "tool.body")
    table.on("tool.channel", message, "tool.body")
    table.on("tool.body", end_marker, "outside", end)

    # A message that follows an assistant turn ends it.
    for opener in (start + "user" + message, start + "functions.", start + "developer" + message):
        target, actions = table.steps[("outside", opener)]
        table.on("assistant.body", opener, target, end, *actions)
    table.on("assistant.body", start + "system" + message, "system.scaffold", end)
