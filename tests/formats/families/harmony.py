"""gpt-oss's harmony (``pawlette.formats.harmony``) against OpenAI's template.

Every kind of conversation but text beside calls is generated (see ``CASES``): what the
template drops (reasoning before the last turn, calls after a message's first, analysis
before a call that an answer follows, names, later system messages) is a documented loss,
and what it refuses (content and reasoning beside a call, a result with no call before it)
pawlette refuses too.  Its own assistant turns parse back as the template keeps them: the
first call only.
"""

from __future__ import annotations

from typing import Any

from . import FamilyCase


def _text_as_analysis(message: dict[str, Any], first_call_only: bool) -> dict[str, Any]:
    """``message`` with its name dropped and, when it holds calls, the text beside them as
    their analysis (reasoning); ``first_call_only``: the calls after the first dropped."""
    message = dict(message)
    message.pop("name", None)
    calls = message.get("tool_calls")
    if calls:
        if first_call_only:
            message["tool_calls"] = calls[:1]
        text = message.get("content") or message.get("reasoning_content")
        message.pop("content", None)
        message.pop("reasoning_content", None)
        if text:
            message["reasoning_content"] = text
    return message


def as_written(message: dict[str, Any]) -> dict[str, Any]:
    """An assistant turn as the template writes it when it is the conversation's last: the
    first call only, with the text beside it as its analysis (reasoning); an answer with its
    reasoning."""
    return _text_as_analysis(message, first_call_only=True)


# Text or reasoning beside a call is written as an analysis message only while no answer
# follows in the conversation: the template's render of a conversation is then no prefix of
# its render continued, so such turns have no text of their own to parse (the matrix counts
# them); the renders are compared with the rest of the switches on.
NO_TEXT_BESIDE_CALLS = {"text_with_calls": False, "reasoning_with_calls": False}

CASES = [
    FamilyCase("openai-gpt-oss-120b", "harmony", NO_TEXT_BESIDE_CALLS, normalise=as_written),
]


def as_llm_jp_writes(message: dict[str, Any]) -> dict[str, Any]:
    """An assistant turn as LLM-jp's template writes it when it is the conversation's last:
    every call, with the text beside them as their analysis (reasoning)."""
    return _text_as_analysis(message, first_call_only=False)


# LLM-jp 4.1's harmony: every call written; the analysis beside calls only in the last
# message of a render without a generation prompt (so, as above, no turn with text beside
# calls has a text of its own to parse).
CASES.append(
    FamilyCase(
        "llm-jp-llm-jp-4.1-8b-thinking",
        "harmony:llm-jp",
        NO_TEXT_BESIDE_CALLS,
        normalise=as_llm_jp_writes,
    )
)
