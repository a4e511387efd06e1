"""llama.cpp's corpus of real chat templates, as the pinned llama-cpp-python sdist ships it.

``vendor/llama.cpp/models/templates/`` in the sdist (see :mod:`.llama_cpp_build`) holds one
Jinja chat template per model, copied from the model's Hugging Face repository.  Each is named
here by its file stem (``Qwen-Qwen3-0.6B``); ``README.md`` is not a template.

The templates are read from the sdist in one pass at first use and kept beside it in the test
cache as one JSON file, so later processes read them without opening the 77 MB archive.

A few templates the pinned sdist lacks come from a newer llama.cpp, as the xllamacpp sdist
vendors it (:data:`NEWER_TEMPLATES`, read from ``thirdparty/llama.cpp/models/templates/``
and cached the same way): :func:`corpus_template` finds them by name too, and
:func:`template_names` (the pinned corpus the matrix measures) leaves them out.

:data:`SPECIAL_TOKENS` gives, per template, the ``bos_token`` and ``eos_token`` the model's
``tokenizer_config.json`` declares (what ``apply_chat_template`` passes to the template), each
with the source it was copied from; ``None`` where it is not known, and
:func:`unknown_tokens` lists those.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .llama3 import cache_directory
from .llama_cpp_build import (
    LLAMA_CPP_PYTHON_VERSION,
    XLLAMACPP_VERSION,
    sdist_texts,
    xllamacpp_texts,
)

__all__ = [
    "NEWER_TEMPLATES",
    "SPECIAL_TOKENS",
    "CorpusTemplate",
    "TokenFacts",
    "corpus",
    "corpus_template",
    "newer_texts",
    "template_names",
    "unknown_tokens",
]

_FOLDER = "models/templates/"
_SUFFIX = ".jinja"


@dataclass(frozen=True)
class TokenFacts:
    """A model's ``bos_token`` and ``eos_token`` as its ``tokenizer_config.json`` gives them.

    ``None`` with the name in ``unknown``: not known here.  ``None`` otherwise: the tokenizer
    declares none (``"bos_token": null``, as Qwen's do), so the template gets no such variable,
    as under ``apply_chat_template``.  ``source`` says where the values were copied from."""

    bos_token: str | None
    eos_token: str | None
    source: str
    unknown: tuple[str, ...] = ()

    def variables(self) -> dict[str, str]:
        """The template variables ``apply_chat_template`` passes for them."""
        found = {"bos_token": self.bos_token, "eos_token": self.eos_token}
        return {name: value for name, value in found.items() if value is not None}


_NOT_IN_TABLE = TokenFacts(None, None, "not in the table", ("bos_token", "eos_token"))

CallerVariables = Callable[[Sequence[Mapping[str, Any]] | None, datetime.date], dict[str, Any]]
"""Template variables a template's callers pass besides the messages and ``tools``, from the
request's tools and the day (see :data:`CALLER_VARIABLES`)."""


def _firefunction_variables(
    tools: Sequence[Mapping[str, Any]] | None, today: datetime.date
) -> dict[str, Any]:
    # llama.cpp's common/chat.cpp (common_chat_params_init_firefunction_v2) renders this
    # template with tools=null and two extra variables: "functions", the request's OpenAI tools
    # as JSON indented by 2 ("" without tools), and "datetime", the time formatted
    # "%b %d %Y %H:%M:%S GMT".  The template reads no other tools variable.
    moment = datetime.datetime.combine(today, datetime.time())
    return {
        "functions": json.dumps(list(tools), indent=2, ensure_ascii=False) if tools else "",
        "datetime": moment.strftime("%b %d %Y %H:%M:%S GMT"),
    }


def _command_r_plus_variables(
    tools: Sequence[Mapping[str, Any]] | None, today: datetime.date
) -> dict[str, Any]:
    # The template iterates ``tools`` and fails on None: its callers, Cohere's tokenizer's
    # apply_tool_use_template (the "tool_use" template is only for requests with tools),
    # always pass a list; without tools an empty one.
    del today
    return {"tools": [dict(tool) for tool in tools or ()]}


CALLER_VARIABLES: dict[str, CallerVariables] = {
    "fireworks-ai-llama-3-firefunction-v2": _firefunction_variables,
    "CohereForAI-c4ai-command-r-plus-tool_use": _command_r_plus_variables,
}
"""The templates that cannot render from ``messages`` and ``tools`` alone: the variables their
callers pass (each with its source), by template name."""


def _translation_messages(
    messages: list[dict[str, Any]], variables: Mapping[str, Any]
) -> list[dict[str, Any]]:
    # TranslateGemma's template refuses a user message unless its content is one part with
    # the languages' codes (its refusal names the shape: type, source_lang_code,
    # target_lang_code, text); its callers pass each user text so, here with the languages
    # the test names as variables (none named: English to German, gemma:translate's default).
    source = variables.get("source_lang_code", "en")
    target = variables.get("target_lang_code", "de")
    shaped = []
    for message in messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            part = {
                "type": "text",
                "source_lang_code": source,
                "target_lang_code": target,
                "text": message["content"],
            }
            message = {**message, "content": [part]}
        shaped.append(message)
    return shaped


_THINKING_FIELDS = ("think", "think_fast", "think_faster", "reasoning_content", "reasoning")


def _thinking_messages(
    messages: list[dict[str, Any]], variables: Mapping[str, Any]
) -> list[dict[str, Any]]:
    # IFM-K2-Horizon's template refuses an assistant message without a thinking field
    # ("Assistant message is missing a thinking field. Provide one of: think, reasoning,
    # reasoning_content, think_fast, think_faster."); its callers give a message without
    # reasoning the empty text, which the template writes as its empty block.
    del variables
    return [
        {**message, "reasoning_content": ""}
        if message.get("role") == "assistant"
        and not any(field in message for field in _THINKING_FIELDS)
        else message
        for message in messages
    ]


CallerMessages = Callable[[list[dict[str, Any]], Mapping[str, Any]], list[dict[str, Any]]]
"""Messages as a template's callers shape them, from the Hugging Face messages and the
reference's variables (see :data:`CALLER_MESSAGES`)."""

CALLER_MESSAGES: dict[str, CallerMessages] = {
    "google-translategemma-4b-it": _translation_messages,
    "IFM-K2-Horizon": _thinking_messages,
}
"""The templates that refuse messages as pawlette gives them (text alone, no thinking field):
how their callers shape them."""

TEXT_ARGUMENTS = frozenset({"meetkai-functionary-medium-v3.2"})
"""The templates that join each call's arguments to their text as a string (``'\\n' +
tool_call['function']['arguments']``), so their callers pass the arguments as the caller's
JSON text: llama.cpp's minja tells such templates apart (``requires_object_arguments`` is
false for them) and passes the OpenAI string; given objects, as Hugging Face callers give
them, the template fails ("can only concatenate str")."""


@dataclass(frozen=True)
class CorpusTemplate:
    """One template of the corpus: its ``name`` (file stem), Jinja ``text`` and the special
    tokens the model's tokenizer declares (``None``: not known, see ``tokens.source``)."""

    name: str
    text: str
    tokens: TokenFacts

    @property
    def bos_token(self) -> str | None:
        return self.tokens.bos_token

    @property
    def eos_token(self) -> str | None:
        return self.tokens.eos_token

    @property
    def caller_variables(self) -> CallerVariables | None:
        """What the template's callers pass besides messages and tools (None: nothing)."""
        return CALLER_VARIABLES.get(self.name)

    @property
    def caller_messages(self) -> CallerMessages | None:
        """How the template's callers shape the messages (None: as they are)."""
        return CALLER_MESSAGES.get(self.name)

    @property
    def text_arguments(self) -> bool:
        """Whether the template's callers pass call arguments as text (see
        :data:`TEXT_ARGUMENTS`)."""
        return self.name in TEXT_ARGUMENTS


NEWER_TEMPLATES = (
    "IFM-K2-Horizon",
    "google-translategemma-4b-it",
    "llm-jp-llm-jp-4.1-8b-thinking",
)
"""The templates of the newer llama.cpp (xllamacpp's sdist) that the pinned corpus lacks and
the tests read."""


def _cache_file(version: str) -> str:
    return os.fspath(cache_directory() / "llama_cpp_jinja" / f"templates-{version}.json")


def _read_templates(version: str, read: Callable[[str], dict[str, str]]) -> dict[str, str]:
    """The templates of one sdist (``read``: its files under a folder), cached as JSON."""
    path = _cache_file(version)
    try:
        with open(path, encoding="utf-8") as file:
            cached = json.load(file)
        if isinstance(cached, dict) and cached:
            return {str(name): str(text) for name, text in cached.items()}
    except (OSError, ValueError):
        pass  # not cached yet (or damaged): read the sdist again
    texts = {
        name[: -len(_SUFFIX)]: text
        for name, text in read(_FOLDER).items()
        if name.endswith(_SUFFIX) and "/" not in name
    }
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=directory, delete=False, encoding="utf-8") as file:
        json.dump(texts, file, ensure_ascii=False, sort_keys=True)
    os.chmod(file.name, 0o644)  # a cache is as readable as the download it came from
    os.replace(file.name, path)
    return texts


@functools.cache
def _texts() -> dict[str, str]:
    return _read_templates(LLAMA_CPP_PYTHON_VERSION, sdist_texts)


@functools.cache
def newer_texts() -> dict[str, str]:
    """Every template of the newer llama.cpp (xllamacpp's sdist), by file stem."""
    return _read_templates(f"xllamacpp-{XLLAMACPP_VERSION}", xllamacpp_texts)


def template_names() -> tuple[str, ...]:
    """Every template's file stem, sorted."""
    return tuple(sorted(_texts()))


def corpus_template(name: str) -> CorpusTemplate:
    """The template named ``name`` (a file stem of :func:`template_names`)."""
    texts = _texts()
    if name in NEWER_TEMPLATES:
        texts = newer_texts()
    if name not in texts:
        close = [known for known in texts if name.lower() in known.lower()]
        raise KeyError(
            f"{name!r}: no such template in the corpus; expected one of"
            f" {close or 'template_names()'}"
        )
    return CorpusTemplate(name, texts[name], SPECIAL_TOKENS.get(name, _NOT_IN_TABLE))


def corpus() -> tuple[CorpusTemplate, ...]:
    """Every template of the corpus, in name order."""
    return tuple(corpus_template(name) for name in template_names())


def unknown_tokens() -> dict[str, TokenFacts]:
    """The templates whose ``bos_token`` or ``eos_token`` is not known, with what is said."""
    return {
        name: facts
        for name in template_names()
        if (facts := SPECIAL_TOKENS.get(name, _NOT_IN_TABLE)).unknown
    }


# ------------------------------------------------------------------ the special tokens

# Copied from the research catalog (research/catalog/bos_eos.json), which says per model where
# the values come from; that is kept as each row's source.  A row whose source begins
# "unknown" has both tokens unknown (None), its catalog guess, if any, in the source.
SPECIAL_TOKENS: dict[str, TokenFacts] = {
    "Apertus-8B-Instruct": TokenFacts(
        "<s>",
        "<|assistant_end|>",
        (
            "swiss-ai/Apertus-8B-Instruct-2509; eos uncertain: may be `</s>`: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "Apriel-1.6-15b-Thinker-fixed": TokenFacts(
        "<s>",
        "</s>",
        (
            "ServiceNow-AI/Apriel-1.6-15b-Thinker (Mistral-derived tokenizer): "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "Bielik-11B-v3.0-Instruct": TokenFacts(
        "<s>",
        "<|im_end|>",
        (
            "speakleash/Bielik-11B-v3.0-Instruct; Bielik 7B v0.1 special_tokens_map has "
            "`<s>`/`</s>` (found), v2/v3 instruct set eos to `<|im_end|>` — eos uncertain: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "ByteDance-Seed-OSS": TokenFacts(
        "<seed:bos>",
        "<seed:eos>",
        (
            "the template overrides it with its own `set` (`<seed:bos>`, `<seed:eos>`); the"
            " passed value is never written"
        ),
    ),
    "Cohere2MoE": TokenFacts(
        "<BOS_TOKEN>",
        "<|END_OF_TURN_TOKEN|>",
        (
            "Cohere command-a family tokenizer: tokenizer_config.json, recalled (not "
            "checked against the file)"
        ),
    ),
    "CohereForAI-c4ai-command-r-plus-tool_use": TokenFacts(
        "<BOS_TOKEN>",
        "<|END_OF_TURN_TOKEN|>",
        (
            "CohereForAI/c4ai-command-r-plus: tokenizer_config.json, recalled (not checked "
            "against the file)"
        ),
    ),
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": TokenFacts(
        "<BOS_TOKEN>",
        "<|END_OF_TURN_TOKEN|>",
        (
            "CohereForAI/c4ai-command-r7b-12-2024: tokenizer_config.json, recalled (not "
            "checked against the file)"
        ),
    ),
    "GLM-4.6": TokenFacts(
        None,
        "<|endoftext|>",
        (
            "zai-org/GLM-4.6: no bos_token; the template writes `[gMASK]<sop>` itself: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "GLM-4.7-Flash": TokenFacts(
        None,
        "<|endoftext|>",
        (
            "zai-org/GLM-4.7-Flash: no bos_token; the template writes `[gMASK]<sop>` "
            "itself: tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "GigaChat3-10B-A1.8B": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for ai-sage/GigaChat3-10B-A1.8B "
            "tokenizer_config.json with no hit; the catalog's guess: '<s>'/'</s>'"
        ),
        ("bos_token", "eos_token"),
    ),
    "GigaChat3.1-10B-A1.8B": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for ai-sage/GigaChat3.1-10B-A1.8B "
            "tokenizer_config.json with no hit; the catalog's guess: '<s>'/'</s>'"
        ),
        ("bos_token", "eos_token"),
    ),
    "HuggingFaceTB-SmolLM3-3B": TokenFacts(
        None,
        "<|im_end|>",
        (
            "HuggingFaceTB/SmolLM3-3B; bos unused by the template: tokenizer_config.json, "
            "recalled (not checked against the file)"
        ),
    ),
    "IFM-K2-Horizon": TokenFacts(
        None,
        None,
        (
            "unknown: searched docs/pages corpora for IFM/K2-Horizon tokenizer_config.json with"
            " no hit; the template writes `bos_token` first and ends turns with"
            " `<|ifm|im_end|>` itself"
        ),
        ("bos_token", "eos_token"),
    ),
    "Kimi-K2-Instruct": TokenFacts(
        "[BOS]",
        "[EOS]",
        (
            "moonshotai/Kimi-K2-Instruct; the template never reads either (turn end is "
            "`<|im_end|>`): tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "Kimi-K2-Thinking": TokenFacts(
        "[BOS]",
        "[EOS]",
        (
            "moonshotai/Kimi-K2-Thinking; never read by the template: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "Kimi-K3": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for Kimi-K3 tokenizer_config.json "
            "with no hit; the catalog's guess: '[BOS]'/'[EOS]'"
        ),
        ("bos_token", "eos_token"),
    ),
    "LFM2-8B-A1B": TokenFacts(
        "<|startoftext|>",
        "<|im_end|>",
        (
            "verified: LFM2 family special_tokens_map "
            "(huggingface.co/florianvoss/LFM2-2.6B-compiled devkit/special_tokens_map.json,"
            " a copy of LiquidAI/LFM2-2.6B)"
        ),
    ),
    "LFM2.5-8B-A1B": TokenFacts(
        "<|startoftext|>",
        "<|im_end|>",
        "verified: same LFM2 tokenizer family as above (LFM2.5 reuses it: recalled)",
    ),
    "LFM2.5-Instruct": TokenFacts(
        "<|startoftext|>",
        "<|im_end|>",
        "verified: same LFM2 tokenizer family as above (LFM2.5 reuses it: recalled)",
    ),
    "MiMo-VL": TokenFacts(
        None,
        "<|im_end|>",
        (
            "XiaomiMiMo/MiMo-VL-7B (Qwen2.5-VL tokenizer); never read by the template: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "MiniMax-M1": TokenFacts(
        "<beginning_of_sentence>",
        "<end_of_sentence>",
        (
            "MiniMaxAI/MiniMax-M1-80k; never read by the template: tokenizer_config.json, "
            "recalled (not checked against the file)"
        ),
    ),
    "MiniMax-M2": TokenFacts(
        "]~!b[",
        "[e~[",
        (
            "MiniMaxAI/MiniMax-M2; never read by the template, which writes `]~!b[` and "
            "`[e~[` literally: tokenizer_config.json, recalled (not checked against the "
            "file)"
        ),
    ),
    "MiniMax-M3": TokenFacts(
        "]~b]",
        "[e~[",
        (
            "the template overrides it with its own `set` (`]~b]`, `[e~[`, plus `]~!b[` as "
            "document start); the passed value is never written"
        ),
    ),
    "Mistral-Small-3.2-24B-Instruct-2506": TokenFacts(
        "<s>",
        "</s>",
        (
            "mistralai/Mistral-Small-3.2-24B-Instruct-2506: tokenizer_config.json, recalled"
            " (not checked against the file)"
        ),
    ),
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": TokenFacts(
        "<s>",
        "<|im_end|>",
        (
            "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16; never read by the template: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "NVIDIA-Nemotron-Nano-v2": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for "
            "nvidia/NVIDIA-Nemotron-Nano-9B-v2 tokenizer_config.json with no hit; the "
            "catalog's guess: '<SPECIAL_10>'/'<SPECIAL_11>'"
        ),
        ("bos_token", "eos_token"),
    ),
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use": TokenFacts(
        "<|begin_of_text|>",
        "<|im_end|>",
        (
            "NousResearch/Hermes-2-Pro-Llama-3-8B: tokenizer_config.json, recalled (not "
            "checked against the file)"
        ),
    ),
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use": TokenFacts(
        "<|begin_of_text|>",
        "<|im_end|>",
        (
            "NousResearch/Hermes-3-Llama-3.1-8B: tokenizer_config.json, recalled (not "
            "checked against the file)"
        ),
    ),
    "Qwen-QwQ-32B": TokenFacts(
        None,
        "<|im_end|>",
        (
            "Qwen/QwQ-32B; never read by the template: tokenizer_config.json, recalled (not"
            " checked against the file)"
        ),
    ),
    "Qwen-Qwen2.5-7B-Instruct": TokenFacts(
        None,
        "<|im_end|>",
        (
            "Qwen/Qwen2.5-7B-Instruct; never read by the template: tokenizer_config.json, "
            "recalled (not checked against the file)"
        ),
    ),
    "Qwen-Qwen3-0.6B": TokenFacts(
        None,
        "<|im_end|>",
        (
            "Qwen/Qwen3-0.6B; never read by the template: tokenizer_config.json, recalled "
            "(not checked against the file)"
        ),
    ),
    "Qwen3-Coder": TokenFacts(
        None,
        "<|im_end|>",
        (
            "Qwen/Qwen3-Coder-30B-A3B-Instruct; never read by the template: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "Qwen3.5-4B": TokenFacts(
        None,
        "<|im_end|>",
        (
            "Qwen/Qwen3.5-4B (assumed as Qwen3); never read by the template: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "Reka-Edge": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for RekaAI Reka-Edge "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
    "Spark2.5": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for XHToken/Spark-X2.5 "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
    "StepFun3.5-Flash": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for stepfun-ai/Step-3.5-Flash "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B": TokenFacts(
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        (
            "deepseek-ai/DeepSeek-R1-Distill-Llama-8B: tokenizer_config.json, recalled (not"
            " checked against the file)"
        ),
    ),
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B": TokenFacts(
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        (
            "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B: tokenizer_config.json, recalled (not"
            " checked against the file)"
        ),
    ),
    "deepseek-ai-DeepSeek-V3.1": TokenFacts(
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        (
            "deepseek-ai/DeepSeek-V3.1: tokenizer_config.json, recalled (not checked "
            "against the file)"
        ),
    ),
    "deepseek-ai-DeepSeek-V3.2": TokenFacts(
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        (
            "deepseek-ai/DeepSeek-V3.2 (same DeepSeek-V3 tokenizer): tokenizer_config.json,"
            " recalled (not checked against the file)"
        ),
    ),
    "deepseek-ai-DeepSeek-V4-Flash-0731": TokenFacts(
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        (
            "inferred, not checked: no DeepSeek-V4 tokenizer_config.json found in the "
            "code/docs/pages corpora; the template spells the DeepSeek-V3 tokenizer's "
            "<｜User｜>, <｜Assistant｜> and <｜end▁of▁sentence｜>, so that tokenizer's bos/eos"
        ),
    ),
    "deepseek-ai-DeepSeek-V4": TokenFacts(
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        (
            "inferred, not checked: no DeepSeek-V4 tokenizer_config.json found in the "
            "code/docs/pages corpora; the template spells the DeepSeek-V3 tokenizer's "
            "<｜User｜>, <｜Assistant｜> and <｜end▁of▁sentence｜>, so that tokenizer's bos/eos"
        ),
    ),
    "fireworks-ai-llama-3-firefunction-v2": TokenFacts(
        "<|begin_of_text|>",
        "<|eot_id|>",
        (
            "fireworks-ai/llama-3-firefunction-v2 (Llama 3 tokenizer): "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "google-gemma-2-2b-it": TokenFacts(
        "<bos>",
        "<eos>",
        ("google/gemma-2-2b-it: tokenizer_config.json, recalled (not checked against the file)"),
    ),
    "google-gemma-4-31B-it-interleaved": TokenFacts(
        "<bos>",
        "<eos>",
        (
            "google/gemma-4-31B-it — assumed like Gemma 2/3; eos may instead be the "
            "turn-end token: tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "google-gemma-4-31B-it": TokenFacts(
        "<bos>",
        "<eos>",
        (
            "google/gemma-4-31B-it — assumed like Gemma 2/3; eos may instead be the "
            "turn-end token: tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "google-translategemma-4b-it": TokenFacts(
        "<bos>",
        "<eos>",
        (
            "google/translategemma-4b-it, a Gemma 3 4B fine-tune with Gemma 3's tokenizer:"
            " tokenizer_config.json, recalled (not checked against the file); found:"
            " Menterium/translategemma-4b-it-onnx-int4-cpu's model card says the stock"
            " config stops only on `<eos>` (id 1) and the prompt must begin with `<bos>`"
        ),
    ),
    "ibm-granite-granite-3.3-2B-Instruct": TokenFacts(
        "<|end_of_text|>",
        "<|end_of_text|>",
        (
            "ibm-granite/granite-3.3-2b-instruct; never read by the template: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "ibm-granite-granite-4.0": TokenFacts(
        "<|end_of_text|>",
        "<|end_of_text|>",
        (
            "ibm-granite/granite-4.0-h-small; never read by the template: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "ibm-granite-granite-4.1": TokenFacts(
        "<|end_of_text|>",
        "<|end_of_text|>",
        (
            "assumed as granite-4.0; never read by the template: tokenizer_config.json, "
            "recalled (not checked against the file)"
        ),
    ),
    "inclusionai-ling-3.0-flash": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for inclusionAI Ling 3.0 flash "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
    "llama-cpp-deepseek-r1": TokenFacts(
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        ("llama.cpp's own DeepSeek-R1 template; tokens of the DeepSeek-R1 tokenizer (recalled)"),
    ),
    "llama-cpp-rwkv-world": TokenFacts(
        "<s>",
        "<s>",
        (
            "llama.cpp's own RWKV world template; the tokens of the GGUF llama.cpp's converter "
            "writes with it: vendor/llama.cpp/conversion/base.py _set_vocab_rwkv_world (the "
            "pinned sdist) makes token 0 '<s>' (CONTROL) and sets it as bos and eos (the "
            "model's tokenizer_config.json is not read here)"
        ),
    ),
    "llm-jp-llm-jp-4.1-8b-thinking": TokenFacts(
        None,
        None,
        (
            "unknown: searched docs/pages corpora for llm-jp/llm-jp-4.1-8b-thinking"
            " tokenizer_config.json with no hit; never read by the template, which writes"
            " harmony's `<|start|>`, `<|end|>`, `<|return|>` and `<|call|>` itself"
        ),
        ("bos_token", "eos_token"),
    ),
    "meetkai-functionary-medium-v3.1": TokenFacts(
        "<|begin_of_text|>",
        "<|eot_id|>",
        (
            "meetkai/functionary-medium-v3.1 (Llama 3.1 tokenizer): tokenizer_config.json, "
            "recalled (not checked against the file)"
        ),
    ),
    "meetkai-functionary-medium-v3.2": TokenFacts(
        "<|begin_of_text|>",
        "<|eot_id|>",
        (
            "meetkai/functionary-medium-v3.2 (Llama 3 tokenizer): tokenizer_config.json, "
            "recalled (not checked against the file)"
        ),
    ),
    "meta-llama-Llama-3.1-8B-Instruct": TokenFacts(
        "<|begin_of_text|>",
        "<|eot_id|>",
        (
            "meta-llama/Llama-3.1-8B-Instruct: tokenizer_config.json, recalled (not checked"
            " against the file)"
        ),
    ),
    "meta-llama-Llama-3.2-3B-Instruct": TokenFacts(
        "<|begin_of_text|>",
        "<|eot_id|>",
        (
            "meta-llama/Llama-3.2-3B-Instruct: tokenizer_config.json, recalled (not checked"
            " against the file)"
        ),
    ),
    "meta-llama-Llama-3.3-70B-Instruct": TokenFacts(
        "<|begin_of_text|>",
        "<|eot_id|>",
        (
            "meta-llama/Llama-3.3-70B-Instruct: tokenizer_config.json, recalled (not "
            "checked against the file)"
        ),
    ),
    "microsoft-Phi-3.5-mini-instruct": TokenFacts(
        "<s>",
        "<|endoftext|>",
        (
            "microsoft/Phi-3.5-mini-instruct: tokenizer_config.json, recalled (not checked "
            "against the file)"
        ),
    ),
    "mistralai-Ministral-3-14B-Reasoning-2512": TokenFacts(
        "<s>",
        "</s>",
        (
            "mistralai/Ministral-3-14B-Reasoning-2512: tokenizer_config.json, recalled (not"
            " checked against the file)"
        ),
    ),
    "mistralai-Mistral-Nemo-Instruct-2407": TokenFacts(
        "<s>",
        "</s>",
        (
            "mistralai/Mistral-Nemo-Instruct-2407: tokenizer_config.json, recalled (not "
            "checked against the file)"
        ),
    ),
    "moonshotai-Kimi-K2": TokenFacts(
        "[BOS]",
        "[EOS]",
        (
            "moonshotai/Kimi-K2-Instruct; never read by the template: "
            "tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "muse-glimmer": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for muse-glimmer "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
    "openai-gpt-oss-120b": TokenFacts(
        "<|startoftext|>",
        "<|return|>",
        (
            "openai/gpt-oss-120b; never read by the template: tokenizer_config.json, "
            "recalled (not checked against the file)"
        ),
    ),
    "openbmb-MiniCPM5-1B": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for openbmb/MiniCPM5-1B "
            "tokenizer_config.json with no hit; PyPI's minicpm-o5-sdk 0.0.6 ships MiniCPM-o "
            "5's tokenizers, not this model's; the catalog's guess: '<s>'/'<|im_end|>'"
        ),
        ("bos_token", "eos_token"),
    ),
    "poolside-Laguna-S-2.1": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for poolside Laguna "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
    "poolside-Laguna-XS-2.1": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for poolside Laguna "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
    "poolside-Laguna-XS.2": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for poolside Laguna "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
    "tencent-Hy3": TokenFacts(
        "<｜hy_begin_of_sentence｜>",
        "<｜hy_eos｜>",
        (
            "the template overrides it with its own `set` (built with a `HYTK` suffix "
            "variable; see the template file); the passed value is never written"
        ),
    ),
    "unsloth-Apriel-1.5": TokenFacts(
        "<s>",
        "</s>",
        (
            "unsloth/Apriel-1.5-15b-Thinker (ServiceNow Apriel, Pixtral/Mistral tokenizer):"
            " tokenizer_config.json, recalled (not checked against the file)"
        ),
    ),
    "unsloth-mistral-Devstral-Small-2507": TokenFacts(
        "<s>",
        "</s>",
        (
            "unsloth/Devstral-Small-2507: tokenizer_config.json, recalled (not checked "
            "against the file)"
        ),
    ),
    "upstage-Solar-Open-100B": TokenFacts(
        None,
        None,
        (
            "unknown: searched code/docs/pages corpora for upstage/Solar-Open-100B "
            "tokenizer_config.json with no hit"
        ),
        ("bos_token", "eos_token"),
    ),
}
