"""ChatGLM3 (seed 002): role tokens with a metadata line, calls as fenced Python.

The wire format, as rendered (``[gMASK]``, ``sop`` and the four role tokens are special
tokens; the rest is text)::

    [gMASK]sop<|system|>
    Answer the following questions as best as you can. You have access to the following tools:
    [
        {
            "name": "get_current_weather",
            "parameters": {...}
        }
    ]<|user|>
    What's the weather in Beijing today?<|assistant|>
    Okay, let's look up the weather in Bejing today.<|assistant|>get_current_weather
    ```python
    tool_call(location="beijing", unit="celsius")
    ```<|observation|>
    {"temperature": 22}<|assistant|>
    According to the query results, the temperature in Beijing today is 22 degrees Celsius.

Each turn is ``<|role|>{metadata}\\n{content}`` and ends where the next role token begins;
the layout is the reference tokenizer's ``build_chat_input`` (``[gMASK]sop`` first, no newline
after content, a bare ``<|assistant|>`` as the generation prompt: the model writes the
metadata line itself).

Decisions:

- **Tools** are the request's ``function`` objects (not the whole OpenAI tool dicts).  The
  reference tokenizer dumps whatever list it is given; the seed's example, the reference
  ``tools_using_demo`` and the ``functions`` version of its ``openai_api_demo`` give it
  function objects (only a later demo passed OpenAI's ``tools`` through unchanged):
  ``"\\n" + json.dumps(tools, indent=4, ensure_ascii=False)``
  after the first system message's text; with no system message, an empty one is written to
  hold them (and dropped again by parsing).  Parsing takes the list from the first line that
  is ``[`` alone; trailing commas (as in the seed's hand-written list) are accepted.
- **Calls**: one turn per call, ``<|assistant|>name\\n```python\\ntool_call(k=v, ...)\\n```
  ``, values as Python literals with double-quoted strings (the seed's style; see
  :mod:`pawlette.codecs.python_calls`).  An OpenAI message with content and calls is a text
  turn and then its call turns; parsing joins call turns to the assistant message before
  them, so it comes back as one message (a calls-only message right after an assistant
  message joins it too).  ChatGLM3 writes no call ids: parsing numbers them and pairs each
  observation with the calls of the latest assistant message, in order.
- **Code interpreter**: ``<|assistant|>interpreter\\n```python\\n<code>\\n```\\ `` is a call to
  the built-in tool ``code_interpreter`` with arguments ``{"code": "<code>"}``; its result is
  the next observation, verbatim (the seed's ```` ```result ```` fence is the result's text).
  It needs no tool declaration (ChatGLM3 enables it by its system prompt).
- **Metadata** is a system or user message's ``name``, and an observation's ``name`` when
  parsing; rendering writes none for observations (the reference writes none; the call it
  answers names it).  An assistant message cannot have a ``name`` (its metadata is the call).
- **Readability newlines**: the reference's prompt document puts a newline before each role
  token for readability and says real prompts have none.  Parsing keeps every newline, from
  text as from token ids (the reference tokenizer's own layout), so content ending in a
  newline round-trips; a prompt document is read once those layout newlines are removed.
  Markers are special tokens and are not escaped: text containing a role token's spelling
  parses exactly only from token ids.
- **Training mask**: the model produces everything after the first ``<|assistant|>`` of its
  message, the ``<|assistant|>`` of each continuation turn, and the ``<|user|>`` or
  ``<|observation|>`` right after its message (its stop token).
- **The last assistant turn's stop token**: a conversation that ends with an assistant
  message (and no generation prompt) ends with the stop token the model writes there at
  inference, ``<|observation|>`` after a call and ``<|user|>`` after text, learned: without
  it single-turn training data would never teach the model to stop.  (ChatGLM3's own
  fine-tuning script appends ``</s>`` instead; the role token keeps one stop per situation,
  the one pawlette's server stops on, and keeps every render a prefix of the render of the
  conversation continued.)  Parsing reads a role token with nothing after it, at the end of
  a conversation, as that stop token, not as an empty turn.
- **Token ids** are ``build_chat_input``'s (ChatGLM3's ``tokenization_chatglm.py``): it
  encodes each turn's ``{metadata}\\n`` and its content with separate SentencePiece calls,
  each with its own dummy prefix, so this format declares ``encode_cuts={"metadata"}``
  (:attr:`pawlette.Format.encode_cuts`): text after a role token, and the content after the
  metadata line (a call turn's fenced body too), is encoded by a call of its own; a system
  message's tools stay with its content, as the reference appends them to it.  Tested
  against a re-statement of ``build_chat_input`` with a SentencePiece model trained with
  ChatGLM3's settings and special tokens.  (A chat template's text encoded whole, as
  transformers' ``apply_chat_template`` does, gives other ids at the start of turns.)
- **Role order**: ``with_options(check_roles=True)`` refuses what the seed rules out (system
  messages after others, two user messages in a row, an assistant before any user, an
  observation not answering a call), naming the message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..blocks.role_order import RoleOrder, check_role_order
from ..codecs.python_calls import encode_call
from ..engine.headed_turns import FencedCalls, assistant_turn_reader, headed_text_reader
from ..engine.json_text import indented_json
from ..engine.machine import Action, GrammarBuilder, Parser
from ..engine.readers import ScaffoldReader
from ..engine.writer import Writer
from ..errors import UnsupportedFeature
from ..format import Format
from ..types import Message, Role, TextPart, Tool, ToolCall

GMASK, SOP = "[gMASK]", "sop"
PREFIX = GMASK + SOP  # one marker in text, so the word "sop" in text is never one
SYSTEM, USER, ASSISTANT, OBSERVATION = "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"
TURNS: dict[Role, str] = {
    "system": SYSTEM,
    "user": USER,
    "assistant": ASSISTANT,
    "tool": OBSERVATION,
}
SPECIAL = (GMASK, SOP, SYSTEM, USER, ASSISTANT, OBSERVATION)
CALLS = FencedCalls()
RULES = RoleOrder()


@dataclass(frozen=True)
class ChatGLM3Options:
    """Render options (``FORMAT.with_options(check_roles=True)``)."""

    check_roles: bool = False
    """Refuse role orders the seed rules out (see :mod:`pawlette.blocks.role_order`)."""


# ------------------------------------------------------------------ parse table


def _turn(role: Role) -> Action:
    def action(parser: Parser, offset: int) -> None:
        parser.end_message()
        if role == "assistant":
            parser.begin_message(role)
        elif parser.conversation:
            # Pending: a role token that ends the text opens no turn (it is the stop token
            # the training render writes after a final assistant turn).
            parser.begin_message(role, pending=True)
        else:  # a completion stops at the next role token
            parser.goto("ended")

    return action


def _grammar() -> GrammarBuilder:
    table = GrammarBuilder()
    table.fields.update(
        {
            "system": {"name": "name"},
            "user": {"name": "name"},
            "tool": {"name": "name", "id": "tool_call_id"},
        }
    )
    table.state("outside", ScaffoldReader)
    table.state("ended", ScaffoldReader)
    table.state("system.turn", headed_text_reader(tools_block=True), "system")
    table.state("user.turn", headed_text_reader(), "user")
    table.state("tool.turn", headed_text_reader(results=True), "tool")
    table.state("assistant.turn", assistant_turn_reader(CALLS, continuation=False), "assistant")
    table.state("assistant.more", assistant_turn_reader(CALLS, continuation=True), "assistant")
    table.on("outside", PREFIX, "outside")
    for state in (
        "outside",
        "system.turn",
        "user.turn",
        "tool.turn",
        "assistant.turn",
        "assistant.more",
    ):
        for role, marker in TURNS.items():
            if role == "assistant" and state.startswith("assistant."):
                table.on(state, marker, "assistant.more")
            else:
                table.on(state, marker, f"{role}.turn", _turn(role))
    return table


# ------------------------------------------------------------------ render


def _text(message: Message, index: int) -> str:
    for number, part in enumerate(message.content or ()):
        if not isinstance(part, TextPart):
            raise UnsupportedFeature(
                f"messages[{index}].content[{number}]",
                f"a {type(part).__name__}",
                "text parts only",
            )
    return message.text


def _metadata(message: Message, index: int) -> str:
    if message.reasoning is not None or message.reasoning_steps is not None:
        raise UnsupportedFeature(
            f"messages[{index}].reasoning_content",
            "reasoning",
            "none: ChatGLM3 has no reasoning block",
        )
    if message.metadata:
        raise UnsupportedFeature(
            f"messages[{index}].metadata",
            "metadata pairs",
            "none: the metadata line holds the name",
        )
    name = message.name or ""
    if name and message.role == "assistant":
        raise UnsupportedFeature(
            f"messages[{index}].name",
            "a name on an assistant message",
            "none: its metadata line names its call",
        )
    if "\n" in name:
        raise UnsupportedFeature(f"messages[{index}].name", f"{name!r}", "a name on one line")
    return name if message.role != "tool" else ""


def _call_turn(call: ToolCall, path: str) -> tuple[str, str]:
    """The metadata line and the fenced body of one call."""
    if call.name == CALLS.code_tool:
        arguments: Any = json.loads(call.arguments)
        code = arguments.get(CALLS.code_argument) if isinstance(arguments, dict) else None
        if not isinstance(code, str) or len(arguments) != 1:
            raise UnsupportedFeature(
                f"{path}.arguments",
                f"{call.arguments[:60]!r}",
                f'{{"{CALLS.code_argument}": "<program>"}}',
            )
        return CALLS.code_metadata, code
    if (
        call.name == CALLS.code_metadata
        or not call.name.strip()
        or call.name != call.name.strip()
        or "\n" in call.name
    ):
        raise UnsupportedFeature(
            f"{path}.name",
            f"{call.name!r}",
            f"a one-line name other than {CALLS.code_metadata!r}",
            f"To run code, call {CALLS.code_tool!r}",
        )
    return call.name, encode_call(CALLS.callee, call.arguments, quote=CALLS.quote, path=path)


def _write_tools(writer: Writer, tools: tuple[Tool, ...]) -> None:
    for number, tool in enumerate(tools):
        if tool.kind != "function":
            raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", "'function'")
    listing = [dict(tool.definition) for tool in tools]
    writer.text("\n" + indented_json(listing), "tools")


def _write_assistant(writer: Writer, message: Message, index: int) -> None:
    _metadata(message, index)
    continuation = False
    if message.content or not message.tool_calls:
        writer.marker(ASSISTANT, "header")
        writer.raw("\n", "metadata", trainable=True)
        writer.text(_text(message, index), "content", trainable=True)
        continuation = True
    for number, call in enumerate(message.tool_calls):
        metadata, body = _call_turn(call, f"messages[{index}].tool_calls[{number}].function")
        writer.marker(ASSISTANT, "header", trainable=continuation)
        # The metadata line and the fenced body are apart, as the reference encodes them.
        writer.text(metadata, "metadata", trainable=True)
        writer.raw("\n", "metadata", trainable=True)
        writer.raw(CALLS.opening, "tool_call", trainable=True)
        writer.text(body, "tool_call", trainable=True)
        writer.raw(CALLS.closing, "tool_call", trainable=True)
        continuation = True


def _write(
    options: ChatGLM3Options,
    writer: Writer,
    messages: tuple[Message, ...],
    tools: tuple[Tool, ...],
    prompt: bool,
) -> None:
    if options.check_roles:
        check_role_order(messages, RULES)
    writer.marker(GMASK, "begin")
    writer.marker(SOP, "begin")
    tools_pending = bool(tools)
    if tools_pending and (not messages or messages[0].role != "system"):
        writer.at("system", -1)
        writer.marker(SYSTEM, "header")
        writer.raw("\n", "metadata")
        _write_tools(writer, tools)
        tools_pending = False
    previous: Role | None = None
    for index, message in enumerate(messages):
        writer.at(message.role, index)
        if message.role == "assistant":
            _write_assistant(writer, message, index)
        else:
            # The model ends its turn by writing the next role token: learn that one.
            stop = previous == "assistant" and message.role in ("user", "tool")
            writer.marker(TURNS[message.role], "header", trainable=stop)
            writer.text(_metadata(message, index), "metadata")
            writer.raw("\n", "metadata")
            writer.text(_text(message, index), "content")
            if message.role == "system" and tools_pending:
                _write_tools(writer, tools)
                tools_pending = False
        previous = message.role
    if prompt:
        writer.at("assistant", len(messages))
        writer.marker(ASSISTANT, "generation_prompt")
    elif previous == "assistant":
        # A final assistant turn ends with the stop token the model writes at inference (the
        # next turn's role token), learned like every other turn's.
        writer.marker(OBSERVATION if messages[-1].tool_calls else USER, "end", trainable=True)


def build(options: ChatGLM3Options) -> Format:
    """The ChatGLM3 format with these render options."""

    def write(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        _write(options, writer, messages, tools, prompt)

    return Format(
        name="chatglm3",
        summary="ChatGLM3: [gMASK]sop, <|role|>metadata lines, fenced tool_call(...), interpreter",
        grammar=GRAMMAR,
        write=write,
        stop=(USER, OBSERVATION),
        special_markers=SPECIAL,
        options=options,
        variant=build,
        # build_chat_input encodes "{metadata}\n" and the content with separate calls.
        encode_cuts=frozenset({"metadata"}),
    )


GRAMMAR = _grammar().build(
    escape=False, conversation_start="outside", completion_start="assistant.turn"
)
FORMAT = build(ChatGLM3Options())
