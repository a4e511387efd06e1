"""An assistant message at either edge of a conversation: generated for verification (a few
conversations open with one; a few that end with one are rendered with the generation prompt
too), derived where the template writes them, and refused at use, saying why, where it does
not or writes them in a shape no concept writes."""

from __future__ import annotations

import pytest

from pawlette.declare import NoPromptAfter
from pawlette.errors import RequestError
from pawlette.export.jinja import export_jinja
from pawlette.infer import Inference, infer_template
from pawlette.infer.answer_edges import LEADING, PROMPTED
from pawlette.infer.conversations import Features, Sample, generate
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

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

# The same, with no generation prompt after a system message (DeepSeek V3.1 writes none).
BARE_GREETING_UNPROMPTED = BARE_GREETING.replace(
    "if add_generation_prompt", "if add_generation_prompt and messages[-1].role != 'system'"
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


def test_no_prompt_after_an_answer_is_derived_as_none() -> None:
    """The template writes nothing after an answer with the generation prompt: the
    declaration writes nothing either (the model goes on after the answer's end), as the
    exported template does."""
    inference = infer_template(UNPROMPTED, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _found(inference, PROMPTED) == (
        "derived; the template writes no generation prompt after an answer: the model goes "
        "on after the answer's end"
    )
    assert not inference.needs, inference.describe()
    runner = TemplateRunner(UNPROMPTED, {})
    for prompt in (False, True):
        theirs = runner.render(ANSWERED, add_generation_prompt=prompt).text
        assert fmt.render(ANSWERED, add_generation_prompt=prompt).text == theirs
        exported = TemplateRunner(export_jinja(fmt)).render(ANSWERED, add_generation_prompt=prompt)
        assert exported.text == theirs
    # After a query, the prompt is the template's.
    asked = ANSWERED[:1]
    assert (
        fmt.render(asked, add_generation_prompt=True).text
        == runner.render(asked, add_generation_prompt=True).text
        == "<|user|>\nHi<|end|>\n<|assistant|>\n"
    )


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


def test_an_answer_before_any_query_written_without_its_opener_is_derived() -> None:
    """The template writes a greeting with no opener, at the start and after a system
    message, and no generation prompt after a system message: the assistant frame opens with
    nothing there, and only there."""
    inference = infer_template(BARE_GREETING_UNPROMPTED, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    assert _found(inference, LEADING) == (
        "derived; written as an assistant turn, opened with '' at the start, opened with '' "
        "after a system message"
    )
    assert not inference.needs, inference.describe()
    runner = TemplateRunner(BARE_GREETING_UNPROMPTED, {})
    for messages in (GREETING, GREETING[1:], [*ANSWERED, *GREETING[1:]], GREETING[:1]):
        for prompt in (False, True):
            theirs = runner.render(messages, add_generation_prompt=prompt).text
            assert fmt.render(messages, add_generation_prompt=prompt).text == theirs
    assert fmt.render(GREETING).text == (
        "<|system|>\nBe brief.<|end|>\nHello! How can I help?<|end|>\n<|user|>\nHi<|end|>\n"
    )


def test_a_greeting_that_no_generation_prompt_leads_to_is_given_up_saying_where() -> None:
    """The template writes a greeting after a system message with no opener, but its
    generation prompt there opens the turn: a model so prompted would write the opener's
    turn, not the template's, so the greeting is given up, as verification shows."""
    inference = infer_template(BARE_GREETING, eos_token="<|end|>")
    fmt = inference.format
    assert fmt is not None, inference.describe()
    said = _found(inference, LEADING)
    assert said.startswith("not derived; verification: conversation (system, assistant, ")
    assert ": its assistant turn messages[1], as the template writes it" in said
    # Nothing else was given up for it.
    others = [item for item in inference.capabilities if item.name != LEADING]
    assert all(item.status != "not derived" for item in others), inference.describe()
    with pytest.raises(RequestError, match="leading assistant messages"):
        fmt.render(GREETING)


def _corpus_inference(name: str) -> tuple[Inference, TemplateRunner]:
    template = corpus_template(name)
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.format is not None, inference.describe()
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    given = {key: value for key, value in tokens.items() if value is not None}
    return inference, TemplateRunner(template.text, given)


def test_deepseek_v31_greeting_opens_with_nothing_at_the_start_and_after_a_system_text() -> None:
    """DeepSeek V3.1 writes an answer before any query with no ``<｜Assistant｜>`` and no
    ``<think></think>``, right after the begin or the system text."""
    inference, runner = _corpus_inference("deepseek-ai-DeepSeek-V3.1")
    assert _found(inference, LEADING) == (
        "derived; written as an assistant turn, opened with '' at the start, opened with '' "
        "after a system message"
    )
    assert not inference.needs, inference.describe()
    fmt = inference.format
    assert fmt is not None
    for messages in (GREETING, GREETING[1:]):
        theirs = runner.render(messages).text
        assert fmt.render(messages).text == theirs
    assert runner.render(GREETING[1:]).text == (
        "<｜begin▁of▁sentence｜>Hello! How can I help?<｜end▁of▁sentence｜><｜User｜>Hi"
    )


@pytest.mark.parametrize(
    "name",
    [
        "meta-llama-Llama-3.1-8B-Instruct",
        "meta-llama-Llama-3.2-3B-Instruct",
        "meta-llama-Llama-3.3-70B-Instruct",
    ],
)
def test_llama3_greeting_is_derived_and_written_as_the_user_turn_with_tools(name: str) -> None:
    """Llama 3.x writes a greeting as a turn of its own; given tools, it takes the first
    message for the user's that holds them, whatever its role.  The declaration writes the
    greeting so in both, the role a recorded loss with tools, and says so."""
    inference, runner = _corpus_inference(name)
    said = _found(inference, LEADING)
    assert said == (
        "derived; written as an assistant turn; with tools, written as the user message that "
        "holds the tools, its role a recorded loss (the template writes the message after the "
        "system messages so whatever its role)"
    )
    assert not inference.needs, inference.describe()
    fmt = inference.format
    assert fmt is not None
    assert fmt.render(GREETING).text == runner.render(GREETING).text
    tools = [
        {
            "type": "function",
            "function": {"name": "now", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    as_user = [GREETING[0], {**GREETING[1], "role": "user"}, GREETING[2]]
    assert runner.render(GREETING, tools).text == runner.render(as_user, tools).text
    rendered = fmt.render({"messages": GREETING, "tools": tools})
    assert rendered.text == runner.render(GREETING, tools).text
    assert rendered.losses == ("messages[1].role: written as the user turn holding the tools",)


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("poolside-Laguna-XS.2", "'<assistant>\\n</think>'"),
        ("poolside-Laguna-XS-2.1", "'<assistant>\\n</think>'"),
    ],
)
def test_laguna_prompt_after_an_answer_closes_the_block_as_after_a_query(
    name: str, written: str
) -> None:
    inference, runner = _corpus_inference(name)
    assert _found(inference, PROMPTED) == (
        f"derived; the template writes {written} after an answer"
    )
    assert not inference.needs, inference.describe()
    fmt = inference.format
    assert fmt is not None
    theirs = runner.render(ANSWERED, add_generation_prompt=True).text
    assert theirs is not None and theirs.endswith("</assistant>\n<assistant>\n</think>")
    assert fmt.render(ANSWERED, add_generation_prompt=True).text == theirs


@pytest.mark.parametrize("name", ["Reka-Edge", "GigaChat3-10B-A1.8B", "unsloth-Apriel-1.5"])
def test_no_prompt_after_an_answer_in_real_templates_is_derived(name: str) -> None:
    inference, runner = _corpus_inference(name)
    assert _found(inference, PROMPTED) == (
        "derived; the template writes no generation prompt after an answer: the model goes "
        "on after the answer's end"
    )
    fmt = inference.format
    assert fmt is not None
    theirs = runner.render(ANSWERED, add_generation_prompt=True).text
    assert theirs == runner.render(ANSWERED).text
    assert fmt.render(ANSWERED, add_generation_prompt=True).text == theirs
    assert inference.layout is not None
    assert any(
        isinstance(item, NoPromptAfter) and "assistant" in item.roles
        for item in inference.layout.concepts
    )


@pytest.mark.parametrize("name", ["tencent-Hy3", "deepseek-ai-DeepSeek-V3.2"])
def test_no_prompt_after_an_answer_is_derived_where_the_reasoning_opens_every_other(
    name: str,
) -> None:
    """Hy3 and DeepSeek V3.2 write nothing after an answer, not even the reasoning's part of
    the prompt they write after a query: the declaration writes no prompt there
    (NoPromptAfter) and the prompt after a query as before."""
    inference, runner = _corpus_inference(name)
    assert _found(inference, PROMPTED) == (
        "derived; the template writes no generation prompt after an answer: the model goes "
        "on after the answer's end"
    )
    assert inference.layout is not None
    (declared,) = [item for item in inference.layout.concepts if isinstance(item, NoPromptAfter)]
    assert declared.roles == ("assistant",)
    fmt = inference.format
    assert fmt is not None
    theirs = runner.render(ANSWERED, add_generation_prompt=True).text
    assert theirs is not None and theirs == runner.render(ANSWERED).text
    assert fmt.render(ANSWERED, add_generation_prompt=True).text == theirs
    asked = ANSWERED[:1]
    prompt = runner.render(asked, add_generation_prompt=True).text
    assert prompt != runner.render(asked).text
    assert fmt.render(asked, add_generation_prompt=True).text == prompt


@pytest.mark.parametrize(
    "name", ["ibm-granite-granite-3.3-2B-Instruct", "GigaChat3-10B-A1.8B", "GigaChat3.1-10B-A1.8B"]
)
def test_a_greeting_after_a_system_text_no_prompt_follows_is_derived(name: str) -> None:
    """Granite 3.3 and GigaChat 3 write no generation prompt after a system message alone
    (their loop, which writes it, runs over the messages after it): the declaration says so
    (NoPromptAfter's system_alone), and a greeting the model writes after the system text,
    its own opener first, reads back as the template's assistant turn."""
    inference, runner = _corpus_inference(name)
    assert _found(inference, LEADING).startswith("derived; written as an assistant turn")
    assert inference.layout is not None
    (declared,) = [item for item in inference.layout.concepts if isinstance(item, NoPromptAfter)]
    assert declared.system_alone
    fmt = inference.format
    assert fmt is not None
    system = GREETING[:1]
    theirs = runner.render(system, add_generation_prompt=True).text
    assert theirs is not None and theirs == runner.render(system).text
    assert fmt.render(system, add_generation_prompt=True).text == theirs
    greeted = runner.render(GREETING[:2]).text
    assert greeted is not None and greeted.startswith(theirs)
    assert fmt.render(GREETING[:2]).text == greeted
    turn = fmt.parse(greeted[len(theirs) :], prompt=theirs).message
    assert turn["content"] == GREETING[1]["content"]
