"""GigaChat 3 and 3.1: ``ROLE<|role_sep|>`` turns ended by ``<|message_sep|>``, a developer
system turn before every conversation, the tools as TypeScript types, one JSON call a turn
(GigaChat 3: in a ``function call`` turn of its own; GigaChat 3.1: in the assistant's turn,
after ``<|function_call|>``).

The wire format of GigaChat 3 (``<|role_sep|>`` and ``<|message_sep|>`` are special tokens;
the roles are text)::

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

GigaChat 3.1 (``gigachat:3.1``) writes the same turns, but the call inside the assistant's
turn, after its text and the special token ``<|function_call|>``::

    assistant<|role_sep|>
    Looking.<|function_call|>{"name": "get_weather", "arguments": {"city": "Paris"}}<|message_sep|>

    function result<|role_sep|>
    18°C<|message_sep|>

Variants (reference: llama.cpp's ``models/templates``): ``gigachat`` (the default,
``GigaChat3-10B-A1.8B.jinja``) and ``gigachat:3.1`` (``GigaChat3.1-10B-A1.8B.jinja``).

Decisions:

- **The developer system turn**, the template's fixed text (roles, priorities, the default
  assistant guidelines), opens every conversation; a first system message is a ``system``
  turn after it, and later system messages are ``system`` turns where they stand, as the
  template writes them.
- **The tools** are a ``function descriptions`` turn after the system turn (after the
  developer system turn without one): their TypeScript ``namespace functions``
  (:mod:`.typescript`), then a blank line.
- **A call** is ``{"name": NAME, "arguments": ARGS}``.  GigaChat 3: the assistant's turn (its
  text, empty when it has none), then a ``function call`` turn holding the call.  GigaChat
  3.1: the assistant's text, then ``<|function_call|>`` and the call, in the same turn.  The
  templates write only a turn's first call: the calls after it are not written (a recorded
  loss), and the format's grammars let the model write one call a turn.  No ids: results
  answer calls by position.
- **Results**: each tool message a ``function result`` turn, its text as given.
- Names and ``reasoning_content`` are not written (recorded losses; the template has no
  reasoning).
- **The generation prompt**, ``assistant<|role_sep|>`` and a line break, is written as the
  templates write it: after a last message that is no answer, inside their message loop.
  After an answer, or after a conversation that is the system message alone (which the loop
  skips), none is written, asked for or not; the model then writes its turn's opener itself,
  and reading a completion takes an opener it begins with as layout.
- **The stop**, GigaChat 3: ``</s>``, not ``<|message_sep|>``: the model writes
  ``<|message_sep|>`` and goes on to its ``function call`` turn (llama.cpp's handler keeps it
  as a token and reads the call after it), so an engine stopping there would cut every call
  the model chooses to make.  A past turn ends with ``<|message_sep|>`` as the template
  writes it.  GigaChat 3.1: ``<|message_sep|>`` ends the turn, its call included, so it is
  the stop, and ``</s>`` ends the turn too.
- **Reading** follows vLLM's ``gigachat3`` tool parser and its cases (which cover both
  versions): text before the call is the turn's content; one call a turn; the model may end
  its turn with ``</s>`` in place of ``<|message_sep|>`` (read as the end, as vLLM's parser
  allows it).  Each version reads its own call opener, the one its template writes
  (vLLM's one parser takes either in either model's output): GigaChat 3's opener begins
  with the ``<|message_sep|>`` that ends a GigaChat 3.1 turn, so in 3.1 output it is text
  after the end of the turn, kept as content with a warning.

Remaining differences from the templates (both): a call name is written as a JSON string (the
template writes it between quotes unescaped); arguments given as text are written as the
JSON of their value (the template writes the caller's text as it is); content given as
parts is written as its text (the template writes the list's JSON); a conversation that is
one system message and no other, with tools, gets no tools turn (the template writes it).
The ``bos_token`` is none: the family's ``tokenizer_config.json`` could not be checked.
GigaChat 3.1's template passes every message through the turn writer that writes calls, so
it writes the first call of a system, user or tool message that has ``tool_calls``;
pawlette refuses calls on any message but the assistant's, as for every format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pawlette.declare import (
    Fence,
    Frame,
    Ignored,
    JsonCalls,
    Layout,
    Marker,
    NoPromptAfter,
    Results,
    declare,
    fence,
)

from .developer import DEVELOPER_SYSTEM
from .typescript import TypeScriptTools

ROLE_SEP = Marker("<|role_sep|>")
MESSAGE_SEP = Marker("<|message_sep|>")
END_OF_TEXT = Marker("</s>")
FUNCTION_CALL = Marker("<|function_call|>")


Version = Literal["3", "3.1"]


@dataclass(frozen=True)
class GigaChatOptions:
    """``version``: which template's call layout (``"3"``: a ``function call`` turn after
    the assistant's; ``"3.1"``: ``<|function_call|>`` inside the assistant's turn)."""

    version: Version = "3"


VARIANTS = {"3.1": GigaChatOptions(version="3.1")}


def turn(role: str, *also_end: Fence, end_stops: bool = True) -> Frame:
    """A turn: the role's name, ``<|role_sep|>`` and a line break, its text,
    ``<|message_sep|>`` and a blank line.  ``also_end`` (the assistant's): other ends the
    model may write; ``end_stops`` False: the model goes on past ``<|message_sep|>`` to its
    call turn (GigaChat 3), so only ``also_end`` stops it."""
    return Frame(
        open=fence(role, ROLE_SEP, "\n"),
        end=fence(MESSAGE_SEP),
        after=fence("\n\n"),
        also_end=also_end,
        end_stops=end_stops,
    )


def layout(options: GigaChatOptions) -> Layout:
    in_turn = options.version == "3.1"
    return Layout(
        name="gigachat",
        summary="GigaChat 3/3.1: ROLE<|role_sep|> turns, TypeScript tools, one JSON call a turn",
        begin=fence("developer system", ROLE_SEP, "\n" + DEVELOPER_SYSTEM, MESSAGE_SEP, "\n\n"),
        frames={
            "system": turn("system"),
            "user": turn("user"),
            "assistant": turn("assistant", fence(END_OF_TEXT), end_stops=in_turn),
            "tool": turn("function result"),
        },
        concepts=(
            TypeScriptTools(
                place="after_system",
                open=fence("function descriptions", ROLE_SEP, "\n"),
                close=fence("\n\n", MESSAGE_SEP, "\n\n"),
            ),
            JsonCalls(
                open=(
                    fence(FUNCTION_CALL)
                    if in_turn
                    else fence(MESSAGE_SEP, "\n\nfunction call", ROLE_SEP, "\n")
                ),
                parallel=False,
                first_only=True,
            ),
            Results(),
            Ignored(("name", "reasoning")),
            # The template's loop writes the prompt after a message that is no answer: none
            # after an answer, none after the system message alone (the loop skips it).
            NoPromptAfter(roles=("assistant",), system_alone=True),
        ),
        options=options,
        from_options=layout,
        variants=VARIANTS,
    )


FORMAT = declare(layout(GigaChatOptions()))
