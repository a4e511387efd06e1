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

import contextlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..declare import Layout, Reasoning
from ..declare.content import trim_of_loss
from ..errors import RequestError
from ..format import Format
from .conversations import Sample
from .fields import trimmed
from .template import TemplateRunner

__all__ = ["Failure", "Verification", "verify"]

WINDOW = 48


@dataclass(frozen=True)
class Failure:
    """The first disagreement: ``kind`` (``"render"``, ``"refusal"``, ``"turn"``), the
    conversation, the ``offset`` where the texts part, and the two sides near it."""

    kind: str
    request: Mapping[str, Any]
    prompt: bool
    offset: int
    template: str
    declaration: str
    message_index: int = -1
    kinds: frozenset[str] = frozenset()
    sample: Sample | None = None

    def describe(self) -> str:
        messages = json.dumps(self.request.get("messages"), ensure_ascii=False)
        shown = messages if len(messages) <= 300 else messages[:300] + "…"
        head = f"conversation {shown}"
        if self.request.get("tools"):
            head += f" with {len(self.request['tools'])} tool(s)"
        if self.kind == "turn":
            return (
                f"{head}: the template's assistant turn messages[{self.message_index}] did not "
                f"parse back: the template wrote {self.template!r}; parsed {self.declaration!r}"
            )
        if self.kind == "refusal":
            return f"{head} (generation prompt: {self.prompt}): {self.template}; {self.declaration}"
        return (
            f"{head} (generation prompt: {self.prompt}), offset {self.offset}: the template "
            f"wrote {self.template!r}, the declaration wrote {self.declaration!r}"
        )


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


def _window(text: str, offset: int) -> str:
    return text[max(0, offset - WINDOW) : offset + WINDOW]


def _first_difference(left: str, right: str) -> int:
    for offset, (a, b) in enumerate(zip(left, right, strict=False)):
        if a != b:
            return offset
    return min(len(left), len(right))


_LOSS = re.compile(r"messages\[(\d+)\]\.(\w+): (.*)")


def _expected(
    message: Mapping[str, Any], index: int, losses: Iterable[str], reasoning_trim: str
) -> dict[str, Any]:
    """The message as the format writes it: what its rendering reports lost, taken away
    (text trimmed as the loss says; ``reasoning_trim``: the characters
    :class:`~pawlette.declare.Reasoning` trims, for its losses)."""
    result = dict(message)
    for loss in losses:
        found = _LOSS.match(loss)
        if found is None or int(found.group(1)) != index:
            continue
        field, what = found.group(2), found.group(3)
        text = result.get(field)
        trim = trim_of_loss(what)
        if field == "content" and trim is not None and isinstance(text, str):
            result[field] = trimmed(text, *trim)
        elif what == "trimmed at its start" and isinstance(text, str):  # (Reasoning's)
            result[field] = text.lstrip(reasoning_trim or None)
        elif what == "trimmed at its ends" and isinstance(text, str):  # (Reasoning's)
            result[field] = text.strip(reasoning_trim or None)
        elif field == "content" and "trimmed" in what and isinstance(text, str):
            result[field] = text.strip()
        else:
            result.pop(field, None)
    return result


def canonical(message: Mapping[str, Any]) -> dict[str, Any]:
    """An assistant message as turns are compared: text, reasoning (empty: none) and calls
    as name and arguments object."""
    result: dict[str, Any] = {}
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    if content:
        result["content"] = content
    if message.get("reasoning_content"):
        result["reasoning_content"] = message["reasoning_content"]
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        calls.append({"name": function.get("name"), "arguments": arguments})
    if calls:
        result["tool_calls"] = calls
    return result


def _last_assistant(fmt: Format, text: str) -> dict[str, Any]:
    messages = fmt.parse_conversation(text).messages
    found = [message for message in messages if message.get("role") == "assistant"]
    return found[-1] if found else {}


def _prompts(sample: Sample) -> tuple[bool, ...]:
    return (False,) if sample.ends_with == "assistant" else (True, False)


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

    compared = identical = turns = parsed_back = 0
    failure: Failure | None = None
    declaration = getattr(fmt, "declaration", None)
    reasoning = declaration.concept(Reasoning) if isinstance(declaration, Layout) else None
    reasoning_trim = "" if reasoning is None else reasoning.trim
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
                    failure = Failure(
                        "render",
                        request,
                        prompt,
                        offset,
                        _window(expected.text, offset),
                        _window(ours, offset),
                        kinds=sample.kinds,
                        sample=sample,
                    )
        messages = sample.messages
        for index, message in enumerate(messages):
            if message["role"] != "assistant" or index == 0:
                continue
            before = reference(messages[:index], sample.tools, True)
            after = reference(messages[: index + 1], sample.tools, False)
            if before.text is None or after.text is None:
                continue  # the template refuses the conversation: counted above
            turns += 1
            try:
                losses = fmt.render({**request, "messages": messages[: index + 1]}).losses
                if after.text.startswith(before.text):
                    turn = after.text[len(before.text) :]
                    parsed = fmt.parse(turn, tools=sample.tools).message
                else:
                    # The prompt opens what the template's own turn rewrites (a reasoning
                    # block it drops): the turn is read from the whole conversation instead.
                    turn = after.text
                    parsed = _last_assistant(fmt, after.text)
            except Exception as error:  # reported as a failure, never hidden
                if failure is None:
                    failure = Failure(
                        "turn",
                        request,
                        False,
                        -1,
                        after.text[-200:],
                        f"an error: {error}",
                        index,
                        sample.kinds,
                        sample,
                    )
                continue
            if canonical(_expected(message, index, losses, reasoning_trim)) == canonical(parsed):
                parsed_back += 1
            elif failure is None:
                failure = Failure(
                    "turn",
                    request,
                    False,
                    -1,
                    turn,
                    json.dumps(canonical(parsed), ensure_ascii=False),
                    index,
                    sample.kinds,
                    sample,
                )
    return Verification(compared, identical, turns, parsed_back, failure)
