"""Which capability a failed verification is about.

A conversation that renders otherwise than the template holds several kinds of content.  Each
kind is taken out of it in turn (its reasoning dropped, its texts trimmed, its later system
messages removed, ...); the first kind whose removal makes the conversation agree is the one
the declaration gets wrong, and that capability is given up (refused at use, saying why)
while the rest is verified again.  Where the declaration gets two kinds wrong in the same
conversation, no kind alone makes it agree: then two are taken out together, and the first of
the first pair that makes it agree is given up (the next verification finds the other).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..declare import Reasoning, layout_of
from ..format import Format
from .conversations import Sample
from .draft import CALL_TEXT_EDGES, REASONING_EDGES, RESULT_EDGES
from .template import TemplateRunner

__all__ = ["CULPRITS", "find_culprit"]

Request = dict[str, Any]


def _messages(request: Request) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = request["messages"]
    return messages


def _no_text_with_calls(request: Request) -> None:
    for message in _messages(request):
        if message.get("tool_calls"):
            message["content"] = None


def _one_call(request: Request) -> None:
    dropped: set[str] = set()
    for message in _messages(request):
        calls = message.get("tool_calls")
        if calls and len(calls) > 1:
            dropped |= {call["id"] for call in calls[1:]}
            message["tool_calls"] = calls[:1]
    request["messages"] = [
        message for message in _messages(request) if message.get("tool_call_id") not in dropped
    ]


def _no_results(request: Request) -> None:
    messages = _messages(request)
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            request["messages"] = messages[:index]
            return


def _no_calls(request: Request) -> None:
    request["messages"] = [
        message
        for message in _messages(request)
        if message["role"] != "tool" and not message.get("tool_calls")
    ]


def _no_tools(request: Request) -> None:
    _no_calls(request)
    request.pop("tools", None)


def _no_reasoning(request: Request) -> None:
    for message in _messages(request):
        message.pop("reasoning_content", None)


def _no_reasoning_with_calls(request: Request) -> None:
    for message in _messages(request):
        if message.get("tool_calls"):
            message.pop("reasoning_content", None)


def _no_later_system(request: Request) -> None:
    request["messages"] = [
        message
        for index, message in enumerate(_messages(request))
        if index == 0 or message["role"] != "system"
    ]


def _no_names(request: Request) -> None:
    for message in _messages(request):
        if message["role"] != "tool":
            message.pop("name", None)


def _filled(role: str) -> Callable[[Request], None]:
    def fill(request: Request) -> None:
        for message in _messages(request):
            if role == "reasoning" and message.get("reasoning_content") == "":
                message["reasoning_content"] = "x"
            elif message["role"] == role and message.get("content") == "":
                message["content"] = "x"

    return fill


def _no_repeats(role: str) -> Callable[[Request], None]:
    """A change that keeps the first of each run of ``role`` messages in a row."""

    def keep_first(request: Request) -> None:
        kept: list[dict[str, Any]] = []
        for message in _messages(request):
            if kept and message["role"] == role and kept[-1]["role"] == role:
                continue
            kept.append(message)
        request["messages"] = kept

    return keep_first


_alternating = _no_repeats("user")
_one_answer = _no_repeats("assistant")


def _no_leading_answers(request: Request) -> None:
    kept: list[dict[str, Any]] = []
    asked = False
    for message in _messages(request):
        asked = asked or message["role"] == "user"
        if asked or message["role"] != "assistant":
            kept.append(message)
    request["messages"] = kept


def _unprompted(request: Request) -> None:
    """(The generation prompt is not part of the request: the sample is rendered without it
    once its kind is taken out.)"""


def _trimmed(request: Request) -> None:
    for message in _messages(request):
        for key in ("content", "reasoning_content"):
            if isinstance(message.get(key), str):
                message[key] = message[key].strip()


def _trimmed_call_text(request: Request) -> None:
    for message in _messages(request):
        if message.get("tool_calls") and isinstance(message.get("content"), str):
            message["content"] = message["content"].strip()


def _trimmed_reasoning(request: Request) -> None:
    for message in _messages(request):
        if isinstance(message.get("reasoning_content"), str):
            message["reasoning_content"] = message["reasoning_content"].strip()


def _trimmed_results(request: Request) -> None:
    for message in _messages(request):
        if message["role"] == "tool" and isinstance(message.get("content"), str):
            message["content"] = message["content"].strip()


def _no_system(request: Request) -> None:
    request["messages"] = [m for m in _messages(request) if m["role"] != "system"]


CULPRITS: tuple[tuple[str, str, Callable[[Request], None]], ...] = (
    # First: the generation prompt after an answer, an answer before any query and an answer
    # after an answer are held by few conversations, and taking them out changes nothing else
    # in them (a failure they end would otherwise give up their reasoning).
    ("prompt-after-answer", "generation prompt after an answer", _unprompted),
    ("leading-answer", "leading assistant messages", _no_leading_answers),
    ("consecutive-answers", "consecutive assistant messages", _one_answer),
    # Whitespace at the ends of reasoning before the reasoning itself: a template that trims
    # it writes it still.
    ("edge-whitespace-reasoning", REASONING_EDGES, _trimmed_reasoning),
    # Before the calls and results: reasoning the declaration drops, which the template
    # writes beside calls only (Gemma 4's), is the reasoning's fault, not theirs.
    ("reasoning-with-calls", "reasoning", _no_reasoning_with_calls),
    # Whitespace at the ends of the text beside calls, or of results, before the text and the
    # results themselves: a template that trims them (Qwen3-Coder's text beside calls) writes
    # them still.
    ("edge-whitespace-with-calls", CALL_TEXT_EDGES, _trimmed_call_text),
    ("edge-whitespace-results", RESULT_EDGES, _trimmed_results),
    ("text-with-calls", "text with tool calls", _no_text_with_calls),
    ("parallel-calls", "parallel tool calls", _one_call),
    ("results", "tool results", _no_results),
    ("call", "tool calls", _no_calls),
    ("tools", "tools", _no_tools),
    ("empty-system", "empty system text", _filled("system")),
    ("empty-user", "empty user text", _filled("user")),
    ("empty-assistant", "empty assistant text", _filled("assistant")),
    ("empty-tool", "empty tool text", _filled("tool")),
    ("empty-reasoning", "empty reasoning", _filled("reasoning")),
    ("edge-whitespace", "whitespace at the ends of text", _trimmed),
    ("reasoning", "reasoning", _no_reasoning),
    ("later-system", "later system messages", _no_later_system),
    ("several-systems", "later system messages", _no_later_system),
    ("named", "names", _no_names),
    ("consecutive-users", "consecutive user messages", _alternating),
    ("system", "system messages", _no_system),
)
"""Per kind of content: the capability it needs, and how to take it out of a conversation."""


def _writes_blocks(fmt: Format) -> bool:
    """Whether the declaration writes reasoning blocks (a stand-in in a turn without
    reasoning, at least: Command R7B's): given up, the reasoning would take them out of every
    turn, so reasoning beside calls alone is not blamed on it."""
    layout = layout_of(fmt)
    return layout is None or any(isinstance(item, Reasoning) for item in layout.concepts)


def find_culprit(
    fmt: Format,
    runner: TemplateRunner,
    failed: Sample,
    blocked: dict[str, str],
    verify: Callable[[Format, TemplateRunner, list[Sample]], Any],
) -> str | None:
    """The capability the failure on ``failed`` is about (None: no kind of content, taken
    out alone or with one other, makes the conversation agree: the declaration is wrong
    elsewhere)."""
    # A conversation whose turns hold several calls each holds calls too: the calls
    # themselves, taken out, are blamed before the tools they are made with.
    kinds = failed.kinds | ({"call"} if "parallel-calls" in failed.kinds else set())
    candidates = [
        (kind, capability, strip)
        for kind, capability, strip in CULPRITS
        if kind in kinds
        and capability not in blocked
        and (kind != "reasoning-with-calls" or not _writes_blocks(fmt))
    ]

    def agrees(chosen: list[tuple[str, str, Callable[[Request], None]]]) -> bool:
        request = copy.deepcopy(failed.request)
        for _, _, strip in chosen:
            strip(request)
        if not _messages(request):
            return False
        kinds = failed.kinds - {kind for kind, _, _ in chosen}
        prompted = failed.prompt_after_answer and "prompt-after-answer" in kinds
        return bool(verify(fmt, runner, [Sample(request, kinds, prompted)]).passed)

    for candidate in candidates:
        if agrees([candidate]):
            return candidate[1]
    for first, candidate in enumerate(candidates):
        for other in candidates[first + 1 :]:
            if agrees([candidate, other]):
                return candidate[1]
    return None
