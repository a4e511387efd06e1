"""What a forced tool call's grammar costs a real llama.cpp: pawlette's grammars against
llama.cpp's own grammar path, on the same requests.

Per format with a grammar export and per forced ``tool_choice`` (``required``, a named
function), two parts (from the repository root; needs the ``serve`` and ``test`` extras:
xllamacpp, gguf, openai):

- **grammar size**: the grammar ``pawlette serve`` sends llama.cpp for the request (the one
  after the forced prefix where there is one), in GBNF (``--engine llamacpp``) and in
  llguidance's Lark (``--grammar-syntax lark``): bytes and rules.
- **engine cost**: one llama.cpp server (the ``xllamacpp`` wheel, one slot, one thread, as
  tests/support/gguf_server.py runs it, plus its ``/metrics``) over the format's tiny biased
  GGUF (tests/support/gguf_model.py), and ``pawlette serve --engine llamacpp --tokenizer`` with
  ``--grammar-syntax gbnf`` and with the default ``--grammar-syntax auto`` in front of it (auto
  must choose Lark for this llama.cpp, built with llguidance: checked, the run stops if it
  does not); beside it a second llama.cpp server, same model and parameters plus the chat
  template of a model of the format from llama.cpp's own template collection, asked on its
  ``/v1/chat/completions`` with the same tools (llama.cpp's own template handling and its own
  grammar: the peer).  The peer is asked as its users force a call: ``tool_choice:
  "required"``; for a named function, the tools cut to that one and ``"required"`` (llama.cpp
  reads only a string ``tool_choice``: an object is logged as the wrong type and taken as
  ``auto``, with no grammar until the model writes the call's trigger).  The peer's engine
  also answers ``tool_choice: "none"`` (no grammar at all): the engine's own cost per token,
  the floor every grammar adds to.  The sides take turns request by request (streamed, one at
  a time, ``--seeds`` seeds), so the load falls on all alike.

What is compared like for like.  The random model favours the format's markers, and
llama.cpp's forced grammar admits reasoning and free text before the call, markers spelt in
it included: the peer writes that text until the token budget or until its own parser fails,
so it returns no valid call and the sides' answers differ in kind and length.  Per request,
the sides do different jobs.  The headline is therefore per token and per fixed cost, each
from CPU time (threads' time on a CPU, user + system, ``/proc/PID/task/*/schedstat``): the
engine process's and, for pawlette's sides, ``pawlette serve``'s (its threads in this
process: the peer renders its template and builds its grammar inside the engine, pawlette
in its own process), and from the engine's own counters (``/metrics``: tokens generated,
prompt tokens processed and read from the cache):

- **generation CPU per token**: the CPU per generated token after the first (a request's
  CPU, less the median CPU of the same request cut to one token, over its tokens less one),
  what each side's grammar costs on every further token;
- **CPU to the first token**: the median CPU of the request cut to ``max_tokens`` 1
  (sent after each measured request, not counted in it): its prompt's uncached tokens, the
  grammar's compilation and the first token;
- **TTFT**: the median time to the first streamed chunk.

Both first-token figures hold the prompt's processing: llama.cpp's prompt cache keeps each
side's prompt after the warm-up, so the prompt tokens processed per request (shown, beside
those read from the cache) are mostly one, whatever the prompt's length (pawlette's forced
prefix adds a few under a named function).  Where they are not (a peer whose prompt for one
tool parts early from the prompt for two, as Llama 3.1's template does), the row says how
many more the peer processed: its first-token figures are then not at equal prompt.

Per request (CPU, requests per second) and per valid answer (CPU over valid answers;
none for the peer) are shown beside, labelled as unlike jobs.  Each side's answers that keep
the tool_choice contract are counted (tests/support/gguf_checks.py: calls only to the allowed
functions with JSON-object arguments, at least one, no marker text in content, the right
finish reason).  Ratios are pawlette's over the peer's.  Before the measured requests each
side answers each choice once, not counted: llama.cpp builds llguidance's view of the
vocabulary at its first Lark grammar (seconds of CPU, once per process).

A format without a template in the collection has no peer (``-``).

Usage::

    python -m bench.grammar_cost [--formats pcml,chatml,hermes,llama3,mistral,harmony,breeze]
        [--seeds 6] [--max-tokens 96]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai

from pawlette.formats import get_format
from pawlette.openai import tools_from_openai
from pawlette.serve.config import ServeConfig
from pawlette.serve.engines import ENGINES, GrammarSetting, GrammarSyntax
from pawlette.serve.tool_choice import ToolChoice, plan_tool_choice
from tests.serve.conftest import LiveServer
from tests.serve.prometheus import scrape, value
from tests.serve.scenarios import message_from_chunks
from tests.support.gguf_checks import CHOICES, NAMED, TOOLS, parallel_for, problems, request
from tests.support.gguf_model import format_model
from tests.support.gguf_server import EngineProcess

DEFAULT_FORMATS = "pcml,chatml,hermes,llama3,mistral,harmony,breeze"
FORCED = ("required", "named")
OURS: dict[str, GrammarSetting] = {"pawlette Lark": "auto", "pawlette GBNF": "gbnf"}
"""``pawlette serve --engine llamacpp --grammar-syntax ...``: ``auto`` (the default) chooses Lark
for the xllamacpp wheel's llama.cpp, which is built with llguidance."""
LARK_GAUGE = "pawlette_upstream_lark_grammars"
OURS_OF: dict[GrammarSetting | None, GrammarSyntax] = {"auto": "lark", "gbnf": "gbnf"}
"""The syntax each setting must send this llama.cpp (read from the server's /metrics)."""
PEER = "llama.cpp own"
FLOOR = "llama.cpp, no grammar"
"""The peer's engine under ``tool_choice: "none"``: no grammar, the engine's own cost."""
PEER_TEMPLATES = {
    "chatml": "Qwen-Qwen3-0.6B",
    "hermes": "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
    "llama3": "meta-llama-Llama-3.1-8B-Instruct",
    "mistral": "Mistral-Small-3.2-24B-Instruct-2506",
    "deepseek": "deepseek-ai-DeepSeek-V3.1",
    "glm": "GLM-4.6",
    "harmony": "openai-gpt-oss-120b",
    "kimi": "Kimi-K2-Instruct",
    "phi3": "microsoft-Phi-3.5-mini-instruct",
    "granite": "ibm-granite-granite-4.0",
    "smollm3": "HuggingFaceTB-SmolLM3-3B",
    "functionary": "meetkai-functionary-medium-v3.1",
    "firefunction": "fireworks-ai-llama-3-firefunction-v2",
    "functionary_v3_2": "meetkai-functionary-medium-v3.2",
    "cohere": "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
}
"""A template of llama.cpp's collection (tests/support/template_corpus.py) that pawlette's
detection names as the format (``hermes``: the exact Hermes 2 Pro template)."""

WARM_SEED = 1000


def _load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def process_cpu(pid: int, only: set[int] | None = None) -> float:
    """Seconds the process's threads have run on a CPU (user + system, the scheduler's
    nanosecond count: ``/proc/PID/stat`` counts in ticks of 10 ms, as much as a one-token
    request costs)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        if only is not None and int(task) not in only:
            continue
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as stat:
                total += int(stat.read().split()[0])
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return total / 1e9


def server_cpu(server: LiveServer | None) -> float:
    """Seconds the ``pawlette serve`` under test has run on a CPU: its uvicorn thread and
    the worker threads its event loop hands blocking work to (the other server's thread,
    idle but for its event loop's ticks, and the client's, the main one, are not counted;
    none for the peer, whose engine does all its work)."""
    if server is None:
        return 0.0
    threads = {server.thread.native_id} | {
        thread.native_id for thread in threading.enumerate() if thread.name.startswith("AnyIO")
    }
    return process_cpu(os.getpid(), only={tid for tid in threads if tid is not None})


# ------------------------------------------------------------------ grammar size


def sent_grammar(
    format_name: str, syntax: GrammarSyntax, choice: str, token_ids: dict[str, int]
) -> str:
    """The grammar ``pawlette serve --engine llamacpp --grammar-syntax SYNTAX --tokenizer``
    sends for the request."""
    parallel = parallel_for(format_name, choice, None)
    plan = plan_tool_choice(
        get_format(format_name),
        ENGINES["llamacpp"].with_grammar_syntax(syntax),
        tools_from_openai(TOOLS),
        ToolChoice.read(CHOICES[choice]),
        parallel is not False,
        token_ids=token_ids,
    )
    assert plan.grammar is not None, f"{format_name} {choice}: no grammar in {syntax}"
    return plan.grammar


def rule_count(grammar: str) -> int:
    """Rules of a GBNF (``name ::=``) or Lark (``name:``) grammar."""
    count = 0
    for line in grammar.splitlines():
        head = line.split("::=", 1)[0] if "::=" in line else line.split(":", 1)[0]
        if head != line and head.strip() and " " not in head.strip() and line[:1].isalpha():
            count += 1
    return count


# ------------------------------------------------------------------ the engines


@dataclass(frozen=True)
class Counters:
    """llama.cpp's own counters (``/metrics``), totals since the server started."""

    prompt_tokens: float = 0.0
    """Prompt tokens processed (not read from the prompt cache)."""
    cached_tokens: float = 0.0
    generated_tokens: float = 0.0
    generation_seconds: float = 0.0

    def __add__(self, other: Counters) -> Counters:
        return Counters(
            self.prompt_tokens + other.prompt_tokens,
            self.cached_tokens + other.cached_tokens,
            self.generated_tokens + other.generated_tokens,
            self.generation_seconds + other.generation_seconds,
        )

    def __sub__(self, other: Counters) -> Counters:
        return Counters(
            self.prompt_tokens - other.prompt_tokens,
            self.cached_tokens - other.cached_tokens,
            self.generated_tokens - other.generated_tokens,
            self.generation_seconds - other.generation_seconds,
        )


_COUNTERS = {
    "llamacpp:prompt_tokens_total": "prompt_tokens",
    "llamacpp:prompt_tokens_cached_total": "cached_tokens",
    "llamacpp:tokens_predicted_total": "generated_tokens",
    "llamacpp:tokens_predicted_seconds_total": "generation_seconds",
}


class Engine(EngineProcess):
    """llama.cpp's server as the tests run it (one slot), with its ``/metrics`` on, and for the
    peer a chat template: the peer's own template handling and tool grammar need the model's
    template, which the test GGUF does not carry."""

    def __init__(self, model: Path, template: str | None = None) -> None:
        super().__init__(model, 1, metrics=True, template=template)
        self.pid = self.process.pid

    def counters(self) -> Counters:
        response = httpx.get(self.url + "/metrics", timeout=30)
        response.raise_for_status()
        found: dict[str, float] = {}
        for line in response.text.splitlines():
            name, _, number = line.partition(" ")
            if name in _COUNTERS:
                found[_COUNTERS[name]] = float(number)
        return Counters(**found)


# ------------------------------------------------------------------ the runs


@dataclass
class Side:
    """One side's answers to one format's tool choice."""

    cpu: float = 0.0
    wall: float = 0.0
    requests: int = 0
    valid: int = 0
    engine: Counters = field(default_factory=Counters)
    """The engine's counters over the measured requests (not the one-token ones)."""
    server: float = 0.0
    """CPU of ``pawlette serve`` (none for the peer, whose engine does all)."""
    first_cpu: list[float] = field(default_factory=list)
    """Engine and ``pawlette serve`` CPU of each request cut to one token."""
    first: list[float] = field(default_factory=list)
    visible: list[float] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def ask(
    client: openai.OpenAI, fields: dict[str, Any], times: dict[str, float]
) -> tuple[dict[str, Any], str | None]:
    """One streamed request: the message and its finish reason.  ``times`` gets the seconds
    to its first chunk (``first``: the engine's first token) and to its first delta with text
    or a call (``visible``), also when the stream then fails."""
    started = time.monotonic()
    chunks = []
    for chunk in client.chat.completions.create(stream=True, **fields):
        if "first" not in times and chunk.choices:
            times["first"] = time.monotonic() - started
        if "visible" not in times and any(
            choice_delta.delta.content
            or choice_delta.delta.tool_calls
            or (choice_delta.delta.model_extra or {}).get("reasoning_content")
            for choice_delta in chunk.choices
        ):
            times["visible"] = time.monotonic() - started
        chunks.append(chunk)
    message, finish, _ = message_from_chunks(chunks)
    return message, finish


def fields_for(label: str, choice: str, parallel: bool | None, seed: int, max_tokens: int) -> Any:
    """The request a side is sent: the peer forces a named function as its users do (only
    that tool, ``required``: it reads no object ``tool_choice``)."""
    if label == PEER and choice == "named":
        fields = request("required", parallel=parallel, max_tokens=max_tokens, seed=seed)
        fields["tools"] = [tool for tool in TOOLS if tool["function"]["name"] == NAMED]
        return fields
    return request(choice, parallel=parallel, max_tokens=max_tokens, seed=seed)


def measure(
    side: Side,
    engine: Engine,
    server: LiveServer | None,
    client: openai.OpenAI,
    check: Callable[[dict[str, Any], str | None], list[str]],
    fields: dict[str, Any],
) -> None:
    """One measured request, then the same cut to one token (its engine CPU only)."""
    before = engine.counters()
    cpu, own = process_cpu(engine.pid), server_cpu(server)
    started = time.monotonic()
    times: dict[str, float] = {}
    try:
        message, finish = ask(client, fields, times)
    except openai.APIError as error:
        found = [f"error: {str(error)[:120]}"]
    else:
        found = check(message, finish)
    side.wall += time.monotonic() - started
    side.server += server_cpu(server) - own
    side.cpu += process_cpu(engine.pid) - cpu
    side.engine += engine.counters() - before
    side.requests += 1
    side.valid += not found
    side.reasons += found[:1]
    if "first" in times:
        side.first.append(times["first"])
    if "visible" in times:
        side.visible.append(times["visible"])
    cpu = process_cpu(engine.pid) + server_cpu(server)
    # An answer cut at one token may be refused: its CPU is what counts.
    with contextlib.suppress(openai.APIError):
        ask(client, {**fields, "max_tokens": 1}, {})
    side.first_cpu.append(process_cpu(engine.pid) + server_cpu(server) - cpu)


def sdk_client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=600)


def run_format(format_name: str, seeds: int, max_tokens: int) -> dict[tuple[str, str], Side]:
    """Every side's answers per tool choice: ``(choice, side) -> Side``."""
    from tests.support.template_corpus import corpus_template

    model = format_model(format_name)
    engines: list[Engine] = []
    servers: list[LiveServer] = []
    sides: dict[str, tuple[Engine, LiveServer | None, openai.OpenAI]] = {}
    try:
        ours = Engine(model.path)
        engines.append(ours)
        for label, syntax in OURS.items():
            server = LiveServer(
                ServeConfig(
                    format=format_name,
                    upstream=ours.url,
                    engine="llamacpp",
                    grammar_syntax=syntax,
                    tokenizer=str(model.tokenizer),
                    model="m",
                    timeout=300,
                )
            )
            servers.append(server)
            sides[label] = (ours, server, sdk_client(server.url))
        if format_name in PEER_TEMPLATES:
            template = corpus_template(PEER_TEMPLATES[format_name]).text
            peer = Engine(model.path, template)
            engines.append(peer)
            sides[PEER] = (peer, None, sdk_client(peer.url))
        results: dict[tuple[str, str], Side] = {}
        # One answer per side and choice first, not counted: llama.cpp builds llguidance's view
        # of the vocabulary (seconds of CPU) at its first Lark grammar, once per process, and
        # each prompt is then in llama.cpp's prompt cache.
        for choice in FORCED:
            for label, (engine, server, client) in sides.items():
                fields = fields_for(label, choice, None, WARM_SEED, max_tokens)
                measure(Side(), engine, server, client, lambda *_: [], fields)
        if PEER in sides:
            engine, _, client = sides[PEER]
            fields = request("none", seed=WARM_SEED)
            measure(Side(), engine, None, client, lambda *_: [], fields)
        for server in servers:
            chosen = value(scrape(server.url), LARK_GAUGE, upstream=ours.url)
            expected = 1 if OURS_OF[server.config.grammar_syntax] == "lark" else 0
            if chosen != expected:
                raise RuntimeError(
                    f"{format_name}: --grammar-syntax {server.config.grammar_syntax} sent "
                    f"{'Lark' if chosen else 'GBNF'} to a llama.cpp built with llguidance"
                )
        for seed in range(seeds):
            for choice in FORCED:
                parallel = parallel_for(format_name, choice, None)

                def check(message: dict[str, Any], finish: str | None) -> list[str]:
                    return problems(format_name, choice, parallel, message, finish)  # noqa: B023

                for label, (engine, server, client) in sides.items():
                    side = results.setdefault((choice, label), Side())
                    fields = fields_for(label, choice, parallel, seed, max_tokens)
                    measure(side, engine, server, client, check, fields)
            if PEER in sides:
                # The engine alone: no grammar (its answers are not checked).
                engine, _, client = sides[PEER]
                side = results.setdefault(("none", FLOOR), Side())
                fields = request("none", max_tokens=max_tokens, seed=seed)
                measure(side, engine, None, client, lambda *_: [], fields)
        for _, _, client in sides.values():
            client.close()
        return results
    finally:
        for server in servers:
            server.stop()
        for engine in engines:
            engine.kill()


# ------------------------------------------------------------------ the tables


def size_table(formats: list[str]) -> str:
    lines = [
        "| format | tool_choice | GBNF bytes | GBNF rules | Lark bytes | Lark rules | GBNF/Lark |",
        "|---|---|---|---|---|---|---|",
    ]
    for format_name in formats:
        token_ids = format_model(format_name).marker_ids
        for choice in FORCED:
            gbnf = sent_grammar(format_name, "gbnf", choice, token_ids)
            lark = sent_grammar(format_name, "lark", choice, token_ids)
            lines.append(
                f"| {format_name} | {choice} | {len(gbnf.encode()):,} | {rule_count(gbnf)} "
                f"| {len(lark.encode()):,} | {rule_count(lark)} "
                f"| {len(gbnf.encode()) / len(lark.encode()):.1f}x |"
            )
    return "\n".join(lines)


def _ratio(value: float | None, peer: float | None) -> str:
    if value is None or peer is None or peer <= 0:
        return "-"
    return f"{value / peer:.2f}x"


@dataclass(frozen=True)
class Figures:
    """One side's figures (seconds; None where there is nothing to divide by).  CPU is the
    engine's and, for pawlette's sides, ``pawlette serve``'s: the peer renders its template
    and builds its grammar in the engine, pawlette in its own process."""

    request_cpu: float
    server_cpu: float
    """``pawlette serve``'s part of ``request_cpu``."""
    valid_cpu: float | None
    """All requests' CPU per valid answer."""
    generation_cpu: float | None
    """CPU per generated token after the first."""
    first_cpu: float | None
    """Median CPU of the request cut to one token."""
    generation_wall: float | None
    """llama.cpp's own generation time per token (wall, its timings)."""
    tokens: float
    prompt_tokens: float
    cached_tokens: float
    first: float | None
    visible: float | None

    @classmethod
    def of(cls, side: Side) -> Figures:
        total = side.cpu + side.server
        first_cpu = statistics.median(side.first_cpu) if side.first_cpu else None
        generated = side.engine.generated_tokens
        later = generated - side.requests
        generation_cpu = None
        if first_cpu is not None and later > 0:
            generation_cpu = max(total - side.requests * first_cpu, 0.0) / later
        return cls(
            request_cpu=total / side.requests,
            server_cpu=side.server / side.requests,
            valid_cpu=total / side.valid if side.valid else None,
            generation_cpu=generation_cpu,
            first_cpu=first_cpu,
            generation_wall=side.engine.generation_seconds / later if later > 0 else None,
            tokens=generated / side.requests,
            prompt_tokens=side.engine.prompt_tokens / side.requests,
            cached_tokens=side.engine.cached_tokens / side.requests,
            first=statistics.median(side.first) if side.first else None,
            visible=statistics.median(side.visible) if side.visible else None,
        )


def _ms(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value * 1000:.{digits}f}"


def cost_table(format_name: str, results: dict[tuple[str, str], Side]) -> list[str]:
    lines = []
    for choice in (*FORCED, "none"):
        peer_side = results.get((choice, PEER))
        peer = Figures.of(peer_side) if peer_side and peer_side.requests else None
        for label in [*OURS, PEER, FLOOR]:
            side = results.get((choice, label))
            if side is None or not side.requests:
                continue
            mine = Figures.of(side)
            ours = label in OURS and peer is not None
            lines.append(
                "| "
                + " | ".join(
                    [
                        format_name,
                        choice,
                        label,
                        "-" if label == FLOOR else f"{side.valid}/{side.requests}",
                        f"{mine.tokens:.0f}",
                        _ms(mine.generation_cpu, 1),
                        _ms(mine.first_cpu, 1),
                        _ms(mine.first),
                        f"{mine.prompt_tokens:.0f} + {mine.cached_tokens:.0f}",
                        _ms(mine.generation_wall, 1),
                        _ms(mine.visible),
                        _ms(mine.request_cpu),
                        _ms(mine.server_cpu),
                        "-" if label == FLOOR else _ms(mine.valid_cpu),
                        f"{side.requests / side.wall:.2f}",
                        _ratio(mine.generation_cpu, peer.generation_cpu) if ours else "",
                        _ratio(mine.first_cpu, peer.first_cpu) if ours else "",
                        _ratio(mine.first, peer.first) if ours else "",
                        _ratio(mine.request_cpu, peer.request_cpu) if ours else "",
                    ]
                )
                + " |"
            )
    return lines


COST_HEAD = [
    "| format | tool_choice | side | valid | tokens/request | generation CPU ms/token "
    "| CPU to first token ms | TTFT median ms | prompt tokens processed + cached "
    "| engine generation ms/token (wall) | first call or text ms "
    "| CPU ms/request (unlike jobs) | of which pawlette ms | CPU ms/valid answer | requests/s "
    "| **generation CPU/token vs peer** | **CPU to first token vs peer** | **TTFT vs peer** "
    "| CPU/request vs peer (unlike jobs) |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]


def verdict_table(every: dict[str, dict[tuple[str, str], Side]]) -> list[str]:
    """The like-for-like ratios of the default side (Lark) against the peer, per format and
    forced choice, and whether each is within the 1.5x the issue asks."""
    lines = [
        "| format | tool_choice | valid (Lark / peer) | generation CPU/token | "
        "CPU to first token | TTFT | within 1.5x |",
        "|---|---|---|---|---|---|---|",
    ]
    for format_name, results in every.items():
        for choice in FORCED:
            ours, peer = results.get((choice, "pawlette Lark")), results.get((choice, PEER))
            if ours is None or peer is None:
                continue
            mine, theirs = Figures.of(ours), Figures.of(peer)
            ratios = [
                (mine.generation_cpu, theirs.generation_cpu),
                (mine.first_cpu, theirs.first_cpu),
                (mine.first, theirs.first),
            ]
            within = all(a is not None and b and a / b <= 1.5 for a, b in ratios)
            lines.append(
                f"| {format_name} | {choice} | {ours.valid}/{ours.requests} / "
                f"{peer.valid}/{peer.requests} | "
                + " | ".join(_ratio(a, b) for a, b in ratios)
                + f" | {'yes' if within else 'no'} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--formats", default=DEFAULT_FORMATS)
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=96)
    options = parser.parse_args()
    formats = [name for name in options.formats.split(",") if name]
    import xllamacpp

    print(
        f"{len(formats)} formats x {len(FORCED)} forced tool choices x {options.seeds} seeds, "
        f"max_tokens {options.max_tokens}, temperature 1, streamed, one request at a time; "
        f"llama.cpp from xllamacpp {xllamacpp.__version__}; before: {_load()}",
        flush=True,
    )
    print("\n### The grammar sent (after the forced prefix where there is one)\n")
    print(size_table(formats))
    print("\n### Engine cost\n", flush=True)
    rows = list(COST_HEAD)
    failures = []
    every = {}
    for format_name in formats:
        started = time.monotonic()
        results = run_format(format_name, options.seeds, options.max_tokens)
        every[format_name] = results
        rows += cost_table(format_name, results)
        for (choice, label), side in results.items():
            for reason in sorted(set(side.reasons))[:4]:
                failures.append(f"{format_name} {choice} {label}: {reason[:160]}")
        print(f"  {format_name}: {time.monotonic() - started:.0f} s ({_load()})", flush=True)
    print("\n### Like for like: pawlette's Lark (the default) over llama.cpp's own\n")
    print("\n".join(verdict_table(every)))
    print("\n### Every side\n")
    print("\n".join(rows))
    print()
    print("\n".join(failures) or "every answer kept the contract")
    print(f"after: {_load()}")


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="grammar-cost",
        title="Forced tool calls: what the grammar costs llama.cpp",
        what=(
            "Under `tool_choice: required` and a named function, what the grammar `pawlette "
            "serve` sends costs a real llama.cpp (the `xllamacpp` wheel, a tiny random-weight "
            "model per format biased towards its markers, one slot, one thread), in GBNF "
            "(`--engine llamacpp --grammar-syntax gbnf`) and in llguidance's Lark (the default "
            "`--grammar-syntax auto`, which chose Lark for this llama.cpp, built with "
            "llguidance: checked on every run), against llama.cpp's own "
            "`/v1/chat/completions` with the same tools, the model's chat template from "
            "llama.cpp's collection and llama.cpp's own tool grammar, forced as its users "
            "force a call: `required`, and a named function as only that tool and `required` "
            "(llama.cpp takes an object `tool_choice` as `auto`). The sides take turns request "
            "by request. llama.cpp's forced grammar admits text before the call, so with this "
            "model it returns no valid call and per request the sides do different jobs: the "
            "headline (like for like) is the CPU per generated token after the first, the CPU "
            "to the first token (the request cut to one token) and the time to the first "
            "token. CPU is the engine process's and, on pawlette's sides, `pawlette serve`'s "
            "own (llama.cpp renders its template and builds its grammar inside the engine). "
            "Per request and per valid answer are shown beside, labelled as unlike jobs; a "
            "valid answer keeps the tool_choice contract (allowed calls with JSON-object "
            "arguments, at least one, no marker text, the right finish reason). Ratios are "
            "pawlette's over llama.cpp's own."
        ),
        peer="llama.cpp's own chat path, from the `xllamacpp` wheel (version in the output)",
    )
    raise SystemExit(pages.run(main, PAGE))
