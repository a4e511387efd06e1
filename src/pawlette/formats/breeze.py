"""Breeze 2 (seed 004): Llama 3.2 framing with MediaTek Research's tokens.

The wire format, as rendered (every ``<|...|>`` is a special token; role names are text)::

    <|begin_of_text|><|start_header_id|>system<|end_header_id|>

    Customized Functions: [{'name': 'get_weather', 'parameters': {...}}]

    ---
    You are a helpful assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>

    <|start_img|><|img|>...<|img|><|end_img|>
    Weather in SF and Seattle?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

    <|python_tag|>[get_weather(city='San Francisco'),get_weather(city='Seattle')]<|eom_id|>\\
    <|start_header_id|>ipython<|end_header_id|>

    [{'temperature': '25 celsius'}, {'temperature': '21 celsius'}]<|eot_id|>\\
    <|start_header_id|>assistant<|end_header_id|>

    <|answer|>25 C in San Francisco, 21 C in Seattle.<|eot_id|>

(``\\`` marks a line break added here for reading.)

**Reference reproduced: MediaTek's ``MRPromptV3.get_prompt``** (``mtkresearch`` 0.3.2 on
PyPI), which Breeze 2 was trained with, in both its modes: 300 generated conversations of
``tests/golden/breeze/mrpromptv3_0.3.2.json`` (text, images, boxes, parallel calls, results
in any order, Chinese, both modes, with and without BOS) render byte for byte (300 of 300),
and its checks refuse exactly the 71 of 80 invalid variants it refuses.  Where the seed and
``MRPromptV3`` differ, ``MRPromptV3`` is followed: calls joined by ``,`` (the seed writes
``, ``) and a line break after every image (the seed's box example has none).

- **Modes** (``with_options``): training mode, the default (``MRPromptV3``'s
  ``training=True``), and inference mode with ``today=datetime.date(...)`` (or its text): the
  date header ``Cutting Knowledge Date: Oct 2024\\nToday Date: 26 Jul 2024\\n\\n`` after the
  tools, never read from a clock (``knowledge_cutoff`` changes ``Oct 2024``).
- **A system turn always**, as ``MRPromptV3`` writes: with no system message, its mode's text
  (:data:`TRAINING_SYSTEM` ``You are a helpful AI assistant.``; in inference mode
  :data:`INFERENCE_SYSTEM`), or ``default_system``.  Parsing reads that text (alone in its
  turn, after the tools and date) as no system message.
- **begin_of_text** (default True) writes ``<|begin_of_text|>`` (``add_bos_token=True``).
- **Tools** are the request's ``function`` objects as Python's ``repr`` writes them
  (``Customized Functions: ...\\n\\n---\\n``) before the system text.  Strings everywhere
  (tools, arguments, results) are written as ``repr`` writes them, its quote choice included
  (``"it's"``), except that private-use, unassigned and astral characters ``repr`` would
  escape are kept as they are (so the Jinja template can follow).
- **Decision tokens** (only when tools are declared): the last message, when it is an
  assistant's, starts with ``<|use_tool|>`` (calls, ended by ``<|eot_id|>``) or ``<|answer|>``
  (text).  Earlier calls are ``<|python_tag|>[...]<|eom_id|>``, earlier answers plain text;
  calls without declared tools are always written that way.  Parsing accepts every spelling
  (the seed's own final answer has no ``<|answer|>``).  A message cannot hold text and calls.
- **Calls** are ``[f(a='x', b=1),g()]`` (``,`` between calls, as ``MRPromptV3`` writes them;
  the seed's ``, `` is read too), via :mod:`pawlette.codecs.python_calls`.  No ids are
  written: parsing numbers them and pairs results by position.
- **Tool results**: the tool messages after an assistant message's calls are one ``ipython``
  turn holding a Python list of the results in call order (matched by ``tool_call_id``; a call
  without a result gets ``None``, as ``MRPromptV3`` writes; unmatched messages follow).  A
  result whose content is JSON is written as that value (a JSON string as its text, as
  ``MRPromptV3``'s ``json.loads`` does), any other content as a string; parsing turns a
  string back into the content and any other value into its JSON (``json.dumps``, so
  ``{"a":1}`` reads back as ``{"a": 1}``).  A tool message's ``name`` is not written (the call
  it answers names it).
- **Images**: ``<|start_img|>`` + N x ``<|img|>`` + ``<|end_img|>`` + ``\\n`` (the line break
  is the format's: parsing drops it, and reads an image without it too).  N is
  ``image_url.tokens`` when given, else ``options.image_tokens(part)``, by default InternVL
  tiling of ``image_url.width``/``height`` (:mod:`pawlette.blocks.images`).  Parsing gives an
  image with ``url`` ``""`` and ``tokens`` N: the text holds the run, not the image.
- **Boxes**: a ``bbox`` content part (0..1000) is ``<|start_bbox|>[[x1, y1, x2, y2]]<|end_bbox|>``,
  in user and assistant messages; :mod:`pawlette.blocks.images` converts pixels both ways.
- **Options** (``with_options``): ``image_tokens``, ``today``, ``knowledge_cutoff``,
  ``default_system``, ``begin_of_text``, ``check_roles`` (``MRPromptV3.check_conversations``'
  role order, naming the message) and ``check_conversations`` (all of its checks: role
  order, function declarations, each call's arguments: missing required parameter,
  unexpected parameter, wrong type, value not in ``enum``; each result: JSON, answering a
  call of the message before, with its name; see :mod:`pawlette.blocks.function_checks`).
- **Remaining differences from MRPromptV3**, each where it loses information or fails: a
  system text with spaces or line breaks at its ends is written as given (``MRPromptV3``
  strips them); ``tools=[]`` is no tools (``MRPromptV3`` still writes ``<|answer|>`` for
  ``functions=[]``, with no functions listed); pawlette writes what ``MRPromptV3`` refuses
  (two images in a conversation, results that are not JSON, calls without declared tools,
  any role order) unless ``check_conversations`` is on; text content holding a marker's
  spelling is written as is by both.
- ``forced_prefix``: ``required`` -> ``<|use_tool|>``, ``none`` -> ``<|answer|>``, a named
  function -> ``<|use_tool|>[name(``.
- Markers are special tokens and are not escaped: text holding a marker's spelling (or
  starting like the tools preamble) parses exactly only from token ids.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..blocks.function_checks import check_conversation
from ..blocks.images import default_image_tokens
from ..blocks.results import result_value, results_in_call_order
from ..blocks.role_order import RoleOrder, check_role_order
from ..blocks.tool_choice import ForcedPrefixes
from ..codecs.python_calls import python_literal
from ..declare import python_calls
from ..declare.layout import Marker, fence
from ..declare.media import Boxes, PlaceholderImages
from ..engine.llama3_readers import (
    ResultListReader,
    SystemPreamble,
    after_blank_line,
    end_turn,
    role_header_reader,
    system_preamble_reader,
)
from ..engine.machine import GrammarBuilder, Parser, ReaderFactory
from ..engine.readers import ContentReader, ScaffoldReader
from ..engine.writer import Writer
from ..errors import UnsupportedFeature
from ..format import Format
from ..types import BoxPart, ImagePart, Message, Role, TextPart, Tool

BEGIN, END_OF_TEXT = "<|begin_of_text|>", "<|end_of_text|>"
HEADER, HEADER_END = "<|start_header_id|>", "<|end_header_id|>"
END_OF_TURN, END_OF_MESSAGE = "<|eot_id|>", "<|eom_id|>"
PYTHON_TAG, USE_TOOL, ANSWER = "<|python_tag|>", "<|use_tool|>", "<|answer|>"
IMAGE, IMAGE_TOKEN, IMAGE_END = "<|start_img|>", "<|img|>", "<|end_img|>"
BOX, BOX_END = "<|start_bbox|>", "<|end_bbox|>"
SPECIAL: tuple[str, ...] = (BEGIN, END_OF_TEXT, HEADER, HEADER_END, END_OF_TURN, END_OF_MESSAGE)
SPECIAL += (PYTHON_TAG, USE_TOOL, ANSWER, IMAGE, IMAGE_TOKEN, IMAGE_END, BOX, BOX_END)
ROLE_NAMES: dict[Role, str] = {"system": "system", "user": "user", "assistant": "assistant"}
ROLE_NAMES["tool"] = "ipython"
TOOLS_LEAD, TOOLS_TRAIL = "Customized Functions: ", "\n\n---\n"
DATE_HEADER = "Cutting Knowledge Date: {cutoff}\nToday Date: {today}\n\n"
TRAINING_SYSTEM = "You are a helpful AI assistant."
"""The system text when a conversation has none, in training mode (MRPromptV3's)."""
INFERENCE_SYSTEM = (
    "You are a helpful AI assistant built by MediaTek Research. The user you are helping speaks "
    "Traditional Chinese and comes from Taiwan."
)
"""The system text when a conversation has none, in inference mode (MRPromptV3's)."""
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
RULES = RoleOrder(
    system_only_at_start=True, assistant_after_user_or_tool=True, call_needs_answer=True
)


@dataclass(frozen=True)
class BreezeOptions:
    """Render options (``FORMAT.with_options(...)``)."""

    image_tokens: Callable[[ImagePart], int] = default_image_tokens
    """Placeholder tokens for an image without ``tokens`` (raise ValueError when unknown)."""
    today: datetime.date | str | None = None
    """None: MRPromptV3's training mode.  A date (written ``26 Jul 2024``) or its text:
    inference mode, with the date header and that date (never read from a clock)."""
    knowledge_cutoff: str = "Oct 2024"
    default_system: str | None = None
    """The system text when the conversation has none; None: the mode's (MRPromptV3's)."""
    begin_of_text: bool = True
    """Start with ``<|begin_of_text|>`` (MRPromptV3's ``add_bos_token=True``)."""
    check_roles: bool = False
    """Refuse MRPromptV3's role orders (``check_conversations``' order rules)."""
    check_conversations: bool = False
    """All of ``MRPromptV3.check_conversations``: the role order, the functions, and every
    call's arguments and result (:mod:`pawlette.blocks.function_checks`)."""


IMAGES = PlaceholderImages(IMAGE, IMAGE_TOKEN, IMAGE_END, after="\n")
"""Images as placeholder runs; MRPromptV3 writes a line break after every image."""
BOXES = Boxes(BOX, BOX_END)
CALLS = python_calls.PythonCalls(
    open=fence(Marker(PYTHON_TAG)), between=",", quote="repr", with_content=False
)
"""Breeze's calls (the Python-calls building block): ``[f(a='x'),g()]``, strings as ``repr``
writes them, ``,`` between calls; the decision token ``<|use_tool|>`` replaces ``open`` on the
final turn of a request with tools."""


def _named_prefix(name: str) -> str:
    return USE_TOOL + python_calls.named_head(CALLS, name)


FORCED = ForcedPrefixes(required=USE_TOOL, none=ANSWER, named=_named_prefix)


# ------------------------------------------------------------------ parse table


def _grammar(options: BreezeOptions) -> GrammarBuilder:
    def body(reader: ReaderFactory) -> ReaderFactory:
        return after_blank_line(reader, HEADER_END)

    date = re.compile(r"Cutting Knowledge Date: [^\n]*\nToday Date: [^\n]*\n\n")
    preamble = SystemPreamble(
        TOOLS_LEAD, TOOLS_TRAIL, date if options.today else None, _default_system(options)
    )
    roles = {name: role for role, name in ROLE_NAMES.items()}
    table = GrammarBuilder()
    table.fields["tool"] = {"id": "tool_call_id"}
    table.state("outside", ScaffoldReader)
    table.state("ended", ScaffoldReader)
    table.state("header", role_header_reader(roles))
    table.state("system.body", body(system_preamble_reader(preamble)), "system")
    # The line break the writer puts after an image is not content (text without it, as in
    # the seed's box example, is read too).
    after_image = after_blank_line(ContentReader, IMAGE_END, "\n", optional=True)
    table.state("user.body", body(after_image), "user")
    table.state("assistant.body", body(DecisionReader), "assistant")
    table.state("assistant.calls", python_calls.call_list_reader(), "assistant")
    table.state("tool.body", body(ResultListReader), "tool")
    for marker in (BEGIN, END_OF_TEXT):
        table.on("outside", marker, "outside")
    table.on("outside", HEADER, "header")
    table.on("header", HEADER_END, "user.body")  # the reader sends it to <role>.body
    IMAGES.rows(table, "user.body", "user.image", "user")
    for role in ("user", "assistant"):
        BOXES.rows(table, f"{role}.body", f"{role}.box", role)
    table.on("assistant.body", ANSWER, "assistant.body")
    for marker in (USE_TOOL, PYTHON_TAG):
        table.on("assistant.body", marker, "assistant.calls")
    for state in ("system.body", "user.body", "assistant.body", "assistant.calls", "tool.body"):
        for marker in (END_OF_TURN, END_OF_MESSAGE, END_OF_TEXT):  # base models end with EOS
            table.on(state, marker, "outside", end_turn)
    return table


class DecisionReader(ContentReader):
    """Assistant text; a decision token or ``<|python_tag|>`` must come before any text."""

    __slots__ = ("_text",)

    def __init__(self, parser: Parser) -> None:
        super().__init__(parser)
        self._text = parser.entered_by not in (None, HEADER_END)

    def feed(self, text: str, offset: int) -> None:
        self._text = True
        super().feed(text, offset)

    def close(self, marker: str | None, offset: int) -> None:
        if self._text and marker in (ANSWER, USE_TOOL, PYTHON_TAG):
            self._parser.malformed(offset, f"{marker} after text", "it first in the turn", "")


# ------------------------------------------------------------------ render


def _header(writer: Writer, role: Role) -> None:
    writer.marker(HEADER, "header")
    writer.raw(ROLE_NAMES[role], "header")
    writer.marker(HEADER_END, "header")
    writer.raw("\n\n", "header")


def _check(message: Message, index: int) -> None:
    if message.name is not None and message.role != "tool":
        raise UnsupportedFeature(f"messages[{index}].name", "a name", "none: breeze has no names")
    if message.reasoning is not None or message.reasoning_steps is not None:
        raise UnsupportedFeature(f"messages[{index}].reasoning_content", "reasoning", "none")
    if message.metadata:
        raise UnsupportedFeature(f"messages[{index}].metadata", "metadata", "none")


_ALLOWED_PARTS: dict[Role, tuple[type, ...]] = {
    "system": (TextPart,),
    "user": (TextPart, BoxPart, ImagePart),
    "assistant": (TextPart, BoxPart),
    "tool": (TextPart,),
}


def _write_parts(
    writer: Writer, message: Message, index: int, options: BreezeOptions, trainable: bool
) -> None:
    allowed = _ALLOWED_PARTS[message.role]
    for number, part in enumerate(message.content or ()):
        if isinstance(part, TextPart):  # the common part first
            writer.text(part.text, "content", trainable=trainable)
            continue
        path = f"messages[{index}].content[{number}]"
        if not isinstance(part, allowed):
            kinds = ", ".join(kind.__name__ for kind in allowed)
            raise UnsupportedFeature(path, f"a {type(part).__name__}", f"{kinds} here")
        if isinstance(part, BoxPart):
            BOXES.write(writer, part, trainable=trainable)
        elif isinstance(part, ImagePart):
            IMAGES.write(writer, part, options.image_tokens, path)


def _write_system(
    writer: Writer, message: Message | None, tools: tuple[Tool, ...], options: BreezeOptions
) -> None:
    _header(writer, "system")
    if tools:
        for number, tool in enumerate(tools):
            if tool.kind != "function":
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
        definitions = [dict(tool.definition) for tool in tools]
        listing = python_literal(definitions, quote="repr", path="tools")
        writer.text(TOOLS_LEAD + listing + TOOLS_TRAIL, "tools")
    if options.today is not None:
        today = options.today
        if isinstance(today, datetime.date):  # "%d %b %Y" in English, whatever the locale
            today = f"{today.day:02d} {MONTHS[today.month - 1]} {today.year}"
        date = DATE_HEADER.format(cutoff=options.knowledge_cutoff, today=today)
        writer.text(date, "system")
    if message is not None:
        _write_parts(writer, message, 0, options, trainable=False)
    else:
        writer.text(_default_system(options), "system")
    writer.marker(END_OF_TURN, "end")


def _default_system(options: BreezeOptions) -> str:
    if options.default_system is not None:
        return options.default_system
    return TRAINING_SYSTEM if options.today is None else INFERENCE_SYSTEM


def _write_assistant(
    writer: Writer, message: Message, index: int, decide: bool, options: BreezeOptions
) -> None:
    _header(writer, "assistant")
    if message.tool_calls:
        if message.content:
            raise UnsupportedFeature(
                f"messages[{index}].content",
                "text beside tool calls",
                "text or calls",
                "breeze writes one or the other per turn: split the message",
            )
        listing = python_calls.encoded(CALLS, message, index)
        opening, closing = (USE_TOOL, END_OF_TURN) if decide else (PYTHON_TAG, END_OF_MESSAGE)
        writer.marker(opening, "tool_call", trainable=True)
        writer.text(listing, "tool_call", trainable=True)
        writer.marker(closing, "end", trainable=True)
        return
    if decide:
        writer.marker(ANSWER, "content", trainable=True)
    _write_parts(writer, message, index, options, trainable=True)
    writer.marker(END_OF_TURN, "end", trainable=True)


def _write_results(writer: Writer, run: list[Message], calls: list[str], index: int) -> None:
    """One ipython turn for a run of tool messages: results in call order."""
    for number, message in enumerate(run):
        _check_text_only(message, index + number)
    ordered = results_in_call_order(run, calls)
    values = [None if slot is None else _result(slot.text) for slot in ordered]
    writer.at("tool", index)
    _header(writer, "tool")
    listing = python_literal(values, quote="repr", path=f"messages[{index}].content")
    writer.text(listing, "tool_result")
    writer.marker(END_OF_TURN, "end")


def _result(content: str) -> object:
    """A result as MRPromptV3 writes it: its JSON value (a JSON string too), else the text."""
    value = result_value(content)
    if value is content:
        try:
            decoded = json.loads(content)
        except ValueError:
            return content
        if isinstance(decoded, str):
            return decoded
    return value


def _check_text_only(message: Message, index: int) -> None:
    for number, part in enumerate(message.content or ()):
        if not isinstance(part, TextPart):
            path = f"messages[{index}].content[{number}]"
            raise UnsupportedFeature(path, f"a {type(part).__name__}", "text parts only")


def _write(
    options: BreezeOptions,
    writer: Writer,
    messages: tuple[Message, ...],
    tools: tuple[Tool, ...],
    prompt: bool,
) -> None:
    if options.check_roles or options.check_conversations:
        check_role_order(messages, RULES)
    if options.check_conversations:
        check_conversation(messages, tools)
    if options.begin_of_text:
        writer.marker(BEGIN, "begin")
    start = 0
    if messages and messages[0].role == "system":
        writer.at("system", 0)
        _check(messages[0], 0)
        _write_system(writer, messages[0], tools, options)
        start = 1
    else:  # MRPromptV3 always writes a system turn
        writer.at("system", -1)
        _write_system(writer, None, tools, options)
    calls: list[str] = []
    index = start
    while index < len(messages):
        message = messages[index]
        _check(message, index)
        if message.role == "tool":
            end = index
            while end < len(messages) and messages[end].role == "tool":
                end += 1
            _write_results(writer, list(messages[index:end]), calls, index)
            calls, index = [], end
            continue
        writer.at(message.role, index)
        if message.role == "assistant":
            decide = bool(tools) and index == len(messages) - 1 and not prompt
            _write_assistant(writer, message, index, decide, options)
        else:
            _header(writer, message.role)
            _write_parts(writer, message, index, options, trainable=False)
            writer.marker(END_OF_TURN, "end")
        calls = [call.id for call in message.tool_calls]
        index += 1
    if prompt:
        writer.at("assistant", len(messages))
        writer.marker(HEADER, "generation_prompt")
        writer.raw(ROLE_NAMES["assistant"], "generation_prompt")
        writer.marker(HEADER_END, "generation_prompt")
        writer.raw("\n\n", "generation_prompt")


def build(options: BreezeOptions) -> Format:
    """The breeze format with these render options."""

    def write(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        _write(options, writer, messages, tools, prompt)

    grammar = _grammar(options).build(
        escape=False, conversation_start="outside", completion_start="assistant.body"
    )
    return Format(
        name="breeze",
        summary="Breeze 2: Llama 3.2 headers, <|use_tool|>/<|answer|>, Python call lists, images",
        grammar=grammar,
        write=write,
        stop=(END_OF_TURN, END_OF_MESSAGE),
        special_markers=SPECIAL,
        forced_prefixes=FORCED,
        options=options,
        variant=build,
    )


FORMAT = build(BreezeOptions())
