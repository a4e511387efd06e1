"""The :class:`Format` value: a declaration's grammar and writer behind one small API."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .blocks.tool_choice import ForcedPrefixes, forced_prefix
from .engine.fold import fold, merge_assistant, pair_results
from .engine.lexer import Token, marker_pattern
from .engine.machine import (
    Grammar,
    NumberedCallIds,
    Parser,
    completion_finish_reason,
    state_after,
)
from .engine.whole import read_whole
from .engine.writer import Writer
from .errors import PawletteError, RequestError
from .openai import (
    conversation_from_openai,
    conversation_to_openai,
    message_to_openai,
    read_conversation,
    tools_from_openai,
)
from .option_types import check_options
from .types import Message, ParseWarning, Rendering, TextPart, Tool

WriteConversation = Callable[[Writer, tuple[Message, ...], tuple[Tool, ...], bool], None]
"""A declaration's renderer: write the messages (and tools), then the generation prompt."""
DERIVED = (property, cached_property)
"""What a derived option is on its options class: computed from the fields (see
:meth:`Format.with_options`)."""


def derived_options(options: Any) -> tuple[str, ...]:
    """The names of the options derived from the fields of ``options`` (the properties of its
    class, which :class:`~pawlette.declare.Option` pieces read as they read fields)."""
    found = (
        name
        for kind in reversed(type(options).__mro__)
        for name, value in vars(kind).items()
        if isinstance(value, DERIVED) and not name.startswith("_")
    )
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True, init=False)
class Completion:
    """A parsed completion: ``message`` is an OpenAI assistant message dict."""

    message: dict[str, Any]
    finish_reason: str
    warnings: tuple[ParseWarning, ...]
    core: Message

    def __init__(
        self,
        message: dict[str, Any],
        finish_reason: str,
        warnings: tuple[ParseWarning, ...],
        core: Message,
    ) -> None:
        # The fields straight into the instance's dict: the generated frozen __init__ sets
        # each through object.__setattr__, and a server makes one per completion.
        self.__dict__.update(
            message=message, finish_reason=finish_reason, warnings=warnings, core=core
        )


@dataclass(frozen=True)
class ParsedConversation:
    """A parsed rendered conversation: OpenAI ``messages`` and ``tools``.

    ``losses`` says what the text holds that reading does not give back (as
    :attr:`pawlette.Rendering.losses` says what a render dropped): a format that writes its
    tools as TypeScript types or Python stubs gives no ``tools`` back, and says so there.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    warnings: tuple[ParseWarning, ...]
    core_messages: tuple[Message, ...]
    core_tools: tuple[Tool, ...]
    losses: tuple[str, ...] = ()
    add_generation_prompt: bool = False
    """The text ends where the assistant's next turn begins, nothing of it written yet: it ends
    with a generation prompt (the assistant's opener, and what the prompt writes after it: an
    opened or an empty reasoning block), as a render with ``add_generation_prompt=True`` ends.
    That empty turn is not one of ``messages``.  Where the prompt writes nothing (Mistral's
    answer has no opener), a text that ends with a user's turn ends so too."""
    continue_final_message: bool = False
    """The text ends inside an assistant turn that holds something (a prefill after the
    generation prompt, or an answer cut short): the last of ``messages`` is that turn as far as
    it is written, and the model's output continues it.  A format whose last answer is written
    with no end (GLM, Apertus) reads its finished last answer so too: the text is the same."""

    def to_request(self) -> dict[str, Any]:
        """``{"messages": [...], "tools": [...]}`` as a chat-completions request body."""
        return conversation_to_openai(self.core_messages, self.core_tools)


@dataclass(frozen=True)
class Format:
    """A chat format: render OpenAI conversations to its text, parse its text back.

    Formats are immutable declarations; get one with :func:`pawlette.get_format`.

    - ``name``, ``summary``: what ``get_format`` finds it by, and one line on it.
    - ``stop``: the end-of-turn markers an engine must stop generation on.
    - ``special_markers``: every marker the format writes as a control token.
    - ``options``: its render options, a frozen dataclass (change them with
      :meth:`with_options`), or None.
    - ``declaration``: the :class:`pawlette.declare.Layout` it was declared from.
    - ``grammar``, ``write``: its parse machine and its renderer (what :meth:`parse` and
      :meth:`render` use; ``pawlette table -f NAME`` prints the machine).

    >>> import pawlette
    >>> pcml = pawlette.get_format("pcml")
    >>> pcml.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
    '[USR]Hi[/USR]\\n\\n[AST]'
    >>> pcml.parse("Hello!<end>").message["content"]
    'Hello!'
    """

    name: str
    summary: str
    grammar: Grammar
    write: WriteConversation
    stop: tuple[str, ...]
    """What an engine must stop generation on (the format's end-of-turn markers)."""
    special_markers: tuple[str, ...]
    """Every marker the format writes as a control token, in a stable order."""
    escape_pattern: re.Pattern[str] | None = field(default=None, compare=False)
    forced_prefixes: ForcedPrefixes | None = field(default=None, compare=False)
    """Generation-prompt suffixes that force a ``tool_choice`` (see :meth:`forced_prefix`)."""
    options: Any = None
    """The format's render options, a frozen dataclass (see :meth:`with_options`); None: none."""
    variant: Callable[[Any], Format] | None = field(default=None, compare=False, repr=False)
    """Builds the format anew from other options (set by formats that have options)."""
    encode_cuts: frozenset[str] | None = None
    """How the format's reference cuts its text into tokenizer calls.  None: text between two
    markers is encoded whole (as a chat template's text is).  A set of segment kinds: the
    reference encodes each piece with a call of its own, with the tokenizer's start-of-text
    behaviour (a SentencePiece dummy prefix each): a piece begins after every marker and
    after a segment of one of these kinds followed by one of another kind (ChatGLM3's
    ``build_chat_input`` encodes ``{metadata}\\n`` and the content apart)."""
    declaration: Any = field(default=None, compare=False, repr=False)
    """The :class:`pawlette.declare.Layout` the format was declared from (None: written by
    hand): exporters read it from the value, never look the format up by name."""

    _prompt_entries: list[tuple[str, str]] | None = field(
        default=None, init=False, compare=False, repr=False
    )
    """The assistant states a generation prompt may leave the model in (see
    :meth:`completion_start`), found once."""
    _last_read: tuple[str, str] | None = field(default=None, init=False, compare=False, repr=False)
    """The last prompt :meth:`completion_start` had to read whole, and its start (a server
    asks for one request's prompt several times)."""
    _usual_start: str | None = field(default=None, init=False, compare=False, repr=False)
    """Where the generation prompt after a user message leaves the model (see
    :meth:`start_after`), found once."""

    def __hash__(self) -> int:
        # The parse table holds dicts (unhashable): hash what equality compares that is.
        return hash((self.name, self.summary, self.stop, self.special_markers))

    @property
    def stop_markers(self) -> tuple[str, ...]:
        """The markers an engine's generation ends on: one for each stop that ends with a
        marker, in the order of :attr:`stop` (the first is the turn's own end), each once.
        See :func:`stop_markers_of`.

        >>> import pawlette
        >>> pawlette.get_format("nemotron_v2").stop
        ('\\n<SPECIAL_12>', '<SPECIAL_12>')
        >>> pawlette.get_format("nemotron_v2").stop_markers
        ('<SPECIAL_12>',)
        """
        return stop_markers_of(self.stop, self.special_markers)

    @staticmethod
    def escaping(markers: Sequence[str]) -> re.Pattern[str]:
        """The ``escape_pattern`` of a format that escapes its markers inside text."""
        return marker_pattern(markers)

    # ------------------------------------------------------------------ render

    def render(
        self,
        messages: object,
        tools: object = None,
        *,
        add_generation_prompt: bool = False,
    ) -> Rendering:
        """Render a conversation (OpenAI messages or a request dict, or core messages).

        ``add_generation_prompt`` ends the text where the model's next turn begins.
        """
        core_messages, core_tools, present = read_request(messages, tools)
        writer = Writer(self.escape_pattern)
        writer.present = present
        self.write(writer, core_messages, core_tools, add_generation_prompt)
        return writer.rendering()

    def forced_prefix(self, tool_choice: object, tools: object = None) -> str | None:
        """What to append to the generation prompt to force ``tool_choice``, or None.

        ``tool_choice`` is OpenAI's (``"none"``, ``"required"``, ``{"type": "function",
        "function": {"name": ...}}``; ``"auto"`` needs nothing); ``tools`` (optional) are the
        request's tools.  Feed the same suffix to the parser before the model's output.  See
        :mod:`pawlette.blocks.tool_choice`.

        >>> import pawlette
        >>> pawlette.get_format("breeze").forced_prefix("required")
        '<|use_tool|>'
        """
        declared = None if tools is None else coerce_conversation([], tools)[1]
        return forced_prefix(self.forced_prefixes, tool_choice, declared)

    def with_options(self, **changes: Any) -> Format:
        """This format with some render options changed (a new value; this one is unchanged).

        ``changes`` name fields of :attr:`options`, each given what its field's annotation
        takes (``bool``: True or False, not 1 nor ``"yes"``; a ``Literal``: one of its
        values; a date option: a :class:`datetime.date`): anything else is refused naming
        the option, the value and its type, and what it takes (:mod:`pawlette.option_types`).
        An option derived from others (a property of the options class, such as
        TranslateGemma's ``source_language`` from ``source_lang_code``) follows them and is
        refused here.

        >>> import datetime, pawlette
        >>> breeze = pawlette.get_format("breeze").with_options(today=datetime.date(2024, 7, 26))
        >>> breeze.options.today
        datetime.date(2024, 7, 26)
        """
        if self.options is None or self.variant is None:
            raise RequestError(
                "options", f"{', '.join(sorted(changes))} given", f"none: {self.name} has none"
            )
        names = ", ".join(option.name for option in dataclasses.fields(self.options))
        for name in sorted(changes):
            # A derived option (a property of the options class) is computed from the fields:
            # it changes with them and is never given.
            if name in derived_options(self.options):
                raise RequestError(
                    f"options.{name}",
                    "given; it is derived from the other options",
                    f"the options of {self.name} it is computed from, among: {names}",
                )
        check_options(self.name, self.options, changes)
        try:
            options = dataclasses.replace(self.options, **changes)
        except TypeError as error:
            raise RequestError("options", str(error), f"options of {self.name}: {names}") from error
        return self.variant(options)

    # ------------------------------------------------------------------ parse

    def completion_start(self, prompt: str) -> str:
        """The state a completion starts in after the prompt ``prompt``: where the prompt
        actually written leaves the model, not where the format's usual prompt does.

        - The longest row whose marker ends the prompt, if it goes to an assistant state: a
          generation prompt that opens a reasoning block leaves the model inside it, one that
          opens nothing (DeepSeek V3.1's after results) before it.  llama.cpp reads model
          output knowing the prompt the same way.  The prompt's tail is enough here.
        - Else the prompt ends in text or after a turn's end: it is read as a conversation,
          and a turn of the assistant it leaves open is continued where it stands (a prefilled
          answer, an answer the template leaves open: inside the block or after it).
        - Else (no assistant turn open: a template that writes no generation prompt after an
          answer or after the system text) the model's turn begins as one it opens itself,
          before any reasoning block (:attr:`~pawlette.engine.machine.Grammar.unopened_start`):
          its text is content unless it opens a block.
        """
        entries = self._prompt_entries
        if entries is None:
            states = self.grammar.states
            found: dict[str, str] = {}
            for (_, marker), step in self.grammar.steps.items():
                if states[step.target].role == "assistant":
                    found.setdefault(marker, step.target)
            entries = sorted(found.items(), key=lambda item: -len(item[0]))
            object.__setattr__(self, "_prompt_entries", entries)
        for marker, target in entries:
            if prompt.endswith(marker):
                return target
        last = self._last_read
        if last is not None and last[0] == prompt:
            return last[1]
        grammar = self.grammar
        try:
            state = state_after(grammar, prompt)
        except PawletteError:  # a prompt this format's reading refuses: no turn found open
            state = None
        if state is not None and state.role == "assistant":
            start = state.name
        else:
            start = grammar.unopened_start or grammar.completion_start
        object.__setattr__(self, "_last_read", (prompt, start))
        return start

    def start_after(self, prompt: str) -> str | None:
        """Where the generation prompt ``prompt`` leaves the model, if that is not where
        the format's usual prompt (after a user message) does; else None.

        DeepSeek V3.1's thinking prompt opens ``<think>`` after a user message, but after
        tool results the template opens nothing and the model answers plainly: there the
        completion starts before the block (``"assistant.head"``), not inside it; so too
        where no generation prompt is written at all (see :meth:`completion_start`).  A server
        starts its parser (``start=``) and its grammar (``prompt=`` of the grammar export)
        there, as :meth:`parse` and :meth:`parser` do given ``prompt=``; a prompt that leaves
        the model where the usual one does changes nothing, so a format's reading of the
        usual turn (a reasoning block read even after a prompt that closed one) is kept.
        """
        usual = self._usual_start
        if usual is None:
            try:
                rendered = self.render(
                    [{"role": "user", "content": "."}], add_generation_prompt=True
                )
                usual = self.completion_start(rendered.text)
            except PawletteError:  # a format that needs more than a user message
                usual = self.grammar.completion_start
            object.__setattr__(self, "_usual_start", usual)
        start = self.completion_start(prompt)
        return None if start == usual else start

    def parser(
        self,
        *,
        strict: bool = False,
        conversation: bool = False,
        id_factory: Callable[[], str] | None = None,
        start: str | None = None,
        tools: object = None,
        stream_arguments: bool = False,
        prompt: str | None = None,
    ) -> Parser:
        """An incremental parser: ``feed(text)`` / ``finish()`` return events.

        By default it reads one completion (the model's output after the generation prompt);
        ``conversation=True`` reads a whole rendered conversation.  ``tools`` (OpenAI tool
        dicts or :class:`Tool` values) are the tools the output may call: a call to a name
        none of them has is malformed (read as text with a warning in most calls concepts;
        the calls table of "Declaring a format" says which).

        A call's events are held until the call is known valid, then released whole (start,
        arguments, end).  ``stream_arguments=True`` passes argument text as it is read (for
        long arguments), with a weaker guarantee: a call that turns out malformed was already
        partly emitted; it never gets its ``ToolCallEnd`` (the fold drops it) and its text
        follows as content (see README, "Contracts").  ``prompt``: the prompt the completion
        follows, as written: the parser starts where it leaves the model (:meth:`start_after`,
        as ``pawlette serve`` starts it), inside a reasoning block only if the prompt opened
        one.  A prompt's tail is enough where it ends with the generation prompt's last
        marker; one that ends in text or with no generation prompt is read whole.
        """
        if prompt is not None and start is None and not conversation:
            start = self.start_after(prompt)
        return Parser(
            self.grammar,
            conversation=conversation,
            strict=strict,
            id_factory=id_factory,
            start=start,
            tools=_coerce_tools(tools),
            stream_arguments=stream_arguments,
        )

    def parse(
        self,
        completion: str,
        *,
        strict: bool = False,
        finish_reason: str | None = None,
        id_factory: Callable[[], str] | None = None,
        tools: object = None,
        prompt: str | None = None,
    ) -> Completion:
        """Parse a whole completion into an OpenAI assistant message and a finish reason
        (``prompt``: the prompt it follows, see :meth:`parser`)."""
        grammar = self.grammar
        start = None if prompt is None else self.start_after(prompt)
        declared = () if tools is None else _coerce_tools(tools)  # (refused as before)
        # The usual completion is read straight from its runs (see pawlette.engine.whole);
        # anything else by the machine, the reference.
        lexed: list[list[Token]] = []  # the text's tokens, when the reading gave up after lexing
        plain = read_whole(grammar, completion, start, id_factory, declared, lexed)
        if plain is not None:
            core, calls = plain
            return Completion(
                message_to_openai(core),
                completion_finish_reason(finish_reason, calls),
                (),
                core,
            )
        parser = Parser(
            grammar,
            strict=strict,
            id_factory=id_factory,
            start=start,
            tools=declared,
        )
        tokens = lexed[0] if lexed else None
        folded = fold(parser.read_all(completion, finish_reason, tokens), grammar.fields)
        messages = folded.messages
        message = messages[0] if len(messages) == 1 else merge_assistant(messages)
        return Completion(
            message_to_openai(message),
            folded.finish_reason or "stop",
            tuple(folded.warnings),
            message,
        )

    def _ends_in_prompt(
        self, text: str, messages: Sequence[Message], tools: Sequence[Tool]
    ) -> bool:
        """Whether ``text`` ends with the generation prompt this format writes after
        ``messages``: their render with the prompt is the text (whether or not the render
        without it is too: a prompt that writes nothing there, or a template that writes it
        every time); else, their render without it is not, and the text ends with what the
        prompt writes past that render (a conversation read back otherwise than written).
        One this format cannot write again is judged by its open turn alone: yes."""
        try:
            prompt = self.render(messages, tools, add_generation_prompt=True).text
            plain = self.render(messages, tools).text
        except PawletteError:
            return True
        if text in (prompt, plain):
            return text == prompt
        shared = next(
            (
                at
                for at, (one, other) in enumerate(zip(plain, prompt, strict=False))
                if one != other
            ),
            min(len(plain), len(prompt)),
        )
        return text.endswith(prompt[shared:])

    def parse_conversation(
        self, text: str, *, strict: bool = False, id_factory: Callable[[], str] | None = None
    ) -> ParsedConversation:
        """Parse a whole rendered conversation back into ``messages`` and ``tools``.

        Calls the text writes without an id are numbered ``call_0``, ``call_1``, ... in order
        (so the same text always gives the same JSON), unless ``id_factory`` says otherwise; a
        format whose render takes ids of one shape only (Mistral's nine letters and digits)
        gets ids of that shape drawn from those numbers, also in place of a written id of
        another shape, and a result that names such an id answers its call under the new one.
        A text that ends with a generation prompt gives the messages before it and says so
        (:attr:`ParsedConversation.add_generation_prompt`); one that ends inside an assistant
        turn (a prefill) gives that turn as far as it goes and says it is unfinished
        (:attr:`ParsedConversation.continue_final_message`).
        """
        parser = self.parser(
            strict=strict, conversation=True, id_factory=id_factory or NumberedCallIds()
        )
        events = parser.feed(text) + parser.finish()
        folded = fold(events, self.grammar.fields)
        # A format whose results name no call answers calls by position (pair_results); one
        # that reads a result's call id (a field of the tool role) keeps what it read.
        paired = "tool_call_id" in self.grammar.fields.get("tool", {}).values()
        messages = tuple(folded.messages if paired else pair_results(folded.messages))
        tools = tuple(folded.tools)
        prompted = continued = False
        state = parser.state
        # The text ends inside an assistant turn (not where one that needs no opener may
        # follow a finished answer: a completion's turn is over there).
        if state.role == "assistant" and state.name not in self.grammar.completion_over:
            # Its message, if the turn began one (a turn with no opener, or whose opener
            # waits for what follows it, begins none until something of it is read).
            open_turn = messages[-1] if messages and parser.ended_inside else None
            if open_turn is not None and open_turn.role != "assistant":
                open_turn = None
            before = messages if open_turn is None else messages[:-1]
            if open_turn is not None and not holds_nothing(open_turn):
                continued = True
            elif self._ends_in_prompt(text, before, tools):
                prompted = True
                messages = before
            else:
                # An empty answer whose end reads as layout (RWKV's blank line): kept, open;
                # or, with no message, a turn that may begin with no opener after the last
                # (DeepSeek V3.2's answer after results), where no prompt is written.
                continued = open_turn is not None
        return ParsedConversation(
            messages=[message_to_openai(message) for message in messages],
            tools=conversation_to_openai((), tools).get("tools", []),
            warnings=tuple(folded.warnings),
            core_messages=messages,
            core_tools=tools,
            losses=parser.losses,
            add_generation_prompt=prompted,
            continue_final_message=continued,
        )


def stop_markers_of(stop: Sequence[str], markers: Collection[str]) -> tuple[str, ...]:
    """The marker each stop ends the turn with, in the stops' order, each once: a stop that is
    one marker is that marker; a stop spelled with text or tags before its marker (Nemotron
    Nano 2's ``"\\n<SPECIAL_12>"``, Kimi K3's ``<|close|>message<|sep|><|end_of_msg|>``) ends
    with the longest marker it ends with, the token an engine's generation stops on (the
    text before it is the turn's).  A stop with no marker at its end ends on no token (an
    engine finds it as text) and gives none."""
    found: dict[str, None] = {}
    for text in stop:
        if text in markers:
            found[text] = None
            continue
        ends = [marker for marker in markers if text.endswith(marker)]
        if ends:
            found[max(ends, key=len)] = None
    return tuple(found)


def holds_nothing(message: Message) -> bool:
    """Whether ``message`` holds nothing a model wrote: no text, reasoning, call, name or
    metadata (what a generation prompt's opener reads as)."""
    return (
        not message.text
        and not any(not isinstance(part, TextPart) for part in message.content or ())
        and not message.reasoning
        and not message.reasoning_steps
        and not message.tool_calls
        and message.name is None
        and not message.metadata
    )


def _coerce_tools(tools: object) -> tuple[Tool, ...]:
    if isinstance(tools, (list, tuple)) and all(isinstance(tool, Tool) for tool in tools):
        return tuple(tools)
    return tools_from_openai(tools)


def coerce_conversation(
    messages: object, tools: object = None
) -> tuple[tuple[Message, ...], tuple[Tool, ...]]:
    """Accept OpenAI JSON (request dict or message list) or core values."""
    if isinstance(messages, (list, tuple)) and all(isinstance(m, Message) for m in messages):
        if tools is None:
            return tuple(messages), ()
        if isinstance(tools, (list, tuple)) and all(isinstance(t, Tool) for t in tools):
            return tuple(messages), tuple(tools)
        return tuple(messages), tools_from_openai(tools)
    if isinstance(tools, (list, tuple)) and tools and all(isinstance(t, Tool) for t in tools):
        core_messages, _ = conversation_from_openai(messages)
        return core_messages, tuple(tools)
    return conversation_from_openai(messages, tools)


def read_request(
    messages: object, tools: object = None
) -> tuple[tuple[Message, ...], tuple[Tool, ...], AbstractSet[str] | None]:
    """:func:`coerce_conversation`, and what the messages hold when it was found as they
    were read (:func:`pawlette.openai.read_conversation`; None: core values, not read)."""
    if isinstance(messages, (list, tuple)) and all(isinstance(m, Message) for m in messages):
        return (*coerce_conversation(messages, tools), None)
    if isinstance(tools, (list, tuple)) and tools and all(isinstance(t, Tool) for t in tools):
        core_messages, _ = conversation_from_openai(messages)
        return core_messages, tuple(tools), None
    return read_conversation(messages, tools)
