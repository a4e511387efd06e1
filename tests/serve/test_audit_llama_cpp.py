"""Harmony's forced tool choice through ``pawlette serve`` without ``--tokenizer``, on a real
llama.cpp (the ``xllamacpp`` wheel): an outside audit's finding, kept as a failing test.

llama.cpp gives ``<|channel|>``, ``<|message|>``, ``<|start|>`` and ``<|constrain|>`` the
user-defined attribute in every vocabulary (its "quick hack for gpt-oss", so they are always
rendered), so its llguidance knows no special token of those names.  A Lark grammar naming
them (what pawlette writes when it has no token ids) fails there (``llg error: unknown special
token: "<|channel|>"`` in the engine's log) and llama.cpp samples with no grammar at all,
answering 200.  With ``--tokenizer`` the grammar names the tokens by id and is enforced."""

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


@pytest.mark.xfail(
    strict=True,
    reason="without --tokenizer the forced grammar names harmony's markers (<|channel|>), "
    "which llama.cpp's llguidance does not know: the grammar is dropped and 'required' "
    "answers text with finish_reason 'stop'",
)
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
