"""A chat format declared once: :class:`Frame` per role and an ordered tuple of concepts.

>>> from pawlette.declare import Frame, Layout, Marker, fence
>>> END = Marker("<|end|>")
>>> tiny = Layout(
...     name="tiny",
...     summary="a tiny example",
...     frames={
...         role: Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\\n"))
...         for role in ("system", "user", "assistant")
...     },
... )
>>> tiny.frames["user"].open
(Marker(text='<|user|>'),)
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cache
from types import NoneType, UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from ..errors import FormatError
from ..format import derived_options
from ..option_types import (
    admits,
    article,
    describe,
    find_mismatch,
    found,
    option_annotations,
)
from .call_ids import ID_LANGUAGE, id_pieces
from .concept import Concept
from .pieces import Fence, Lit, Marker, Option, fence, pieces_in
from .switch import Switch, check_switches

ROLES = ("system", "user", "assistant", "tool")


@cache
def _checked_fields(kind: type) -> tuple[tuple[str, str, bool], ...]:
    """A concept class's fields that declaring checks, once per class: ``(name, kind,
    text_too)``, kind ``"fence"``, ``"optional"`` (a fence or None), ``"fences"`` (a tuple
    of fences), ``"marker"`` (one :class:`Marker`, not a fence), ``"text"`` (plain text, not
    a fence) or ``"pattern"`` (``id_pattern``, a regular expression); ``text_too``: a string
    is allowed too.  None when an annotation names a type its module only imports for type
    checkers: its fences are then checked where they are used."""
    if not is_dataclass(kind):
        return ()
    try:
        hints = get_type_hints(kind)
    except (NameError, TypeError):
        return ()
    checked: list[tuple[str, str, bool]] = []
    for item in fields(kind):
        hint = hints.get(item.name)
        allowed = set(get_args(hint)) if get_origin(hint) in (Union, UnionType) else set()
        if item.name == "id_pattern":
            checked.append((item.name, "pattern", False))
        elif hint == Fence:
            checked.append((item.name, "fence", False))
        elif Fence in allowed:
            kind_of = "optional" if NoneType in allowed else "fence"
            checked.append((item.name, kind_of, str in allowed))
        elif hint == tuple[Fence, ...]:
            checked.append((item.name, "fences", False))
        elif hint is Marker:
            checked.append((item.name, "marker", False))
        elif hint is str:
            checked.append((item.name, "text", True))
    return tuple(checked)


_PLAIN = (bool, int, float, str, NoneType)
_PLAIN_CONTAINERS = (tuple, frozenset, Union, UnionType)


def _plain(annotation: Any) -> bool:
    """Whether ``annotation`` is built of plain values alone (bool, int, float, str, None,
    ``Literal``, and tuples, frozensets and unions of them): what :func:`find_mismatch`
    checks exactly.  A fence, a concept or a callable is checked where it is used."""
    origin = get_origin(annotation)
    if origin is Literal:
        return True
    if origin in _PLAIN_CONTAINERS:
        return all(item is Ellipsis or item == () or _plain(item) for item in get_args(annotation))
    return annotation in _PLAIN


@cache
def _plain_fields(kind: type) -> tuple[tuple[str, Any], ...]:
    """A concept class's fields of plain values and their annotations, once per class (the
    fields :func:`_checked_fields` checks as fences, markers, text or a pattern left out)."""
    if not is_dataclass(kind):
        return ()
    special = {name for name, _, _ in _checked_fields(kind)}
    annotations = option_annotations(kind)
    return tuple(
        (item.name, annotations[item.name])
        for item in fields(kind)
        if item.name not in special and item.name in annotations and _plain(annotations[item.name])
    )


def _expected(annotation: Any) -> str:
    """A ``Literal`` field's values, listed as a choice (``'a', 'b' or 'c'``)."""
    values = [repr(value) for value in get_args(annotation)]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + f" or {values[-1]}"


def _option_names(options: object) -> list[str]:
    """The options an :class:`Option` piece may name: the fields, then the derived ones."""
    if is_dataclass(options):
        names = [item.name for item in fields(options)]
    else:
        names = sorted(name for name in vars(options) if not name.startswith("_"))
    return names + [f"{name} (derived)" for name in derived_options(options)]


UNTESTED = ("tools", "calls")
"""What ``Layout.template_untested`` may name."""

_ONE_MARKER = "one Marker, a special token, not a fence or a string ({})"


def _marker_hint(value: object) -> str:
    """How to write a marker field that holds something else: the marker it most likely
    means (a fence of one marker, or the text of one)."""
    if isinstance(value, tuple) and len(value) == 1 and isinstance(value[0], Marker):
        return f"{value[0]!r}, without fence(...)"
    if isinstance(value, str):
        return f"Marker({value!r})"
    return "Marker('<|endoftext|>'), for one"


def _job_owner(concept: Concept) -> str:
    """How an error names the concept a job wants one of: the class that declares the job
    (``Reasoning``), or, where that class is a base no format declares directly (not a
    dataclass: the calls concepts' base), the job's concept (``calls concept``)."""
    owner = next(kind for kind in type(concept).__mro__ if "job" in vars(kind))
    return owner.__name__ if is_dataclass(owner) else f"{concept.job} concept"


def _a(value: object) -> str:
    """What a wrong value is, in an error: ``a list``, ``an int``."""
    return article(type(value).__name__)


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_A_DATE = datetime.date(2000, 1, 1)
"""A date, to ask whether an option's annotation takes one."""


def _check_fence(where: str, value: object, *, text_too: bool = False) -> None:
    if not isinstance(value, tuple) or not all(
        isinstance(piece, (Marker, Lit, Option)) for piece in value
    ):
        build = (
            # (A marker is one token a user's text can never spell; text is tokenized as text.)
            f"fence(Marker({value!r})) if it is one of the tokenizer's special tokens, "
            f"fence({value!r}) if it is text"
            if isinstance(value, str)
            else "fence(...)"
        )
        raise FormatError(
            f"{where}: {value!r}; expected "
            + ("a string or " if text_too else "")
            + f"a fence, a tuple of Marker, Lit and Option pieces (build it with {build})"
        )


@dataclass(frozen=True)
class Frame:
    """How one role's turn is framed: ``open`` + body + ``end`` + ``after``.

    Fields:

    - ``open``: what opens the turn.  Empty: the turn has no opener and begins right after
      the turn before it (Mistral's assistant turn follows ``[/INST]``).
    - ``end``: what ends the turn.  For the assistant, what the model writes to end its turn
      (trainable, and the stop set).  Empty: the turn ends where the next one opens
      (DeepSeek's user turn).
    - ``after``: whitespace the renderer writes after ``end`` (a newline between turns);
      never trainable.
    - ``also_end``: other fences that end the turn when a model writes them (read and
      allowed by grammars, never written).
    - ``end_stops``: False when the assistant's ``end`` is no stop: the model goes on past
      it (GigaChat 3 writes ``<|message_sep|>`` and then its call turn), so only
      ``also_end`` and the concepts' stops join the format's stop set.  Only on the
      assistant's frame (no other role's end is a stop).
    - ``open_after``: the opener used after a turn of another role, by that role's name
      (``{"tool": ()}``: no opener after tool results, DeepSeek's assistant).  The key
      ``"start"`` is the opener of a turn that begins the conversation.
    - ``prompt_after``: for the assistant, the generation prompt by the role of the turn
      before it, where it differs from ``open_after`` (DeepSeek in thinking mode opens
      ``<think>`` in the prompt, where past turns hold an empty block).

    ``open``, ``end`` and ``after`` also take plain text (``after="\\n"``), as
    ``fence(text)``.
    """

    open: Fence = ()
    end: Fence = ()
    after: Fence = ()
    also_end: tuple[Fence, ...] = ()
    open_after: Mapping[str, Fence] = field(default_factory=dict)
    prompt_after: Mapping[str, Fence] = field(default_factory=dict)
    end_stops: bool = True

    def __post_init__(self) -> None:
        for name in ("open", "end", "after"):
            value = getattr(self, name)
            if isinstance(value, str):  # plain text: the fence of that text
                object.__setattr__(self, name, fence(value) if value else ())
        # The fields are checked by the Layout, whose errors name the format and the frame's
        # role (Layout._check_frame).

    def opener(self, previous: str | None) -> Fence:
        """The open fence after a turn of role ``previous`` (None: at the start)."""
        return self.open_after.get("start" if previous is None else previous, self.open)

    def prompt(self, previous: str | None) -> Fence:
        """The generation prompt after a turn of role ``previous``."""
        found = self.prompt_after.get("start" if previous is None else previous)
        return self.opener(previous) if found is None else found


@dataclass(frozen=True)
class Layout:
    """One chat format, declared: build a :class:`pawlette.Format` with
    :func:`pawlette.declare.declare`, which checks it.

    Fields:

    - ``name``: the format's name (letters, digits, ``.``, ``_``, ``-``).
    - ``summary``: one line for listings.
    - ``frames``: a :class:`Frame` per role, ``"user"`` and ``"assistant"`` required,
      ``"system"`` and ``"tool"`` when the format has such turns (results concepts read
      ``frames["tool"]``; a tool frame without one is refused).
    - ``concepts``: the parts of the format in order (the order in which they write within
      a hook: reasoning before calls, ...).
    - ``begin``: written once at the very start (a BOS token).
    - ``options``: a frozen dataclass of the format's options (:class:`Option` pieces and
      concepts read it); ``from_options`` builds the layout for other options when they
      change its structure; ``variants``: named option sets (``{"qwen2.5": ...}``) that
      ``get_format("chatml:qwen2.5")`` and detection know, each an instance of the options'
      class, named with letters, digits, ``.``, ``_`` and ``-``.
    - ``extra_special``: special tokens the tokenizer has that the format never writes but
      that text must never become.
    - ``notes``: what the declaration decided, for the docs.
    - ``template_variables``: the reference chat template's variables the options stand for
      (``lambda options: {"enable_thinking": options.thinking}``), so detection and the
      comparisons render the template as the options render the format.
    - ``tools_variables``: the reference template's variables that carry the request's tools,
      for a template that reads them from a variable of its own instead of ``tools``
      (``lambda options, tools: {"functions": json.dumps(tools, indent=2)}``: Firefunction
      v2's), given the options and the request's OpenAI tools (empty: none); detection
      passes them with each probe.
    - ``template_messages``: the messages as the reference template's callers shape them,
      for a template that refuses messages as pawlette's requests hold them
      (``lambda options, messages: ...``, given the options and the request's OpenAI
      messages, returning new ones: TranslateGemma's callers pass each user text as one
      content part holding the languages' codes); detection and ``pawlette verify`` render
      the template with them.
    - ``today``: the name of the date option a template reads from its clock
      (``strftime_now``); the comparison freezes the clock at that date.  The option's
      annotation must take a ``datetime.date``.
    - ``markers_in_text``: the model writes the format's markers as plain text (no special
      token in its call syntax: Functionary's ``<function=NAME>``), so output read from
      token ids is read as the text they decode to, markers by their spelling (by default
      a fence holding a special token is a marker only by that token's id, and text
      spelling one stays text; a fence spelled as text is read by its spelling either way).
    - ``switches``: the reference template's variables that switch an option at render
      time (:class:`~.switch.Switch`: Qwen3's ``enable_thinking``), which the exported chat
      template reads too; an option is switched only where the reference template reads a
      variable for it.
    - ``template_untested``: what the reference template cannot render as these options
      write it, so detection compares the candidate without it: ``"tools"`` (requests with
      tools or calls: DeepSeek R1's templates write broken call layouts the format does not
      copy, a difference its docstring records), ``"calls"`` (requests with calls or
      results: Functionary v3.2's template needs call arguments as text, and Hugging Face's
      callers pass them as objects, on which it fails).
    """

    name: str
    summary: str
    frames: Mapping[str, Frame]
    concepts: tuple[Concept, ...] = ()
    begin: Fence = ()
    options: Any = None
    from_options: Callable[[Any], Layout] | None = field(default=None, compare=False, repr=False)
    variants: Mapping[str, Any] = field(default_factory=dict)
    extra_special: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    template_variables: Callable[[Any], Mapping[str, Any]] | None = field(
        default=None, compare=False, repr=False
    )
    tools_variables: Callable[[Any, Sequence[Mapping[str, Any]]], Mapping[str, Any]] | None = field(
        default=None, compare=False, repr=False
    )
    template_messages: (
        Callable[[Any, Sequence[Mapping[str, Any]]], Sequence[Mapping[str, Any]]] | None
    ) = field(default=None, compare=False, repr=False)
    switches: tuple[Switch, ...] = ()
    today: str | None = None
    template_untested: tuple[str, ...] = ()
    markers_in_text: bool = False

    def reference_variables(self) -> dict[str, Any]:
        """The template variables of this layout's options (see ``template_variables``)."""
        variables = self.template_variables
        return {} if variables is None else dict(variables(self.options))

    def reference_messages(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` as the reference template's callers shape them (see
        ``template_messages``; without it, as they are)."""
        shape = self.template_messages
        shaped = messages if shape is None else shape(self.options, messages)
        return [dict(message) for message in shaped]

    def reference_tools_variables(self, tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The template variables that carry ``tools`` (see ``tools_variables``)."""
        variables = self.tools_variables
        return {} if variables is None else dict(variables(self.options, tools))

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise FormatError(
                f"Layout.name: {self.name!r}; expected letters, digits, '.', '_' and '-'"
            )
        if not isinstance(self.summary, str):
            raise self._error(
                "Layout.summary", repr(self.summary), "a string (one line for listings)"
            )
        if not isinstance(self.frames, Mapping):
            raise self._error("Layout.frames", _a(self.frames), "a dict of role -> Frame")
        for role, frame in self.frames.items():
            where = f"Layout.frames[{role!r}]"
            if role not in ROLES:
                raise self._error(where, "an unknown role", "one of " + ", ".join(ROLES))
            if not isinstance(frame, Frame):
                raise self._error(where, _a(frame), "a Frame")
            self._check_frame(role, frame)
            if frame.prompt_after and role != "assistant":
                raise self._error(
                    f"{where}.prompt_after",
                    "given",
                    "it only on the 'assistant' frame (the generation prompt opens its turn)",
                )
            if frame.end_stops is False and role != "assistant":
                raise self._error(
                    f"{where}.end_stops",
                    "False",
                    "it only on the 'assistant' frame (only the end of the assistant's turn, "
                    "which the model writes, is a stop; another role's end never is)",
                )
        for role in ("user", "assistant"):
            if role not in self.frames:
                raise self._error(
                    "Layout.frames",
                    f"no {role!r} frame",
                    "a Frame for 'user' and 'assistant' (and 'system', 'tool' if the format "
                    "has them)",
                )
        if not (self.options is None or is_dataclass(self.options)):
            raise self._error(
                "Layout.options",
                _a(self.options),
                "None or a frozen dataclass instance whose fields are the options",
            )
        _check_fence(f"{self.name}: Layout.begin", self.begin)
        for item in self.template_untested:
            if item not in UNTESTED:
                raise self._error(
                    "Layout.template_untested", repr(item), "one of " + ", ".join(UNTESTED)
                )
        if not isinstance(self.concepts, tuple):
            raise self._error("Layout.concepts", _a(self.concepts), "a tuple of concepts")
        claimed: dict[str, Concept] = {}
        for number, concept in enumerate(self.concepts):
            where = f"Layout.concepts[{number}]"
            if not isinstance(concept, Concept):
                raise self._error(where, _a(concept), "a Concept (pawlette.declare.Concept)")
            for role in concept.claims:
                if role in claimed:
                    raise self._error(
                        where,
                        f"{type(concept).__name__} writes {role!r} messages, as "
                        f"{type(claimed[role]).__name__} does",
                        "one concept per role",
                    )
                claimed[role] = concept
        self._check_concept_fields()
        for concept in self.concepts:
            concept.validate(self)
        self._check_one_concept_per_job()
        self._check_content_order()
        check_switches(self.name, self.switches, self.options)
        self._check_options()
        self._check_variants()
        # (last: a concept's own mistake is the one to name first)
        if "tool" in self.frames and "tool" not in claimed:
            raise self._error(
                "Layout.frames['tool']",
                "a tool frame, and no concept that writes tool messages in it",
                "a Results concept in Layout.concepts (Results(), or JoinedResults), or no "
                "'tool' frame: without one a tool message is refused, never written",
            )

    def _error(self, where: str, found: str, expected: str) -> FormatError:
        return FormatError(f"{self.name}: {where}: {found}; expected {expected}")

    def _check_frame(self, role: str, frame: Frame) -> None:
        """A frame's fields: ``open``, ``end`` and ``after`` fences (``after`` whitespace
        only), ``also_end`` a tuple of fences, ``open_after`` and ``prompt_after`` a dict of
        role (or ``"start"``) to fence."""
        frame_name = f"Layout.frames[{role!r}]"
        for name in ("open", "end", "after"):
            _check_fence(f"{self.name}: {frame_name}.{name}", getattr(frame, name), text_too=True)
        for piece in frame.after:
            if isinstance(piece, Marker) or (isinstance(piece, Lit) and piece.text.strip()):
                raise self._error(
                    f"{frame_name}.after",
                    repr(piece),
                    "whitespace only (it is layout between turns: put a marker in end)",
                )
        self._check_fences(f"{frame_name}.also_end", frame.also_end)
        if not isinstance(frame.end_stops, bool):
            raise self._error(f"{frame_name}.end_stops", repr(frame.end_stops), "True or False")
        for name in ("open_after", "prompt_after"):
            where = f"{frame_name}.{name}"
            table = getattr(frame, name)
            if not isinstance(table, Mapping):
                raise self._error(where, repr(table), "a dict of a role (or 'start') to a fence")
            for key, pieces in table.items():
                if key not in (*ROLES, "start"):
                    raise self._error(
                        where, f"the key {key!r}", f"one of {', '.join((*ROLES, 'start'))}"
                    )
                _check_fence(f"{self.name}: {where}[{key!r}]", pieces)

    def _check_fences(self, where: str, value: object) -> None:
        """A tuple of fences (``Frame.also_end``, a concept's field typed so)."""
        if not isinstance(value, tuple):
            raise self._error(where, repr(value), "a tuple of fences, each built with fence(...)")
        for number, pieces in enumerate(value):
            _check_fence(f"{self.name}: {where}[{number}]", pieces)

    def _check_one_concept_per_job(self) -> None:
        """One concept spells a turn's calls, one writes the tools block, one the reasoning:
        two would each write the same part of a message, and reading could not tell whose a
        marker is.  Another concept may still handle the same field (``handles``): the R1
        distills' ``DistillTurns`` writes or drops the calls ``NamedCalls`` spells, and
        LFM2's ``Ignored(("calls",))`` records as lost the calls its calls concept, switched
        off, does not write.  Results without a calls concept are allowed: a tool message
        needs no call before it to be written and read back.  Each concept says its job
        (:attr:`Concept.job`)."""
        first: dict[str, int] = {}
        for number, concept in enumerate(self.concepts):
            # The same concept twice writes its part twice (or, for a concept that claims
            # nothing, reads one marker in two ways): never what a template does.
            same = next((index for index in range(number) if self.concepts[index] == concept), None)
            if same is not None:
                raise self._error(
                    f"Layout.concepts[{number}]",
                    f"{type(concept).__name__} again, equal to concepts[{same}]",
                    "each concept once",
                )
            job = concept.job
            if job is None:
                continue
            if job not in first:
                first[job] = number
                continue
            earlier = self.concepts[first[job]]
            raise self._error(
                f"Layout.concepts[{number}]",
                f"{type(concept).__name__} writes the {job}, as {type(earlier).__name__} "
                f"(concepts[{first[job]}]) does",
                f"one {_job_owner(earlier)}",
            )

    def _check_concept_fields(self) -> None:
        """Every concept field typed as a fence holds one (a string there would otherwise
        fail deep inside an interpreter, naming no field), and an ``id_pattern`` compiles."""
        for concept in self.concepts:
            concept_type: type = type(concept)  # (a class, hashed by identity for the cache)
            for name, kind, text_too in _checked_fields(concept_type):
                value = getattr(concept, name)
                where = f"{type(concept).__name__}.{name}"
                if kind == "pattern":
                    if value is not None and not isinstance(value, str):
                        expected = "a regular expression (a str) or None"
                        raise self._error(where, f"{value!r}, {_a(value)}", expected)
                    if isinstance(value, str):
                        try:
                            re.compile(value)
                        except re.error as error:
                            raise self._error(
                                where, f"{value!r}, {error}", "a regular expression"
                            ) from None
                        # The parser mints ids of the pattern's shape (for a call written
                        # without one, or an id of another shape), so it must be one it can mint.
                        pieces = id_pieces(value)
                        if isinstance(pieces, str):
                            raise self._error(where, f"{value!r}, {pieces}", ID_LANGUAGE)
                elif kind == "fences":
                    self._check_fences(where, value)
                elif kind == "marker":
                    if not isinstance(value, Marker):
                        raise self._error(
                            where, repr(value), _ONE_MARKER.format(_marker_hint(value))
                        )
                elif kind == "text":
                    if not isinstance(value, str):
                        found = "a fence" if isinstance(value, tuple) else _a(value)
                        raise self._error(where, f"{value!r}, {found}", "plain text (a str)")
                elif not (
                    (value is None and kind == "optional") or (isinstance(value, str) and text_too)
                ):
                    _check_fence(f"{self.name}: {where}", value, text_too=text_too)
            # Every other field of plain values (a flag, a choice, a tuple of roles): a value
            # its annotation does not take would be read as something it is not (``5`` as
            # true) or fail deep inside an interpreter.
            for name, annotation in _plain_fields(concept_type):
                value = getattr(concept, name)
                mismatch = find_mismatch(annotation, value)
                if mismatch is not None:
                    where = f"{type(concept).__name__}.{name}{mismatch.place}"
                    if mismatch.place or get_origin(annotation) is not Literal:
                        # (the value's type is what is wrong: named, as a text field's is)
                        shown = f"{mismatch.value!r}, {_a(mismatch.value)}"
                        raise self._error(where, shown, mismatch.expected)
                    raise self._error(where, repr(value), _expected(annotation))

    def _check_content_order(self) -> None:
        """A calls concept that drops the text beside calls comes before every concept that
        writes an assistant's text: the first concept whose content hook writes a turn's text
        wins, so one before it would write the text the calls concept reports as dropped."""
        for number, concept in enumerate(self.concepts):
            if concept.job != "calls" or getattr(concept, "content", None) != "dropped":
                continue
            for earlier in self.concepts[:number]:
                if type(earlier).write_content is Concept.write_content:
                    continue
                roles = earlier.hook_roles("write_content")
                if roles is not None and "assistant" not in roles:
                    continue
                raise self._error(
                    "Layout.concepts",
                    f"{type(earlier).__name__} (concepts[{self.concepts.index(earlier)}]) "
                    f"before {type(concept).__name__} (concepts[{number}])",
                    f"{type(concept).__name__} first: it drops the text beside calls, and a "
                    "concept before it writes an assistant's text first",
                )

    def _check_options(self) -> None:
        """``today`` and every :class:`Option` piece name an option this layout has (render
        would otherwise find no value only when it writes the piece)."""
        named = [("Layout.today", self.today)] if self.today is not None else []
        # (the options and variants are values, not pieces)
        pieces = list(pieces_in((self.frames, self.concepts, self.begin), Option))
        named += [(f"Option({piece.name!r})", piece.name) for piece in pieces]
        for where, name in named:
            if not hasattr(self.options, name):
                have = (
                    "Layout.options is None"
                    if self.options is None
                    else "the options are " + (", ".join(_option_names(self.options)) or "none")
                )
                raise self._error(
                    where, f"no option {name!r} ({have})", "the name of a field of Layout.options"
                )
        if self.today is not None:
            self._check_today(self.today)
        for piece in pieces:
            value = getattr(self.options, piece.name)
            if piece.date_format is None and not isinstance(value, str):
                date = f", or a date format: Option({piece.name!r}, '%d %b %Y')"
                raise self._error(
                    f"Option({piece.name!r})",
                    f"options.{piece.name} is {value!r}",
                    "a string option" + (date if hasattr(value, "strftime") else ""),
                )

    def _check_today(self, name: str) -> None:
        """``today`` names a date option: the comparisons freeze the template's clock at its
        value, which a text option cannot give (the clock would fall back to another date)."""
        annotation = option_annotations(type(self.options)).get(name)
        value = getattr(self.options, name)
        if annotation is None:  # (an annotation that does not resolve: its value tells)
            dated = value is None or isinstance(value, datetime.date)
            declared = f"its value is {found(value)}"
        else:
            dated = admits(annotation, _A_DATE)
            declared = f"declared {describe(annotation)}"
        if not dated:
            raise self._error(
                "Layout.today",
                f"{name!r}, an option {declared}",
                "the name of a date option (annotated datetime.date: the comparisons freeze "
                "the template's clock at its date), or None when the template reads no clock",
            )

    def _check_variants(self) -> None:
        """``variants`` maps a name to the options of that variant, an instance of the
        options' own class whose fields hold what their annotations take
        (``get_format("NAME:VARIANT")`` builds the format with each of its fields)."""
        where = "Layout.variants"
        options = self.options
        kind = type(options).__name__
        if not isinstance(self.variants, Mapping):
            example = f" ({{'name': {kind}(...)}})" if options is not None else ""
            raise self._error(
                where, _a(self.variants), f"a dict of a variant's name to its options{example}"
            )
        if self.variants and options is None:
            raise self._error(
                where,
                f"{len(self.variants)} given and Layout.options is None",
                "no variants: a variant is a set of the layout's options",
            )
        annotations = option_annotations(type(options)) if self.variants else {}
        for name, value in self.variants.items():
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise self._error(
                    where,
                    f"the name {name!r}",
                    "letters, digits, '.', '_' and '-' (get_format('FORMAT:NAME') names it)",
                )
            if type(value) is not type(options):
                raise self._error(
                    f"{where}[{name!r}]",
                    f"{value!r}"[:100] + f", {_a(value)}",
                    f"an instance of {kind}, as Layout.options is (such as "
                    f"{kind}({fields(options)[0].name}=...))"
                    if fields(options)
                    else f"an instance of {kind}, as Layout.options is",
                )
            for item in fields(value):
                annotation = annotations.get(item.name)
                mismatch = None
                if annotation is not None:
                    mismatch = find_mismatch(annotation, getattr(value, item.name))
                if mismatch is not None:
                    raise self._error(
                        f"{where}[{name!r}].{item.name}{mismatch.place}",
                        found(mismatch.value),
                        mismatch.expected,
                    )

    def concept(self, kind: type[Any]) -> Any:
        """The layout's concept of ``kind`` (None: it has none).  For a concept that reads
        another's declaration (results that pair with calls), never for interpreters."""
        for concept in self.concepts:
            if isinstance(concept, kind):
                return concept
        return None
