"""MeetKai's Functionary v3.2 (Llama 3 based): recipient segments, tools as TypeScript.

The wire format (``<|...|>`` are Llama 3's special tokens; ``>>>`` is plain text)::

    <|begin_of_text|><|start_header_id|>system<|end_header_id|>

    You are capable of executing available function(s) if required.
    Only execute function(s) when absolutely necessary.
    Ask for the required input to:recipient==all
    Use JSON for function arguments.
    Respond in this format:
    >>>${recipient}
    ${content}
    Available functions:
    // Supported function definitions that should be called when necessary.
    namespace functions {

    // Get the weather forecast.
    type get_weather = (_: {
    // City name.
    city: string,
    }) => any;

    } // namespace functions<|eot_id|><|start_header_id|>system<|end_header_id|>

    You are terse.<|eot_id|><|start_header_id|>user<|end_header_id|>

    Weather in Paris?<|eot_id|><|start_header_id|>assistant<|end_header_id|>

    >>>all
    Let me look.>>>get_weather
    {"city": "Paris"}<|eot_id|><|start_header_id|>tool<|end_header_id|>

    18°C<|eot_id|><|start_header_id|>assistant<|end_header_id|>

    >>>

Decisions (reference: ``meetkai-functionary-medium-v3.2.jinja`` in llama.cpp's
``models/templates``):

- **The generated system turn** is always written first and holds no caller message: the
  template's instructions and the tools' TypeScript namespace (:mod:`.typescript`: the
  template's rules byte for byte, comments, enums, nested objects and arrays included; an
  empty namespace without tools).  The caller's system messages are turns of their own, in
  place.  Reading a conversation does not give the tools back (a TypeScript type is not the
  JSON schema it was written from).  A tool of another kind than ``function`` is refused
  (the template writes a ``code_interpreter`` tool as a second system turn).
- **Segments**: the assistant writes ``>>>`` + a recipient + a newline, then the body:
  ``all`` for text to the user, a function's name for a call whose body is its JSON
  arguments.  The turn's text is one ``>>>all`` segment (none when it is empty), then each
  call, with nothing between; no ids are written (results answer calls by position).  The
  arguments are written as the JSON of their value (``json.dumps``' spacing: what the
  template writes for arguments given as such text).
- **The generation prompt** ends with ``>>>``: the model writes the recipient first, so a
  completion is read from a segment's recipient, and the first segment's ``>>>`` of a past
  turn is not trainable (it is the prompt's).  An empty turn (no text, no calls) is written
  as the template writes it, with no segment: the prompt does not begin it.
- **Reading** follows llama.cpp: ``all`` segments are text (several are joined, also between
  calls), a tool's name begins a call whose JSON object arguments run to the next ``>>>`` or
  the turn's end (whitespace around them dropped); text ending with ``>`` right before the
  next ``>>>`` keeps its ``>`` (``>>>>NAME``).  A segment that is neither (an unknown
  recipient, arguments that are no JSON object, a call cut off) stays content with a
  warning.  llama.cpp also reads ``python`` + raw code as a call with ``{"code": ...}``;
  pawlette reads it as content with a warning (the template declares no such tool, and code
  is not JSON).
- **Results** are ``tool`` turns, one per tool message, their text as given.
- Names and ``reasoning_content`` are not written (recorded losses).

The segments are plain text (``>>>`` is no special token), so the layout sets
``markers_in_text``: output read from token ids is read as the text they decode to.  Both
exported grammars accept text followed by a call (the Lark one ends the text where the
opener starts).

Remaining differences from the template: arguments given as text are written as the JSON of
their value (the template writes the caller's text as it is; the same text for
``json.dumps``-spelled arguments; Hugging Face callers pass objects, on which the template
fails); content given as parts is written as its text (the template fails on a list); an
array's ``items`` given as a boolean schema is written as an array without item type
(``name: [],``) and a tool's ``description`` given as null as none (the template fails on
both).  A schema keyword of a type the template fails on where it reads it (a description
that is no string, ``properties`` that are no object, ``examples``, ``enum`` or ``oneOf``
that are no list) is refused with its path.
"""

from __future__ import annotations

from pawlette.declare import Frame, Ignored, Layout, Marker, Results, declare, fence

from .concepts import NamespaceSystemTurn, RecipientCalls

BEGIN = Marker("<|begin_of_text|>")
HEADER, HEADER_END = Marker("<|start_header_id|>"), Marker("<|end_header_id|>")
END_OF_TURN = Marker("<|eot_id|>")
OPENER = ">>>"
INSTRUCTIONS = (
    "You are capable of executing available function(s) if required.\nOnly execute "
    "function(s) when absolutely necessary.\nAsk for the required input to:recipient==all\n"
    "Use JSON for function arguments.\nRespond in this format:\n>>>${recipient}\n${content}\n"
    "Available functions:\n"
)


def header(role: str, prompt: str = "") -> Frame:
    opened = fence(HEADER, role, HEADER_END, "\n\n")
    if not prompt:
        return Frame(open=opened, end=fence(END_OF_TURN))
    prompted = fence(HEADER, role, HEADER_END, "\n\n" + prompt)
    after = {key: prompted for key in ("start", "system", "user", "assistant", "tool")}
    return Frame(open=opened, end=fence(END_OF_TURN), prompt_after=after)


LAYOUT = Layout(
    name="functionary_v3_2",
    summary="MeetKai Functionary v3.2: Llama 3 header ids, >>>recipient segments, TypeScript tools",
    begin=fence(BEGIN),
    frames={
        "system": header("system"),
        "user": header("user"),
        "assistant": header("assistant", OPENER),
        "tool": header("tool"),
    },
    concepts=(
        NamespaceSystemTurn(
            open=fence(HEADER, "system", HEADER_END, "\n\n" + INSTRUCTIONS),
            end=fence(END_OF_TURN),
        ),
        RecipientCalls(
            open=fence(OPENER),
            arguments_open=fence("\n"),
            text_open=fence("all\n"),
            loose=False,
        ),
        Results(),
        Ignored(("name", "reasoning")),
    ),
    markers_in_text=True,  # the segments are plain text: >>> is no special token
    # Hugging Face's callers pass call arguments as objects, which the template cannot
    # join to its text: detection compares it on requests without calls.
    template_untested=("calls",),
)


FORMAT = declare(LAYOUT)
