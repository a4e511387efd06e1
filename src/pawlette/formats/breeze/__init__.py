"""Breeze 2 (seed 004): Llama 3.2 framing with MediaTek Research's tokens, one declared layout.

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
PyPI), which Breeze 2 was trained with, in both its modes: the 300 recorded conversations of
``tests/golden/breeze/mrpromptv3_0.3.2.json`` render byte for byte, and its checks refuse
exactly what it refuses.  Where the seed and ``MRPromptV3`` differ, ``MRPromptV3`` is
followed: calls joined by ``,`` (the seed's ``, `` is read too) and a line break after every
image (read without it too).

- **Modes**: training mode (the default) and inference mode with ``today=`` a date or its
  text: the date header after the tools, never read from a clock.  A system turn always, with
  the mode's text when there is no system message (read back as none).
- **Tools** are the ``function`` objects as ``repr`` writes them (:mod:`.python_tools`), before
  the system text.  **Calls** ``[f(a='x'),g()]`` (:class:`pawlette.declare.PythonCalls`), no
  ids (numbered when parsed, results paired by position).  **Decision tokens**
  (:mod:`.decision`): with tools, the last assistant turn starts with ``<|use_tool|>`` or
  ``<|answer|>``; a turn holds text or calls, and a decision or call marker after text is
  malformed.  **Results** of a turn's calls are one ``ipython`` turn holding a Python list in
  call order (:mod:`.python_results`).  **Images** are placeholder runs, **boxes**
  ``<|start_bbox|>[[x1, y1, x2, y2]]<|end_bbox|>`` (:mod:`.parts`, :mod:`.media`,
  :mod:`pawlette.blocks.images`).
- **Reading** (:mod:`.turn_reading`): ``<|end_of_text|>`` ends any turn (base models);
  an unknown role or a header without its blank line is malformed (lenient: read as text).
- **Options** (``with_options``): see :class:`BreezeOptions`; ``check_conversations`` is
  ``MRPromptV3.check_conversations`` (:mod:`.checks`, :mod:`pawlette.blocks.function_checks`).
- **Remaining differences from MRPromptV3**, each where it loses information or fails: a
  system text with spaces at its ends is written as given (``MRPromptV3`` strips them);
  ``tools=[]`` is no tools; pawlette writes what ``MRPromptV3`` refuses unless
  ``check_conversations`` is on.  Parsing: a date header other than the options' own is
  system text, and an empty system text after the date header is an empty system message.
- Markers are special tokens and are not escaped: text holding a marker's spelling parses
  exactly only from token ids.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

from ...blocks.images import default_image_tokens
from ...declare import Frame, Layout, Marker, SystemPrompt, declare, fence
from ...types import ImagePart
from .checks import RULES, ReferenceChecks
from .decision import DecisionCalls
from .media import Boxes, PlaceholderImages
from .parts import ContentParts
from .python_results import PythonResults
from .python_tools import PythonTools
from .turn_reading import TurnReading

__all__ = [
    "FORMAT",
    "INFERENCE_SYSTEM",
    "LAYOUT",
    "RULES",
    "SPECIAL",
    "TRAINING_SYSTEM",
    "BreezeOptions",
    "layout",
]

HEADER, HEADER_END = Marker("<|start_header_id|>"), Marker("<|end_header_id|>")
END_OF_TURN, END_OF_MESSAGE = Marker("<|eot_id|>"), Marker("<|eom_id|>")

SPECIAL = (  # the tokenizer's markers, the ones the layout never writes included
    *("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>"),
    *("<|eot_id|>", "<|eom_id|>", "<|python_tag|>", "<|use_tool|>", "<|answer|>"),
    *("<|start_img|>", "<|img|>", "<|end_img|>", "<|start_bbox|>", "<|end_bbox|>"),
)
TOOLS_LEAD = "Customized Functions: "
TRAINING_SYSTEM = "You are a helpful AI assistant."
"""The system text when a conversation has none, in training mode (MRPromptV3's)."""
INFERENCE_SYSTEM = (
    "You are a helpful AI assistant built by MediaTek Research. The user you are helping speaks "
    "Traditional Chinese and comes from Taiwan."
)
"""The system text when a conversation has none, in inference mode (MRPromptV3's)."""
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


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


def header(role: str) -> Frame:
    return Frame(
        open=fence(HEADER, role, HEADER_END, "\n\n"),
        end=fence(END_OF_TURN),
        also_end=(fence(END_OF_MESSAGE),),
    )


def date_header(options: BreezeOptions) -> str:
    """Inference mode's header (``%d %b %Y`` in English, whatever the locale)."""
    today = options.today
    if today is None:
        return ""
    if isinstance(today, datetime.date):
        today = f"{today.day:02d} {MONTHS[today.month - 1]} {today.year}"
    return f"Cutting Knowledge Date: {options.knowledge_cutoff}\nToday Date: {today}\n\n"


def layout(options: BreezeOptions) -> Layout:
    date = date_header(options)
    default = options.default_system
    if default is None:
        default = TRAINING_SYSTEM if options.today is None else INFERENCE_SYSTEM
    checks = options.check_roles or options.check_conversations
    return Layout(
        name="breeze",
        summary="Breeze 2: Llama 3.2 headers, <|use_tool|>/<|answer|>, Python call lists, images",
        begin=fence(Marker("<|begin_of_text|>")) if options.begin_of_text else (),
        frames={
            **{role: header(role) for role in ("system", "user", "assistant")},
            "tool": header("ipython"),
        },
        concepts=(
            *(
                (ReferenceChecks(options.check_roles, options.check_conversations),)
                if checks
                else ()
            ),
            SystemPrompt(
                default=default, always=True, preamble_without_tools=fence(date) if date else ()
            ),
            PythonTools(
                place="system", first=True, open=fence(TOOLS_LEAD), close=fence("\n\n---\n" + date)
            ),
            DecisionCalls(
                open=fence(Marker("<|python_tag|>")),
                between=",",
                quote="repr",
                with_content=False,
                call=fence(Marker("<|use_tool|>")),
                answer=fence(Marker("<|answer|>")),
                undecided_end=fence(END_OF_MESSAGE),
            ),
            PythonResults(),
            ContentParts(
                images=PlaceholderImages("<|start_img|>", "<|img|>", "<|end_img|>", after="\n"),
                boxes=Boxes("<|start_bbox|>", "<|end_bbox|>"),
            ),
            TurnReading(HEADER, HEADER_END, end_of_text=Marker("<|end_of_text|>")),
        ),
        extra_special=SPECIAL,
        options=options,
        from_options=layout,
    )


LAYOUT = layout(BreezeOptions())
FORMAT = declare(LAYOUT)
