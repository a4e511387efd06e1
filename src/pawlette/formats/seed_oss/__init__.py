"""ByteDance Seed-OSS: ``<seed:bos>ROLE`` turns, tools as Python function stubs, calls as
``<function=NAME>`` tags inside ``<seed:tool_call>``, reasoning in ``<seed:think>``.

The wire format (``<seed:bos>``, ``<seed:eos>``, ``<seed:think>``, ``</seed:think>``,
``<seed:tool_call>`` and ``</seed:tool_call>`` are special tokens; the rest is text)::

    <seed:bos>system
    You are terse.

    Function:
    def get_weather(city: str,days: int):
        \"\"\"
        Get the weather.

        Args:
        - city (str) [必填]: City name
        - days (int) [选填]: Days ahead

        \"\"\"
    工具调用请遵循如下格式:
    <seed:tool_call>
    ...
    </seed:tool_call>
    <seed:eos><seed:bos>user
    Weather in Paris?<seed:eos><seed:bos>assistant
    <seed:think>Look it up.</seed:think>
    Let me look.

    <seed:tool_call>
    <function=get_weather>
    <parameter=city>Paris</parameter>
    <parameter=days>3</parameter>
    </function>
    </seed:tool_call><seed:eos><seed:bos>tool
    18°C<seed:eos><seed:bos>assistant

Decisions (reference: ``ByteDance-Seed-OSS.jinja`` in llama.cpp's ``models/templates``):

- **The system turn** holds the first system message's text as given, then, with tools, the
  tools and the call format's instructions; without a system message and with tools, the
  template's ``You are Doubao...`` text stands in.  Later system messages are turns in place.
- **The tools** are Python function stubs (:mod:`.stubs`): the signature with each
  parameter's Python type, the trimmed description, ``Args:`` with ``[必填]`` (required) or
  ``[选填]`` (optional) and each parameter's description, ``Returns:`` with the properties of
  a ``returns`` object (another schema, a boolean or an object without properties, writes
  nothing).  Other schema keywords are not written (the template's loss).  Reading a
  conversation gives the tools back as far as their stubs say them (:mod:`.stub_reading`:
  names, Python types, required, descriptions; not ``enum``, ``items`` or nested schemas),
  and those tools type its calls' values.
- **Assistant text** is trimmed (a recorded loss when its ends held whitespace); user,
  system and tool texts are written as given.
- **An answer with no text** (blank once trimmed) and no calls is written as the template
  writes it, with no end: ``<seed:bos>assistant`` alone, or
  ``<seed:bos>assistant\\n<seed:think>REASONING</seed:think>`` (no newline after the block);
  the next turn's opener ends it (:class:`.concepts.UnendedAnswer`).  A model ends such a
  turn with ``<seed:eos>``, which reads the same.
- **Reasoning** is written on every assistant turn that has some, trimmed, as
  ``<seed:think>REASONING</seed:think>`` then a newline; blank reasoning writes no block (a
  recorded loss when it held whitespace).  The generation prompt opens no block: the model
  writes ``<seed:think>`` itself.  A ``<seed:cot_budget_reflect>`` the model writes is text
  (inside the block, reasoning; after it, content), as vLLM and llama.cpp read it.
- **Calls**: ``<seed:tool_call>\\n<function=NAME>\\n`` +
  ``<parameter=KEY>VALUE</parameter>\\n`` per argument + ``</function>\\n</seed:tool_call>``,
  several calls one a line, a blank line after the turn's text.  A string value is written
  as it is, any other as Python's ``str`` of it (``True``, ``None``, ``{'a': 1}``: the
  template's ``| string``; :class:`~pawlette.declare.XmlCalls` with ``values="literal"``);
  the grammar has the model write them so (an object or array as a Python literal, strings
  in it in either quote).  No ids: results answer calls by position.
- **Results**: each tool message a ``tool`` turn, its text as given; names are not written
  (a recorded loss).
- **Reading** follows vLLM's ``seed_oss`` tool and reasoning parsers and llama.cpp's
  Seed-OSS handler: the block is the reasoning (also without the newline after it, and cut
  off), text before the first call is content, each value is typed by the tool's schema
  (JSON, ``True``/``False``/``None``, or a Python literal for an object or array, as vLLM's
  ``ast.literal_eval``).  Where pawlette reads otherwise, with a warning: a call written
  inside the reasoning block is reasoning text (vLLM ignores it silently); a call not closed
  by ``</seed:tool_call>``, or with text between its parameters, stays content (vLLM reads
  what it can of it).  A string parameter's ``null`` stays the text ``null`` (vLLM reads
  ``null`` as None for every type; the schema says it is text).

Remaining differences from the template: a tool whose
``parameters`` have no ``properties`` is written with none (the template fails on it); a
``returns`` value that is no JSON schema (text, a number, an array) is refused (the
template drops it unseen); a private-use, unassigned or astral character inside an object
or array argument is written as itself where the template's ``str`` escapes it
(``\\U0002ebe1``: the text the grammar's Python literals take); the template's
``use_json_tooldef`` (the tools as one JSON list) and ``thinking_budget`` variables (a
system turn with the budget, and for 0 a prompt that closes the reasoning) are not options:
the format renders as the template does without them.
"""

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    Trimmed,
    XmlCalls,
    declare,
    fence,
)

from .concepts import BlankDroppedReasoning, StubTools, UnendedAnswer

BOS, EOS = Marker("<seed:bos>"), Marker("<seed:eos>")
THINK, THINK_END = Marker("<seed:think>"), Marker("</seed:think>")
TOOL_CALL, TOOL_CALL_END = Marker("<seed:tool_call>"), Marker("</seed:tool_call>")

# What Jinja's ``trim`` removes (Python's ``str.strip()``), as Reasoning.trim spells it.
WHITESPACE = "".join(character for character in map(chr, range(0x3001)) if character.isspace())
DEFAULT_SYSTEM = (
    "You are Doubao, a helpful AI assistant. You may call one or more functions to assist "
    "with the user query."
)
INSTRUCTIONS = (
    "\n工具调用请遵循如下格式:\n",
    TOOL_CALL,
    "\n<function=example_function_name>\n<parameter=example_parameter_1>value_1</parameter>\n"
    "<parameter=example_parameter_2>This is the value for the second parameter\nthat can span"
    "\nmultiple lines</parameter>\n</function>\n",
    TOOL_CALL_END,
    "\n",
)


@dataclass(frozen=True)
class SeedOssOptions:
    """Seed-OSS's options (none yet)."""


def turn(role: str) -> Frame:
    """A turn: ``<seed:bos>`` + the role and a newline, its text, ``<seed:eos>``."""
    return Frame(open=fence(BOS, f"{role}\n"), end=fence(EOS))


def layout(options: SeedOssOptions) -> Layout:
    return Layout(
        name="seed_oss",
        summary="ByteDance Seed-OSS: <seed:bos>role turns, <seed:tool_call> XML calls",
        frames={role: turn(role) for role in ("system", "user", "assistant", "tool")},
        concepts=(
            SystemPrompt(default=DEFAULT_SYSTEM, default_when="with_tools"),
            StubTools(
                place="system",
                open=fence("\n\nFunction:\ndef "),
                close=fence(*INSTRUCTIONS),
            ),
            Trimmed(roles=("assistant",)),
            BlankDroppedReasoning(
                open=fence(THINK),
                close=fence(THINK_END, "\n"),
                keep="all",
                trim=WHITESPACE,
                unended_close=fence(THINK_END),
            ),
            Ignored(("name",)),
            XmlCalls(
                open=fence(TOOL_CALL, "\n<function="),
                name_close=fence(">\n"),
                key_open=fence("<parameter="),
                key_close=fence(">"),
                value_close=fence("</parameter>\n"),
                close=fence("</function>\n", TOOL_CALL_END),
                separator=fence("\n"),
                text_separator=fence("\n\n"),
                values="literal",
            ),
            Results(),
            # Last: its rows end the answer with no end at every opener the table holds.
            UnendedAnswer(open=fence(BOS, "assistant")),
        ),
        options=options,
        from_options=layout,
    )


FORMAT = declare(layout(SeedOssOptions()))
