"""A template's switches (``enable_thinking`` and the like) inferred as options of its format:
each value renders as the template does with the variable set, the exported chat template
reads the variable, and a switch that cannot be inferred is reported."""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any

import pytest

from pawlette.errors import RequestError
from pawlette.export.jinja import export_jinja
from pawlette.format import Format
from pawlette.infer import Inference, infer_template
from pawlette.infer.switches import candidates, read_variables
from pawlette.infer.template import TemplateRunner

from ..support.conversations import generate_conversations
from ..support.template_corpus import corpus_template


def renamed_qwen3() -> tuple[str, dict[str, Any]]:
    """Qwen3's template with its thinking block renamed (a fine-tune's), and its tokens."""
    template = corpus_template("Qwen-Qwen3-0.6B")
    text = template.text.replace("<think>", "<reasoning>").replace("</think>", "</reasoning>")
    return text, {"bos_token": template.bos_token, "eos_token": template.eos_token}


@functools.cache
def renamed_inference() -> Inference:
    text, tokens = renamed_qwen3()
    return infer_template(text, **tokens)


def _compared(
    fmt: Format, runner: TemplateRunner, variables: dict[str, Any], avoid: tuple[str, ...] = ()
) -> int:
    """How many renders of generated conversations ``fmt`` and the template (with
    ``variables``) both wrote; each pair must be byte for byte the same.  The conversations
    spell none of the format's markers nor ``avoid``."""
    compared = 0
    avoided = (*fmt.special_markers, *avoid)
    for conversation in generate_conversations(24, seed=5, avoid=avoided):
        for prompt in (False,) if conversation.ends_with == "assistant" else (True, False):
            try:
                ours = fmt.render(conversation.request, add_generation_prompt=prompt).text
            except RequestError:
                continue  # what the format reports as not derived
            theirs = runner.render(
                conversation.messages,
                conversation.tools,
                add_generation_prompt=prompt,
                variables=variables,
            )
            assert theirs.text == ours, f"{variables}: {conversation.describe()}"
            compared += 1
    return compared


def test_a_renamed_thinking_block_keeps_its_switch_as_an_option() -> None:
    inference = renamed_inference()
    fmt = inference.format
    assert fmt is not None
    text, tokens = renamed_qwen3()
    runner = TemplateRunner(text, tokens)
    assert fmt.options.enable_thinking is True
    off = fmt.with_options(enable_thinking=False)
    assert off.options.enable_thinking is False
    user = [{"role": "user", "content": "Hi"}]
    assert off.render(user, add_generation_prompt=True).text.endswith(
        "<|im_start|>assistant\n<reasoning>\n\n</reasoning>\n\n"
    )
    assert _compared(off, runner, {"enable_thinking": False}) >= 24
    assert _compared(fmt, runner, {}) >= 24
    assert fmt.with_options(enable_thinking=True).render(user, add_generation_prompt=True).text == (
        fmt.render(user, add_generation_prompt=True).text
    )
    (switch,) = [item for item in inference.capabilities if item.name == "switch enable_thinking"]
    assert switch.status == "derived"
    assert "with enable_thinking=false: 43/43 renders identical" in switch.detail
    assert "switch enable_thinking: derived" in inference.describe()


def test_the_exported_template_of_an_inferred_switch_reads_its_variable() -> None:
    fmt = renamed_inference().format
    assert fmt is not None
    text, tokens = renamed_qwen3()
    exported = TemplateRunner(export_jinja(fmt), tokens)
    assert "enable_thinking" in export_jinja(fmt)
    assert "enable_thinking" not in export_jinja(fmt, frozen=True)
    original = TemplateRunner(text, tokens)
    user = [{"role": "user", "content": "Hi"}]
    for variables in ({}, {"enable_thinking": False}, {"enable_thinking": True}):
        theirs = original.render(user, add_generation_prompt=True, variables=variables).text
        ours = exported.render(user, add_generation_prompt=True, variables=variables).text
        assert ours == theirs, variables
    off = fmt.with_options(enable_thinking=False)
    compared = 0
    for conversation in generate_conversations(16, seed=3, avoid=fmt.special_markers):
        try:
            ours_text = off.render(conversation.request, add_generation_prompt=True).text
        except RequestError:
            continue
        rendered = exported.render(
            conversation.messages,
            conversation.tools,
            add_generation_prompt=True,
            variables={"enable_thinking": False},
        )
        assert rendered.text == ours_text, conversation.describe()
        compared += 1
    assert compared >= 8


def test_an_inferred_switch_round_trips_through_the_source() -> None:
    inference = renamed_inference()
    namespace: dict[str, Any] = {}
    exec(compile(inference.source(), "declaration", "exec"), namespace)
    assert namespace["LAYOUT"] == inference.layout
    fmt = namespace["FORMAT"].with_options(enable_thinking=False)
    user = [{"role": "user", "content": "Hi"}]
    assert fmt.render(user, add_generation_prompt=True).text.endswith(
        "<reasoning>\n\n</reasoning>\n\n"
    )


UNSWITCHED = (
    "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content }}<|end|>{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>"
    "{%- if enable_thinking is string -%}{{ enable_thinking }}{%- endif -%}"
    "{%- endif -%}"
)
"""Reads ``enable_thinking``, and writes the same for true, false and neither."""

WORDED = (
    "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content }}<|end|>{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>"
    "{%- if thinking_style is defined -%}{{ '<style>' + thinking_style }}{%- endif -%}"
    "{%- endif -%}"
)
"""Reads ``thinking_style``, a word: the template refuses true and false."""


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("meta-llama-Llama-3.1-8B-Instruct", []),
        (UNSWITCHED, ["enable_thinking"]),
        (WORDED, ["thinking_style"]),
    ],
)
def test_a_template_without_switches_gets_no_option(name: str, read: list[str]) -> None:
    if "{" in name:
        text, tokens = name, {}
    else:
        template = corpus_template(name)
        text, tokens = template.text, {"bos_token": template.bos_token}
    assert candidates(read_variables(TemplateRunner(text))) == read
    inference = infer_template(text, **tokens)
    assert inference.format is not None
    assert inference.layout is not None and not inference.layout.switches
    assert not any(item.name.startswith("switch ") for item in inference.capabilities)
    with pytest.raises(RequestError, match="enable_thinking"):
        inference.format.with_options(enable_thinking=False)


DOUBLED = (
    "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content }}"
    "{%- if enable_thinking %} {{ m.content }}{% endif -%}<|end|>{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}"
)
"""With ``enable_thinking`` true every text is written twice: no declaration writes that."""

UNDEFINED_DEFAULT = (
    "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content }}<|end|>{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>"
    "{%- if enable_thinking is defined -%}"
    "{%- if enable_thinking -%}<think>{%- else -%}<nothink>{%- endif -%}"
    "{%- endif -%}"
    "{%- endif -%}"
)
"""Without ``enable_thinking`` the template renders neither as true nor as false does."""


def test_a_switch_whose_other_value_is_not_inferred_is_reported() -> None:
    inference = infer_template(DOUBLED)
    assert inference.format is not None
    (switch,) = [item for item in inference.capabilities if item.name.startswith("switch ")]
    assert switch.name == "switch enable_thinking"
    assert switch.status == "not derived"
    assert "with enable_thinking=true the declaration is not inferred" in switch.detail
    assert "writes 2 times" in switch.detail
    assert "switch enable_thinking: not derived" in inference.describe()
    assert inference.needs == (f"switch enable_thinking: not derived; {switch.detail}",)
    assert not inference.layout.switches  # type: ignore[union-attr]
    with pytest.raises(RequestError):
        inference.format.with_options(enable_thinking=True)


def test_a_switch_without_a_default_among_its_values_is_three_way() -> None:
    inference = infer_template(UNDEFINED_DEFAULT)
    fmt = inference.format
    assert fmt is not None and inference.layout is not None
    (switch,) = [item for item in inference.capabilities if item.name.startswith("switch ")]
    assert (switch.name, switch.status) == ("switch enable_thinking", "derived")
    assert "default unset" in switch.detail
    assert fmt.options.enable_thinking is None
    (declared,) = inference.layout.switches
    assert declared.values == (None, True, False)
    user = [{"role": "user", "content": "Hi"}]
    written = {
        value: fmt.with_options(enable_thinking=value).render(user, add_generation_prompt=True).text
        for value in (None, True, False)
    }
    assert written == {
        None: "<|user|>Hi<|end|><|assistant|>",
        True: "<|user|>Hi<|end|><|assistant|><think>",
        False: "<|user|>Hi<|end|><|assistant|><nothink>",
    }
    with pytest.raises(RequestError, match=r"'yes' \(str\); expected True, False or None$"):
        fmt.with_options(enable_thinking="yes")


THREE_WAY = ("llama-cpp-rwkv-world", "openbmb-MiniCPM5-1B")
"""Corpus templates that write nothing after the generation prompt without
``enable_thinking``, an empty think block with it false and an open one with it true."""


@pytest.mark.parametrize("name", THREE_WAY)
def test_a_three_way_switch_renders_each_value_as_the_template(name: str) -> None:
    template = corpus_template(name)
    tokens = {
        key: value
        for key, value in (("bos_token", template.bos_token), ("eos_token", template.eos_token))
        if value is not None
    }
    inference = infer_template(template.text, **tokens)
    fmt = inference.format
    assert fmt is not None and inference.layout is not None
    (switch,) = [item for item in inference.capabilities if item.name.startswith("switch ")]
    assert (switch.name, switch.status) == ("switch enable_thinking", "derived")
    assert fmt.options.enable_thinking is None
    original = TemplateRunner(template.text, tokens)
    exported_text = export_jinja(fmt)
    assert "enable_thinking" in exported_text
    exported = TemplateRunner(exported_text, tokens)
    # RWKV's template keeps only what follows a "</think>" in an assistant's text, which no
    # declaration writes: the conversations do not spell it.
    avoid = ("</think>",)
    for value in (None, True, False):
        variables = {} if value is None else {"enable_thinking": value}
        switched = fmt.with_options(enable_thinking=value)
        assert _compared(switched, original, variables, avoid) >= 24
        assert _compared(switched, exported, variables, avoid) >= 24
    namespace: dict[str, Any] = {}
    exec(compile(inference.source(), "declaration", "exec"), namespace)
    assert namespace["LAYOUT"] == inference.layout
    assert namespace["FORMAT"].with_options(enable_thinking=True).options.enable_thinking is True


def test_a_switch_the_caller_passes_is_not_derived_again() -> None:
    text, tokens = renamed_qwen3()
    inference = infer_template(text, variables={"enable_thinking": False}, **tokens)
    assert inference.format is not None
    assert not inference.layout.switches  # type: ignore[union-attr]
    user = [{"role": "user", "content": "Hi"}]
    assert inference.format.render(user, add_generation_prompt=True).text.endswith(
        "<reasoning>\n\n</reasoning>\n\n"
    )


def test_two_switches_render_every_combination_as_the_template() -> None:
    template = corpus_template("GLM-4.7-Flash")
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    inference = infer_template(template.text, **tokens)
    fmt = inference.format
    assert fmt is not None and inference.layout is not None
    names = [switch.variable for switch in inference.layout.switches]
    assert names == ["enable_thinking", "clear_thinking"]
    original = TemplateRunner(template.text, tokens)
    exported = TemplateRunner(export_jinja(fmt), tokens)
    for values in itertools.product((True, False), repeat=2):
        variables = dict(zip(names, values, strict=True))
        switched = fmt.with_options(**variables)
        assert _compared(switched, original, variables) >= 24
        assert _compared(switched, exported, variables) >= 24


def test_a_switch_whose_prompt_opens_the_block_renders_and_reads_as_the_template() -> None:
    """DeepSeek V3.1 reads ``thinking``, else ``enable_thinking``: set, the generation prompt
    opens ``<think>`` and the model's turn starts inside the block."""
    template = corpus_template("deepseek-ai-DeepSeek-V3.1")
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    inference = infer_template(template.text, **tokens)
    fmt = inference.format
    assert fmt is not None and inference.layout is not None
    (switch,) = inference.layout.switches
    assert (switch.variable, switch.fallback) == ("thinking", ("enable_thinking",))
    assert fmt.options.thinking is False
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["switch thinking"] == statuses["switch enable_thinking"] == "derived"
    original = TemplateRunner(template.text, tokens)
    for value in (True, False):
        # With thinking on, the turns after a tool result are read after the prompt that
        # precedes them (it does not open the block there): tool results are derived too.
        compared = _compared(fmt.with_options(thinking=value), original, {"thinking": value})
        assert compared >= 24
    (said,) = [item.detail for item in inference.capabilities if item.name == "switch thinking"]
    # (With thinking on, a greeting after a system text is derived too: the template writes
    # no generation prompt there, and a turn read after none starts before the reasoning
    # block the prompt opens elsewhere.)
    assert "not derived" not in said, said
    assert re.search(r"with thinking=true: .* (\d+)/\1 own turns parsed back", said)
    thinking = fmt.with_options(thinking=True)
    user = [{"role": "user", "content": "Hi"}]
    assert thinking.render(user, add_generation_prompt=True).text.endswith("<｜Assistant｜><think>")
    completion = thinking.parse("Greet back.</think>Hello!<｜end▁of▁sentence｜>").message
    assert (completion["reasoning_content"], completion["content"]) == ("Greet back.", "Hello!")
    # The exported template reads thinking, else enable_thinking, as the model's does.
    exported = TemplateRunner(export_jinja(fmt), tokens)
    for values in itertools.product((True, False, None), repeat=2):
        variables = {
            name: value
            for name, value in zip(("thinking", "enable_thinking"), values, strict=True)
            if value is not None
        }
        theirs = original.render(user, add_generation_prompt=True, variables=variables).text
        ours = exported.render(user, add_generation_prompt=True, variables=variables).text
        assert ours == theirs, variables
    namespace: dict[str, Any] = {}
    exec(compile(inference.source(), "declaration", "exec"), namespace)
    assert namespace["LAYOUT"] == inference.layout


@pytest.mark.parametrize(
    ("name", "lacking"),
    [
        ("deepseek-ai-DeepSeek-V3.2", ""),
        ("deepseek-ai-DeepSeek-V4", " (not derived with it: tool calls, tool results, tools)"),
    ],
)
def test_a_switch_that_keeps_a_block_after_the_last_query_is_derived(
    name: str, lacking: str
) -> None:
    """DeepSeek V3.2 and V4 with ``thinking``: the answers after the last user message write
    a block, ``<think>REASONING</think>``, the earlier ones ``</think>`` alone."""
    template = corpus_template(name)
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    inference = infer_template(template.text, **tokens)
    fmt = inference.format
    assert fmt is not None and inference.layout is not None
    (switch,) = inference.layout.switches
    assert (switch.variable, switch.fallback) == ("thinking", ("enable_thinking",))
    (said,) = [item.detail for item in inference.capabilities if item.name == "switch thinking"]
    assert said.endswith(lacking)
    original = TemplateRunner(template.text, tokens)
    for value in (True, False):
        compared = _compared(fmt.with_options(thinking=value), original, {"thinking": value})
        # With V4's thinking on, tools are not derived: conversations with tools are refused.
        assert compared >= (8 if value and lacking else 24)
    conversation = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "reasoning_content": "Greet."},
    ]
    written = fmt.with_options(thinking=True).render(conversation).text
    assert written.endswith("<｜Assistant｜><think>Greet.</think>Hello<｜end▁of▁sentence｜>")
