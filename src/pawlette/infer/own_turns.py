"""Own turns: every assistant turn a chat template writes, parsed back by a format.

For the assistant message at ``i`` of a conversation, the template renders ``messages[:i]``
with the generation prompt and ``messages[:i + 1]`` without; the first begins the second, and
the rest is the turn's own text: what a model trained on the template writes after that
prompt.  The format parses that text (knowing the prompt, as a server does) and must give
the message back, compared as :func:`canonical_message` writes both: text parts joined,
empty text and reasoning as none, call arguments as objects (ids only where the turn's text
holds them).

Where a template's prompt does not begin its own past turn, the turn is cut as the format
declares its prompt (:func:`own_turns`' ``declared``; or given, as the test harness gives
them): a prompt written after every render (Command R7B's, :class:`~pawlette.declare.PromptAlways`)
is cut off both renders; a generation prompt that writes more than the assistant's opener
(Gemma 4's empty thought block) is cut back to the opener, and where the past turn holds a
stand-in for it (DeepSeek V3.2's ``</think>`` for ``<think></think>``) the model's text
follows the stand-in; a render whose text before the opener differs (Hermes writes a newline
after a result only when a message follows) is cut after its last opener.  A turn none of
these cut out is counted as *not cut out* (the template's renders give no text of its own to
read), as is a turn of a conversation the template refuses or (``declared``) the format
refuses: none is a failure to read.  With ``declared``, a turn the template writes on past
the format's stop text is also read up to that stop, as a model stops there, and what
follows it as turns of their own (the Qwen R1 distill writes a turn's text after its calls,
as an answer of its own).

The message is compared as the format declares it gives it back: with ``within_losses``, what
the format's render of the conversation reports it loses in that message
(``Rendering.losses``: a field not written, text trimmed, a field "read back as" another,
a call after the first not written) is taken away or moved before the comparison, and such a
turn is counted as parsed back within its losses.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..declare import Layout, PromptAlways, Reasoning, layout_of
from ..declare.content import trim_of_loss
from ..declare.pieces import text_of
from ..errors import RequestError
from ..format import Format
from .fields import trimmed

__all__ = [
    "Normalise",
    "TurnConversation",
    "TurnDifference",
    "TurnReport",
    "always_prompt",
    "canonical_message",
    "first_difference",
    "own_turns",
    "trimmed_as_lost",
]

WINDOW = 40
"""Characters shown on each side of where two texts part."""

Normalise = Callable[[dict[str, Any]], dict[str, Any]]
"""An assistant message as the format is declared to give it back."""

UNREAD = ("differs", "parse failed")
"""The problems that are failures to read a turn the template writes (the others, ``"not a
prefix"`` and ``"refused"``, are turns the template gives no text of their own, and
``"format refused"`` those of a conversation the format cannot express)."""


class TurnConversation(Protocol):
    """A conversation whose assistant turns are read: OpenAI ``messages``, ``tools`` (or
    None) and the ``kinds`` it holds."""

    @property
    def messages(self) -> list[dict[str, Any]]: ...

    @property
    def tools(self) -> list[dict[str, Any]] | None: ...

    @property
    def kinds(self) -> frozenset[str]: ...


class TemplateRender(Protocol):
    """A template's render: its ``text``, or its ``refusal`` (``text`` None)."""

    @property
    def text(self) -> str | None: ...

    @property
    def refusal(self) -> str | None: ...


RenderTemplate = Callable[
    [Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]] | None, bool], TemplateRender
]
"""The template, rendering ``messages`` and ``tools`` with or without the generation prompt."""


def first_difference(expected: str, found: str) -> int:
    """The offset of the first character where the two differ (the shorter's length when one
    is a prefix of the other); -1 when they are equal."""
    if expected == found:
        return -1
    for offset, (left, right) in enumerate(zip(expected, found, strict=False)):
        if left != right:
            return offset
    return min(len(expected), len(found))


def _window(text: str, offset: int) -> str:
    return text[max(0, offset - WINDOW) : offset + WINDOW]


def canonical_message(message: Mapping[str, Any], *, ids: bool = False) -> dict[str, Any]:
    """An assistant message in the form turns are compared in: ``content`` (text parts
    joined; ``""`` and ``None`` alike: absent), ``reasoning_content`` (empty: absent), and
    ``tool_calls`` as ``{"name", "arguments"}`` with the arguments as objects (and the
    ``id`` when ``ids``).

    >>> canonical_message({"role": "assistant", "content": "", "reasoning_content": "r"})
    {'reasoning_content': 'r'}
    """
    result: dict[str, Any] = {}
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    if content:
        result["content"] = content
    reasoning = message.get("reasoning_content")
    if reasoning:
        result["reasoning_content"] = reasoning
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        entry: dict[str, Any] = {"name": function.get("name"), "arguments": arguments}
        if ids:
            entry["id"] = call.get("id")
        calls.append(entry)
    if calls:
        result["tool_calls"] = calls
    return result


def _describe_conversation(conversation: TurnConversation) -> str:
    own = getattr(conversation, "describe", None)
    if callable(own):
        return str(own())
    lines = [f"conversation, kinds {sorted(conversation.kinds)}:"]
    for index, message in enumerate(conversation.messages):
        lines.append(f"  [{index}] {json.dumps(message, ensure_ascii=False)}")
    if conversation.tools:
        names = [tool.get("function", {}).get("name") for tool in conversation.tools]
        lines.append(f"  tools: {names}")
    return "\n".join(lines)


@dataclass(frozen=True)
class TurnDifference:
    """An assistant turn, ``messages[index]`` of ``conversation``, that did not come back.

    ``problem`` is ``"differs"`` (parsed, but ``field`` differs: ``expected`` is the message
    as the format declares it gives it back, ``found`` what it gave), ``"parse failed"``
    (the format raised: ``message``), ``"format refused"`` (the format refuses the
    conversation up to the turn: ``declared`` only), ``"not a prefix"`` (no text of the
    turn's own could be cut out of the template's renders: ``offset`` is where the prompt
    render and the turn render part) or ``"refused"`` (the template refused one of the two
    renders).  ``losses``: what the format's render reports it loses in that message."""

    conversation: TurnConversation
    index: int
    problem: str
    turn_text: str = ""
    expected: Mapping[str, Any] | None = None
    found: Mapping[str, Any] | None = None
    field: str = ""
    offset: int = -1
    before: str = ""
    after: str = ""
    message: str = ""
    losses: tuple[str, ...] = ()

    @property
    def unread(self) -> bool:
        """A turn the template writes that the format does not read back."""
        return self.problem in UNREAD

    def describe(self) -> str:
        head = (
            f"{_describe_conversation(self.conversation)}\nmessages[{self.index}]: {self.problem}"
        )
        if self.problem == "not a prefix":
            return (
                f"{head} at offset {self.offset}:\n"
                f"  prompt render: {_window(self.before, self.offset)!r}\n"
                f"  turn render:   {_window(self.after, self.offset)!r}\n"
            )
        if self.problem in ("refused", "parse failed", "format refused"):
            return f"{head}: {self.message}\n  turn text: {self.turn_text!r}\n"
        said = (
            f"{head} in {self.field!r}\n  turn text: {self.turn_text!r}\n"
            f"  expected: {json.dumps(self.expected, ensure_ascii=False)}\n"
            f"  parsed:   {json.dumps(self.found, ensure_ascii=False)}\n"
        )
        if self.losses:
            said += "  declared losses (taken away from expected): " + "; ".join(self.losses)
            said += "\n"
        return said


@dataclass(frozen=True)
class TurnReport:
    """What :func:`own_turns` found: ``total`` assistant turns, ``parsed_back`` of them came
    back as their message (``within_losses`` of those once the format's declared losses were
    taken away); the rest in ``problems``."""

    template: str
    format: str
    total: int
    parsed_back: int
    problems: tuple[TurnDifference, ...]
    within_losses: int = 0

    @property
    def agrees(self) -> bool:
        """Every turn parsed back (and every turn cut out of the template's renders)."""
        return self.parsed_back == self.total

    @property
    def unread(self) -> tuple[TurnDifference, ...]:
        """The turns the template writes that the format did not read back."""
        return tuple(item for item in self.problems if item.unread)

    @property
    def written(self) -> int:
        """The turns the template writes with a text of their own (cut out, not refused)."""
        return self.parsed_back + len(self.unread)

    def count(self, problem: str) -> int:
        return sum(1 for item in self.problems if item.problem == problem)

    def problem_kinds(self) -> Counter[str]:
        return Counter(kind for item in self.problems for kind in item.conversation.kinds)

    def summary(self) -> str:
        parts = [
            f"{self.template} turns by {self.format}: {self.parsed_back}/{self.total} parsed back"
        ]
        for problem in ("differs", "not a prefix", "refused", "parse failed", "format refused"):
            if self.count(problem):
                parts.append(f"{problem} {self.count(problem)}")
        return "; ".join(parts)

    def describe(self, limit: int = 3) -> str:
        lines = [self.summary()]
        lines.extend(f"=== {item.problem} ===\n{item.describe()}" for item in self.problems[:limit])
        return "\n".join(lines)


# ------------------------------------------------------------------ cutting a turn out


def always_prompt(fmt: Format, messages: Any, tools: Any) -> tuple[str, str] | None:
    """For a format that writes its generation prompt after every render (a layout with
    :class:`~pawlette.declare.PromptAlways`), that prompt after ``messages`` and the
    assistant's opener it begins with; None otherwise (or when the format refuses them)."""
    layout = layout_of(fmt)
    if layout is None or layout.concept(PromptAlways) is None:
        return None
    segments = _prompt_segments(fmt, messages, tools)
    if segments is None:
        return None
    opener = text_of(layout.frames["assistant"].open, layout.options, layout.name)
    return segments[1], opener


def _prompt_segments(fmt: Format, messages: Any, tools: Any) -> tuple[str, str] | None:
    """The format's render of ``messages`` with the generation prompt: the text before the
    prompt, and the prompt (None: the format refuses them)."""
    request: dict[str, Any] = {"messages": list(messages)}
    if tools:
        request["tools"] = tools
    try:
        rendering = fmt.render(request, add_generation_prompt=True)
    except Exception:  # refused: the turn is cut as any other
        return None
    prompt: list[str] = []
    for segment in reversed(rendering.segments):
        if segment.kind != "generation_prompt":
            break
        prompt.append(segment.text)
    written = "".join(reversed(prompt))
    return rendering.text[: len(rendering.text) - len(written)], written


def _cut_always_prompt(before: str, after: str, prompt: str, opener: str) -> tuple[str, str] | None:
    """The turn's text after its opener, and the prompt it follows (the render up to that
    opener), where both renders end with the always-written ``prompt``."""
    if not prompt or not before.endswith(prompt) or not after.endswith(prompt):
        return None
    head, full = before[: -len(prompt)], after[: -len(prompt)]
    if not full.startswith(head + opener):
        return None
    return full[len(head) + len(opener) :], head + opener


def _turn_after(prompt: str, full: str, opener: str | None) -> str | None:
    """The assistant turn's text in ``full`` after ``prompt`` (None: ``prompt`` does not
    begin it, nor, with ``opener``, does the text up to the last opener of each agree)."""
    if full.startswith(prompt):
        return full[len(prompt) :]
    if not opener or not prompt.endswith(opener):
        return None
    cut = full.rfind(opener)
    if cut < 0:
        return None
    head = prompt[: -len(opener)]
    return full[cut + len(opener) :] if head.count(opener) == full[:cut].count(opener) else None


@dataclass(frozen=True)
class _Cut:
    """How a turn is cut where the prompt render does not begin the turn render."""

    opener: str | None = None
    prompt_tail: str | None = None
    stand_in: str | None = None


def _declared_cuts(fmt: Format, messages: Sequence[Mapping[str, Any]], tools: Any) -> list[_Cut]:
    """The ways the format's own declaration says a turn after ``messages`` may be cut out:
    its generation prompt less the assistant's opener (with the reasoning block's stand-in,
    where the prompt writes one), the whole generation prompt, and the opener itself."""
    layout = layout_of(fmt)
    if not isinstance(layout, Layout):
        return []
    segments = _prompt_segments(fmt, messages, tools)
    if segments is None:
        return []
    _, prompt = segments
    previous = str(messages[-1].get("role")) if messages else None
    frame = layout.frames.get("assistant")
    if frame is None:
        return []
    opener = text_of(frame.opener(previous), layout.options, layout.name)
    reasoning = layout.concept(Reasoning)
    stand_in = None
    if reasoning is not None and reasoning.prompt_writes_absent() and reasoning.absent:
        stand_in = text_of(reasoning.absent, layout.options, layout.name) or None
    cuts: list[_Cut] = []
    if opener and prompt.startswith(opener) and len(prompt) > len(opener):
        tail = prompt[len(opener) :]
        if stand_in is not None:
            cuts.append(_Cut(prompt_tail=tail, stand_in=stand_in))
        cuts.append(_Cut(prompt_tail=tail))
    if opener:
        cuts.append(_Cut(opener=opener))
        if prompt == opener:  # a template whose past turns write no opener (Apertus's)
            cuts.append(_Cut(prompt_tail=prompt))
    return cuts


def _cut(before: str, after: str, cut: _Cut) -> tuple[str, str] | None:
    """The turn's own text in ``after`` and the prompt the model writes it after, cut as
    ``cut`` says (None: it does not cut it out)."""
    head, prompt_text = before, before
    tail = cut.prompt_tail
    if tail and head.endswith(tail) and not after.startswith(head):
        head = head[: -len(tail)]
        if cut.stand_in is None:  # the turn follows the opener, without the tail
            prompt_text = head
    turn_text = _turn_after(head, after, cut.opener)
    if turn_text is None:
        return None
    if cut.stand_in and head != before:
        if not turn_text.startswith(cut.stand_in):
            return None
        turn_text = turn_text[len(cut.stand_in) :]
    return turn_text, prompt_text


# ------------------------------------------------------------------ losses


_LOSS = re.compile(
    r"messages\[(\d+)\](?:\.(content|reasoning_content|tool_calls)(?:\[(\d+)\])?(\S*))?: (.*)"
)


def losses_of(fmt: Format, messages: Sequence[Mapping[str, Any]], tools: Any) -> tuple[str, ...]:
    """What the format's render of ``messages`` reports it loses in the last of them."""
    request: dict[str, Any] = {"messages": list(messages)}
    if tools:
        request["tools"] = tools
    try:
        losses = fmt.render(request).losses
    except Exception:  # a render the format refuses reports no loss
        return ()
    index = len(messages) - 1
    return tuple(
        loss
        for loss in losses
        if (found := _LOSS.fullmatch(loss)) is not None and int(found.group(1)) == index
    )


def trimmed_as_lost(text: str, field: str, what: str, reasoning_trim: str = "") -> str | None:
    """``text`` trimmed as the loss ``what`` (of ``field``) says it was written: a
    :class:`~pawlette.declare.Trimmed` loss on its side and characters, a
    :class:`~pawlette.declare.Reasoning` one ("trimmed at its start", "trimmed at its ends")
    with ``reasoning_trim``, its characters (all whitespace when empty); None: ``what`` says
    no trim of that kind.

    >>> trimmed_as_lost(" a. ", "content", "whitespace at its end trimmed")
    ' a.'
    """
    trim = trim_of_loss(what) if field == "content" else None
    if trim is not None:
        return trimmed(text, *trim)
    if what == "trimmed at its start":
        return text.lstrip(reasoning_trim or None)
    if what == "trimmed at its ends":
        return text.strip(reasoning_trim or None)
    return None


def _equal_but_lost(
    losses: Iterable[str],
    expected: Mapping[str, Any],
    found: Mapping[str, Any],
    reasoning_trim: str = "",
) -> bool:
    """Whether ``found`` is ``expected`` but for what ``losses`` (the format's, for this
    message) say it does not write: a field trimmed compares trimmed as the loss says (see
    :func:`trimmed_as_lost`; another loss saying "trimmed" or "removed" compares both sides
    stripped), a field "read back as" another is compared as that one, a call not written
    is not compared, a field dropped is not compared, a message not written at all is not
    compared."""
    expected, found = dict(expected), dict(found)
    mine = []
    dropped_calls: set[int] = set()
    for loss in losses:
        matched = _LOSS.fullmatch(loss)
        if matched is None:
            continue
        if matched.group(2) is None:
            return True
        field, item, rest, why = matched.group(2), matched.group(3), matched.group(4), matched[5]
        if field == "tool_calls" and item is not None:
            if not rest:  # the call is not written
                dropped_calls.add(int(item))
            elif rest != ".id":  # a part of the call: its calls are not compared
                mine.append((field, why))
            # (an id not written is compared only where the turn's text holds it)
            continue
        mine.append((field, why))
    if dropped_calls and isinstance(expected.get("tool_calls"), list):
        kept = [
            call
            for number, call in enumerate(expected["tool_calls"])
            if number not in dropped_calls
        ]
        expected["tool_calls"] = kept
        if not kept:
            expected.pop("tool_calls")
    moves = [
        (path, moved.group(1))
        for path, why in mine
        if (moved := re.search(r"read back as (\w+)", why)) is not None
    ]
    # A field another is read back as is the parse's to compare, even where the message's
    # own value of it is dropped (Nemotron Nano 2's last text is read back as reasoning).
    targets = {target for _, target in moves}
    for path, why in mine:
        if re.search(r"read back as \w+", why):
            continue  # moved once the rest is done
        text = expected.get(path)
        exact = trimmed_as_lost(text, path, why, reasoning_trim) if isinstance(text, str) else None
        if exact is not None:
            expected.pop(path)
            if exact:
                expected[path] = exact
        elif ("trimmed" in why or "removed" in why) and isinstance(text, str):
            expected.pop(path)
            if text.strip():
                expected[path] = text.strip()
            if isinstance(found.get(path), str):
                found[path] = found[path].strip()
        else:
            expected.pop(path, None)
            if path not in targets:
                found.pop(path, None)
    for path, target in moves:
        if path in expected:
            expected[target] = expected.pop(path)
    return expected == found


def _first_field_difference(expected: Mapping[str, Any], found: Mapping[str, Any]) -> str:
    for key in ("content", "reasoning_content", "tool_calls"):
        if expected.get(key) != found.get(key):
            return key
    return ""


# ------------------------------------------------------------------ reading the turns


def own_turns(
    fmt: Format,
    render: RenderTemplate,
    conversations: Iterable[TurnConversation],
    *,
    name: str = "template",
    normalise: Normalise | None = None,
    compare_ids: bool | None = None,
    within_losses: bool = False,
    declared: bool = False,
    opener: str | None = None,
    prompt_tail: str | None = None,
    stand_in: str | None = None,
    read_whole: bool = False,
) -> TurnReport:
    """Parse every assistant turn of ``conversations``, as the template (``render``) writes
    it, with ``fmt.parse`` (see the module).

    ``normalise``: the format's declared normalisation, applied to the expected message.
    Call ids are compared when ``compare_ids`` is True; ``None``: when the turn's text holds
    the call's id (the template writes it).  ``within_losses``: a turn that differs only in
    what the format reports it loses writing the turn counts as parsed back.

    Where the prompt render does not begin the turn render: ``declared`` cuts the turn as
    the format declares its generation prompt, turn by turn; else as given: ``opener`` (both
    renders agree up to their last ``opener``, and the turn is what follows it),
    ``prompt_tail`` (what the generation prompt writes after the opener that the template's
    turn does not hold: the turn is cut after the prompt without it, and read after that
    shorter prompt) and ``stand_in`` (what the template's past turns write in its place: the
    model writes after the whole prompt, so its text is the turn's after the stand-in).
    ``read_whole``: a turn none of these cut out is read as the format reads the whole
    conversation through it (its last assistant message), not counted as not cut out
    (inference's check: a prompt that opens what the template's own turn rewrites).
    """
    total = parsed_back = lost = 0
    problems: list[TurnDifference] = []
    layout = layout_of(fmt)
    reasoning = layout.concept(Reasoning) if isinstance(layout, Layout) else None
    reasoning_trim = "" if reasoning is None else reasoning.trim
    for conversation in conversations:
        messages = conversation.messages
        tools = conversation.tools
        for index, message in enumerate(messages):
            if message.get("role") != "assistant" or index == 0:
                continue
            total += 1
            if declared and not _writes(fmt, messages[: index + 1], tools):
                # A conversation the format cannot express is none of its turns to read.
                problems.append(TurnDifference(conversation, index, "format refused"))
                continue
            before = render(messages[:index], tools, True)
            after = render(messages[: index + 1], tools, False)
            if before.text is None or after.text is None:
                refusal = before.refusal if before.text is None else after.refusal
                problems.append(
                    TurnDifference(conversation, index, "refused", message=refusal or "")
                )
                continue
            cut = _cut_turn(
                fmt,
                messages[:index],
                tools,
                before.text,
                after.text,
                _Cut(opener, prompt_tail, stand_in) if not declared else None,
                message,
            )
            # The template writes no generation prompt after an answer: a model is never
            # prompted for the answer after it, which may be read as the conversation's too.
            unprompted = _unprompted(render, messages, index, tools, before.text)
            if cut is None and unprompted:
                cut = (after.text, "")
            if cut is None and read_whole:
                cut = (after.text, "")
            if cut is None:
                problems.append(
                    TurnDifference(
                        conversation,
                        index,
                        "not a prefix",
                        offset=first_difference(before.text, after.text),
                        before=before.text,
                        after=after.text,
                    )
                )
                continue
            turn_text, prompt_text = cut
            try:
                if not prompt_text:  # (read_whole) the conversation's last assistant message
                    parsed = _last_assistant(fmt, turn_text)
                else:
                    # Read knowing the prompt, as llama.cpp does (a prompt that opened a
                    # reasoning block leaves the model inside it; one after results does not).
                    parsed = fmt.parse(turn_text, tools=tools, prompt=prompt_text).message
            except Exception as error:  # strict=False should not raise: reported, not hidden
                problems.append(
                    TurnDifference(
                        conversation,
                        index,
                        "parse failed",
                        turn_text=turn_text,
                        message=f"{type(error).__name__}: {error}",
                    )
                )
                continue
            ids = compare_ids
            if ids is None:
                ids = bool(message.get("tool_calls")) and all(
                    str(call.get("id")) in turn_text for call in message["tool_calls"]
                )
            wanted = normalise(dict(message)) if normalise is not None else dict(message)
            expected = canonical_message(wanted, ids=ids)
            found = canonical_message(parsed, ids=ids)
            readings = [found]
            ended = _up_to_stop(fmt, turn_text) if declared and prompt_text else turn_text
            if ended != turn_text and expected != found:
                # The model stops at the format's stop text: a template that writes more
                # after it in the same turn (DeepSeek R1's distills write an empty answer
                # after a turn of calls) has the turn read up to there too.
                with contextlib.suppress(Exception):
                    again = canonical_message(
                        fmt.parse(ended, tools=tools, prompt=prompt_text).message, ids=ids
                    )
                    readings.append(again)
                    # What follows is the turn's text as a turn of its own (the Qwen R1
                    # distill writes it after the calls' end): read as the conversation's.
                    rest = fmt.parse_conversation(turn_text[len(ended) :]).messages
                    if rest and all(item.get("role") == "assistant" for item in rest):
                        texts = [canonical_message(item).get("content", "") for item in rest]
                        if "content" not in again and any(texts):
                            readings.append({"content": "".join(texts), **again})
            if unprompted and prompt_text:
                with contextlib.suppress(Exception):
                    readings.append(canonical_message(_last_assistant(fmt, after.text), ids=ids))
            if expected in readings:
                parsed_back += 1
                continue
            losses = losses_of(fmt, messages[: index + 1], tools) if within_losses else ()
            if losses and any(
                _equal_but_lost(losses, expected, item, reasoning_trim) for item in readings
            ):
                parsed_back += 1
                lost += 1
                continue
            problems.append(
                TurnDifference(
                    conversation,
                    index,
                    "differs",
                    turn_text=turn_text,
                    expected=expected,
                    found=found,
                    field=_first_field_difference(expected, found),
                    losses=losses,
                )
            )
    return TurnReport(
        template=name,
        format=fmt.name,
        total=total,
        parsed_back=parsed_back,
        problems=tuple(problems),
        within_losses=lost,
    )


def _unprompted(
    render: RenderTemplate,
    messages: Sequence[Mapping[str, Any]],
    index: int,
    tools: Any,
    prompted: str,
) -> bool:
    """Whether ``messages[index]`` follows an assistant message after which the template
    writes no generation prompt (its render with the prompt is its render without)."""
    if messages[index - 1].get("role") != "assistant":
        return False
    plain = render(messages[:index], tools, False)
    return plain.text == prompted


def _last_assistant(fmt: Format, text: str) -> dict[str, Any]:
    """The last assistant message of the conversation ``text`` (``{}``: none)."""
    messages = fmt.parse_conversation(text).messages
    found = [message for message in messages if message.get("role") == "assistant"]
    return dict(found[-1]) if found else {}


def _writes(fmt: Format, messages: Sequence[Mapping[str, Any]], tools: Any) -> bool:
    """Whether the format renders ``messages`` (it refuses no part of them)."""
    request: dict[str, Any] = {"messages": list(messages)}
    if tools:
        request["tools"] = tools
    try:
        fmt.render(request)
    except RequestError:
        return False
    return True


def _up_to_stop(fmt: Format, text: str) -> str:
    """``text`` up to and with the first of the format's stop texts in it."""
    ends = [
        (position + len(stop)) for stop in fmt.stop if stop and (position := text.find(stop)) >= 0
    ]
    return text[: min(ends)] if ends else text


def _cut_turn(
    fmt: Format,
    messages: Sequence[Mapping[str, Any]],
    tools: Any,
    before: str,
    after: str,
    given: _Cut | None,
    turn: Mapping[str, Any] | None = None,
) -> tuple[str, str] | None:
    """The turn's own text and the prompt it follows: the prompt render where it begins the
    turn render; else cut off a prompt the format writes after every render; else cut as
    ``given`` says, or (None) in each of the ways the format declares (``turn``: the
    message, to check a cut after the last opener against the turn the format writes)."""
    always = always_prompt(fmt, messages, tools)
    if always is not None:
        return _cut_always_prompt(before, after, *always)
    if after.startswith(before):
        return after[len(before) :], before
    for cut in [given] if given is not None else _declared_cuts(fmt, messages, tools):
        found = _cut(before, after, cut)
        if found is None:
            continue
        if given is None and cut.opener and turn is not None:
            # The turn as the declaration writes it ends the render and holds more than the
            # text after the last opener (harmony's analysis message before its answer):
            # that opener is not the turn's.
            own = _written_turn(fmt, [*messages, turn], tools)
            if (
                own is not None
                and after.endswith(own)
                and len(own) > len(cut.opener) + len(found[0])
            ):
                continue
        return found
    return None


def _written_turn(fmt: Format, messages: Sequence[Mapping[str, Any]], tools: Any) -> str | None:
    """The text the format writes for the last of ``messages`` (None: it refuses them)."""
    request: dict[str, Any] = {"messages": list(messages)}
    if tools:
        request["tools"] = tools
    try:
        segments = fmt.render(request).segments
    except Exception:  # refused: nothing to compare the cut with
        return None
    index = len(messages) - 1
    return "".join(segment.text for segment in segments if segment.message_index == index)
