"""The template corpus: 70 templates from the pinned sdist, each with its model's bos/eos."""

from __future__ import annotations

import pytest

from .template_corpus import (
    NEWER_TEMPLATES,
    SPECIAL_TOKENS,
    TokenFacts,
    corpus,
    corpus_template,
    newer_texts,
    template_names,
    unknown_tokens,
)


def test_the_corpus_is_the_seventy_templates_of_the_sdist() -> None:
    names = template_names()
    assert len(names) == 70
    assert "README" not in names and "README.md" not in names
    assert {"Qwen-Qwen3-0.6B", "meta-llama-Llama-3.1-8B-Instruct", "openai-gpt-oss-120b"} <= set(
        names
    )
    for template in corpus():
        assert "{{" in template.text or "{%" in template.text, template.name


def test_the_newer_templates_come_from_the_xllamacpp_sdist() -> None:
    for name in NEWER_TEMPLATES:
        assert name not in template_names(), name  # the pinned corpus lacks them
        assert name in newer_texts(), name
        assert corpus_template(name).text == newer_texts()[name]
    harmony = corpus_template("llm-jp-llm-jp-4.1-8b-thinking")
    assert harmony.text.startswith("{#- chat_format=llm-jp-harmony-v1 -#}")
    assert corpus_template("google-translategemma-4b-it").bos_token == "<bos>"
    # A name of both corpora is the pinned one's (the tests keep their reference).
    assert corpus_template("openai-gpt-oss-120b").text == _pinned("openai-gpt-oss-120b")


def _pinned(name: str) -> str:
    from .template_corpus import _texts

    return _texts()[name]


def test_a_template_is_read_by_its_file_stem() -> None:
    qwen3 = corpus_template("Qwen-Qwen3-0.6B")
    assert qwen3.text.startswith("{%- if tools %}")
    assert (qwen3.bos_token, qwen3.eos_token) == (None, "<|im_end|>")  # Qwen declares no bos
    with pytest.raises(KeyError, match=r"Qwen-Qwen3-0\.6B"):
        corpus_template("Qwen3-0.6B")


def test_every_template_has_a_row_and_the_unknown_ones_are_named() -> None:
    assert set(SPECIAL_TOKENS) == set(template_names()) | set(NEWER_TEMPLATES)
    # The models whose tokenizer_config.json the catalog could not find: their bos/eos are
    # not passed to their templates until someone finds them.
    assert sorted(unknown_tokens()) == [
        "GigaChat3-10B-A1.8B",
        "GigaChat3.1-10B-A1.8B",
        "Kimi-K3",
        "NVIDIA-Nemotron-Nano-v2",
        "Reka-Edge",
        "Spark2.5",
        "StepFun3.5-Flash",
        "inclusionai-ling-3.0-flash",
        "muse-glimmer",
        "openbmb-MiniCPM5-1B",
        "poolside-Laguna-S-2.1",
        "poolside-Laguna-XS-2.1",
        "poolside-Laguna-XS.2",
        "upstage-Solar-Open-100B",
    ]
    for name, facts in SPECIAL_TOKENS.items():
        assert facts.source, name
        if facts.unknown:
            assert (facts.bos_token, facts.eos_token) == (None, None), name
            assert facts.source.startswith("unknown"), name
        else:
            assert facts.eos_token, name  # every known tokenizer declares an end token


def test_the_template_variables_leave_out_a_token_the_tokenizer_lacks() -> None:
    assert TokenFacts("<s>", "</s>", "x").variables() == {"bos_token": "<s>", "eos_token": "</s>"}
    assert TokenFacts(None, "<|im_end|>", "x").variables() == {"eos_token": "<|im_end|>"}
    assert corpus_template("meta-llama-Llama-3.1-8B-Instruct").tokens.variables() == {
        "bos_token": "<|begin_of_text|>",
        "eos_token": "<|eot_id|>",
    }


def test_firefunction_v2_renders_with_the_variables_llama_cpp_passes() -> None:
    from .template_compare import corpus_reference

    tool = {"type": "function", "function": {"name": "f", "description": "ü"}}
    messages = [{"role": "user", "content": "Hi"}]
    name = "fireworks-ai-llama-3-firefunction-v2"
    bare = corpus_reference(name, caller_variables=None).render(
        messages, [tool], add_generation_prompt=True
    )
    assert bare.text is None and "'functions' is undefined" in (bare.refusal or "")
    reference = corpus_reference(name)
    text = reference.render(messages, [tool], add_generation_prompt=True).text
    assert text is not None
    spec = '[\n  {\n    "type": "function",\n    "function": {\n      "name": "f",'
    assert f"Available functions as JSON spec:\n{spec}" in text
    assert text.count("Today is Jul 26 2024 00:00:00 GMT.") == 1
    plain = reference.render(messages, add_generation_prompt=True).text
    assert plain is not None and "JSON spec:\n\nToday is" in plain
