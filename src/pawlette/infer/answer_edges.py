"""An assistant message at either edge of a conversation: before any user message, and last
with the generation prompt after it.

- **Leading assistant messages** (a greeting the application writes before the user's first
  query, after its system messages): the template refuses them (so does the declaration,
  saying why) or writes them, which verification checks on generated conversations.  Where
  it opens a greeting otherwise than other answers, at the start or after a system message,
  the assistant frame opens with that there (DeepSeek V3.1 writes none); where, given tools,
  it writes the greeting as the user message that holds them (Llama 3.x), so does the
  declaration (the message's role a recorded loss), and the capability says so.
- **The generation prompt after an answer** (a server asked for the next turn after an
  assistant message): the prompt after a query (Laguna) or nothing (Reka Edge, GigaChat 3,
  Apriel 1.5: the model goes on after the answer's end) becomes the assistant frame's prompt
  there, and is verified.  Where the template refuses it, writes nothing while the reasoning
  writes its block in every prompt (Hy3), writes the conversation's end there, or writes the
  answer otherwise (Nemotron Nano 2 opens a reasoning block in it), the format refuses it,
  saying what the template writes, since no concept writes it so.
"""

from __future__ import annotations

from ..declare import Alternation, AnswerFence, Reasoning, ToolsBlock, Trimmed
from ..declare.pieces import text_of
from .atoms import common_prefix, excerpt
from .draft import Draft
from .probe import Probe, message
from .tools import PROBE_TOOLS

__all__ = ["LEADING", "PROMPTED", "derive_answer_edges"]

LEADING = "leading assistant messages"
PROMPTED = "generation prompt after an answer"


def derive_answer_edges(probe: Probe, draft: Draft) -> None:
    if "assistant" not in draft.frames:
        return
    if not draft.skip(LEADING):
        _leading(probe, draft)
    if not draft.skip(PROMPTED):
        _prompted(probe, draft)
    _system_alone(probe, draft)


def _system_alone(probe: Probe, draft: Draft) -> None:
    """Whether the template writes no generation prompt after a system message alone,
    though it writes one after a user message (Granite 3.3 and GigaChat 3 write it in their
    message loop, which runs over the messages after the system one): a greeting after the
    system text is then read with the opener the model writes itself.  Verified on a
    conversation of a system message alone."""
    if "system" not in draft.frames:
        return
    system = [message("system", probe.sentinel("s", 1))]
    query = [message("user", probe.sentinel("u", 1))]
    plain, prompted = probe.render(system), probe.render(system, prompt=True)
    if plain is None or prompted != plain or plain.count(probe.sentinel("s", 1)) != 1:
        return
    if probe.render(query, prompt=True) == probe.render(query):
        return  # (no prompt anywhere: nothing particular to the system message)
    draft.unprompted_system_alone = True


def _leading(probe: Probe, draft: Draft) -> None:
    greeting = [message("assistant", probe.sentinel("a", 1)), message("user", probe.sentinel("u"))]
    if probe.render(greeting) is not None:
        # What the declaration writes there is verified: generated conversations hold it.
        openers = _leading_openers(probe, draft)
        hosting = _hosting_tools(probe, draft)
        draft.capability(
            LEADING,
            "derived",
            "written as an assistant turn"
            + "".join(f", opened with {opener!r} {WHERE[role]}" for role, opener in openers.items())
            + (f"; with tools, {hosting}" if hosting else ""),
        )
        return
    if any(isinstance(concept, Alternation) for concept in draft.concepts):
        reason = "user and assistant messages must alternate, from a user message"
    else:
        reason = (
            "the template refuses an assistant message before any user message "
            f"({probe.refusal(greeting)[:160]})"
        )
    draft.capability(LEADING, "refused", reason)


def _hosting_tools(probe: Probe, draft: Draft) -> str:
    """How a leading answer is written in a request with tools where the template writes it
    otherwise than without (empty: as without): the tools are written into the message after
    the system messages, and the template writes that message, given tools, as the user
    message that holds them whatever its role (Llama 3.1 takes the first message for the
    user's); the declaration's tools block does the same, the role a recorded loss."""
    placed = any(
        isinstance(concept, ToolsBlock) and concept.place == "user_after_system"
        for concept in draft.concepts
    )
    if not placed:
        return ""
    a1, u1 = probe.sentinel("a", 1), probe.sentinel("u", 1)
    tools = list(PROBE_TOOLS)
    greeted = probe.render([message("assistant", a1), message("user", u1)], tools)
    asked = probe.render([message("user", a1), message("user", u1)], tools)
    if greeted is None or greeted != asked:
        return ""
    return (
        "written as the user message that holds the tools, its role a recorded loss (the "
        "template writes the message after the system messages so whatever its role)"
    )


WHERE = {"start": "at the start", "system": "after a system message"}
"""Where a leading answer may begin: the keys of the assistant frame's ``open_after``."""


def _leading_openers(probe: Probe, draft: Draft) -> dict[str, str]:
    """The assistant's openers that differ from its own where an answer begins the
    conversation and where it follows a system message, set in its frame (DeepSeek V3.1
    writes a greeting right after the begin and the system text, with no opener).  Each is
    read off a conversation that begins with the answer, against the same one beginning with
    a user message: what precedes the user's opener there precedes the assistant's here."""
    u1, u2, a1 = probe.sentinel("u", 1), probe.sentinel("u", 2), probe.sentinel("a", 1)
    s1 = probe.sentinel("s", 1)
    user, assistant = draft.frames["user"], draft.frames["assistant"]
    found: dict[str, str] = {}
    for role in WHERE:
        before: list[dict[str, str | None]] = [] if role == "start" else [message("system", s1)]
        if role == "system" and "system" not in draft.frames:
            continue
        asked = probe.render([*before, message("user", u1), message("assistant", a1)])
        answered = probe.render(
            [*before, message("user", u1), message("assistant", a1), message("user", u2)]
        )
        greeted = probe.render([*before, message("assistant", a1), message("user", u2)])
        if asked is None or answered is None or greeted is None:
            continue
        if any(text.count(a1) != 1 for text in (asked, answered, greeted)):
            continue
        user_opener = user.open_after.get(role, user.open)
        head = asked[: asked.find(u1)]
        if not user_opener or not head.endswith(user_opener):
            continue
        head = head[: len(head) - len(user_opener)]
        written = greeted[: greeted.find(a1)]
        # After the answer, the conversation goes on as after an answer to a query.
        if (
            not written.startswith(head)
            or greeted[greeted.find(a1) :] != answered[answered.find(a1) :]
        ):
            continue
        opener = bare_opener(draft, written[len(head) :], role)
        if opener is None or opener == assistant.open_after.get(role, assistant.open):
            continue
        found[role] = opener
    for role, opener in found.items():
        # The opener is the greeting's alone: the generation prompt there is what the
        # template writes (after a system message, DeepSeek V3.1 writes none), or as it was.
        before = [] if role == "start" else [message("system", s1)]
        plain, prompted = probe.render(before), probe.render(before, prompt=True)
        prompt = (
            frame_prompt(draft, prompted[len(plain) :])
            if before and plain is not None and prompted and prompted.startswith(plain)
            else None
        )
        if role not in assistant.prompt_after:
            assistant.prompt_after[role] = (
                assistant.open_after.get(role, assistant.open) if prompt is None else prompt
            )
        assistant.open_after[role] = opener
        if assistant.prompt_after[role] == opener:
            del assistant.prompt_after[role]
    return found


def bare_opener(draft: Draft, written: str, previous: str | None = None) -> str | None:
    """The assistant's opener where ``written`` opens its turn: less what the concepts write
    there (a reasoning stand-in, an answer's open fence, the lead before its text); None:
    ``written`` does not end with them.

    ``previous``: the role of the turn before (``"start"``: none).  Where ``written`` holds no
    reasoning stand-in, though the template writes one after a query, the turn is one the
    template writes without its reasoning (DeepSeek V3.2 writes the stand-in only in a turn it
    opens): recorded in the draft (:attr:`Draft.unreasoned`), and the opener is the rest."""
    answer_open = absent = lead = ""
    for concept in draft.concepts:
        if isinstance(concept, Trimmed) and "assistant" in concept.roles:
            lead = text_of(concept.lead)  # (GLM-4.6's newline before a text)
        elif isinstance(concept, AnswerFence):
            answer_open = text_of(concept.open)
        elif isinstance(concept, Reasoning):
            absent = text_of(concept.absent)
    for written_there in (lead, answer_open):
        if not written.endswith(written_there):
            return None
        written = written[: len(written) - len(written_there)]
    if written.endswith(absent):
        return written[: len(written) - len(absent)]
    if previous is None:
        return None
    draft.unreasoned.add(previous)
    return written


def _prompted(probe: Probe, draft: Draft) -> None:
    answered = [message("user", probe.sentinel("u")), message("assistant", probe.sentinel("a"))]
    plain = probe.render(answered)
    prompted = probe.render(answered, prompt=True)
    if plain is None:
        return  # (no answer is written at all: the frames say so)
    if prompted is None:
        draft.capability(
            PROMPTED,
            "refused",
            "the template refuses the generation prompt after an assistant message "
            f"({probe.refusal(answered, prompt=True)[:160]})",
        )
        return
    assistant = draft.frames["assistant"]
    declared = assistant.prompt_after.get(
        "assistant", assistant.open_after.get("assistant", assistant.open)
    )
    if prompted == plain and probe.closing and declared:
        draft.capability(
            PROMPTED,
            "not derived",
            "with the generation prompt the template leaves the last answer open: it ends "
            f"{excerpt(probe.tokens, prompted, last=True)}, without the "
            f"{probe.closing!r} that ends a conversation (needs concept: a last answer left "
            "open for the model to go on with)",
        )
        return
    if probe.closing and prompted == plain + probe.closing and declared:
        draft.capability(
            PROMPTED,
            "not derived",
            "the template writes no generation prompt after an assistant message: "
            f"{excerpt(probe.tokens, prompted, last=True)} ends the conversation, with the "
            f"{probe.closing!r} that ends a conversation without the prompt (needs concept: "
            "a conversation's end written after an answer whatever the prompt)",
        )
        return
    if not prompted.startswith(plain):
        shared = len(common_prefix(probe.tokens, plain, prompted))
        draft.capability(
            PROMPTED,
            "not derived",
            "with the generation prompt the template writes the last answer otherwise: after "
            f"{excerpt(probe.tokens, plain[:shared], last=True)} it writes "
            f"{excerpt(probe.tokens, prompted[shared:])} where without the prompt it writes "
            f"{excerpt(probe.tokens, plain[shared:])} (needs concept: a last answer the "
            "generation prompt rewrites)",
        )
        return
    written = prompted[len(plain) :]
    if not written:
        # No prompt at all, not even the reasoning's (Hy3, DeepSeek V3.2, Reka Edge, GigaChat
        # 3, Apriel): the render asked for one there is the render without.  Verified.
        draft.unprompted("assistant")
        draft.capability(
            PROMPTED,
            "derived",
            "the template writes no generation prompt after an answer: the model goes on "
            "after the answer's end",
        )
        return
    prompt = frame_prompt(draft, written)
    if prompt is None:
        draft.capability(
            PROMPTED,
            "not derived",
            f"the template writes {excerpt(probe.tokens, written) if written else 'nothing'} "
            "after an answer with the generation prompt, which does not end with what the "
            "reasoning writes in every generation prompt (needs concept: a generation prompt "
            "after an answer without the reasoning's)",
        )
        return
    asked = assistant.prompt_after.get("user", assistant.open_after.get("user", assistant.open))
    if prompt != declared and prompt in (asked, ""):
        # The prompt after an answer is the prompt after a query (Laguna's, which closes the
        # reasoning block the opener of a past turn leaves to the reasoning), or nothing
        # (Reka Edge, GigaChat 3: the model goes on after the answer's end).  Any other
        # prompt is left to verification, which finds what the declaration writes otherwise.
        assistant.prompt_after["assistant"] = prompt
    # What the declaration writes there is verified: generated conversations hold it.
    draft.capability(
        PROMPTED,
        "derived",
        f"the template writes {excerpt(probe.tokens, written)} after an answer"
        if written
        else "the template writes no generation prompt after an answer: the model goes on "
        "after the answer's end",
    )


def frame_prompt(draft: Draft, written: str) -> str | None:
    """The assistant frame's generation prompt where the template writes ``written`` after
    an answer: less what the reasoning adds to every prompt (its open fence, or an empty
    block); None where ``written`` does not end with it."""
    added = ""
    for concept in draft.concepts:
        if isinstance(concept, Reasoning) and concept.prompt in ("open", "empty"):
            added = text_of(concept.open) + (
                text_of(concept.close) if concept.prompt == "empty" else ""
            )
    if not written.endswith(added):
        return None
    return written[: len(written) - len(added)]
