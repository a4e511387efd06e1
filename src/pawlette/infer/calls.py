"""Tool calls: their shape, fences and separators, and what becomes of text beside them.

Probes (tools ``zq_alpha``/``zq_beta``; ``Zv1q`` is an argument's text, ``Zi1qabcde`` a call
id of nine letters and digits, as Mistral's templates require)::

    [user, assistant(calls=[alpha(zk1="Zv1q")])]            one call
    [user, assistant(calls=[alpha(...), beta(zk2=7)])]      two calls: separator, section
    [user, assistant("Za1q", calls=[alpha(...)])]           text with a call
    [user, assistant(calls=[alpha(zk1="Zv1q", zk3=true)])]  two parameters (tag calls)

The call is then read as one of the concepts that write calls:

- a JSON object holding the name and the arguments (:class:`~pawlette.declare.JsonCalls`),
  its keys as written, fenced or bare (the whole turn, several joined by a separator), the
  arguments as ``tojson`` writes them or as Jinja prints the object (Python's ``repr``:
  ``{'zk1': 'Zv1q'}``, from ``{{ call.function.arguments }}``; Phi-4-mini's);
- every call of the turn in one JSON array (:class:`~pawlette.declare.JsonCallList`), its
  keys in the order and with the separators the template writes them (Mistral Nemo's
  ``[TOOL_CALLS][{"name": ..., "arguments": ..., "id": ...}]``);
- the name outside JSON arguments (:class:`~pawlette.declare.NamedCalls`), with the call's
  id between them when the template writes it;
- a tag per parameter (:class:`~pawlette.declare.XmlCalls`), values as JSON or Python (an
  object as JSON, or as Jinja prints it: Python's ``repr``).

What the fences are comes from comparing one call with two: the opener is what the start of
the calls and the text between two calls end with, the close what follows a call in both.
Text beside calls is written before them, dropped, refused, or written in their place (a
turn with text writes no calls: Phi-4-mini's ``{% if content %}...{% elif tool_calls %}``);
written before them, it may be trimmed where no other turn's text is (Qwen3-Coder's).
A template that writes calls in another shape (Python call syntax, ids it makes up) is not
derived, and says which concept it needs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..codecs.python_literals import Quote, Spelling, encode_calls
from ..declare import (
    Ignored,
    JsonCallList,
    JsonCalls,
    NamedCalls,
    PythonCalls,
    Reasoning,
    Trimmed,
    XmlCalls,
)
from ..declare.concept import Concept
from ..declare.pieces import text_of
from ..engine.json_text import json_string
from ..formats.chatml.xml import CallTextTrimmed
from ..formats.solar.concepts import IdFirstCalls
from .answers import AnswerShape, derive_answer_fence
from .atoms import common_prefix, common_suffix, excerpt
from .call_turn_end import answer_after, derive_call_turn_end
from .draft import CALL_TEXT_EDGES, Draft
from .family_calls import derive_family_calls
from .fields import EDGES, TRIMS, Side, trimmed
from .probe import Probe, Underivable, call, message
from .tools import PROBE_TOOLS

__all__ = ["derive_calls"]

ALPHA = {"zk1": "Zv1q"}
TWO = {"zk1": "Zv1q", "zk3": True}
BETA = {"zk2": 7}


class _Calls:
    """The probe renders of the calls, cut to the calls' own text."""

    def __init__(self, probe: Probe, draft: Draft) -> None:
        self.probe = probe
        self.draft = draft
        self.first = call("Zi1qabcde", "zq_alpha", ALPHA)
        self.second = call("Zi2qabcde", "zq_beta", BETA)
        self.both = call("Zi1qabcde", "zq_alpha", TWO)
        self.answer: AnswerShape | None = None
        """What an answer writes that a turn of calls does not (:mod:`.answers`)."""

    def turn(self, calls: list[dict[str, Any]], content: str | None = None) -> list[dict[str, Any]]:
        u1 = self.probe.sentinel("u", 1)
        return [message("user", u1), message("assistant", content, tool_calls=calls)]

    def body(
        self, messages: list[dict[str, Any]], what: str = "the turn that holds calls"
    ) -> str | None:
        """The assistant turn's text between its opener and its end (None: refused);
        ``what``: the turn, as a refusal names it."""
        text = self.probe.render(messages, list(PROBE_TOOLS))
        if text is None:
            return None
        user, assistant = self.draft.frames["user"], self.draft.frames["assistant"]
        u1 = self.probe.sentinel("u", 1)
        start = text.find(u1)
        lead = u1 + user.end + user.after + assistant.open
        called = bool(messages[-1].get("tool_calls"))
        tail = assistant.end + assistant.after + ("" if called else answer_after(self.draft))
        if self.answer is not None and called and self.answer.call_end:
            tail = self.answer.call_end + assistant.after
        if start < 0 or not text.startswith(lead, start) or not text.endswith(tail):
            tokens = self.probe.tokens
            found = text[start + len(u1) :] if start >= 0 else text
            earlier = self._framed_before_another(messages, lead, tail) if called else None
            if earlier is not None:
                raise Underivable(
                    f"{what} is framed otherwise when it ends the conversation: there the "
                    f"template writes {excerpt(tokens, found, 160)}, and before another turn "
                    f"{excerpt(tokens, earlier, 160)}, as other assistant turns are framed "
                    "(needs concept: a last turn of calls written otherwise)"
                )
            raise Underivable(
                f"{what} is framed unlike other assistant turns: after the user's text the "
                f"template writes {excerpt(tokens, found, 160)}, where an assistant turn is "
                f"{excerpt(tokens, lead[len(u1) :])}, its text, then {excerpt(tokens, tail)}"
            )
        found = text[start + len(lead) : len(text) - len(tail)]
        if self.answer is not None and not called:
            # (an answer's own fences are not part of what a turn of calls is compared with)
            found = found.removeprefix(self.answer.open)
            if self.answer.close and found.endswith(self.answer.close):
                found = found[: -len(self.answer.close)]
        return found

    def _framed_before_another(
        self, messages: list[dict[str, Any]], lead: str, tail: str
    ) -> str | None:
        """The turn of calls that ends ``messages``, written before a user's turn, where it
        is framed there as other assistant turns are (from its opener to its end; None:
        it is not, or the template refuses it)."""
        u1, u2 = self.probe.sentinel("u", 1), self.probe.sentinel("u", 2)
        user = self.draft.frames["user"]
        text = self.probe.render([*messages, message("user", u2)], list(PROBE_TOOLS))
        if text is None or text.count(u1) != 1 or text.count(u2) != 1:
            return None
        start, end = text.find(u1), text.find(u2)
        turn = text[start:end]
        opener = user.open_after.get("assistant", user.open)
        if not turn.startswith(lead) or not turn.endswith(tail + opener):
            return None
        return turn[len(u1) : len(turn) - len(opener)]

    def empty(self) -> str | None:
        """The body of an assistant turn with no text: given an empty list of calls, or
        else (a template that opens its calls for any list, empty or not: Mistral Nemo's)
        without calls."""
        try:
            found = self.body(self.turn([], ""), "a turn with an empty list of calls")
        except Underivable:
            found = None
        if found is None:  # (refused, or framed otherwise)
            u1 = self.probe.sentinel("u", 1)
            plain = [message("user", u1), message("assistant", "")]
            return self.body(plain, "a turn with no text")
        return found


def derive_calls(probe: Probe, draft: Draft) -> None:
    if draft.skip("tool calls"):
        return
    if draft.status("tools") not in ("derived", "dropped"):
        draft.capability("tool calls", "not derived", "needs the tools to be derived first")
        return
    calls = _Calls(probe, draft)
    one = calls.turn([calls.first])
    if probe.render(one, list(PROBE_TOOLS)) is None:  # (shaped as callers shape it too)
        draft.capability(
            "tool calls",
            "not derived",
            f"the template refuses a turn of calls ({probe.refusal(one, list(PROBE_TOOLS))[:120]})",
        )
        return
    calls.answer = derive_answer_fence(probe, draft, one) or derive_call_turn_end(probe, draft, one)
    if _family_calls(draft, calls):
        return
    try:
        _derive(probe, draft, calls)
    except Underivable as error:
        draft.capability("tool calls", "not derived", str(error))


def _family_calls(draft: Draft, calls: _Calls) -> bool:
    """Whether the calls are a declared family's (:mod:`.family_calls`), now declared."""
    try:
        single = calls.body(calls.turn([calls.first]))
        pair = calls.body(calls.turn([calls.first, calls.second]))
        with_text = calls.body(calls.turn([calls.first], "Za1q"))
        empty = calls.empty() or ""
    except Underivable:
        return False
    if single is None or not single.startswith(empty):
        return False
    # (what a turn with no text writes, such as a reasoning block's stand-in, goes first)
    single = single[len(empty) :]
    pair = pair[len(empty) :] if pair is not None and pair.startswith(empty) else None
    with_text = with_text[len(empty) :] if with_text is not None else None
    return derive_family_calls(draft, single, pair, with_text, calls.first, calls.second)


def _derive(probe: Probe, draft: Draft, calls: _Calls) -> None:
    single = calls.body(calls.turn([calls.first]))
    try:
        empty = calls.empty()
    except Underivable:
        # A turn with no text framed otherwise than an answer (Seed-OSS writes an empty last
        # turn as a bare opener): the calls are taken to be the whole body, as below.
        empty = None
    if empty is None and single is not None:
        # The template refuses an assistant turn with nothing in it (Ministral 3's): the
        # calls are taken to be the whole body, which verification then holds to.
        empty = ""
    if empty is None or single is None:
        u1 = probe.sentinel("u", 1)
        plain = [message("user", u1), message("assistant", "")]
        refused = plain if empty is None else calls.turn([calls.first])
        what = "with no text" if empty is None else "of one call"
        raise Underivable(
            f"the template refuses a turn {what} "
            f"({probe.refusal(refused, list(PROBE_TOOLS))[:160]})"
        )
    if single == empty:
        draft.concepts.append(Ignored(("calls",)))
        draft.capability("tool calls", "dropped", "the template does not write calls")
        return
    empty = _written_before(draft, empty, single)
    if not single.startswith(empty):
        # A template that writes an empty list of calls (LFM2.5's ``[]`` between its call
        # markers): the turn without calls is the one a turn of calls starts like.
        u1 = probe.sentinel("u", 1)
        try:
            alone = calls.body([message("user", u1), message("assistant", "")])
        except Underivable:
            alone = None
        if alone is not None and single.startswith(alone):
            empty = alone
    if not single.startswith(empty):
        raise Underivable(f"a turn of calls starts unlike a turn of text ({single[:80]!r})")
    one = single[len(empty) :]
    pair = calls.body(calls.turn([calls.first, calls.second]))
    if pair is not None:
        if not pair.startswith(empty):
            raise Underivable("a turn of two calls starts unlike a turn of text")
        pair = pair[len(empty) :]
    with_text = calls.body(calls.turn([calls.first], "Za1q"))
    written = with_text
    arguments = json_string(ALPHA)
    name = "zq_alpha"
    if name not in one:
        raise Underivable(f"the template does not write the call's name ({one[:120]!r})")
    found = _json_object(one, name, ALPHA)
    printed = "tojson"
    if found is None and repr(ALPHA) in one:
        # The template prints the arguments object (``{{ call.function.arguments }}``):
        # Python's repr of it.  Read as JSON in its place, the rest is derived as for JSON.
        as_json = _repr_as_json(one)
        found = _json_object(as_json, name, ALPHA)
        if found is not None:
            printed = "repr"
            one = as_json
            pair = None if pair is None else _repr_as_json(pair)
            with_text = None if with_text is None else _repr_as_json(with_text)
    if found is not None:
        before = one[: found[0]]
        if before.rstrip().endswith("["):
            _json_call_list(probe, draft, calls, one, pair, with_text, empty, found, printed)
        else:
            _json_calls(probe, draft, one, pair, with_text, empty, found, printed)
    elif arguments in one:
        _named_calls(probe, draft, calls, one, pair, with_text, empty)
    elif "zk1" in one and "Zv1q" in one and "zq_alpha(zk1=" not in one:
        _xml_calls(probe, draft, calls, one, pair, with_text, empty)
    elif "[zq_alpha(zk1=" in one:
        _python_calls(draft, calls, one, pair, with_text, empty)
    else:
        raise Underivable(
            f"the template writes a call as {one[:120]!r}: neither JSON nor tags (needs concept: "
            "calls in another syntax, such as Python calls)"
        )
    _trimmed_beside_calls(draft, calls, written)


def _trimmed_beside_calls(draft: Draft, calls: _Calls, written: str | None) -> None:
    """The text before calls trimmed, where the assistant's other text is not (a text
    with whitespace at its ends written as the text without, on the side and of the
    characters every padding shows: ``| trim``, ``.strip('\\n')``, ``.rstrip()``...):
    :class:`CallTextTrimmed`.  Not where the verification found the trim wrong (the text
    is then written as given, a difference recorded)."""
    if written is None or draft.status("text with tool calls") != "derived":
        return
    if CALL_TEXT_EDGES in draft.blocked:
        return
    if any(isinstance(item, Trimmed) and "assistant" in item.roles for item in draft.concepts):
        return
    # Reasoning that trims the text after its block (Qwen 3's ``lstrip('\\n')`` after
    # ``</think>``) trims it in the probe's turn, the last: that is the reasoning's trim.
    after_block = next(
        (item.trim for item in draft.concepts if isinstance(item, Reasoning) and item.trim), None
    )
    candidates: list[tuple[Side, str | None] | None] = [None, *TRIMS]
    for start, end in EDGES:
        given = start + "Za1q" + end
        try:
            padded = calls.body(calls.turn([calls.first], given))
        except Underivable:
            return
        texts = {given, given.lstrip(after_block)} if after_block else {given}
        candidates = [
            found
            for found in candidates
            if any(
                padded == written.replace("Za1q", text if found is None else trimmed(text, *found))
                for text in texts
            )
        ]
    if candidates and candidates[0] is not None:
        side, characters = candidates[0]
        draft.concepts.append(
            CallTextTrimmed(roles=("assistant",), side=side, characters=characters)
        )


def _written_before(draft: Draft, empty: str, single: str) -> str:
    """What the declaration writes before a turn's calls: the template's turn without text
    (``empty``), or the reasoning's stand-in where that is longer and the turn of calls
    starts with it (the stand-in holds the line a template writes before any text or
    calls, which a turn with nothing in it leaves out: Laguna's ``</think>\\n``)."""
    for concept in draft.concepts:
        if isinstance(concept, Reasoning) and concept.keep == "calls":
            # Reasoning kept on turns of calls alone: such a turn writes an empty block.
            block = text_of(concept.open) + text_of(concept.close)
            if single.startswith(block):
                return block
        if isinstance(concept, Reasoning):
            absent = text_of(concept.absent)
            if len(absent) > len(empty) and absent.startswith(empty) and single.startswith(absent):
                return absent
    return empty


def text_lead(draft: Draft) -> str:
    """What the declaration writes before an assistant's text that is not empty (the
    assistant's :class:`~pawlette.declare.Trimmed` ``lead``: GLM-4.6's newline)."""
    for concept in draft.concepts:
        if isinstance(concept, Trimmed) and "assistant" in concept.roles:
            return text_of(concept.lead)
    return ""


def _repr_as_json(text: str) -> str:
    """``text`` with the probe calls' arguments printed as Python's ``repr`` written as JSON."""
    for arguments in (ALPHA, BETA):
        text = text.replace(repr(arguments), json_string(arguments))
    return text


def _parallel(draft: Draft, separator: str) -> None:
    """Several calls in a turn are derived: recorded, so that verification writes them."""
    draft.capability("parallel tool calls", "derived", f"calls joined by {separator!r}")


def _json_object(
    text: str, name: str, arguments: Mapping[str, Any]
) -> tuple[int, int, dict[str, Any]] | None:
    decoder = json.JSONDecoder()
    position = text.find("{")
    while position >= 0:
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            value, end = None, -1
        if isinstance(value, dict) and name in value.values() and dict(arguments) in value.values():
            return position, end, value
        position = text.find("{", position + 1)
    return None


def _split_fences(
    probe: Probe, first: str, between: str, last: str
) -> tuple[str, str, str, str, str]:
    """``(section_open, open, close, separator, section_close)`` from the text before one
    call (``section_open + open``), between two (``close + separator + open``) and after the
    last (``close + section_close``)."""
    tokens = probe.tokens
    opening = common_suffix(tokens, first, between)
    closing = common_prefix(tokens, between[: len(between) - len(opening)], last)
    separator = between[len(closing) : len(between) - len(opening)]
    return first[: len(first) - len(opening)], opening, closing, separator, last[len(closing) :]


def _content(draft: Draft, with_text: str | None, empty: str, one: str) -> tuple[str, str]:
    """How text beside calls is written: ``("written", separator)``, ``("dropped", "")``,
    ``("refused", "")`` or ``("replaces_calls", "")`` (the text alone: no calls written)."""
    if with_text is None:
        draft.capability(
            "text with tool calls", "refused", "the template refuses text beside calls"
        )
        return "refused", ""
    if not with_text.startswith(empty):
        raise Underivable("a turn of text and calls starts unlike a turn of text")
    rest = with_text[len(empty) :]
    if "Za1q" not in rest:
        return "dropped", ""
    if rest == "Za1q":
        draft.capability(
            "text with tool calls",
            "dropped",
            "the template writes the text in place of the calls (their loss is recorded)",
        )
        return "replaces_calls", ""
    before, after = rest.split("Za1q", 1)
    if before != text_lead(draft) or not after.endswith(one):
        raise Underivable(_text_after_calls(draft, rest, one))
    # Recorded, so that verification writes turns of text and calls too.
    draft.capability("text with tool calls", "derived", "the text is written before the calls")
    return "written", after[: len(after) - len(one)]


def _text_after_calls(draft: Draft, rest: str, one: str) -> str:
    """Why text beside calls written as ``rest`` (the turn's body after what a turn without
    text writes; ``one``: the call alone) is not derived: written after the calls, in the
    turn (Gemma 4's) or in an assistant turn of its own (DeepSeek R1's distills'), or else
    written otherwise."""
    assistant = draft.frames["assistant"]
    if rest.startswith(one) and rest.endswith("Za1q"):
        between = rest[len(one) : -len("Za1q")]
        turns = assistant.end + assistant.after + assistant.open
        if assistant.open and (one + between).endswith(turns):
            # (a turn of calls alone ends with that turn, empty: the message's text as the
            # template reads a missing one)
            return (
                "the template writes the text after the calls, in an assistant turn of its own "
                f"(opened after the calls' turn ends: {excerpt(draft.tokens, turns)}), where a "
                "model writes it before them (needs concept: text after calls as a turn of "
                "its own)"
            )
        return (
            f"the template writes the text after the calls ({excerpt(draft.tokens, between)} "
            "between them), where a model writes it before them (needs concept: text written "
            "after calls)"
        )
    return f"text beside calls is written as {excerpt(draft.tokens, rest, 160)}"


def _json_calls(
    probe: Probe,
    draft: Draft,
    one: str,
    pair: str | None,
    with_text: str | None,
    empty: str,
    found: tuple[int, int, dict[str, Any]],
    printed: str = "tojson",
) -> None:
    start, end, value = found
    keys = list(value)
    name_key = next(key for key in keys if value[key] == "zq_alpha")
    arguments_key = next(key for key in keys if value[key] == ALPHA)
    id_key = next((key for key in keys if value[key] == "Zi1qabcde"), None)
    concept = JsonCalls(
        open=(), close=(), name_key=name_key, arguments_key=arguments_key, id_key=id_key
    )
    written = one[start:end]
    expected = concept.item("zq_alpha", "Zi1qabcde", json_string(ALPHA))
    if written != expected or len(keys) != 2 + (id_key is not None):
        raise Underivable(
            f"a call is written as {written!r}, not as {expected!r} (needs concept: call JSON "
            "with other keys, order or spacing)"
        )
    before, after = one[:start], one[end:]
    if before.rstrip().endswith("[") or after.lstrip().startswith(","):
        raise Underivable(
            "calls are written as one JSON list (needs concept: calls as a JSON list)"
        )
    lined: str | None = None
    first_only = False
    if pair is None:
        parallel = False
        draft.capability(
            "parallel tool calls", "refused", "the template refuses several calls in a turn"
        )
        separator = ""
    else:
        second = json_string(BETA)
        at = pair.find(second)
        object_start = pair.rfind("{", 0, pair.rfind('"zq_beta"'))
        if at < 0 or object_start < 0:
            # A turn of two calls written as the turn of the first alone (GigaChat 3): the
            # others are a recorded loss.
            first_only = pair == one
            draft.capability(
                "parallel tool calls",
                "dropped" if first_only else "not derived",
                "the template writes only the first call"
                + (" (the others' loss is recorded)" if first_only else ""),
            )
            parallel, separator = False, ""
        else:
            between = pair[len(before) + len(written) : object_start]
            if between.strip() == "" and between and before.strip() and after.strip():
                # Whitespace alone between two objects inside one opener and close
                # (MiniMax M1's one a line): the objects are a list without brackets.
                lined = between
            elif not between.startswith(after) or not between.endswith(before):
                raise Underivable(f"two calls are joined by {between!r}")
            separator = (
                between[len(after) : len(between) - len(before)]
                if lined is None and len(between) >= len(after) + len(before)
                else ""
            )
            parallel = True
            _parallel(draft, between if lined is not None else separator)
    bare = not before.strip() and not after.strip()
    content, text_separator = _content(draft, with_text, empty, one)
    if content == "written" and text_separator != separator and bare is False:
        if not separator and parallel and pair is not None:
            # (JsonCalls writes its one separator both after text and between calls: the
            # calls are declared with the text's, one a turn)
            parallel = False
            draft.capability(
                "parallel tool calls",
                "not derived",
                f"text is separated from calls by {text_separator!r}, calls from each other by "
                "nothing (needs concept: JSON calls with a separator after text of their own, "
                "as Reka's RunOnCalls writes them)",
            )
        if not separator:
            separator = text_separator
        elif text_separator != separator:
            raise Underivable(
                f"text is separated from calls by {text_separator!r}, calls from each other by "
                f"{separator!r}"
            )
    if lined is not None:
        roles = {
            key: "name" if key == name_key else "id" if key == id_key else "arguments"
            for key in keys
        }
        _listed_without_brackets(draft, before, after, lined, roles, content, text_separator)
        return
    if content == "dropped":
        draft.capability(
            "text with tool calls",
            "dropped",
            "the template does not write text beside calls (its loss is recorded)",
        )
    _add_calls(
        draft,
        JsonCalls(
            arguments=printed,  # type: ignore[arg-type]
            ascii=printed == "tojson" and _escapes(probe, draft),
            open=None if bare else draft.fence(before),
            close=draft.fence(after) if not bare else (),
            separator=draft.fence(separator),
            name_key=name_key,
            arguments_key=arguments_key,
            id_key=id_key,
            parallel=parallel,
            first_only=first_only,
            with_content=content == "written",
            drops_content=content == "dropped",
            drops_calls=content == "replaces_calls",
        ),
        dropping=content == "dropped",
    )
    draft.capability(
        "tool calls",
        "derived",
        f"JSON objects {{{name_key!r}, {arguments_key!r}}}"
        + (" as the whole turn" if bare else f" in {before.strip()!r}")
        + (", the arguments as Python's repr" if printed == "repr" else ""),
    )


def _add_calls(draft: Draft, concept: Concept, dropping: bool) -> None:
    """Declare ``concept``; one that drops the text beside its calls (``dropping``) comes
    before whatever trims (and so writes) an assistant's text: the first concept that
    writes a text writes it."""
    at = len(draft.concepts)
    if dropping:
        at = next(
            (index for index, item in enumerate(draft.concepts) if isinstance(item, Trimmed)), at
        )
    draft.concepts.insert(at, concept)


def _listed_without_brackets(
    draft: Draft,
    before: str,
    after: str,
    between: str,
    keys: dict[str, str],
    content: str,
    text_separator: str,
) -> None:
    """Calls as JSON objects one after another, ``between`` them, inside ``before`` and
    ``after``: a :class:`~pawlette.declare.JsonCallList` with no brackets.  ``keys``: each
    key of a call's object, in the order written, with its role."""
    roles = tuple((role, key) for key, role in keys.items())
    _add_calls(
        draft,
        JsonCallList(
            open=draft.fence(before),
            close=draft.fence(after),
            keys=roles,
            text_separator=draft.fence(text_separator),
            content=content,  # type: ignore[arg-type]
            list_open="",
            list_close="",
            item_separator=between,
        ),
        dropping=content == "dropped",
    )
    if content == "dropped":
        draft.capability(
            "text with tool calls",
            "dropped",
            "the template does not write text beside calls (its loss is recorded)",
        )
    draft.capability(
        "tool calls",
        "derived",
        f"JSON objects one after another, joined by {between!r}, in {before.strip()!r}",
    )


_ROLES = {"zq_alpha": "name", "Zi1qabcde": "id"}
"""The probe call's values, by the role of the key that holds them (the arguments aside)."""


def _json_call_list(
    probe: Probe,
    draft: Draft,
    calls: _Calls,
    one: str,
    pair: str | None,
    with_text: str | None,
    empty: str,
    found: tuple[int, int, dict[str, Any]],
    printed: str,
) -> None:
    """Calls written as one JSON array: its keys in the order the template writes them,
    read from the call object, its separators from the object's and the array's text."""
    start, end, value = found
    if printed != "tojson":
        raise Underivable(
            "calls are written as one JSON array with the arguments as Python's repr (needs "
            "concept: a call list whose arguments are printed objects)"
        )
    keys: list[tuple[str, str]] = []
    positional = False
    for key, held in value.items():
        role = "arguments" if held == ALPHA else _ROLES.get(held) if isinstance(held, str) else None
        if role is None and held == "0" and not any(known == "id" for known, _ in keys):
            # The call's position among the conversation's calls in place of its id
            # (Cohere's templates renumber calls so): verification holds it to the template.
            role, positional = "id", True
        if role is None:
            raise Underivable(
                f"a call in a JSON array holds the key {key!r} besides its name, arguments and id"
                " (needs concept: call JSON with other keys)"
            )
        keys.append((role, key))
    written = one[start:end]
    concept = None
    for separators in ((", ", ": "), (",", ":"), (",", ": "), (", ", ":")):
        candidate = JsonCallList(open=(), keys=tuple(keys), separators=separators)
        identifier = "0" if positional else "Zi1qabcde"
        if candidate.item("zq_alpha", identifier, json_string(ALPHA)) == written:
            concept = candidate
            break
    if concept is None:
        raise Underivable(
            f"a call in a JSON array is written as {written!r}, not as JSON with its keys in "
            "order (needs concept: call JSON with other spacing)"
        )
    before, after = one[:start], one[end:]
    opening = before.rstrip()
    list_open = "[" + before[len(opening) :]
    opening = opening[: len(opening) - 1]
    closing = after.lstrip()
    if not closing.startswith("]"):
        raise Underivable(f"a JSON array of calls is closed by {after[:40]!r}")
    list_close = after[: len(after) - len(closing)] + "]"
    closing = closing[1:]
    item_separator: str | None = None
    parallel = pair is not None
    if pair is None:
        draft.capability(
            "parallel tool calls", "refused", "the template refuses several calls in a turn"
        )
    else:
        second = pair.find("{", len(before) + len(written))
        if not pair.startswith(before + written) or second < 0:
            raise Underivable(f"two calls in a JSON array are written as {pair[:160]!r}")
        between = pair[len(before) + len(written) : second]
        if between.strip() != ",":
            raise Underivable(f"two calls in a JSON array are joined by {between!r}")
        item_separator = None if between == concept.separators[0] else between
        _parallel(draft, between)
    content, text_separator = _content(draft, with_text, empty, one)
    if content == "dropped":
        draft.capability(
            "text with tool calls",
            "dropped",
            "the template does not write text beside calls (its loss is recorded)",
        )
    bare = not opening.strip()
    if bare and content == "written":
        raise Underivable("text is written before a JSON array of calls that has no opener")
    if _escapes(probe, draft):
        raise Underivable(
            "calls are written as one JSON array with non-ASCII text escaped (needs concept: a "
            "call list written as ASCII)"
        )
    has_id = any(role == "id" for role, _ in keys)
    draft.concepts.append(
        JsonCallList(
            open=None if bare else draft.fence(opening),
            close=() if bare else draft.fence(closing),
            keys=tuple(keys),
            separators=concept.separators,
            text_separator=draft.fence(text_separator),
            content=content,  # type: ignore[arg-type]
            parallel=parallel,
            id_pattern="[A-Za-z0-9]{9}"
            if has_id and not positional and _ids_checked(probe, calls)
            else None,
            list_open=list_open,
            list_close=list_close,
            item_separator=item_separator,
            ids="positional" if positional else "given",
        )
    )
    draft.capability(
        "tool calls",
        "derived",
        "one JSON array of objects {"
        + ", ".join(repr(key) for _, key in keys)
        + "}"
        + (" as the whole turn" if bare else f" after {opening.strip()!r}"),
    )


WIDE = {"zk1": "Zv1q\u00e9\u2014"}
"""A call's arguments with non-ASCII text."""


def _escapes(probe: Probe, draft: Draft) -> bool:
    """Whether the template writes a call's non-ASCII arguments escaped
    (``tojson(ensure_ascii=True)``)."""
    calls = _Calls(probe, draft)
    try:
        written = calls.body(calls.turn([call("Zi1qabcde", "zq_alpha", WIDE)]))
    except Underivable:
        return False
    return written is not None and json.dumps(WIDE) in written


def _named_calls(
    probe: Probe,
    draft: Draft,
    calls: _Calls,
    one: str,
    pair: str | None,
    with_text: str | None,
    empty: str,
) -> None:
    arguments = json_string(ALPHA)
    name_at = one.find("zq_alpha")
    arguments_at = one.find(arguments, name_at)
    if arguments_at < 0:
        raise Underivable("the call's arguments come before its name")
    first = one[:name_at]
    name_open: str | None = None
    if "Zi1qabcde" in first:
        # The id before the name (Solar Open's ``<|tool_call:begin|>ID<|tool_call:name|>``):
        # what comes between them opens the name, and is left out of the fences around calls.
        first, name_open = first.split("Zi1qabcde", 1)
        if not name_open.strip():
            raise Underivable("no fence between a call's id and its name")
    middle = one[name_at + len("zq_alpha") : arguments_at]
    last = one[arguments_at + len(arguments) :]
    id_open: str | None = None
    if "Zi1qabcde" in middle:
        id_open, arguments_open = middle.split("Zi1qabcde", 1)
    else:
        arguments_open = middle
    if pair is None:
        draft.capability(
            "parallel tool calls", "refused", "the template refuses several calls in a turn"
        )
        section_open, opening, closing, separator, section_close = "", first, "", "", last
        parallel = False
    else:
        next_at = pair.find("zq_beta")
        end_first = pair.find(arguments) + len(arguments)
        if next_at < 0:
            draft.capability(
                "parallel tool calls", "not derived", "the template writes only the first call"
            )
            section_open, opening, closing, separator, section_close = "", first, "", "", last
            parallel = False
        else:
            between = pair[end_first:next_at]
            if name_open is not None:
                led = "Zi2qabcde" + name_open
                if not between.endswith(led):
                    raise Underivable(f"two calls led by their ids are joined by {between!r}")
                between = between[: -len(led)]
            section_open, opening, closing, separator, section_close = _split_fences(
                probe, first, between, last
            )
            parallel = True
            _parallel(draft, separator)
    content, text_separator = _content(draft, with_text, empty, one)
    if not opening.strip() or not arguments_open.strip():
        raise Underivable(
            f"no fence before the name ({opening!r}) or the arguments ({arguments_open!r})"
        )
    if name_open is not None:
        draft.concepts.append(
            IdFirstCalls(
                open=draft.fence(opening),
                name_open=draft.fence(name_open),
                arguments_open=draft.fence(arguments_open),
                close=draft.fence(closing),
                section_open=draft.fence(section_open),
                section_close=draft.fence(section_close),
                separator=draft.fence(separator),
                text_separator=draft.fence(text_separator),
                content=content,  # type: ignore[arg-type]
                parallel=parallel,
            )
        )
        draft.capability(
            "tool calls",
            "derived",
            f"id, name then JSON arguments: {opening.strip()}ID{name_open.strip()}NAME"
            f"{arguments_open.strip()}{{...}}",
        )
        return
    draft.concepts.append(
        NamedCalls(
            open=draft.fence(opening),
            arguments_open=draft.fence(arguments_open),
            close=draft.fence(closing),
            id_open=None if id_open is None else draft.fence(id_open),
            section_open=draft.fence(section_open),
            section_close=draft.fence(section_close),
            separator=draft.fence(separator),
            text_separator=draft.fence(text_separator),
            content=content,  # type: ignore[arg-type]
            id_pattern="[A-Za-z0-9]{9}"
            if id_open is not None and _ids_checked(probe, calls)
            else None,
            parallel=parallel,
        )
    )
    draft.capability(
        "tool calls",
        "derived",
        f"name then JSON arguments: {opening.strip()}NAME{arguments_open.strip()}{{...}}",
    )


NESTED = {"zk1": "Zv1q", "zk3": {"zk5": 7}}
"""A call whose second parameter is an object."""


def _objects_printed(calls: _Calls) -> bool:
    """Whether the template writes a parameter that is an object as Jinja prints it
    (Python's ``{'zk5': 7}``, from ``{{ value }}``), not as JSON."""
    try:
        written = calls.body(calls.turn([call("Zi1qabcde", "zq_alpha", NESTED)]))
    except Underivable:
        return False
    return written is not None and repr(NESTED["zk3"]) in written


def _ids_checked(probe: Probe, calls: _Calls) -> bool:
    """Whether the template refuses a call id that is not nine letters and digits."""
    other = call("call_1", "zq_alpha", ALPHA)
    return probe.render(calls.turn([other]), list(PROBE_TOOLS)) is None


SWAPPED = {"zk3": True, "zk1": "Zv1q"}
"""A call whose first value is not a string and whose second is."""


def _other_close(calls: _Calls, after_key3: str, key_close: str, value_to_key: str) -> str | None:
    """The close of a key before a value that is not a string, where it differs from the one
    before a string (``key_close``): what stands between the probe's second key and its
    boolean value, held to by a call with the two in the other order, written with the
    closes swapped (None: the closes follow the parameter's place, not its value)."""
    at = min(
        (found for found in (after_key3.find("true"), after_key3.find("True")) if found > 0),
        default=-1,
    )
    if at < 0:
        return None
    other = after_key3[:at]
    try:
        swapped = calls.body(calls.turn([call("Zi1qabcde", "zq_alpha", SWAPPED)]))
    except Underivable:
        return None
    expected = "zk3" + other + after_key3[at : at + 4] + value_to_key + "zk1" + key_close + "Zv1q"
    if swapped is None or expected not in swapped:
        return None
    return other


def _no_arguments(
    calls: _Calls, empty: str, head: str, key_open: str, value_close: str, tail: str
) -> tuple[str, int]:
    """What a call without arguments holds where its parameters would stand (DeepSeek V4's
    blank line; empty where it holds nothing), and how much of ``key_open`` (the text the
    name's close and a value's close share before a key) belongs to those closes instead:
    the first split at which the call without arguments is the call's ``head`` (its opener,
    name and name's close), that text, and what follows the last value's close (``tail``:
    the value's close, then the call's)."""
    try:
        written = calls.body(calls.turn([call("Zi1qabcde", "zq_alpha", {})]))
    except Underivable:
        return "", 0
    if written is None or not written.startswith(empty):
        return "", 0
    written = written[len(empty) :]
    for shift in range(len(key_open) + 1):
        start, value_end = head + key_open[:shift], value_close + key_open[:shift]
        if not tail.startswith(value_end):
            break
        close = tail[len(value_end) :]
        if (
            len(written) >= len(start) + len(close)
            and written.startswith(start)
            and written.endswith(close)
        ):
            return written[len(start) : len(written) - len(close)], shift
    return "", 0


def _xml_calls(
    probe: Probe,
    draft: Draft,
    calls: _Calls,
    one: str,
    pair: str | None,
    with_text: str | None,
    empty: str,
) -> None:
    two = calls.body(calls.turn([calls.both]))
    if two is None or not two.startswith(empty):
        raise Underivable("the template refuses a call with two parameters")
    two = two[len(empty) :]
    first, after_name, key_close, tail = Probe.cut(one, ["zq_alpha", "zk1", "Zv1q"], "a call")
    pieces = Probe.cut(two, ["zq_alpha", "zk1", "Zv1q", "zk3"], "a call with two parameters")
    value_to_key = pieces[3]
    after_key3 = pieces[4]
    key_open = common_suffix(probe.tokens, after_name, value_to_key)
    name_close = after_name[: len(after_name) - len(key_open)]
    value_close = value_to_key[: len(value_to_key) - len(key_open)]
    key_close_other = ""
    # What a call without arguments holds (DeepSeek V4's blank line) tells where the name's
    # close ends and a parameter's opener begins, which the two renders above leave open.
    no_arguments, shift = _no_arguments(
        calls, empty, first + "zq_alpha" + name_close, key_open, value_close, tail
    )
    name_close, value_close = name_close + key_open[:shift], value_close + key_open[:shift]
    key_open = key_open[shift:]
    if not after_key3.startswith(key_close):
        # The key's close may say the value's kind (DeepSeek-V3.2's ``string="true">`` before
        # a string, ``string="false">`` before any other value): held to by a call whose
        # first value is not a string and whose second is.
        other = _other_close(calls, after_key3, key_close, value_to_key)
        if other is None:
            raise Underivable(
                f"the first parameter's key is closed by {key_close!r}, the second's by "
                f"{excerpt(probe.tokens, after_key3, 40)} (needs concept: parameters closed "
                "otherwise after the first)"
            )
        key_close_other = other
    rest = after_key3[len(key_close_other or key_close) :]
    if rest.startswith("True"):
        values = "literal" if _objects_printed(calls) else "python"
    elif rest.startswith("true"):
        values = "json"
    else:
        raise Underivable(f"a boolean parameter is written as {rest[:20]!r}")
    if not tail.startswith(value_close):
        raise Underivable("the last parameter is closed unlike the others")
    last = tail[len(value_close) :]
    if pair is None:
        draft.capability(
            "parallel tool calls", "refused", "the template refuses several calls in a turn"
        )
        section_open, opening, closing, separator, section_close = "", first, last, "", ""
        parallel = False
    else:
        next_at = pair.find("zq_beta")
        end_first = pair.find("Zv1q") + len("Zv1q") + len(value_close)
        if next_at < 0:
            draft.capability(
                "parallel tool calls", "not derived", "the template writes only the first call"
            )
            section_open, opening, closing, separator, section_close = "", first, last, "", ""
            parallel = False
        else:
            between = pair[end_first:next_at]
            section_open, opening, closing, separator, section_close = _split_fences(
                probe, first, between, last
            )
            parallel = True
            _parallel(draft, separator)
    content, text_separator = _content(draft, with_text, empty, one)
    if content != "written":
        raise Underivable(f"text beside tag calls is {content} (needs concept)")
    draft.concepts.append(
        XmlCalls(
            open=draft.fence(opening),
            name_close=draft.fence(name_close),
            key_open=draft.fence(key_open),
            key_close=draft.fence(key_close),
            value_close=draft.fence(value_close),
            close=draft.fence(closing),
            section_open=draft.fence(section_open),
            section_close=draft.fence(section_close),
            separator=draft.fence(separator),
            text_separator=draft.fence(text_separator),
            values=values,  # type: ignore[arg-type]
            parallel=parallel,
            key_close_other=draft.fence(key_close_other),
            no_arguments=draft.fence(no_arguments),
        )
    )
    draft.capability(
        "tool calls",
        "derived",
        f"a tag per parameter: {opening.strip()}NAME{name_close.strip()}"
        f"{key_open.strip()}KEY{key_close.strip()}VALUE{value_close.strip()}",
    )


SPELLED = {"zk1": "Zv'1q", "zk3": True, "zk4": {"zk5": "Zv2q"}}
"""A call whose arguments tell the Python spellings apart: a string holding a quote, a
boolean, an object."""

_SPELLINGS: tuple[tuple[Quote, Spelling], ...] = (
    ("'", "literal"),
    ('"', "literal"),
    ("repr", "literal"),
    ("repr", "template"),
)


def _python_calls(
    draft: Draft,
    calls: _Calls,
    one: str,
    pair: str | None,
    with_text: str | None,
    empty: str,
) -> None:
    """Calls as one Python list (:class:`PythonCalls`): the fences around the list, what
    joins two calls, and the spelling of the arguments that writes the probe call as the
    template does."""
    start = one.find("[zq_alpha(")
    opening = one[:start]
    spelled = calls.body(calls.turn([call("Zi1qabcde", "zq_alpha", SPELLED)]))
    if spelled is None or not spelled.startswith(empty + opening):
        raise Underivable("the template refuses a call whose arguments hold a quote and an object")
    spelled = spelled[len(empty) + len(opening) :]
    found = None
    for quote, spelling in _SPELLINGS:
        listed = encode_calls([("zq_alpha", json_string(SPELLED))], quote=quote, spelling=spelling)
        if spelled.startswith(listed):
            found = quote, spelling, listed
            break
    if found is None:
        raise Underivable(
            f"a Python call is written as {spelled[:120]!r}, in no spelling a concept declares "
            "(needs concept: Python calls spelled otherwise)"
        )
    quote, spelling, listed = found
    closing = spelled[len(listed) :]
    written = encode_calls([("zq_alpha", json_string(ALPHA))], quote=quote, spelling=spelling)
    if one != opening + written + closing:
        raise Underivable(f"a Python call list is written as {one[:120]!r}")
    between = ", "
    parallel = pair is not None and "zq_beta(" in pair
    if pair is None:
        draft.capability(
            "parallel tool calls", "refused", "the template refuses several calls in a turn"
        )
    elif not parallel:
        draft.capability(
            "parallel tool calls", "not derived", "the template writes only the first call"
        )
    else:
        head = opening + written[:-1]
        end = pair.find("zq_beta(")
        if not pair.startswith(head):
            raise Underivable(f"two Python calls are written as {pair[:160]!r}")
        between = pair[len(head) : end]
        pairs = [("zq_alpha", json_string(ALPHA)), ("zq_beta", json_string(BETA))]
        both = encode_calls(pairs, quote=quote, separator=between, spelling=spelling)
        if pair != opening + both + closing:
            raise Underivable(f"two Python calls are written as {pair[:160]!r}")
        _parallel(draft, between)
    content, text_separator = _content(draft, with_text, empty, one)
    if content not in ("written", "refused"):
        raise Underivable(f"text beside Python calls is {content} (needs concept)")
    if not opening.strip():
        raise Underivable("no fence before a Python call list")
    draft.concepts.append(
        PythonCalls(
            open=draft.fence(opening),
            close=draft.fence(closing),
            separator=draft.fence(text_separator),
            between=between,
            quote=quote,
            parallel=parallel,
            with_content=content == "written",
            spelling=spelling,
        )
    )
    draft.capability(
        "tool calls",
        "derived",
        f"one Python list after {opening.strip()!r}, arguments spelled "
        + ("as the template writes them" if spelling == "template" else f"with {quote} quotes"),
    )
