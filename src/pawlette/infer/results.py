"""Tool results: the turn that holds them, one per result or grouped, with the call's id or
not, and how the assistant's turn opens after them.

Probes (``Zt1q`` is a result's text)::

    [user, assistant(calls=[alpha]), tool]                  → the results turn
    [user, assistant(calls=[alpha, beta]), tool, tool]      → grouped, or a turn each
    ... with the generation prompt, and with an assistant answer after them

The results turn is what the template adds after the turn of calls.  The text between two
results is either a whole close and open (a turn each) or what closes one item and opens the
next (grouped: the close is what both that text and the end of the last result start with).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..declare import (
    AnswerFence,
    GapAfterResults,
    JsonCallList,
    Reasoning,
    Results,
    ResultsAsUser,
    UnwrittenResults,
)
from ..declare.pieces import text_of
from .answered_ids import ids_once_answered
from .atoms import Tokens, common_prefix, common_suffix, excerpt
from .calls import ALPHA, BETA, text_lead
from .draft import RESULT_EDGES, Draft, FrameText
from .family_results import derive_family_results
from .fields import whitespace
from .probe import Probe, Underivable, call, message
from .tools import PROBE_TOOLS, insertions

__all__ = ["derive_results"]


def derive_results(probe: Probe, draft: Draft) -> None:
    if draft.skip("tool results"):
        return
    calls = draft.status("tool calls")
    if calls not in ("derived", "dropped"):
        draft.capability(
            "tool results",
            "not derived",
            "needs the tool calls to be derived first (they are "
            + ("not derived" if calls is None else calls)
            + ")",
        )
        return
    # A template that drops calls may still write a result as a turn of its own (a role
    # loop writes any role), drop it, or refuse it: the probes below tell which.  (One that
    # reads the text of a turn of calls once another turn follows it, as QwQ's splits it, is
    # given "content": "" there by the runner, as callers give it.)
    conversation = [
        message("user", probe.sentinel("u", 1)),
        message("assistant", None, tool_calls=[call("Zi1qabcde", "zq_alpha", ALPHA)]),
        message("tool", "Zt1q", tool_call_id="Zi1qabcde"),
    ]
    if probe.render(conversation, list(PROBE_TOOLS)) is None:
        reason = probe.refusal(conversation, list(PROBE_TOOLS))
        draft.capability("tool results", "refused", f"the template refuses them ({reason[:120]})")
        return
    try:
        _derive(probe, draft)
    except Underivable as error:
        base = probe.render(conversation[:2], list(PROBE_TOOLS))
        written = probe.render(conversation, list(PROBE_TOOLS)) or ""
        added = written[len(base) :] if base is not None and written.startswith(base) else ""
        if not derive_family_results(probe, draft, added):
            draft.capability("tool results", "not derived", str(error))
    if draft.status("tool results") == "derived":
        _derive_trim(probe, draft, conversation)


def _derive_trim(probe: Probe, draft: Draft, conversation: list[dict[str, Any]]) -> None:
    """Whitespace the template trims from a result's text (Qwen3.5's and Gemma 4's
    ``| trim`` of every message): :class:`Results` ``trim``.  A change it does not declare
    (another trim) leaves results unpadded in the verification, a difference recorded."""
    if RESULT_EDGES in draft.blocked:
        return  # (the verification found the trim wrong: written as given)
    found = whitespace(probe, draft, "tool", conversation, 2, list(PROBE_TOOLS))
    if found == "kept":
        return
    number = next(
        (number for number, item in enumerate(draft.concepts) if isinstance(item, Results)), None
    )
    if found == ("both", None) and number is not None:
        concept = draft.concepts[number]
        assert isinstance(concept, Results)
        draft.concepts[number] = dataclasses.replace(concept, trim=True)
        return
    how = ""
    if found != "changed":
        side, characters = found
        where = "ends" if side == "both" else side
        what = "all whitespace" if characters is None else repr(characters)
        how = f" (its {where} trimmed of {what})"
    draft.edge_roles.discard("tool")
    draft.capability(
        RESULT_EDGES,
        "differs",
        f"the template changes it in a way no concept declares{how}; written as given",
    )


def _render(probe: Probe, messages: list[dict[str, Any]], prompt: bool = False) -> str:
    return probe.required("tool results", messages, list(PROBE_TOOLS), prompt=prompt)


def _derive(probe: Probe, draft: Draft) -> None:
    u1 = probe.sentinel("u", 1)
    first = call("Zi1qabcde", "zq_alpha", ALPHA)
    second = call("Zi2qabcde", "zq_beta", BETA)
    user = message("user", u1)
    calls_one = message("assistant", None, tool_calls=[first])
    calls_two = message("assistant", None, tool_calls=[first, second])
    result_one = message("tool", "Zt1q", tool_call_id="Zi1qabcde")
    result_two = message("tool", "Zt2q", tool_call_id="Zi2qabcde")
    written = _added(probe, draft, [user, calls_one], [result_one])
    if "Zt1q" not in written:
        if not written and not _added(probe, draft, [user, calls_two], [result_one, result_two]):
            # No tool role (Phi-3.5's, RWKV World's): each result is a recorded loss, and
            # the answer after results opens as after any turn.
            draft.concepts.append(UnwrittenResults())
            # The prompt then follows the turn of calls, as after any assistant turn.
            _prompt_after(probe, draft, [user, calls_one, result_one], "assistant")
            draft.capability("tool results", "dropped", "the template does not write tool messages")
            return
        raise Underivable(
            "the template does not write a result's text: after the calls it writes "
            f"{excerpt(probe.tokens, written, 80)} for one"
        )
    if written and _as_user(probe, draft, written, [user, calls_one], [user, calls_two]):
        # Written as the template writes a user message (SmolLM3's, which has no tool
        # role): declared so, each result a recorded loss that reads back as a user message.
        draft.concepts.append(ResultsAsUser())
        draft.capability(
            "tool results",
            "dropped",
            "the template writes each result as a user message (its role is lost)",
        )
        return
    before, after = written.split("Zt1q", 1)
    name_close: str | None = None
    if "zq_alpha" in before and "Zi1qabcde" in before.split("zq_alpha", 1)[0]:
        # The called tool's name after the call's id (Solar Open's
        # ``ID<|tool_response:name|>NAME<|tool_response:result|>``): what follows the name
        # closes it, and is left out with the name wherever a result is read here.
        before, name_close = before.split("zq_alpha", 1)
        if not name_close.strip():
            raise Underivable("no fence between a result's tool name and its text")
    if "zq_alpha" in before + after:
        raise Underivable(
            "the template writes the tool's name with its result (needs concept: named results)"
        )
    json_text = _json_text(probe, draft, [user, calls_one], before, after)
    if json_text:  # (the quotes are the text's, not the turn's)
        before, after = before[:-1], after[1:]
    id_after: str | None = None
    if "Zi1qabcde" in after and "Zi1qabcde" not in before:
        # The id after the text (Mistral Nemo's ``{"content": TEXT, "call_id": "ID"}``):
        # read as the rest of the result is, with the id and its fence left out.
        id_after, after = after.split("Zi1qabcde", 1)
        if not id_after.strip() or not after.strip():
            raise Underivable(
                "the template writes the call's id after a result's text "
                f"({excerpt(probe.tokens, id_after + 'Zi1qabcde' + after, 60)}) with no fence "
                "before or after it"
            )
    identifier = None
    if "Zi1qabcde" in before:
        opening, identifier = before.split("Zi1qabcde", 1)
    else:
        opening = before
    if draft.status("parallel tool calls") == "refused":
        # A template writing one call a turn (Llama 3.x's): two results after it tell how
        # results follow each other.
        calls_two = calls_one
    added = _added(probe, draft, [user, calls_two], [result_one, result_two])
    if id_after is not None:
        added = added.replace(id_after + "Zi1qabcde", "").replace(id_after + "Zi2qabcde", "")
    if name_close is not None:
        added = added.replace("zq_alpha" + name_close, "").replace("zq_beta" + name_close, "")
    pieces = Probe.cut(added, ["Zt1q", "Zt2q"], "two results")
    between = pieces[1][1:-1] if json_text else pieces[1]
    numbered = identifier is None and _numbered(draft)
    if numbered:
        # Calls numbered by position (Command A's): a result writes its call's position
        # where an id goes, the one place the first result's opening and the second's
        # differ ("0", "1").  Read as an id there, the rest is derived as for ids.
        shared = common_suffix(probe.tokens, before, between)
        head, next_head = before[: len(before) - len(shared)], between[: len(between) - len(shared)]
        if not (shared and head.endswith("0") and next_head.endswith("1")):
            raise Underivable(
                "the template does not write a result's call position where calls numbered by "
                "position lead it to (needs concept)"
            )
        opening, identifier = head[:-1], shared
        before = opening + "Zi1qabcde" + shared
        between = next_head[:-1] + "Zi2qabcde" + shared
    item_open = item_close = gap = ""
    grouped = False
    if between == after + before.replace("Zi1qabcde", "Zi2qabcde"):
        pass  # a turn each
    elif identifier is not None:
        # Grouped, each result led by its call's id: after the first, the gap between
        # results comes before the id (Command A's ``,\n    {..."tool_call_id": "``).
        grouped = True
        ahead = between[: between.find("Zi2qabcde")]
        item_close = common_prefix(probe.tokens, ahead, after)
        gap = ahead[len(item_close) :]
        if not item_close or not gap or "Zi2qabcde" not in between:
            raise Underivable(
                f"two results are joined by {between!r} (needs concept: grouped results with "
                "call ids of this shape)"
            )
    else:
        grouped = True
        next_before = before.replace("Zi1qabcde", "Zi2qabcde")
        item_close = common_prefix(probe.tokens, between, after)
        rest = between[len(item_close) :]
        item_open = common_suffix(probe.tokens, rest, next_before)
        if len(item_close) + len(item_open) < len(between):
            # Text between two results that neither closes one nor opens the next (a
            # newline: DeepSeek-R1's): written between the results of a group only.
            gap = between[len(item_close) : len(between) - len(item_open)]
        # Without a close, a result ends where the next one opens: its open must be a
        # special token, which no result's text holds (Bielik's ``<|function_output|>``).
        if item_close + gap + item_open != between or not (
            item_close or _special(probe.tokens, item_open)
        ):
            raise Underivable(
                f"two results are joined by {between!r} (needs concept: grouped results of this "
                "shape)"
            )
        opening = (
            opening[: len(opening) - len(item_open)] if opening.endswith(item_open) else opening
        )
        if not before.endswith(item_open):
            raise Underivable("the first result opens unlike the others")
        opening = before[: len(before) - len(item_open)]
    close = after[len(item_close) :]
    for role, other in draft.frames.items():
        if other.open and opening == other.open and not item_open:
            # Read back, such a result would be a message of that role (a fence of its own
            # around each result, Granite's <tool_response>, tells them apart).
            raise Underivable(
                f"the template writes a result as a {role} turn ({opening!r}, the {role} "
                f"turn's opener) (needs concept: results written as {role} messages)"
            )
    if id_after is not None and not item_close:
        # The id's reader ends at the result's close: one of its own, not the turn's.
        item_close, close = after, ""
    frame = FrameText(open=opening)
    frame.close(close)
    if identifier is not None and not identifier.strip():
        raise Underivable("no fence between a result's call id and its text")
    draft.frames["tool"] = frame
    draft.concepts.append(
        Results(
            grouped=grouped,
            item_open=draft.fence(item_open),
            item_close=draft.fence(item_close),
            id_close=None if identifier is None else draft.fence(identifier),
            json_text=json_text,
            id_after=None if id_after is None else draft.fence(id_after),
            item_gap=draft.fence(gap),
            gap_ends_group=not gap,
            ids="positional" if numbered else "given",
            name_close=None if name_close is None else draft.fence(name_close),
        )
    )
    _after_results(probe, draft, [user, calls_one, result_one])
    _blocks_after_last_query(probe, draft, [user, calls_one], result_one)
    how = "grouped in one turn" if grouped else "a turn each"
    draft.capability(
        "tool results",
        "derived",
        how
        + (
            ", with the call's position among the calls"
            if numbered
            else ", with the call's id"
            if identifier is not None
            else ""
        )
        + (" and the tool's name" if name_close is not None else "")
        + (", with the call's id after its text" if id_after is not None else ""),
    )


def _special(tokens: Tokens, text: str) -> bool:
    """Whether ``text`` holds a special token."""
    return any(len(atom) > 1 and tokens.is_special(atom) for atom in tokens.atoms(text))


def _numbered(draft: Draft) -> bool:
    """Whether the calls derived are numbered by position where their ids go."""
    return any(
        isinstance(concept, JsonCallList) and concept.ids == "positional"
        for concept in draft.concepts
    )


def _json_text(
    probe: Probe, draft: Draft, before_results: list[dict[str, Any]], before: str, after: str
) -> bool:
    """Whether a result's text is written as a JSON string (quoted, its quote escaped:
    Llama 3.x's templates write every text result with ``tojson``)."""
    if not (before.endswith('"') and after.startswith('"')):
        return False
    quoted = message("tool", 'Zt1q"\\', tool_call_id="Zi1qabcde")
    written = _added(probe, draft, before_results, [quoted])
    return json.dumps('Zt1q"\\', ensure_ascii=False) in written


def _as_user(
    probe: Probe, draft: Draft, written: str, one: list[dict[str, Any]], two: list[dict[str, Any]]
) -> bool:
    """Whether one result after the turn of ``one`` call (``written``), and two after the
    turn of ``two``, are written as user messages of the same texts would be."""
    first = message("tool", "Zt1q", tool_call_id="Zi1qabcde")
    second = message("tool", "Zt2q", tool_call_id="Zi2qabcde")
    users = [message("user", "Zt1q"), message("user", "Zt2q")]
    try:
        return written == _added(probe, draft, one, users[:1]) and _added(
            probe, draft, two, [first, second]
        ) == _added(probe, draft, two, users)
    except Underivable:
        return False


def _blocks_after_last_query(
    probe: Probe, draft: Draft, before: list[dict[str, Any]], result: dict[str, Any]
) -> None:
    """A reasoning block derived as the last turn's alone (``empty_on_last``) that a turn of
    calls keeps once a result follows it: every turn after the last user message gets one
    (``empty_after_last_query``: Qwen3.5's), which only results show."""
    for number, concept in enumerate(draft.concepts):
        if not (
            isinstance(concept, Reasoning)
            and concept.empty_on_last
            and concept.keep == "after_last_query"
        ):
            continue
        block = text_of(concept.open) + text_of(concept.close)
        base = _render(probe, before)
        written = _render(probe, [*before, result])
        if block in base and written.startswith(base):
            draft.concepts[number] = dataclasses.replace(
                concept, empty_on_last=False, empty_after_last_query=True
            )


def _added(
    probe: Probe, draft: Draft, before: list[dict[str, Any]], results: list[dict[str, Any]]
) -> str:
    """What the results add after the turn of calls.  A template that writes the last turn
    differently (an empty reasoning block) may take something out of the calls' turn once it
    is no longer last: only such removals are allowed beside the results."""
    base = _render(probe, before)
    written = _render(probe, [*before, *results])
    if written.startswith(base):
        return written[len(base) :]
    # Tools written before the last user message (Mistral's) move when a user message
    # follows: compared without them, what the results add is the rest.
    block = _tools_block(probe)
    if block and base.count(block) == 1 and written.count(block) == 1:
        moved_base, moved = base.replace(block, ""), written.replace(block, "")
        if moved.startswith(moved_base):
            return moved[len(moved_base) :]
    # (Apriel's list writes each call's id once a result answers it.)
    with_ids = ids_once_answered(draft, base, written, before)
    if with_ids is not None:
        return with_ids
    edits = insertions(probe.tokens, base, written)
    at_end = [edit for edit in edits if edit[0] == len(base) and not edit[1]]
    others = [edit for edit in edits if edit not in at_end]
    if len(at_end) != 1 or any(inserted for _, _, inserted in others):
        offset, removed, inserted = (others or edits)[0]
        tokens = probe.tokens
        raise Underivable(
            "a result changes the turn of calls before it: after "
            f"{excerpt(tokens, base[:offset], 40, last=True)} the turn writes "
            f"{excerpt(tokens, inserted, 40) if inserted else 'nothing'} in place of "
            f"{excerpt(tokens, removed, 40) if removed else 'nothing'} (needs concept: calls "
            "written otherwise once answered)"
        )
    return at_end[0][2]


def _tools_block(probe: Probe) -> str:
    """What the probe tools add to a one-message conversation, when it is one insertion."""
    user = [message("user", probe.sentinel("u", 1))]
    plain = probe.render(user)
    with_tools = probe.render(user, list(PROBE_TOOLS))
    if plain is None or with_tools is None:
        return ""
    edits = insertions(probe.tokens, plain, with_tools)
    if len(edits) != 1 or edits[0][1]:
        return ""
    return edits[0][2]


def _reasoning_prompt(draft: Draft) -> str:
    for concept in draft.concepts:
        if isinstance(concept, Reasoning):
            text = text_of(concept.open) if concept.prompt in ("open", "empty") else ""
            if concept.prompt == "empty":
                text += text_of(concept.close)
            return text
    return ""


def _after_results(probe: Probe, draft: Draft, messages: list[dict[str, Any]]) -> None:
    """The assistant's opener and generation prompt after results, where they differ."""
    assistant = draft.frames["assistant"]
    u2 = probe.sentinel("u", 2)
    # The answer is followed by a user message: a last turn may be written otherwise.
    following = [message("assistant", "Za2q"), message("user", u2)]
    try:
        answered = _added(probe, draft, messages, following)
    except Underivable:
        found = _gap_ending_group(probe, draft, messages, following)
        if found is None:
            raise
        answered = found
    if "Za2q" not in answered:
        raise Underivable("the template does not write an answer after results")
    opening = answered[: answered.find("Za2q")]
    lead = text_lead(draft)  # (written before any text: not the opener's)
    if lead and opening.endswith(lead):
        opening = opening[: -len(lead)]
    for concept in draft.concepts:
        if isinstance(concept, AnswerFence) and opening.endswith(text_of(concept.open)):
            opening = opening[: -len(text_of(concept.open))]  # (the answer's, not the opener's)
    absent = ""
    for concept in draft.concepts:
        if isinstance(concept, Reasoning):
            absent = text_of(concept.absent)
    if opening != assistant.open + absent:
        if absent and not opening.endswith(absent):
            raise Underivable("the answer after results has no reasoning stand-in (needs concept)")
        opener = opening[: len(opening) - len(absent)]
        if opener and not opener.strip():
            # Whitespace alone (DeepSeek V3.2's blank line): as an opener it would open an
            # answer wherever a text holds it, so it is declared as the gap after results,
            # layout, and the answer opens with nothing there.
            draft.concepts.append(GapAfterResults(draft.fence(opener)))
            opener = ""
        assistant.open_after["tool"] = opener
    _prompt_after(probe, draft, messages, "tool")


def _gap_ending_group(
    probe: Probe, draft: Draft, messages: list[dict[str, Any]], following: list[dict[str, Any]]
) -> str | None:
    """What ``following`` adds after the results ``messages`` end with, where the template
    writes the gap between two results after the last one too once another message follows
    (Hermes 2 Pro's newline before ``<|im_end|>``, none when the results end the
    conversation): the results' ``gap_ends_group`` then set.  None: no such gap."""
    number = next(
        (number for number, item in enumerate(draft.concepts) if isinstance(item, Results)), None
    )
    if number is None:
        return None
    concept = draft.concepts[number]
    assert isinstance(concept, Results)
    gap, close = text_of(concept.item_gap), text_of(concept.item_close)
    item_open = text_of(concept.item_open)
    frame = draft.frames.get("tool")
    if (gap and concept.gap_ends_group) or not close or frame is None:
        return None
    if not gap:
        # The whitespace an item's open starts with, written after the last item too once a
        # message follows, is the gap between items (Hermes 2 Pro's newline): the first
        # item's share of it then opens the results turn.
        gap = item_open[: len(item_open) - len(item_open.lstrip())]
        if not gap or not item_open.strip():
            return None
    base = _render(probe, messages)
    written = _render(probe, [*messages, *following])
    at = base.rfind(close)
    if at < 0:
        return None
    at += len(close)
    gapped = base[:at] + gap + base[at:]
    if not written.startswith(gapped):
        return None
    if not text_of(concept.item_gap):
        frame.open += gap
        concept = dataclasses.replace(
            concept, item_open=draft.fence(item_open[len(gap) :]), item_gap=draft.fence(gap)
        )
    draft.concepts[number] = dataclasses.replace(concept, gap_ends_group=True)
    return written[len(gapped) :]


def _prompt_after(
    probe: Probe, draft: Draft, messages: list[dict[str, Any]], previous: str
) -> None:
    """The generation prompt after ``messages``, whose last written turn is of the role
    ``previous``, where it differs from the assistant's opener there."""
    assistant = draft.frames["assistant"]
    plain = _render(probe, messages)
    prompted = _render(probe, messages, prompt=True)
    if not prompted.startswith(plain):
        raise Underivable("the generation prompt after results rewrites them")
    prompt = prompted[len(plain) :]
    gap = next(
        (
            text_of(concept.gap)
            for concept in draft.concepts
            if isinstance(concept, GapAfterResults)
        ),
        "",
    )
    if previous == "tool" and gap:
        if not prompt.startswith(gap):
            raise Underivable(
                f"the generation prompt after results ({prompt!r}) does not start with the gap "
                f"before an answer there ({gap!r})"
            )
        prompt = prompt[len(gap) :]
    added = _reasoning_prompt(draft)
    # What the frame writes as the prompt after that turn (Frame.prompt).
    expected = assistant.prompt_after.get(
        previous, assistant.open_after.get(previous, assistant.open)
    )
    if prompt != expected + added:
        if added and not prompt and not expected:
            # No prompt at all after results, not even the reasoning's (the R1 Llama distill:
            # the model answers right after them, as a past answer there opens with nothing).
            draft.unprompted(previous)
        elif added and prompt.endswith(added):
            assistant.prompt_after[previous] = prompt[: len(prompt) - len(added)]
        elif added:
            raise Underivable(
                f"the generation prompt after results ({prompt!r}) does not open the reasoning "
                "block as after a user message (needs concept)"
            )
        else:
            assistant.prompt_after[previous] = prompt
