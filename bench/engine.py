"""``pawlette serve`` over a real llama.cpp, every format: the README's per-format pass table.

For each registered format with a grammar export (every format with calls), one llama.cpp
server (the ``xllamacpp`` wheel, one slot) over the format's tiny biased random-weight GGUF
(tests/support/gguf_model.py, cached) and ``pawlette serve --engine llamacpp --tokenizer`` in
front of it; then, through the stock ``openai`` SDK, ``required``, a named function (``get_time``),
``none`` and ``auto`` on ``--seeds`` seeds each (the forced ones with ``parallel_tool_calls`` false
for the formats in ``tests.support.gguf_checks.CHAINING``), one request at a time (one sequence per
batch: a seed gives the same tokens on every run). An answer passes the checks the real-engine test
asserts (tests/support/gguf_checks.py): calls only to the allowed functions with arguments
that ``json.loads`` to an object, at least one under ``required``/named and none under
``none``, no marker text in content outside ``auto``, and ``finish_reason`` ``tool_calls``
with calls else ``stop`` (never ``length``).

A forced call (``required``, named) to tools the format leaves out of the prompt (its
template writes none: DeepSeek V3.1's and R1's) is refused by ``pawlette serve`` with a 400
naming ``tool_choice``, by design (the model would call a function it was never shown): such a
request counts as *refused*, apart from passes and failures; served, it is a failure.  Any
other 4xx is a failure.

Printed: a Markdown table (passed/requests per tool choice, ``refused`` for a choice refused
by design, ``passed/requests (n refused)`` when only some were; refused: the requests refused
by design; engine errors: an HTTP error from pawlette, which answers 502 when the engine
fails; length cuts: answers that ended by ``max_tokens``; the seconds the format took), then
every failure reason with its count, and the load average before and after (the machine may
be shared: times are not comparable across loads, pass counts are).

``--corpus`` runs instead the declared formats (variants included, ``chatml:qwen3-coder``) that
write a template of llama.cpp's collection and have calls; ``--results PATH`` also writes, for
each template of the collection whose declared format was run, that format's passes (a JSON
object of template to result, merged into the file: ``python -m bench.models`` shows it as
the supported-models page's engine column).

Usage, from the repository root (``pip install -e '.[serve,test]'``: xllamacpp, gguf, openai):

    python -m bench.engine [--formats pcml,omni | --corpus] [--seeds 10] [--max-tokens 96]
        [--stream] [--grammar-syntax auto|lark|gbnf] [--results bench/results/tool_choice.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import openai

from pawlette.export.grammar import grammar_formats
from pawlette.formats import get_format
from pawlette.serve.engines import GrammarSetting
from tests.serve.scenarios import tools_left_out
from tests.support.gguf_checks import CHOICES, ask_choice, parallel_for, problems
from tests.support.gguf_server import Stack

FORCED = ("required", "named")
REFUSAL_PARAM = "tool_choice"
"""The ``param`` of the 400 that refuses a forced call to tools the format leaves out."""
SERVED_FORCED = "served a forced call to tools the format leaves out; expected a 400"


@dataclass
class Cell:
    """One format under one tool choice, over the seeds."""

    requests: int = 0
    passed: int = 0
    refused: int = 0
    """Requests refused by design: a forced call to tools the format leaves out."""
    engine_errors: int = 0
    length_cuts: int = 0
    reasons: Counter[str] = field(default_factory=Counter)


@dataclass
class Row:
    format: str
    cells: dict[str, Cell] = field(default_factory=dict)
    seconds: float = 0.0


def cell_text(cell: Cell) -> str:
    """A cell as the table shows it: ``passed/requests``, ``refused`` when every request was
    refused by design, ``passed/requests (n refused)`` when some were."""
    if cell.refused and cell.refused == cell.requests:
        return "refused"
    served = f"{cell.passed}/{cell.requests - cell.refused}"
    return f"{served} ({cell.refused} refused)" if cell.refused else served


def refused_by_design(error: openai.APIError, expected: bool) -> bool:
    """Whether ``error`` is the 400 that refuses a forced call to tools the format leaves
    out (``expected``: the case is one), naming ``tool_choice``."""
    body = getattr(error, "body", None)
    return (
        expected
        and getattr(error, "status_code", None) == 400
        and isinstance(body, dict)
        and body.get("param") == REFUSAL_PARAM
    )


def _reason(problem: str) -> str:
    """A problem without the answer's own text (so equal kinds count together)."""
    for cut in (" in content ", " are not", " expected", ": ["):
        if cut in problem:
            return problem.split(cut)[0] + cut.rstrip(": [")
    return problem


def run_format(
    name: str,
    seeds: int,
    max_tokens: int,
    stream: bool,
    grammar_syntax: GrammarSetting | None = None,
) -> Row:
    row = Row(name)
    started = time.monotonic()
    left_out = tools_left_out(get_format(name))
    stack = Stack(name, grammar_syntax=grammar_syntax)
    try:
        client = stack.client()
        for choice in CHOICES:
            parallel = parallel_for(name, choice, None)
            refusal = left_out and choice in FORCED
            cell = row.cells[choice] = Cell()
            for seed in range(seeds):
                cell.requests += 1
                try:
                    message, finish = ask_choice(
                        client,
                        choice,
                        stream=stream,
                        parallel=parallel,
                        max_tokens=max_tokens,
                        seed=seed,
                    )
                except openai.APIError as error:
                    if refused_by_design(error, refusal):
                        cell.refused += 1
                        continue
                    status = getattr(error, "status_code", None)
                    if status is not None and status < 500:  # refused: a failure, no engine's
                        cell.reasons[f"HTTP {status}: {error.message}"] += 1
                        continue
                    cell.engine_errors += 1
                    cell.reasons[f"engine error (HTTP {status or 'stream error event'})"] += 1
                    continue
                cell.length_cuts += finish == "length"
                if refusal:
                    cell.reasons[SERVED_FORCED] += 1
                    continue
                found = problems(name, choice, parallel, message, finish)
                cell.passed += not found
                for problem in found:
                    cell.reasons[_reason(problem)] += 1
        client.close()
    finally:
        stack.close()
    row.seconds = time.monotonic() - started
    return row


def table(rows: list[Row]) -> str:
    choices = list(CHOICES)
    head = ["format", *choices, "refused", "engine errors", "length cuts", "seconds"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row.cells[choice] for choice in choices]
        values = [row.format, *(cell_text(cell) for cell in cells)]
        values.append(str(sum(cell.refused for cell in cells)))
        values.append(str(sum(cell.engine_errors for cell in cells)))
        values.append(str(sum(cell.length_cuts for cell in cells)))
        values.append(f"{row.seconds:.0f}")
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines)


def reasons(rows: list[Row]) -> list[str]:
    lines = []
    for row in rows:
        for choice, cell in row.cells.items():
            for reason, count in sorted(cell.reasons.items()):
                lines.append(f"{row.format} {choice}: {count} x {reason}")
    return lines


def corpus_formats() -> list[str]:
    """The declared formats (variants included) that write a template of llama.cpp's
    collection and have tool calls, in the collection's order."""
    from pawlette.detect import detect_template
    from tests.support.template_corpus import corpus

    found: dict[str, None] = {}
    for template in corpus():
        detection = detect_template(template.text, template.tokens.variables(), infer=False)
        if detection.format is not None:
            found[detection.name] = None
    return with_calls(list(found))


def with_calls(names: list[str]) -> list[str]:
    """The formats of ``names`` whose models write tool calls (the cells ask for calls): those
    that write them, and those that only read them (LFM2's templates never write a past
    turn's calls)."""
    import pawlette
    from pawlette.declare import Ignored, layout_of
    from tests.declare.conversations import call_rules

    def reads_calls(layout: object) -> bool:
        concepts = getattr(layout, "concepts", ())
        return any(
            "calls" in getattr(c, "handles", ()) and not isinstance(c, Ignored) for c in concepts
        )

    return [
        name
        for name in names
        if call_rules(layout := layout_of(pawlette.get_format(name))) or reads_calls(layout)
    ]


def result_text(row: Row, stream: bool) -> str:
    """One format's run in a cell: the passes per tool choice."""
    cells = ", ".join(f"{choice} {cell_text(cell)}" for choice, cell in row.cells.items())
    return f"{cells} ({'streamed' if stream else 'not streamed'})"


def write_results(path: Path, rows: list[Row], stream: bool) -> int:
    """Merge each run format's result into ``path`` under the corpus templates whose declared
    format it is; the number of templates written."""
    from pawlette.detect import detect_template
    from tests.support.template_corpus import corpus

    by_format = {row.format: result_text(row, stream) for row in rows}
    results = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    written = 0
    for template in corpus():
        detection = detect_template(template.text, template.tokens.variables(), infer=False)
        if detection.format is not None and detection.name in by_format:
            results[template.name] = by_format[detection.name]
            written += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return written


def _load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--formats",
        default=",".join(grammar_formats()),
        help="comma-separated formats (those without tool calls are left out)",
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--stream", action="store_true", help="stream every answer")
    parser.add_argument(
        "--grammar-syntax",
        choices=("auto", "lark", "gbnf"),
        help="pawlette serve's --grammar-syntax (default: its own, auto: Lark to this "
        "llama.cpp, built with llguidance; gbnf: what a build without it gets)",
    )
    parser.add_argument(
        "--corpus", action="store_true", help="the declared formats of the template collection"
    )
    parser.add_argument("--results", type=Path, help="merge per-template results into this file")
    options = parser.parse_args()
    names = with_calls([name for name in options.formats.split(",") if name])
    if options.corpus:
        names = corpus_formats()
    print(
        f"{len(names)} formats x {len(CHOICES)} tool choices x {options.seeds} seeds, "
        f"max_tokens {options.max_tokens}, temperature 1, "
        f"{'streamed' if options.stream else 'not streamed'}, "
        f"grammar syntax {options.grammar_syntax or 'auto'}; before: {_load()}",
        flush=True,
    )
    rows = []
    for name in names:
        rows.append(
            run_format(
                name,
                options.seeds,
                options.max_tokens,
                options.stream,
                cast("GrammarSetting | None", options.grammar_syntax),
            )
        )
        passes = " ".join(cell_text(cell) for cell in rows[-1].cells.values())
        print(f"  {name}: {passes}, {rows[-1].seconds:.0f} s ({_load()})", flush=True)
    print()
    print(table(rows))
    print()
    print("\n".join(reasons(rows)) or "no failure")
    print(f"after: {_load()}")
    if options.results is not None:
        written = write_results(options.results, rows, options.stream)
        print(f"{options.results}: results for {written} templates")


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="engine-tool-choice",
        title="tool_choice on a real llama.cpp",
        what=(
            "`/v1/chat/completions` through `pawlette serve --engine llamacpp --tokenizer` "
            "over a real llama.cpp (the `xllamacpp` wheel) serving a tiny random-weight model "
            "per format, biased towards the format's markers: for each `tool_choice` "
            "(`required`, a named function, `none`, `auto`), ten requests with seeds 0-9. "
            "The server runs with its default `--grammar-syntax auto`: this llama.cpp is built "
            "with llguidance, so the forced grammars go in Lark (`--grammar-syntax gbnf` "
            "measures the GBNF a build without it gets; the lazy grammar of `auto` is GBNF "
            "either way). A "
            "request passes when its calls go only to allowed functions with JSON-object "
            "arguments, at least one call comes under `required` or a named function and none "
            "under `none`, no marker text is in the content, and the finish reason is right. "
            "A forced call to tools the format leaves out of the prompt (its template writes "
            "none) is refused with a 400 naming `tool_choice`, by design: the cell says "
            "`refused`, and the refused column counts them. "
            "A random model may repeat parallel calls until `max_tokens`: such an answer "
            "passes with `length` when its complete calls are valid and the content is at "
            "most the text of the one call the limit cut (a cut call is content, with a "
            "warning, as the parsing contracts say); the length cuts column counts them."
        ),
        peer="none (the contract is absolute); llama.cpp from the `xllamacpp` wheel",
    )
    raise SystemExit(pages.run(main, PAGE))
