"""The turn frames, the start of the conversation and the generation prompt (the system turn:
:mod:`.system_turn`).

Probes (``Zu1q`` is user text 1, ``Za1q`` assistant text 1, ``Zs1q`` system text 1)::

    [user]                       with and without the generation prompt
    [user, assistant]
    [user, assistant, user]      → before Zu1q: the start and the user's opener;
                                   Zu1q..Za1q: the user's close, the assistant's opener;
                                   Za1q..Zu2q: the assistant's close, the user's opener

The user's opener is what both the start and the text after an assistant turn end with; what
the start holds before it is the ``begin`` fence and, when the template writes one without
being given a system message, a default system turn.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from ..declare import Marker
from .atoms import Tokens, common_prefix, common_suffix
from .draft import Draft, FrameText, split_end
from .probe import Probe, Underivable, message
from .reasoning import close_of

__all__ = ["derive_frames", "plain_ends"]


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


def _inserted_block(tokens: Tokens, opener: str, last: str) -> tuple[str, str] | None:
    """Where the last assistant turn's opener ``last`` is ``opener`` with a block's open
    written before the close that ends it (DeepSeek V3.2 with ``thinking``: ``</think>``
    opens past turns, ``<think></think>`` the last), that open and the close; else None."""
    shared = common_prefix(tokens, opener, last)
    rest = opener[len(shared) :]
    if not rest or not last.endswith(rest) or len(last) <= len(opener):
        return None
    added = last[len(shared) : len(last) - len(rest)]
    close = close_of(added.strip())
    if close is None or not rest.lstrip().startswith(close):
        return None
    return added, rest


def _restore(draft: Draft, given: dict[str, Any]) -> None:
    """``draft`` as it was before a derivation that failed (``given``: its fields, each
    copied one level deep: a derivation sets fields, frames and notes, nothing deeper)."""
    for name, value in given.items():
        setattr(draft, name, copy.copy(value))


def _derive_frames(probe: Probe, draft: Draft) -> None:
    tokens = probe.tokens
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    user, user2, assistant = message("user", u1), message("user", u2), message("assistant", a1)
    from .listed_tools import derive_listed_tools
    from .tools import PROBE_TOOLS

    derive_listed_tools(probe, draft)
    if probe.render([user]) is None and probe.render([user], list(PROBE_TOOLS)) is not None:
        raise Underivable(
            "the template refuses a conversation of one user message without tools ("
            + probe.refusal([user])[:120]
            + "), an empty list of tools too, and renders it given tools (needs concept: a "
            "template that needs tools given)"
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
    inserted = (
        None if two_start != start else _inserted_block(tokens, user_to_assistant, two_between)
    )
    if inserted is not None:
        # The last turn opens a block the others only close (an empty one around their
        # stand-in): the reasoning stage reads it.
        draft.last_extra, draft.last_extra_before = inserted
    elif two_start != start or not two_between.startswith(user_to_assistant):
        raise Underivable(
            "the template writes the user's turn differently when an assistant turn ends the "
            "conversation"
        )
    else:
        # What the last assistant turn holds beyond the others (an empty reasoning block):
        # the reasoning stage reads it.
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
        if assistant_open.startswith(generation_prompt) and rest and not rest.strip():
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
