"""Mistral's v7/tekken chat formats: bracketed control tokens, calls named outside their JSON
arguments, as Mistral's chat templates write them.

The wire format of Mistral Small 3.2 (``[...]`` are control tokens of the tekken tokenizer,
``<s>``/``</s>`` its bos and eos)::

    <s>[SYSTEM_PROMPT]You are terse.[/SYSTEM_PROMPT][AVAILABLE_TOOLS][{"type": "function", ...}][/AVAILABLE_TOOLS][INST]Weather in Zürich?[/INST][TOOL_CALLS]get_weather[CALL_ID]call00001[ARGS]{"location": "Zürich"}</s>[TOOL_RESULTS]call00001[TOOL_CONTENT]{"temp_c": 3}[/TOOL_RESULTS]3 °C.</s>[INST]Thanks[/INST]

There is no generation prompt: the prompt ends with ``[/INST]`` (or ``[/TOOL_RESULTS]``) and
the model continues with its answer, ended by ``</s>``.

Variants (reference: llama.cpp's ``models/templates``):

- ``small-3.2`` (the default; ``Mistral-Small-3.2-24B-Instruct-2506``): the system turn is
  always written, the template's default text (with the date, an option: ``today``, never
  the clock) when the conversation has none; the tools, one JSON array of OpenAI's whole
  tool objects, just before the last user turn and before every earlier user message equal
  to it (every field alike: the template's test is a dict equality); calls carry 9-character ids
  (``[CALL_ID]``), results name the call they answer (``[TOOL_CONTENT]``).
- ``devstral`` (``unsloth-mistral-Devstral-Small-2507``): Devstral's default system text (no
  date); the tools right after the first system turn (local concept
  :class:`.tools.ToolsAfterSystemTurn`), a system message alone with them too; no ids; text
  before calls is kept.
- ``ministral-3-reasoning`` (``mistralai-Ministral-3-14B-Reasoning-2512``): as ``devstral``
  with its own default text, and the model's ``[THINK]...[/THINK]`` reasoning read from what
  it writes.
- ``nemo`` (``mistralai-Mistral-Nemo-Instruct-2407``, tekken v3): no system turn and no
  default text; calls and results as JSON (below)::

    <s>[INST]Weather in Zürich?[/INST][TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Zürich"}, "id": "call00001"}]</s>[TOOL_RESULTS]{"content": {"temp_c": 3}, "call_id": "call00001"}[/TOOL_RESULTS]3 °C.</s>[AVAILABLE_TOOLS][{"type": "function", "function": {...}}][/AVAILABLE_TOOLS][INST]You are terse.

    Thanks[/INST]

Decisions:

- **System messages**: the first one replaces the default text; later ones are written in
  place in the same frame (small-3.2, devstral).  Ministral's template refuses a system
  message after the first: so does pawlette.
- **Alternation**: after the first system message, user and assistant (without calls) turns
  must alternate, as the small-3.2 and Ministral templates check (small-3.2 counts a later
  system message as a turn, which then usually fails, as the template does).  Devstral's
  template checks nothing.
- **Empty answers**: Ministral's template refuses an assistant message with neither text
  nor calls: so does pawlette (local concept :class:`.checks.AnswerRequired`).
- **Calls**: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]ARGUMENTS`` per call (no ``[CALL_ID]`` in
  devstral and ministral), back to back, one ``</s>`` after the last.  Small 3.2's template
  drops text alongside calls: a recorded loss.  Call ids must be 9 letters and digits where
  ids are written (the template checks the length).
- **Reasoning**: small-3.2 and devstral have none; ``reasoning_content`` is not written (a
  recorded loss, as the templates ignore it).  Ministral's template writes ``[THINK]`` blocks
  only from content chunks of type ``thinking``, never from ``reasoning_content``: pawlette
  drops ``reasoning_content`` likewise (a recorded loss), and reads ``[THINK]...[/THINK]`` at
  the start of what the model writes as reasoning (vLLM's mistral reasoning parser).
- **The tools after the system turn** (devstral, ministral-3-reasoning): written after a
  system message alone too, generation prompt or not, as the templates write them.  Reading a
  conversation, the answer may begin right after the block, as right after the system turn
  (no opener): a text ending with the block ends where the model answers (the generation
  prompt, which writes nothing).
- **Names**: the templates never write a message's ``name``: a recorded loss.
- **Model output**: text before ``[TOOL_CALLS]`` is content; each call's arguments must be a
  JSON object (vLLM's and llama.cpp's Mistral parsers read the same shape).

Decisions for ``nemo``:

- **System message**: only a first one (a later one is refused, as the template refuses
  it); its text and a blank line open the last message when that is a user message (local
  concept :class:`~pawlette.declare.SystemInTurn`).  A conversation ending otherwise has
  no place for it: not written, a recorded loss, as the template loses it.  Parsing a
  conversation reads it back as the start of that user message (nothing marks it): the
  system role is a recorded loss.  A prompt is therefore not a prefix of the same
  conversation rendered with its answer.
- **Tools**: one JSON array of the tool objects before the last user turn, as small-3.2,
  and before every earlier user message equal to the last one.
- **Calls**: ``[TOOL_CALLS]`` + one JSON array of ``{"name", "arguments", "id"}`` objects,
  then ``</s>``; text beside calls is dropped (a recorded loss, as the template drops it);
  ids must be 9 letters and digits (the template refuses other lengths).  Reading: the
  array as the model writes it (a space after ``[TOOL_CALLS]`` too, as SGLang reads it);
  the later ``name[ARGS]{...}`` form stays content with a warning (Nemo never writes it).
- **Results**: ``[TOOL_RESULTS]{"content": TEXT, "call_id": "ID"}[/TOOL_RESULTS]`` per
  tool message, the text written raw as the template writes it (a text result is not
  quoted, so the object is JSON only when the result is).

Remaining differences from the templates:

- Content given as a list of parts is joined text (the templates also write ``[IMG]`` for
  images, which pawlette's text requests do not carry).
- The templates accept an empty ``tools`` list (small-3.2 writes an empty block); pawlette
  treats it as no tools.
- nemo's template writes each tool's string members unescaped (a ``"`` in a description
  breaks its JSON) and leaves out a ``return`` member; pawlette writes the tool objects as
  JSON.
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Literal

from pawlette.declare import (
    Alternation,
    Concept,
    Frame,
    Ignored,
    JsonCallList,
    Layout,
    Marker,
    NamedCalls,
    Option,
    Reasoning,
    Results,
    SystemInTurn,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

from .checks import AnswerRequired
from .system_texts import (
    DEVSTRAL_SYSTEM,
    MINISTRAL_REASONING_SYSTEM,
    SMALL_SYSTEM_AFTER_DATE,
    SMALL_SYSTEM_BEFORE_DATE,
)
from .tools import ToolsAfterSystemTurn

Version = Literal["small-3.2", "devstral", "ministral-3-reasoning", "nemo"]

BOS, EOS = Marker("<s>"), Marker("</s>")
SYSTEM, SYSTEM_END = Marker("[SYSTEM_PROMPT]"), Marker("[/SYSTEM_PROMPT]")
INST, INST_END = Marker("[INST]"), Marker("[/INST]")
TOOLS, TOOLS_END = Marker("[AVAILABLE_TOOLS]"), Marker("[/AVAILABLE_TOOLS]")
TOOL_CALLS, CALL_ID, ARGS = Marker("[TOOL_CALLS]"), Marker("[CALL_ID]"), Marker("[ARGS]")
RESULTS, RESULTS_END = Marker("[TOOL_RESULTS]"), Marker("[/TOOL_RESULTS]")
TOOL_CONTENT = Marker("[TOOL_CONTENT]")
THINK, THINK_END = Marker("[THINK]"), Marker("[/THINK]")
CALL_ID_PATTERN = "[A-Za-z0-9]{9}"


@dataclass(frozen=True)
class MistralOptions:
    """``version``: which template's layout (see the module docstring); ``today``: the date
    small-3.2's default system text names (its template reads the clock)."""

    version: Version = "small-3.2"
    today: datetime.date = datetime.date(2024, 7, 26)


SMALL = MistralOptions()
DEVSTRAL = MistralOptions(version="devstral")
MINISTRAL_REASONING = MistralOptions(version="ministral-3-reasoning")
NEMO = MistralOptions(version="nemo")
VARIANTS = {
    "small-3.2": SMALL,
    "devstral": DEVSTRAL,
    "ministral-3-reasoning": MINISTRAL_REASONING,
    "nemo": NEMO,
}


def _default_system(version: Version) -> str | tuple[object, ...]:
    if version == "devstral":
        return DEVSTRAL_SYSTEM
    if version == "ministral-3-reasoning":
        # The template's text spells [THINK] and [/THINK]: control tokens in its ids.
        before, _, rest = MINISTRAL_REASONING_SYSTEM.partition("[THINK]")
        inside, _, after = rest.partition("[/THINK]")
        return fence(before, THINK, inside, THINK_END, after)
    return fence(SMALL_SYSTEM_BEFORE_DATE, Option("today", "%Y-%m-%d"), SMALL_SYSTEM_AFTER_DATE)


def layout(options: MistralOptions) -> Layout:
    version = options.version
    if version == "nemo":
        return nemo_layout(options)
    small = version == "small-3.2"
    concepts: list[Concept] = []
    if version != "devstral":
        concepts.append(Alternation(system_counts=small))
    if version == "ministral-3-reasoning":
        concepts.append(AnswerRequired())
        concepts.append(Reasoning(open=fence(THINK), close=fence(THINK_END), keep="none"))
        concepts.append(Ignored(("name",)))
    else:
        concepts.append(Ignored(("reasoning", "name")))
    concepts += [
        SystemPrompt(
            default=_default_system(version),  # type: ignore[arg-type]
            placement="in_place" if version != "ministral-3-reasoning" else "first_only",
        ),
        ToolsBlock(
            place="before_last_user",
            open=fence(TOOLS),
            close=fence(TOOLS_END),
            array=True,
            equal_users=True,  # (the template's test: message == user_messages[-1])
        )
        if small
        else ToolsAfterSystemTurn(open=fence(TOOLS), close=fence(TOOLS_END), array=True),
        NamedCalls(
            open=fence(TOOL_CALLS),
            id_open=fence(CALL_ID) if small else None,
            arguments_open=fence(ARGS),
            content="dropped" if small else "written",
            id_pattern=CALL_ID_PATTERN if small else None,
        ),
        Results(
            id_close=fence(TOOL_CONTENT) if small else None,
            id_pattern=CALL_ID_PATTERN if small else None,
        ),
    ]
    return Layout(
        name="mistral",
        summary="Mistral v7/tekken: [INST] turns, [TOOL_CALLS]name[ARGS]{...}, dated default system",
        begin=fence(BOS),
        frames={
            "system": Frame(open=fence(SYSTEM), end=fence(SYSTEM_END)),
            "user": Frame(open=fence(INST), end=fence(INST_END)),
            "assistant": Frame(end=fence(EOS)),
            "tool": Frame(open=fence(RESULTS), end=fence(RESULTS_END)),
        },
        concepts=tuple(concepts),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        today="today" if small else None,
    )


def nemo_layout(options: MistralOptions) -> Layout:
    """Mistral Nemo (tekken v3): no system turn, calls as one JSON array with ids, results as
    a JSON object naming the call."""
    return Layout(
        name="mistral",
        summary="Mistral Nemo: [INST] turns, [TOOL_CALLS][{...}] with ids, system in the last user turn",
        begin=fence(BOS),
        frames={
            "user": Frame(open=fence(INST), end=fence(INST_END)),
            "assistant": Frame(end=fence(EOS)),
            "tool": Frame(open=fence(RESULTS), end=fence(RESULTS_END)),
        },
        concepts=(
            Alternation(),
            Ignored(("reasoning", "name")),
            SystemInTurn(host="last_user"),
            ToolsBlock(
                place="before_last_user",
                open=fence(TOOLS),
                close=fence(TOOLS_END),
                array=True,
                equal_users=True,  # (the template's test: message == user_messages[-1])
            ),
            JsonCallList(
                open=fence(TOOL_CALLS),
                keys=(("name", "name"), ("arguments", "arguments"), ("id", "id")),
                content="dropped",
                id_pattern=CALL_ID_PATTERN,
            ),
            Results(
                item_open=fence('{"content": '),
                id_after=fence(', "call_id": "'),
                item_close=fence('"}'),
                id_pattern=CALL_ID_PATTERN,
            ),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
    )


FORMAT = declare(layout(SMALL))
