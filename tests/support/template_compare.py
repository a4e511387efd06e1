"""A format against a real chat template: renders compared byte for byte, turns parsed back.

The template is run as transformers' ``apply_chat_template`` runs it: the messages with their
``None`` values dropped, the tokenizer's ``bos_token``/``eos_token`` and any other variables,
through ``render_jinja_template`` and its compiled template (compiled once per template text,
by transformers' own cache).  Two things are not taken from the machine:

- **the clock**: the template's ``strftime_now`` returns ``today`` (a :class:`datetime.date`,
  an option of the comparison; :data:`DEFAULT_TODAY` is Llama 3's own default date);
- **the caller**: OpenAI request dicts become what Hugging Face callers pass
  (:func:`hugging_face_messages`: call arguments parsed into objects; ids, names and
  reasoning kept).

A template that raises (its ``raise_exception``, or any error while rendering) refuses the
conversation: :class:`Rendered` holds the refusal and its message, never an exception.

:func:`compare_renders` renders each conversation both ways and counts what agrees;
:func:`own_turns` cuts each assistant turn out of the template's own text and checks that the
format parses it back into the message.  Both return reports whose ``describe()`` prints the
conversation, both sides and the first differing offset.

A family's test, for example::

    FORMAT = pawlette.get_format("chatml")
    QWEN3 = corpus_reference("Qwen-Qwen3-0.6B", empty_content=True)
    CONVERSATIONS = generate_conversations(
        40, names=False, tool_names=False, avoid=FORMAT.special_markers
    )

    def test_renders_as_the_template() -> None:
        report = compare_renders(FORMAT, QWEN3, CONVERSATIONS)
        assert report.agrees, report.describe()

    def test_the_templates_turns_parse_back() -> None:
        report = own_turns(FORMAT, QWEN3, CONVERSATIONS)
        assert report.agrees, report.describe()
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import datetime
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pawlette.errors import RequestError
from pawlette.format import Format
from pawlette.infer.own_turns import (
    Normalise,
    TurnDifference,
    TurnReport,
    always_prompt,
    canonical_message,
    first_difference,
)
from pawlette.infer.own_turns import own_turns as library_own_turns

from .conversations import Conversation

__all__ = [
    "DEFAULT_TODAY",
    "Difference",
    "Reference",
    "Refusal",
    "RenderReport",
    "Rendered",
    "TurnDifference",
    "TurnReport",
    "always_prompt",
    "canonical_message",
    "compare_renders",
    "compose",
    "corpus_reference",
    "first_difference",
    "hugging_face_messages",
    "own_turns",
    "strip_text",
    "without_reasoning",
]

DEFAULT_TODAY = datetime.date(2024, 7, 26)
"""The date a template's ``strftime_now`` gets unless told otherwise (Llama 3.1's default)."""

WINDOW = 40
"""Characters shown on each side of a first difference."""

# ------------------------------------------------------------------ Hugging Face callers


def hugging_face_messages(
    messages: Iterable[Mapping[str, Any]],
    *,
    empty_content: bool = False,
    text_arguments: bool = False,
) -> list[dict[str, Any]]:
    """OpenAI messages as Hugging Face callers pass them to ``apply_chat_template``.

    Keys whose value is ``None`` are dropped (``apply_chat_template`` drops them too); each
    call's ``arguments`` text becomes the object it spells (left as text when it is not
    JSON); everything else (``id``, ``tool_call_id``, ``name``, ``reasoning_content``,
    content parts) is kept as given.  ``empty_content``: an assistant message without content
    gets ``""`` (Qwen3's template reads ``message.content`` unconditionally).
    ``text_arguments``: arguments stay the caller's text, as callers of a template that needs
    them as text pass them (Functionary v3.2's).

    >>> call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    >>> hugging_face_messages([{"role": "assistant", "content": None, "tool_calls": [call]}])
    [{'role': 'assistant', 'tool_calls': [{'id': 'a', 'type': 'function', \
'function': {'name': 'f', 'arguments': {'x': 1}}}]}]
    """
    result = []
    for message in messages:
        copy = {key: value for key, value in message.items() if value is not None}
        if empty_content and copy.get("role") == "assistant" and "content" not in copy:
            copy["content"] = ""
        calls = copy.get("tool_calls")
        if calls:
            converted = []
            for call in calls:
                function = dict(call.get("function") or {})
                arguments = function.get("arguments")
                if isinstance(arguments, str) and not text_arguments:
                    # Text that is not JSON is passed on as the caller wrote it.
                    with contextlib.suppress(ValueError):
                        function["arguments"] = json.loads(arguments)
                converted.append({**call, "function": function})
            copy["tool_calls"] = converted
        result.append(copy)
    return result


# ------------------------------------------------------------------ the reference render


@dataclass
class _Clock:
    today: datetime.date
    read: bool = False


_CLOCK: contextvars.ContextVar[_Clock | None] = contextvars.ContextVar(
    "template_clock", default=None
)


def _frozen_strftime_now(format: str) -> str:
    clock = _CLOCK.get()
    if clock is None:  # a render that is not ours: transformers' behaviour, unchanged
        return datetime.datetime.now().strftime(format)
    clock.read = True
    return datetime.datetime.combine(clock.today, datetime.time()).strftime(format)


def _compiled(template: str) -> Any:
    """transformers' compiled template for ``template`` (its cache: compiled once), its
    ``strftime_now`` reading our clock.  Only this template's own globals change, and only
    inside :meth:`Reference.render` does the clock differ from transformers' own."""
    try:
        from transformers.utils.chat_template_utils import _compile_jinja_template
    except ImportError as error:  # pragma: no cover - the test extra has transformers
        raise RuntimeError(
            f"transformers' compiled chat templates are not importable ({error}); expected"
            " transformers.utils.chat_template_utils._compile_jinja_template (the test extra)"
        ) from error
    compiled = _compile_jinja_template(template)
    if compiled.globals.get("strftime_now") is not _frozen_strftime_now:
        compiled.globals["strftime_now"] = _frozen_strftime_now
    return compiled


@dataclass(frozen=True)
class Rendered:
    """A reference render: its ``text``, or the ``refusal`` message when the template raised.
    ``read_clock``: the template called ``strftime_now``."""

    text: str | None
    refusal: str | None = None
    read_clock: bool = False


@dataclass(frozen=True)
class Reference:
    """A chat template and what ``apply_chat_template`` would give it besides the messages.

    ``bos_token``/``eos_token``: the tokenizer's (``None``: not passed).  ``variables``: other
    template variables (``enable_thinking``, ``date_string``, ``reasoning_effort``...).
    ``today``: what ``strftime_now`` reads.  ``empty_content``: see
    :func:`hugging_face_messages`.  ``caller_variables``: variables the template's callers
    pass from the request's tools and the day (Firefunction v2's ``functions`` and
    ``datetime``: :data:`tests.support.template_corpus.CALLER_VARIABLES`).
    ``caller_messages``: the messages as the template's callers shape them, from the
    Hugging Face messages and ``variables`` (TranslateGemma's user content part with its
    languages: :data:`tests.support.template_corpus.CALLER_MESSAGES`).
    """

    template: str
    name: str = "template"
    bos_token: str | None = None
    eos_token: str | None = None
    variables: Mapping[str, Any] = field(default_factory=dict)
    today: datetime.date = DEFAULT_TODAY
    empty_content: bool = False
    caller_variables: (
        Callable[[Sequence[Mapping[str, Any]] | None, datetime.date], Mapping[str, Any]] | None
    ) = None
    text_arguments: bool = False
    caller_messages: (
        Callable[[list[dict[str, Any]], Mapping[str, Any]], list[dict[str, Any]]] | None
    ) = None

    def template_variables(self) -> dict[str, Any]:
        found = {"bos_token": self.bos_token, "eos_token": self.eos_token}
        return {
            **{name: value for name, value in found.items() if value is not None},
            **self.variables,
        }

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        add_generation_prompt: bool,
    ) -> Rendered:
        """Render OpenAI ``messages`` (and ``tools``) as ``apply_chat_template`` would."""
        import jinja2
        from transformers.utils.chat_template_utils import render_jinja_template

        _compiled(self.template)
        variables = self.template_variables()
        if self.caller_variables is not None:
            variables = {**self.caller_variables(tools, self.today), **variables}
        # A caller variable named ``tools`` is the tools as the template's callers pass them
        # (Command R+'s: a list, empty without tools).
        listed = variables.pop("tools", [dict(tool) for tool in tools] if tools else None)
        clock = _Clock(self.today)
        token = _CLOCK.set(clock)
        given = hugging_face_messages(
            messages, empty_content=self.empty_content, text_arguments=self.text_arguments
        )
        if self.caller_messages is not None:
            given = self.caller_messages(given, self.variables)
        try:
            rendered, _ = render_jinja_template(
                [given],
                tools=listed,
                chat_template=self.template,
                add_generation_prompt=add_generation_prompt,
                **variables,
            )
        except jinja2.TemplateError as error:
            # raise_exception raises TemplateError itself; its subclasses are Jinja's own.
            kind = "" if type(error) is jinja2.TemplateError else f"{type(error).__name__}: "
            return Rendered(None, f"{kind}{error}", clock.read)
        except Exception as error:  # the template failed on this input: it cannot render it
            return Rendered(None, f"{type(error).__name__}: {error}", clock.read)
        finally:
            _CLOCK.reset(token)
        return Rendered(str(rendered[0]), None, clock.read)

    def render_request(
        self, request: Mapping[str, Any], *, add_generation_prompt: bool
    ) -> Rendered:
        return self.render(
            request["messages"], request.get("tools"), add_generation_prompt=add_generation_prompt
        )


def corpus_reference(name: str, **settings: Any) -> Reference:
    """The corpus template ``name`` (a file stem) with its model's bos/eos tokens (as the
    corpus table gives them; ``None`` where unknown) and other ``settings`` of
    :class:`Reference` (``variables``, ``today``, ``empty_content``, or the tokens)."""
    from .template_corpus import corpus_template

    template = corpus_template(name)
    values: dict[str, Any] = {
        "bos_token": template.bos_token,
        "eos_token": template.eos_token,
        "caller_variables": template.caller_variables,
        "text_arguments": template.text_arguments,
        "caller_messages": template.caller_messages,
        **settings,
    }
    return Reference(template.text, template.name, **values)


def as_reference(
    template: str | Reference,
    *,
    bos: str | None,
    eos: str | None,
    variables: Mapping[str, Any] | None,
    today: datetime.date,
    empty_content: bool,
) -> Reference:
    """``template`` as a :class:`Reference` (a Reference given is used as it is: its own
    settings, and the keyword arguments must keep their defaults)."""
    if isinstance(template, Reference):
        given = (bos, eos, variables, empty_content, today != DEFAULT_TODAY)
        if any(value not in (None, False) for value in given):
            raise TypeError("a Reference carries its own bos/eos/variables/today/empty_content")
        return template
    return Reference(
        template,
        bos_token=bos,
        eos_token=eos,
        variables=dict(variables or {}),
        today=today,
        empty_content=empty_content,
    )


# ------------------------------------------------------------------ differences


def _window(text: str, offset: int) -> str:
    return text[max(0, offset - WINDOW) : offset + WINDOW]


def _conversations(items: Iterable[Conversation | Mapping[str, Any]]) -> list[Conversation]:
    result = []
    for number, item in enumerate(items):
        if isinstance(item, Conversation):
            result.append(item)
        else:
            result.append(Conversation(dict(item), frozenset(), f"given #{number}"))
    return result


@dataclass(frozen=True)
class Difference:
    """A conversation both sides rendered, differently."""

    conversation: Conversation
    add_generation_prompt: bool
    expected: str
    """The template's render."""
    found: str
    """The format's render."""

    @property
    def offset(self) -> int:
        return first_difference(self.expected, self.found)

    @property
    def expected_window(self) -> str:
        return _window(self.expected, self.offset)

    @property
    def found_window(self) -> str:
        return _window(self.found, self.offset)

    def describe(self) -> str:
        offset = self.offset
        return (
            f"{self.conversation.describe()}\n"
            f"add_generation_prompt={self.add_generation_prompt}; first difference at offset"
            f" {offset}:\n  template: {self.expected_window!r}\n  format:   {self.found_window!r}\n"
            f"--- template render ---\n{self.expected}\n--- format render ---\n{self.found}\n"
        )


@dataclass(frozen=True)
class Refusal:
    """A conversation one side refused: ``reference`` (the template's message, or None: it
    rendered) and ``pawlette`` (the format's ``RequestError`` message, or None)."""

    conversation: Conversation
    add_generation_prompt: bool
    reference: str | None
    pawlette: str | None
    path: str | None = None
    """The JSON path the format's ``RequestError`` named."""

    def describe(self) -> str:
        return (
            f"{self.conversation.describe()}\nadd_generation_prompt={self.add_generation_prompt}:"
            f" template {'refused: ' + self.reference if self.reference else 'rendered'};"
            f" format {'refused: ' + self.pawlette if self.pawlette else 'rendered'}\n"
        )


def _kinds_of(items: Iterable[Difference | Refusal]) -> Counter[str]:
    return Counter(kind for item in items for kind in item.conversation.kinds)


@dataclass(frozen=True)
class RenderReport:
    """What :func:`compare_renders` found.  ``compared`` counts renders (a conversation ending
    on a user or tool message is rendered twice: with and without the generation prompt)."""

    template: str
    format: str
    compared: int
    identical: int
    reference_refused: tuple[Refusal, ...]
    """The template refused (``pawlette`` says whether the format refused too)."""
    pawlette_refused: tuple[Refusal, ...]
    """Only the format refused (a ``RequestError``)."""
    pawlette_failed: tuple[Refusal, ...]
    """The format raised something other than a ``RequestError``."""
    differing: tuple[Difference, ...]
    read_clock: bool

    @property
    def both_refused(self) -> int:
        return sum(1 for refusal in self.reference_refused if refusal.pawlette is not None)

    @property
    def agrees(self) -> bool:
        """Every render identical, and every refusal the template's and the format's both."""
        return (
            not self.differing
            and not self.pawlette_refused
            and not self.pawlette_failed
            and self.both_refused == len(self.reference_refused)
        )

    def differing_kinds(self) -> Counter[str]:
        """How many differing renders hold each kind."""
        return _kinds_of(self.differing)

    def summary(self) -> str:
        parts = [f"{self.template} vs {self.format}: {self.identical}/{self.compared} identical"]
        if self.differing:
            kinds = ", ".join(
                f"{kind} {count}" for kind, count in self.differing_kinds().most_common(6)
            )
            parts.append(f"{len(self.differing)} differing ({kinds})")
        if self.reference_refused:
            parts.append(
                f"template refused {len(self.reference_refused)} (format too: {self.both_refused})"
            )
        if self.pawlette_refused:
            parts.append(f"only the format refused {len(self.pawlette_refused)}")
        if self.pawlette_failed:
            parts.append(f"the format failed on {len(self.pawlette_failed)}")
        return "; ".join(parts)

    def describe(self, limit: int = 2) -> str:
        """The summary, then the first ``limit`` cases of each kind of disagreement."""
        lines = [self.summary()]
        for title, cases in (
            ("differing", self.differing),
            ("only the format refused", self.pawlette_refused),
            ("the format failed", self.pawlette_failed),
            (
                "the template refused, the format rendered",
                tuple(refusal for refusal in self.reference_refused if refusal.pawlette is None),
            ),
        ):
            for case in cases[:limit]:
                lines.append(f"=== {title} ===\n{case.describe()}")
        return "\n".join(lines)


def _prompts(conversation: Conversation) -> tuple[bool, ...]:
    """Render with the generation prompt only where the conversation awaits the model."""
    if conversation.ends_with == "assistant":
        return (False,)
    return (True, False)


def _render_format(
    fmt: Format, request: Mapping[str, Any], prompt: bool
) -> tuple[str | None, RequestError | None, Exception | None]:
    try:
        return fmt.render(request, add_generation_prompt=prompt).text, None, None
    except RequestError as error:
        return None, error, None
    except Exception as error:  # a bug of the format: reported, never hidden
        return None, None, error


def compare_renders(
    fmt: Format,
    template: str | Reference,
    conversations: Iterable[Conversation | Mapping[str, Any]],
    *,
    bos: str | None = None,
    eos: str | None = None,
    variables: Mapping[str, Any] | None = None,
    today: datetime.date = DEFAULT_TODAY,
    empty_content: bool = False,
    adjust: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    name: str | None = None,
) -> RenderReport:
    """Render every conversation with the template and with ``fmt``, and compare.

    A conversation ending on a user or tool message is rendered with and without the
    generation prompt; one ending on an assistant message without.  ``adjust`` rewrites the
    request the format renders (a documented difference, e.g. Llama 3's quoted results).
    """
    reference = as_reference(
        template, bos=bos, eos=eos, variables=variables, today=today, empty_content=empty_content
    )
    compared = identical = 0
    reference_refused: list[Refusal] = []
    pawlette_refused: list[Refusal] = []
    pawlette_failed: list[Refusal] = []
    differing: list[Difference] = []
    read_clock = False
    for conversation in _conversations(conversations):
        request = conversation.request
        ours_request = adjust(request) if adjust is not None else request
        for prompt in _prompts(conversation):
            compared += 1
            expected = reference.render_request(request, add_generation_prompt=prompt)
            read_clock = read_clock or expected.read_clock
            text, refused, failed = _render_format(fmt, ours_request, prompt)
            if failed is not None:
                message = f"{type(failed).__name__}: {failed}"
                pawlette_failed.append(Refusal(conversation, prompt, expected.refusal, message))
            elif expected.text is None:
                reference_refused.append(
                    Refusal(
                        conversation,
                        prompt,
                        expected.refusal,
                        str(refused) if refused is not None else None,
                        refused.path if refused is not None else None,
                    )
                )
            elif refused is not None:
                pawlette_refused.append(
                    Refusal(conversation, prompt, None, str(refused), refused.path)
                )
            elif text == expected.text:
                identical += 1
            else:
                assert text is not None
                differing.append(Difference(conversation, prompt, expected.text, text))
    return RenderReport(
        template=name or reference.name,
        format=fmt.name,
        compared=compared,
        identical=identical,
        reference_refused=tuple(reference_refused),
        pawlette_refused=tuple(pawlette_refused),
        pawlette_failed=tuple(pawlette_failed),
        differing=tuple(differing),
        read_clock=read_clock,
    )


# ------------------------------------------------------------------ own turns


def strip_text(message: dict[str, Any]) -> dict[str, Any]:
    """A normaliser: content and reasoning without edge whitespace (templates that trim)."""
    result = dict(message)
    for key in ("content", "reasoning_content"):
        if isinstance(result.get(key), str):
            result[key] = result[key].strip()
    return result


def without_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    """A normaliser: no reasoning (templates that never write it)."""
    return {key: value for key, value in message.items() if key != "reasoning_content"}


def compose(*normalisers: Normalise) -> Normalise:
    """The normalisers applied in order."""

    def normalise(message: dict[str, Any]) -> dict[str, Any]:
        for normaliser in normalisers:
            message = normaliser(message)
        return message

    return normalise


def own_turns(
    fmt: Format,
    template: str | Reference,
    conversations: Iterable[Conversation | Mapping[str, Any]],
    *,
    bos: str | None = None,
    eos: str | None = None,
    variables: Mapping[str, Any] | None = None,
    today: datetime.date = DEFAULT_TODAY,
    empty_content: bool = False,
    normalise: Normalise | None = None,
    compare_ids: bool | None = None,
    name: str | None = None,
    opener: str | None = None,
    within_losses: bool = False,
    prompt_tail: str | None = None,
    stand_in: str | None = None,
    declared: bool = False,
) -> TurnReport:
    """Parse every assistant turn, as the template itself writes it, with ``fmt.parse``:
    :func:`pawlette.infer.own_turns.own_turns` on the template's renders as
    ``apply_chat_template`` makes them (see there for ``normalise``, ``compare_ids``,
    ``within_losses``, ``declared``, ``opener``, ``prompt_tail`` and ``stand_in``)."""
    reference = as_reference(
        template, bos=bos, eos=eos, variables=variables, today=today, empty_content=empty_content
    )

    def render(messages: Any, tools: Any, prompt: bool) -> Rendered:
        return reference.render(messages, tools, add_generation_prompt=prompt)

    return library_own_turns(
        fmt,
        render,
        _conversations(conversations),
        name=name or reference.name,
        normalise=normalise,
        compare_ids=compare_ids,
        within_losses=within_losses,
        declared=declared,
        opener=opener,
        prompt_tail=prompt_tail,
        stand_in=stand_in,
    )


def reference_with(reference: Reference, **changes: Any) -> Reference:
    """``reference`` with some settings changed."""
    return dataclasses.replace(reference, **changes)
