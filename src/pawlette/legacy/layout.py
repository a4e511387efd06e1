"""The declaration types: a chat format's layout written once, as data.

Why this shape
==============

Two codebases shaped it.

- **openai/harmony** never writes a format's control strings in its rendering code.  Its
  encoding holds a map from *abstract formatting tokens* (start of a message, the channel
  separator, the end of a message, the end of a call, ...) to the strings of one concrete
  encoding, and the renderer asks that map for ``Start`` or ``EndMessage`` wherever the
  conversation needs one.  A second encoding is a second map, not a second renderer.  The
  renderer also has two entry points (render for completion, render for training) over the
  same map.
- **python-hyper/h11** keeps its whole state machine in one file (``_state.py``) whose first
  rule, written at the top, is that everything affecting transitions lives there, as much of
  it as possible as *tables* (``{role: {state: {event type: next state}}}``), with the few
  rules that do not fit a table written next to them as code.  Readers of the file see the
  machine as data before any code runs.

pawlette's declaration follows harmony on the writing side and h11 on the parsing side: a
:class:`Layout` is a fixed vocabulary of *concepts* (a turn's frame, the system turn, the tools
block, the reasoning block, calls, results, the generation prompt), each holding the *fences*
(runs of special-token :class:`Marker` pieces and :class:`Lit` layout text) that one format
spells them with.  Four interpreters read the same value:

- :mod:`.write` renders segments (roles, kinds, trainability) for training and for generation;
- :mod:`.table` compiles the fences into parse-table rows (each fence's joined text is one
  lexer marker, so layout such as ``<think>\\n`` is read with its marker) and picks readers;
- :mod:`.jinja` emits a Hugging Face ``chat_template`` with ``{% generation %}`` blocks;
- :mod:`.grammar` emits the turn grammar (Lark and GBNF through the grammar AST) for every
  ``tool_choice``, with the forced prefixes and stop set, which :mod:`.table` also hands to
  :meth:`pawlette.Format.forced_prefix`: one source.

The design sketch in ``DESIGN.md`` proposed a free tree of layout nodes (``Seq``, ``Many``,
``Json``...) with four interpreters per node.  A free tree is more general, but a parse table
cannot be compiled from an arbitrary sequence (where text may end is decided by the next
marker, and two optional nodes in a row make the table ambiguous), and a Jinja emitter for
arbitrary trees writes slow, unreadable templates.  Fixed concepts keep every interpreter a
direct walk: each concept knows which fences open and close it, so the table rows, the Jinja
branches and the grammar rules follow from the concept, and a new format is a new value, not
new code.  What does not fit the basic concepts is a concept of its own, in its own module
with its four interpreters, hooked into the shared interpreters by one field of the layout:
containers (PCML, :mod:`.containers`), headed turns (ChatGLM3, :mod:`.headed`), Python-literal
calls (:mod:`.python_calls`), decision tokens (:mod:`.decision`), content parts (images as
placeholder runs and boxes in messages, :mod:`.parts` over :mod:`.media`'s blocks), results
and a tools block written as one Python list (:mod:`.python_results`, :mod:`.python_tools`),
turn reading (headers read in pieces, an end of text: :mod:`.turn_reading`), block turns
(omni, :mod:`.blocks`: in-turn results, structured thinking, JSON blocks and voice, image
tiling, each a module of its own).  Every seed format is declared.

Costs, stated: a format whose layout needs a concept that is not here cannot be declared until
the concept is added (the API says so with :class:`~pawlette.errors.FormatError`); the Jinja the
emitter writes is generic rather than hand-tuned; an interpreter bug hits every declared format
at once, which is why the cross-artifact checks (``tests/declare``) run on every registered
declared format, including ones a user registers.

Vocabulary
==========

- :class:`Marker`: a special token (written by id, never produced from text).
- :class:`Lit`: layout text the format writes (``"user\\n"``, ``"\\n\\n"``).
- :class:`Option`: text taken from the format's options (Llama 3's date), never from a clock.
- a *fence* is a tuple of pieces written and read as one unit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:  # concept modules of their own (they import this one)
    from ..types import Message, Tool
    from .blocks import BlockTurns
    from .containers import Containers
    from .decision import Decision
    from .headed import HeadedTurns
    from .parts import ContentParts
    from .python_calls import PythonCalls
    from .python_results import PythonResults
    from .turn_reading import TurnReading


@dataclass(frozen=True)
class Marker:
    """A special token: written by id; text never becomes one."""

    text: str


@dataclass(frozen=True)
class Lit:
    """Layout text the format itself writes."""

    text: str


@dataclass(frozen=True)
class Option:
    """Text from the format's options (``options.<name>``): Llama 3's date header."""

    name: str


Piece: TypeAlias = Marker | Lit | Option
Fence: TypeAlias = tuple[Piece, ...]


def fence(*pieces: Piece | str) -> Fence:
    """A fence from pieces; a plain string is :class:`Lit` text."""
    return tuple(Lit(piece) if isinstance(piece, str) else piece for piece in pieces)


@dataclass(frozen=True)
class Frame:
    """How one turn is framed: ``open`` + body + ``end`` + ``after``.

    For the assistant, ``end`` is what the model writes to end its turn (trainable, the stop
    set); ``after`` is scaffolding the renderer writes after it (a newline between turns).
    ``also_end``: other fences that end the turn when the model writes them (parsing and
    grammar accept them; the renderer writes ``end``).
    """

    open: Fence
    end: Fence
    after: Fence = ()
    also_end: tuple[Fence, ...] = ()


@dataclass(frozen=True)
class SystemTurn:
    """The system turn.

    ``default``: the text written when the conversation has no system message (None: no
    system turn then, unless ``always`` or the tools block needs one).  ``preamble`` is written
    at the start of every system turn, ``preamble_with_tools`` before it when the request has
    tools (Llama 3's ``Environment: ipython``).
    """

    default: str | None = None
    always: bool = False
    preamble: Fence = ()
    preamble_with_tools: Fence = ()
    preamble_without_tools: Fence = ()
    """Written before ``preamble`` only when the request has no tools (a format that writes
    a header after its tools block puts it in the block's ``close`` too: Breeze's date)."""


@dataclass(frozen=True)
class ToolsBlock:
    """The tools the request declares, written inside a host turn.

    ``host``: the system turn or the first user turn.  ``first``: the block comes before the
    host's text (else after it, with ``separator`` between when the host has a message).  Each
    tool is ``item_open`` + JSON + ``item_close``; the JSON is the whole OpenAI tool
    (``{"type": "function", "function": {...}}``, ``wrap="openai"``) or the function object,
    dumped as Jinja's ``tojson`` dumps it (``indent``, ``ensure_ascii=False``).
    """

    host: Literal["system", "first_user"]
    open: Fence
    close: Fence = ()
    item_open: Fence = ()
    item_close: Fence = ()
    first: bool = False
    separator: Fence = ()
    indent: int | None = None
    wrap: Literal["openai", "function"] = "openai"


@dataclass(frozen=True)
class Reasoning:
    """A reasoning block at the start of an assistant turn: ``open`` + text + ``close``.

    ``keep``: ``"all"`` writes every turn's reasoning; ``"after_last_query"`` drops it from
    assistant turns before the last user message (Qwen3), and ``always_on_last`` then writes
    an empty block on the final assistant turn when it has none.
    """

    open: Fence
    close: Fence
    keep: Literal["all", "after_last_query"] = "all"
    always_on_last: bool = False


@dataclass(frozen=True)
class JsonCalls:
    """Calls written as ``{"<name_key>": NAME, "<arguments_key>": ARGUMENTS}``.

    ``open``/``close`` frame each call (``open=None``: a call is a bare JSON object that is
    the whole assistant turn, Llama 3).  ``separator`` comes before a call that follows text
    or another call.  ``also_open``: other fences that start a call in model output (parsing
    only).  ``arguments``: ``"tojson"`` writes them as Jinja's ``tojson`` of the parsed object
    (what the Hugging Face templates do), ``"verbatim"`` as the caller's string.
    ``parallel``: several calls in one turn; ``with_content``: text before the calls.

    Reading only (the writer, Jinja and grammars write the declared spelling alone):
    ``loose_fences`` (on unless turned off): ``open``, ``separator`` + ``open`` and ``close``
    are also read with the whitespace they write around their markers left out, at either
    end or both (``<tool_call>{...}</tool_call>``; any whitespace around the object is
    JSON's own).  Off, such a spelling is no marker: the call reads as content.
    ``also_arguments_keys``: other keys a model writes the arguments under (Llama 3 models
    write ``"arguments"`` as often as the declared ``"parameters"``); a call holding two of
    them, or none, is malformed.  ``ignored_members``: ``(key, value)`` members a model may
    add, each with its one string value, read and dropped (they say nothing the call does not;
    llama.cpp reads Llama 3's ``"type": "function"`` so); another value is malformed.
    """

    open: Fence | None
    close: Fence = ()
    separator: Fence = ()
    also_open: tuple[Fence, ...] = ()
    name_key: str = "name"
    arguments_key: str = "arguments"
    arguments: Literal["tojson", "verbatim"] = "tojson"
    parallel: bool = True
    with_content: bool = True
    loose_fences: bool = True
    also_arguments_keys: tuple[str, ...] = ()
    ignored_members: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Results:
    """Tool results, matched to calls by position (the format writes no call ids).

    ``frame`` frames a results turn; ``grouped``: consecutive tool messages share one turn.
    Each result is ``item_open`` + the text + ``item_close``.
    """

    frame: Frame
    grouped: bool = False
    item_open: Fence = ()
    item_close: Fence = ()


Role: TypeAlias = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Layout:
    """One chat format, declared (see the module docstring).  Build with
    :func:`pawlette.legacy.declare`, which checks it."""

    name: str
    summary: str
    frames: Mapping[Role, Frame]
    begin: Fence = ()
    """Written once at the very start (a BOS token)."""
    system: SystemTurn = SystemTurn()
    tools: ToolsBlock | None = None
    reasoning: Reasoning | None = None
    calls: JsonCalls | PythonCalls | None = None
    """JSON calls, or Python-literal call lists (:mod:`.python_calls`)."""
    decision: Decision | None = None
    """Decision tokens opening the last assistant turn of a request with tools
    (:mod:`.decision`)."""
    results: Results | PythonResults | None = None
    """Results turns, or a run of results as one Python list (:mod:`.python_results`)."""
    trim_message_text: bool = False
    """Documentation only: whether the reference template strips message text (Llama 3 does;
    pawlette never does, which is lossless; see the format's docstring)."""
    options: Any = None
    """A frozen dataclass of option values (:class:`Option` pieces read it)."""
    from_options: Callable[[Any], Layout] | None = field(default=None, compare=False, repr=False)
    """Builds the layout for other options (options that change its structure, such as a
    default system text); without it only :class:`Option` pieces follow the options."""
    variants: Mapping[str, Any] = field(default_factory=dict)
    """Named option sets (``{"qwen2.5": ChatmlOptions(...)}``) that
    :func:`pawlette.detect.detect` tries too."""
    extra_special: tuple[str, ...] = ()
    """Markers the tokenizer has that the format never writes but must never come from text."""
    notes: tuple[str, ...] = field(default=())
    """What the declaration decided, for the docs (free text)."""
    headed: HeadedTurns | None = None
    """Turns headed by a role marker and a metadata line, ended by the next one (ChatGLM3):
    the concept's own interpreters (:mod:`pawlette.legacy.headed`) render and read it."""
    containers: Containers | None = None
    """Every message in a headed container, text escaped (:mod:`.containers`, PCML)."""
    blocks: BlockTurns | None = None
    """Turns of text and blocks on their own lines, results inside the assistant turn,
    structured thinking, image tiling (:mod:`.blocks`, omni)."""
    check: Callable[[tuple[Message, ...], tuple[Tool, ...]], None] | None = None
    """A format's own checks of a request, run before it is written (raising
    :class:`~pawlette.errors.RequestError`): options that refuse what a reference refuses
    (Breeze's ``check_conversations``, :mod:`pawlette.blocks.function_checks`).  The writer
    runs it; a chat template cannot (it is exported for the default options)."""
    parts: ContentParts | None = None
    """Images and boxes in messages (:mod:`.parts`, breeze)."""
    turn_reading: TurnReading | None = None
    """Headers read in pieces and an end of text, read only (:mod:`.turn_reading`)."""

    @property
    def generation_prompt(self) -> Fence:
        return self.frames["assistant"].open
