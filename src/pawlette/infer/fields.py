"""What a template does to text and message fields beyond framing them.

- **Whitespace at the ends of text**, per role: kept, trimmed (:class:`~pawlette.declare.Trimmed`,
  with the side it trims and the characters: all whitespace, newlines or spaces), or changed
  some other way (a documented difference: written trimmed, a recorded loss; inference's
  verification then holds no such text).
- **Alternation**: a template that refuses two user messages in a row gets
  :class:`~pawlette.declare.Alternation`.
- **Consecutive user messages** written as one turn: the user frame's opener after a user
  turn (``open_after``), where the joint between their texts is the same wherever it falls;
  otherwise not derived (refused at use).
- **Names**: a ``name`` the template does not write is dropped (:class:`~pawlette.declare.Ignored`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from ..declare import (
    Alternation,
    FirstSystemText,
    LastSystemPrompt,
    Names,
    SystemPrompt,
    Trimmed,
)
from ..declare.pieces import text_of
from .atoms import common_prefix, excerpt
from .draft import Draft
from .empty_texts import derive_empty_answer, derive_unended_answer, empty_answer_shape
from .probe import Probe, message

__all__ = [
    "EDGES",
    "WHITESPACE",
    "Side",
    "derive_alternation",
    "derive_names",
    "derive_whitespace",
    "trimmed",
    "whitespace",
]

# Whitespace around a text's sentinel, one pair per render: a newline, tab and space mixed on
# each side (newlines outermost, then a space outermost), so that each side and each set of
# characters a template may trim writes each pair its own way.
EDGES = (("\n \t\n", "\n\t \n"), (" \n", "\n "))

Side = Literal["both", "start", "end"]

# Python's whitespace (``str.isspace``): what ``strip()`` without an argument trims.
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

# The trims a template may do (:class:`~pawlette.declare.Trimmed`'s ``side`` and
# ``characters``): all whitespace (``trim``, ``strip()``), newlines (``strip('\\n')``) or
# spaces, at both ends or one.
TRIMS: tuple[tuple[Side, str | None], ...] = tuple(
    (side, characters) for characters in (None, "\n", " ") for side in ("both", "start", "end")
)


def trimmed(text: str, side: Side, characters: str | None) -> str:
    """``text`` trimmed as :class:`~pawlette.declare.Trimmed` trims it."""
    if side == "both":
        return text.strip(characters)
    return text.lstrip(characters) if side == "start" else text.rstrip(characters)


def whitespace(
    probe: Probe,
    draft: Draft,
    role: str,
    plain: list[dict[str, object]],
    index: int,
    tools: list[dict[str, Any]] | None = None,
) -> Literal["kept", "changed"] | tuple[Side, str | None]:
    """``"kept"``, the trim (its side and characters) or ``"changed"`` for text of
    ``messages[index]``: what every pair of :data:`EDGES` around it shows (``tools``: given
    with every render)."""
    sentinel = str(plain[index]["content"])
    base = probe.render(plain, tools)
    if base is None:
        return "changed"
    candidates: list[Literal["kept"] | tuple[Side, str | None]] = ["kept", *TRIMS]
    for start, end in EDGES:
        given = start + sentinel + end
        spaced = [dict(item) for item in plain]
        spaced[index]["content"] = given
        written = probe.render(spaced, tools)
        if written is None:
            return "changed"
        candidates = [
            found
            for found in candidates
            if written
            == base.replace(sentinel, given if found == "kept" else trimmed(given, *found))
        ]
    return candidates[0] if candidates else "changed"


def _space_first(probe: Probe, u1: str, a1: str) -> bool:
    """Whether the model's own turn (the text after the generation prompt) begins with
    whitespace before its text: the rest of a fence the prompt stops short of."""
    prompted = probe.render([message("user", u1)], prompt=True)
    written = probe.render([message("user", u1), message("assistant", a1)])
    if prompted is None or written is None or not written.startswith(prompted):
        return False
    own = written[len(prompted) :]
    first = own[: own.find(a1)] if a1 in own else ""
    return bool(first) and not first.strip()


def _first_only(probe: Probe, draft: Draft) -> bool:
    """Whether a later system message's text is written as given (written in place, as the
    first is): then only the first one's is trimmed."""
    found = [item for item in draft.concepts if isinstance(item, SystemPrompt)]
    if len(found) != 1 or isinstance(found[0], LastSystemPrompt):
        return False
    if found[0].placement != "in_place":
        return False
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    s1, s2 = probe.sentinel("s", 1), probe.sentinel("s", 2)
    later = [
        message("system", s1),
        message("user", u1),
        message("assistant", a1),
        message("system", s2),
        message("user", u2),
    ]
    return whitespace(probe, draft, "system", later, 3) == "kept"


def derive_whitespace(probe: Probe, draft: Draft) -> None:
    u1, a1, s1 = probe.sentinel("u", 1), probe.sentinel("a", 1), probe.sentinel("s", 1)
    conversations = {
        "user": ([message("user", u1)], 0),
        "assistant": ([message("user", u1), message("assistant", a1)], 1),
    }
    if "system" in draft.frames:
        conversations["system"] = ([message("system", s1), message("user", u1)], 0)
    # The roles of each trim, in the order first found (one Trimmed each).
    trims: dict[tuple[Side, str | None], list[str]] = {}
    for role, (plain, index) in conversations.items():
        found = whitespace(probe, draft, role, plain, index)
        if found == "kept":
            continue
        trim: tuple[Side, str | None] = ("both", None)
        if found != "changed":
            trim = found
        else:
            # Written trimmed, a recorded loss where it changes the text: a check of the
            # declaration (``pawlette verify``) then holds the template to writing the trimmed
            # text as the declaration does.  Inference's own verification, byte for byte,
            # holds no such text.
            draft.edge_roles.discard(role)
            draft.capability(
                f"whitespace at the ends of {role} text",
                "differs",
                "the template changes it in a way no concept declares; written trimmed (a "
                "recorded loss)",
            )
        if role == "system" and trim == ("end", None) and _first_only(probe, draft):
            # Only the first system message's text loses its end (Poolside Laguna's
            # ``rstrip()``): FirstSystemText, after the SystemPrompt concept.
            draft.concepts.append(FirstSystemText(rstrip=True))
            continue
        trims.setdefault(trim, []).append(role)
    for (side, characters), roles in trims.items():
        # Reading drops whitespace before an assistant's text only where the text is written
        # without any (Trimmed.space_first).
        space_first = (
            "assistant" in roles
            and side != "end"
            and characters is None
            and _space_first(probe, u1, a1)
        )
        draft.concepts.append(
            Trimmed(roles=tuple(roles), space_first=space_first, side=side, characters=characters)
        )
    draft.edge_roles.discard("reasoning")


def derive_alternation(probe: Probe, draft: Draft) -> None:
    u1, u2 = probe.sentinel("u", 1), probe.sentinel("u", 2)
    pair = [message("user", u1), message("user", u2)]
    written = probe.render(pair)
    if written is None:
        draft.concepts.append(Alternation())
        draft.capability(
            "consecutive user messages", "refused", "user and assistant messages must alternate"
        )
        return
    user = draft.frames["user"]
    shape = user.open + u1 + user.end + user.after + user.open + u2 + user.end + user.after
    joined = _joined_open(probe, draft, written)
    if joined is not None:
        # The second message's turn opens otherwise after a user turn (DeepSeek V4 joins
        # consecutive user texts with a blank line): the user frame's open after a user turn.
        user.open_after["user"] = joined
        draft.capability(
            "consecutive user messages",
            "derived",
            f"a user turn after another opens with {joined!r}"
            + ("" if _marked(probe, joined) else " (their texts joined into one turn)"),
        )
    elif not written.endswith(shape):
        # Quote from the first message's text on: what comes before it is the start.
        found = written[written.find(u1) :] if u1 in written else written
        expected = u1 + user.end + user.after + user.open + u2 + user.end + user.after
        draft.capability(
            "consecutive user messages",
            "not derived",
            f"two user messages in a row are written {excerpt(probe.tokens, found)}, where two "
            f"user turns would be {excerpt(probe.tokens, expected)} (needs concept: "
            "consecutive messages joined into one turn)",
        )


def _joined_open(probe: Probe, draft: Draft, written: str) -> str | None:
    """What opens a user turn after another, where it is not the user's opener (the texts
    of two user messages in a row joined by it into one turn), found again after an
    assistant turn; None: the usual opener, or no such shape."""
    user = draft.frames["user"]
    u1, u2 = probe.sentinel("u", 1), probe.sentinel("u", 2)
    close = user.end + user.after
    head = user.open + u1 + close
    if written.count(u1) != 1 or written.count(u2) != 1 or "user" in user.open_after:
        return None
    start = written.find(u1) - len(user.open)
    tail = written[start:]
    if start < 0 or not tail.startswith(head) or not tail.endswith(u2 + close):
        return None
    joined = tail[len(head) : len(tail) - len(u2 + close)]
    if joined == user.open:
        return None
    # The same joint later in a conversation: after an assistant turn, two user messages.
    a1, u3, u4 = probe.sentinel("a", 1), probe.sentinel("u", 3), probe.sentinel("u", 4)
    pair = [message("user", u1), message("assistant", a1)]
    later = probe.render([*pair, message("user", u3), message("user", u4)])
    shorter = probe.render([*pair, message("user", u3)])
    if later is None or shorter is None or later != shorter + joined + u4 + close:
        return None
    return joined


def _marked(probe: Probe, text: str) -> bool:
    """Whether ``text`` holds a special token."""
    return any(len(atom) > 1 and probe.tokens.is_special(atom) for atom in probe.tokens.atoms(text))


def derive_names(probe: Probe, draft: Draft) -> None:
    from ..declare import Ignored

    u1 = probe.sentinel("u", 1)
    plain = probe.render([message("user", u1)])
    named = probe.render([message("user", u1, name=probe.sentinel("n", 1))])
    if named is not None and named == plain:
        draft.concepts.append(Ignored(("name",)))
        draft.capability("names", "dropped", "the template does not write a message's name")
    elif (names := _named_open(probe, draft)) is not None:
        draft.concepts.append(names)
        draft.capability("names", "derived", "written in the turn's opener")
    else:
        draft.capability(
            "names", "not derived", "the template writes a message's name (needs concept: names)"
        )


def _named_open(probe: Probe, draft: Draft) -> Names | None:
    """Where the opener of a system, user and assistant turn writes the message's name, the
    same for each: the pieces before it, those it stands in for, and the text around it
    (:class:`~pawlette.declare.Names`); None: not so."""
    roles = ("system", "user", "assistant")
    if any(role not in draft.frames or draft.frames[role].open_after for role in roles):
        return None
    name = probe.sentinel("n", 1)
    found: set[tuple[int, int, str, str]] | None = None
    for role in roles:
        turn = [message("user", probe.sentinel("u", 1))]
        at_end = role != "system"
        text = probe.sentinel(role[0], 2)
        turn = [*turn, message(role, text)] if at_end else [message(role, text), *turn]
        number = len(turn) - 1 if at_end else 0
        plain = probe.render(turn)
        given = [dict(item) for item in turn]
        given[number]["name"] = name
        named = probe.render(given)
        if plain is None or named is None or plain.count(text) != 1:
            return None
        opener = draft.frames[role].open
        start = plain.find(text) - len(opener)
        if start < 0 or plain[start : start + len(opener)] != opener:
            return None
        shapes = _name_shapes(probe, opener, plain[:start], plain[start + len(opener) :], named)
        found = shapes if found is None else found & shapes
    if not found:
        return None
    at, replaces, lead, trail = min(found, key=lambda shape: len(shape[2] + shape[3]))
    return Names(at=at, replaces=replaces, lead=draft.fence(lead), trail=draft.fence(trail))


def _name_shapes(
    probe: Probe, opener: str, before: str, after: str, named: str
) -> set[tuple[int, int, str, str]]:
    """Each ``(at, replaces, lead, trail)`` that writes ``named`` from the render ``before``
    + ``opener`` + ``after``: the name put after ``at`` of the opener's pieces, in place of
    ``replaces`` more, with ``lead`` and ``trail`` around it."""
    name = probe.sentinel("n", 1)
    pieces = [text_of((piece,)) for piece in probe.tokens.fence(opener)]
    shapes: set[tuple[int, int, str, str]] = set()
    for at in range(len(pieces) + 1):
        for replaces in (0, 1):
            head, tail = "".join(pieces[:at]), "".join(pieces[at + replaces :])
            if at + replaces > len(pieces) or len(named) < len(before + head + tail + after):
                continue
            if not (named.startswith(before + head) and named.endswith(tail + after)):
                continue
            middle = named[len(before + head) : len(named) - len(tail + after)]
            if middle.count(name) == 1:
                lead, _, trail = middle.partition(name)
                shapes.add((at, replaces, lead, trail))
    return shapes


def derive_empty_texts(probe: Probe, draft: Draft) -> None:
    """Messages with no text: written as any other (an empty turn), or not."""
    u1, u2, a1, s1 = (
        probe.sentinel("u", 1),
        probe.sentinel("u", 2),
        probe.sentinel("a", 1),
        probe.sentinel("s", 1),
    )
    conversations: dict[str, tuple[list[dict[str, object]], int]] = {
        "user": ([message("user", u1)], 0),
        "assistant": ([message("user", u1), message("assistant", a1), message("user", u2)], 1),
    }
    if "system" in draft.frames:
        conversations["system"] = ([message("system", s1), message("user", u1)], 0)
    for role, (plain, index) in conversations.items():
        sentinel = str(plain[index]["content"])
        empty = [dict(item) for item in plain]
        empty[index]["content"] = ""
        base = probe.render(plain)
        written = probe.render(empty)
        if base is not None and written == base.replace(sentinel, ""):
            continue
        if role == "system" and written is not None and _absent_when_empty(probe, draft, written):
            continue
        led = role == "assistant" and base is not None and written is not None
        if led and _led_when_not_empty(probe, draft, str(base), str(written), sentinel):
            continue
        if led and derive_empty_answer(probe, draft, str(base), str(written), sentinel):
            continue
        if led and derive_unended_answer(probe, draft, str(base), str(written), sentinel):
            continue
        draft.empty_roles.discard(role)
        shape = ""
        if led:
            shape = empty_answer_shape(probe, draft, str(base), str(written), sentinel)
        if written is None:
            draft.capability(f"empty {role} text", "refused", "the template refuses it")
        elif draft.skip(f"empty {role} text"):
            pass  # (given up after a failed verification: that says why)
        elif draft.status(f"empty {role} text") is None:  # (else said why already)
            draft.capability(
                f"empty {role} text",
                "not derived",
                f"the template writes {_article(role)} {role} message with no text otherwise "
                f"than others{shape or _parting(probe, written, base, sentinel)}"
                + ("" if shape else " (needs concept: empty text)"),
            )


def _led_when_not_empty(probe: Probe, draft: Draft, base: str, written: str, sentinel: str) -> bool:
    """Whether the whitespace before an assistant's trimmed text is written only when the
    text is not empty (GLM-4.6's newline): then it is the text's lead
    (``Trimmed(lead=...)``), no longer the end of the assistant's opener."""
    before = base[: base.find(sentinel)]
    lead = before[len(before.rstrip()) :]
    frame = draft.frames["assistant"]
    if not lead or base.count(sentinel) != 1 or not frame.open.endswith(lead):
        return False
    if written != before[: len(before) - len(lead)] + base[len(before) + len(sentinel) :]:
        return False
    number, trimmed = next(
        (
            (number, concept)
            for number, concept in enumerate(draft.concepts)
            if isinstance(concept, Trimmed) and "assistant" in concept.roles
        ),
        (-1, None),
    )
    if trimmed is None or trimmed.lead:
        return False
    frame.open = frame.open[: len(frame.open) - len(lead)]
    led = dataclasses.replace(trimmed, roles=("assistant",), lead=draft.fence(lead))
    others = tuple(role for role in trimmed.roles if role != "assistant")
    if others:
        draft.concepts[number] = dataclasses.replace(trimmed, roles=others, space_first=False)
        draft.concepts.insert(number + 1, led)
    else:
        draft.concepts[number] = led
    draft.capability(
        "empty assistant text",
        "derived",
        f"{lead!r} before the text is written only when there is text (Trimmed's lead)",
    )
    return True


def _absent_when_empty(probe: Probe, draft: Draft, written: str) -> bool:
    """Whether a first system message with no text is written as no system message (the
    default turn, or none): then the system prompt declares so (``empty_first="absent"``)."""
    u1 = probe.sentinel("u", 1)
    alone = probe.render([message("user", u1)])
    found = [item for item in draft.concepts if isinstance(item, SystemPrompt)]
    if alone is None or len(found) != 1:
        return False
    opened = alone.find(u1) - len(draft.frames["user"].open)
    frame = draft.frames["system"]
    turn = frame.open + frame.end + frame.after
    if (
        found[0].always
        and found[0].placement == "in_place"
        and written == alone[:opened] + turn + alone[opened:]
    ):
        # The format's system turn first, then the empty message as an empty turn of its
        # own (Command R7B).
        draft.concepts[draft.concepts.index(found[0])] = dataclasses.replace(
            found[0], empty_first="own_turn"
        )
        draft.capability(
            "empty system text",
            "derived",
            "the template writes the system turn it writes without a message, then an empty "
            "system turn",
        )
        return True
    if (
        written != alone
        and found[0].default is not None
        and found[0].placement == "in_place"
        and written == draft.begin + alone[opened:]
        and _later_empty_written(probe, dropped=False)
    ):
        # No turn at all: the empty message stands in for the default text (Poolside
        # Laguna's templates, where a system message's text replaces the default).
        draft.concepts[draft.concepts.index(found[0])] = dataclasses.replace(
            found[0], empty_first="none"
        )
        draft.capability(
            "empty system text",
            "dropped",
            "the template writes a first system message with no text as no system turn at all",
        )
        return True
    if written != alone:
        return False
    if isinstance(found[0], LastSystemPrompt):
        return _last_absent_when_empty(probe, draft, found[0])
    if found[0].placement == "gathered":
        return False
    later: Literal["kept", "dropped"] = "kept"
    if found[0].placement == "in_place" and not _later_empty_written(probe, dropped=False):
        if not _later_empty_written(probe, dropped=True):
            draft.capability(
                "empty system text",
                "not derived",
                "the template writes a first system message with no text as no system message, "
                "and a later one otherwise than an empty system turn or nothing (needs "
                "concept: empty later system messages written otherwise)",
            )
            return False
        later = "dropped"  # (Phi-3.5's skips every system message with no text)
    draft.concepts[draft.concepts.index(found[0])] = dataclasses.replace(
        found[0], empty_first="absent", empty_later=later
    )
    draft.capability(
        "empty system text",
        "dropped",
        "the template writes a first system message with no text as no system message"
        + (", and a later one as nothing" if later == "dropped" else ""),
    )
    return True


def _last_absent_when_empty(probe: Probe, draft: Draft, found: SystemPrompt) -> bool:
    """With only the last system message written (:class:`~pawlette.declare.LastSystemPrompt`):
    whether a last one with no text, after one with text, is written as no system message
    too (RWKV World's template keeps the last text and writes it only when it has any)."""
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    turns = [message("user", u1), message("assistant", a1), message("user", u2)]
    later = probe.render(
        [message("system", probe.sentinel("s", 1)), *turns[:2], message("system", ""), turns[2]]
    )
    if later is None or later != probe.render(turns):
        return False
    draft.concepts[draft.concepts.index(found)] = dataclasses.replace(found, empty_first="absent")
    draft.capability(
        "empty system text",
        "dropped",
        "the template writes a last system message with no text as no system message",
    )
    return True


def _later_empty_written(probe: Probe, *, dropped: bool) -> bool:
    """Whether a later system message with no text is written as an empty system turn
    (``dropped``: as nothing, its turn left out too)."""
    u1, u2, a1, s2 = (
        probe.sentinel("u", 1),
        probe.sentinel("u", 2),
        probe.sentinel("a", 1),
        probe.sentinel("s", 2),
    )

    def conversation(text: str) -> list[dict[str, object]]:
        return [
            message("user", u1),
            message("assistant", a1),
            message("system", text),
            message("user", u2),
        ]

    plain = probe.render(conversation(s2))
    if dropped:
        without = [item for item in conversation(s2) if item["content"] != s2]
        expected = probe.render(without)
    else:
        expected = None if plain is None else plain.replace(s2, "")
    return plain is not None and expected is not None and probe.render(conversation("")) == expected


def _parting(probe: Probe, written: str, base: str | None, sentinel: str) -> str:
    """Where the render with an empty text parts from the render with a text, less the
    text: ``: after X it writes Y where a turn with text gives Z`` (or nothing to say)."""
    if base is None:
        return ""
    expected = base.replace(sentinel, "")
    shared = common_prefix(probe.tokens, written, expected)
    tokens = probe.tokens
    return (
        f": after {excerpt(tokens, shared, 40, last=True)} it writes "
        f"{excerpt(tokens, written[len(shared) :], 40)} where the turn with its text taken "
        f"out gives {excerpt(tokens, expected[len(shared) :], 40)}"
    )


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
