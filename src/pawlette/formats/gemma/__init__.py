"""Gemma 2 and Gemma 3: user and model turns between turn markers.

The wire format (``<...>`` are special tokens)::

    <bos><start_of_turn>user
    Weather in Paris?<end_of_turn>
    <start_of_turn>model
    Sunny, 18°C.<end_of_turn>
    <start_of_turn>model

Decisions (reference: ``google-gemma-2-2b-it.jinja`` in llama.cpp's ``models/templates``):

- **Roles**: user and assistant only, alternating from a user message, as the template
  checks (it counts every message: a message of any role out of turn is refused, with the
  same reason).  The assistant's turn is ``model``.  A system message is refused (the
  template raises ``System role not supported``), and so is a tool message (it breaks the
  template's alternation wherever a conversation can hold one).
- **Text is trimmed**, as the template ``| trim`` s every message (a recorded loss).
- **Not written**, as the template ignores them (recorded losses): the request's tools, an
  assistant message's calls (its text is written), names and ``reasoning_content``.
- Gemma 2 has no tool-call or reasoning syntax: a model's turn is read as its text.  A
  forced ``tool_choice`` (``required`` or a named function) is refused naming
  ``tool_choice`` (the server answers 400); under ``auto`` and ``none`` the tools are dropped
  as above.

No difference from the template remains on what it renders.

The ``3`` variant (``gemma:3``; reference: Gemma 3's instruction-tuned template, as its
models' ``tokenizer_config.json`` gives it) is Gemma 2's shape with a system prompt:

- **A system message that comes first** has no turn: its text, as given (not trimmed), and a
  blank line lead the first user turn (:class:`~pawlette.declare.SystemInTurn`), as the
  template writes it; alone, with no message after it, it is not written (a recorded loss).
  A later system message is refused: the template refuses one where a user message belongs
  and writes one where an answer belongs as a ``system`` turn, which no Gemma model is
  trained on.
- Parsing a conversation reads the system text back as the start of the first user
  message (nothing marks where it ends): the system role is a recorded loss.
- The template writes ``<start_of_image>`` for an image part; pawlette refuses images in
  this format.

The ``translate`` variant (``gemma:translate``; reference: TranslateGemma's template,
``google-translategemma-4b-it`` in llama.cpp's ``models/templates``) is Gemma 3's turns as
TranslateGemma is trained on them: every user message is a text to translate.

- **The languages are options**, ``source_lang_code`` and ``target_lang_code`` (default
  ``en`` to ``de``; ``_`` read as ``-``, as the template reads it), where the template takes
  them from each user message's one content part (``{"type": "text", "source_lang_code":
  ..., "target_lang_code": ..., "text": ...}``): pawlette's messages hold text, so one
  rendering translates between one pair of languages.  A code the template's table lacks is
  refused when the options are made (:mod:`.languages`).
- **A user turn** is the template's instruction, with the languages' names and codes,
  followed by the text, trimmed (a recorded loss when trimming changes it)::

      <start_of_turn>user
      You are a professional English (en) to German (de) translator. Your goal is ...
      Produce only the German translation, ... into German:


      Hello.<end_of_turn>

- **A past answer** opens ``<start_of_turn>model`` and a newline, then, as the template's
  own layout writes it, another newline and eight spaces before its trimmed text; the
  generation prompt (after a user message or an answer alike) stops after the first newline,
  and what the model writes after it is
  read with or without that run (:class:`~pawlette.declare.PromptRest`).
- **Refused**, as the template refuses: a system or tool message, roles out of turn, and an
  assistant message without text (calls alone).  The request's tools, calls beside text,
  names and reasoning are not written (recorded losses).  Image parts (the template's
  ``"type": "image"``) are refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pawlette.declare import (
    Alternation,
    Concept,
    Frame,
    Ignored,
    Layout,
    Marker,
    Option,
    PromptRest,
    SystemInTurn,
    Trimmed,
    declare,
    fence,
)
from pawlette.errors import FormatError

from .languages import LANGUAGES

BOS = Marker("<bos>")
START, END = Marker("<start_of_turn>"), Marker("<end_of_turn>")


def turn(word: str) -> Frame:
    return Frame(open=fence(START, f"{word}\n"), end=fence(END), after=fence("\n"))


@dataclass(frozen=True)
class GemmaOptions:
    """``version``: ``"2"`` (no system prompt), ``"3"`` (a leading system message's text
    opens the first user turn) or ``"translate"`` (TranslateGemma: every user message a text
    to translate from ``source_lang_code`` to ``target_lang_code``)."""

    version: Literal["2", "3", "translate"] = "2"
    source_lang_code: str = "en"
    target_lang_code: str = "de"

    @property
    def source_language(self) -> str:
        """The source language's name, as TranslateGemma's template writes it."""
        return _language(self.source_lang_code, "source_lang_code")

    @property
    def target_language(self) -> str:
        """The target language's name, as TranslateGemma's template writes it."""
        return _language(self.target_lang_code, "target_lang_code")


def _language(code: str, field: str) -> str:
    name = LANGUAGES.get(code.replace("_", "-")) if isinstance(code, str) else None
    if name is None:
        raise FormatError(
            f"gemma: GemmaOptions.{field}: {code!r}; expected a language code of"
            " TranslateGemma's table (en, de-DE, zh-Hant, ...: pawlette.formats.gemma.languages)"
        )
    return name


VARIANTS = {"3": GemmaOptions(version="3"), "translate": GemmaOptions(version="translate")}

SOURCE, TARGET = Option("source_language"), Option("target_language")
TRANSLATE_USER = fence(
    START,
    "user\nYou are a professional ",
    SOURCE,
    " (",
    Option("source_lang_code"),
    ") to ",
    TARGET,
    " (",
    Option("target_lang_code"),
    ") translator. Your goal is to accurately convey the meaning and nuances of the original ",
    SOURCE,
    " text while adhering to ",
    TARGET,
    " grammar, vocabulary, and cultural sensitivities.\nProduce only the ",
    TARGET,
    " translation, without any additional explanations or commentary. Please translate the"
    " following ",
    SOURCE,
    " text into ",
    TARGET,
    ":\n\n\n",
)
"""TranslateGemma's user turn opener: its instruction, with the options' languages."""
ANSWER_LAYOUT = "\n        "
"""What TranslateGemma's template writes between a past answer's opener and its text (the
newline and indentation of the template's own source)."""


def layout(options: GemmaOptions) -> Layout:
    if options.version == "translate":
        return translate_layout(options)
    concepts: list[Concept] = []
    if options.version == "3":
        concepts.append(SystemInTurn(host="next"))
    concepts += [
        Alternation(calls_count=True, system_counts=True),
        Trimmed(roles=("user", "assistant")),
        Ignored(("tools", "calls", "name", "reasoning")),
    ]
    return Layout(
        name="gemma",
        summary="Gemma 2/3: <start_of_turn>user/model turns, no tools or calls",
        begin=fence(BOS),
        frames={"user": turn("user"), "assistant": turn("model")},
        concepts=tuple(concepts),
        extra_special=("<eos>",),
        options=options,
        from_options=layout,
        variants=VARIANTS,
    )


LAYOUT = layout(GemmaOptions())
FORMAT = declare(LAYOUT)


def translate_layout(options: GemmaOptions) -> Layout:
    """TranslateGemma (see the module)."""
    options.source_language, options.target_language  # noqa: B018 - refuses unknown codes
    if "_" in options.source_lang_code + options.target_lang_code:
        # The template writes a code with "_" as "-": so do the options.
        options = dataclasses.replace(
            options,
            source_lang_code=options.source_lang_code.replace("_", "-"),
            target_lang_code=options.target_lang_code.replace("_", "-"),
        )
    model = Frame(
        open=fence(START, "model\n" + ANSWER_LAYOUT),
        end=fence(END),
        after=fence("\n"),
        # The template's prompt, after a user message or an answer alike.
        prompt_after=dict.fromkeys(("user", "assistant"), fence(START, "model\n")),
    )
    return Layout(
        name="gemma",
        summary="Gemma 2/3: <start_of_turn>user/model turns, no tools or calls",
        begin=fence(BOS),
        frames={
            "user": Frame(open=TRANSLATE_USER, end=fence(END), after=fence("\n")),
            "assistant": model,
        },
        concepts=(
            Alternation(calls_count=True, system_counts=True),
            Trimmed(roles=("user", "assistant")),
            Ignored(("tools", "calls", "name", "reasoning")),
            # Last: it copies the rows the others gave the assistant's first state.
            PromptRest(prompt=START.text + "model\n", rest=ANSWER_LAYOUT),
        ),
        extra_special=("<eos>",),
        options=options,
        from_options=layout,
        variants=VARIANTS,
        template_messages=_translation_messages,
    )


def _translation_messages(
    options: GemmaOptions, messages: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The messages as TranslateGemma's callers pass them: each user text as the one content
    part its template requires, holding the options' languages' codes."""
    shaped = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            part = {
                "type": "text",
                "source_lang_code": options.source_lang_code,
                "target_lang_code": options.target_lang_code,
                "text": content,
            }
            shaped.append({**message, "content": [part]})
        else:
            shaped.append(dict(message))
    return shaped
