"""Two assistant messages in a row: generated for verification where the template accepts
them, their opener derived where the template writes the second as a turn of its own, and
refused at use, saying why, where it does not."""

from __future__ import annotations

import itertools

import pytest

from pawlette.declare import Layout, Reasoning, layout_of
from pawlette.errors import RequestError
from pawlette.infer import Inference, infer_template
from pawlette.infer.conversations import Features, generate
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

ANSWERS = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "one"},
    {"role": "assistant", "content": "two"},
]

# A plain template: a turn per message, whatever the roles' order.
TURNS = (
    "{%- for message in messages -%}"
    "{{ '<|' + message.role + '|>\\n' + message.content + '<|end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>\\n' }}{%- endif -%}"
)
# Writes no generation prompt after an assistant message (Reka Edge and GigaChat 3 do so).
UNPROMPTED = TURNS.replace(
    "if add_generation_prompt", "if add_generation_prompt and messages[-1].role != 'assistant'"
)
# Refuses an assistant message after an assistant message, and only that.
NO_ANSWER_PAIRS = (
    "{%- for message in messages -%}"
    "{%- if loop.index0 > 0 and message.role == 'assistant' and "
    "messages[loop.index0 - 1].role == 'assistant' -%}"
    "{{ raise_exception('two assistant messages in a row') }}{%- endif -%}"
    "{{ '<|' + message.role + '|>\\n' + message.content + '<|end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>\\n' }}{%- endif -%}"
)
# Writes the second of two assistant messages inside the first one's turn.
JOINED_ANSWERS = (
    "{%- for message in messages -%}"
    "{%- set joined = loop.index0 > 0 and message.role == 'assistant' and "
    "messages[loop.index0 - 1].role == 'assistant' -%}"
    "{%- if not joined -%}{{ '<|' + message.role + '|>\\n' }}{%- else -%}{{ ' + ' }}{%- endif -%}"
    "{{ message.content }}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'assistant' or "
    "message.role != 'assistant' -%}{{ '<|end|>\\n' }}{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>\\n' }}{%- endif -%}"
)


def _status(inference: Inference, name: str = "consecutive assistant messages") -> str:
    found = {item.name: item for item in inference.capabilities}
    assert name in found, inference.describe()
    return f"{found[name].status}; {found[name].detail}"


def test_deepseek_v31_writes_an_answer_after_an_answer_as_its_template_does() -> None:
    """DeepSeek V3.1 opens no turn for an answer after an answer: no ``<｜Assistant｜>``,
    no ``<think></think>``; thinking on or off."""
    template = corpus_template("deepseek-ai-DeepSeek-V3.1")
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    inference = infer_template(template.text, **tokens)
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _status(inference) == "derived; an assistant turn after another opens with ''"
    (switch,) = [item for item in inference.capabilities if item.name == "switch thinking"]
    # (With thinking on, a greeting after a system text is derived too: the template writes
    # no generation prompt there, and a turn read after none starts before the reasoning
    # block the prompt opens elsewhere.)
    assert "not derived" not in switch.detail, switch.detail
    original = TemplateRunner(template.text, tokens)
    for thinking in (False, True):
        variant = fmt.with_options(thinking=thinking)
        theirs = original.render(ANSWERS, variables={"thinking": thinking}).text
        assert theirs is not None and theirs.endswith(
            "one<｜end▁of▁sentence｜>two<｜end▁of▁sentence｜>"
        )
        assert variant.render(ANSWERS).text == theirs
        # The model's answer after an answer (the template writes no prompt there) is read
        # as an answer, not as reasoning the thinking prompt would open.
        prompt = original.render(
            ANSWERS[:2], add_generation_prompt=True, variables={"thinking": thinking}
        ).text
        assert prompt is not None
        completion = variant.parse("two<｜end▁of▁sentence｜>", prompt=prompt).message
        assert completion["content"] == "two"
        assert not completion.get("reasoning_content")


def test_deepseek_v32_writes_its_reasoning_only_in_a_turn_it_opens() -> None:
    """DeepSeek V3.2 writes ``<｜Assistant｜></think>`` only in a turn it opens, after a query
    or results: an answer after an answer, or before any query, has neither opener nor the
    reasoning's stand-in.  The declaration writes the reasoning after those roles alone
    (``Reasoning.after``), and both are derived."""
    template = corpus_template("deepseek-ai-DeepSeek-V3.2")
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    inference = infer_template(template.text, **tokens)
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _status(inference) == "derived; an assistant turn after another opens with ''"
    assert _status(inference, "leading assistant messages") == (
        "derived; written as an assistant turn, opened with '' at the start, opened with '' "
        "after a system message"
    )
    layout = layout_of(fmt.with_options(thinking=False))
    assert isinstance(layout, Layout)
    reasoning = layout.concept(Reasoning)
    assert reasoning is not None and reasoning.after == ("user", "tool")
    original = TemplateRunner(template.text, tokens)
    greeted = [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hello!"},
        *ANSWERS,
    ]
    for messages in (ANSWERS, greeted, greeted[1:]):
        theirs = original.render(messages).text
        assert theirs is not None
        assert fmt.render(messages).text == theirs
    # Before any query, the greeting is written right after the system text.
    assert "Be brief.Hello!<｜end▁of▁sentence｜><｜User｜>" in str(original.render(greeted).text)
    theirs = original.render(ANSWERS).text
    assert theirs is not None
    assert theirs.endswith(
        "<｜Assistant｜></think>one<｜end▁of▁sentence｜>" + "two<｜end▁of▁sentence｜>"
    )


def test_an_answer_after_an_answer_written_as_a_turn_of_its_own_is_derived() -> None:
    inference = infer_template(TURNS, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _status(inference) == "derived; written as two assistant turns"
    assert fmt.render(ANSWERS).text == TemplateRunner(TURNS, {}).render(ANSWERS).text
    # Verification held such conversations.
    assert inference.verification is not None and inference.verification.passed


def test_an_answer_after_an_answer_no_prompt_precedes_is_read_as_the_conversations() -> None:
    """A model is never prompted for an answer after an answer where the template writes no
    generation prompt there: that turn is read back as the conversation's last answer."""
    runner = TemplateRunner(UNPROMPTED, {})
    prompted = runner.render(ANSWERS[:2], add_generation_prompt=True).text
    assert prompted == runner.render(ANSWERS[:2]).text
    inference = infer_template(UNPROMPTED, eos_token="<|end|>")
    assert inference.format is not None, inference.describe()
    assert _status(inference) == "derived; written as two assistant turns"
    assert inference.format.render(ANSWERS).text == runner.render(ANSWERS).text


def test_answers_in_a_row_the_template_refuses_are_refused_saying_why() -> None:
    inference = infer_template(NO_ANSWER_PAIRS, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _status(inference) == (
        "refused; the template refuses an assistant message after an assistant message"
    )
    with pytest.raises(RequestError) as raised:
        fmt.render(ANSWERS)
    said = str(raised.value)
    assert "messages[2].role" in said
    assert "an assistant message after an assistant message" in said
    users = [{"role": "user", "content": "Hi"}, {"role": "user", "content": "there"}]
    assert fmt.render(users).text == TemplateRunner(NO_ANSWER_PAIRS, {}).render(users).text


def test_answers_joined_into_one_turn_are_not_derived_and_refused() -> None:
    runner = TemplateRunner(JOINED_ANSWERS, {})
    assert runner.render(ANSWERS).text == "<|user|>\nHi<|end|>\n<|assistant|>\none + two<|end|>\n"
    inference = infer_template(JOINED_ANSWERS, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    status = _status(inference)
    assert status.startswith("not derived; two assistant messages in a row are written ")
    assert "(needs concept: consecutive assistant messages joined into one turn)" in status
    with pytest.raises(RequestError) as raised:
        fmt.render(ANSWERS)
    assert "has no consecutive assistant messages" in str(raised.value)
    assert "needs concept" in str(raised.value)


def test_generated_answers_in_a_row_leave_the_other_conversations_as_they_were() -> None:
    with_pairs = generate(24)
    without = generate(24, features=Features(consecutive_answers=False))
    paired = [
        number for number, sample in enumerate(with_pairs) if "consecutive-answers" in sample.kinds
    ]
    assert paired == [7, 15, 23]
    for number in paired:
        roles = [message["role"] for message in with_pairs[number].messages]
        assert any(first == second == "assistant" for first, second in itertools.pairwise(roles))
    for number, (sample, other) in enumerate(zip(with_pairs, without, strict=True)):
        assert "consecutive-answers" not in other.kinds
        if number not in paired:
            assert sample == other
            continue
        # The same conversation with one more answer, after the first.
        messages = sample.messages
        second = next(
            index
            for index in range(1, len(messages))
            if messages[index]["role"] == messages[index - 1]["role"] == "assistant"
        )
        assert messages[:second] + messages[second + 1 :] == other.messages
