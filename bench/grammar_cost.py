"""What a forced tool call's grammar costs a real llama.cpp: pawlette's grammars against
llama.cpp's own grammar path, on the same requests.

Per format with a grammar export and per forced ``tool_choice`` (``required``, a named
function), two parts (from the repository root; needs the ``serve`` and ``test`` extras:
xllamacpp, gguf, openai):

- **grammar size**: the grammar ``pawlette serve`` sends llama.cpp for the request (the one
  after the forced prefix where there is one), in GBNF (``--engine llamacpp``) and in
  llguidance's Lark (``--grammar-syntax lark``): bytes and rules.
- **engine cost**: one llama.cpp server (the ``xllamacpp`` wheel, one slot, one thread: as
  tests/support/gguf_server.py runs it) over the format's tiny biased GGUF
  (tests/support/gguf_model.py), and ``pawlette serve --engine llamacpp --tokenizer`` with
  ``--grammar-syntax gbnf`` and with the default ``--grammar-syntax auto`` in front of it (auto
  must choose Lark for this llama.cpp, built with llguidance: checked, the run stops if it
  does not); beside it a
  second llama.cpp server, same model and parameters plus the chat template of a model of the
  format from llama.cpp's own template collection, asked on its ``/v1/chat/completions`` with
  the same tools and ``tool_choice`` (llama.cpp's own template handling and its own grammar: the
  peer). The three sides take turns request by request (streamed, one at a time, ``--seeds``
  seeds), so the load falls on all alike. Per side: the engine process's CPU
  (``/proc/PID/stat``, user + system) per request and per generated token, the median time to
  the first streamed chunk (TTFT) and to the first delta that carries text or a call (pawlette
  sends a call once it is complete, llama.cpp's own path its text at once), requests per second
  (one at a time), and the answers that keep the tool_choice contract
  (tests/support/gguf_checks.py: calls only to the allowed functions with JSON-object arguments,
  at least one, no marker text in content, the right finish reason). Ratios are pawlette's over
  the peer's: per request, per generated token (the sides stop after different numbers of
  tokens) and of the median time to first token. Before the measured requests each side answers
  each choice once, not counted: llama.cpp builds llguidance's view of the vocabulary at its
  first Lark grammar (seconds of CPU, once per process).

A format without a template in the collection has no peer (``-``).  The peer's prompt is its
template's, pawlette's the format's render: their prompt tokens are shown beside the CPU.

Usage::

    python -m bench.grammar_cost [--formats pcml,chatml,hermes,llama3,mistral,harmony,breeze]
        [--seeds 6] [--max-tokens 96]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai

from pawlette.formats import get_format
from pawlette.openai import tools_from_openai
from pawlette.serve.config import ServeConfig
from pawlette.serve.engines import ENGINES, GrammarSetting, GrammarSyntax
from pawlette.serve.tool_choice import ToolChoice, plan_tool_choice
from tests.serve.conftest import LiveServer
from tests.serve.prometheus import scrape, value
from tests.serve.scenarios import message_from_chunks
from tests.support.gguf_checks import CHOICES, TOOLS, parallel_for, problems, request
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

_TICKS = os.sysconf("SC_CLK_TCK")
WARM_SEED = 1000


def _load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def process_cpu(pid: int) -> float:
    """Seconds of CPU (user + system) the process has used."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


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


# ------------------------------------------------------------------ the peer's engine


class TemplateEngine(EngineProcess):
    """llama.cpp's server as tests/support/gguf_server.py runs it, with a chat template: the
    peer's own template handling and tool grammar need the model's template, which the test
    GGUF does not carry."""

    def __init__(self, model: Path, template: str) -> None:
        # Not the parent's constructor, which starts a server without a template.
        template_file = Path(f"/tmp/pawlette-bench-template-{os.getpid()}.jinja")
        template_file.write_text(template, encoding="utf-8")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.grammar_cost", "--serve", str(model), str(template_file)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        template_file.unlink(missing_ok=True)
        if not line:
            code = self.process.wait(30)
            raise RuntimeError(f"llama.cpp server for {model} exited {code} before listening")
        self.url = line if line.startswith("http") else f"http://{line}"


def _serve(model: str, template_file: str) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.special = True
    params.n_parallel = 1
    params.n_ctx = 4096
    params.port = 0
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.warmup = False
    params.use_jinja = True
    params.chat_template = Path(template_file).read_text(encoding="utf-8")
    server = xllamacpp.Server(params)
    print(server.listening_address, flush=True)
    while True:
        time.sleep(3600)


# ------------------------------------------------------------------ the runs


@dataclass
class Side:
    """One side's answers to one format's forced choice."""

    cpu: float = 0.0
    wall: float = 0.0
    requests: int = 0
    valid: int = 0
    tokens: int = 0
    prompt_tokens: int = 0
    first: list[float] = field(default_factory=list)
    visible: list[float] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def ask(
    client: openai.OpenAI, choice: str, parallel: bool | None, seed: int, max_tokens: int
) -> tuple[dict[str, Any], str | None, Any, float | None, float | None]:
    """One streamed request: the message, its finish reason, its usage, and the seconds to its
    first chunk (the engine's first token) and to its first delta with text or a call."""
    fields = request(choice, parallel=parallel, max_tokens=max_tokens, seed=seed)
    started = time.monotonic()
    first: float | None = None
    visible: float | None = None
    chunks = []
    for chunk in client.chat.completions.create(
        stream=True, stream_options={"include_usage": True}, **fields
    ):
        if first is None and chunk.choices:
            first = time.monotonic() - started
        if visible is None and any(
            choice_delta.delta.content
            or choice_delta.delta.tool_calls
            or (choice_delta.delta.model_extra or {}).get("reasoning_content")
            for choice_delta in chunk.choices
        ):
            visible = time.monotonic() - started
        chunks.append(chunk)
    message, finish, usage = message_from_chunks(chunks)
    return message, finish, usage, first, visible


def measure(
    side: Side,
    pid: int,
    client: openai.OpenAI,
    check: Callable[[dict[str, Any], str | None], list[str]],
    choice: str,
    parallel: bool | None,
    seed: int,
    max_tokens: int,
) -> None:
    cpu = process_cpu(pid)
    started = time.monotonic()
    try:
        message, finish, usage, first, visible = ask(client, choice, parallel, seed, max_tokens)
    except openai.APIError as error:
        side.wall += time.monotonic() - started
        side.cpu += process_cpu(pid) - cpu
        side.requests += 1
        side.reasons.append(f"error: {str(error)[:120]}")
        return
    side.wall += time.monotonic() - started
    side.cpu += process_cpu(pid) - cpu
    side.requests += 1
    found = check(message, finish)
    side.valid += not found
    side.reasons += found[:1]
    if usage is not None:
        side.tokens += usage.completion_tokens
        side.prompt_tokens += usage.prompt_tokens
    if first is not None:
        side.first.append(first)
    if visible is not None:
        side.visible.append(visible)


def sdk_client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=600)


def run_format(format_name: str, seeds: int, max_tokens: int) -> dict[tuple[str, str], Side]:
    """Every side's answers per forced choice: ``(choice, side) -> Side``."""
    from tests.support.template_corpus import corpus_template

    model = format_model(format_name)
    engines: list[EngineProcess] = []
    servers: list[LiveServer] = []
    sides: dict[str, tuple[int, openai.OpenAI]] = {}
    try:
        ours = EngineProcess(model.path, 1)
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
            sides[label] = (ours.process.pid, sdk_client(server.url))
        if format_name in PEER_TEMPLATES:
            template = corpus_template(PEER_TEMPLATES[format_name]).text
            peer = TemplateEngine(model.path, template)
            engines.append(peer)
            sides[PEER] = (peer.process.pid, sdk_client(peer.url))
        results: dict[tuple[str, str], Side] = {}
        # One answer per side and choice first, not counted: llama.cpp builds llguidance's view
        # of the vocabulary (seconds of CPU) at its first Lark grammar, once per process.
        for choice in FORCED:
            for pid, client in sides.values():
                warm = Side()
                measure(warm, pid, client, lambda *_: [], choice, None, WARM_SEED, max_tokens)
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

                for label, (pid, client) in sides.items():
                    side = results.setdefault((choice, label), Side())
                    measure(side, pid, client, check, choice, parallel, seed, max_tokens)
        for _, client in sides.values():
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


def _ratio(value: float, peer: float | None) -> str:
    if peer is None or peer <= 0:
        return "-"
    return f"{value / peer:.2f}x"


def cost_table(format_name: str, results: dict[tuple[str, str], Side]) -> list[str]:
    lines = []
    for choice in FORCED:
        peer = results.get((choice, PEER))
        peer_cpu = peer.cpu / peer.requests if peer and peer.requests else None
        peer_first = statistics.median(peer.first) if peer and peer.first else None
        peer_token = peer.cpu / peer.tokens if peer and peer.tokens else None
        for label in [*OURS, PEER]:
            side = results.get((choice, label))
            if side is None or not side.requests:
                continue
            cpu = side.cpu / side.requests
            first = statistics.median(side.first) if side.first else None
            visible = statistics.median(side.visible) if side.visible else None
            token_cpu = side.cpu / side.tokens if side.tokens else 0.0
            per_token = f"{token_cpu * 1000:.1f}" if side.tokens else "-"
            lines.append(
                "| "
                + " | ".join(
                    [
                        format_name,
                        choice,
                        label,
                        f"{side.valid}/{side.requests}",
                        f"{cpu * 1000:.0f}",
                        per_token,
                        f"{side.tokens / side.requests:.0f}",
                        f"{side.prompt_tokens / side.requests:.0f}",
                        "-" if first is None else f"{first * 1000:.0f}",
                        "-" if visible is None else f"{visible * 1000:.0f}",
                        f"{side.requests / side.wall:.2f}",
                        "" if label == PEER else _ratio(cpu, peer_cpu),
                        "" if label == PEER or not side.tokens else _ratio(token_cpu, peer_token),
                        "" if label == PEER or first is None else _ratio(first, peer_first),
                    ]
                )
                + " |"
            )
    return lines


COST_HEAD = [
    "| format | tool_choice | side | valid | engine CPU ms/request | ms/token | tokens/request "
    "| prompt tokens | TTFT median ms | first call or text ms | requests/s | CPU/request vs peer "
    "| CPU/token vs peer | TTFT vs peer |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]


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
    for format_name in formats:
        started = time.monotonic()
        results = run_format(format_name, options.seeds, options.max_tokens)
        rows += cost_table(format_name, results)
        for (choice, label), side in results.items():
            for reason in sorted(set(side.reasons)):
                failures.append(f"{format_name} {choice} {label}: {reason[:160]}")
        print(f"  {format_name}: {time.monotonic() - started:.0f} s ({_load()})", flush=True)
    print()
    print("\n".join(rows))
    print()
    print("\n".join(failures) or "every answer kept the contract")
    print(f"after: {_load()}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        _serve(sys.argv[2], sys.argv[3])
    from bench import pages

    PAGE = pages.Page(
        measure="grammar-cost",
        title="Forced tool calls: what the grammar costs llama.cpp",
        what=(
            "Under `tool_choice: required` and a named function, the grammar `pawlette serve` "
            "sends a real llama.cpp (the `xllamacpp` wheel, a tiny random-weight model per "
            "format biased towards its markers, one slot, one thread) in GBNF "
            "(`--engine llamacpp --grammar-syntax gbnf`) and in llguidance's Lark (the default "
            "`--grammar-syntax auto`, which chose Lark for this llama.cpp, built with "
            "llguidance: checked on every run), "
            "against llama.cpp's own `/v1/chat/completions` with the same tools, the model's "
            "chat template from llama.cpp's collection and llama.cpp's own tool grammar. "
            "The sides take turns request by request. Engine CPU is the llama.cpp process's "
            "user + system time; a valid answer keeps the tool_choice contract (allowed "
            "calls with JSON-object arguments, at least one, no marker text, the right finish "
            "reason). Ratios are pawlette's over llama.cpp's own."
        ),
        peer="llama.cpp's own chat path, from the `xllamacpp` wheel (version in the output)",
    )
    raise SystemExit(pages.run(main, PAGE))
