"""``pawlette serve`` in front of a real llama.cpp (the ``xllamacpp`` wheel), every format.

One tiny random-weight GGUF per format (tests/support/gguf_model.py, cached) and one llama.cpp
server per format (a child process), shared by the module.  Through the stock ``openai``
SDK, for ``required``, a named function, ``none`` and ``auto`` (with and without
``parallel_tool_calls``), streamed and not: every call is to an allowed function with
arguments that ``json.loads`` to an object, the answer ends by the engine's stop (never the
length limit), no marker text reaches content, and the finish reason is right
(tests/support/gguf_checks.py).  The server runs with its default ``--grammar-syntax auto``:
the engine says it is built with llguidance, so the forced grammars go in Lark; the forced
cases run again with ``--grammar-syntax gbnf``.  A random model under a correct grammar can
only produce valid calls: that is the property these tests check.  ``python -m
bench.engine`` runs the same checks on more seeds and prints the README's table.  The tests per
format run, in one test run, on a drawn share of the formats (tests/support/sampling.py);
``python -m bench.full_checks`` runs them on all.

Faults: the engine killed mid-stream, the engine down, and a client that disconnects (the
engine's slot is freed: a request that needs every slot still completes afterwards).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import openai
import pytest

import pawlette
from pawlette.export.grammar import grammar_formats
from pawlette.serve.config import ServeConfig
from pawlette.serve.grammar_syntax import QUESTION, syntax_of_answer

from ..declare.conversations import call_rules, layout_of
from ..support.gguf_checks import ask_choice, call_problems, calls_of, parallel_for, problems
from ..support.gguf_model import END_OF_GENERATION_NAMES, GgufModel, format_model
from ..support.gguf_server import EngineProcess, Stack
from .conftest import LiveServer
from .prometheus import scrape, value
from .scenarios import PROMPT, assert_forced_call_refused, tools_left_out

FORMATS = [
    name
    for name in grammar_formats()
    if call_rules(layout_of(pawlette.get_format(name))) is not None
]
"""Every registered format with a grammar export and tool calls (the declared ones included;
a format without calls, such as Gemma 2's, has no tool choice to check)."""
CASES = [
    ("required", None),
    ("named", None),
    ("none", None),
    ("auto", True),
    ("auto", False),
]
SEED = 1
"""The first seed of each case (streamed and not): the bench runs ten; the test stays lean."""
SEEDS = 3
"""How many seeds a case may take.  An answer the engine cut at ``MAX_TOKENS`` says nothing
of the grammar (the random model went on writing, a long number or call after call): its
complete calls are checked and the case is asked again with the next seed; a case passes on
its first answer that ends by itself, and fails if every seed is cut."""
MAX_TOKENS = 96


@pytest.fixture(scope="module", params=FORMATS)
def stack(request: pytest.FixtureRequest) -> Iterator[Stack]:
    built = Stack(request.param)
    yield built
    built.close()


@pytest.mark.sampled(parameter="stack", group="tests/serve/test_llama_cpp.py stacks")
def test_tool_choice_against_llama_cpp(stack: Stack) -> None:
    """Every case, streamed and not, one after the other; the forced ones in Lark, which the
    server chose itself (``--grammar-syntax auto``, the default)."""
    assert stack.server.config.grammar_syntax is None
    client = stack.client()
    failures = _failures(client, stack.format, CASES)
    client.close()
    assert not failures, "\n".join(failures)
    lark = value(
        scrape(stack.server.url), "pawlette_upstream_lark_grammars", upstream=stack.engine.url
    )
    assert lark == 1


FORCED_CASES = [case for case in CASES if case[0] != "auto"]
"""The cases whose grammar depends on ``--grammar-syntax`` (under ``auto`` the lazy grammar is
always GBNF)."""


@pytest.mark.sampled(parameter="stack", group="tests/serve/test_llama_cpp.py stacks")
def test_forced_tool_choice_in_gbnf_against_llama_cpp(stack: Stack) -> None:
    """The forced cases again with ``--grammar-syntax gbnf``: the same engine reading GBNF
    grammars, whose strings and free text spell no marker."""
    server = _gbnf_server(stack)
    try:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=300)
        failures = _failures(client, stack.format, FORCED_CASES)
        client.close()
    finally:
        server.stop()
    assert not failures, "\n".join(failures)


def _gbnf_server(stack: Stack) -> LiveServer:
    """``pawlette serve`` over the stack's engine with ``--grammar-syntax gbnf``."""
    return LiveServer(
        ServeConfig(
            format=stack.format,
            upstream=stack.engine.url,
            engine="llamacpp",
            grammar_syntax="gbnf",
            tokenizer=str(stack.model.tokenizer),
            model="m",
        )
    )


def test_solar_none_in_gbnf_ends_by_its_stop() -> None:
    """Solar Open's reasoning closes with ``<|end|><|begin|>assistant``; llama.cpp takes no
    end-of-generation token through a GBNF grammar before the grammar is complete, and
    ``<|end|>`` must be none for this vocabulary (llama.cpp takes it out when the vocabulary
    holds ``<|flush|>`` and ``<|calls|>``), else on the seeds whose random model opened
    ``<|think|>`` under ``none`` (4 and 6-9 of 0-9) the block ran to ``max_tokens``.  Each
    answer ends by the stop."""
    stack = Stack("solar", grammar_syntax="gbnf")
    try:
        client = stack.client()
        for seed in (4, 6, 7, 8, 9):
            message, finish = ask_choice(
                client, "none", stream=False, max_tokens=MAX_TOKENS, seed=seed
            )
            assert not problems("solar", "none", None, message, finish), (seed, message, finish)
        client.close()
    finally:
        stack.close()


def _failures(
    client: openai.OpenAI, format_name: str, cases: list[tuple[str, bool | None]]
) -> list[str]:
    failures = []
    fmt = pawlette.get_format(format_name)
    # One request at a time: each decoding batch then holds one sequence, so a seed gives the
    # same tokens on every run (batches of several sequences round differently on the CPU).
    for choice, parallel in cases:
        parallel = parallel_for(format_name, choice, parallel)
        for stream in (False, True):
            case = (choice, parallel, stream)
            if choice in ("required", "named") and tools_left_out(fmt):
                # (DeepSeek V3.1's and R1's templates write no tools: a forced call is a 400.)
                with pytest.raises(openai.BadRequestError) as caught:
                    ask_choice(client, choice, stream=stream, parallel=parallel, seed=SEED)
                assert_forced_call_refused(caught, fmt)
                continue
            for seed in range(SEED, SEED + SEEDS):
                message, finish = ask_choice(
                    client,
                    choice,
                    stream=stream,
                    parallel=parallel,
                    max_tokens=MAX_TOKENS,
                    seed=seed,
                )
                if finish == "length":
                    found = call_problems(choice, parallel, calls_of(message))
                else:
                    found = problems(format_name, choice, parallel, message, finish)
                failures += [f"{case} seed {seed}: {problem} ({message})" for problem in found]
                if finish != "length":
                    break
            else:
                failures.append(f"{case}: cut at {MAX_TOKENS} tokens on all {SEEDS} seeds")
    return failures


@pytest.mark.sampled(parameter="stack", group="tests/serve/test_llama_cpp.py stacks")
def test_model_ends_only_on_the_format_stops(stack: Stack) -> None:
    """The stand-in model ends its turn on the format's stop markers and on nothing else: a
    Llama 3 token llama.cpp would end on by its name (``<|end_of_text|>``, ``<|eom_id|>``) is
    not an end in another format's model.  (llama.cpp writes such a token's text into the
    answer and reports an ordinary stop; a call's arguments then ended in ``<|end_of_text|>``.)
    Each token is forced by a logit bias: an end of generation stops after it, others don't."""
    fmt = pawlette.get_format(stack.format)
    names = json.loads(stack.model.tokenizer.read_text(encoding="utf-8"))["added_tokens"]
    foreign = {
        token["content"]: token["id"]
        for token in names
        if token["content"] in END_OF_GENERATION_NAMES
        and token["content"] not in fmt.special_markers
    }
    # The markers the stops end on (Nemotron Nano 2's "\n<SPECIAL_12>" on <SPECIAL_12>).
    stops = {marker: stack.model.marker_ids[marker] for marker in fmt.stop_markers}
    assert stops, fmt.stop
    ended = {}
    for text, token_id in {**stops, **foreign}.items():
        answer = httpx.post(
            stack.engine.url + "/completion",
            json={"prompt": [token_id], "n_predict": 2, "logit_bias": [[token_id, 100]]},
            timeout=60,
        ).json()
        ended[text] = answer["stop_type"] == "eos"
    assert ended == {**dict.fromkeys(stops, True), **dict.fromkeys(foreign, False)}


# ------------------------------------------------------------------ faults (pcml's stack)


@pytest.fixture(scope="module")
def pcml_model() -> GgufModel:
    return format_model("pcml")


def _pawlette(engine_url: str, model: GgufModel, timeout: float = 30.0) -> LiveServer:
    return LiveServer(
        ServeConfig(
            format="pcml",
            upstream=engine_url,
            engine="llamacpp",
            tokenizer=str(model.tokenizer),
            model="m",
            timeout=timeout,
        )
    )


def test_the_llguidance_question_against_llama_cpp(pcml_model: GgufModel) -> None:
    """What ``--grammar-syntax auto`` asks (pawlette.serve.grammar_syntax), asked of the real
    engine: built with llguidance, it shows the JSON schema's grammar in Lark."""
    engine = EngineProcess(pcml_model.path, 1)
    try:
        answer = httpx.post(engine.url + "/completion", content=QUESTION, timeout=60)
    finally:
        engine.kill()
    assert answer.status_code == 200, answer.text
    syntax, why = syntax_of_answer(answer.status_code, answer.content)
    assert syntax == "lark", why
    assert answer.json()["tokens_predicted"] == 1


def _never_stop(model: GgufModel) -> dict[str, int]:
    """A logit bias that keeps the model from writing any marker: it writes text until the
    length limit (a long answer to interrupt)."""
    return {str(token_id): -100 for token_id in model.marker_ids.values()}


def test_engine_killed_mid_stream(pcml_model: GgufModel) -> None:
    engine = EngineProcess(pcml_model.path, 1)
    server = _pawlette(engine.url, pcml_model)
    try:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=60)
        stream = client.chat.completions.create(
            model="m",
            messages=PROMPT,
            max_tokens=3000,
            temperature=1.0,
            seed=11,
            stream=True,
            logit_bias=_never_stop(pcml_model),
        )
        chunks = 0
        with pytest.raises(openai.APIError) as raised:
            for _chunk in stream:
                chunks += 1
                if chunks == 2:
                    engine.kill()
        # The stream ends with an error event the SDK raises, not a silent truncation.
        assert "upstream" in str(raised.value).lower() or raised.value.body is not None
        # The next request gets a clear error (the engine is gone), not a hang or a 500.
        with pytest.raises(openai.APIStatusError) as down:
            client.chat.completions.create(model="m", messages=PROMPT, max_tokens=4)
        assert down.value.status_code in (502, 503, 504)
        client.close()
    finally:
        server.stop()
        engine.kill()


def test_engine_down(pcml_model: GgufModel) -> None:
    engine = EngineProcess(pcml_model.path, 1)
    url = engine.url
    engine.kill()
    server = _pawlette(url, pcml_model)
    try:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as raised:
                answer = client.chat.completions.create(
                    model="m", messages=PROMPT, max_tokens=4, stream=stream
                )
                if stream:
                    list(answer)  # type: ignore[arg-type]
            assert raised.value.status_code in (502, 503, 504)
        client.close()
    finally:
        server.stop()


def _slots_busy(engine_url: str) -> int:
    slots = httpx.get(engine_url + "/slots", timeout=10).json()
    return sum(1 for slot in slots if slot.get("is_processing"))


def test_client_disconnect_frees_the_engine_slot(pcml_model: GgufModel) -> None:
    engine = EngineProcess(pcml_model.path, 1)
    server = _pawlette(engine.url, pcml_model)
    try:
        body = {
            "model": "m",
            "messages": PROMPT,
            "max_tokens": 3000,
            "temperature": 1.0,
            "seed": 5,
            "stream": True,
            "logit_bias": _never_stop(pcml_model),
        }
        with (
            httpx.Client(timeout=60) as http,
            http.stream("POST", server.url + "/v1/chat/completions", json=body) as response,
        ):
            lines = response.iter_lines()
            next(line for line in lines if line.startswith("data:"))
            assert _slots_busy(engine.url) == 1
        # The client is gone: pawlette cancels the upstream request, llama.cpp frees the slot.
        deadline = time.monotonic() + 60
        while _slots_busy(engine.url) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _slots_busy(engine.url) == 0
        # The one slot serves the next request (it would wait 3000 tokens otherwise).
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        answer = client.chat.completions.create(model="m", messages=PROMPT, max_tokens=4)
        assert answer.choices[0].finish_reason in ("stop", "length")
        client.close()
    finally:
        server.stop()
        engine.kill()
