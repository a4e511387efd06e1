"""Reasoning: its fences, which turns keep it, what stands in for it, what the prompt opens.

Probes (``Zr1q`` is reasoning text)::

    [user, assistant+reasoning]                  → the block as the last turn writes it
    [user, assistant+reasoning, user]            → kept before the last query, or dropped
    [user, assistant+reasoning, user, assistant+reasoning]

The assistant's opener is what the prompt, a turn with reasoning and a turn without it all
begin with; what a turn without reasoning writes beyond it stands in for the block
(``absent``); what the prompt writes beyond it is the block's opening (``prompt="open"``) or a
whole empty block (``"empty"``).  A template that never writes reasoning but whose prompt
opens a block gets its close from the open's shape (``<think>`` → ``</think>``), since no
render shows it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, Literal

from ..declare import Ignored, Reasoning, Trimmed
from ..declare.pieces import text_of
from ..formats.hy3.concepts import ToolsKeptReasoning
from ..formats.kimi.concepts import ReasoningAfterFirstAnswer
from .atoms import common_prefix, excerpt
from .draft import REASONING_EDGES, Draft
from .fields import EDGES, WHITESPACE, Side, whitespace
from .probe import Probe, call, message
from .tools import PROBE_TOOLS, insertions

__all__ = ["close_of", "derive_reasoning"]


def close_of(opening: str) -> str | None:
    """The close tag a tag's shape implies (None: no shape known)."""
    tag = opening.strip()
    for pattern, close in (
        (r"<([A-Za-z][\w:.\-]*)>", "</{}>"),
        (r"\[([A-Z][A-Z_]*)\]", "[/{}]"),
        (r"<\|START_(\w+)\|>", "<|END_{}|>"),
        (r"<\|(\w+)\|>", "<|/{}|>"),
    ):
        found = re.fullmatch(pattern, tag)
        if found:
            return close.format(found.group(1))
    return None


def _split_block(probe: Probe, text: str) -> tuple[str, str] | None:
    """An empty block's text (``<think>\\n</think>``) as its open and close (by the tags)."""
    atoms = probe.tokens.atoms(text)
    tags = [number for number, atom in enumerate(atoms) if len(atom) > 1]
    if len(tags) < 2:
        return None
    cut = tags[1]
    while cut > tags[0] + 1 and atoms[cut - 1].isspace() and False:
        cut -= 1
    opening, closing = "".join(atoms[:cut]), "".join(atoms[cut:])
    if close_of(opening.strip()) is None:
        return None
    return opening, closing


def _without_lead(draft: Draft, closing: str) -> str:
    """A block's close, less the lead the assistant's text is written after (its Trimmed's,
    written only when there is text)."""
    for concept in draft.concepts:
        if isinstance(concept, Trimmed) and "assistant" in concept.roles and concept.lead:
            lead = text_of(concept.lead)
            if lead and closing.endswith(lead):
                return closing[: len(closing) - len(lead)]
    return closing


def _opener(probe: Probe, shared: str, before: str) -> str:
    """The assistant's opener: the shared start, less the block's own open when the turns
    without reasoning and the prompt write that too (an empty block, an opened one)."""
    atoms = probe.tokens.atoms(shared)
    while atoms and not before["".join(atoms).__len__() :].strip():
        atoms.pop()
    return "".join(atoms)


def _opened_by_both(probe: Probe, shared: str, absent: str) -> str | None:
    """The block's open at the end of what the prompt and a turn without reasoning share,
    when that turn closes the block right after it (DeepSeek V3.1 with ``thinking``: the
    prompt ends ``<think>``, a past turn writes ``<think></think>``); None otherwise."""
    atoms = probe.tokens.atoms(shared)
    cut = len(atoms)
    while cut and atoms[cut - 1].isspace():
        cut -= 1
    close = close_of(atoms[cut - 1]) if cut else None
    if close is None or not absent.lstrip().startswith(close):
        return None
    return "".join(atoms[cut - 1 :])


def derive_reasoning(probe: Probe, draft: Draft) -> None:
    if draft.skip("reasoning"):
        return
    tokens = probe.tokens
    u1, u2 = probe.sentinel("u", 1), probe.sentinel("u", 2)
    a1, a2 = probe.sentinel("a", 1), probe.sentinel("a", 2)
    r1, r2 = probe.sentinel("r", 1), probe.sentinel("r", 2)
    user, user2 = message("user", u1), message("user", u2)
    thought = message("assistant", a1, reasoning_content=r1)
    thought2 = message("assistant", a2, reasoning_content=r2)
    frame = draft.frames["assistant"]
    user_frame = draft.frames["user"]
    history_open = frame.open
    prompt = frame.prompt_after.get("user", frame.open)
    lead = u1 + user_frame.end + user_frame.after
    last = probe.render([user, thought])
    if last is None:
        draft.capability("reasoning", "not derived", "the template refuses reasoning_content")
        return
    start = last.find(lead)
    region = last[start + len(lead) : last.find(a1)] if start >= 0 and a1 in last else ""
    keep = "none"
    kind: type[Reasoning] = Reasoning
    opened: str | None = None
    if r1 not in region:
        answered = _after_first_answer(probe, draft, [user, message("assistant", a2), user2])
        if answered is not None and r1 in answered:
            region, kind = answered, ReasoningAfterFirstAnswer
    if r1 in region:
        before, after = region.split(r1, 1)
        opener = _opener(probe, common_prefix(tokens, history_open, before, prompt), before)
        opening, closing = before[len(opener) :], _without_lead(draft, after)
        absent = history_open[len(opener) :]
        earlier = probe.render([user, thought, user2])
        both = probe.render([user, thought, user2, thought2])
        if kind is ReasoningAfterFirstAnswer:
            keep = "all"  # on every turn after the first answer: the concept says which
        elif earlier is not None and r1 in earlier:
            keep = "all"
        elif both is not None and r2 in both:
            keep = "after_last_query"
            dropped = _dropped_otherwise(probe, [user, thought, user2])
            if dropped is not None:
                draft.capability("reasoning", "not derived", dropped)
                return
            kind = _kept_beyond_last_query(probe, user, thought, user2)
        else:
            draft.capability(
                "reasoning",
                "not derived",
                "written only on a conversation's last turn (needs concept)",
            )
            return
    else:
        opener = common_prefix(tokens, history_open, prompt)
        absent = history_open[len(opener) :]
        added = prompt[len(opener) :]
        opened = _opened_by_both(probe, opener, absent) if not added else None
        if opened is not None:
            # The prompt opens the block and a past turn closes it at once: the prompt is
            # the opener's start with the block opened (``prompt="opened"``), and the past
            # turn's empty block stays in its opener, as the template writes it only there.
            opener, absent = history_open, ""
        split = _split_block(probe, added) or _split_block(probe, absent)
        if opened is not None:
            split = opened, history_open[len(prompt) :]
        elif split is None and added.strip() and close_of(added.strip()) is not None:
            split = (added, close_of(added.strip()) or "")
            draft.notes.append(
                f"The reasoning block's close {split[1]!r} is inferred from its open "
                f"{added.strip()!r}: the template never writes a whole block."
            )
        if split is None:
            split = _block_beside_calls(probe, user)
        if split is None:
            draft.concepts.append(Ignored(("reasoning",)))
            draft.capability(
                "reasoning", "dropped", "the template does not write reasoning_content"
            )
            return
        opening, closing = split
    if not opening or not closing:
        draft.capability("reasoning", "not derived", f"no fences around it in {region!r}")
        return
    if opening == absent:
        draft.capability(
            "reasoning",
            "not derived",
            f"a turn without reasoning writes {absent!r} too: the block has no open of its own "
            "(needs concept: reasoning without an open fence)",
        )
        return
    if keep == "none" and _written_beside_calls(probe, user, opening, closing):
        keep = "calls"
    rest = prompt[len(opener) :]
    mode = {"": "", opening: "open", opening + closing: "empty"}.get(rest)
    if opened is not None:
        mode = None  # the prompt is kept as derived: its block is "opened"
    empty_on_last = empty_after_last_query = False
    if draft.last_extra_before:
        # The last turn opens a block where the others write its close alone: every turn
        # after the last query writes a block, empty without reasoning.
        if (draft.last_extra, draft.last_extra_before) != (opening, absent) or absent != closing:
            draft.capability(
                "reasoning",
                "not derived",
                f"the last turn writes {draft.last_extra!r} before {draft.last_extra_before!r}"
                " where others write nothing",
            )
            return
        if keep != "after_last_query":
            draft.capability(
                "reasoning",
                "not derived",
                f"the last turn opens {opening!r} before the close, but the reasoning is "
                "kept on every turn (needs concept)",
            )
            return
        empty_after_last_query = True
        draft.last_extra = draft.last_extra_before = ""
    elif draft.last_extra:
        if draft.last_extra != opening + closing or keep != "after_last_query":
            # The frames stay as derived: the prompt still writes what it writes.
            draft.capability(
                "reasoning",
                "not derived",
                f"the last turn writes {draft.last_extra!r} where others write nothing",
            )
            return
        empty_on_last = True
        draft.last_extra = ""
    frame.open = opener
    frame.prompt_after.pop("user", None)
    if mode is None:
        frame.prompt_after["user"] = prompt
        mode = "opened" if opened is not None else ""
    draft.concepts.append(
        kind(
            open=draft.fence(opening),
            close=draft.fence(closing),
            keep=keep,  # type: ignore[arg-type]
            empty_on_last=empty_on_last,
            empty_after_last_query=empty_after_last_query,
            prompt=mode,  # type: ignore[arg-type]
            absent=draft.fence(absent),
        )
    )
    kept = {
        "all": "kept on every turn",
        "after_last_query": "kept after the last user message",
        "calls": "kept on turns of calls only",
        "none": "never written (dropped)",
    }[keep]
    if kind is ToolsKeptReasoning:
        kept += ", and on every turn when the request has tools"
    elif kind is ReasoningAfterFirstAnswer:
        kept = "kept on every turn after the first assistant message without calls"
    draft.capability(
        "reasoning",
        "derived" if keep != "none" else "dropped",
        f"{opening.strip()} ... {closing.strip()}, {kept}",
    )
    if keep != "none":
        # The turns probed for whitespace and empty text keep their reasoning: after an
        # answer where the template drops it up to the first one.
        # answer where the template drops it up to the first one, a turn of calls where it
        # keeps it on those alone.
        head = [user]
        if kind is ReasoningAfterFirstAnswer:
            head = [user, message("assistant", a2), user2]
        tools = list(PROBE_TOOLS) if keep == "calls" else None
        calls = {"tool_calls": [_probe_call()]} if keep == "calls" else {}

        def render(**fields: Any) -> str | None:
            return probe.render([*head, message("assistant", a1, **calls, **fields)], tools)

        if _keeps_whitespace(probe, render, opening, closing):
            draft.edge_roles.add("reasoning")
        elif not _derive_trim(probe, draft, keep, opening, closing):
            draft.edge_reasoning = False
            draft.capability(
                REASONING_EDGES,
                "differs",
                "the template changes it in a way no concept declares; written as given",
            )
        if draft.edge_reasoning and keep != "calls":
            trim = draft.concepts[-1].trim if isinstance(draft.concepts[-1], Reasoning) else ""
            beside = _whitespace_beside_calls(probe, head, opening, closing, trim)
            if beside is not None:
                draft.edge_reasoning = False
                draft.capability(
                    REASONING_EDGES,
                    "differs",
                    f"beside calls the template writes it {beside}, otherwise than in an "
                    "answer; written as in an answer",
                )
        _derive_in_content(probe, draft, head, calls, tools)
        empty = render(reasoning_content="")
        as_none = empty is not None and empty == render()
        held = render(reasoning_content=r1)
        as_block = empty is not None and held is not None and empty == held.replace(r1, "")
        # The declaration writes an empty text as an empty block when it keeps every turn's
        # reasoning, and as none after the last query (where an empty text is no reasoning).
        if as_block if keep == "all" else as_none:
            draft.empty_roles.add("reasoning")
        elif as_none or as_block:
            # The template tests the text (Command A MoE's) or only that it is given
            # (LFM2.5's): Reasoning.empty_given says which.
            concept = draft.concepts[-1]
            assert isinstance(concept, Reasoning)
            draft.concepts[-1] = dataclasses.replace(concept, empty_given=as_block)
            draft.empty_roles.add("reasoning")
            draft.capability(
                "empty reasoning",
                "derived",
                "an empty text is written as " + ("an empty block" if as_block else "none"),
            )
        else:
            how = (
                "refuses it"
                if empty is None
                else "writes it as "
                + ("none" if as_none else "an empty block" if as_block else "something else")
            )
            draft.capability(
                "empty reasoning",
                "not derived",
                f"the template {how}, unlike the declaration (needs concept)",
            )


def _dropped_otherwise(probe: Probe, conversation: list[dict[str, Any]]) -> str | None:
    """Why a turn whose reasoning the template drops cannot be declared: it writes otherwise
    than the same turn without reasoning (Nemotron 3 Nano's newline after the emptied block,
    where a turn without reasoning writes none), since a dropped block is written as none is.
    None: written alike."""
    plain = [dict(item) for item in conversation]
    for item in plain:
        item.pop("reasoning_content", None)
    dropped, without = probe.render(conversation), probe.render(plain)
    if dropped is None or without is None or dropped == without:
        return None
    offset, removed, inserted = insertions(probe.tokens, without, dropped)[0]
    tokens = probe.tokens
    return (
        "a turn whose reasoning the template drops (before the last user message) writes "
        f"{excerpt(tokens, inserted, 40) if inserted else 'nothing'} where the same turn "
        f"without reasoning writes {excerpt(tokens, removed, 40) if removed else 'nothing'}, "
        f"after {excerpt(tokens, without[:offset], 40, last=True)} (needs concept: dropped "
        "reasoning written otherwise than none)"
    )


def _kept_beyond_last_query(
    probe: Probe, user: dict[str, Any], thought: dict[str, Any], user2: dict[str, Any]
) -> type[Reasoning]:
    """Reasoning the template drops before the last user message, yet keeps there when the
    request has tools (Hunyuan 3's ``preserved_thinking``: :class:`ToolsKeptReasoning`);
    :class:`Reasoning` (``after_last_query``) otherwise."""
    with_tools = probe.render([user, thought, user2], list(PROBE_TOOLS))
    if with_tools is not None and probe.sentinel("r", 1) in with_tools:
        return ToolsKeptReasoning
    return Reasoning


def _after_first_answer(probe: Probe, draft: Draft, answered: list[dict[str, Any]]) -> str | None:
    """The last turn's region (its opener, the block and up to its text) when a turn with
    reasoning follows ``answered``, an answer without calls and a user message: Kimi K2
    Thinking's template drops the reasoning of every turn up to the first such answer, the
    conversation's last turn too (:class:`ReasoningAfterFirstAnswer`).  None: refused."""
    a1 = probe.sentinel("a", 1)
    thought = message("assistant", a1, reasoning_content=probe.sentinel("r", 1))
    written = probe.render([*answered, thought])
    user_frame = draft.frames["user"]
    lead = str(answered[-1]["content"]) + user_frame.end + user_frame.after
    start = written.rfind(lead) if written is not None else -1
    if written is None or start < 0 or a1 not in written[start:]:
        return None
    return written[start + len(lead) : written.rfind(a1)]


def _probe_call() -> dict[str, Any]:
    return call("c1", PROBE_TOOLS[0]["function"]["name"], {"zk1": "v1"})


def _block_beside_calls(probe: Probe, user: dict[str, Any]) -> tuple[str, str] | None:
    """The block's open and close around the reasoning of a turn of calls, where no other
    turn and no prompt writes one (Command R7B with thinking on): the tag right before the
    text and the one its shape closes it with, right after."""
    r1 = probe.sentinel("r", 1)
    turn = message("assistant", None, tool_calls=[_probe_call()], reasoning_content=r1)
    written = probe.render([user, turn], list(PROBE_TOOLS))
    if written is None or written.count(r1) != 1:
        return None
    before, after = written.split(r1)
    opening = (probe.tokens.atoms(before) or [""])[-1]
    closing = (probe.tokens.atoms(after) or [""])[0]
    if not opening.strip() or close_of(opening.strip()) != closing.strip():
        return None
    return opening, closing


def _written_beside_calls(probe: Probe, user: dict[str, Any], opening: str, closing: str) -> bool:
    """Whether reasoning the template writes on no answer is written in its block on a turn
    of calls (Command R7B's plan: ``Reasoning(keep="calls")``)."""
    r1 = probe.sentinel("r", 1)
    turn = message("assistant", None, tool_calls=[_probe_call()], reasoning_content=r1)
    written = probe.render([user, turn], list(PROBE_TOOLS))
    return written is not None and f"{opening}{r1}{closing}" in written


def _reasoning_trim(probe: Probe, opening: str, closing: str) -> str | None:
    """The characters the template trims from both ends of a reasoning text: newlines
    (``strip('\\n')``) or all whitespace (``strip()``); None: neither."""
    user = message("user", probe.sentinel("u", 1))
    a1, r1 = probe.sentinel("a", 1), probe.sentinel("r", 1)
    for characters in ("\n", WHITESPACE):
        for start, end in EDGES:
            given = start + r1 + end
            written = probe.render([user, message("assistant", a1, reasoning_content=given)])
            if written is None or f"{opening}{given.strip(characters)}{closing}" not in written:
                break
        else:
            return characters
    return None


def _derive_trim(probe: Probe, draft: Draft, keep: str, opening: str, closing: str) -> bool:
    """Reasoning trimmed at both ends (Qwen3's ``strip('\\n')``, Bielik's ``strip()``):
    ``Reasoning.trim``, which also trims the start of the text after a block.  Whether the
    declaration then writes what the template does, text included: the text of a turn with
    a block is trimmed as the assistant's Trimmed trims it, which writes it, or (without one)
    at its start alike; a Trimmed that trims so is left to the turns without a block only
    where those trim too.  False: not derived."""
    characters = _reasoning_trim(probe, opening, closing)
    if characters is None:
        return False
    alike: tuple[Side, str | None] = ("start", None if characters == WHITESPACE else characters)
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    user = message("user", u1)
    block = whitespace(
        probe,
        draft,
        "assistant",
        [user, message("assistant", a1, reasoning_content=probe.sentinel("r", 1))],
        1,
    )
    number, trimmed = next(
        (
            (number, concept)
            for number, concept in enumerate(draft.concepts)
            if isinstance(concept, Trimmed) and "assistant" in concept.roles
        ),
        (-1, None),
    )
    # The first content hook writes the text: the assistant's Trimmed where there is one.
    text = alike if trimmed is None else (trimmed.side, trimmed.characters)
    if block != text:
        return False
    if trimmed is not None and text == alike:
        # A turn without a block: its text as given, or trimmed as Trimmed trims it.
        plain = [user, message("assistant", a1)]
        if keep == "after_last_query":
            plain.append(message("user", u2))
        without = whitespace(probe, draft, "assistant", plain, 1)
        if without == "kept":
            roles = tuple(role for role in trimmed.roles if role != "assistant")
            if roles:
                draft.concepts[number] = dataclasses.replace(
                    trimmed, roles=roles, space_first=False
                )
            else:
                del draft.concepts[number]
        elif without != text:
            return False
    concept = draft.concepts[-1]
    assert isinstance(concept, Reasoning)
    draft.concepts[-1] = dataclasses.replace(concept, trim=characters)
    draft.edge_roles.add("reasoning")
    draft.capability(
        "whitespace at the ends of reasoning",
        "derived",
        "trimmed ("
        + ("newlines" if characters == "\n" else "all whitespace")
        + "), and the text after a block at its start",
    )
    return True


def _whitespace_beside_calls(
    probe: Probe, head: list[dict[str, Any]], opening: str, closing: str, trim: str
) -> str | None:
    """How the template writes reasoning with whitespace at its ends beside calls, where it
    writes it otherwise than in an answer (kept there, or trimmed of ``trim``); None: alike,
    or no block beside calls to tell."""
    r1 = probe.sentinel("r", 1)
    for start, end in EDGES:
        given = start + r1 + end
        turn = message("assistant", None, tool_calls=[_probe_call()], reasoning_content=given)
        written = probe.render([*head, turn], list(PROBE_TOOLS))
        if written is None or r1 not in written:
            return None
        expected = given.strip(trim) if trim else given
        if f"{opening}{expected}{closing}" not in written:
            at = written.find(r1)
            begin = max(0, written.rfind(opening.strip(), 0, at))
            closed = written.find(closing.strip(), at)
            stop = len(written) if closed < 0 else closed + len(closing.strip())
            return f"{excerpt(probe.tokens, written[begin:stop])} given {given!r}"
    return None


def _keeps_whitespace(
    probe: Probe, render: Callable[..., str | None], opening: str, closing: str
) -> bool:
    r1 = probe.sentinel("r", 1)
    spaced = render(reasoning_content=f"\n {r1} \n")
    return spaced is not None and f"{opening}\n {r1} \n{closing}" in spaced


def _derive_in_content(
    probe: Probe,
    draft: Draft,
    head: list[dict[str, Any]],
    calls: dict[str, Any],
    tools: list[dict[str, Any]] | None,
) -> None:
    """A past answer's reasoning read out of its content (Qwen3's ``<think>R</think>A``
    written as reasoning R and content A): ``Reasoning.in_content``, where a content holding
    the block's markers is written as the same turn given R as ``reasoning_content``.  Which
    messages the template splits: those without reasoning (``"unset"``), with none or an
    empty one (``"empty"``), or every one, its own reasoning kept (``"always"``)."""
    concept = draft.concepts[-1]
    assert isinstance(concept, Reasoning)
    opening, closing = concept.content_markers
    if not opening or not closing:
        return
    a1, r1, r2 = probe.sentinel("a", 1), probe.sentinel("r", 1), probe.sentinel("r", 2)
    inside = f"{opening}{r1}{closing}{a1}"

    def render(content: str, **fields: Any) -> str | None:
        return probe.render([*head, message("assistant", content, **calls, **fields)], tools)

    given = render(a1, reasoning_content=r1)
    if given is None or render(inside) != given:
        return
    mode: Literal["unset", "empty", "always"]
    own = render(a1, reasoning_content=r2)
    if own is not None and render(inside, reasoning_content=r2) == own:
        mode = "always"
    elif render(inside, reasoning_content="") == given:
        mode = "empty"
    else:
        mode = "unset"
    # The content's newlines taken off its end too (MiniMax-M2's strip('\\n')).
    trim = ("\n", "\n") if render(inside + "\n") == given else ("\n", "")
    draft.concepts[-1] = dataclasses.replace(concept, in_content=mode, in_content_trim=trim)
    draft.capability(
        "reasoning in a past answer's content",
        "derived",
        f"{opening}R{closing}A written as reasoning R and content A ({mode!r})",
    )
