"""Harmony's forced tool choice through ``pawlette serve`` without ``--tokenizer``, on a real
llama.cpp (the ``xllamacpp`` wheel): a finding of an outside audit.

llama.cpp gives ``<|channel|>``, ``<|message|>``, ``<|start|>`` and ``<|constrain|>`` the
user-defined attribute in every vocabulary (its "quick hack for gpt-oss", so they are always
rendered), so its llguidance knows no special token of those names.  A Lark grammar naming
them as special tokens fails there (``llg error: unknown special token: "<|channel|>"`` in the
engine's log) and llama.cpp samples with no grammar at all, answering 200.  The server's Lark
for llama.cpp writes those four as text when it has no ids for them, which llguidance matches
against the tokens' text: the forced call is made."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from pawlette.serve.config import ServeConfig

from ..support.gguf_model import format_model
from ..support.gguf_server import EngineProcess
from .conftest import LiveServer
from .scenarios import PROMPT, TOOLS


@pytest.fixture(scope="module")
def harmony_engine() -> Iterator[EngineProcess]:
    engine = EngineProcess(format_model("harmony").path, 1)
    yield engine
    engine.kill()


def test_harmony_required_without_tokenizer(harmony_engine: EngineProcess) -> None:
    server = LiveServer(
        ServeConfig(format="harmony", upstream=harmony_engine.url, engine="llamacpp", model="m")
    )
    try:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=300)
        answer = client.chat.completions.create(
            model="m",
            messages=PROMPT,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice="required",
            max_tokens=64,
            temperature=1.0,
            seed=1,
        )
        client.close()
    finally:
        server.stop()
    choice = answer.choices[0]
    assert choice.message.tool_calls, (choice.finish_reason, choice.message.content)
    assert choice.finish_reason == "tool_calls"
