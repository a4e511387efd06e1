"""Probe conversations: sentinel text rendered through the template, and found again.

Every probe message holds a sentinel (``Zu1q``: user text 1) that the template cannot hold
itself; where the sentinels land in the template's text, and what lies between them, is what
inference reads.  :class:`Probe` renders (each conversation once) and cuts a render at its
sentinels; :class:`Underivable` says why a part of a format cannot be derived.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .atoms import Tokens
from .template import TemplateRunner

__all__ = ["Probe", "Underivable", "call", "message", "tool"]


class Underivable(Exception):
    """A part of the format that the probes cannot derive, and why (one sentence)."""


def message(role: str, content: str | None, **fields: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"role": role, "content": content}
    found.update(fields)
    return found


def tool(name: str, description: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": dict(properties),
                "required": list(properties)[:1],
            },
        },
    }


def call(identifier: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": identifier,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(dict(arguments), ensure_ascii=False)},
    }


class Probe:
    """The template under inference: renders of probe conversations, cached, and their cuts.

    ``sentinel(kind, number)`` is the text a probe message holds (``Zu1q``); a template that
    happens to contain one gets another alphabet.
    """

    def __init__(self, runner: TemplateRunner, tokens: Tokens) -> None:
        self.runner = runner
        self.tokens = tokens
        self._cache: dict[str, str | None] = {}
        self._refusals: dict[str, str] = {}
        letters = ("Z", "q")
        for first, last in (("Z", "q"), ("Qx", "j"), ("Vw", "k")):
            if first + "u1" + last not in runner.template and first not in runner.template[:0]:
                letters = (first, last)
                break
        self._letters = letters
        self.closing = ""
        """What the template writes after the last turn when no generation prompt follows
        (the end of a conversation): left out of every render without the prompt, so each
        stage cuts turns alone."""
        self.always_prompt = ""
        """The generation prompt, when the template writes it after every render, asked for
        or not (:class:`~pawlette.declare.PromptAlways`): left out of every render without
        the prompt, as :attr:`closing` is."""
        self.listed_tools_refusal = ""
        """The template's refusal of a request without tools, where its callers pass an
        empty list instead (:mod:`.listed_tools`)."""

    def clear(self) -> None:
        """Forget the renders (the runner's settings changed)."""
        self._cache.clear()
        self._refusals.clear()

    def sentinel(self, kind: str, number: int = 1) -> str:
        return f"{self._letters[0]}{kind}{number}{self._letters[1]}"

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        prompt: bool = False,
    ) -> str | None:
        """The template's text (None: it refused; :meth:`refusal` says why), without the
        :attr:`closing` of a conversation (or the :attr:`always_prompt`)."""
        key = json.dumps([messages, tools, prompt], sort_keys=True, ensure_ascii=False)
        if key in self._cache:
            text = self._cache[key]
        else:
            rendered = self.runner.render(messages, tools, add_generation_prompt=prompt)
            text = self._cache[key] = rendered.text
            if rendered.refusal is not None:
                self._refusals[key] = rendered.refusal
        if text is not None and not prompt:
            for written in (self.closing, self.always_prompt):
                if written and text.endswith(written):
                    return text[: -len(written)]
        return text

    def refusal(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        prompt: bool = False,
    ) -> str:
        key = json.dumps([messages, tools, prompt], sort_keys=True, ensure_ascii=False)
        return self._refusals.get(key, "")

    def required(
        self,
        what: str,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        prompt: bool = False,
    ) -> str:
        """The template's text, or :class:`Underivable` naming ``what`` it refused."""
        text = self.render(messages, tools, prompt=prompt)
        if text is None:
            reason = self.refusal(messages, tools, prompt=prompt)
            raise Underivable(f"the template refuses {what} ({reason[:160]})")
        return text

    @staticmethod
    def cut(text: str, sentinels: Sequence[str], what: str) -> list[str]:
        """``text`` cut at the sentinels, in order: the pieces before, between and after
        them (one more piece than sentinels).  Each must be written once, in order."""
        pieces: list[str] = []
        position = 0
        for sentinel in sentinels:
            count = text.count(sentinel)
            if count != 1:
                how = "does not write" if count == 0 else f"writes {count} times"
                raise Underivable(f"the template {how} the text of {what} ({sentinel!r})")
            found = text.find(sentinel)
            if found < position:
                raise Underivable(f"the template writes the texts of {what} out of order")
            pieces.append(text[position:found])
            position = found + len(sentinel)
        pieces.append(text[position:])
        return pieces
