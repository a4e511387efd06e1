"""Verification: an inferred format against its template, on generated conversations.

Two checks, both required before an inferred format is used:

- **renders**: every generated conversation (with the generation prompt when it awaits the
  model, and without) renders byte for byte as the template renders it; a conversation the
  template refuses must be refused by the format too;
- **own turns**: every assistant turn as the template writes it (the render up to the turn
  with the generation prompt, cut from the render with the turn) parses back into the message,
  less what the format declares it drops (the rendering's ``losses``).

The first failure is kept: which conversation, where the texts part, and what each wrote.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RequestError
from ..format import Format
from .conversations import Sample
from .own_turns import own_turns
from .template import TemplateRunner

__all__ = ["Failure", "Verification", "verify"]

WINDOW = 300
"""How far past the first difference the two renders are compared for the pieces that differ."""
SHOWN = 60
"""The most characters of a text a failure quotes."""


@dataclass(frozen=True)
class Failure:
    """The first disagreement: ``kind`` (``"render"``, ``"refusal"``, ``"turn"``), the
    conversation, the ``offset`` where the texts part, and the two sides near it: for a render,
    ``before`` (the text both wrote before the offset), then ``template`` and ``declaration``,
    the first pieces that differ; for a turn, ``template`` the turn's text and
    ``declaration`` what it parsed into (or why not)."""

    kind: str
    request: Mapping[str, Any]
    prompt: bool
    offset: int
    template: str
    declaration: str
    message_index: int = -1
    kinds: frozenset[str] = frozenset()
    sample: Sample | None = None
    before: str = ""

    def describe(self) -> str:
        head = f"conversation {conversation_outline(self.request)}"
        if self.kind == "turn":
            return (
                f"{head}: its assistant turn messages[{self.message_index}], as the template "
                f"writes it ({_quoted(self.template, last=True)}), parses back with "
                f"{self.declaration}"
            )
        prompt = "with" if self.prompt else "without"
        if self.kind == "refusal":
            return f"{head}, {prompt} the generation prompt: {self.template}; {self.declaration}"
        where = f"after {_quoted(self.before, last=True)}" if self.before else "at the start"
        return (
            f"{head}, {prompt} the generation prompt: {where} the template writes "
            f"{_quoted(self.template)} where the declaration writes {_quoted(self.declaration)}"
        )


def conversation_outline(request: Mapping[str, Any]) -> str:
    """A conversation in brief: its messages' roles in order (an assistant's calls and
    reasoning said beside it, a run of alike messages counted) and its tools.

    >>> conversation_outline({"messages": [{"role": "user", "content": "a"},
    ...     {"role": "assistant", "content": None, "tool_calls": [{}, {}]},
    ...     {"role": "tool", "content": "b"}, {"role": "tool", "content": "c"}],
    ...     "tools": [{}]})
    '(user, assistant with 2 calls, tool ×2; 1 tool)'
    """
    parts: list[str] = []
    for message in request.get("messages") or ():
        role = str(message.get("role"))
        beside = []
        if message.get("reasoning_content"):
            beside.append("reasoning")
        calls = len(message.get("tool_calls") or ())
        if calls:
            beside.append(f"{calls} call" + ("s" if calls > 1 else ""))
        if role == "assistant" and calls and message.get("content"):
            beside.append("text")
        if message.get("content") == "" and not calls:
            beside.append("no text")
        said = role + (f" with {' and '.join(beside)}" if beside else "")
        counted = re.fullmatch(r"(.*) ×(\d+)", parts[-1]) if parts else None
        if counted and counted.group(1) == said:
            parts[-1] = f"{said} ×{int(counted.group(2)) + 1}"
        elif parts and parts[-1] == said:
            parts[-1] = f"{said} ×2"
        else:
            parts.append(said)
    tools = len(request.get("tools") or ())
    if tools:
        parts[-1] += f"; {tools} tool" + ("s" if tools > 1 else "")
    return "(" + ", ".join(parts) + ")"


def _quoted(text: str, limit: int = SHOWN, *, last: bool = False) -> str:
    """``text`` quoted, at most ``limit`` characters of its start (``last``: its end), a cut
    shown as ``…`` outside the quotes; nothing at all is said as such."""
    if not text:
        return "nothing"
    if len(text) <= limit:
        return repr(text)
    return "…" + repr(text[-limit:]) if last else repr(text[:limit]) + "…"


@dataclass(frozen=True)
class Verification:
    """What :func:`verify` found: renders ``identical`` of ``compared``; own assistant turns
    ``parsed_back`` of ``turns``; the first ``failure`` (None: none)."""

    compared: int
    identical: int
    turns: int
    parsed_back: int
    failure: Failure | None

    @property
    def passed(self) -> bool:
        return (
            self.failure is None
            and self.identical == self.compared
            and self.turns == self.parsed_back
        )

    def describe(self) -> str:
        return (
            f"{self.identical}/{self.compared} renders identical, "
            f"{self.parsed_back}/{self.turns} own turns parsed back"
        )


def _pieces(expected: str, ours: str, offset: int) -> tuple[str, str]:
    """The first pieces that differ from ``offset`` on: what the template writes there and
    what the declaration writes in its place, up to where the two texts agree again (within
    :data:`WINDOW` characters; past it, each side's next :data:`WINDOW`)."""
    left = _WORDS.findall(expected[offset : offset + WINDOW])
    right = _WORDS.findall(ours[offset : offset + WINDOW])
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for kind, start, end, other_start, other_end in matcher.get_opcodes():
        if kind != "equal":
            return "".join(left[start:end]), "".join(right[other_start:other_end])
    return "".join(left), "".join(right)


_WORDS = re.compile(r"<[^<>\s]{1,40}>|\w+|\s+|.", re.DOTALL)
"""What the pieces are made of: a marker-like ``<...>``, a word, a run of whitespace, or one
other character (a piece never cuts a word or a marker in two)."""


def _first_difference(left: str, right: str) -> int:
    for offset, (a, b) in enumerate(zip(left, right, strict=False)):
        if a != b:
            return offset
    return min(len(left), len(right))


def _misread(
    field: str,
    expected: Mapping[str, Any] | None,
    found: Mapping[str, Any] | None,
    message: str,
) -> str:
    """How a turn read back otherwise than its message: the first field that differs, as
    read and as the message holds it (or why nothing was read)."""
    if found is None or expected is None:
        return message
    field = field or next(
        (key for key in sorted({*expected, *found}) if expected.get(key) != found.get(key)), ""
    )

    def shown(value: Any) -> str:
        if value is None:
            return "none"
        return _quoted(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))

    return f"{field} {shown(found.get(field))} where the message holds {shown(expected.get(field))}"


def _prompts(sample: Sample) -> tuple[bool, ...]:
    return sample.prompts


def verify(
    fmt: Format,
    runner: TemplateRunner,
    samples: Iterable[Sample],
    renders: dict[str, Any] | None = None,
) -> Verification:
    """Check ``fmt`` against the template on ``samples`` (see the module docstring).
    ``renders``: the template's renders by conversation, kept between calls."""
    cache = {} if renders is None else renders

    def reference(messages: Any, tools: Any, prompt: bool) -> Any:
        key = json.dumps([messages, tools, prompt, runner.empty_content], sort_keys=True)
        found = cache.get(key)
        if found is None:
            found = cache[key] = runner.render(messages, tools, add_generation_prompt=prompt)
        return found

    def render(messages: Any, tools: Any, prompt: bool) -> Any:
        return reference(messages, tools, prompt)

    compared = identical = turns = parsed_back = 0
    failure: Failure | None = None
    for sample in samples:
        request = sample.request
        for prompt in _prompts(sample):
            compared += 1
            expected = reference(sample.messages, sample.tools, prompt)
            try:
                ours: str | None = fmt.render(request, add_generation_prompt=prompt).text
                refused = ""
            except RequestError as error:
                ours, refused = None, str(error)
            if (expected.text is None and ours is None) or expected.text == ours:
                identical += 1
            elif failure is None:
                if expected.text is None or ours is None:
                    template = (
                        f"the template refused ({expected.refusal})"
                        if expected.text is None
                        else "the template rendered it"
                    )
                    declaration = (
                        f"the declaration refused ({refused})"
                        if ours is None
                        else "the declaration rendered it"
                    )
                    failure = Failure(
                        "refusal",
                        request,
                        prompt,
                        -1,
                        template,
                        declaration,
                        kinds=sample.kinds,
                        sample=sample,
                    )
                else:
                    offset = _first_difference(expected.text, ours)
                    written, instead = _pieces(expected.text, ours, offset)
                    failure = Failure(
                        "render",
                        request,
                        prompt,
                        offset,
                        written,
                        instead,
                        kinds=sample.kinds,
                        sample=sample,
                        before=expected.text[max(0, offset - 2 * SHOWN) : offset],
                    )
        # Where the prompt opens what the template's own turn rewrites (a reasoning block it
        # drops) and no declared cut finds the turn, it is read from the whole conversation.
        report = own_turns(
            fmt, render, [sample], within_losses=True, declared=True, read_whole=True
        )
        turns += report.written
        parsed_back += report.parsed_back
        if failure is None and report.unread:
            item = report.unread[0]
            failure = Failure(
                "turn",
                request,
                False,
                -1,
                item.turn_text,
                _misread(item.field, item.expected, item.found, item.message),
                item.index,
                sample.kinds,
                sample,
            )
    return Verification(compared, identical, turns, parsed_back, failure)
