"""What inference derives where a template's probes show it, on real templates of llama.cpp's
corpus: results of a template that drops calls, tools after a default system turn."""

from __future__ import annotations

import functools

from pawlette.infer import Inference, infer_template

from ..support.template_corpus import corpus_template


@functools.cache
def _infer(name: str) -> Inference:
    template = corpus_template(name)
    return infer_template(template.text, bos_token=template.bos_token, eos_token=template.eos_token)


def _status(name: str, capability: str) -> tuple[str, str]:
    inference = _infer(name)
    assert inference.accepted, inference.describe()
    found = {item.name: (item.status, item.detail) for item in inference.capabilities}
    return found[capability]


def test_results_are_derived_where_the_template_drops_calls() -> None:
    # LFM2 writes no calls, and a result as a turn of its own role.
    assert _status("LFM2-8B-A1B", "tool calls")[0] == "dropped"
    assert _status("LFM2-8B-A1B", "tool results") == ("derived", "a turn each")
    fmt = _infer("LFM2-8B-A1B").format
    assert fmt is not None
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    request = {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "21 degrees"},
        ]
    }
    assert "21 degrees" in fmt.render(request).text


def test_results_a_template_refuses_are_refused_not_underived() -> None:
    # Gemma 2 requires user and assistant turns to alternate: a result breaks it.
    status, detail = _status("google-gemma-2-2b-it", "tool results")
    assert status == "refused" and "must alternate" in detail


def test_results_the_template_drops_or_writes_as_user_turns_are_declared_so() -> None:
    # Phi-3.5 writes nothing for a result; SmolLM3 writes one as a user turn, which reads
    # back as a user message: both a recorded loss.
    assert _status("microsoft-Phi-3.5-mini-instruct", "tool results") == (
        "dropped",
        "the template does not write tool messages",
    )
    assert _status("HuggingFaceTB-SmolLM3-3B", "tool results") == (
        "dropped",
        "the template writes each result as a user message (its role is lost)",
    )


def test_results_with_the_call_id_after_their_text_are_derived() -> None:
    # Mistral Nemo writes {"content": ..., "call_id": ...}.
    assert _status("mistralai-Mistral-Nemo-Instruct-2407", "tool results") == (
        "derived",
        "a turn each, with the call's id after its text",
    )


def test_tools_after_a_default_system_turn_are_derived() -> None:
    """Devstral writes its tools on their own after the system turn, its default one when
    the conversation has no system message."""
    assert _status("unsloth-mistral-Devstral-Small-2507", "tools") == (
        "derived",
        "after system, one JSON array",
    )
    assert _status("unsloth-mistral-Devstral-Small-2507", "tool calls")[0] == "derived"
    assert _status("unsloth-mistral-Devstral-Small-2507", "tool results")[0] == "derived"


def test_an_empty_first_system_message_written_as_none_is_declared_so() -> None:
    """Granite 4.0 writes a first system message with no text as no system message (its
    default turn in its place): ``SystemPrompt(empty_first="absent")``, the message a loss."""
    assert _status("ibm-granite-granite-4.0", "empty system text")[0] == "dropped"
    fmt = _infer("ibm-granite-granite-4.0").format
    assert fmt is not None
    empty = [{"role": "system", "content": ""}, {"role": "user", "content": "Hi"}]
    rendering = fmt.render({"messages": empty}, add_generation_prompt=True)
    alone = fmt.render({"messages": empty[1:]}, add_generation_prompt=True)
    assert rendering.text == alone.text and rendering.losses


def test_empty_later_system_messages_the_template_skips_are_dropped() -> None:
    """Phi-3.5 skips every system message with no text: the first as none, a later one too
    (``empty_first="absent"``, ``empty_later="dropped"``), verified, each a recorded loss."""
    from pawlette.declare import SystemPrompt

    name = "microsoft-Phi-3.5-mini-instruct"
    assert _status(name, "empty system text") == (
        "dropped",
        "the template writes a first system message with no text as no system message, and "
        "a later one as nothing",
    )
    layout = _infer(name).layout
    assert layout is not None
    found = [c for c in layout.concepts if isinstance(c, SystemPrompt)]
    assert [(c.empty_first, c.empty_later) for c in found] == [("absent", "dropped")]
    fmt = _infer(name).format
    assert fmt is not None
    later_empty = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "system", "content": ""},
        {"role": "user", "content": "Bye"},
    ]
    rendering = fmt.render(later_empty)
    assert rendering.text == fmt.render(later_empty[:2] + later_empty[3:]).text
    assert rendering.losses == ("messages[2]: a system message with empty text, dropped",)


def test_later_system_messages_the_template_skips_are_dropped() -> None:
    """SmolLM3 writes only the first system message: ``placement="first_kept"``."""
    assert _status("HuggingFaceTB-SmolLM3-3B", "later system messages") == (
        "dropped",
        "the template writes only the first system message",
    )
    assert _status("HuggingFaceTB-SmolLM3-3B", "system messages") == (
        "derived",
        "placement first_kept",
    )


def test_results_in_a_user_turn_with_their_own_fences_stay_derived() -> None:
    """Granite 4.0 writes results inside a user turn, each in ``<tool_response>`` fences:
    the fences tell them from a user message, so they are derived (grouped)."""
    assert _status("ibm-granite-granite-4.0", "tool results") == (
        "derived",
        "grouped in one turn",
    )


def test_results_after_calls_whose_text_the_template_reads_are_derived() -> None:
    """QwQ's template splits the text of an assistant turn that is not last: a turn of calls
    without content before a result is refused, with ``"content": ""`` written.  The results
    are derived with the calls given that content, as Hugging Face callers pass it."""
    inference = _infer("Qwen-QwQ-32B")
    assert _status("Qwen-QwQ-32B", "tool results") == ("derived", "grouped in one turn")
    assert _status("Qwen-QwQ-32B", "text with tool calls")[0] == "derived"
    assert inference.empty_content


def test_empty_reasoning_is_declared_as_the_template_writes_it() -> None:
    """Command A MoE's template tests the reasoning text (an empty one writes no block), LFM2.5
    tests that it is given (an empty one writes an empty block): ``Reasoning.empty_given``."""
    assert _status("Cohere2MoE", "empty reasoning") == (
        "derived",
        "an empty text is written as none",
    )
    assert _status("LFM2.5-8B-A1B", "empty reasoning") == (
        "derived",
        "an empty text is written as an empty block",
    )
    fmt = _infer("Cohere2MoE").format
    assert fmt is not None
    turn = {"role": "assistant", "content": "Hi.", "reasoning_content": ""}
    without = {"role": "assistant", "content": "Hi."}
    user = {"role": "user", "content": "Hello"}
    assert (
        fmt.render({"messages": [user, turn]}).text
        == fmt.render({"messages": [user, without]}).text
    )


def test_results_are_derived_where_the_tools_move_before_the_last_user_message() -> None:
    """Mistral Small 3.2 writes its tools before the last user message: a user message after
    the results moves them, which is not the results changing the turn of calls."""
    assert _status("Mistral-Small-3.2-24B-Instruct-2506", "tool results") == (
        "derived",
        "a turn each, with the call's id",
    )


def test_calls_are_derived_where_the_template_refuses_an_empty_turn() -> None:
    """Ministral 3's template refuses an assistant turn with neither text nor calls: the
    calls are the whole turn, and verification holds the declaration to it."""
    name = "mistralai-Ministral-3-14B-Reasoning-2512"
    assert _status(name, "tool calls") == (
        "derived",
        "name then JSON arguments: [TOOL_CALLS]NAME[ARGS]{...}",
    )
    assert _status(name, "tool results")[0] == "derived"


def test_tools_before_the_system_text_are_derived() -> None:
    """Qwen3.5 writes its tools first in the system turn, a blank line after them only when
    a system text follows: ``ToolsBlock(first=True, separator=...)``."""
    assert _status("Qwen3.5-4B", "tools") == ("derived", "system, one JSON per tool")
    status, detail = _status("Qwen3.5-4B", "tool calls")
    assert status == "derived" and detail.startswith("a tag per parameter: <tool_call>")


def test_a_template_that_requires_a_thinking_field_is_given_it_empty() -> None:
    """IFM-K2-Horizon's template raises "missing a thinking field" on an assistant message
    without reasoning; its callers pass ``"reasoning_content": ""``, and so does the runner:
    the turns and the reasoning are derived (an absent reasoning is the empty block)."""
    inference = _infer("IFM-K2-Horizon")
    assert inference.shapes == ("empty reasoning",)
    assert _status("IFM-K2-Horizon", "reasoning")[0] == "derived"
    fmt = inference.format
    assert fmt is not None
    user = {"role": "user", "content": "Hello"}
    turn = {"role": "assistant", "content": "Hi."}
    assert fmt.render({"messages": [user, turn]}).text.endswith(
        "<|ifm|im_start|>assistant\n<ifm|think>\n</ifm|think>Hi.<|ifm|im_end|>"
    )


def test_results_each_led_by_a_special_token_without_a_close_are_grouped() -> None:
    """Bielik writes results in one user turn, each led by ``<|function_output|>`` with
    nothing after it: a result ends where the next one opens.  Its template looks up a
    result's neighbours counting from the first message while its loop starts after the
    system message, so with one the group is cut elsewhere, which verification finds; with
    the lookup counting from where the loop starts, the results are derived."""
    template = corpus_template("Bielik-11B-v3.0-Instruct")
    said = _status("Bielik-11B-v3.0-Instruct", "tool results")
    assert said[0] == "not derived"
    assert said[1].startswith("verification: conversation (system, user, ")
    counted = template.text
    for neighbour in ("messages[loop.index0 - 1]", "messages[loop.index0 + 1]"):
        assert counted.count(neighbour) == 1
        counted = counted.replace(
            neighbour, neighbour.replace("[loop.index0", "[loop_start_index + loop.index0")
        )
    inference = infer_template(counted, bos_token=template.bos_token, eos_token=template.eos_token)
    assert inference.accepted, inference.describe()
    found = {item.name: (item.status, item.detail) for item in inference.capabilities}
    assert found["tool results"] == ("derived", "grouped in one turn")
    assert not inference.needs, inference.describe()
    fmt = inference.format
    assert fmt is not None
    calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for n in (1, 2)
    ]
    request = {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c1", "content": "21 degrees"},
            {"role": "tool", "tool_call_id": "c2", "content": "dry"},
        ]
    }
    assert fmt.render(request).text.endswith(
        "<|im_start|>user\n<|function_output|>21 degrees<|function_output|>dry<|im_end|>\n"
    )
