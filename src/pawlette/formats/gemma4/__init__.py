"""Gemma 4: ``<|turn>role`` turns, tools, calls and results in its own value syntax.

The wire format (``<...|>``/``<|...>`` are special tokens; one line here, none in the text)::

    <bos><|turn>system\\nYou are helpful.<|tool>declaration:get_weather{description:<|"|>Get
    the weather.<|"|>,parameters:{...}}<tool|><turn|>\\n<|turn>user\\nWeather in Paris?<turn|>\\n
    <|turn>model\\n<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_response>
    response:get_weather{value:<|"|>18°C<|"|>}<tool_response|>It is 18°C.<turn|>\\n
    <|turn>model\\n<|channel>thought\\n<channel|>

Decisions (reference: ``google-gemma-4-31B-it.jinja`` in llama.cpp's ``models/templates``;
the ``interleaved`` variant: ``google-gemma-4-31B-it-interleaved.jinja``):

- **Turns**: ``<|turn>ROLE\\n`` ... ``<turn|>\\n``, the assistant's role ``model``; a model
  may also end its turn with ``<eos>`` (read, never written).  System
  messages are turns of their own; the first holds the tools.  Every text is trimmed, as the
  template trims it (a recorded loss).  A user's ``name`` is not written (a recorded loss).
- **Tools**: each as ``<|tool>declaration:NAME{...}<tool|>`` after the system text
  (:mod:`.declarations`: the schema's description, enums, items, properties, required names
  and types; other schema keywords are not written, as the template writes none).
- **Calls**: ``<|tool_call>call:NAME{ARGUMENTS}<tool_call|>`` each, the arguments in the value
  syntax (:mod:`.values`); the turn's text, trimmed, after its calls (both templates write
  ``message['content']`` after the ``tool_calls`` loop), and read there as its content; the
  turn then ends with ``<|tool_response>``, the token the model
  writes to ask for the results, and the results follow it in the same turn as
  ``response:NAME{value:<|"|>TEXT<|"|>}<tool_response|>``; the model's answer follows with no
  new opener and ends with ``<turn|>``.
- **An answer right after another answer** goes on in the model's turn with no opener,
  straight after the first one's ``<turn|>\\n`` (or its calls' ``<|tool_response>``), as
  the template writes it; read back, that newline is layout.  The interleaved template opens
  a turn for it, and so does the ``interleaved`` variant.
- **Reasoning** is written, as ``<|channel>thought\\nTEXT\\n<channel|>``, only on a turn with
  calls after the last user message (the template's rule); elsewhere it is dropped (a
  recorded loss).  The generation prompt is ``<|turn>model\\n<|channel>thought\\n<channel|>``
  (thinking off, the template's default), and nothing after results (the model goes on in its
  turn).  What a model writes in a ``<|channel>thought`` block is read as reasoning.

The ``interleaved`` variant (the interleaved-thinking template): a tool message is a turn of
its own, ``<|turn>tool\\nTEXT<turn|>\\n`` (its text trimmed: a recorded loss), a turn with calls
ends with ``<turn|>`` as any other (read, ``<|tool_response>`` ends it too: the token a
Gemma 4 model writes to ask for results), the reasoning block closes without the newline
(``<|channel>thought\\nTEXT<channel|>``), the generation prompt follows results too, and the
tools' declarations order their parts as that template does (``nullable`` first; an object's
properties and an array's items after a comma that is always there).

Reading, as vLLM's, SGLang's and llama.cpp's Gemma 4 parsers read it: keys bare or quoted,
blanks after separators, ``null`` and ``None`` as null, a bare word as a string.  Only the two
call tokens delimit a call (its ``call:NAME{...}`` is read whole at the close); a call that is
not one (no ``call:``, a name outside the request's tools, members not in the value syntax,
cut off) is content, with a warning.  A result is read from ``<|tool_response>response:``
(the token and the word together), so a model's text may say ``response:``.

Differences from the template that remain, each with its reason:

- **Text beside calls, then results** (the 31B-it template only): its loop writes a turn's
  calls, then the results of the tool messages after it (``{%- elif message.get('tool_calls')
  -%}`` ... ``format_tool_response_block``), and only then ``message['content']``, followed
  by ``<turn|>\\n``; so the text lands after the results, where the model's answer goes, and
  reads back as an answer of its own.  pawlette writes it right after the calls, as the
  template does when no result follows and the interleaved template always does, so the turn
  reads back as the message it was.  A conversation whose assistant message holds text, calls
  and then results renders otherwise than the 31B-it template.
- **Values that cannot come back exactly** (the syntax has no escapes): a string holding
  ``<|"|>``, a key holding ``:`` ``,`` ``{`` ``}`` ``[`` ``]``, an object's key order (the
  template sorts keys), a number's spelling (written as Python prints it: ``1.50`` as ``1.5``),
  null (written ``None``, read back as null).  Call ids are not written: read back, calls get
  new ones, and results pair with calls by position.
- **Thinking mode** (``enable_thinking``): not an option; the template's default (off) is
  written.
- **Tools read back**: the declarations are not the JSON schemas they were written from;
  parsing a render gives no tools.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...declare import (
    Concept,
    Frame,
    Ignored,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    Trimmed,
    declare,
    fence,
)
from .concepts import CallsAwaitResults, GemmaCalls, GemmaReasoning, GemmaResults, GemmaTools

BOS, EOS = Marker("<bos>"), Marker("<eos>")
TURN, TURN_END = Marker("<|turn>"), Marker("<turn|>")
TOOL, TOOL_END = Marker("<|tool>"), Marker("<tool|>")
CALL, CALL_END = Marker("<|tool_call>"), Marker("<tool_call|>")
RESULT, RESULT_END = Marker("<|tool_response>"), Marker("<tool_response|>")
CHANNEL, CHANNEL_END = Marker("<|channel>"), Marker("<channel|>")
THINK = Marker("<|think|>")


@dataclass(frozen=True)
class Gemma4Options:
    """``interleaved``: the tools declared as the interleaved-thinking template writes them."""

    interleaved: bool = False


def _turn(role: str) -> Frame:
    return Frame(open=fence(TURN, f"{role}\n"), end=fence(TURN_END), after=fence("\n"))


EMPTY_THOUGHT = fence(CHANNEL, "thought\n", CHANNEL_END)
PROMPT = fence(TURN, "model\n", CHANNEL, "thought\n", CHANNEL_END)


def layout(options: Gemma4Options) -> Layout:
    interleaved = options.interleaved
    tools = GemmaTools(
        place="system",
        item_open=fence(TOOL),
        item_close=fence(TOOL_END),
        interleaved=interleaved,
    )
    calls = GemmaCalls(
        open=fence(CALL, "call:"),
        arguments_open=fence("{"),
        close=fence("}", CALL_END),
        text_after=True,
    )
    if interleaved:
        # Results are turns of their own, and a turn with calls ends as any other.
        assistant = Frame(
            open=fence(TURN, "model\n"),
            end=fence(TURN_END),
            after=fence("\n"),
            also_end=(fence(RESULT), fence(EOS)),
            prompt_after=dict.fromkeys(("user", "system", "assistant", "tool"), PROMPT),
        )
        tool = _turn("tool")
        ending: tuple[Concept, ...] = (Results(trim=True),)
        close = fence(CHANNEL_END)
    else:
        assistant = Frame(
            open=fence(TURN, "model\n"),
            end=fence(TURN_END),
            also_end=(fence(RESULT), fence(EOS)),
            # An answer after results, or right after another answer, goes on in the turn
            # with no opener (the template opens none after an assistant message).
            open_after={"tool": (), "assistant": ()},
            prompt_after={"user": PROMPT, "system": PROMPT, "assistant": PROMPT, "tool": ()},
        )
        tool = Frame(open=fence(RESULT), end=fence(RESULT_END), open_after={"assistant": ()})
        ending = (CallsAwaitResults(end=fence(RESULT)), GemmaResults())
        close = fence("\n", CHANNEL_END)
    return Layout(
        name="gemma4",
        summary="Gemma 4: <|turn>role turns, tools, calls and results in its value syntax",
        begin=fence(BOS),
        frames={
            "system": _turn("system"),
            "user": _turn("user"),
            "assistant": assistant,
            "tool": tool,
        },
        concepts=(
            # The tools' system turn without a system message holds no text: read back, such
            # a turn is no message.
            SystemPrompt(default="", default_when="with_tools"),
            tools,
            GemmaReasoning(open=fence(CHANNEL, "thought\n"), close=close, keep="after_last_query"),
            calls,
            *ending,
            Trimmed(roles=("system", "user", "assistant")),
            Ignored(("name",)),
        ),
        options=options,
        from_options=layout,
        variants={"interleaved": Gemma4Options(interleaved=True)},
        extra_special=("<|think|>", '<|"|>'),
    )


FORMAT = declare(layout(Gemma4Options()))
