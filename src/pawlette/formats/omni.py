"""omni: a multimodal special-token format (seed 000): functions, actions, thinking, voice, images.

The wire format, as rendered (every ``<|...|>`` is a control token)::

    <|BOS|>
    <|SYSTEM_START|>You can use these functions:
    <|FUNCTION_DEF_START|>
    {
        "name": "search_weather",
        "parameters": {...},
        "returns": {...}
    }
    <|FUNCTION_DEF_END|>
    <|SYSTEM_END|>

    <|USER_START|>Is <|IMAGE_1|> Beijing?<|IMAGE_START|><|IMAGE|>...<|IMAGE_END|><|USER_END|>

    <|ASSISTANT_START|>
    <|THINK_START|>preamble
    <|THINK_STEP|>title
    <|THINK_REASONING|>reasoning
    <|THINK_CONCLUSION|>conclusion
    <|THINK_END|>

    <|FUNCTION_START|>search_weather<|FUNCTION_ARGS|>{"city": "Beijing"}<|FUNCTION_RETURN|>
    {"temperature": 25}
    <|FUNCTION_END|>
    Sunny, 25 degrees.
    <|ACTION_START|>smile<|ACTION_ARGS|>{}<|ACTION_END|>

    <|VOICE_START|>
    {
        "emotion": "happy"
    }
    <|VOICE_CONTENT|>
    Sunny, 25 degrees!
    <|VOICE_END|>

    <|IMAGE_PLACEHOLDER_START|>
    {
        "prompt": "a sunny Beijing street"
    }
    <|IMAGE_PLACEHOLDER_END|>
    <|ASSISTANT_END|>
    <|EOS|>

OpenAI JSON and decisions (the seed leaves these open):

- **Framing and whitespace.**  ``<|BOS|>\\n``, turns separated by ``\\n\\n``, then
  ``\\n<|EOS|>``.  A *block* (thinking, call, action, voice, image request, definition) is
  written on its own lines: one ``\\n`` before its opening marker and one after its closing
  marker belong to the block, never to the text around it, so text never gains or loses a
  newline.  Likewise inside blocks: thinking fields give their trailing ``\\n`` to the next
  thinking marker; a tool result and a voice text are written ``\\n{text}\\n`` between their
  markers.  JSON (definitions, voice prosody, image requests) is printed with ``indent=4``;
  the parser accepts any whitespace around JSON and between turns.  Call and action arguments
  are written verbatim, without surrounding whitespace.
- **Escaping.**  Markers inside any text (content, arguments, names, results, JSON) are
  escaped with a backslash, as in PCML (``\\<|USER_END|>`` is the text ``<|USER_END|>``; a
  run of ``k`` backslashes right before a marker stands for ``k // 2``), so every text round
  trips.  With token ids this never matters: text is encoded with special tokens off.
- **Functions**: tools ``{"type": "function", "function": {...}}``, the ``function`` object
  printed verbatim, ``returns`` included (a documented extension key), one block each, after
  the first system message's text (a system turn holding only them is written when there is
  no system message; parsing drops it).  **Actions** are tools ``{"type": "action",
  "action": {...}}`` in ``<|ACTION_DEF_START|>`` blocks.
- **Calls**: ``[assistant(tool_calls=[call]), tool(result), assistant(content)]`` is one
  ASSISTANT turn; the model stops at ``<|FUNCTION_RETURN|>`` (finish_reason ``tool_calls``),
  the system writes ``\\n{result}\\n<|FUNCTION_END|>\\n`` and the same turn resumes: the
  generation prompt of a conversation ending with the tool message is the text up to there,
  with no new ``<|ASSISTANT_START|>``.  One call per assistant message (the model stops at each
  call); the text has no call ids, so parsing numbers calls ``call_0``, ``call_1``, ... (or
  uses the parser's ``id_factory``) and gives each tool message its call's id.  A turn that
  goes on to another role after a result is closed with ``<|ASSISTANT_END|>``; an empty
  assistant message there is the same text and parses as none.  A conversation that ends with
  a call waiting for its result ends at ``<|FUNCTION_RETURN|>``.  The injected result is not
  trainable; the rest of the turn is.
- **Actions in output** are content parts ``{"type": "action", "action": {"name": ...,
  "arguments": "<json>"}}`` in the assistant's content list (streamed as
  ``delta.content_parts``); they do not stop generation and finish_reason stays ``stop``.
- **Thinking**: ``reasoning_content`` is the flat text of the thinking: the preamble (when
  not empty) and each step's title, reasoning and conclusion, joined by ``\\n``;
  ``reasoning_steps`` (``[{"title", "reasoning", "conclusion"}]``) carries the steps.  The
  preamble is what ``reasoning_content`` has before the steps' text; a request may give only
  the steps.  One thinking block per assistant message, before its content.
- **Voice**: content part ``{"type": "voice", "voice": {"text": ..., "prosody": {...}}}`` in
  user and assistant turns.  **Image requests** (text to image): content part
  ``{"type": "image_request", "image_request": {...}}`` in assistant turns;
  :func:`image_prompt` builds the second-stage prompt from one.
- **Input images**: an ``image_url`` part of a user message writes its reference token
  ``<|IMAGE_k|>`` where it stands among the text (the ``k``-th image part of the message, up
  to ``<|IMAGE_16|>``), and after all the text, in order, each image's block
  ``<|IMAGE_START|>`` + ``<|IMAGE|>`` x N + ``<|IMAGE_END|>``: ``[image, "中的人和", image,
  "中的人一起跳舞"]`` is the seed's ``<|IMAGE_1|>中的人和<|IMAGE_2|>中的人一起跳舞<|IMAGE_START|>
  ...<|IMAGE_END|><|IMAGE_START|>...<|IMAGE_END|>``.  References come from structure only: a
  reference spelt in any text is escaped like every other marker, so no text can make one.  N
  is the part's ``image_url.tokens`` when given, else ``options.image_tokens(part)``: a
  caller's function (``FORMAT.with_options(image_tokens=...)``; the image encoder decides), by
  default :data:`DEFAULT_IMAGE_TOKENS` for every image.  An image's pixels are not in the
  text: parsing gives ``{"url": "", "tokens": N}`` where its reference stands, N the number of
  ``<|IMAGE|>`` tokens its block held (so rendering that gives the same text back), and ignores
  any other text inside the block (the seed's ``...``).  A block with no reference is an image
  where the block stands; a reference out of order or without a block is malformed (lenient:
  its marker is kept as text, with a warning).
- **Output image**: an assistant message whose content is exactly one image is an image
  output turn, ``<|IMAGE_OUTPUT_START|>`` + ``<|IMAGE|>`` x N (trainable); one image at most.
  :func:`image_output_prompt` ends a conversation there.
- **Stops**: ``fmt.stop`` is ``(<|ASSISTANT_END|>, <|FUNCTION_RETURN|>)``; :data:`STOPS` maps
  each finish reason to its markers.  A completion may include its stop marker or not: one
  that ends right after a call's whole JSON arguments is that call.
- **Malformed output**: strict parsing raises :class:`~pawlette.errors.ParseError` for call
  arguments cut off before a whole JSON object (unterminated ``<|FUNCTION_ARGS|>``), invalid
  JSON, a thinking block not closed by ``<|THINK_END|>``, a bad voice/action/image-request
  block, and, when the parser is given the tools (``fmt.parse(text, tools=...)``), a function
  or action name not among them.  Lenient parsing keeps every character: a block that does
  not fit becomes text, plus a warning.  The seed's framing sketch ``<|BOS|>...<|EOS|>`` is
  not a conversation (``...`` outside a turn is malformed).
- No names or metadata on messages (:class:`~pawlette.errors.UnsupportedFeature`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..blocks.images import ImageReferences
from ..engine.block_readers import (
    EdgeNewlines,
    HeadedText,
    InlineCall,
    LazyMessage,
    StructuredThinking,
    definition_reader,
    json_part_reader,
    split_thinking,
    text_reader,
    token_run_reader,
)
from ..engine.json_text import indented_json
from ..engine.machine import Action, GrammarBuilder, Parser
from ..engine.readers import ScaffoldReader
from ..engine.writer import Writer
from ..errors import FormatError, RequestError, UnsupportedFeature
from ..format import Format, coerce_conversation
from ..openai import tool_from_openai
from ..types import (
    ActionPart,
    ImagePart,
    ImageRequestPart,
    Message,
    Rendering,
    Role,
    TextPart,
    Tool,
    ToolCall,
    VoicePart,
)

BOS, EOS = "<|BOS|>", "<|EOS|>"
SYSTEM_START, SYSTEM_END = "<|SYSTEM_START|>", "<|SYSTEM_END|>"
USER_START, USER_END = "<|USER_START|>", "<|USER_END|>"
ASSISTANT_START, ASSISTANT_END = "<|ASSISTANT_START|>", "<|ASSISTANT_END|>"
FUNCTION_DEF_START, FUNCTION_DEF_END = "<|FUNCTION_DEF_START|>", "<|FUNCTION_DEF_END|>"
ACTION_DEF_START, ACTION_DEF_END = "<|ACTION_DEF_START|>", "<|ACTION_DEF_END|>"
FUNCTION_START, FUNCTION_ARGS = "<|FUNCTION_START|>", "<|FUNCTION_ARGS|>"
FUNCTION_RETURN, FUNCTION_END = "<|FUNCTION_RETURN|>", "<|FUNCTION_END|>"
ACTION_START, ACTION_ARGS, ACTION_END = "<|ACTION_START|>", "<|ACTION_ARGS|>", "<|ACTION_END|>"
THINK_START, THINK_STEP, THINK_END = "<|THINK_START|>", "<|THINK_STEP|>", "<|THINK_END|>"
THINK_REASONING, THINK_CONCLUSION = "<|THINK_REASONING|>", "<|THINK_CONCLUSION|>"
VOICE_START, VOICE_CONTENT, VOICE_END = "<|VOICE_START|>", "<|VOICE_CONTENT|>", "<|VOICE_END|>"
IMAGE_REQUEST_START = "<|IMAGE_PLACEHOLDER_START|>"
IMAGE_REQUEST_END = "<|IMAGE_PLACEHOLDER_END|>"
IMAGE_START, IMAGE, IMAGE_END = "<|IMAGE_START|>", "<|IMAGE|>", "<|IMAGE_END|>"
IMAGE_OUTPUT_START = "<|IMAGE_OUTPUT_START|>"
MAX_IMAGE_REFERENCES = 16
IMAGE_REFERENCES = tuple(f"<|IMAGE_{k}|>" for k in range(1, MAX_IMAGE_REFERENCES + 1))
IMAGES = ImageReferences(IMAGE_REFERENCES, IMAGE)

DEFAULT_IMAGE_TOKENS = 256
"""How many ``<|IMAGE|>`` tokens an image takes unless a caller says otherwise."""
STOPS: Mapping[str, tuple[str, ...]] = {"stop": (ASSISTANT_END,), "tool_calls": (FUNCTION_RETURN,)}
"""The stop markers of each situation, by the finish reason they give."""

SPECIAL = (
    BOS,
    EOS,
    SYSTEM_START,
    SYSTEM_END,
    USER_START,
    USER_END,
    ASSISTANT_START,
    ASSISTANT_END,
    FUNCTION_DEF_START,
    FUNCTION_DEF_END,
    ACTION_DEF_START,
    ACTION_DEF_END,
    FUNCTION_START,
    FUNCTION_ARGS,
    FUNCTION_RETURN,
    FUNCTION_END,
    ACTION_START,
    ACTION_ARGS,
    ACTION_END,
    THINK_START,
    THINK_STEP,
    THINK_REASONING,
    THINK_CONCLUSION,
    THINK_END,
    VOICE_START,
    VOICE_CONTENT,
    VOICE_END,
    IMAGE_REQUEST_START,
    IMAGE_REQUEST_END,
    IMAGE_START,
    IMAGE,
    IMAGE_END,
    IMAGE_OUTPUT_START,
    *IMAGE_REFERENCES,
)

# Blocks inside turns: the newline before the opening marker and after the closing one are theirs.
_ASSISTANT_EDGES = EdgeNewlines(
    after=frozenset((THINK_END, FUNCTION_END, ACTION_END, VOICE_END, IMAGE_REQUEST_END)),
    before=frozenset((THINK_START, FUNCTION_START, ACTION_START, VOICE_START, IMAGE_REQUEST_START)),
)
_USER_EDGES = EdgeNewlines(after=frozenset((VOICE_END,)), before=frozenset((VOICE_START,)))
_SYSTEM_EDGES = EdgeNewlines(before=frozenset((FUNCTION_DEF_START, ACTION_DEF_START)))
_RESULT_EDGES = EdgeNewlines(after=frozenset((FUNCTION_RETURN,)), before=frozenset((FUNCTION_END,)))

FUNCTION_CALL = InlineCall("function", FUNCTION_START, FUNCTION_ARGS, FUNCTION_RETURN, FUNCTION_END)
ACTION_CALL = InlineCall("action", ACTION_START, ACTION_ARGS, ACTION_END)
THINKING = StructuredThinking(THINK_STEP, THINK_REASONING, THINK_CONCLUSION, THINK_END)


def _voice(prosody: dict[str, Any], text: str) -> VoicePart:
    return VoicePart(text=text, prosody=prosody)


VOICE = HeadedText(VOICE_START, VOICE_CONTENT, VOICE_END, _voice)


# ------------------------------------------------------------------ parse table


def _begin(role: Role) -> Action:
    def action(parser: Parser, offset: int) -> None:
        parser.begin_message(role)

    return action


def _end(parser: Parser, offset: int) -> None:
    parser.end_message()


def _image(tokens: int) -> ImagePart:
    return ImagePart(url="", tokens=tokens)


def _begin_assistant(parser: Parser) -> None:
    parser.begin_message("assistant")


def _definition(kind: Literal["function", "action"]) -> Callable[[Mapping[str, Any]], Tool]:
    def make(value: Mapping[str, Any]) -> Tool:
        return tool_from_openai({"type": kind, kind: value}, f"{kind} definition")

    return make


def _image_request(value: dict[str, Any]) -> ImageRequestPart:
    return ImageRequestPart(value)


def _turn_starts(table: GrammarBuilder, state: str, *before: Action) -> None:
    table.on(state, SYSTEM_START, "system.body", *before, _begin("system"))
    table.on(state, USER_START, "user.body", *before, _begin("user"))
    table.on(state, ASSISTANT_START, "assistant.start", *before)
    table.on(state, IMAGE_OUTPUT_START, "image_output", *before, _begin("assistant"))


def _assistant_states(table: GrammarBuilder, prefix: str, ended: str, returned: str) -> None:
    """An assistant turn's states; ``ended``/``returned`` follow its end and a call's return.

    Installed twice: for conversations (a call's result follows inline) and for completions
    (the completion ends at the call).
    """
    lazy = LazyMessage(_begin_assistant, frozenset({(FUNCTION_END, ASSISTANT_END)}))
    start, body = f"{prefix}.start", f"{prefix}.body"
    table.state(start, text_reader(_ASSISTANT_EDGES, lazy=lazy), "assistant")
    table.state(body, text_reader(_ASSISTANT_EDGES), "assistant")
    think = {
        part: table.state(f"{prefix}.think.{part}", THINKING.reader(part), "assistant")
        for part in ("preamble", "title", "reasoning", "conclusion")
    }
    call_name = table.state(f"{prefix}.call", FUNCTION_CALL.name_reader(), "assistant")
    call_arguments = table.state(
        f"{prefix}.call.arguments", FUNCTION_CALL.arguments_reader(), "assistant"
    )
    action_name = table.state(f"{prefix}.action", ACTION_CALL.name_reader(), "assistant")
    action_arguments = table.state(
        f"{prefix}.action.arguments", ACTION_CALL.arguments_reader(), "assistant"
    )
    voice = table.state(f"{prefix}.voice", VOICE.header_reader(), "assistant")
    voice_text = table.state(f"{prefix}.voice.text", VOICE.body_reader(), "assistant")
    request = json_part_reader(_image_request, IMAGE_REQUEST_END)
    image_request = table.state(f"{prefix}.image_request", request, "assistant")

    table.on(start, THINK_START, think["preamble"])
    for state in (start, body):
        table.on(state, FUNCTION_START, call_name)
        table.on(state, ACTION_START, action_name)
        table.on(state, VOICE_START, voice)
        table.on(state, IMAGE_REQUEST_START, image_request)
        table.on(state, ASSISTANT_END, ended, _end)
    table.on(think["preamble"], THINK_STEP, think["title"])
    table.on(think["title"], THINK_REASONING, think["reasoning"])
    table.on(think["reasoning"], THINK_CONCLUSION, think["conclusion"])
    table.on(think["conclusion"], THINK_STEP, think["title"])
    for part in ("preamble", "conclusion"):
        table.on(think[part], THINK_END, body)
    for state in think.values():  # a turn that ends inside the thinking: reported, then ended
        table.on(state, ASSISTANT_END, ended, _end)
    table.on(call_name, FUNCTION_ARGS, call_arguments)
    table.on(call_arguments, FUNCTION_RETURN, returned, _end)
    table.on(action_name, ACTION_ARGS, action_arguments)
    table.on(action_arguments, ACTION_END, body)
    table.on(voice, VOICE_CONTENT, voice_text)
    table.on(voice_text, VOICE_END, body)
    table.on(image_request, IMAGE_REQUEST_END, body)


def _grammar() -> GrammarBuilder:
    table = GrammarBuilder()
    table.fields["tool"] = {"id": "tool_call_id"}
    table.state("outside", ScaffoldReader)
    table.on("outside", BOS, "outside")
    table.on("outside", EOS, "outside")
    _turn_starts(table, "outside")

    table.state("system.body", text_reader(_SYSTEM_EDGES), "system")
    table.state("system.function", definition_reader(_definition("function"), FUNCTION_DEF_END))
    table.state("system.action", definition_reader(_definition("action"), ACTION_DEF_END))
    table.state("system.tools", ScaffoldReader, "system")
    for state in ("system.body", "system.tools"):
        table.on(state, FUNCTION_DEF_START, "system.function")
        table.on(state, ACTION_DEF_START, "system.action")
        table.on(state, SYSTEM_END, "outside", _end)
    table.on("system.function", FUNCTION_DEF_END, "system.tools")
    table.on("system.action", ACTION_DEF_END, "system.tools")

    # A user turn's events wait from its first image reference until its image blocks are read
    # (IMAGES.hold), so each image part comes back where its reference stands.
    table.state("user.body", IMAGES.hold(text_reader(_USER_EDGES)), "user")
    table.state("user.voice", IMAGES.hold(VOICE.header_reader()), "user")
    table.state("user.voice.text", IMAGES.hold(VOICE.body_reader()), "user")
    table.state("user.image", IMAGES.hold(IMAGES.run_reader()), "user")
    table.state("user.images", IMAGES.hold(ScaffoldReader), "user")
    table.on("user.body", USER_END, "outside", IMAGES.release_action(), _end)
    table.on("user.body", VOICE_START, "user.voice")
    table.on("user.voice", VOICE_CONTENT, "user.voice.text")
    table.on("user.voice.text", VOICE_END, "user.body")
    for number, reference in enumerate(IMAGE_REFERENCES, 1):
        table.on("user.body", reference, "user.body", IMAGES.reference(number))
    for state in ("user.body", "user.images"):
        table.on(state, IMAGE_START, "user.image")
    table.on("user.image", IMAGE, "user.image")
    table.on("user.image", IMAGE_END, "user.images")
    table.on("user.images", USER_END, "outside", IMAGES.release_action(), _end)

    _assistant_states(table, "assistant", ended="outside", returned="tool.result")
    table.state("tool.result", FUNCTION_CALL.result_reader(_RESULT_EDGES), "tool")
    table.on("tool.result", FUNCTION_END, "assistant.start", _end)

    table.state("image_output", token_run_reader(IMAGE, _image), "assistant")
    table.on("image_output", IMAGE, "image_output")
    table.on("image_output", EOS, "outside", _end)
    _turn_starts(table, "image_output", _end)

    # A completion: the same assistant states, ending at the turn's end or at a call.
    table.state("completion.ended", ScaffoldReader, "assistant")
    table.state("completion.done", ScaffoldReader, "assistant")
    table.on("completion.ended", EOS, "completion.done")
    _assistant_states(table, "completion", ended="completion.ended", returned="completion.ended")
    return table


# ------------------------------------------------------------------ render


def default_image_tokens(image: ImagePart) -> int:
    """The fixed default: every image takes :data:`DEFAULT_IMAGE_TOKENS` tokens."""
    return DEFAULT_IMAGE_TOKENS


@dataclass(frozen=True)
class OmniOptions:
    """Render options (``FORMAT.with_options(...)``)."""

    image_tokens: Callable[[ImagePart], int] = default_image_tokens
    """``<|IMAGE|>`` tokens for an image without ``image_url.tokens`` (the encoder decides)."""


class _Renderer:
    """Writes one conversation; tracks an assistant turn left open by calls and results."""

    def __init__(self, writer: Writer, tools: tuple[Tool, ...], options: OmniOptions) -> None:
        self.writer = writer
        self.tools = tools
        self.options = options
        self.turns = 0
        self.open_turn: int | None = None  # the tool message after which the turn goes on
        self.pending: tuple[int, ToolCall] | None = None  # a call waiting for its result

    # turns ------------------------------------------------------------------------------

    def run(
        self, messages: tuple[Message, ...], prompt: Literal["assistant", "image"] | None
    ) -> None:
        writer = self.writer
        writer.at(None, -1)
        writer.marker(BOS, "begin")
        if self.tools and (not messages or messages[0].role != "system"):
            self.begin_turn("system", -1, SYSTEM_START)
            self.definitions()
            writer.marker(SYSTEM_END, "close")
        for index, message in enumerate(messages):
            self.message(message, index)
        if self.pending is not None:
            if prompt is not None:
                raise RequestError(
                    f"messages[{self.pending[0]}].tool_calls",
                    "a call whose result is missing",
                    "a tool message with its result before the generation prompt",
                )
            return  # the text ends where the model stopped, at <|FUNCTION_RETURN|>
        if prompt == "assistant":
            if self.open_turn is None:  # else the turn resumes after the result
                self.begin_turn("assistant", len(messages), ASSISTANT_START, "generation_prompt")
            return
        self.close_open_turn()
        if prompt == "image":
            self.begin_turn("assistant", len(messages), IMAGE_OUTPUT_START, "generation_prompt")
            return
        writer.at(None, -1)
        writer.raw("\n", "separator")
        writer.marker(EOS, "end")

    def begin_turn(self, role: Role, index: int, marker: str, kind: str = "header") -> None:
        self.writer.at(role, index)
        self.writer.raw("\n\n" if self.turns else "\n", "separator")
        self.writer.marker(marker, kind)
        self.turns += 1

    def close_open_turn(self) -> None:
        if self.open_turn is not None:
            self.writer.at("tool", self.open_turn)
            self.writer.marker(ASSISTANT_END, "close")
            self.open_turn = None

    def message(self, message: Message, index: int) -> None:
        if message.name is not None or message.metadata:
            what = "name" if message.name is not None else "metadata"
            raise UnsupportedFeature(
                f"messages[{index}].{what}",
                f"a {what}",
                "no names or metadata: omni has no place for them",
            )
        role = message.role
        if role == "tool":
            self.result(message, index)
            return
        if self.pending is not None:
            raise RequestError(
                f"messages[{index}]",
                f"a {role} message right after a function call",
                "the call's result (a tool message) first",
            )
        image_output = role == "assistant" and self.is_image_output(message, index)
        if role == "assistant" and self.open_turn is not None and not image_output:
            self.open_turn = None
            self.writer.at("assistant", index)
            self.assistant_body(message, index)
            return
        self.close_open_turn()
        writer = self.writer
        if role == "system":
            self.begin_turn("system", index, SYSTEM_START)
            self.text_only(message, index, "content", trainable=False)
            if index == 0 and self.tools:
                self.definitions()
                writer.raw("\n", "separator")
            writer.marker(SYSTEM_END, "close")
        elif role == "user":
            self.begin_turn("user", index, USER_START)
            self.user_body(message, index)
            writer.marker(USER_END, "close")
        elif image_output:
            self.begin_turn("assistant", index, IMAGE_OUTPUT_START)
            (image,) = [part for part in message.content or () if isinstance(part, ImagePart)]
            for _ in range(self.count_tokens(image, index, 0)):
                writer.marker(IMAGE, "image", trainable=True)
        else:
            self.begin_turn("assistant", index, ASSISTANT_START)
            self.assistant_body(message, index)

    # pieces ------------------------------------------------------------------------------

    def definitions(self) -> None:
        for tool in self.tools:
            start, end = (
                (FUNCTION_DEF_START, FUNCTION_DEF_END)
                if tool.kind == "function"
                else (ACTION_DEF_START, ACTION_DEF_END)
            )
            self.writer.raw("\n", "tools")
            self.writer.marker(start, "tools")
            self.writer.raw("\n", "tools")
            self.writer.text(indented_json(dict(tool.definition)), "tools")
            self.writer.raw("\n", "tools")
            self.writer.marker(end, "tools")

    def text_only(self, message: Message, index: int, kind: str, *, trainable: bool) -> None:
        for number, part in enumerate(message.content or ()):
            if not isinstance(part, TextPart):
                raise UnsupportedFeature(
                    f"messages[{index}].content[{number}]",
                    f"a {type(part).__name__} in a {message.role} message",
                    "text only",
                )
            self.writer.text(part.text, kind, trainable=trainable)

    def user_body(self, message: Message, index: int) -> None:
        writer = self.writer
        images: list[tuple[int, ImagePart]] = []
        for number, part in enumerate(message.content or ()):
            if isinstance(part, TextPart):
                writer.text(part.text, "content")  # a reference spelt in text is escaped text
            elif isinstance(part, VoicePart):
                self.voice(part, trainable=False)
            elif isinstance(part, ImagePart):
                if len(images) == MAX_IMAGE_REFERENCES:
                    raise UnsupportedFeature(
                        f"messages[{index}].content[{number}]",
                        f"image {len(images) + 1} of one message",
                        f"at most {MAX_IMAGE_REFERENCES} images a message (<|IMAGE_1|> to "
                        f"<|IMAGE_{MAX_IMAGE_REFERENCES}|>)",
                    )
                writer.marker(IMAGE_REFERENCES[len(images)], "image_reference")
                images.append((number, part))
            else:
                raise UnsupportedFeature(
                    f"messages[{index}].content[{number}]",
                    f"a {type(part).__name__} in a user message",
                    "text, voice and image_url parts",
                )
        for number, image in images:  # every image's tokens come after the text, in order
            writer.marker(IMAGE_START, "image")
            for _ in range(self.count_tokens(image, index, number)):
                writer.marker(IMAGE, "image")
            writer.marker(IMAGE_END, "image")

    def count_tokens(self, part: ImagePart, index: int, number: int) -> int:
        count = self.options.image_tokens(part) if part.tokens is None else part.tokens
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise RequestError(
                f"messages[{index}].content[{number}]",
                f"{count!r} image tokens",
                "a whole number of tokens, 0 or more",
            )
        return count

    def is_image_output(self, message: Message, index: int) -> bool:
        images = [part for part in message.content or () if isinstance(part, ImagePart)]
        if not images:
            return False
        if len(images) > 1 or len(images) != len(message.content or ()):
            raise UnsupportedFeature(
                f"messages[{index}].content",
                f"{len(images)} image(s) among {len(message.content or ())} parts",
                "an assistant message holding exactly one image (omni outputs one image at most)",
            )
        if message.tool_calls or message.reasoning is not None or message.reasoning_steps:
            raise UnsupportedFeature(
                f"messages[{index}]",
                "an output image with calls or reasoning",
                "an output image alone in its assistant message",
            )
        return True

    def voice(self, part: VoicePart, *, trainable: bool) -> None:
        writer = self.writer
        writer.raw("\n", "voice", trainable=trainable)
        writer.marker(VOICE_START, "voice", trainable=trainable)
        writer.raw("\n", "voice", trainable=trainable)
        writer.text(indented_json(dict(part.prosody)), "voice", trainable=trainable)
        writer.raw("\n", "voice", trainable=trainable)
        writer.marker(VOICE_CONTENT, "voice", trainable=trainable)
        writer.raw("\n", "voice", trainable=trainable)
        writer.text(part.text, "voice", trainable=trainable)
        writer.raw("\n", "voice", trainable=trainable)
        writer.marker(VOICE_END, "voice", trainable=trainable)
        writer.raw("\n", "voice", trainable=trainable)

    def thinking(self, message: Message, index: int) -> None:
        steps = message.reasoning_steps or ()
        preamble = (
            split_thinking(message.reasoning or "", steps) if message.reasoning is not None else ""
        )
        if preamble is None:
            raise RequestError(
                f"messages[{index}].reasoning_content",
                "text that does not end with the text of reasoning_steps",
                "the preamble, then each step's title, reasoning and conclusion, one per line",
                "Leave reasoning_content out to write the steps alone",
            )
        writer = self.writer
        writer.raw("\n", "reasoning", trainable=True)
        writer.marker(THINK_START, "reasoning", trainable=True)
        writer.text(preamble, "reasoning", trainable=True)
        for step in steps:
            for marker, text in (
                (THINK_STEP, step.title),
                (THINK_REASONING, step.reasoning),
                (THINK_CONCLUSION, step.conclusion),
            ):
                writer.raw("\n", "reasoning", trainable=True)
                writer.marker(marker, "reasoning", trainable=True)
                writer.text(text, "reasoning", trainable=True)
        writer.raw("\n", "reasoning", trainable=True)
        writer.marker(THINK_END, "reasoning", trainable=True)
        writer.raw("\n", "reasoning", trainable=True)

    def call_block(
        self, start: str, name: str, marker: str, arguments: str, close: str, kind: str, where: str
    ) -> None:
        if not name:
            raise RequestError(where, "an empty name", "a function or action name")
        writer = self.writer
        writer.raw("\n", kind, trainable=True)
        writer.marker(start, kind, trainable=True)
        writer.text(name, kind, trainable=True)
        writer.marker(marker, kind, trainable=True)
        writer.text(arguments.strip(), kind, trainable=True)
        writer.marker(close, kind, trainable=True)

    def assistant_body(self, message: Message, index: int) -> None:
        writer = self.writer
        if message.reasoning is not None or message.reasoning_steps is not None:
            self.thinking(message, index)
        for number, part in enumerate(message.content or ()):
            where = f"messages[{index}].content[{number}]"
            if isinstance(part, TextPart):
                writer.text(part.text, "content", trainable=True)
            elif isinstance(part, VoicePart):
                self.voice(part, trainable=True)
            elif isinstance(part, ActionPart):
                self.call_block(
                    ACTION_START,
                    part.name,
                    ACTION_ARGS,
                    part.arguments,
                    ACTION_END,
                    "action",
                    f"{where}.action.name",
                )
                writer.raw("\n", "action", trainable=True)
            elif isinstance(part, ImageRequestPart):
                writer.raw("\n", "image_request", trainable=True)
                writer.marker(IMAGE_REQUEST_START, "image_request", trainable=True)
                writer.raw("\n", "image_request", trainable=True)
                writer.text(indented_json(dict(part.request)), "image_request", trainable=True)
                writer.raw("\n", "image_request", trainable=True)
                writer.marker(IMAGE_REQUEST_END, "image_request", trainable=True)
                writer.raw("\n", "image_request", trainable=True)
            else:
                raise UnsupportedFeature(
                    where,
                    f"a {type(part).__name__} in an assistant message with other content",
                    "text, voice, action and image_request parts (an output image stands alone)",
                )
        if len(message.tool_calls) > 1:
            raise UnsupportedFeature(
                f"messages[{index}].tool_calls",
                f"{len(message.tool_calls)} calls in one message",
                "one call per assistant message: the model stops at each call for its result",
                "Split parallel calls into assistant, tool, assistant, tool, ...",
            )
        if message.tool_calls:
            call = message.tool_calls[0]
            where = f"messages[{index}].tool_calls[0].function.name"
            self.call_block(
                FUNCTION_START,
                call.name,
                FUNCTION_ARGS,
                call.arguments,
                FUNCTION_RETURN,
                "tool_call",
                where,
            )
            self.pending = (index, call)
        else:
            writer.marker(ASSISTANT_END, "end", trainable=True)

    def result(self, message: Message, index: int) -> None:
        if self.pending is None:
            raise UnsupportedFeature(
                f"messages[{index}]",
                "a tool message that answers no call just before it",
                "each tool message right after the assistant message whose call it answers",
            )
        call_index, call = self.pending
        if message.tool_call_id is not None and call.id and message.tool_call_id != call.id:
            raise RequestError(
                f"messages[{index}].tool_call_id",
                f"{message.tool_call_id!r}",
                f"{call.id!r}, the id of the call in messages[{call_index}]",
            )
        writer = self.writer
        writer.at("tool", index)
        writer.raw("\n", "tool_result")
        self.text_only(message, index, "tool_result", trainable=False)
        writer.raw("\n", "tool_result")
        writer.marker(FUNCTION_END, "tool_result")
        writer.raw("\n", "separator")
        self.pending = None
        self.open_turn = index


def _check_markers(grammar_markers: frozenset[str]) -> None:
    # Escaping writes a backslash before every special marker in text; the lexer must know
    # each of them to read it back.
    if grammar_markers != frozenset(SPECIAL):
        missing = sorted(frozenset(SPECIAL) - grammar_markers)
        raise FormatError(f"omni: markers with no row: {missing}")


_GRAMMAR = _grammar().build(
    escape=True, conversation_start="outside", completion_start="completion.start"
)
_check_markers(_GRAMMAR.markers)


def build(options: OmniOptions) -> Format:
    """The omni format with these render options."""

    def write(
        writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
    ) -> None:
        _Renderer(writer, tools, options).run(messages, "assistant" if prompt else None)

    return Format(
        name="omni",
        summary="multimodal special tokens: <|BOS|>, SYSTEM/USER/ASSISTANT, functions with "
        "inline results, actions, structured thinking, voice, images",
        grammar=_GRAMMAR,
        write=write,
        stop=(ASSISTANT_END, FUNCTION_RETURN),
        special_markers=SPECIAL,
        escape_pattern=Format.escaping(SPECIAL),
        options=options,
        variant=build,
    )


FORMAT = build(OmniOptions())


# ------------------------------------------------------------------ public helpers


def _options(fmt: Format) -> OmniOptions:
    if not isinstance(fmt.options, OmniOptions):
        raise RequestError("fmt", f"the {fmt.name} format", "omni (or a variant of it)")
    return fmt.options


def image_output_prompt(
    messages: object, tools: object = None, *, fmt: Format = FORMAT
) -> Rendering:
    """The conversation, then ``<|IMAGE_OUTPUT_START|>``: the prompt for one output image.

    >>> request = [{"role": "user", "content": "a cat"}]
    >>> image_output_prompt(request).text
    '<|BOS|>\\n<|USER_START|>a cat<|USER_END|>\\n\\n<|IMAGE_OUTPUT_START|>'
    """
    core_messages, core_tools = coerce_conversation(messages, tools)
    writer = Writer(fmt.escape_pattern)
    _Renderer(writer, core_tools, _options(fmt)).run(core_messages, "image")
    return writer.rendering()


def image_prompt(request: ImageRequestPart | Mapping[str, Any]) -> Rendering:
    """The second-stage prompt for the image model, from an image request (text to image).

    ``request`` is an :class:`ImageRequestPart`, its JSON object, or the OpenAI content part.

    >>> image_prompt({"prompt": "a cat", "width": 512}).text
    '<|BOS|>\\n<|USER_START|>a cat<|USER_END|>\\n\\n<|IMAGE_OUTPUT_START|>'
    """
    if isinstance(request, ImageRequestPart):
        value: Mapping[str, Any] = request.request
    elif request.get("type") == "image_request" and isinstance(
        request.get("image_request"), Mapping
    ):
        value = request["image_request"]
    else:
        value = request
    prompt = value.get("prompt")
    if not isinstance(prompt, str):
        raise RequestError("image_request.prompt", f"found {prompt!r}", "the prompt text")
    return image_output_prompt([{"role": "user", "content": prompt}])


__all__ = [
    "DEFAULT_IMAGE_TOKENS",
    "FORMAT",
    "STOPS",
    "OmniOptions",
    "build",
    "default_image_tokens",
    "image_output_prompt",
    "image_prompt",
]
