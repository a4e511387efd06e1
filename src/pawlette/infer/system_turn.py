"""The system turn: its frame, a default text and how a message's text joins it, where later
system messages go, or a system text with no turn of its own.

Probes (``Zs1q`` is system text 1; see :mod:`.frames`)::

    [system, user, assistant]    → the system turn's opener and close
    [system, user, assistant, system, user]   → where later system messages go
"""

from __future__ import annotations

from .atoms import Tokens, excerpt
from .draft import Draft, FrameText
from .probe import Probe, Underivable, message
from .tools import insertions

__all__ = ["LAST_KEPT", "derive_system"]


def derive_system(probe: Probe, draft: Draft) -> None:
    """The system turn: its frame, a default text, where later system messages go."""
    from ..declare import FirstSystemText, LastSystemPrompt, SystemPrompt
    from ..formats.muse.system import DefaultWithoutSystem

    if draft.skip("system messages"):
        return
    tokens = probe.tokens
    s1, s2 = probe.sentinel("s", 1), probe.sentinel("s", 2)
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    system, system2 = message("system", s1), message("system", s2)
    user, user2, assistant = message("user", u1), message("user", u2), message("assistant", a1)
    user_frame, assistant_frame = draft.frames["user"], draft.frames["assistant"]
    head = draft.begin  # the start before the first user turn, with a default system turn
    written = probe.render([system, user])
    if written is None:
        draft.capability(
            "system messages",
            "refused",
            f"the template refuses them ({probe.refusal([system, user])[:100]})",
        )
        return
    try:
        before, between, tail = probe.cut(written, [s1, u1], "a system message")
    except Underivable as error:
        prompted = _only_with_prompt(probe, written) if s1 not in written else None
        draft.capability("system messages", "not derived", prompted or str(error))
        return
    user_open = user_frame.open
    if not between.endswith(user_open) or tail != user_frame.end + user_frame.after:
        if _in_user_turn(probe, draft, before, between, tail):
            return
        draft.capability(
            "system messages",
            "not derived",
            "the template writes a system message into the turns around it "
            f"({excerpt(tokens, written, 200)}; "
            "needs concept: system text inside another turn)",
        )
        return
    moved = _before_last_user(probe, written)
    if moved is not None:
        draft.capability("system messages", "not derived", moved)
        return
    system_close = between[: len(between) - len(user_open)]
    frame = FrameText()
    frame.close(system_close)
    default: str | None = None
    always = False
    lead = trail = default_after = ""
    if not head or (before.startswith(head) and (not head.startswith(before) or system_close)):
        # (the start without a system message begins the one with it; equal to it, the
        # message's text is bare after that start, and its close tells it from the user's)
        begin, opener = head, before[len(head) :]
    elif (
        head.startswith(before)
        and head.endswith(system_close)
        and len(head) >= len(before) + len(system_close)
    ):
        text = head[len(before) : len(head) - len(system_close)]
        if text:
            default = text
        else:
            always = True
        begin = _begin_of(probe, before)
        opener = before[len(begin) :]
    elif (after := _after_default(head, before, system_close)) is not None:
        # The default turn closes as a message's does, then whitespace of its own (Kimi K2
        # Instruct's newline after it alone).
        default, default_after = (
            head[len(before) : len(head) - len(after)],
            after[len(system_close) :],
        )
        begin = _begin_of(probe, before)
        opener = before[len(begin) :]
    elif (added := _added_text(probe, head, before, system_close)) is not None:
        # The message's text is added to the default system turn, after its default text
        # (the default in the opener, ``lead`` before the text) or before it (the default
        # after ``trail``).
        begin, opener, system_close, default, lead, trail = added
        frame.close(system_close)
        always = default is None
    else:
        draft.capability(
            "system messages", "not derived", _default_mismatch(tokens, head, before, system_close)
        )
        return
    if not opener and not system_close and not begin:
        draft.capability(
            "system messages",
            "not derived",
            "system text is written bare at the very start with no fence before it",
        )
        return
    if opener and not opener.strip() and not system_close:
        draft.capability(
            "system messages",
            "not derived",
            f"a system message's text is written after {excerpt(tokens, begin, last=True)}"
            + (" (the default system text)" if _has_text(tokens, begin) else "")
            + f" with only {opener!r} before it and nothing after it: no fence tells it from "
            "the text around it (needs concept: system text inside the default system block)",
        )
        return
    frame.open = opener
    draft.begin = begin
    placement, joiner, preamble = _placement(probe, draft, frame, written)
    if placement is None:
        return
    draft.frames["system"] = frame
    fence = draft.fence
    kind: type[SystemPrompt] = SystemPrompt
    where = ""
    if placement == LAST_KEPT:  # (only the last system message, at the start)
        kind, placement = LastSystemPrompt, "gathered"
    elif placement == WITHOUT_SYSTEM:
        kind, placement = DefaultWithoutSystem, "in_place"
        where = ", the default turn only when no message is a system message"
    heading = ""
    if placement == "gathered" and lead:
        heading, lead = lead, ""  # (written before the gathered texts, as the lead is)
    concept = kind(
        default=default,
        always=always,
        preamble=fence(preamble),
        placement=placement,  # type: ignore[arg-type]
        joiner=joiner,
        heading=fence(heading),
        default_after=fence(default_after),
    )
    draft.concepts.append(concept)
    if lead or trail:
        draft.concepts.append(FirstSystemText(lead=fence(lead), trail=fence(trail)))
    where += f", after the default text and {lead or heading!r}" if lead or heading else ""
    where += f", before {trail!r} (the default text)" if trail else ""
    where += f"; {default_after!r} after the default turn alone" if default_after else ""
    draft.capability("system messages", "derived", f"placement {placement}{where}")
    del tokens, system2, user2, assistant, assistant_frame


def _later_alone(probe: Probe, alone: str | None, lone: str | None) -> str | None:
    """Why a system message after the first user message, with none before it, is not
    written as a turn in its place (``alone``: that conversation; ``lone``: one user message
    alone); None: it is, and the start is the one a conversation without it has."""
    u1, a1, s2 = probe.sentinel("u", 1), probe.sentinel("a", 1), probe.sentinel("s", 2)
    said = "a system message after the first user message, with none before it,"
    if alone is None or lone is None:
        return f"the template refuses {said[2:]}"
    if s2 not in alone:
        return f"the template writes no {said[2:]}"
    if alone.find(s2) < alone.find(a1):
        return (
            f"{said} is written before the turns before it (needs concept: a moved system message)"
        )
    start, usual = alone[: alone.find(u1)], lone[: lone.find(u1)]
    if start == usual:
        return None
    tokens = probe.tokens
    offset, removed, inserted = insertions(tokens, usual, start)[0]
    return (
        f"{said} changes the start of the conversation: after "
        f"{excerpt(tokens, usual[:offset], 40, last=True) if offset else 'the start'} the "
        f"template writes {excerpt(tokens, inserted, 40) if inserted else 'nothing'} where a "
        f"conversation without it writes {excerpt(tokens, removed, 40) if removed else 'nothing'}"
        " (needs concept: a start that depends on a later system message)"
    )


def _after_default(head: str, before: str, close: str) -> str | None:
    """The end of the default system turn (``head``), its close and whitespace after it,
    where that turn is a system message's (``before`` it, the text, ``close``) with a
    default text and whitespace written after it alone; None: it is not."""
    if not close or not head.startswith(before):
        return None
    at = head.rfind(close)
    if at <= len(before) or head[at + len(close) :].strip() or at + len(close) == len(head):
        return None
    return head[at:]


def _added_text(
    probe: Probe, head: str, before: str, close: str
) -> tuple[str, str, str, str | None, str, str] | None:
    """Where a system message's text is added to the default system turn (``head``: the
    start without a system message; ``before``, the text, ``close``: with one):
    ``(begin, opener, close, default, lead, trail)``, the turn's close taken to begin at its
    special token.  After the default text: the opener holds it, ``lead`` comes between it
    and the message's text, no default (the turn is always written).  Before it: the
    default text (the turn without a message) is also the end of ``trail``, written after
    the message's text.  None: neither."""
    tokens = probe.tokens
    if not close or not _marked(tokens, close):
        return None
    if head.endswith(close) and before.startswith(head[: len(head) - len(close)]):
        kept = head[: len(head) - len(close)]
        lead = before[len(kept) :]
        if not lead.strip() and not (lead and _has_text(tokens, kept)):
            return None
        begin = _begin_of(probe, before)
        if not kept.startswith(begin) or len(kept) <= len(begin):
            return None
        return begin, kept[len(begin) :], close, None, lead, ""
    if not head.startswith(before) or not before:
        return None
    rest = head[len(before) :]
    atoms = tokens.atoms(rest)
    cut = len(atoms)
    while cut and (not atoms[cut - 1].strip() or _special(tokens, atoms[cut - 1])):
        cut -= 1
    default, end = "".join(atoms[:cut]), "".join(atoms[cut:])
    if not default.strip() or not end or not close.endswith(default + end):
        return None
    trail = close[: len(close) - len(end)]
    if trail == default:
        return None
    begin = _begin_of(probe, before)
    return begin, before[len(begin) :], end, default, "", trail


def _special(tokens: Tokens, atom: str) -> bool:
    return len(atom) > 1 and tokens.is_special(atom)


def _marked(tokens: Tokens, text: str) -> bool:
    """Whether ``text`` holds a special token (a fence the reader can find)."""
    return any(_special(tokens, atom) for atom in tokens.atoms(text))


def _in_user_turn(probe: Probe, draft: Draft, before: str, between: str, tail: str) -> bool:
    """Whether a leading system message's text opens a user turn's text, joined to it by
    ``between`` (:class:`~pawlette.declare.SystemInTurn`): the next message's (Gemma 3) or
    the last one's (Mistral Nemo); declared so when it is."""
    from ..declare import SystemInTurn

    user = draft.frames["user"]
    s1, u1, u2 = probe.sentinel("s", 1), probe.sentinel("u", 1), probe.sentinel("u", 2)
    a1 = probe.sentinel("a", 1)
    if before != draft.begin + user.open or tail != user.end + user.after or not between:
        return False
    if _marked(probe.tokens, between):
        return False  # (a special token between them: a turn of its own, not joined text)
    turns = [message("user", u1), message("assistant", a1), message("user", u2)]
    alone = probe.render(turns)
    longer = probe.render([message("system", s1), *turns])
    if alone is None or longer is None:
        return False
    host: str | None = None
    if longer == alone.replace(u1, s1 + between + u1, 1):
        host = "next"
    elif longer == alone.replace(u2, s1 + between + u2, 1):
        host = "last_user"
    if host is None:
        return False
    draft.concepts.append(SystemInTurn(host=host, joiner=between))  # type: ignore[arg-type]
    draft.capability(
        "system messages",
        "derived",
        f"no turn of its own: its text and {between!r} open the "
        + ("next user message's" if host == "next" else "last user message's"),
    )
    later = probe.render([*turns[:2], message("system", probe.sentinel("s", 2)), turns[2]])
    if later is None:
        draft.capability("later system messages", "refused", "the template refuses them")
    else:
        draft.capability(
            "later system messages",
            "not derived",
            "a system message after the first is written where a leading one has no turn "
            "(needs concept: later system messages with a leading one in another turn)",
        )
    return True


def _has_text(tokens: Tokens, text: str) -> bool:
    """Whether ``text`` holds words besides its special tokens (a default prompt)."""
    return any(len(atom) == 1 and atom.isalpha() for atom in tokens.atoms(text))


def _default_mismatch(tokens: Tokens, head: str, before: str, close: str) -> str:
    """Why the start without a system message (``head``) is not a system message's turn
    (``before``, the text, ``close``) with a default text: where the template puts the
    message's text, or how its default turn ends."""
    if close and head.endswith(close) and before.startswith(head[: len(head) - len(close)]):
        default = head[: len(head) - len(close)]
        return (
            "the template writes a system message's text inside its default system turn, "
            f"after the default text ({excerpt(tokens, default, 60, last=True)}) and "
            f"{excerpt(tokens, before[len(default) :], 60)} (needs concept: system text added "
            "to a default system prompt)"
        )
    if head.startswith(before) and close.endswith(head[len(before) :].lstrip()) and close:
        return (
            "the template writes a system message's text inside its default system turn, "
            f"before the default text: {excerpt(tokens, close, 80)} follows it (needs concept: "
            "system text added to a default system prompt)"
        )
    if head.startswith(before) and close and close in head[len(before) :]:
        ending = head[head.rindex(close) :]
        return (
            f"the template's default system turn ({excerpt(tokens, head, 80)}) ends with "
            f"{ending!r}, a system message's turn with {close!r} (needs concept: a default "
            "system turn with its own close)"
        )
    return (
        f"the template starts {excerpt(tokens, head, 80)} without a system message, and "
        f"writes {excerpt(tokens, before, 80)} before a system message's text and {close!r} "
        "after it: the first is not the second with a default text (needs concept: a default "
        "system turn with other fences)"
    )


def _begin_of(probe: Probe, before: str) -> str:
    """The ``begin`` fence at the start of a system turn's opener: the tokenizer's BOS token
    when the opener starts with it and the template writes it (SmolLM2's BOS token is
    ``<|im_start|>``, which its template never names: every turn opens with that text)."""
    bos = probe.runner.variables.get("bos_token")
    named = "bos_token" in probe.runner.template
    if named and isinstance(bos, str) and bos and before.startswith(bos):
        return bos
    return ""


LAST_KEPT = "last_kept"
""":func:`_placement`'s answer for a template that writes only the last system message,
where the first goes: a :class:`~pawlette.declare.LastSystemPrompt`, gathered."""

WITHOUT_SYSTEM = "without_system"
""":func:`_placement`'s answer for a template that writes every system message in place and
its default system turn only when no message of the conversation is a system message:
Muse Glimmer's :class:`~pawlette.formats.muse.system.DefaultWithoutSystem`, in place."""

_WITHOUT_SYSTEM_NEEDS = (
    "(needs concept: a default system turn written only without any system message)"
)


def _placement(
    probe: Probe, draft: Draft, frame: FrameText, written: str
) -> tuple[str | None, str, str]:
    """Where a system message after the first goes: ``(placement, joiner, preamble)``; the
    preamble is what the first system turn's opener writes beyond a later one's."""
    s1, s2 = probe.sentinel("s", 1), probe.sentinel("s", 2)
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    conversation = [
        message("system", s1),
        message("user", u1),
        message("assistant", a1),
        message("system", s2),
        message("user", u2),
    ]
    if draft.skip("later system messages"):
        return "first_only", "\n\n", ""
    later = probe.render(conversation)
    if later is None:
        draft.capability("later system messages", "refused", "the template refuses them")
        return "first_only", "\n\n", ""
    assistant = draft.frames["assistant"]
    user = draft.frames["user"]
    counts = [later.count(text) for text in (s1, s2, u1)]
    if counts == [1, 1, 1] and later.find(s1) < later.find(s2) < later.find(u1):
        before = later[: later.find(s1)]
        joiner = later[later.find(s1) + len(s1) : later.find(s2)]
        draft.capability(
            "later system messages", "derived", f"gathered into the first, joined by {joiner!r}"
        )
        del before
        return "gathered", joiner, ""
    without = probe.render([item for item in conversation if item["content"] != s2])
    if s2 not in later and s1 in later and later == without:
        # The template writes the first system message and skips the others (SmolLM3's).
        draft.capability(
            "later system messages", "dropped", "the template writes only the first system message"
        )
        return "first_kept", "\n\n", ""
    if s1 not in later and s2 in later and later.find(s2) < later.find(u1):
        # The last system message wins (a template that sets its system text in a loop):
        # written at the start, where the first goes (LastSystemPrompt, gathered).
        draft.capability(
            "later system messages",
            "dropped",
            "the template writes only the last system message, where the first goes",
        )
        return LAST_KEPT, "\n\n", ""
    try:
        pieces = probe.cut(later, [s1, u1, a1, s2, u2], "a later system message")
    except Underivable as error:
        draft.capability(
            "later system messages",
            "not derived",
            str(error) + " (needs concept: later system messages dropped or moved)",
        )
        return "first_only", "\n\n", ""
    after_assistant = pieces[3]
    between = pieces[4]
    tail = assistant.end + assistant.after
    close = frame.end + frame.after
    if not after_assistant.startswith(tail) or not between.startswith(close):
        draft.capability(
            "later system messages",
            "not derived",
            f"written as {after_assistant + s2 + between!r}, not as a system turn",
        )
        return "first_only", "\n\n", ""
    later_open = after_assistant[len(tail) :]
    user_open = between[len(close) :]
    alone = probe.render(
        [message("user", u1), message("assistant", a1), message("system", s2), message("user", u2)]
    )
    lone = probe.render([message("user", u1)])
    moved = _later_alone(probe, alone, lone)
    default_turn = _default_turn_removed(probe, draft, frame, alone, lone)
    if default_turn is not None:
        return _without_system(probe, draft, frame, default_turn, later_open, user_open)
    if moved is not None:
        draft.capability("later system messages", "not derived", moved)
        return "first_only", "\n\n", ""
    if user_open != user.open:
        draft.capability(
            "later system messages",
            "not derived",
            "the user turn after a later system message opens differently",
        )
        return "first_only", "\n\n", ""
    if later_open == frame.open:
        return "in_place", "\n\n", ""
    if frame.open.startswith(later_open):
        preamble = frame.open[len(later_open) :]
        frame.open = later_open
        return "in_place", "\n\n", preamble
    at = frame.open.find(later_open) if later_open else -1
    start = draft.begin + frame.open[: max(at, 0)]
    if at > 0 and lone is not None and lone.startswith(start):
        # What the first turn's opener holds before a later one's is written at the start
        # of every conversation (Poolside Laguna's ``〈|EOS|〉``): the begin fence; what it
        # holds after it, the preamble.
        preamble = frame.open[at + len(later_open) :]
        draft.begin, frame.open = start, later_open
        return "in_place", "\n\n", preamble
    draft.capability(
        "later system messages",
        "not derived",
        f"a later system turn opens with {later_open!r}, the first with {frame.open!r}",
    )
    return "first_only", "\n\n", ""


def _default_turn_removed(
    probe: Probe, draft: Draft, frame: FrameText, alone: str | None, lone: str | None
) -> str | None:
    """The default system turn a conversation of one user message (``lone``) opens with,
    where a system message after the first user message, with none before it (``alone``),
    leaves that turn out: the conversation then opens with the user's turn.  None: it does
    not (no default turn, or one written either way)."""
    u1 = probe.sentinel("u", 1)
    if alone is None or lone is None or u1 not in alone or u1 not in lone:
        return None
    begin, user_open = draft.begin, draft.frames["user"].open
    usual, start = lone[: lone.find(u1)], alone[: alone.find(u1)]
    if start != begin + user_open or not usual.startswith(begin) or not usual.endswith(user_open):
        return None
    turn = usual[len(begin) : len(usual) - len(user_open)]
    close = frame.end + frame.after
    if len(turn) <= len(frame.open) + len(close):
        return None
    return turn if turn.startswith(frame.open) and turn.endswith(close) else None


def _without_system(
    probe: Probe,
    draft: Draft,
    frame: FrameText,
    default_turn: str,
    later_open: str,
    user_open: str,
) -> tuple[str | None, str, str]:
    """:func:`_placement` for a template whose default system turn (``default_turn``) is
    written only when no message is a system message: every system message in place, as
    Muse Glimmer's concept writes them, where that concept writes a system text as the
    template does; else later system messages are not derived, saying what the template
    does."""
    said = (
        f"the template writes its default system turn ({excerpt(probe.tokens, default_turn, 60)}) "
        "only when no message of the conversation is a system message: a system message after "
        "the first user message, with none before it, is written in its place and the "
        "conversation opens with the user's turn"
    )
    if user_open != draft.frames["user"].open or later_open != frame.open:
        draft.capability(
            "later system messages",
            "not derived",
            f"{said}; that system turn opens with {later_open!r} and the user turn after it "
            f"with {user_open!r}, where the first system turn opens with {frame.open!r} and a "
            f"user turn with {draft.frames['user'].open!r} {_WITHOUT_SYSTEM_NEEDS}",
        )
        return "first_only", "\n\n", ""
    unlike = _effort_unlike(probe)
    if unlike is not None:
        draft.capability("later system messages", "not derived", f"{said}; {unlike}")
        return "first_only", "\n\n", ""
    draft.capability(
        "later system messages",
        "derived",
        "written in place; the default system turn only when no message is a system message "
        "(Muse Glimmer's DefaultWithoutSystem: a system text's 'reasoning effort' written "
        "'reasoning strength', as the template writes it)",
    )
    return WITHOUT_SYSTEM, "\n\n", ""


def _effort_unlike(probe: Probe) -> str | None:
    """Why Muse Glimmer's :class:`~pawlette.formats.muse.system.DefaultWithoutSystem` (the
    one concept that writes a default system turn only without any system message) does not
    write a system text as the template does: it writes the four spellings of "reasoning
    effort" as "reasoning strength" (Muse Glimmer's template does).  None: it does."""
    from ..formats.muse.system import EFFORT_SPELLINGS, normalised

    s1, u1 = probe.sentinel("s", 1), probe.sentinel("u", 1)
    text = " ".join((s1, *(spelling for spelling, _ in EFFORT_SPELLINGS)))
    written = probe.render([message("system", text), message("user", u1)])
    if written is None:
        return (
            f"the template refuses a system message holding {text!r} "
            f"({probe.refusal([message('system', text), message('user', u1)])[:100]}) "
            f"{_WITHOUT_SYSTEM_NEEDS}"
        )
    if written.count(normalised(text)) == 1 and text not in written:
        return None
    how = "as given" if text in written else "otherwise"
    return (
        f"it writes a system message's 'Reasoning effort' {how}, where the one concept that "
        "writes such a default turn (Muse Glimmer's) writes 'Reasoning strength' "
        f"{_WITHOUT_SYSTEM_NEEDS}"
    )


_BEFORE_PROMPT_NEEDS = "(needs concept: a system turn written before the generation prompt)"
_BEFORE_LAST_NEEDS = "(needs concept: a system turn written before the last user turn)"


def _only_with_prompt(probe: Probe, written: str) -> str | None:
    """Why a system message's text is missing from (system, user) rendered without the
    generation prompt (``written``), where the template writes it only with the prompt,
    after the last turn; None: it does not."""
    s1, u1 = probe.sentinel("s", 1), probe.sentinel("u", 1)
    prompted = probe.render([message("system", s1), message("user", u1)], prompt=True)
    if prompted is None or prompted.count(s1) != 1 or not prompted.startswith(written):
        return None
    tokens = probe.tokens
    added = prompted[len(written) :]
    at = added.find(s1)
    return (
        "the template writes a system message's text only with the generation prompt: "
        f"(system, user) without the prompt ends {excerpt(tokens, written, 60, last=True)} "
        f"with no system text, and with it goes on {excerpt(tokens, added[:at], 60)}, the "
        f"text, {excerpt(tokens, added[at + len(s1) :], 60)}; expected a system turn at the "
        f"start of every render {_BEFORE_PROMPT_NEEDS}"
    )


def _before_last_user(probe: Probe, written: str) -> str | None:
    """Why a first system message's turn, written before the user turn in (system, user)
    (``written``), is not at the start of the conversation: the template writes it before
    the last user turn, after the turns before that one.  None: it is at the start."""
    s1, u1, u2 = probe.sentinel("s", 1), probe.sentinel("u", 1), probe.sentinel("u", 2)
    a1 = probe.sentinel("a", 1)
    longer = probe.render(
        [message("system", s1), message("user", u1), message("assistant", a1), message("user", u2)]
    )
    if longer is None or any(longer.count(text) != 1 for text in (s1, u1, a1, u2)):
        return None
    if longer.find(s1) < longer.find(u1):
        return None
    tokens = probe.tokens
    if longer.find(a1) < longer.find(s1) < longer.find(u2):
        where = "before the second user turn (the last)"
    else:
        where = "after the first user turn"
    return (
        "the template writes the first system message's turn before the last user turn, not "
        f"at the start: (system, user, assistant, user) holds it {where}, after "
        f"{excerpt(tokens, longer[: longer.find(s1)], 60, last=True)}, where (system, user) "
        f"opens with it ({excerpt(tokens, written[: written.find(s1)], 60)} and the text); "
        f"expected the system turn first in every render {_BEFORE_LAST_NEEDS}"
    )
