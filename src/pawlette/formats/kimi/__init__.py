"""Kimi K2 and K3 (Moonshot AI).  K2: ``<|im_…|>`` turns with a role label, tools declared in
a turn of their own, calls whose id holds the name, results labelled with that id, and (K2
Thinking) ``<think>`` blocks, as Moonshot's chat templates write them.  K3: tagged turns,
described in its own section below.

The wire format (every ``<|…|>`` is a special token of the Kimi tokenizer; the role words
and ``tool_declare`` are plain text), shown on several lines (the format writes no newline
between turns)::

    <|im_system|>tool_declare<|im_middle|>[{"type": "function", "function": {"name": "get_weather", ...}}]<|im_end|>
    <|im_system|>system<|im_middle|>You are terse.<|im_end|>
    <|im_user|>user<|im_middle|>Weather in Zürich?<|im_end|>
    <|im_assistant|>assistant<|im_middle|>Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"location": "Zürich"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>
    <|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:0
    {"temp_c": 3}<|im_end|>
    <|im_assistant|>assistant<|im_middle|>

Variants (reference: llama.cpp's ``models/templates``):

- ``k2-instruct`` (the default): ``Kimi-K2-Instruct.jinja`` (Kimi-K2-Instruct-0905).
- ``k2-thinking``: ``Kimi-K2-Thinking.jinja``.
- ``k2-original``: ``moonshotai-Kimi-K2.jinja``, the first K2 template.
- ``k3``: ``Kimi-K3.jinja``, with its defaults (``thinking`` true, ``thinking_effort``
  ``"max"``); ``k3-no-thinking``: the same with ``thinking`` false.  The options
  ``thinking`` and ``thinking_effort`` (``"low"``, ``"high"``, ``"max"`` or None) are the
  template's variables (``pawlette.get_format("kimi:k3").with_options(thinking_effort="low")``).

Decisions:

- **Turns**: ``<|im_system|>``/``<|im_user|>``/``<|im_assistant|>`` + a role label +
  ``<|im_middle|>`` + text + ``<|im_end|>``.  K2 Instruct and Thinking write a message's
  ``name`` as its label (``<|im_user|>alice<|im_middle|>``, a tool result's
  ``<|im_system|>get_weather<|im_middle|>``); the original writes the role word and drops
  names (a recorded loss).
- **System**: each system message in place.  Without a system message first, a default
  turn: ``You are Kimi, an AI assistant created by Moonshot AI.`` (Instruct, then a
  newline its template leaves after that turn only; Thinking, without it), ``You are a
  helpful assistant`` (original).
- **Tools**: one JSON array of OpenAI's tool objects (``tojson``: ``", "``/``": "``,
  non-ASCII kept) in a ``tool_declare`` turn before everything else.
- **Calls**: after the turn's text, ``<|tool_calls_section_begin|>`` + per call
  ``<|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>ARGUMENTS<|tool_call_end|>``
  + ``<|tool_calls_section_end|>``.  The id ``functions.NAME:N`` is the call's id on the
  wire (the caller's ids are not written): N counts the calls of the whole conversation
  from 0 (Instruct, Thinking) or of the turn (original).  Reading takes the id as the
  call's id and the name out of it (``functions.`` and ``:N`` taken off when present: a
  bare ``get_weather:0`` or ``get_weather`` reads too, as vLLM's reader takes them).
  As llama.cpp, reading also takes calls a model writes without the section around them
  and without ``<|tool_call_end|>`` (the call then ends where the next one opens or the
  turn ends), also inside an unclosed ``<think>``.  A call whose arguments are cut off
  (not a whole JSON object) is no call: its text is kept as written, with a warning.
- **Results**: each tool message a turn ``<|im_system|>LABEL<|im_middle|>## Return of ID``
  + newline + text + ``<|im_end|>``.  Instruct and Thinking: ID is the written id of the
  oldest call not yet answered (the templates' queue), so results answer calls in order.
  Original: ID is the message's ``tool_call_id``, followed by a backslash and ``n`` (two
  characters: the template's ``\\n`` sits in its text, not in a string).
- **Reasoning** (Thinking): every assistant turn opens with ``<think>`` + reasoning +
  ``</think>``; turns up to and including the first assistant message without calls write
  ``<think></think>`` (their reasoning dropped, a recorded loss: the template's split,
  whose comment says "last" but whose backward loop never stops, so it ends at the first).  The generation prompt does
  not open the block: a model writes ``<think>…</think>answer``; output without ``<think>``
  is content; a call section inside an unclosed block ends the reasoning (llama.cpp's and
  SGLang's readers).  Instruct and original drop ``reasoning_content`` (a recorded loss).

Kimi K3 (``k3``, ``k3-no-thinking``; :mod:`pawlette.formats.kimi.k3`).  Every turn is a tag,
``<|open|>TAG key="value"…<|sep|>`` … ``<|close|>TAG<|sep|>`` (``<|open|>``, ``<|sep|>``,
``<|close|>`` and ``<|end_of_msg|>`` are special tokens; tags and attributes are text;
attribute values escape ``&`` and ``"`` as ``&amp;`` and ``&quot;``), shown on several lines
(the format writes no newline between turns)::

    <|open|>message role="system" type="tool-declare"<|sep|># Tools
    Here are the available tools, described in JSONSchema.

    ```json
    [{"function":{"description":"…","name":"get_weather",…},"type":"function"}]
    ```<|close|>message<|sep|><|end_of_msg|>
    <|open|>message role="system" type="thinking-effort"<|sep|>`thinking_effort` guides … `thinking_effort=max`.<|close|>message<|sep|><|end_of_msg|>
    <|open|>message role="user" name="alice"<|sep|>Weather in Zürich?<|close|>message<|sep|><|end_of_msg|>
    <|open|>message role="assistant"<|sep|><|open|>think<|sep|>One call.<|close|>think<|sep|><|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Zürich<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>
    <|open|>message role="tool" tool="get_weather" index="1"<|sep|>3 °C<|close|>message<|sep|><|end_of_msg|>
    <|open|>message role="assistant"<|sep|><|open|>think<|sep|>

Decisions (K3):

- **Tools**: one JSON array of OpenAI's tool objects in a ``tool-declare`` system turn first,
  as the template's ``json_sorted`` writes it: every object's keys in Jinja's ``dictsort``
  order (case-insensitive), no spaces after ``,`` and ``:``, non-ASCII kept.
- **Thinking effort**: with ``thinking`` and an effort, a ``thinking-effort`` system turn
  after the tools; read as layout (no message).
- **Turns**: system, user and assistant messages in place; a message's ``name`` is the
  tag's ``name`` attribute, read back.
- **Reasoning** (``thinking``): every assistant turn keeps it, ``<|open|>think<|sep|>`` +
  reasoning + ``<|close|>think<|sep|>`` (an empty block without reasoning, and for a blank
  text: a recorded loss), then ``<|open|>response<|sep|>`` + text + ``<|close|>response<|sep|>``.
  The generation prompt opens the think block, so a completion is read as
  ``reasoning<|close|>think<|sep|><|open|>response<|sep|>answer…``.  Thinking off: the
  response channel only; reasoning is dropped (a recorded loss).
- **Calls**: after the response channel, ``<|open|>tools<|sep|>`` + per call
  ``<|open|>call tool="NAME" index="N"<|sep|>`` (N from 1) + per argument
  ``<|open|>argument key="KEY" type="TYPE"<|sep|>VALUE<|close|>argument<|sep|>`` +
  ``<|close|>call<|sep|>`` + ``<|close|>tools<|sep|>``.  TYPE is the value's JSON type, a
  string written as it is, any other value as JSON (``", "``/``": "``).  Reading types each
  value by its ``type`` (without one, by the tool's schema), unescapes the attributes, takes
  the template's ``<|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>`` block as the
  whole arguments, and allows whitespace between tags.  A call that does not read (an
  unclosed tag, a value not of its type, an unknown tool) is kept as text, with a warning.
  vLLM, SGLang and llama.cpp ship no K3 reader to compare with.  The turn grammars let a
  model write each declared parameter (the required ones always) with the type attribute
  and a value its schema allows, a string as text up to the next special token; undeclared
  parameters are not offered, and a call's ``index`` is any number (reading ignores it).
  A forced call skips the reasoning (its prefix closes the think block).
- **Results**: each tool message ``<|open|>message role="tool" tool="NAME" index="K"<|sep|>``
  + text; a run of results is written in the order of the calls they answer when every id
  matches a call of the last assistant turn (a recorded loss when that reorders them), each
  named by its call; otherwise in order, named by the message's ``name``, else by the call at
  the same position (neither: refused).  K counts from 1 after each assistant turn.  Reading
  pairs results with calls by position (the name and K are not read).

Remaining differences from the K3 template:

- Image parts (the template's ``<|kimi_image_placeholder|>`` and ``image_prompts``) are
  refused: text parts only.
- A system message with a ``tools`` key (the template's dynamic tool declaration, no OpenAI
  field) is refused as an unknown key; a tool message's ``tool`` key likewise.
- Arguments are written as the object's typed tags (what Hugging Face callers pass); the
  template's JSON block for arguments given as a string is read, never written, and
  arguments that are no JSON object are refused.
- The ``tool_choice``, ``response_format`` and ``response_schema`` variables, whose system
  turns the template writes at the end when a caller passes them, are not options
  (``apply_chat_template`` passes none of them by default).

Remaining differences from the K2 templates:

- Hugging Face's ``apply_chat_template`` cannot render Instruct's or Thinking's template
  with a tool call (its immutable sandbox refuses the templates' ``list.append``); the
  format writes what the template writes in a mutable sandbox (llama.cpp's engine runs it).
- Original: string ``arguments`` are JSON-quoted again there (``tojson`` of a string);
  the format writes the arguments object (what Hugging Face callers pass).  A result
  without ``tool_call_id`` is refused (the template writes an empty id).
- Image parts (the templates' ``<|media_start|>image…`` placeholder) are refused: text
  parts only.
- Instruct writes no default system turn for an empty conversation; the format writes it.
- Reading a whole conversation (:meth:`pawlette.Format.parse_conversation`) takes the
  turns labelled with their role word only: a turn labelled with a ``name`` is not read
  back (it is reported in the warnings).  A completion, which the generation prompt opens
  with ``assistant``, is always read.
"""

# ruff: noqa: E501  (the docstring shows the wire format)

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Names,
    Switch,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)
from pawlette.declare.concept import Concept

from . import k3
from .concepts import (
    CallLabel,
    LabelledCalls,
    LabelledResults,
    ReasoningAfterFirstAnswer,
)

SYSTEM, USER, ASSISTANT = Marker("<|im_system|>"), Marker("<|im_user|>"), Marker("<|im_assistant|>")
MIDDLE, END = Marker("<|im_middle|>"), Marker("<|im_end|>")
SECTION, SECTION_END = Marker("<|tool_calls_section_begin|>"), Marker("<|tool_calls_section_end|>")
CALL, CALL_END = Marker("<|tool_call_begin|>"), Marker("<|tool_call_end|>")
ARGUMENTS = Marker("<|tool_call_argument_begin|>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
MEDIA = tuple(
    f"<|media_{part}|>" for part in ("start", "content", "pad", "end")
)  # the tokenizer's, never written here

KIMI_DEFAULT = "You are Kimi, an AI assistant created by Moonshot AI."
ORIGINAL_DEFAULT = "You are a helpful assistant"

Version = Literal["k2-instruct", "k2-thinking", "k2-original", "k3"]


@dataclass(frozen=True)
class KimiOptions:
    """``version``: which template's layout (see the module docstring).  K3 only:
    ``thinking`` and ``thinking_effort`` (``"low"``, ``"high"``, ``"max"`` or None), the
    template's variables of those names."""

    version: Version = "k2-instruct"
    thinking: bool = True
    thinking_effort: str | None = "max"


VARIANTS = {
    **{version: KimiOptions(version) for version in ("k2-instruct", "k2-thinking", "k2-original")},
    "k3": KimiOptions("k3"),
    "k3-no-thinking": KimiOptions("k3", thinking=False),
}


def _variables(options: KimiOptions) -> Mapping[str, Any]:
    if options.version == "k3":
        return {"thinking": options.thinking, "thinking_effort": options.thinking_effort}
    return {}


def layout(options: KimiOptions) -> Layout:
    version = options.version
    if version == "k3":
        frames, k3_concepts = k3.parts(options.thinking, options.thinking_effort)
        summary = "Kimi K3: <|open|>TAG attr=...<|sep|> turns, think and response channels, typed argument tags"
        if not options.thinking:
            summary = "Kimi K3 with thinking off: <|open|>TAG<|sep|> turns, typed argument tags"
        return Layout(
            name="kimi",
            summary=summary,
            frames=frames,
            concepts=tuple(k3_concepts),
            options=options,
            from_options=layout,
            variants=VARIANTS,
            extra_special=(k3.IMAGE,),
            template_variables=_variables,
            switches=(
                Switch("thinking", "thinking"),
                Switch("thinking_effort", "thinking_effort", values=("max", "high", "low", None)),
            ),
        )
    original = version == "k2-original"
    concepts: list[Concept] = [
        ToolsBlock(
            place="own_turn",
            open=fence(SYSTEM, "tool_declare", MIDDLE),
            close=fence(END),
            array=True,
        ),
        SystemPrompt(
            default=ORIGINAL_DEFAULT if original else KIMI_DEFAULT,
            default_after=fence("\n") if version == "k2-instruct" else (),
        ),
    ]
    if original:
        concepts.append(Ignored(("name", "reasoning")))
    else:
        concepts.append(Names(at=1, replaces=1))  # the name in place of the role word
    if version == "k2-thinking":
        concepts.append(
            ReasoningAfterFirstAnswer(
                open=fence(THINK),
                close=fence(THINK_END),
                absent=fence(THINK, THINK_END),
                calls_end=True,
            )
        )
    elif not original:
        concepts.append(Ignored(("reasoning",)))
    concepts += [
        LabelledCalls(
            section_open=fence(SECTION),
            section_close=fence(SECTION_END),
            open=fence(CALL),
            arguments_open=fence(ARGUMENTS),
            close=fence(CALL_END),
            label=CallLabel(
                prefix="functions.", separator=":", count="turn" if original else "conversation"
            ),
            outside_section=True,
        ),
        LabelledResults(
            id_close=fence("\\n") if original else fence("\n"),
            names=not original,
            labels="message" if original else "calls",
        ),
    ]
    summaries = {
        "k2-instruct": "Kimi K2 Instruct: <|im_…|> turns with role labels, functions.NAME:N calls",
        "k2-thinking": "Kimi K2 Thinking: K2 Instruct's layout with <think> blocks",
        "k2-original": "Kimi K2 (first template): <|im_…|> turns, functions.NAME:N calls",
    }
    return Layout(
        name="kimi",
        summary=summaries[version],
        frames={
            "system": Frame(open=fence(SYSTEM, "system", MIDDLE), end=fence(END)),
            "user": Frame(open=fence(USER, "user", MIDDLE), end=fence(END)),
            "assistant": Frame(open=fence(ASSISTANT, "assistant", MIDDLE), end=fence(END)),
            "tool": Frame(open=fence(SYSTEM, "tool", MIDDLE, "## Return of "), end=fence(END)),
        },
        concepts=tuple(concepts),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        extra_special=MEDIA,
        template_variables=_variables,
    )


FORMAT = declare(layout(KimiOptions()))
