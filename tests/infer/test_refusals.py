"""What inference says when it cannot derive something, on real templates of llama.cpp's
corpus: where the template departs, what it wrote there and what a concept would need, in
words a reader can act on (whole tokens quoted, from where the difference starts)."""

from __future__ import annotations

import functools

import pytest

from pawlette.errors import UnsupportedFeature
from pawlette.infer import Inference, infer_template

from ..support.template_corpus import corpus_template


@functools.cache
def _infer(name: str) -> Inference:
    template = corpus_template(name)
    return infer_template(template.text, bos_token=template.bos_token, eos_token=template.eos_token)


def _detail(name: str, capability: str) -> str:
    inference = _infer(name)
    found = {item.name: item for item in inference.capabilities}
    assert capability in found, inference.describe()
    return f"{found[capability].status}; {found[capability].detail}"


def test_an_empty_assistant_text_is_named_with_its_article() -> None:
    detail = _detail("meetkai-functionary-medium-v3.2", "empty assistant text")
    assert "writes an assistant message with no text" in detail
    assert " a assistant " not in detail


def test_joined_user_messages_say_what_joins_them() -> None:
    # DeepSeek V4 writes two user messages as one turn, joined by a blank line.
    detail = _detail("deepseek-ai-DeepSeek-V4", "consecutive user messages")
    assert detail == (
        "derived; a user turn after another opens with '\\n\\n' (their texts joined into one turn)"
    )
    # Apriel 1.6 opens such a turn without the newline before its marker: a turn of its own.
    detail = _detail("Apriel-1.6-15b-Thinker-fixed", "consecutive user messages")
    assert detail == "derived; a user turn after another opens with '<|begin_user|>\\n'"


def test_a_quote_cut_short_never_starts_inside_a_token() -> None:
    # Apriel 1.6 writes a long default system prompt before the system text.
    system = _detail("Apriel-1.6-15b-Thinker-fixed", "system messages")
    assert "is written after …'fully, present your reasoning step-by-step" in system
    assert "(the default system text)" in system


def test_calls_opened_for_an_empty_list_are_probed_without_one() -> None:
    """Mistral Nemo's template writes ``[TOOL_CALLS][`` for any list of calls, empty too: the
    turn with no text is probed without calls rather than refused as a turn of calls (and the
    calls are derived from the turns that hold some)."""
    detail = _detail("mistralai-Mistral-Nemo-Instruct-2407", "tool calls")
    assert "framed unlike" not in detail
    assert detail.startswith("derived; one JSON array")


def test_tools_written_in_two_places_are_refused_saying_both() -> None:
    # Muse's template writes the tools' instructions and, further on, their names as
    # recipients.
    detail = _detail("muse-glimmer", "tools")
    assert "given a tool, the template writes 'In this environment you have access" in detail
    assert "'zq_alpha.*\", \"' after" in detail
    assert "2 changes, not one block where a tools block goes" in detail
    assert "[(" not in detail  # no offsets and tuples


def test_a_request_with_tools_is_refused_saying_how_many_and_why() -> None:
    # Kimi K2's tools are found, but its template refuses a turn of calls in the sandbox:
    # the calls a model writes with them are not derived, so the tools are refused.
    fmt = _infer("Kimi-K2-Instruct").format
    assert fmt is not None
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    with pytest.raises(UnsupportedFeature) as raised:
        fmt.render({"messages": [{"role": "user", "content": "hi"}], "tools": [tool]})
    message = str(raised.value)
    assert message.startswith("tools: 1 given; expected none: inferred has no tools, which ")
    assert "could not derive from the template (the calls a model writes with them" in message


def test_a_second_parameter_closed_otherwise_is_refused_saying_how() -> None:
    """A template that closes a key otherwise after the first parameter, whatever its value's
    kind (no concept says so: DeepSeek V3.2's close follows the kind, and is derived)."""
    template = (
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content or '' }}"
        "{% for c in m.tool_calls or [] %}<call>{{ c.function.name }}"
        '{% for k, v in c.function.arguments.items() %}<p k="{{ k }}"'
        '{% if not loop.first %} later="1"{% endif %}>{{ v | tojson }}</p>'
        "{% endfor %}</call>{% endfor %}<|end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    inference = infer_template(template)
    found = {item.name: item for item in inference.capabilities}
    detail = f"{found['tool calls'].status}; {found['tool calls'].detail}"
    assert detail.startswith("not derived"), detail
    assert 'key is closed by \'">"\', the second\'s by \'" later="1">true</p>' in detail


def test_a_template_that_needs_tools_given_is_refused_saying_so() -> None:
    # Refused without tools and with an empty list (a tool_use template that iterates
    # ``tools`` renders given an empty one, and is inferred: test_listed_tools).
    template = (
        "{% if not tools %}{{ raise_exception('this template needs tools') }}{% endif %}"
        "<|tools|>{{ tools | tojson }}<|end|>"
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    inference = infer_template(template)
    assert not inference.accepted and inference.refusal is not None
    assert "refuses a conversation of one user message without tools (TemplateError: this " in (
        inference.refusal
    )
    assert "an empty list of tools too, and renders it given tools (needs concept: a template " in (
        inference.refusal
    )


def test_a_lead_written_only_with_text_is_refused_saying_what_it_is() -> None:
    # Functionary v3.2 writes '>>>all\n' before an answer's text, and nothing without text.
    detail = _detail("meetkai-functionary-medium-v3.2", "empty assistant text")
    assert detail == (
        "not derived; the template writes an assistant message with no text otherwise than "
        "others: it writes '>>>all\\n' before an answer's text only when there is text (needs "
        "concept: a lead of text written only with text; only whitespace before a trimmed "
        "text is derived, as Trimmed's lead)"
    )
