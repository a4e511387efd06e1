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

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RequestError
from ..format import Format
from .conversations import Sample
from .own_turns import own_turns
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
        # Where the prompt opens what the template's own turn rewrites (a reasoning block it
        # drops) and no declared cut finds the turn, it is read from the whole conversation.
        report = own_turns(
            fmt, render, [sample], within_losses=True, declared=True, read_whole=True
        )
        turns += report.written
        parsed_back += report.parsed_back
        if failure is None and report.unread:
            item = report.unread[0]
            found = (
                item.message if item.found is None else json.dumps(item.found, ensure_ascii=False)
            )
            failure = Failure(
                "turn", request, False, -1, item.turn_text, found, item.index, sample.kinds, sample
            )
    return Verification(compared, identical, turns, parsed_back, failure)
