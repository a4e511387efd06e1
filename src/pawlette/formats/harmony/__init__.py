"""harmony: OpenAI's gpt-oss format (channels, recipients, a TypeScript tools namespace).

Declared on one concept of its own (:class:`HarmonyTurns`: the system and developer
messages, the assistant's channels, the results; :mod:`.reading` its parse table,
:mod:`.grammar` its turn grammar, :mod:`.typescript` the tools block) and the user's frame
(:func:`frames`).  Written as the gpt-oss template (``openai-gpt-oss-120b``) writes it, byte
for byte.  :class:`HarmonyTurns`, :class:`HarmonyOptions` and :func:`frames` are public: a
harmony variant is declared with them (see the guide, "Declare a format").

The wire format (every ``<|...|>`` is a special token of ``o200k_harmony``)::

    <|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.
    Knowledge cutoff: 2024-06
    Current date: 2025-08-05

    Reasoning: medium

    # Valid channels: analysis, commentary, final. Channel must be included for every message.
    Calls to these tools must go to the commentary channel: 'functions'.<|end|>
    <|start|>developer<|message|># Instructions

    You are terse.

    # Tools

    ## functions

    namespace functions {

    // Get the weather forecast.
    type get_weather = (_: {
    // City name
    location: string,
    days?: number,
    }) => any;

    } // namespace functions<|end|>
    <|start|>user<|message|>Weather in Zürich?<|end|>
    <|start|>assistant<|channel|>analysis<|message|>Look it up.<|end|>
    <|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>
    {"location": "Zürich"}<|call|>
    <|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>
    "{\\"temp_c\\": 3}"<|end|>
    <|start|>assistant<|channel|>final<|message|>3 °C.<|return|>

(The template writes no newline between messages, nor after ``<|message|>``: each line
above follows the one before it directly.)

Decisions, each the template's:

- **The system message** is always written and is the format's own: the model identity,
  the knowledge cutoff, the date, the reasoning effort and the valid channels.  The date is
  an option (``date``, default 2025-08-05, gpt-oss's release), never the clock: the template
  reads ``strftime_now("%Y-%m-%d")``.  ``reasoning_effort`` (``low``, ``medium``, ``high``)
  and ``model_identity`` are options too, passed to the template as its variables of the
  same names.  ``knowledge_cutoff`` (default ``2024-06``) is an option the template does
  not take: it writes ``Knowledge cutoff: 2024-06`` whatever it is given, so a render with
  another cutoff differs from the template's in that line.  Parsing drops the system
  message.
- **The developer message** holds the caller's first system (or developer) message under
  ``# Instructions`` and the tools block.  Later system messages are not written (a loss);
  an empty first system message writes nothing (a loss).  Parsing gives the
  instructions back as the system message; the tools block is not read back (a TypeScript
  type is not the JSON schema it came from: ``integer`` is written ``number``).
- **The tools block** is the template's TypeScript namespace (:mod:`.typescript`).  A tool
  without a description is written without its comment line, where the template refuses it.
- **Assistant messages**: an answer is ``<|start|>assistant<|channel|>final<|message|>``
  text ``<|end|>``; the last message of a training render (no generation prompt) ends with
  ``<|return|>`` and writes its reasoning before it as an analysis message.  Reasoning
  elsewhere is dropped (a loss).
- **Calls**: only a message's first call is written (the rest are losses),
  ``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>`` + the
  arguments as ``tojson`` writes them + ``<|call|>``.  Before it, the message's content or
  its reasoning (both at once are refused, as the template refuses them) is written as an
  analysis message, unless an answer (an assistant message without calls) comes later in
  the conversation, when it is dropped (a loss).  Parsing reads that analysis back as
  reasoning.
- **Results**: ``<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>`` +
  the result as a JSON string + ``<|end|>``, named after the last call written (a result
  with no call before it is refused, as the template refuses it).  Parsing decodes the JSON
  string and pairs results with calls in order.
- **Refused** as the template refuses: ``<|channel|>analysis<|message|>`` or
  ``<|channel|>final<|message|>`` in an assistant message's content or reasoning.
- **Names** of messages are not written (losses).
- **Training mask**: everything the model writes after the first ``<|start|>assistant`` of
  its message (its later headers included) through ``<|call|>``, ``<|end|>`` or
  ``<|return|>``.  The stop set is ``<|return|>`` and ``<|call|>``.  As in the template, a
  conversation's render is not always a prefix of its render continued: the analysis before
  a call is dropped once an answer follows, and the last answer's ``<|return|>`` becomes
  ``<|end|>``.
- **Not an option**: the template's ``builtin_tools`` (its fixed ``browser`` and ``python``
  sections in the system message); pawlette writes neither, as the template does by
  default.

Parsing what models write (see :mod:`.reading`): the recipient in the channel header
(``<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>``), calls
on the analysis channel, a commentary message without a recipient (a preamble: content),
and completions cut before their stop token.  A recipient outside ``functions`` (a built-in
tool such as ``browser.search``) is read as a call named by it when its body is a JSON
object; otherwise (``to=python`` with code, or arguments that are no JSON object) the
message as written, header and body, is content, with a warning (llama.cpp drops such
messages; pawlette drops nothing).  A stray channel header is left out with a
warning, a channel that is none of harmony's is read as ``final`` with a warning.

The ``llm-jp`` variant (``harmony:llm-jp``; reference: LLM-jp 4.1's template,
``llm-jp-llm-jp-4.1-8b-thinking`` in llama.cpp's ``models/templates``, which names its format
``llm-jp-harmony-v1``) is harmony as LLM-jp 4 is trained on it.  It differs from gpt-oss's
in these, each its template's:

- **The system message**: ``You are LLM-jp-4, a large language model trained by LLM-jp.``
  and ``Knowledge cutoff: 2025-12`` (the variant's ``knowledge_cutoff``, which the template
  reads as its variable of that name); the date is still the option ``date`` (the template
  reads ``conversation_start_date`` when given, else its clock).
- **Every call** of a message is written, each a message of its own:
  ``<|start|>assistant to=functions.NAME<|channel|>commentary <|constrain|> json<|message|>``
  + the arguments + ``<|end|>``, the last call's ``<|call|>``.
- **The analysis before calls** (the text or reasoning beside them) is written only in the
  last message of a render without a generation prompt; elsewhere it is dropped (a loss).
  Both at once are refused, as before.
- **Results** are named by their message's ``name`` when given (written, not read back: a
  loss), else by the call in the same position in the turn before, else by the last call.
- **The tools block** writes every default as JSON (gpt-oss's joins an enum's or a
  ``oneOf``'s default to the text as it is).

Against openai-harmony, the format's reference implementation (checked by the tests on
o200k_harmony token ids): the same ids for the same conversation, but two differences that
are the template's: it writes ``\\n\\n`` after the instructions even when no tools follow,
and it writes a result as a JSON string (``"{\"temp_c\": 3}"``) where the library writes
the result's text as given.  Completions read from ids give what the library's
``StreamableParser`` gives (analysis as reasoning, final and preambles as content,
recipients as calls).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ...declare import Frame, Layout, declare, fence
from .turns import CALL, CHANNEL, CONSTRAIN, END, MESSAGE, RETURN, START, HarmonyTurns

__all__ = [
    "CALL",
    "CHANNEL",
    "CONSTRAIN",
    "END",
    "FORMAT",
    "MESSAGE",
    "RETURN",
    "START",
    "HarmonyOptions",
    "HarmonyTurns",
    "frames",
    "layout",
    "template_variables",
]

DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
LLM_JP_IDENTITY = "You are LLM-jp-4, a large language model trained by LLM-jp."
DEFAULT_CUTOFF = "2024-06"
LLM_JP_CUTOFF = "2025-12"


@dataclass(frozen=True)
class HarmonyOptions:
    """The options of a harmony layout, set at run time with
    :meth:`pawlette.Format.with_options` (each default is gpt-oss's):

    - ``date``: the system message's ``Current date`` (gpt-oss's release; the templates
      read their clock instead);
    - ``reasoning_effort``: its ``Reasoning`` line (``"low"``, ``"medium"``, ``"high"``),
      the templates' variable of the same name;
    - ``model_identity``: its first line, the templates' variable of the same name;
    - ``knowledge_cutoff``: its ``Knowledge cutoff`` line.  LLM-jp 4's template reads it
      as its variable of the same name; gpt-oss's writes ``2024-06`` whatever it is given,
      so with another value a render differs from that template's in this line;
    - ``model``: whose template :func:`layout` declares, ``"gpt-oss"`` or ``"llm-jp"`` (the
      :class:`HarmonyTurns` each writes: see the module).  A layout declared with its own
      :class:`HarmonyTurns` does not read it.
    """

    date: datetime.date = datetime.date(2025, 8, 5)
    reasoning_effort: str = "medium"
    model_identity: str = DEFAULT_IDENTITY
    knowledge_cutoff: str = DEFAULT_CUTOFF
    model: Literal["gpt-oss", "llm-jp"] = "gpt-oss"


VARIANTS = {
    "llm-jp": HarmonyOptions(
        model_identity=LLM_JP_IDENTITY, knowledge_cutoff=LLM_JP_CUTOFF, model="llm-jp"
    )
}


def template_variables(options: HarmonyOptions) -> Mapping[str, Any]:
    """The template's variables for these options (its own defaults are not passed;
    gpt-oss's template has no variable for the knowledge cutoff)."""
    variables: dict[str, Any] = {}
    if options.reasoning_effort != "medium":
        variables["reasoning_effort"] = options.reasoning_effort
    if options.model_identity != DEFAULT_IDENTITY:
        variables["model_identity"] = options.model_identity
    if options.model == "llm-jp" and options.knowledge_cutoff != LLM_JP_CUTOFF:
        variables["knowledge_cutoff"] = options.knowledge_cutoff
    return variables


def turns(options: HarmonyOptions) -> HarmonyTurns:
    """The concept that writes these options' template."""
    if options.model == "llm-jp":
        return HarmonyTurns(
            every_call=True,
            constrained=True,
            analysis="last",
            results_by_position=True,
            defaults_json=True,
        )
    return HarmonyTurns()


def frames(concept: HarmonyTurns | None = None) -> dict[str, Frame]:
    """The user's frame and the generation prompt's, spelled with the markers of
    ``concept`` (by default o200k_harmony's): what a harmony layout declares beside its
    :class:`HarmonyTurns`, which writes every other role's messages."""
    markers = concept if concept is not None else HarmonyTurns()
    return {
        "user": Frame(open=fence(markers.start, "user", markers.message), end=fence(markers.end)),
        # The generation prompt; the model stops at <|return|> or at a call's <|call|>.
        "assistant": Frame(
            open=fence(markers.start, "assistant"),
            end=fence(markers.return_),
            also_end=(fence(markers.call),),
        ),
    }


def layout(options: HarmonyOptions) -> Layout:
    """The registered format's layout (``harmony``, ``harmony:llm-jp``) for these options."""
    concept = turns(options)
    return Layout(
        name="harmony",
        summary="OpenAI harmony (gpt-oss): channels, recipients, a TypeScript tools namespace",
        frames=frames(concept),
        concepts=(concept,),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_variables=template_variables,
        today="date",
    )


FORMAT = declare(layout(HarmonyOptions()))
