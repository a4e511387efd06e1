"""Templates no one declared: a ChatML template with one sentence changed, a Llama 3 one, a
template with a call fence of its own; and templates inference must refuse (output that
depends on what the probes cannot see, a fence no concept writes)."""

from __future__ import annotations

import datetime
import json

from pawlette.declare import NoPromptAfter
from pawlette.detect import detect_template
from pawlette.infer import infer_template
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

QWEN_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def test_a_chatml_template_with_one_sentence_changed() -> None:
    original = corpus_template("Qwen-Qwen2.5-7B-Instruct").text
    template = original.replace(QWEN_SYSTEM, "You are the Pawlette test model. Answer briefly.")
    assert template != original
    detection = detect_template(template, eos_token="<|im_end|>")
    assert detection.inferred, detection.describe()
    statuses = {item.name: item.status for item in detection.inference.capabilities}  # type: ignore[union-attr]
    assert statuses["tools"] == statuses["tool calls"] == statuses["tool results"] == "derived"
    fmt = detection.format
    assert fmt is not None
    rendered = fmt.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
    assert rendered.startswith("<|im_start|>system\nYou are the Pawlette test model.")
    completion = (
        'Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "</tool_call><|im_end|>"
    )
    message = fmt.parse(completion, tools=[WEATHER]).message
    assert message["content"] == "Let me look."
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


def test_a_llama3_template_with_its_date_as_an_option() -> None:
    original = corpus_template("meta-llama-Llama-3.2-3B-Instruct").text
    template = original.replace("Cutting Knowledge Date: December 2023", "Knowledge: 2025")
    assert template != original
    detection = detect_template(
        template,
        bos_token="<|begin_of_text|>",
        eos_token="<|eot_id|>",
        today=datetime.date(2025, 3, 9),
    )
    assert detection.inferred, detection.describe()
    fmt = detection.format
    assert fmt is not None
    user = [{"role": "user", "content": "Hi"}]
    assert "Knowledge: 2025\nToday Date: 09 Mar 2025\n" in fmt.render(user).text
    later = fmt.with_options(today=datetime.date(2026, 1, 2))
    assert "Today Date: 02 Jan 2026\n" in later.render(user).text


NOVEL = (
    "{%- if tools %}<|tools|>{{ tools | tojson }}<|end|>{% endif -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'system' %}<|sys|>{{ m.content }}<|end|>"
    "{%- elif m.role == 'user' %}<|user|>{{ m.content }}<|end|>"
    "{%- elif m.role == 'assistant' %}<|bot|>{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}⟪call⟫{{ c.function.name }}⟪args⟫"
    "{{ c.function.arguments | tojson }}⟪/call⟫{% endfor %}<|end|>"
    "{%- elif m.role == 'tool' %}<|result|>{{ m.content }}<|end|>"
    "{%- endif %}{% endfor -%}"
    "{%- if add_generation_prompt %}<|bot|>{% endif %}"
)


def test_a_template_with_a_call_fence_of_its_own() -> None:
    inference = infer_template(NOVEL)
    assert inference.accepted, inference.describe()
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tools"] == statuses["tool calls"] == statuses["tool results"] == "derived"
    fmt = inference.format
    assert fmt is not None
    completion = '⟪call⟫get_weather⟪args⟫{"city": "Oslo"}⟪/call⟫<|end|>'
    message = fmt.parse(completion, tools=[WEATHER]).message
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
    request = {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "abc123def",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "abc123def", "content": "3°C"},
        ],
        "tools": [WEATHER],
    }
    assert fmt.render(request, add_generation_prompt=True).text == (
        '<|tools|>[{"type": "function", "function": {"name": "get_weather", "description": '
        '"The weather.", "parameters": {"type": "object", "properties": {"city": {"type": '
        '"string"}}}}}]<|end|><|user|>Weather?<|end|><|bot|>⟪call⟫get_weather⟪args⟫'
        '{"city": "Oslo"}⟪/call⟫<|end|><|result|>3°C<|end|><|bot|>'
    )


def test_output_that_depends_on_what_the_probes_cannot_see_is_refused() -> None:
    # Long user texts get a mark: the probes' sentinel texts are short, the generated
    # conversations are not.
    template = (
        "{%- for m in messages %}<|{{ m.role }}|>"
        "{% if m.role == 'user' and m.content | length > 30 %}(long) {% endif %}"
        "{{ m.content }}<|end|>{% endfor -%}"
        "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    inference = infer_template(template)
    assert not inference.accepted and inference.format is None
    refusal = inference.refusal or ""
    assert refusal.startswith("verification failed"), refusal
    assert "the template writes '(long) ' where the declaration writes nothing" in refusal


def test_a_fence_no_concept_writes_is_refused_naming_the_concept() -> None:
    # Text after the last turn when no generation prompt follows: plain text, no token.
    template = (
        "{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor -%}"
        "{%- if add_generation_prompt %}<|assistant|>{% else %}END{% endif %}"
    )
    inference = infer_template(template)
    assert inference.layout is None and not inference.accepted
    assert "'END'" in (inference.refusal or "")
    assert "needs concept: a conversation's end that is not one special token" in (
        inference.refusal or ""
    )


SPACE_FIRST = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'user' -%}<|q|>{{ m.content | trim }}<|x|>"
    "{%- elif m.role == 'assistant' -%}<|r|>~\t {{ m.content | trim }}<|x|>"
    "{%- else -%}<|s|>{{ m.content }}<|x|>{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|r|>~{%- endif -%}"
)


def test_a_prompt_that_stops_short_of_the_whitespace_its_turns_write() -> None:
    """The generation prompt ends with ``~``, past turns write ``~\\t `` before their trimmed
    text: the model writes the whitespace first, and reading its turn drops it."""
    inference = infer_template(SPACE_FIRST)
    assert inference.accepted, inference.describe()
    fmt = inference.format
    assert fmt is not None
    message = fmt.parse("\t Sure thing.<|x|>").message
    assert message["content"] == "Sure thing."
    prompt = fmt.render([{"role": "user", "content": " Hi "}], add_generation_prompt=True).text
    assert prompt == "<|q|>Hi<|x|><|r|>~"


def test_a_laguna_template_whose_prompt_closes_reasoning_before_its_newline() -> None:
    """Poolside Laguna's prompt ``<assistant>\\n</think>`` stops before the ``\\n`` its past
    turns write after ``</think>``: the model writes it first."""
    template = corpus_template("poolside-Laguna-XS-2.1")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    assert inference.format is not None
    completion = "\nThe answer is 4.\n</assistant>"
    assert inference.format.parse(completion).message["content"] == "The answer is 4."


def test_a_template_that_writes_no_prompt_after_results() -> None:
    """The R1 Llama distill's template, each batch of results opened alike: it writes no
    generation prompt after results, not even the ``<think>`` its prompt after a query opens,
    and the answer after them opens with nothing.  The declaration writes none there
    (NoPromptAfter), and the results are derived."""
    original = corpus_template("deepseek-ai-DeepSeek-R1-Distill-Llama-8B")
    # (Its own opens only the conversation's first batch with <｜tool▁outputs▁begin｜>.)
    template = original.text.replace(
        "{%- if ns.is_output_first -%}", "{%- if messages[loop.index0 - 1].role != 'tool' -%}"
    )
    assert template != original.text
    inference = infer_template(template, bos_token=original.bos_token, eos_token=original.eos_token)
    fmt = inference.format
    assert fmt is not None, inference.describe()
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tool results"] == "derived", inference.describe()
    assert inference.layout is not None
    assert NoPromptAfter(roles=("tool",)) in inference.layout.concepts
    runner = TemplateRunner(
        template, {"bos_token": original.bos_token, "eos_token": original.eos_token}
    )
    answered = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "tool", "content": "18°C"},
    ]
    theirs = runner.render(answered, add_generation_prompt=True).text
    assert theirs is not None and theirs == runner.render(answered).text
    assert fmt.render(answered, add_generation_prompt=True).text == theirs
    asked = answered[:1]
    prompt = runner.render(asked, add_generation_prompt=True).text
    assert prompt is not None and prompt.endswith("<think>\n")
    assert fmt.render(asked, add_generation_prompt=True).text == prompt
    assert fmt.parse("It is 18°C.<｜end▁of▁sentence｜>", prompt=theirs).message["content"] == (
        "It is 18°C."
    )
