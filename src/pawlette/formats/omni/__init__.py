"""omni: a multimodal special-token format (seed 000): functions, actions, thinking, voice, images.

Declared with the block-turns concept (:mod:`.blocks`: in-turn results, structured thinking,
JSON blocks and voice, image tiling) and escaped text (:mod:`.escaping`), from which the
writer, the parse table, the Jinja chat template and the turn grammars are derived.

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
  or action name not among the tools of its kind (an action's name among the actions).
  Lenient parsing keeps every character: a block that does not fit becomes text, plus a
  warning.  The seed's framing sketch ``<|BOS|>...<|EOS|>`` is not a conversation (``...``
  outside a turn is malformed).
- No names or metadata on messages (:class:`~pawlette.errors.UnsupportedFeature`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...declare import Frame, Layout, Marker, declare, fence, layout_of
from ...errors import RequestError
from ...format import Format
from ...types import ImagePart, ImageRequestPart, Rendering
from .blocks import BlockTurns
from .escaping import Escaped
from .inline_calls import InlineCall
from .json_blocks import HeadedText, JsonBlock
from .thinking import StructuredThinking
from .tiling import ImageTiling

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
IMAGE_REQUEST_START, IMAGE_REQUEST_END = "<|IMAGE_PLACEHOLDER_START|>", "<|IMAGE_PLACEHOLDER_END|>"
IMAGE_START, IMAGE, IMAGE_END = "<|IMAGE_START|>", "<|IMAGE|>", "<|IMAGE_END|>"
IMAGE_OUTPUT_START = "<|IMAGE_OUTPUT_START|>"
MAX_IMAGE_REFERENCES = 16
IMAGE_REFERENCES = tuple(f"<|IMAGE_{k}|>" for k in range(1, MAX_IMAGE_REFERENCES + 1))

DEFAULT_IMAGE_TOKENS = 256
"""How many ``<|IMAGE|>`` tokens an image takes unless a caller says otherwise."""
STOPS: Mapping[str, tuple[str, ...]] = {"stop": (ASSISTANT_END,), "tool_calls": (FUNCTION_RETURN,)}
"""The stop markers of each situation, by the finish reason they give."""


def default_image_tokens(image: ImagePart) -> int:
    """The fixed default: every image takes :data:`DEFAULT_IMAGE_TOKENS` tokens."""
    return DEFAULT_IMAGE_TOKENS


@dataclass(frozen=True)
class OmniOptions:
    """Render options (``FORMAT.with_options(...)``)."""

    image_tokens: Callable[[ImagePart], int] = default_image_tokens
    """``<|IMAGE|>`` tokens for an image without ``image_url.tokens`` (the encoder decides)."""


def _frame(start: str, end: str, *also_end: str) -> Frame:
    return Frame(
        open=fence(Marker(start)),
        end=fence(Marker(end)),
        also_end=tuple(fence(Marker(text)) for text in also_end),
    )


M = Marker
LAYOUT = Layout(
    name="omni",
    summary="multimodal special tokens: <|BOS|>, SYSTEM/USER/ASSISTANT, functions with "
    "inline results, actions, structured thinking, voice, images",
    begin=fence(M(BOS)),
    frames={
        "system": _frame(SYSTEM_START, SYSTEM_END),
        "user": _frame(USER_START, USER_END),
        # The model ends its turn, or stops at a call for the result written in the turn.
        "assistant": _frame(ASSISTANT_START, ASSISTANT_END, FUNCTION_RETURN),
    },
    concepts=(
        BlockTurns(
            end=M(EOS),
            definitions={
                "function": JsonBlock(M(FUNCTION_DEF_START), M(FUNCTION_DEF_END)),
                "action": JsonBlock(M(ACTION_DEF_START), M(ACTION_DEF_END)),
            },
            calls=InlineCall(
                "function", M(FUNCTION_START), M(FUNCTION_ARGS), M(FUNCTION_RETURN), M(FUNCTION_END)
            ),
            actions=InlineCall("action", M(ACTION_START), M(ACTION_ARGS), M(ACTION_END)),
            thinking=StructuredThinking(
                M(THINK_START), M(THINK_STEP), M(THINK_REASONING), M(THINK_CONCLUSION), M(THINK_END)
            ),
            voice=HeadedText(M(VOICE_START), M(VOICE_CONTENT), M(VOICE_END)),
            image_requests=JsonBlock(M(IMAGE_REQUEST_START), M(IMAGE_REQUEST_END)),
            tiling=ImageTiling(
                references=tuple(M(text) for text in IMAGE_REFERENCES),
                start=M(IMAGE_START),
                token=M(IMAGE),
                end=M(IMAGE_END),
                output=M(IMAGE_OUTPUT_START),
                default_tokens=DEFAULT_IMAGE_TOKENS,
            ),
        ),
        Escaped(),
    ),
    options=OmniOptions(),
)

FORMAT = declare(LAYOUT)
SPECIAL = FORMAT.special_markers


# ------------------------------------------------------------------ public helpers


def _image_prompter(fmt: Format) -> Format:
    """``fmt`` whose generation prompt opens an output image (its block turns'
    ``image_prompt``)."""
    layout = layout_of(fmt)
    blocks = None if layout is None else layout.concept(BlockTurns)
    if layout is None or blocks is None:
        raise RequestError("fmt", f"the {fmt.name} format", "omni (or a variant of it)")
    found = _IMAGE_PROMPTERS.get(id(layout))
    if found is None or found[0] is not layout:
        concepts = tuple(
            dataclasses.replace(concept, image_prompt=True) if concept is blocks else concept
            for concept in layout.concepts
        )
        if len(_IMAGE_PROMPTERS) >= 16:  # variants made per request (with_options): a bound
            _IMAGE_PROMPTERS.clear()
        found = _IMAGE_PROMPTERS[id(layout)] = (
            layout,
            declare(dataclasses.replace(layout, concepts=concepts)),
        )
    return found[1]


_IMAGE_PROMPTERS: dict[int, tuple[Layout, Format]] = {}


def image_output_prompt(
    messages: object, tools: object = None, *, fmt: Format = FORMAT
) -> Rendering:
    """The conversation, then ``<|IMAGE_OUTPUT_START|>``: the prompt for one output image.

    >>> request = [{"role": "user", "content": "a cat"}]
    >>> image_output_prompt(request).text
    '<|BOS|>\\n<|USER_START|>a cat<|USER_END|>\\n\\n<|IMAGE_OUTPUT_START|>'
    """
    return _image_prompter(fmt).render(messages, tools, add_generation_prompt=True)


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
