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
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pawlette.errors import RequestError
from pawlette.format import Format

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

Normalise = Callable[[dict[str, Any]], dict[str, Any]]
"""An assistant message as the format is declared to give it back (see :func:`own_turns`)."""

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


def first_difference(expected: str, found: str) -> int:
    """The offset of the first character where the two differ (the shorter's length when one
    is a prefix of the other); -1 when they are equal."""
    if expected == found:
        return -1
    for offset, (left, right) in enumerate(zip(expected, found, strict=False)):
        if left != right:
            return offset
    return min(len(expected), len(found))


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


def canonical_message(message: Mapping[str, Any], *, ids: bool = False) -> dict[str, Any]:
    """An assistant message in the form turns are compared in: ``content`` (text parts
    joined; ``""`` and ``None`` alike: absent), ``reasoning_content`` (empty: absent), and
    ``tool_calls`` as ``{"name", "arguments"}`` with the arguments as objects (and the
    ``id`` when ``ids``)."""
    result: dict[str, Any] = {}
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    if content:
        result["content"] = content
    reasoning = message.get("reasoning_content")
    if reasoning:
        result["reasoning_content"] = reasoning
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        entry: dict[str, Any] = {"name": function.get("name"), "arguments": arguments}
        if ids:
            entry["id"] = call.get("id")
        calls.append(entry)
    if calls:
        result["tool_calls"] = calls
    return result


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


def _first_field_difference(expected: Mapping[str, Any], found: Mapping[str, Any]) -> str:
    for key in ("content", "reasoning_content", "tool_calls"):
        if expected.get(key) != found.get(key):
            return key
    return ""


@dataclass(frozen=True)
class TurnDifference:
    """An assistant turn whose own text did not come back as the message.

    ``problem`` is ``"not a prefix"`` (the render before the turn, with the generation
    prompt, does not begin the render with it: ``offset`` is where they part), ``"refused"``
    (the template refused one of the two renders), ``"parse failed"`` (the format raised) or
    ``"differs"`` (parsed, but ``field`` differs)."""

    conversation: Conversation
    index: int
    problem: str
    turn_text: str = ""
    expected: Mapping[str, Any] | None = None
    found: Mapping[str, Any] | None = None
    field: str = ""
    offset: int = -1
    before: str = ""
    after: str = ""
    message: str = ""

    def describe(self) -> str:
        head = f"{self.conversation.describe()}\nmessages[{self.index}]: {self.problem}"
        if self.problem == "not a prefix":
            return (
                f"{head} at offset {self.offset}:\n"
                f"  prompt render: {_window(self.before, self.offset)!r}\n"
                f"  turn render:   {_window(self.after, self.offset)!r}\n"
            )
        if self.problem in ("refused", "parse failed"):
            return f"{head}: {self.message}\n  turn text: {self.turn_text!r}\n"
        return (
            f"{head} in {self.field!r}\n  turn text: {self.turn_text!r}\n"
            f"  expected: {json.dumps(self.expected, ensure_ascii=False)}\n"
            f"  parsed:   {json.dumps(self.found, ensure_ascii=False)}\n"
        )


@dataclass(frozen=True)
class TurnReport:
    """What :func:`own_turns` found: ``total`` assistant turns, ``parsed_back`` of them came
    back as their message; the rest in ``problems``."""

    template: str
    format: str
    total: int
    parsed_back: int
    problems: tuple[TurnDifference, ...]
    within_losses: int = 0

    @property
    def agrees(self) -> bool:
        return self.parsed_back == self.total

    def count(self, problem: str) -> int:
        return sum(1 for item in self.problems if item.problem == problem)

    def problem_kinds(self) -> Counter[str]:
        return Counter(kind for item in self.problems for kind in item.conversation.kinds)

    def summary(self) -> str:
        parts = [
            f"{self.template} turns by {self.format}: {self.parsed_back}/{self.total} parsed back"
        ]
        for problem in ("differs", "not a prefix", "refused", "parse failed"):
            if self.count(problem):
                parts.append(f"{problem} {self.count(problem)}")
        return "; ".join(parts)

    def describe(self, limit: int = 3) -> str:
        lines = [self.summary()]
        lines.extend(f"=== {item.problem} ===\n{item.describe()}" for item in self.problems[:limit])
        return "\n".join(lines)


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
) -> TurnReport:
    """Parse every assistant turn, as the template itself writes it, with ``fmt.parse``.

    For the assistant message at ``i``: the template renders ``messages[:i]`` with the
    generation prompt and ``messages[:i + 1]`` without; the first must begin the second, and
    the rest is the turn's own text.  ``opener``: the assistant turn's opener, for a template
    whose prompt render is not a prefix of its training render (Hermes writes a newline
    after a result only when another message follows): there, both must end with the same
    text up to and including their last ``opener``, and the turn is what follows it.
    ``fmt.parse(turn_text, tools=...)`` must give back the message, compared as
    :func:`canonical_message` writes both, after ``normalise`` (the format's declared
    normalisation, applied to the expected message: e.g. :func:`strip_text`).  Call ids
    are compared when ``compare_ids`` is True; ``None``: when the turn's text holds the
    call's id (the template writes it).  ``within_losses``: a turn that differs only in what
    the format reports it loses writing the turn (``Rendering.losses``: a field trimmed or
    dropped) counts as parsed back, and is counted in ``TurnReport.within_losses``.
    ``prompt_tail``: what the generation prompt writes after the opener and the template's
    turn may not hold (Gemma 4's empty thought block, Nemotron Nano 2's open ``<think>\\n``
    before a last turn of calls): where the prompt does not begin the turn's render, the turn
    is cut after the prompt without it, and read after that shorter prompt.  ``stand_in``:
    what the template's past turns write after the opener in place of ``prompt_tail``
    (DeepSeek V3.2's ``</think>`` for the prompt's ``<think></think>``): the model writes
    after the whole prompt, so its text is the turn's after the stand-in.
    """
    reference = as_reference(
        template, bos=bos, eos=eos, variables=variables, today=today, empty_content=empty_content
    )
    total = parsed_back = lost = 0
    problems: list[TurnDifference] = []
    for conversation in _conversations(conversations):
        messages = conversation.messages
        tools = conversation.tools
        for index, message in enumerate(messages):
            if message.get("role") != "assistant" or index == 0:
                continue
            total += 1
            before = reference.render(messages[:index], tools, add_generation_prompt=True)
            after = reference.render(messages[: index + 1], tools, add_generation_prompt=False)
            if before.text is None or after.text is None:
                refusal = before.refusal if before.text is None else after.refusal
                problems.append(
                    TurnDifference(conversation, index, "refused", message=refusal or "")
                )
                continue
            prompt_text = before.text
            always = always_prompt(fmt, messages[:index], tools)
            if always is None:
                head = before.text
                if prompt_tail and head.endswith(prompt_tail) and not after.text.startswith(head):
                    head = head[: -len(prompt_tail)]
                    if stand_in is None:  # the turn follows the opener, without the tail
                        prompt_text = head
                turn_text = _turn_after(head, after.text, opener)
                if stand_in and turn_text is not None and head != before.text:
                    begun = turn_text.startswith(stand_in)
                    turn_text = turn_text[len(stand_in) :] if begun else None
            else:
                cut = _cut_always_prompt(before.text, after.text, *always)
                turn_text, prompt_text = cut if cut is not None else (None, before.text)
            if turn_text is None:
                offset = first_difference(before.text, after.text)
                problems.append(
                    TurnDifference(
                        conversation,
                        index,
                        "not a prefix",
                        offset=offset,
                        before=before.text,
                        after=after.text,
                    )
                )
                continue
            try:
                # Read knowing the prompt, as llama.cpp does (a prompt that opened a
                # reasoning block leaves the model inside it; one after results does not).
                parsed = fmt.parse(turn_text, tools=tools, prompt=prompt_text).message
            except Exception as error:  # strict=False should not raise: reported, not hidden
                problems.append(
                    TurnDifference(
                        conversation,
                        index,
                        "parse failed",
                        turn_text=turn_text,
                        message=f"{type(error).__name__}: {error}",
                    )
                )
                continue
            ids = compare_ids
            if ids is None:
                ids = bool(message.get("tool_calls")) and all(
                    str(call.get("id")) in turn_text for call in message["tool_calls"]
                )
            wanted = normalise(dict(message)) if normalise is not None else dict(message)
            expected = canonical_message(wanted, ids=ids)
            found = canonical_message(parsed, ids=ids)
            if expected == found:
                parsed_back += 1
            elif within_losses and _equal_but_lost(
                fmt, messages[: index + 1], tools, expected, found
            ):
                parsed_back += 1
                lost += 1
            else:
                problems.append(
                    TurnDifference(
                        conversation,
                        index,
                        "differs",
                        turn_text=turn_text,
                        expected=expected,
                        found=found,
                        field=_first_field_difference(expected, found),
                    )
                )
    return TurnReport(
        template=name or reference.name,
        format=fmt.name,
        total=total,
        parsed_back=parsed_back,
        problems=tuple(problems),
        within_losses=lost,
    )


_LOSS = re.compile(r"messages\[(\d+)\](?:\.(content|reasoning_content|tool_calls)\S*)?: (.*)")


def _equal_but_lost(
    fmt: Format,
    messages: list[dict[str, Any]],
    tools: Any,
    expected: Mapping[str, Any],
    found: Mapping[str, Any],
) -> bool:
    """Whether ``found`` is ``expected`` but for what the format reports it loses writing the
    last message (``Rendering.losses``): a field trimmed compares trimmed, a field "read back
    as" another is compared as that one, a field dropped is not compared, a message not
    written at all is not compared."""
    request: dict[str, Any] = {"messages": messages}
    if tools:
        request["tools"] = tools
    try:
        losses = fmt.render(request).losses
    except Exception:  # a render pawlette refuses reports no loss
        return False
    index = len(messages) - 1
    expected, found = dict(expected), dict(found)
    mine = []
    for loss in losses:
        matched = _LOSS.fullmatch(loss)
        if matched is None or int(matched.group(1)) != index:
            continue
        if matched.group(2) is None:
            return True
        mine.append((matched.group(2), matched.group(3)))
    moves = [
        (path, moved.group(1))
        for path, why in mine
        if (moved := re.search(r"read back as (\w+)", why)) is not None
    ]
    # A field another is read back as is the parse's to compare, even where the message's
    # own value of it is dropped (Nemotron Nano 2's last text is read back as reasoning).
    targets = {target for _, target in moves}
    for path, why in mine:
        if re.search(r"read back as \w+", why):
            continue  # moved once the rest is done
        if ("trimmed" in why or "removed" in why) and isinstance(expected.get(path), str):
            trimmed = expected.pop(path).strip()
            if trimmed:
                expected[path] = trimmed
            if isinstance(found.get(path), str):
                found[path] = found[path].strip()
        else:
            expected.pop(path, None)
            if path not in targets:
                found.pop(path, None)
    for path, target in moves:
        if path in expected:
            expected[target] = expected.pop(path)
    return expected == found


def always_prompt(fmt: Format, messages: Any, tools: Any) -> tuple[str, str] | None:
    """For a format that writes its generation prompt after every render (a layout with
    :class:`pawlette.declare.PromptAlways`), that prompt after ``messages`` and the
    assistant's opener it begins with; None otherwise (or when pawlette refuses them)."""
    from pawlette.declare import PromptAlways, layout_of
    from pawlette.declare.pieces import text_of

    layout = layout_of(fmt)
    if layout is None or layout.concept(PromptAlways) is None:
        return None
    request: dict[str, Any] = {"messages": list(messages)}
    if tools:
        request["tools"] = tools
    try:
        segments = fmt.render(request, add_generation_prompt=True).segments
    except Exception:  # refused: the turn is compared as any other
        return None
    prompt: list[str] = []
    for segment in reversed(segments):
        if segment.kind != "generation_prompt":
            break
        prompt.append(segment.text)
    opener = text_of(layout.frames["assistant"].open, layout.options, layout.name)
    return "".join(reversed(prompt)), opener


def _cut_always_prompt(before: str, after: str, prompt: str, opener: str) -> tuple[str, str] | None:
    """The turn's text after its opener, and the prompt it follows (the render up to that
    opener), where both renders end with the always-written ``prompt``."""
    if not prompt or not before.endswith(prompt) or not after.endswith(prompt):
        return None
    head, full = before[: -len(prompt)], after[: -len(prompt)]
    if not full.startswith(head + opener):
        return None
    return full[len(head) + len(opener) :], head + opener


def _turn_after(prompt: str, full: str, opener: str | None) -> str | None:
    """The assistant turn's text in ``full`` after ``prompt`` (None: ``prompt`` does not
    begin it, nor, with ``opener``, does the text up to the last opener of each agree)."""
    if full.startswith(prompt):
        return full[len(prompt) :]
    if not opener or not prompt.endswith(opener):
        return None
    cut = full.rfind(opener)
    if cut < 0:
        return None
    head = prompt[: -len(opener)]
    return full[cut + len(opener) :] if head.count(opener) == full[:cut].count(opener) else None


def reference_with(reference: Reference, **changes: Any) -> Reference:
    """``reference`` with some settings changed."""
    return dataclasses.replace(reference, **changes)
