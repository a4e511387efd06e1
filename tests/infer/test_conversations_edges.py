"""An assistant message at either edge of a conversation: generated for verification (a few
conversations open with one; a few that end with one are rendered with the generation prompt
too), derived where the template writes them, and refused at use, saying why, where it does
not or writes them in a shape no concept writes."""

from __future__ import annotations

import pytest

from pawlette.errors import RequestError
from pawlette.export.jinja import export_jinja
from pawlette.infer import Inference, infer_template
from pawlette.infer.answer_edges import LEADING, PROMPTED
from pawlette.infer.conversations import Features, Sample, generate
from pawlette.infer.template import TemplateRunner

# A turn per message, whatever the roles' order.
TURNS = (
    "{%- for message in messages -%}"
    "{{ '<|' + message.role + '|>\\n' + message.content + '<|end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>\\n' }}{%- endif -%}"
)
# Writes no generation prompt after an assistant message (Reka Edge, GigaChat 3 do so).
UNPROMPTED = TURNS.replace(
    "if add_generation_prompt", "if add_generation_prompt and messages[-1].role != 'assistant'"
)
# Opens the turn after an answer with a reasoning block of its own, after a query not.
PROMPT_THINKS = TURNS.replace(
    "{{ '<|assistant|>\\n' }}",
    "{{ '<|assistant|>\\n' }}{% if messages[-1].role == 'assistant' %}{{ '<think>' }}{% endif %}",
)
# Refuses an assistant message before any user message, and only that.
NO_GREETING = (
    "{%- set ns = namespace(asked=false) -%}"
    "{%- for message in messages -%}"
    "{%- if message.role == 'assistant' and not ns.asked -%}"
    "{{ raise_exception('the conversation must start with a user message') }}{%- endif -%}"
    "{%- if message.role == 'user' -%}{%- set ns.asked = true -%}{%- endif -%}"
    "{{ '<|' + message.role + '|>\\n' + message.content + '<|end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>\\n' }}{%- endif -%}"
)
# Writes an assistant message before any user message without its opener (DeepSeek V3.1).
BARE_GREETING = (
    "{%- set ns = namespace(asked=false) -%}"
    "{%- for message in messages -%}"
    "{%- if message.role == 'assistant' and not ns.asked -%}{{ message.content + '<|end|>\\n' }}"
    "{%- else -%}{{ '<|' + message.role + '|>\\n' + message.content + '<|end|>\\n' }}"
    "{%- endif -%}"
    "{%- if message.role == 'user' -%}{%- set ns.asked = true -%}{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>\\n' }}{%- endif -%}"
)

GREETING = [
    {"role": "system", "content": "Be brief."},
    {"role": "assistant", "content": "Hello! How can I help?"},
    {"role": "user", "content": "Hi"},
]
ANSWERED = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
OFF = Features(leading_answer=False, prompt_after_answer=False)


def _found(inference: Inference, name: str) -> str:
    found = {item.name: item for item in inference.capabilities}
    assert name in found, inference.describe()
    return f"{found[name].status}; {found[name].detail}"


def _leading(sample: Sample) -> bool:
    roles = [message["role"] for message in sample.messages if message["role"] != "system"]
    return roles[0] == "assistant"


def test_a_few_conversations_open_with_an_answer_and_the_others_are_unchanged() -> None:
    samples, without = generate(24), generate(24, features=OFF)
    leading = [number for number, sample in enumerate(samples) if _leading(sample)]
    assert leading == [4, 12, 20]
    for number, (sample, plain) in enumerate(zip(samples, without, strict=True)):
        assert ("leading-answer" in sample.kinds) == (number in leading)
        messages = list(sample.messages)
        if number in leading:
            # The answer before the first query is the only message the shape adds.
            first = next(index for index, m in enumerate(messages) if m["role"] != "system")
            del messages[first]
        assert messages == plain.messages
        assert sample.tools == plain.tools
    # With a system message before the answer, and without.
    assert {samples[number].messages[0]["role"] for number in leading} == {"system", "assistant"}


def test_a_few_conversations_ending_with_an_answer_are_rendered_with_the_prompt_too() -> None:
    samples, without = generate(24), generate(24, features=OFF)
    prompted = [number for number, sample in enumerate(samples) if sample.prompt_after_answer]
    assert prompted == [1, 8, 15]
    for number, sample in enumerate(samples):
        if number in prompted:
            assert sample.ends_with == "assistant" and sample.prompts == (True, False)
            assert "prompt-after-answer" in sample.kinds
        elif sample.ends_with == "assistant":
            assert sample.prompts == (False,)
        else:
            assert sample.prompts == (True, False)
        assert without[number].prompts == (
            (False,) if sample.ends_with == "assistant" else (True, False)
        )
    # One after a plain answer, one after results, one after answers in a row.
    shapes = {
        frozenset(samples[number].kinds & {"results", "consecutive-answers"}) for number in prompted
    }
    assert shapes == {
        frozenset(),
        frozenset({"results"}),
        frozenset({"results", "consecutive-answers"}),
    }


def test_a_template_that_writes_both_edges_has_them_derived_and_verified() -> None:
    inference = infer_template(TURNS, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _found(inference, LEADING) == "derived; written as an assistant turn"
    assert (
        _found(inference, PROMPTED)
        == "derived; the template writes '<|assistant|>\\n' after an answer"
    )
    runner = TemplateRunner(TURNS, {})
    assert fmt.render(GREETING).text == runner.render(GREETING).text
    prompted = runner.render(ANSWERED, add_generation_prompt=True).text
    assert fmt.render(ANSWERED, add_generation_prompt=True).text == prompted
    # 24 conversations (no tools: 16 await the model, and 2 that end with an answer are
    # rendered with the prompt too).
    assert inference.verification is not None
    assert inference.verification.compared == 24 + 16 + 2


def test_no_prompt_after_an_answer_is_refused_at_use_saying_what_the_template_writes() -> None:
    inference = infer_template(UNPROMPTED, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _found(inference, PROMPTED) == (
        "not derived; the template writes no generation prompt after an assistant message: "
        "'<|user|>\\nZu1q<|end|>\\n<|assistant|>\\nZa1q<|end|>\\n' ends the conversation "
        "(needs concept: no generation prompt after an answer)"
    )
    assert inference.needs  # (listed with what inference could not declare)
    runner = TemplateRunner(UNPROMPTED, {})
    assert fmt.render(ANSWERED).text == runner.render(ANSWERED).text
    with pytest.raises(RequestError, match=r"add_generation_prompt.*generation prompt after an"):
        fmt.render(ANSWERED, add_generation_prompt=True)
    # The exported template refuses it too.
    exported = TemplateRunner(export_jinja(fmt))
    refused = exported.render(ANSWERED, add_generation_prompt=True)
    assert refused.text is None and "generation prompt after an answer" in (refused.refusal or "")
    assert exported.render(ANSWERED).text == fmt.render(ANSWERED).text


def test_a_prompt_after_an_answer_written_otherwise_is_given_up_alone() -> None:
    """The probe sees a prompt after the answer; verification finds the declaration writes
    it otherwise (no ``<think>``) and gives up that alone: the answers in a row, which the
    same conversations hold, stay derived."""
    inference = infer_template(PROMPT_THINKS, eos_token="<|end|>")
    assert inference.format is not None, inference.describe()
    said = _found(inference, PROMPTED)
    assert said.startswith("not derived; verification: conversation (")
    assert said.endswith(
        "notes.txt<|end|>\\n<|assistant|>\\n' the template writes '<think>' where the "
        "declaration writes nothing"
    )
    assert _found(inference, "consecutive assistant messages").startswith("derived")
    assert _found(inference, LEADING).startswith("derived")
    with pytest.raises(RequestError, match="generation prompt after an answer"):
        inference.format.render(ANSWERED, add_generation_prompt=True)


def test_an_answer_before_any_query_the_template_refuses_is_refused() -> None:
    inference = infer_template(NO_GREETING, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _found(inference, LEADING) == (
        "refused; the template refuses an assistant message before any user message "
        "(TemplateError: the conversation must start with a user message)"
    )
    with pytest.raises(RequestError, match=r"messages\[1\]\.role.*leading assistant messages"):
        fmt.render(GREETING)
    exported = TemplateRunner(export_jinja(fmt)).render(GREETING)
    assert exported.text is None and "leading assistant messages" in (exported.refusal or "")
    later = [*ANSWERED, {"role": "user", "content": "Thanks"}]
    assert fmt.render(later).text == TemplateRunner(NO_GREETING, {}).render(later).text


def test_an_answer_before_any_query_written_otherwise_is_given_up_saying_where() -> None:
    inference = infer_template(BARE_GREETING, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    said = _found(inference, LEADING)
    assert said.startswith("not derived; verification: conversation (")
    assert "the template writes nothing where the declaration writes '<|assistant|>\\n'" in said
    # Nothing else was given up for it.
    others = [item for item in inference.capabilities if item.name != LEADING]
    assert all(item.status != "not derived" for item in others), inference.describe()
    with pytest.raises(RequestError, match="leading assistant messages"):
        fmt.render(GREETING)
