"""Phi-3.5 mini: ``<|role|>`` turns ended by ``<|end|>``; no tools, calls or results.

The wire format (``<|...|>`` are special tokens)::

    <|system|>
    You are terse.<|end|>
    <|user|>
    Weather in Paris?<|end|>
    <|assistant|>
    Sunny, 18°C.<|end|>
    <|assistant|>

and a training render (no generation prompt) ends with the end-of-text token instead::

    <|user|>
    2+2?<|end|>
    <|assistant|>
    4<|end|>
    <|endoftext|>

Decisions (reference: ``microsoft-Phi-3.5-mini-instruct.jinja`` in llama.cpp's
``models/templates``):

- **No begin token**: the template writes none.
- **System messages** are written in place, each as a turn of its own; one with empty
  text is not written, nor its turn (the template skips it): a recorded loss.
- **The end of a conversation**: without a generation prompt the template ends the text with
  ``<|endoftext|>`` (:class:`~pawlette.declare.ConversationEnd`): never trainable, and parsing a
  rendered conversation reads it as the end.  A model may also end its turn with
  ``<|endoftext|>`` itself (Phi-3.5 stops on both): read as the turn's end.
- **Not written**, as the template ignores them (recorded losses): the request's tools, an
  assistant message's calls (its text is written), names, ``reasoning_content``, and tool
  messages (:class:`~pawlette.declare.UnwrittenResults`).
- Text is written as given (the template does not trim).
- With no call syntax, a model's turn is read as its text; a forced ``tool_choice``
  (``required`` or a named function) is refused naming ``tool_choice`` (the server answers
  400), and under ``auto`` and ``none`` the tools are dropped as above.

Remaining difference from the template: an assistant message holding only calls (no text)
is written as an empty turn, where the template fails (it adds ``None`` to a string).
"""

from __future__ import annotations

from pawlette.declare import (
    ConversationEnd,
    Frame,
    Ignored,
    Layout,
    Marker,
    SystemPrompt,
    UnwrittenResults,
    declare,
    fence,
)

END, END_OF_TEXT = Marker("<|end|>"), Marker("<|endoftext|>")


def turn(role: str) -> Frame:
    also = (fence(END_OF_TEXT),) if role == "assistant" else ()
    return Frame(
        open=fence(Marker(f"<|{role}|>"), "\n"), end=fence(END), after=fence("\n"), also_end=also
    )


LAYOUT = Layout(
    name="phi3",
    summary="Phi-3.5 mini: <|role|> turns ended by <|end|>, no tools or calls",
    frames={role: turn(role) for role in ("system", "user", "assistant")},
    concepts=(
        SystemPrompt(empty_first="absent", empty_later="dropped"),
        UnwrittenResults(),
        Ignored(("tools", "calls", "name", "reasoning")),
        ConversationEnd(END_OF_TEXT),
    ),
)

FORMAT = declare(LAYOUT)
