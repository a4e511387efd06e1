"""chatglm3's token ids against ``build_chat_input`` (re-stated in test_chatglm3.py) on
generated conversations, beyond the four fixed ones there: empty and whitespace-only texts,
leading and trailing whitespace and newlines (where SentencePiece's dummy prefix and each
separate ``encode`` call matter most), Chinese and emoji, names as metadata, marker
spellings as text (``sop``, ``[gMASK]``, ``<|user|>``: ChatGLM3 encodes them as text), tools."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette

from ..support.chatglm3_spm import hf_tokenizer
from .test_chatglm3 import GLM, WEATHER_FUNCTION, _reference_ids

TEXTS = st.sampled_from(
    ["Hi", "", " ", "  lead", "trail  ", "\n", "\nx", "x\n", "a\n\nb", "中文 😀", "tab\t",
     "sop", "[gMASK]", "<|user|>", "<|observation|>", "1234 5678", "\t\n "]
)  # fmt: skip
NAMES = st.one_of(st.none(), st.sampled_from(["Alice", "中", "a b"]))


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[Any], list[Any] | None, list[Any], str]:
    """(OpenAI messages, tools, ChatGLM3 history, query): one conversation twice."""
    messages: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    with_tools = draw(st.booleans())
    system = draw(st.one_of(st.none(), TEXTS))
    if system is not None:
        messages.append({"role": "system", "content": system})
    if system is not None or with_tools:
        item: dict[str, Any] = {"role": "system", "content": system or ""}
        if with_tools:
            item["tools"] = [WEATHER_FUNCTION]
        history.append(item)
    for _ in range(draw(st.integers(0, 2))):
        question, name, answer = draw(TEXTS), draw(NAMES), draw(TEXTS)
        messages.append({"role": "user", "content": question, **({"name": name} if name else {})})
        history.append(
            {"role": "user", "content": question, **({"metadata": name} if name else {})}
        )
        messages.append({"role": "assistant", "content": answer})
        history.append({"role": "assistant", "content": answer})
    query = draw(TEXTS)
    messages.append({"role": "user", "content": query})
    tools = [{"type": "function", "function": WEATHER_FUNCTION}] if with_tools else None
    return messages, tools, history, query


@settings(max_examples=40, deadline=None)
@given(conversation=conversations())
def test_generated_prompts_are_build_chat_inputs(
    conversation: tuple[list[Any], list[Any] | None, list[Any], str],
) -> None:
    messages, tools, history, query = conversation
    result = pawlette.tokenize(GLM, hf_tokenizer(), messages, tools, add_generation_prompt=True)
    assert list(result.input_ids) == _reference_ids(history, query)
