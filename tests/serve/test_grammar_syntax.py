"""``--grammar-syntax auto``: each llama.cpp replica asked once whether it is built with
llguidance (:mod:`pawlette.serve.grammar_syntax`), its forced grammars then in Lark or GBNF.

Against the scripted engine playing llama.cpp with llguidance, without it (where a Lark
grammar aborts the connection, as such a llama.cpp aborts its process), loading (503) and
down; the real llama.cpp (built with llguidance) is in tests/serve/test_llama_cpp.py."""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from pawlette.errors import UnsupportedFeature
from pawlette.export import export_grammar_bundle
from pawlette.formats import get_format
from pawlette.serve.config import ServeConfig
from pawlette.serve.engines import GrammarSyntax
from pawlette.serve.grammar_syntax import QUESTION, syntax_of_answer

from .conftest import LiveServer
from .prometheus import scrape, value
from .scenarios import PROMPT, TOOLS, ask, completion_for, without_ids
from .upstream import FakeUpstream, Script, cut_at_stop

PCML = get_format("pcml")
GAUGE = "pawlette_upstream_lark_grammars"


def _forced(syntax: GrammarSyntax) -> tuple[str, str]:
    """The forced prefix of ``required`` and the grammar after it, in ``syntax``."""
    bundle = export_grammar_bundle(PCML, TOOLS, "required", True, syntax)
    return bundle["forced_prefix"]["required"], bundle["grammar_after_prefix"]


PREFIX, LARK = _forced("lark")
assert LARK.startswith("%llguidance {}\n")
_, GBNF = _forced("gbnf")
assert _ == PREFIX and "::=" in GBNF
COMPLETION = completion_for(PCML, "call")
assert COMPLETION is not None and COMPLETION.startswith(PREFIX)
EXPECTED = without_ids(PCML.parse(cut_at_stop(COMPLETION, list(PCML.stop)), tools=TOOLS).message)


@pytest.fixture
def engine() -> Iterator[FakeUpstream]:
    fake = FakeUpstream().start()
    yield fake
    fake.stop()


@pytest.fixture
def start() -> Iterator[Callable[..., LiveServer]]:
    servers: list[LiveServer] = []

    def factory(url: str, **options: Any) -> LiveServer:
        options.setdefault("engine", "llamacpp")
        servers.append(LiveServer(ServeConfig(format="pcml", upstream=url, model="m", **options)))
        return servers[-1]

    yield factory
    for server in servers:
        server.stop()


def _required(server: LiveServer, engine: FakeUpstream, stream: bool) -> str | None:
    """A forced call through ``server``: checked whole, and the grammar ``engine`` got."""
    engine.push(Script(text=COMPLETION[len(PREFIX) :]))
    message, finish = ask(
        server.client(), stream, model="m", messages=PROMPT, tools=TOOLS, tool_choice="required"
    )
    body = engine.last().body
    assert body["prompt"].endswith(PREFIX) and "grammar_lazy" not in body
    assert without_ids(message) == EXPECTED and finish == "tool_calls"
    grammar = body.get("grammar")
    return grammar if isinstance(grammar, str) else None


def _lark_gauge(server: LiveServer, engine: FakeUpstream) -> float | None:
    samples = scrape(server.url)
    if not any(name == GAUGE for name, _ in samples):
        return None
    return value(samples, GAUGE, upstream=engine.url)


def test_a_llama_cpp_with_llguidance_gets_lark_once_asked(
    engine: FakeUpstream, start: Callable[..., LiveServer]
) -> None:
    engine.llguidance = True
    server = start(engine.url)
    for stream in (False, True, False):
        assert _required(server, engine, stream) == LARK
    # Asked once, at start-up, by the one question that sends no Lark grammar.
    assert engine.questions == [json.loads(QUESTION)]
    assert "grammar" not in engine.questions[0] and engine.questions[0]["n_predict"] == 1
    assert _lark_gauge(server, engine) == 1
    # A grammar a trigger switches on (tool_choice auto, one call) stays GBNF.
    engine.push(Script(text=COMPLETION))
    ask(server.client(), False, model="m", messages=PROMPT, tools=TOOLS, parallel_tool_calls=False)
    body = engine.last().body
    assert body["grammar_lazy"] is True and "::=" in body["grammar"]


def test_a_llama_cpp_without_llguidance_gets_gbnf(
    engine: FakeUpstream, start: Callable[..., LiveServer]
) -> None:
    engine.llguidance = False
    server = start(engine.url)
    for stream in (False, True):
        assert _required(server, engine, stream) == GBNF
    assert engine.lark_aborts == 0
    assert len(engine.questions) == 1
    assert _lark_gauge(server, engine) == 0


def test_an_engine_that_is_loading_is_asked_again(
    engine: FakeUpstream, start: Callable[..., LiveServer]
) -> None:
    """llama.cpp answers 503 while it loads its model: no answer, GBNF meanwhile (every
    llama.cpp reads it), and the next request that needs to know asks again."""
    engine.llguidance = True
    engine.completion_status = 503
    server = start(engine.url)
    assert _required(server, engine, False) == GBNF
    assert _lark_gauge(server, engine) == 0  # GBNF goes out meanwhile
    asked = len(engine.questions)
    assert asked >= 1
    engine.completion_status = 200
    assert _required(server, engine, True) == LARK
    assert len(engine.questions) == asked + 1
    assert _required(server, engine, False) == LARK
    assert len(engine.questions) == asked + 1
    assert _lark_gauge(server, engine) == 1


def test_an_engine_down_when_asked_is_asked_again_once_up(
    start: Callable[..., LiveServer],
) -> None:
    """Refused connections at start-up and at the first request decide nothing: once the
    engine listens, the next forced request asks again and gets Lark."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))  # bound, not listening: connects are refused
    port = holder.getsockname()[1]
    server = start(f"http://127.0.0.1:{port}")
    answer = httpx.post(
        server.url + "/v1/chat/completions",
        json={"messages": PROMPT, "tools": TOOLS, "tool_choice": "required"},
        timeout=20,
    )
    assert answer.status_code == 502, answer.text
    assert answer.json()["error"]["code"] == "upstream_unreachable"
    holder.close()
    engine = FakeUpstream()
    engine.llguidance = True
    engine.start(port)
    try:
        assert _required(server, engine, False) == LARK
        assert len(engine.questions) == 1
    finally:
        engine.stop()


@pytest.mark.parametrize(
    ("settings", "grammar", "gauge"),
    [
        ({"grammar_syntax": "gbnf"}, GBNF, 0),
        ({"grammar_syntax": "lark"}, LARK, 1),
        ({"engine": "vllm", "grammar_syntax": "auto"}, None, 1),
        ({"engine": "generic"}, None, None),
    ],
    ids=["gbnf", "lark", "vllm-auto", "generic"],
)
def test_settings_that_ask_nothing(
    engine: FakeUpstream,
    start: Callable[..., LiveServer],
    settings: dict[str, Any],
    grammar: str | None,
    gauge: int | None,
) -> None:
    """``gbnf`` and ``lark`` send their syntax to every replica unasked; ``auto`` leaves an
    engine other than llama.cpp its one syntax (vLLM: Lark, in its own field)."""
    engine.llguidance = True
    server = start(engine.url, **settings)
    assert _required(server, engine, False) == grammar
    assert engine.questions == []
    if settings.get("engine") == "vllm":
        sent = engine.last().body["structured_outputs"]["grammar"]
        assert sent.startswith("%llguidance {}\n")
    assert _lark_gauge(server, engine) == gauge


def test_what_an_answer_says() -> None:
    lark = b'{"generation_settings": {"grammar": "%llguidance {}\\nstart: %json {}"}}'
    gbnf = b'{"generation_settings": {"grammar": "root ::= object\\n"}}'
    assert syntax_of_answer(200, lark)[0] == "lark"
    assert syntax_of_answer(200, gbnf)[0] == "gbnf"
    # An answer that does not show the grammar cannot say llguidance: GBNF, kept.
    assert syntax_of_answer(200, b'{"content": "{"}')[0] == "gbnf"
    assert syntax_of_answer(200, b"not json")[0] == "gbnf"
    # No /completion (not llama.cpp's server), or a refusal: GBNF, kept.
    assert syntax_of_answer(404, b"")[0] == "gbnf"
    assert syntax_of_answer(401, b"")[0] == "gbnf"
    # Not an answer: asked again later.
    for status in (500, 502, 503, 408, 429):
        assert syntax_of_answer(status, b"")[0] is None


@pytest.mark.parametrize("lark_fails", ["no grammar", "refused"])
def test_a_grammar_lark_cannot_write_goes_in_gbnf(
    engine: FakeUpstream,
    start: Callable[..., LiveServer],
    monkeypatch: pytest.MonkeyPatch,
    lark_fails: str,
) -> None:
    """Were a marker unnameable in Lark (the plan then has only the forced prefix, or is
    refused), a replica with llguidance still gets the GBNF grammar every llama.cpp reads,
    never a weaker plan or a 400."""
    from pawlette.serve import app

    real = app.plan_tool_choice

    def plan(fmt: Any, engine: Any, *arguments: Any, **options: Any) -> Any:
        planned = real(fmt, engine, *arguments, **options)
        if engine.grammar_syntax == "lark" and planned.grammar is not None:
            if lark_fails == "refused":
                raise UnsupportedFeature("tool_choice", "a marker Lark cannot name", "another")
            return dataclasses.replace(planned, grammar=None)
        return planned

    monkeypatch.setattr(app, "plan_tool_choice", plan)
    engine.llguidance = True
    server = start(engine.url)
    for stream in (False, True):
        assert _required(server, engine, stream) == GBNF
    assert len(engine.questions) == 1
    assert _lark_gauge(server, engine) == 1  # what the replica reads, not this grammar


HARMONY = get_format("harmony")
LLAMA_CPP_TEXT = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")
"""The markers llama.cpp gives the user-defined attribute in every vocabulary."""


@pytest.mark.parametrize("llguidance", [True, False])
def test_harmony_markers_llama_cpp_reads_as_text_are_text_in_its_lark(
    engine: FakeUpstream, llguidance: bool
) -> None:
    """Without ``--tokenizer``, the Lark grammar a llama.cpp with llguidance gets spells
    harmony's ``<|channel|>`` (and the three others llama.cpp demotes) as strings, since its
    llguidance knows no special token of that name and would drop the grammar; ``<|call|>``
    and the other markers stay special tokens, and no free text may spell any of them.  Its
    GBNF (a llama.cpp without llguidance) names them as tokens, as before."""
    completion = completion_for(HARMONY, "call")
    assert completion is not None
    engine.llguidance = llguidance
    server = LiveServer(
        ServeConfig(format="harmony", upstream=engine.url, engine="llamacpp", model="m")
    )
    try:
        prefix = export_grammar_bundle(HARMONY, TOOLS, "required")["forced_prefix"]["required"]
        assert prefix and completion.startswith(prefix)
        engine.push(Script(text=completion[len(prefix) :]))
        message, finish = ask(
            server.client(), False, model="m", messages=PROMPT, tools=TOOLS, tool_choice="required"
        )
    finally:
        server.stop()
    assert message.get("tool_calls") and finish == "tool_calls"
    grammar = engine.last().body["grammar"]
    assert isinstance(grammar, str)
    rules = [line for line in grammar.splitlines() if not line.startswith(("//", "#"))]
    body = "\n".join(rules)
    if llguidance:
        assert grammar.startswith("%llguidance")
        for marker in LLAMA_CPP_TEXT:
            assert marker not in body.replace(f'"{marker}"', "")
        assert '"<|channel|>"' in body and '"<|message|>"' in body
        text_rule = next(line for line in rules if line.startswith("TEXT:"))
        for marker in (*LLAMA_CPP_TEXT, "<|call|>", "<|end|>", "<|return|>"):
            assert marker.replace("|", "\\|") in text_rule
    else:
        assert "::=" in grammar and " <|channel|> " in body and '"<|channel|>"' not in body


def test_lark_for_other_engines_keeps_harmony_markers_special() -> None:
    """Only llama.cpp demotes those markers: vLLM's Lark (its tokenizer has them as special
    tokens) names them as special tokens."""
    from pawlette.emit.tool_choice import ToolChoice
    from pawlette.openai import tools_from_openai
    from pawlette.serve.engines import ENGINES
    from pawlette.serve.tool_choice import plan_tool_choice

    tools = tools_from_openai(TOOLS)
    required = ToolChoice.read("required")
    vllm = plan_tool_choice(HARMONY, ENGINES["vllm"], tools, required, True).grammar
    assert vllm is not None and " <|channel|> " in vllm and '"<|channel|>"' not in vllm
    lark = ENGINES["llamacpp"].with_grammar_syntax("lark")
    by_id = plan_tool_choice(HARMONY, lark, tools, required, True, token_ids={"<|channel|>": 7})
    assert by_id.grammar is not None and "<[7]>" in by_id.grammar
    assert '"<|message|>"' in by_id.grammar  # no id for it: text
