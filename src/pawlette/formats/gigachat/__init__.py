"""GigaChat 3: ``ROLE<|role_sep|>`` turns ended by ``<|message_sep|>``, a developer system
turn before every conversation, the tools as TypeScript types, a call as a ``function call``
turn holding one JSON object.

The wire format (``<|role_sep|>`` and ``<|message_sep|>`` are special tokens; the roles are
text)::

    developer system<|role_sep|>
    <role_description>...<|message_sep|>

    system<|role_sep|>
    You are terse.<|message_sep|>

    function descriptions<|role_sep|>
    namespace functions {
    // Get the weather.
    type get_weather = (_: {
      city: string,
    }) => any;

    } // namespace functions

    <|message_sep|>

    user<|role_sep|>
    Weather in Paris?<|message_sep|>

    assistant<|role_sep|>
    Let me look.<|message_sep|>

    function call<|role_sep|>
    {"name": "get_weather", "arguments": {"city": "Paris"}}<|message_sep|>

    function result<|role_sep|>
    18°C<|message_sep|>

    assistant<|role_sep|>

Decisions (reference: ``GigaChat3-10B-A1.8B.jinja`` in llama.cpp's ``models/templates``):

- **The developer system turn**, the template's fixed text (roles, priorities, the default
  assistant guidelines), opens every conversation; a first system message is a ``system``
  turn after it, and later system messages are ``system`` turns where they stand, as the
  template writes them.
- **The tools** are a ``function descriptions`` turn after the system turn (after the
  developer system turn without one): their TypeScript ``namespace functions``
  (:mod:`.typescript`), then a blank line.
- **A call** is the assistant's turn (its text, empty when it has none), then a ``function
  call`` turn holding ``{"name": NAME, "arguments": ARGS}``.  The template writes only a
  turn's first call: the calls after it are not written (a recorded loss), and the
  format's grammars let the model write one call a turn.  No ids: results answer calls by
  position.
- **Results**: each tool message a ``function result`` turn, its text as given.
- Names and ``reasoning_content`` are not written (recorded losses; the template has no
  reasoning).
- **The stop** is ``</s>``, not ``<|message_sep|>``: the model writes ``<|message_sep|>``
  and goes on to its ``function call`` turn (llama.cpp's handler keeps it as a token and
  reads the call after it), so an engine stopping there would cut every call the model
  chooses to make.  A past turn ends with ``<|message_sep|>`` as the template writes it.
- **Reading** follows vLLM's ``gigachat3`` tool parser and its cases: text before the call
  is the turn's content; one call a turn; the model may end its turn with ``</s>`` in
  place of ``<|message_sep|>`` (read as the end, as vLLM's parser allows it).

Remaining differences from the template: a call name is written as a JSON string (the
template writes it between quotes unescaped); arguments given as text are written as the
JSON of their value (the template writes the caller's text as it is); content given as
parts is written as its text (the template writes the list's JSON); a conversation that is
one system message and no other, with tools, gets no tools turn (the template writes it).
The ``bos_token`` is none: the family's ``tokenizer_config.json`` could not be checked.
"""

from __future__ import annotations

from pawlette.declare import (
    Fence,
    Frame,
    Ignored,
    JsonCalls,
    Layout,
    Marker,
    Results,
    declare,
    fence,
)

from .developer import DEVELOPER_SYSTEM
from .typescript import TypeScriptTools

ROLE_SEP = Marker("<|role_sep|>")
MESSAGE_SEP = Marker("<|message_sep|>")
END_OF_TEXT = Marker("</s>")


def turn(role: str, *also_end: Fence) -> Frame:
    """A turn: the role's name, ``<|role_sep|>`` and a line break, its text,
    ``<|message_sep|>`` and a blank line.  With ``also_end`` (the assistant's): the model
    goes on past ``<|message_sep|>`` to its call turn, so only ``also_end`` stops it."""
    return Frame(
        open=fence(role, ROLE_SEP, "\n"),
        end=fence(MESSAGE_SEP),
        after=fence("\n\n"),
        also_end=also_end,
        end_stops=not also_end,
    )


LAYOUT = Layout(
    name="gigachat",
    summary="GigaChat 3: ROLE<|role_sep|> turns, TypeScript tools, a function call turn",
    begin=fence("developer system", ROLE_SEP, "\n" + DEVELOPER_SYSTEM, MESSAGE_SEP, "\n\n"),
    frames={
        "system": turn("system"),
        "user": turn("user"),
        "assistant": turn("assistant", fence(END_OF_TEXT)),
        "tool": turn("function result"),
    },
    concepts=(
        TypeScriptTools(
            place="after_system",
            open=fence("function descriptions", ROLE_SEP, "\n"),
            close=fence("\n\n", MESSAGE_SEP, "\n\n"),
        ),
        JsonCalls(
            open=fence(MESSAGE_SEP, "\n\nfunction call", ROLE_SEP, "\n"),
            parallel=False,
            first_only=True,
        ),
        Results(),
        Ignored(("name", "reasoning")),
    ),
)


FORMAT = declare(LAYOUT)
