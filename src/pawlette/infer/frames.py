"""The turn frames, the start of the conversation, the generation prompt and the system turn.

Probes (``Zu1q`` is user text 1, ``Za1q`` assistant text 1, ``Zs1q`` system text 1)::

    [user]                       with and without the generation prompt
    [user, assistant]
    [user, assistant, user]      → before Zu1q: the start and the user's opener;
                                   Zu1q..Za1q: the user's close, the assistant's opener;
                                   Za1q..Zu2q: the assistant's close, the user's opener
    [system, user, assistant]    → the system turn's opener and close
    [system, user, assistant, system, user]   → where later system messages go

The user's opener is what both the start and the text after an assistant turn end with; what
the start holds before it is the ``begin`` fence and, when the template writes one without
being given a system message, a default system turn.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from ..declare import Marker
from .atoms import Tokens, common_prefix, common_suffix, excerpt
from .draft import Draft, FrameText, split_end
from .probe import Probe, Underivable, message

__all__ = ["derive_frames", "derive_system", "plain_ends"]


def derive_frames(probe: Probe, draft: Draft) -> None:
    """The user and assistant frames, the start, the generation prompt (or
    :class:`Underivable`).  Turns that cannot be derived from the renders as they are may
    be, once the generation prompt the template writes after every render is left out
    (:func:`_always_prompted`)."""
    try:
        _derive_frames(probe, draft)
    except Underivable:
        if probe.always_prompt or not _always_prompted(probe, draft):
            raise
    if probe.always_prompt:
        draft.prompt_always = True
        draft.notes.append(
            f"The template writes the generation prompt ({probe.always_prompt!r}) after every "
            "render, asked for or not (PromptAlways)."
        )


def _always_prompted(probe: Probe, draft: Draft) -> bool:
    """Whether the turns derive once the text every render ends with, whatever
    ``add_generation_prompt`` says, is taken for a generation prompt written always
    (Phi-4-mini's tool template ends every render with ``<|assistant|>``): the shortest
    such text that begins with a special token and derives, kept in
    :attr:`Probe.always_prompt`.  False: none does (the draft is as it was given)."""
    tokens = probe.tokens
    u1, a1 = probe.sentinel("u", 1), probe.sentinel("a", 1)
    user, assistant = message("user", u1), message("assistant", a1)
    plain = probe.render([user])
    if plain is None or plain != probe.render([user], prompt=True) or u1 not in plain:
        return False
    two = probe.render([user, assistant]) or ""
    atoms = tokens.atoms(plain[plain.rfind(u1) + len(u1) :])
    given = {
        field.name: copy.copy(getattr(draft, field.name)) for field in dataclasses.fields(draft)
    }
    for cut in range(len(atoms) - 1, -1, -1):
        written = "".join(atoms[cut:])
        if not (len(atoms[cut]) > 1 and tokens.is_special(atoms[cut])) or not two.endswith(written):
            continue
        probe.always_prompt = written
        try:
            _derive_frames(probe, draft)
        except Underivable:
            _restore(draft, given)
            continue
        return True
    probe.always_prompt = ""
    return False


def _restore(draft: Draft, given: dict[str, Any]) -> None:
    """``draft`` as it was before a derivation that failed (``given``: its fields, each
    copied one level deep: a derivation sets fields, frames and notes, nothing deeper)."""
    for name, value in given.items():
        setattr(draft, name, copy.copy(value))


def _derive_frames(probe: Probe, draft: Draft) -> None:
    tokens = probe.tokens
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    user, user2, assistant = message("user", u1), message("user", u2), message("assistant", a1)
    from .tools import PROBE_TOOLS

    if probe.render([user]) is None and probe.render([user], list(PROBE_TOOLS)) is not None:
        # A tool_use template (Hermes 2 Pro's, Command R+'s): its model's other template
        # serves requests without tools, and inference probes turns without them.
        raise Underivable(
            "the template refuses a conversation of one user message without tools ("
            + probe.refusal([user])[:120]
            + ") and renders it given tools: it is a template for requests with tools only "
            "(needs concept: a template that always has tools)"
        )
    plain = probe.required("a conversation of one user message", [user])
    prompted = probe.required("a generation prompt", [user], prompt=True)
    if not prompted.startswith(plain):
        plain = _closing(probe, draft, plain, prompted)
    three = probe.required("a user, assistant, user conversation", [user, assistant, user2])
    two = probe.required("a user, assistant conversation", [user, assistant])
    start, user_to_assistant, assistant_to_user, last_user = probe.cut(
        three, [u1, a1, u2], "the user and assistant messages"
    )
    if plain != start + u1 + last_user:
        raise Underivable(
            f"the template writes a lone user message ({plain!r}) unlike the same message in a "
            f"longer conversation ({start + u1 + last_user!r})"
        )
    generation_prompt = prompted[len(plain) :]
    if not user_to_assistant.startswith(last_user):
        raise Underivable(
            f"the user's turn ends with {last_user!r} when it is last but with "
            f"{user_to_assistant!r} before an assistant turn (needs concept: a close that depends "
            "on what follows)"
        )
    assistant_open = user_to_assistant[len(last_user) :]
    two_start, two_between, assistant_tail = probe.cut(two, [u1, a1], "a user and assistant")
    if two_start != start or not two_between.startswith(user_to_assistant):
        raise Underivable(
            "the template writes the user's turn differently when an assistant turn ends the "
            "conversation"
        )
    # What the last assistant turn holds beyond the others (an empty reasoning block): the
    # reasoning stage reads it.
    draft.last_extra = two_between[len(user_to_assistant) :]
    user_frame = FrameText()
    assistant_frame = FrameText(open=assistant_open)
    user_frame.close(last_user)
    if assistant_to_user.startswith(assistant_tail) and start.endswith(
        assistant_to_user[len(assistant_tail) :]
    ):
        user_open = assistant_to_user[len(assistant_tail) :]
        assistant_frame.close(assistant_tail)
    else:
        user_open = common_suffix(tokens, start, assistant_to_user)
        middle = assistant_to_user[: len(assistant_to_user) - len(user_open)]
        if assistant_tail.strip() and middle.startswith(assistant_tail):
            # The last assistant turn ends as the others do, and what follows an earlier
            # one (OLMo 2's newline) opens the next user turn.
            assistant_frame.close(assistant_tail)
            user_frame.open_after["assistant"] = assistant_to_user[len(assistant_tail) :]
        elif assistant_tail.strip():
            raise Underivable(
                f"the assistant's turn ends with {assistant_tail!r} when it is last but with "
                f"{middle!r} before a user turn (needs concept: a close that depends on what "
                "follows)"
            )
        else:
            # The last assistant turn has no end: the end is written as part of the next
            # opener.
            end, _ = split_end(middle)
            assistant_frame.end, assistant_frame.after = "", assistant_tail
            if end:
                assistant_frame.also_end.append(end)
                draft.notes.append(
                    f"The template writes no end after the last assistant turn; {end!r} before "
                    "the next turn is read as the end of the assistant's turn."
                )
            user_frame.open_after["assistant"] = assistant_to_user
    if not user_open and not user_frame.end:
        raise Underivable(
            "the user's turn has neither an opener nor an end (nothing tells it from the "
            "assistant's)"
        )
    user_frame.open = user_open
    draft.begin = start[: len(start) - len(user_open)]
    draft.frames["user"] = user_frame
    draft.frames["assistant"] = assistant_frame
    if generation_prompt != assistant_open:
        assistant_frame.prompt_after["user"] = generation_prompt
        rest = assistant_open[len(generation_prompt) :]
        if generation_prompt and assistant_open.startswith(generation_prompt) and not rest.strip():
            # The model writes the rest of the opener: read as layout after the prompt.
            draft.prompt_rest = (generation_prompt, rest)
    for end in plain_ends(draft):
        draft.notes.append(
            f"The assistant's turn ends with plain text ({end!r}, no special token): an answer "
            "holding it cannot be read back whole (a reader takes it for the end of the turn), "
            "so answers are verified without it."
        )
    if not generation_prompt:
        draft.notes.append(
            "The template writes no generation prompt: the assistant's turn follows the user's "
            "directly."
        )


def plain_ends(draft: Draft) -> tuple[str, ...]:
    """The texts that end an assistant turn and hold no special token: a model's answer
    cannot hold them (its reader would end the turn there)."""
    frame = draft.frames.get("assistant")
    if frame is None:
        return ()
    tokens = draft.tokens
    return tuple(
        text
        for text in (frame.end, *frame.also_end)
        if text
        and not any(len(atom) > 1 and tokens.is_special(atom) for atom in tokens.atoms(text))
    )


def _closing(probe: Probe, draft: Draft, plain: str, prompted: str) -> str:
    """The conversation's text without what the template writes after the last turn only
    when no generation prompt follows (Phi-4-mini's ``eos_token``): one special token,
    declared as :class:`~pawlette.declare.ConversationEnd` (or :class:`Underivable`)."""
    closing = plain[len(common_prefix(probe.tokens, prompted, plain)) :]
    pieces = probe.tokens.fence(closing)
    if len(pieces) != 1 or not isinstance(pieces[0], Marker):
        raise Underivable(
            f"the template writes {closing!r} after the last turn when no generation prompt "
            "follows, and not before the prompt (needs concept: a conversation's end that is "
            "not one special token)"
        )
    probe.closing = draft.closing = closing
    return plain[: -len(closing)]


def derive_system(probe: Probe, draft: Draft) -> None:
    """The system turn: its frame, a default text, where later system messages go."""
    from ..declare import FirstSystemText, LastSystemPrompt, SystemPrompt

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
        draft.capability("system messages", "not derived", str(error))
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
    system_close = between[: len(between) - len(user_open)]
    frame = FrameText()
    frame.close(system_close)
    default: str | None = None
    always = False
    lead = trail = default_after = ""
    if not head or (before.startswith(head) and not head.startswith(before)):
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
    if placement == LAST_KEPT:  # (only the last system message, at the start)
        kind, placement = LastSystemPrompt, "gathered"
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
    where = f", after the default text and {lead or heading!r}" if lead or heading else ""
    where += f", before {trail!r} (the default text)" if trail else ""
    where += f"; {default_after!r} after the default turn alone" if default_after else ""
    draft.capability("system messages", "derived", f"placement {placement}{where}")
    del tokens, system2, user2, assistant, assistant_frame


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
    if not close or not _ends_marked(tokens, close):
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


def _ends_marked(tokens: Tokens, text: str) -> bool:
    """Whether ``text`` holds a special token (a turn's close the reader can find)."""
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
    if _ends_marked(probe.tokens, between):
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
    if (
        alone is None
        or lone is None
        or s2 not in alone
        or alone.find(s2) < alone.find(a1)
        or alone[: alone.find(u1)] != lone[: lone.find(u1)]
    ):
        draft.capability(
            "later system messages",
            "not derived",
            "a system message after the first user message, with none before it, changes the "
            "start of the conversation or is moved (needs concept)",
        )
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
    if at > 0 and lone.startswith(start):
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
