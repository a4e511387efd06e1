"""Breeze 2 (seed 004, MediaTek Research's MRPromptV3) as one declared layout.

NOT YET REGISTERED: ``pawlette.get_format("breeze")`` is still the hand-written
:mod:`pawlette.formats.breeze` (whose docstring documents the format and the reference it
reproduces).  This declaration renders, templates and parses what it renders identically
(``tests/declare/test_breeze_declaration.py`` compares them on generated conversations in
both MRPromptV3 modes); before it replaces the hand-written module, it still lacks:
reading ``<|end_of_text|>`` as the end of any turn, reading unknown role headers and headers
without their blank line leniently (as text, with a warning), refusing a decision token after
text in strict mode, reading a date header other than the options' own, the ``developer`` role
in its template, and the hand-written module's segment split (its tools block and date are
one text segment each).  Found different: an empty system text after the date header reads
back as an empty system message (the hand-written reader drops it).

The wire format (``<|...|>`` are special tokens)::

    <|begin_of_text|><|start_header_id|>system<|end_header_id|>

    Customized Functions: [{'name': 'get_weather', ...}]

    ---
    You are a helpful assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>

    <|start_img|><|img|>...<|img|><|end_img|>
    Weather in SF and Seattle?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

    <|python_tag|>[get_weather(city='San Francisco'),get_weather(city='Seattle')]<|eom_id|>...
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from ..blocks.function_checks import check_conversation
from ..blocks.role_order import check_role_order
from ..declare import (
    Boxes,
    ContentParts,
    Decision,
    Frame,
    Layout,
    Marker,
    PlaceholderImages,
    PythonCalls,
    PythonResults,
    PythonToolsBlock,
    SystemTurn,
    TurnReading,
    declare,
    fence,
)
from ..formats.breeze import (
    INFERENCE_SYSTEM,
    MONTHS,
    RULES,
    SPECIAL,
    TRAINING_SYSTEM,
    BreezeOptions,
)
from ..types import Message, Tool

HEADER, HEADER_END = Marker("<|start_header_id|>"), Marker("<|end_header_id|>")
END_OF_TURN, END_OF_MESSAGE = Marker("<|eot_id|>"), Marker("<|eom_id|>")


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


def checks(
    options: BreezeOptions,
) -> Callable[[tuple[Message, ...], tuple[Tool, ...]], None] | None:
    """MRPromptV3's ``check_conversations`` (its role order, or all of it) as options."""

    def check(messages: tuple[Message, ...], tools: tuple[Tool, ...]) -> None:
        if options.check_roles or options.check_conversations:
            check_role_order(messages, RULES)
        if options.check_conversations:
            check_conversation(messages, tools)

    return check if options.check_roles or options.check_conversations else None


def layout(options: BreezeOptions) -> Layout:
    date = date_header(options)
    default = options.default_system
    if default is None:
        default = TRAINING_SYSTEM if options.today is None else INFERENCE_SYSTEM
    return Layout(
        name="breeze",
        summary="Breeze 2: Llama 3.2 headers, <|use_tool|>/<|answer|>, Python call lists, images",
        begin=fence(Marker("<|begin_of_text|>")) if options.begin_of_text else (),
        frames={role: header(role) for role in ("system", "user", "assistant")},
        system=SystemTurn(
            default=default, always=True, preamble_without_tools=fence(date) if date else ()
        ),
        tools=PythonToolsBlock(
            host="system",
            first=True,
            open=fence("Customized Functions: "),
            close=fence("\n\n---\n" + date),
        ),
        calls=PythonCalls(
            open=fence(Marker("<|python_tag|>")), between=",", quote="repr", with_content=False
        ),
        decision=Decision(
            call=fence(Marker("<|use_tool|>")),
            answer=fence(Marker("<|answer|>")),
            undecided_end=fence(END_OF_MESSAGE),
        ),
        results=PythonResults(frame=header("ipython")),
        parts=ContentParts(
            images=PlaceholderImages("<|start_img|>", "<|img|>", "<|end_img|>", after="\n"),
            boxes=Boxes("<|start_bbox|>", "<|end_bbox|>"),
        ),
        turn_reading=TurnReading(HEADER, HEADER_END, end_of_text=Marker("<|end_of_text|>")),
        check=checks(options),
        extra_special=SPECIAL,
        options=options,
        from_options=layout,
    )


LAYOUT = layout(BreezeOptions())
FORMAT = declare(LAYOUT)
"""The declared format (not registered; see the module docstring)."""
