"""A failed verification said briefly: the conversation in outline, and the first pieces the
template and the declaration write otherwise (not the conversation's JSON)."""

from __future__ import annotations

import json

from pawlette.declare import Frame, Layout, Marker, NamedCalls, Results, ToolsBlock, declare, fence
from pawlette.infer.conversations import TOOLS, Sample
from pawlette.infer.template import TemplateRunner
from pawlette.infer.verify import conversation_outline, verify

from ..support.template_corpus import corpus_template

IM_USER, IM_MIDDLE, IM_END = Marker("<|im_user|>"), Marker("<|im_middle|>"), Marker("<|im_end|>")
IM_ASSISTANT, IM_SYSTEM = Marker("<|im_assistant|>"), Marker("<|im_system|>")

# Kimi K2's calls as the generic calls concept declares them: the number after the name is
# taken for text, where the template counts the calls of the turn.
FIXED_NUMBER = Layout(
    name="kimi-fixed-number",
    summary="Kimi K2 with a call number that does not count",
    frames={
        "user": Frame(open=fence(IM_USER, "user", IM_MIDDLE), end=fence(IM_END)),
        "assistant": Frame(open=fence(IM_ASSISTANT, "assistant", IM_MIDDLE), end=fence(IM_END)),
        "system": Frame(open=fence(IM_SYSTEM, "system", IM_MIDDLE), end=fence(IM_END)),
        "tool": Frame(open=fence(IM_SYSTEM, "tool", IM_MIDDLE, "## Return of "), end=fence(IM_END)),
    },
    concepts=(
        ToolsBlock(
            place="own_turn",
            open=fence(IM_SYSTEM, "tool_declare", IM_MIDDLE),
            close=fence(IM_END),
            array=True,
        ),
        NamedCalls(
            open=fence(Marker("<|tool_call_begin|>"), "functions."),
            arguments_open=fence(":0", Marker("<|tool_call_argument_begin|>")),
            close=fence(Marker("<|tool_call_end|>")),
            section_open=fence(Marker("<|tool_calls_section_begin|>")),
            section_close=fence(Marker("<|tool_calls_section_end|>")),
        ),
        Results(id_close=fence("\\n")),
    ),
)


def _call(identifier: str) -> dict[str, object]:
    return {
        "id": identifier,
        "type": "function",
        "function": {"name": "get_time", "arguments": "{}"},
    }


def test_a_render_that_differs_is_said_by_its_first_differing_pieces() -> None:
    """moonshotai-Kimi-K2 numbers the calls of a turn (``functions.get_time:1`` for the
    second); a declaration writing ``:0`` for each is reported by that digit, after the text
    both write, and the conversation by its outline, not by its messages' JSON."""
    template = corpus_template("moonshotai-Kimi-K2")
    messages = [
        {"role": "system", "content": "Thanks, that helps."},
        {"role": "user", "content": "What time is it?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a1"), _call("a2")]},
        {"role": "tool", "tool_call_id": "a1", "content": "12:30"},
        {"role": "tool", "tool_call_id": "a2", "content": "12:30"},
    ]
    sample = Sample({"messages": messages, "tools": [TOOLS[2]]}, frozenset({"parallel-calls"}))
    runner = TemplateRunner(template.text, {"bos_token": template.bos_token or ""})
    found = verify(declare(FIXED_NUMBER), runner, [sample])
    assert found.failure is not None
    said = found.failure.describe()
    assert said == (
        "conversation (system, user, assistant with 2 calls, tool ×2; 1 tool), with the "
        "generation prompt: after …'n|>{}<|tool_call_end|><|tool_call_begin|>functions.get_time:'"
        " the template writes '1' where the declaration writes '0'"
    ), said
    assert json.dumps(messages[0], ensure_ascii=False) not in said


def test_an_outline_counts_alike_messages_and_says_what_an_assistant_holds() -> None:
    request = {
        "messages": [
            {"role": "system", "content": "a"},
            {"role": "system", "content": "b"},
            {"role": "user", "content": "c"},
            {"role": "assistant", "content": "", "reasoning_content": "r"},
            {"role": "user", "content": "d"},
            {"role": "assistant", "content": "e", "tool_calls": [_call("x")]},
            {"role": "tool", "tool_call_id": "x", "content": "f"},
        ],
        "tools": list(TOOLS),
    }
    assert conversation_outline(request) == (
        "(system ×2, user, assistant with reasoning and no text, user, "
        "assistant with 1 call and text, tool; 3 tools)"
    )
