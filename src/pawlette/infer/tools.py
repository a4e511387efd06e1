"""The tools block: where a template writes the request's tools, and how.

Probes: ``[user]``, ``[system, user]`` and ``[user, assistant, user]``, each without tools, with
one tool and with two.  The tools are found in the render as JSON (each tool, or the list of
them, as ``tojson`` writes it: the whole OpenAI tool or its ``function``, indented or not); the
text between two tools is what closes one item and opens the next, and what the tools add
around them is the block's open and close.  Where the block lands in the render without tools
says its place: in the system turn after or before its text (with the separator the text gets),
in the first or last user turn (or the message after the first system message, written as a
user turn, with a line the system turn adds beside them: Llama 3.x), on its own before the
last user turn, on its own after the system turn (or the start, without one), or as a turn of
its own at the start (before the default system turn, or before a fixed turn the start holds;
inside the start's text, always written, where only the tools are added).  Tools written in
another language (TypeScript, Python stubs, XML) are looked for as the declared families write
them (:mod:`.presentations`) and placed alike; any other writing is not derived.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..declare import FirstSystemText, Ignored, SystemPrompt, ToolsBlock
from ..declare.pieces import Lit, Marker, text_of
from ..formats.apriel.tools import ReprLineTools
from ..formats.bailing.thinking import PHRASES as THINKING_PHRASES
from ..formats.bailing.thinking import ThinkingLine
from ..formats.kimi.k3 import FixedSystemTurn
from ..formats.minimax.system import BlankSystemDropped
from .atoms import Tokens, excerpt
from .draft import Draft, FrameText
from .literal_tools import LiteralTools, closes_alone
from .presentations import PRESENTATIONS, Presentation
from .probe import Probe, message, tool

__all__ = ["PROBE_TOOLS", "derive_tools", "insertions"]

PROBE_TOOLS = (
    tool("zq_alpha", "Zd1q", {"zk1": {"type": "string"}}),
    tool("zq_beta", "Zd2q", {"zk2": {"type": "integer"}}),
)


def insertions(tokens: Tokens, base: str, changed: str) -> list[tuple[int, str, str]]:
    """How ``changed`` differs from ``base``: ``(offset in base, removed, inserted)`` runs,
    never cutting a special token."""
    left, right = tokens.atoms(base), tokens.atoms(changed)
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    found = []
    offsets = [0]
    for atom in left:
        offsets.append(offsets[-1] + len(atom))
    for kind, i1, i2, j1, j2 in matcher.get_opcodes():
        if kind != "equal":
            found.append((offsets[i1], "".join(left[i1:i2]), "".join(right[j1:j2])))
    return found


@dataclass(frozen=True)
class Style:
    """How each tool is written: the whole OpenAI tool or its function, and tojson's
    options."""

    wrap: str
    indent: int | None
    separators: tuple[str, str] | None
    ascii: bool = False

    def dump(self, value: Any) -> str:
        return json.dumps(
            value, ensure_ascii=self.ascii, indent=self.indent, separators=self.separators
        )

    def item(self, given: dict[str, Any]) -> Any:
        return given if self.wrap == "openai" else given["function"]


STYLES = tuple(
    Style(wrap, indent, separators)
    for wrap in ("openai", "function")
    for indent in (None, 4, 2)
    for separators in (None, (",", ":"))
)


def _style(text: str) -> Style | None:
    """How the template writes the probe tools: each, or the array of them (indented, an
    item of an array is written otherwise than alone)."""
    for style in STYLES:
        if style.dump(style.item(PROBE_TOOLS[0])) in text:
            return style
        if style.dump([style.item(item) for item in PROBE_TOOLS]) in text:
            return style
    return None


RICH_TOOL = {
    "type": "function",
    "function": {
        "name": "zq_gamma",
        "description": "Zd3q",
        "parameters": {
            "type": "object",
            "properties": {
                "zk3": {"type": "string", "enum": ["Ze1q", "Ze2q"], "description": "Zd4q"},
                "zk4": {"type": "array", "items": {"type": "string"}},
                "zk5": {"type": "object", "properties": {"zk6": {"type": "number"}}},
            },
            "required": ["zk3"],
            "additionalProperties": False,
        },
    },
}
"""A tool whose schema tells apart presentations that write the probe tools alike (an
enum, an array, an object, a key after ``required``)."""

WIDE_TOOL = tool("zq_alpha", "Zd1q\u00e9\u2014", {"zk1": {"type": "string"}})
"""The first probe tool with non-ASCII text in its description."""


def _escaping(probe: Probe, user: list[dict[str, Any]], style: Style) -> Style:
    """``style``, escaping non-ASCII characters (``tojson(ensure_ascii=True)``) when the
    template writes a tool's non-ASCII text so."""
    written = probe.render(user, [WIDE_TOOL])
    escaped = dataclasses.replace(style, ascii=True)
    if written is not None and escaped.dump(escaped.item(WIDE_TOOL)) in written:
        return escaped
    return style


def derive_tools(probe: Probe, draft: Draft) -> None:
    if draft.skip("tools"):
        return
    u1 = probe.sentinel("u", 1)
    one, two = [PROBE_TOOLS[0]], list(PROBE_TOOLS)
    user = [message("user", u1)]
    plain = probe.render(user)
    with_one = probe.render(user, one)
    with_two = probe.render(user, two)
    if with_one is None or with_two is None:
        draft.capability("tools", "not derived", "the template refuses the probe tools")
        return
    if with_one == plain:
        draft.concepts.append(Ignored(("tools",)))
        draft.capability("tools", "dropped", "the template does not write tools")
        return
    style = _style(with_two)
    if style is None:
        _derive_presented(probe, draft, with_one, with_two)
        return
    style = _escaping(probe, user, style)
    first, second = (style.dump(style.item(item)) for item in PROBE_TOOLS)
    array_text = style.dump([style.item(item) for item in PROBE_TOOLS])
    array = array_text in with_two
    if array:
        item_open = item_close = ""
    else:
        items = _item_fences(probe.tokens, first, second, with_one, with_two)
        if isinstance(items, str):  # (JSON items a presentation joins: Bielik's lines)
            _derive_presented(probe, draft, with_one, with_two, items)
            return
        item_open, item_close = items
    single = style.dump([style.item(PROBE_TOOLS[0])]) if array else first
    fields = _placed_fields(probe, draft, single, item_open, item_close)
    if fields is None:
        return
    place = fields["place"]
    if place == "after_system" and not _after_dropped_systems(probe, draft):
        return
    _declare(
        draft,
        ToolsBlock(
            **fields,
            indent=style.indent,
            wrap=style.wrap,  # type: ignore[arg-type]
            array=array,
            separators=style.separators,
            ascii=style.ascii,
        ),
    )
    draft.capability(
        "tools",
        "derived",
        f"{place.replace('_', ' ')}, {'one JSON array' if array else 'one JSON per tool'}",
    )


def _item_fences(
    tokens: Tokens, first: str, second: str, with_one: str, with_two: str
) -> tuple[str, str] | str:
    """``(item_open, item_close)`` around each tool, from the text between two tools and
    the text around a lone one; or why not (a sentence)."""
    if with_two.count(first) != 1 or with_two.count(second) != 1:
        return "the template writes each tool more than once"
    between = with_two[with_two.find(first) + len(first) : with_two.find(second)]
    if with_one.count(first) != 1:
        return "the template writes a tool more than once"
    one_before = with_one[: with_one.find(first)]
    one_after = with_one[with_one.find(first) + len(first) :]
    # The text between two tools closes one item and opens the next: split it where the
    # text around a lone tool agrees (the close is what follows a tool), never inside a
    # special token or tag, and where either can be longer, where each of them closes
    # the angle brackets it opens ('<tool|>' and '<|tool>', not '<tool|><' and '|tool>').
    cuts = [0]
    for atom in tokens.atoms(between):
        cuts.append(cuts[-1] + len(atom))
    agreed = [
        cut
        for cut in reversed(cuts)
        if one_after.startswith(between[:cut]) and one_before.endswith(between[cut:])
    ]
    if agreed:
        balanced = [cut for cut in agreed if _balanced(between[:cut]) and _balanced(between[cut:])]
        cut = (balanced or agreed)[0]
        return between[cut:], between[:cut]
    return f"the tools are joined by {between!r}"


def _balanced(text: str) -> bool:
    return text.count("<") == text.count(">")


def _derive_presented(
    probe: Probe, draft: Draft, with_one: str, with_two: str, why: str | None = None
) -> None:
    """The tools written as a declared family writes them (:data:`.presentations.PRESENTATIONS`):
    a presentation whose text for the probe tools the template writes; of several, the first
    that also writes a richer tool (an enum, an array, an object) as the template does."""
    found = []
    for presentation in PRESENTATIONS:
        items = _presented(probe, presentation, with_one, with_two)
        if items is not None:
            found.append((presentation, *items))
    if not found:
        draft.capability(
            "tools",
            "not derived",
            why
            or "the template writes tools in a form other than their JSON and the "
            "presentations of the declared families (needs concept: tools written as code or "
            "markup)",
        )
        return
    if len(found) > 1:
        rich = probe.render([message("user", probe.sentinel("u", 1))], [RICH_TOOL])
        for candidate in found:
            text = candidate[0].text([RICH_TOOL])
            if rich is not None and text is not None and text in rich:
                found = [candidate]
                break
    presentation, single, item_open, item_close = found[0]
    fields = _placed_fields(probe, draft, single, item_open, item_close, presentation.empty())
    if fields is None:
        return
    declared = presentation.declare(**fields)
    if isinstance(declared, LiteralTools) and fields["place"] == "system" and not item_open:
        texts = (text_of(declared.open), single, item_close, text_of(declared.close))
        alone = closes_alone(probe, draft, [PROBE_TOOLS[0]], texts)
        if alone is not None:
            # In every system turn, closed otherwise in the turn written without a system
            # message: as Apriel 1.5's family declares it.
            declared = ReprLineTools(
                **fields, close_alone=draft.fence(alone[0]), default_turn=draft.fence(alone[1])
            )
    _declare(draft, declared)
    place = fields["place"]
    draft.capability("tools", "derived", f"{place.replace('_', ' ')}, {presentation.name}")


def _placed_fields(
    probe: Probe, draft: Draft, single: str, item_open: str, item_close: str, empty: str = ""
) -> dict[str, Any] | None:
    """The tools block's fields that say where the template writes it (:func:`_place`, or
    :func:`_in_system_end` for a block written without tools too, ``empty`` in place of
    them), and its item fences; None: not placed (the capability says why)."""
    if empty:
        placed = _in_system_end(probe, draft, item_open + single + item_close, empty)
    else:
        placed = _place(probe, draft, single, item_open, item_close)
    if placed is None:
        return None
    place, block_open, block_close, first_in_host, separator = placed
    return {
        "place": place,
        "open": draft.fence(block_open),
        "close": draft.fence(block_close),
        "item_open": draft.fence(item_open),
        "item_close": draft.fence(item_close),
        "first": first_in_host,
        "separator": draft.fence(separator),
        "separator_when": _separator_when(probe, draft, place, separator, block_open),
        "always": _always(probe, place, block_open, block_close),
    }


def _presented(
    probe: Probe, presentation: Presentation, with_one: str, with_two: str
) -> tuple[str, str, str] | None:
    """``(text of one tool, item_open, item_close)`` where the template writes the probe
    tools as ``presentation`` does; None: it does not."""
    whole = presentation.text(PROBE_TOOLS)
    single = presentation.text(PROBE_TOOLS[:1])
    if whole is None or single is None:
        return None
    if with_two.count(whole) == 1:
        return single, "", ""
    second = presentation.text(PROBE_TOOLS[1:])
    if not presentation.items or second is None:
        return None
    items = _item_fences(probe.tokens, single, second, with_one, with_two)
    return None if isinstance(items, str) else (single, *items)


def _place(
    probe: Probe, draft: Draft, single: str, item_open: str, item_close: str
) -> tuple[str, str, str, bool, str] | None:
    """``(place, open, close, first, separator)`` of the block, from where the template puts
    it (None: not derived, the draft says why)."""
    tokens = probe.tokens
    u1, u2, a1, s1 = (
        probe.sentinel("u", 1),
        probe.sentinel("u", 2),
        probe.sentinel("a", 1),
        probe.sentinel("s", 1),
    )
    one = [PROBE_TOOLS[0]]
    tools_item = item_open + single + item_close

    def block_of(inserted: str) -> tuple[str, str] | None:
        at = inserted.find(tools_item)
        if at < 0 or inserted.count(tools_item) != 1:
            return None
        return inserted[:at], inserted[at + len(tools_item) :]

    def not_derived(why: str) -> None:
        draft.capability("tools", "not derived", why)

    user = draft.frames["user"]
    conversation = [message("user", u1), message("assistant", a1), message("user", u2)]
    base = probe.render(conversation)
    changed = probe.render(conversation, one)
    if base is None or changed is None:
        not_derived("the template refuses tools in a longer conversation")
        return None
    found = insertions(tokens, base, changed)
    has_system = "system" in draft.frames
    if len(found) == 2 and has_system and _preamble_with_tools(draft, base, found[0]):
        found = found[1:]  # (the block is the other change)
    without_system = found
    if len(found) == 1 and not found[0][1]:
        offset, _, inserted = found[0]
        around = block_of(inserted)
        last_opener = base.find(u2) - len(user.open)
        if around is not None and offset == last_opener:
            open_text, close_text = around
            return "before_last_user", open_text, close_text, False, ""
        first_user = base.find(u1)
        for name, host in (("first_user", u1), ("last_user", u2)):
            position = base.find(host)
            if around is not None and offset == position:
                if name == "first_user" and _user_after_system(probe, draft, inserted):
                    name = "user_after_system"
                return name, around[0], around[1], True, ""
            if around is not None and offset == position + len(host):
                return name, around[0], around[1], False, ""
        del first_user
        if not has_system:
            # (a diff may place the block after text it ends with: Apriel 1.6's newline
            # after its start's default text)
            start = len(draft.begin)
            moved = _shifted(base, offset, inserted, start)
            own = around if offset == start else None if moved is None else block_of(moved)
            if own is not None and not tokens.markers_in([base[start:offset]]):
                return "own_turn", own[0], own[1], False, ""
        if around is not None and _before_fixed_turn(draft, offset):
            return "own_turn", around[0], around[1], False, ""
        if around is not None and _before_start_end(draft, offset, around):
            return "own_turn", around[0], around[1], False, ""
        inside = None if around is None else _inside_start(draft, offset, around)
        if inside is not None:
            return "own_turn", *inside, False, ""
    if not has_system:
        not_derived(_misplaced(tokens, base, found))
        return None
    # In the system turn: with a system message, and without one.
    with_text = probe.render([message("system", s1), message("user", u1)])
    with_text_tools = probe.render([message("system", s1), message("user", u1)], one)
    if with_text is None or with_text_tools is None:
        not_derived("the template refuses tools beside a system message")
        return None
    found = insertions(tokens, with_text, with_text_tools)
    system = draft.frames["system"]
    position = with_text.find(s1)
    trail = text_of(_first_system_text(draft).trail)
    if trail and s1 + trail in with_text and s1 + trail not in with_text_tools:
        return _trail_after_block(draft, with_text_tools, s1, trail, block_of)
    if len(found) == 1 and not found[0][1]:
        offset, _, inserted = found[0]
        around = block_of(inserted)
        if (
            around is not None
            and offset == len(draft.begin)
            and with_text_tools.startswith(draft.begin + inserted)
        ):
            return "own_turn", around[0], around[1], False, ""
        if around is not None and _before_fixed_turn(draft, offset):
            return "own_turn", around[0], around[1], False, ""
        # (a diff may place an insertion after text it ends with: Nemotron Nano 2's block
        # after the system text's '\n\n', ending with '\n\n')
        shifted = _shifted(with_text, offset, inserted, position + len(s1))
        after_text = around if offset == position + len(s1) else None
        moved = with_text[position + len(s1) : offset]
        if after_text is None and shifted is not None and moved and not tokens.markers_in([moved]):
            after_text = block_of(shifted)
        if after_text is not None:
            separator_and_open, close_text = after_text
            return _system_without_text(
                probe, draft, separator_and_open, close_text, tools_item, False
            )
        # A diff may place an insertion before text it starts with (Qwen3.5's tools,
        # '\n# Tools...' before the '\n' that opens the system text).
        ahead = _ahead(with_text, offset, inserted, position)
        first = around if offset == position else None if ahead is None else block_of(ahead)
        lead = text_of(_first_system_text(draft).lead)
        if first is None and lead and offset == position - len(lead):
            first = around  # (before what the first system text's lead: Spark2.5's)
        inside = None if around is None else _inside_preamble(draft, with_text, offset, around)
        if inside is not None:
            return "system", *inside, True, ""
        if first is not None:
            open_text, close_text = first
            return _system_without_text(probe, draft, open_text, close_text, tools_item, True)
        # On its own after the system turn, and after the start without one (InternLM2).
        turn_end = position + len(s1) + len(system.end) + len(system.after)
        after = _shifted(with_text, offset, inserted, turn_end)
        alone = None
        if len(without_system) == 1 and not without_system[0][1]:
            at, _, text = without_system[0]
            alone = _shifted(base, at, text, len(draft.begin) + len(_default_turn(draft)))
        block = None if after is None else block_of(after)
        if (
            after is not None
            and block is not None
            and (after == alone or _default_with_tools(probe, draft, after))
        ):
            return "after_system", block[0], block[1], False, ""
    del system
    not_derived(_misplaced(tokens, with_text, found))
    return None


def _in_system_end(
    probe: Probe, draft: Draft, tools_item: str, empty: str
) -> tuple[str, str, str, bool, str] | None:
    """A block the template writes in every conversation, ``empty`` where the tools go when
    there are none, as part of the text that ends the first system turn (Apertus' developer
    turn after ``<|system_end|>``): that end is cut after its first special token, the rest
    the block's open and close, placed after the system turn (whose end is the cut one)."""
    s1, u1 = probe.sentinel("s", 1), probe.sentinel("u", 1)
    frame = draft.frames.get("system")
    conversation = [message("system", s1), message("user", u1)]
    without = probe.render(conversation)
    given = probe.render(conversation, [PROBE_TOOLS[0]])
    why = f"the template writes {empty!r} in place of the tools without them, not at the end of"
    if frame is None or without is None or given is None or given.count(tools_item) != 1:
        draft.capability("tools", "not derived", f"{why} a system turn")
        return None
    start = without.find(s1) + len(s1)
    at = given.find(tools_item)
    cut = at - start  # (where the tools go in the turn's end)
    atoms = draft.tokens.atoms(frame.end)
    lead = atoms[0] if atoms else ""
    rest = frame.end[len(lead) :]
    following = draft.tokens.atoms(rest)[:1]
    if (
        frame.after
        or not draft.tokens.is_special(lead)
        or not following
        or not draft.tokens.is_special(following[0])
        or not without.startswith(given[:at])
        or not len(lead) <= cut <= len(frame.end) - len(empty)
        or not without[start:].startswith(frame.end)
        or frame.end[cut : cut + len(empty)] != empty
        or without[at + len(empty) :] != given[at + len(tools_item) :]
    ):
        draft.capability("tools", "not derived", f"{why} the system turn after its end's mark")
        return None
    frame.end = lead
    return "after_system", rest[: cut - len(lead)], rest[cut - len(lead) + len(empty) :], False, ""


_PLACES = (
    "in the system turn, on their own at the start or after the system turn, before the last "
    "user turn, or in the first or last user turn"
)


def _misplaced(tokens: Tokens, base: str, found: list[tuple[int, str, str]]) -> str:
    """Where the template writes a tool beside what it writes without one: each change,
    with the text it follows, and the places a ToolsBlock has."""
    changes = []
    for offset, removed, inserted in found[:3]:
        said = f"{excerpt(tokens, inserted, 80)}" if inserted else "nothing"
        if removed:
            said += f" in place of {excerpt(tokens, removed, 40)}"
        before = base[:offset]
        said += f" after {excerpt(tokens, before, 40, last=True)}" if before else " at the start"
        changes.append(said)
    if len(found) > 3:
        changes.append(f"and {len(found) - 3} more changes")
    return (
        f"given a tool, the template writes {'; '.join(changes)}: "
        + ("not" if len(found) == 1 else f"{len(found)} changes, not one block")
        + f" where a tools block goes ({_PLACES}) (needs concept: tools in another place)"
    )


def _before_fixed_turn(draft: Draft, offset: int) -> bool:
    """Whether a block the template writes ``offset`` into the text it starts every
    conversation with goes before a turn of that text (Kimi K3's tools before its
    thinking-effort turn): then the draft's start is cut there, the rest a
    :class:`FixedSystemTurn` written after the block."""
    if not 0 <= offset < len(draft.begin):
        return False
    rest = draft.begin[offset:]
    # (the rest is a turn: a special token, then more)
    first = draft.tokens.atoms(rest)[:1]
    if not first or not draft.tokens.is_special(first[0]) or rest == first[0]:
        return False
    draft.begin = draft.begin[:offset]
    draft.concepts.append(FixedSystemTurn(draft.fence(rest)))
    return True


def _before_start_end(draft: Draft, offset: int, around: tuple[str, str]) -> bool:
    """Whether a block with fences of its own goes into the text of the turn the template
    starts every conversation with, before the special tokens that end it (Functionary
    v3.1's tools in its generated system turn, before ``<|eot_id|>``): then the start is cut
    there, its end a :class:`FixedSystemTurn` written after the block."""
    begin, tokens = draft.begin, draft.tokens
    if around == ("", "") or not 0 < offset < len(begin):
        return False
    ahead = tokens.atoms(begin[:offset])
    if not ahead or tokens.is_special(ahead[-1]):
        return False  # (the block would not be inside a turn's text)
    rest = begin[offset:]
    if not all(map(tokens.is_special, tokens.atoms(rest))):
        return False
    draft.begin = begin[:offset]
    draft.concepts.append(FixedSystemTurn(draft.fence(rest)))
    return True


def _inside_start(draft: Draft, offset: int, around: tuple[str, str]) -> tuple[str, str] | None:
    """``(open, close)`` where the template writes the tools inside the text it starts every
    conversation with (Cohere's Command A MoE, an empty listing there without tools): that
    text after its first special token, cut where the tools go, is the block's open and
    close (then written always: :func:`_always`)."""
    begin = draft.begin
    atoms = draft.tokens.atoms(begin)
    # (only the tools are added: the block's fences are written without them too)
    if around != ("", "") or len(atoms) < 2 or not all(map(draft.tokens.is_special, atoms[:2])):
        return None
    lead = atoms[0]
    if not len(lead) < offset < len(begin):
        return None
    draft.begin = lead
    return begin[len(lead) : offset], begin[offset:]


def _always(probe: Probe, place: str, block_open: str, block_close: str) -> bool:
    """Whether the template writes a block of its own, empty, without tools."""
    if place != "own_turn":
        return False
    plain = probe.render([message("user", probe.sentinel("u", 1))])
    return plain is not None and block_open + block_close in plain


def _declare(draft: Draft, tools: ToolsBlock) -> None:
    """``tools`` among the draft's concepts; a block on its own at the start before the
    turns written there (a fixed one, the system prompt's: Kimi K2's ``tool_declare`` turn
    comes before its default system turn)."""
    kinds: tuple[type, ...] = (FixedSystemTurn, ThinkingLine)  # (the line follows the block)
    if tools.place == "own_turn":
        kinds = (FixedSystemTurn, SystemPrompt)
    elif tools.place == "system" and tools.first:
        kinds = (FixedSystemTurn, FirstSystemText)  # (its lead follows the block)
    after = [n for n, item in enumerate(draft.concepts) if isinstance(item, kinds)]
    draft.concepts.insert(after[0] if after else len(draft.concepts), tools)


def _preamble_with_tools(draft: Draft, base: str, change: tuple[int, str, str]) -> bool:
    """Whether ``change`` is text the template adds at the start of a system turn it always
    writes, only when there are tools (Llama 3.x's ``Environment: ipython``): then it is the
    draft's system prompt's ``preamble_with_tools``."""
    prompt = _system_prompt(draft)
    offset, removed, inserted = change
    if prompt is None or not prompt.always or removed or prompt.preamble_with_tools:
        return False
    start = len(draft.begin) + len(draft.frames["system"].open)
    if not base.startswith(draft.begin + draft.frames["system"].open):
        return False
    text = inserted if offset == start else _ahead(base, offset, inserted, start)
    if not text or PROBE_TOOLS[0]["function"]["name"] in text:  # (a tool is the block's)
        return False
    draft.concepts[draft.concepts.index(prompt)] = dataclasses.replace(
        prompt, preamble_with_tools=draft.fence(text)
    )
    return True


def _user_after_system(probe: Probe, draft: Draft, block: str) -> bool:
    """Whether the template writes the block in the message after the first system message
    whatever its role, as a user turn (Llama 3.x's: a second system message holds it)."""
    if "system" not in draft.frames:
        return False
    s1, s2, u1 = probe.sentinel("s", 1), probe.sentinel("s", 2), probe.sentinel("u", 1)
    conversation = [message("system", s1), message("system", s2), message("user", u1)]
    written = probe.render(conversation, [PROBE_TOOLS[0]])
    system, user = draft.frames["system"], draft.frames["user"]
    if (system.end, system.after) != (user.end, user.after) or written is None:
        return False
    return s1 + system.end + system.after + user.open + block + s2 in written


def _separator_when(
    probe: Probe, draft: Draft, place: str, separator: str, block_open: str
) -> Literal["message", "text"]:
    """``"text"`` where the template writes the separator after a system message's text only
    when it is not empty (Nemotron 3), else ``"message"``."""
    if place != "system" or not separator:
        return "message"
    empty = probe.render(
        [message("system", ""), message("user", probe.sentinel("u", 1))], [PROBE_TOOLS[0]]
    )
    head = draft.frames["system"].open
    if (
        empty is not None
        and head + separator + block_open not in empty
        and head + block_open in empty
    ):
        return "text"
    return "message"


def _default_with_tools(probe: Probe, draft: Draft, block: str) -> bool:
    """Whether the template, given tools and no system message, writes its default system
    turn with another text, then ``block`` (Granite 3.3 adds its tool instructions): then
    the draft's system prompt has that text as its ``default_with_tools``."""
    prompt = _system_prompt(draft)
    if prompt is None or not isinstance(prompt.default, str) or prompt.default_when != "always":
        return False
    alone = probe.render([message("user", probe.sentinel("u", 1))], [PROBE_TOOLS[0]])
    system = draft.frames["system"]
    head = draft.begin + system.open + text_of(prompt.preamble)
    tail = system.end + system.after + block
    if alone is None or not alone.startswith(head) or alone.count(tail) != 1:
        return False
    text = alone[len(head) : alone.find(tail)]
    if not text or text == prompt.default:
        return False
    written = draft.fence(text) if probe.tokens.markers_in([text]) else text
    draft.concepts[draft.concepts.index(prompt)] = dataclasses.replace(
        prompt, default_with_tools=written
    )
    return True


def _default_turn(draft: Draft) -> str:
    """The system turn the template writes when the conversation has no system message
    (its default text in the system frame), or nothing."""
    for concept in draft.concepts:
        if isinstance(concept, SystemPrompt) and concept.default is not None:
            frame = draft.frames["system"]
            default = concept.default
            text = default if isinstance(default, str) else text_of(default)
            return frame.open + text + frame.end + frame.after
    return ""


def _ahead(base: str, offset: int, inserted: str, target: int) -> str | None:
    """``inserted`` (at ``offset`` in ``base``) as the same change made at ``target``, just
    after ``offset``; None: it cannot be."""
    if not offset < target <= offset + len(inserted):
        return None
    moved = base[offset:target]
    if not inserted.startswith(moved):
        return None
    return inserted[len(moved) :] + moved


def _shifted(base: str, offset: int, inserted: str, target: int) -> str | None:
    """``inserted`` (at ``offset`` in ``base``) as the same change made at ``target``, at
    or before ``offset`` (a diff may place an insertion after text it ends with); None:
    it cannot be."""
    moved = base[target:offset] if target <= offset else None
    if moved is None or not inserted.endswith(moved):
        return None
    return moved + inserted[: len(inserted) - len(moved)]


def _system_without_text(
    probe: Probe, draft: Draft, lead: str, close_text: str, tools_item: str, first: bool
) -> tuple[str, str, str, bool, str] | None:
    """The block in the system turn: split the separator from the open by the turn the
    template writes for tools when there is no system message."""
    u1 = probe.sentinel("u", 1)
    alone = probe.render([message("user", u1)], [PROBE_TOOLS[0]])
    system = draft.frames["system"]
    if alone is None:
        draft.capability(
            "tools", "not derived", "the template refuses tools without a system message"
        )
        return None
    at = alone.find(tools_item)
    before = alone[:at]
    prompt = _system_prompt(draft)
    preamble = "" if prompt is None else text_of(prompt.preamble)
    default = prompt.default if prompt is not None and isinstance(prompt.default, str) else None
    head = system.open + preamble
    if first:
        # Before the system text, the block may end with a separator written only when a
        # text follows (Qwen3.5's blank line): what the turn of tools alone leaves out.
        after = alone[at + len(tools_item) :]
        if not after.startswith(close_text + system.end):
            close = close_text.rstrip()
            separator = close_text[len(close) :]
            if separator and after.startswith(close + system.end):
                return "system", lead, close, True, separator
        return "system", lead, close_text, True, ""
    for cut in range(len(lead) + 1):
        separator, open_text = lead[:cut], lead[cut:]
        if default is not None and before.endswith(head + default + separator + open_text):
            return "system", open_text, close_text, False, separator
        if before.endswith(head + open_text):
            if default is not None and prompt is not None:
                # The default text gives way to the tools.
                draft.concepts[draft.concepts.index(prompt)] = dataclasses.replace(
                    prompt, default_when="without_tools"
                )
            return "system", open_text, close_text, False, separator
    if prompt is not None and prompt.default is None:
        # The template writes a default text only beside tools (Qwen3-Coder, Seed-OSS).
        start = before.rfind(head)
        text = before[start + len(head) : len(before) - len(lead)]
        if start >= 0 and before.endswith(lead) and text and not probe.tokens.markers_in([text]):
            draft.concepts[draft.concepts.index(prompt)] = dataclasses.replace(
                prompt, default=text, default_when="with_tools"
            )
            return "system", lead, close_text, False, ""
    draft.capability(
        "tools", "not derived", f"the tools block opens with {lead!r} after system text"
    )
    return None


def _inside_preamble(
    draft: Draft, base: str, offset: int, around: tuple[str, str]
) -> tuple[str, str] | None:
    """``(open, close)`` where the template writes the block inside the preamble its first
    system turn always starts with (Command R7B's, between its safety and default
    sections): the preamble is cut there, what comes before it the system prompt's
    preamble with tools, the whole its preamble without them, and what comes after it
    closes the block."""
    prompt = _system_prompt(draft)
    if prompt is None or prompt.preamble_with_tools or prompt.preamble_without_tools:
        return None
    if not all(isinstance(piece, (Lit, Marker)) for piece in prompt.preamble):
        return None  # (an option's text is not the preamble's own)
    preamble = text_of(prompt.preamble)
    start = base.find(preamble)
    if not preamble or start < 0 or base.count(preamble) != 1:
        return None
    cut = offset - start
    if not 0 < cut < len(preamble):
        return None
    draft.concepts[draft.concepts.index(prompt)] = dataclasses.replace(
        prompt,
        preamble=(),
        preamble_with_tools=draft.fence(preamble[:cut]),
        preamble_without_tools=prompt.preamble,
    )
    return around[0], around[1] + preamble[cut:]


def _after_dropped_systems(probe: Probe, draft: Draft) -> bool:
    """Whether tools on their own after the first system turn are declared where the template
    drops later system messages (``placement="first_kept"``): the block is written before the
    message after the first system message, which a dropped one does not write.  MiniMax M1's
    family declares that turn's hooks written all the same, and a first system message blank
    once trimmed written as no turn at all, as its template does
    (:class:`~pawlette.formats.minimax.system.BlankSystemDropped`): declared so where the
    template does that too; otherwise the tools are not derived (the draft says why)."""
    prompt = _system_prompt(draft)
    if prompt is None or prompt.placement != "first_kept" or type(prompt) is not SystemPrompt:
        return True
    s1, u1 = probe.sentinel("s", 1), probe.sentinel("u", 1)
    system = draft.frames["system"]
    base = probe.render([message("system", s1), message("user", u1)])
    blank = probe.render([message("system", " "), message("user", u1)])
    if base is None or blank is None or not _turn_taken_out(base, blank, s1, system):
        draft.capability(
            "tools",
            "not derived",
            "the template writes the tools on their own after the first system turn and drops "
            "later system messages: the block, written before the message after the first "
            "system message, would be lost with a dropped one (needs concept: tools after the "
            "first system turn beside dropped system messages)",
        )
        return False
    fields = {item.name: getattr(prompt, item.name) for item in dataclasses.fields(prompt)}
    draft.concepts[draft.concepts.index(prompt)] = BlankSystemDropped(**fields)
    draft.empty_roles.add("system")
    draft.capability(
        "empty system text",
        "derived",
        "a first system message blank once trimmed is written as no turn, not even the "
        "default one (a recorded loss)",
    )
    return True


def _turn_taken_out(base: str, blank: str, s1: str, system: FrameText) -> bool:
    """Whether ``blank`` is ``base`` with the whole system turn holding ``s1`` taken out
    (a span ending with the turn's end, from where the two part or before it)."""
    size = len(base) - len(blank)
    end = system.end + system.after
    if size <= 0 or not system.end:
        return False
    shared = next(
        (at for at, (left, right) in enumerate(zip(base, blank, strict=False)) if left != right),
        len(blank),
    )
    for start in range(shared, -1, -1):
        turn = base[start : start + size]
        if s1 in turn and turn.endswith(end) and base[:start] + base[start + size :] == blank:
            return True
    return False


def _first_system_text(draft: Draft) -> FirstSystemText:
    """The draft's :class:`FirstSystemText` (what the template writes before and after the
    first system message's text), or one that writes nothing."""
    for concept in draft.concepts:
        if isinstance(concept, FirstSystemText):
            return concept
    return FirstSystemText()


def _trail_after_block(
    draft: Draft,
    written: str,
    s1: str,
    trail: str,
    block_of: Callable[[str], tuple[str, str] | None],
) -> tuple[str, str, str, bool, str] | None:
    """The block in the system turn where the first system text's trail, a line after a
    newline, is written after the tools rather than after the text: Ling 3.0's ``detailed
    thinking on``, declared as its family declares it (:class:`ThinkingLine`, which takes
    the trail's place).  None: not derived, the draft says why."""
    line = trail.lstrip("\n")
    separator = trail[: len(trail) - len(line)]
    end = draft.frames["system"].end
    start = written.find(s1 + separator) + len(s1 + separator)
    stop = written.find(line + end, start)
    around = block_of(written[start:stop]) if separator and stop > start else None
    if around is None or line not in THINKING_PHRASES:
        draft.capability(
            "tools",
            "not derived",
            f"beside tools the template writes the first system text's trail {trail!r} after "
            "the tools block, not after the text (needs concept: a first system text's trail "
            "written after the tools)",
        )
        return None
    for number, concept in enumerate(draft.concepts):
        if isinstance(concept, FirstSystemText):
            kept = dataclasses.replace(concept, trail=())
            draft.concepts[number : number + 1] = [kept] if kept != FirstSystemText() else []
            break
    prompt = _system_prompt(draft)
    if prompt is not None and prompt.default == line:
        # Without a system message the line alone is the turn: the default text, which
        # the line written after the tools takes the place of.
        draft.concepts[draft.concepts.index(prompt)] = dataclasses.replace(
            prompt, default_when="without_tools"
        )
    draft.concepts.append(ThinkingLine(line))
    return "system", around[0], around[1], False, separator


def _system_prompt(draft: Draft) -> SystemPrompt | None:
    for concept in draft.concepts:
        if isinstance(concept, SystemPrompt):
            return concept
    return None
