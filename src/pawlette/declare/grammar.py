"""The grammar interpreter: a :class:`~.layout.Layout`'s assistant turn as a grammar.

One turn, after the generation prompt, through the end fence::

    [HEAD] ( [TEXT] END | CALLS END | TEXT CALLS END )     tool_choice "auto"
    [HEAD] [TEXT] END                                      "none" (or no tools)
    [HEAD] CALLS END                                       "required" / named

``HEAD`` is what concepts put before the answer (a reasoning block), ``TEXT`` the format's
text language (what its lexer reads back as text), ``CALLS`` the calls concept's
(:class:`CallSet`), ``END`` the assistant frame's end fences up to the stop marker (the
engine's own stop takes over there).  Each concept contributes through :meth:`Concept.grammar`
on a :class:`Turn`.  The forced prefixes (:meth:`pawlette.Format.forced_prefix`) come from the
same values (:func:`forced_prefixes`), so the two cannot disagree.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..blocks.tool_choice import ForcedPrefixes
from ..emit import grammar_ast
from ..emit.grammar_ast import (
    Lexeme,
    Lit,
    Marker,
    Node,
    Repeat,
    Rules,
    Seq,
    Terminal,
    alt,
    lark_string,
    optional,
    seq,
)
from ..emit.text_language import TextLanguage, gbnf_text_rule, lark_without_markers, text_terminal
from ..engine.lexer import escape_text
from ..errors import UnsupportedFeature
from ..format import stop_markers_of
from ..types import Tool
from . import pieces as pieces_module
from .concept import overrides
from .layout import Layout
from .pieces import Fence, text_of

if TYPE_CHECKING:
    from ..emit.tool_choice import ToolChoice
    from ..emit.turn_grammar import TurnGrammar
    from ..format import Format

_ID_REST_REGEX = '/(\\\\(["\\\\\\x2F bfnrt]|u[a-fA-F0-9]{4})|[^"\\\\\\x00-\\x1F])*"/'.replace(
    " ", ""
)
TEXT = text_terminal("TEXT")
TEXT_NE = text_terminal("TEXT", "NE")
TEXT_NL = text_terminal("TEXT", "NL")


class CallSet(Protocol):
    """A calls concept's share of the turn grammar."""

    with_content: bool
    """Whether text may come before the calls."""
    trigger: str | None
    """The marker that starts the calls (for engines that switch a grammar on lazily)."""

    def many(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        """One call, or (``parallel``) several, of the tools the choice allows."""

    def after_text(self, turn: Turn, rules: Rules) -> Node:
        """Free text (not empty) and what comes between it and the calls."""

    def prefix(self, name: str | None) -> str:
        """What a forced call starts with (``name``: up to the arguments of a call to it)."""

    def after_prefix(self, turn: Turn, rules: Rules, prefix: str, parallel: bool) -> Node:
        """The calls from the forced ``prefix`` on."""

    def lazy(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        """The calls from the ``trigger`` marker on (where a lazy grammar starts: the calls
        themselves, or what follows layout text they open with)."""


def nodes(layout: Layout, pieces: Fence) -> list[Node]:
    """A fence as grammar nodes (adjacent layout text merged into one literal)."""
    result: list[Node] = []
    for piece in pieces:
        if isinstance(piece, pieces_module.Marker):
            result.append(Marker(piece.text))
            continue
        text = pieces_module.piece_text(piece, layout.options, layout.name)
        if not text:
            continue
        if result and isinstance(result[-1], Lit):
            result[-1] = Lit(result[-1].text + text)
        else:
            result.append(Lit(text))
    return result


def text_before(layout: Layout, pieces: Fence, *, empty: bool) -> Node:
    """Free text (``empty``: maybe none), then the fence.  Where the fence starts with
    layout text (a fence spelled as text, ``</think>``), the text and that layout text are
    one lexeme (:func:`joined_text`).  Where that layout text is newlines only, the text and
    those newlines are one lexeme (llguidance's lexer is greedy: text followed by a separate
    ``"\\n"`` would have taken it), read as text that ends with a newline (a fence starting
    with a blank line also takes text ending with one newline, which the parser reads too)."""
    return _text_then(nodes(layout, pieces), empty=empty)


def _text_then(items: list[Node], *, empty: bool) -> Node:
    """Free text (``empty``: maybe none), then ``items``, as :func:`text_before` reads a
    fence."""
    text = optional(TEXT) if empty else TEXT_NE
    if items and isinstance(items[0], Lit) and items[0].text.strip("\n"):
        return joined_text(seq(text, *items))
    joined = _text_and_newlines(items, empty=empty)
    if joined is not None:
        return joined
    return seq(text, *items)


_FREE_TEXT = {
    TEXT_NE: "TEXT_NE",
    optional(TEXT): "TEXT",
    TEXT_NL: "TEXT_NL",
}
"""The free-text nodes a layout text may follow, with their Lark terminals."""


def joined_text(node: Node) -> Node:
    """``node`` with free text and the layout text right after it as one lexeme
    (:class:`~pawlette.emit.grammar_ast.Lexeme`): llguidance's lexer is greedy and never
    goes back, so free text followed by a separate layout text takes that text's first
    characters (of a fence spelled as text, ``<tool_call>``, all but its last: the text may
    not hold the whole fence) and the turn cannot go on.  As one lexeme the text ends where
    the fence begins, and still holds no marker.  GBNF keeps the parts as they are."""
    if not isinstance(node, Seq):
        return node
    items: list[Node] = []
    for item in node.items:
        if isinstance(item, Lit) and items:
            terminal = next((name for free, name in _FREE_TEXT.items() if free == items[-1]), None)
            if terminal is not None:
                items[-1] = _lexeme(items[-1], terminal, item.text)
                continue
        items.append(item)
    return seq(*items)


def _lexeme(text: Node, terminal: str, layout_text: str) -> Lexeme:
    """Free text ``text`` (the Lark terminal ``terminal``), then ``layout_text``, as one
    lexeme named after both (a checksum tells apart layout texts of the same letters)."""
    words = "_".join(re.findall("[A-Za-z0-9]+", layout_text)).upper()[:32]
    check = zlib.crc32(layout_text.encode())
    name = f"{terminal}_THEN_{words}_{check:08X}" if words else f"{terminal}_THEN_{check:08X}"
    return Lexeme(name, f"{terminal} {lark_string(layout_text)}", seq(text, Lit(layout_text)))


def _text_and_newlines(items: list[Node], *, empty: bool) -> Node | None:
    """Free text (``empty``: maybe none), then ``items``, whose first is layout text that
    starts with newlines: the text and those newlines as one lexeme (see :func:`text_before`).
    None where ``items`` starts otherwise."""
    if not items or not isinstance(items[0], Lit) or not items[0].text.startswith("\n"):
        return None
    run = len(items[0].text) - len(items[0].text.lstrip("\n"))
    rest = items[0].text[run:]
    tail = [Lit(rest), *items[1:]] if rest else items[1:]
    text: Node = alt(TEXT_NL, Lit("\n" * run)) if empty else TEXT_NL
    return seq(text, *tail)


def text_before_calls(layout: Layout, separator: Fence) -> Node:
    """Text, then what separates it from the calls.  Where a concept trims the start of the
    text (:meth:`.Concept.trims_content`: the reasoning trims the text after it), a text of
    only those characters is written as nothing, yet the separator the text asked for stays
    (Qwen3's ``</think>\\n\\n\\n<tool_call>``, Ling's ``</think>\\n<tool_call>``): the text
    may then be empty."""
    empty = any(concept.trims_content() for concept in layout.concepts)
    return text_before(layout, separator, empty=empty)


def text_then(rules: Rules, layout_text: str, *, empty: bool = False) -> Node:
    """Free text (not empty), then ``layout_text`` (plain text, no marker), as one lexeme:
    llguidance's lexer is greedy, so free text followed by a separate ``layout_text`` would
    take its first characters (text may not hold the whole of it, but may hold all of it
    but its last character) and the turn could not go on.  ``empty``: the free text may be
    none (``layout_text`` alone).  The terminal is ``TEXT_CALLS`` (GBNF ``text-calls``): one
    such lexeme per grammar."""
    quoted = grammar_ast.gbnf_string(layout_text)
    rules.lark_extra["TEXT_CALLS"] = f"TEXT_NE {quoted}"
    rules.gbnf_extra["text-calls"] = f"{gbnf_text_rule('TEXT', 'NE')} {quoted}"
    text: Node = Terminal("TEXT_CALLS", lark="", gbnf="text-calls")
    return alt(text, Lit(layout_text)) if empty else text


def drop_prefix(items: list[Node], prefix: str) -> list[Node]:
    """``items`` without the text ``prefix`` they start with."""
    rest = list(items)
    while prefix:
        head = rest.pop(0)
        if isinstance(head, (Lit, Marker)) and prefix.startswith(head.text):
            prefix = prefix[len(head.text) :]
        elif isinstance(head, Lit) and head.text.startswith(prefix):
            rest.insert(0, Lit(head.text[len(prefix) :]))
            prefix = ""
        else:
            raise ValueError(f"the call does not start with the forced prefix {prefix!r}")
    return rest


class Turn:
    """One assistant turn's grammar, built by every concept's :meth:`Concept.grammar` as
    the turn is made."""

    def __init__(
        self,
        layout: Layout,
        tools: tuple[Tool, ...] = (),
        only: str | None = None,
        rules: Callable[[], Rules] | None = None,
        stop: tuple[str, ...] = (),
        fmt: Format | None = None,
        start: str | None = None,
    ) -> None:
        self.layout = layout
        self.fmt = fmt
        """The format being exported (None: forced prefixes only, no text to escape)."""
        self.start = start
        """The state the generation prompt leaves the model in, where it differs from the
        format's usual completion start (DeepSeek's thinking prompt opens ``<think>`` after a
        user turn, never after tool results); None: the usual start."""
        self.tools = tools
        self.only = only
        """The one tool a named ``tool_choice`` allows (None: any)."""
        self.new_rules = rules or Rules
        self.rules = self.new_rules()
        self.head: Node | None = None
        """What may come before the answer (a reasoning block), optional."""
        self.head_name = "reasoning"
        """The grammar rule's name for the head (what it is, for whoever reads the grammar)."""
        self.head_required = False
        """The head must come (the generation prompt opened it)."""
        self.content: Node = optional(TEXT)
        """The answer's text, when it has no calls."""
        self.calls: CallSet | None = None
        self.reasoning: tuple[str, str] | None = None
        """The reasoning block's open and close texts, for servers."""
        self.call_lead = ""
        """What a forced call starts with before the calls' own prefix (an empty reasoning
        block, in formats that write one when a turn has no reasoning)."""
        self.tool_kinds: frozenset[str] = frozenset({"function"})
        """The kinds of tools a request may declare (omni's ``action`` tools too)."""
        self.answer_lead: Fence = ()
        """What an answer without calls starts with when the request has tools (Breeze's
        ``<|answer|>`` decision token): the grammar writes it before the text, and it is
        the forced prefix of ``tool_choice`` "none"."""
        self.stop = stop
        for concept in layout.concepts:
            if overrides(concept, "grammar"):
                concept.grammar(self)

    def allowed(self) -> list[tuple[int, Tool]]:
        """The tools (with their index) the turn may call."""
        return [
            (number, tool)
            for number, tool in enumerate(self.tools)
            if self.only is None or tool.name == self.only
        ]

    def nodes(self, pieces: Fence) -> list[Node]:
        return nodes(self.layout, pieces)

    def escaped(self, text: str) -> str:
        """Caller text (a tool's name in a call) as the format writes it: escaped where it
        escapes markers (:meth:`.concept.Concept.escapes_markers`)."""
        escape = None if self.fmt is None else self.fmt.escape_pattern
        if escape is None:
            return text
        return escape_text(text, escape, before_marker=False)

    def id_rest(self) -> Node:
        """A free call id's characters after its opening quote, through its closing quote:
        a JSON string's body that spells no marker."""
        language = TextLanguage.of(self.fmt) if self.fmt is not None else TextLanguage((), False)
        return Terminal(
            "JSON_ID_REST", lark=lark_without_markers(language, _ID_REST_REGEX), gbnf="json-id-rest"
        )

    def stops_in(self, pieces: Fence) -> bool:
        """Whether ``pieces`` hold one of the format's stop markers: an engine's generation
        ends there (a reasoning close that holds the marker ending the turn), so nothing the
        grammar puts after it is written."""
        stops = set(stop_markers_of(self.stop, markers_of(self.layout)))
        return any(isinstance(item, Marker) and item.text in stops for item in self.nodes(pieces))

    def _ends(self) -> list[list[Node]]:
        """Each end fence's nodes up to the format's stop marker (none for an end of text
        only that is a stop)."""
        frame = self.layout.frames["assistant"]
        # The engine ends the grammar with the token a stop ends on (Kimi K3's stop
        # <|close|>message<|sep|><|end_of_msg|> ends on <|end_of_msg|>).
        stops = set(stop_markers_of(self.stop, markers_of(self.layout)))
        ends: list[list[Node]] = []
        for pieces in (frame.end, *frame.also_end):
            items = nodes(self.layout, pieces)
            texts = [item.text for item in items if isinstance(item, Lit)]
            if items and len(texts) == len(items) and "".join(texts) in self.stop:
                # An end of text only that is a stop (RWKV World's blank line, its model's
                # end-of-turn token) is the engine's: free text holds none of it (it is a
                # marker of the lexer), and the engine ends the turn there.
                ends.append([])
                continue
            cut = next(
                (
                    at
                    for at, item in enumerate(items)
                    if isinstance(item, Marker) and item.text in stops
                ),
                len(items),
            )
            ends.append(items[:cut])
        return ends

    def end(self) -> Node:
        """The end fences up to the format's stop marker."""
        return alt(*(seq(*items) for items in self._ends()))

    def answered(self) -> Node:
        """The answer's text, then the end.  Where the one end starts with layout text after
        free text (Poolside Laguna XS's ``\\n</assistant>``, an end spelled as text), the
        text and that layout text are one lexeme, as in :func:`text_before` (llguidance's
        lexer is greedy)."""
        ends = self._ends()
        if self.content == optional(TEXT) and len(ends) == 1:
            return _text_then(ends[0], empty=True)  # (an end spelled as text: one lexeme too)
        return seq(self.content, self.end())


def forced_prefixes(layout: Layout) -> ForcedPrefixes | None:
    """The tool-choice prefixes of a layout (the grammar bundle reports the same ones)."""
    turn = Turn(layout)
    calls = turn.calls
    if calls is None:
        return None
    lead = turn.call_lead
    required = lead + calls.prefix(None)
    named: Callable[[str], str] = lambda name: lead + calls.prefix(name)  # noqa: E731
    none = text_of(turn.answer_lead, layout.options, layout.name)
    # A calls concept whose required prefix depends on the tools (calls that begin with the
    # function's name: only one function has one) says so with ``required_for``.
    required_for = getattr(calls, "required_for", None)
    return ForcedPrefixes(
        required=required, none=none, named=named, only_with_tools=True, required_for=required_for
    )


def build_turn(
    fmt: Format,
    layout: Layout,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
    start: str | None = None,
) -> TurnGrammar:
    """The turn grammar of a declared format under one tool choice (``start``: see
    :attr:`Turn.start`)."""
    from ..emit.turn_grammar import TurnGrammar
    from ..emit.turn_rules import rules_for

    turn = Turn(layout, tools, choice.only, lambda: rules_for(fmt), fmt.stop, fmt, start)
    if turn.calls is None and tools and choice.mode in ("required", "function"):
        # No turn of this format holds a call: a grammar forcing one would answer with none.
        raise UnsupportedFeature(
            "tool_choice",
            f"{choice.describe()}, which forces a call",
            f"'auto' or 'none': format {fmt.name!r} has no tool calls",
        )
    calls = turn.calls if tools and choice.mode != "none" else None
    if calls is not None:
        for number, tool in enumerate(tools):
            if tool.kind not in turn.tool_kinds:
                expected = " or ".join(repr(kind) for kind in sorted(turn.tool_kinds))
                raise UnsupportedFeature(f"tools[{number}].type", f"{tool.kind!r}", expected)
    rules = turn.rules
    end = turn.end()
    lead = turn.nodes(turn.answer_lead) if tools else []
    answered = seq(*lead, turn.answered())
    answer: Node
    if calls is None:
        answer = answered
    elif choice.mode == "auto":
        options = [answered, seq(calls.many(turn, rules, parallel), end)]
        if calls.with_content:
            joined = getattr(calls, "text_and_calls", None)
            both = joined(turn, rules, parallel) if joined is not None else None
            if both is None:
                both = seq(calls.after_text(turn, rules), calls.many(turn, rules, parallel))
            both = joined_text(both)
            options.append(seq(both, end))
        answer = alt(*options)
    else:
        answer = seq(calls.many(turn, rules, parallel), end)
    if turn.head is not None:
        block = rules.add(turn.head_name, turn.head)
        answer = seq(block if turn.head_required else optional(block), answer)
    rules.rules["start"] = answer
    # The answer's lead is forced, then its text.
    none = text_of(turn.answer_lead, layout.options, layout.name) if lead else ""
    grammar = TurnGrammar(
        rules=rules,
        markers=tuple(fmt.special_markers),
        stop=fmt.stop,
        reasoning=turn.reasoning,
        forced_prefixes={"auto": "", "none": none, "required": ""},
    )
    all_calls = turn.calls
    if all_calls is not None and tools:
        required = fmt.forced_prefix("required", tools) or ""
        if start is not None:  # the format's prefix leads as the usual prompt leaves it
            required = turn.call_lead + required[len(Turn(layout).call_lead) :]
        grammar.forced_prefixes["required"] = required
        for tool in tools:
            if tool.kind == "function":
                grammar.forced_prefixes[tool.name] = turn.call_lead + all_calls.prefix(tool.name)
    if calls is None:
        if lead and choice.mode == "none":  # the text after the forced lead, in rules of its own
            after = turn.new_rules()
            again = Turn(layout, tools, choice.only, lambda: after, fmt.stop)
            after.rules["start"] = joined_text(seq(again.content, again.end()))
            grammar.after_prefix = after
        return grammar
    grammar.trigger = calls.trigger
    if choice.mode == "auto":
        if calls.trigger is not None:
            lazy = turn.new_rules()
            lazy.rules["start"] = seq(calls.lazy(turn, lazy, parallel), end)
            grammar.lazy = lazy
        return grammar
    after = turn.new_rules()
    key = "required" if choice.mode == "required" else choice.key()
    prefix = grammar.forced_prefixes[key][len(turn.call_lead) :]  # the calls' part
    if not grammar.forced_prefixes[key]:
        return grammar  # nothing is forced: the turn's grammar is the whole grammar
    after.rules["start"] = seq(calls.after_prefix(turn, after, prefix, parallel), end)
    grammar.after_prefix = after
    return grammar


def markers_of(layout: Layout) -> tuple[str, ...]:
    """Every special token the layout writes (then ``extra_special``), first use first."""
    fences = [layout.begin]
    for frame in layout.frames.values():
        fences += [frame.open, frame.end, *frame.also_end, *frame.open_after.values()]
    texts = [text for fence in fences for text in pieces_module.markers_in(fence)]
    texts += [marker.text for concept in layout.concepts for marker in concept.markers()]
    return tuple(dict.fromkeys([*texts, *layout.extra_special]))


class CallOpening:
    """What every calls grammar takes from the fence its calls open with, ``opening`` (then
    ``after``, layout text the calls write next: a JSON list's ``[``): the ``trigger`` (its
    first marker), the ``lead`` (its text: what every forced prefix starts with), and from
    the calls concept (``calls``) whether text may come first (``with_content``: its
    ``content`` is ``"written"``) and what comes between (:meth:`after_text`, its
    ``text_separator``)."""

    def __init__(self, calls: Any, turn: Turn, opening: Fence, after: str = "") -> None:
        self.calls = calls
        self.with_content = calls.content == "written"
        self.trigger: str | None = next(iter(pieces_module.markers_in(opening)), None)
        self.lead = text_of(opening, turn.layout.options, turn.layout.name) + after

    def after_text(self, turn: Turn, rules: Rules) -> Node:
        return text_before_calls(turn.layout, self.calls.text_separator)


class CallItems:
    """A calls grammar whose one call is any allowed tool's pieces (:meth:`items`, a rule
    ``call_N`` each, under one rule ``call``), after :meth:`opening` and before
    :meth:`rest`."""

    def items(self, turn: Turn, rules: Rules, number: int) -> list[Node]:
        raise NotImplementedError

    def opening(self, turn: Turn) -> list[Node]:
        """What comes before the first call's items."""
        return []

    def rest(self, turn: Turn, rules: Rules, parallel: bool) -> list[Node]:
        """What follows the first call: the others (``parallel``), and what closes them."""
        return []

    def call(self, turn: Turn, rules: Rules) -> Node:
        options = [
            rules.add(f"call_{number}", seq(*self.items(turn, rules, number)))
            for number, _ in turn.allowed()
        ]
        return rules.add("call", alt(*options))

    def many(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        first = self.call(turn, rules)
        return seq(*self.opening(turn), first, *self.rest(turn, rules, parallel))

    def lazy(self, turn: Turn, rules: Rules, parallel: bool) -> Node:
        return self.many(turn, rules, parallel)

    def after_prefix(self, turn: Turn, rules: Rules, prefix: str, parallel: bool) -> Node:
        """The calls after a forced ``prefix``: the first call's pieces without it."""
        heads = [
            seq(*drop_prefix([*self.opening(turn), *self.items(turn, rules, n)], prefix))
            for n, _ in turn.allowed()
        ]
        return seq(alt(*heads), *self.rest(turn, rules, parallel))


class SectionedCalls(CallOpening, CallItems):
    """The grammar of calls written one after another inside an optional section (``open``
    + NAME ... ``close``, ``separator`` between them, ``section_open``/``section_close``
    around them): what call concepts of that shape share.  A subclass gives one call's
    pieces (:meth:`items`) and its forced prefix."""

    def __init__(self, calls: Any, turn: Turn) -> None:
        first = calls.section_open + (calls.open or ())
        super().__init__(calls, turn, first)
        self.first_nodes = turn.nodes(first)

    def opening(self, turn: Turn) -> list[Node]:
        return turn.nodes(self.calls.section_open)

    def rest(self, turn: Turn, rules: Rules, parallel: bool) -> list[Node]:
        calls = self.calls
        others: list[Node] = []
        if parallel and calls.parallel:
            others.append(Repeat(seq(*turn.nodes(calls.separator), self.call(turn, rules))))
        return [*others, *turn.nodes(calls.section_close)]

    def text_and_calls(self, turn: Turn, rules: Rules, parallel: bool) -> Node | None:
        """Text, then the calls, as one lexeme up to where they can be told apart
        (llguidance's lexer is greedy: free text followed by a separate layout text would
        take that text's first characters, and the turn could not go on):

        - calls that open with plain text (Functionary's ``<function=``, DeepSeek V3.2's
          ``\\n\\n<｜DSML｜function_calls>``), after a plain separator or none (MiniCPM's
          ``\\n`` + ``<function name="``): the text, the separator and that opening text
          (:func:`text_then`);
        - calls that open with a newline then a marker, nothing between (GLM-4.6's
          ``\\n<tool_call>``): the text and that newline.

        None: text then :meth:`many`."""
        separator = turn.nodes(self.calls.text_separator)
        first = self.first_nodes[0] if self.first_nodes else None
        if (
            all(isinstance(node, Lit) for node in separator)
            and isinstance(first, Lit)
            and first.text.strip()
        ):
            # Where the reasoning trims the text to nothing, its separator stays (as in
            # text_before_calls); with no separator that is the calls alone (many).
            empty = bool(separator) and any(
                concept.trims_content() for concept in turn.layout.concepts
            )
            joined = "".join(node.text for node in separator if isinstance(node, Lit))
            return seq(
                text_then(rules, joined + first.text, empty=empty),
                self.after_prefix(turn, rules, first.text, parallel),
            )
        if self.calls.text_separator or not self.lead.startswith("\n"):
            return None
        return seq(TEXT_NL, self.after_prefix(turn, rules, "\n", parallel))
