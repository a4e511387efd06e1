"""Inference on every template of llama.cpp's corpus, the declared families switched off.

For each of the real chat templates (``tests/support/template_corpus.py``: the pinned
corpus and the newer templates the tests read), with the
model's ``bos_token``/``eos_token``, :func:`pawlette.infer.infer_template` derives a
declaration and verifies it.  The table gives:

- **inferred**: accepted (verification passed), or refused;
- **renders / own turns**: the verification's figures (generated conversations, the
  template rendered as ``apply_chat_template`` renders it; the template's own assistant
  turns parsed back);
- **harness**: an independent check of an accepted declaration with the test harness's
  generator (``tests/support/conversations.py``: every kind of conversation) and
  transformers' own ``render_jinja_template`` (``tests/support/template_compare.py``):
  renders identical of those both rendered, and how many the declaration refused (what it
  reports as not derived);
- **derived**: S system, R reasoning, T tools, C calls, P parallel calls, X text with calls,
  O results (lower case: dropped or refused as the template does; ``-``: not derived);
- **seconds**: wall and CPU time of inference and verification;
- **verify**: :func:`pawlette.detect.verify` of an accepted declaration against the template
  (what ``pawlette verify`` runs): renders the declaration refuses, and differences its
  losses do not explain;
- the refusal, when there is one: what differed, where.

Then the totals, and the templates whose switches (``enable_thinking`` and the like:
:mod:`pawlette.infer.switches`) became options of the inferred format, or were not derived.

Then the timing of what ``serve`` and ``tokenize`` run at start (:func:`pawlette.detect.
detect_template`, declared families first), and, with ``--engines``, the Jinja engine choice:
jinja2 (what transformers runs) against minijinja (a Rust Jinja), time and byte-identity on
the probe renders.

Usage, from the repository root::

    python -m bench.infer
    python -m bench.infer --only 'Qwen*' --conversations 60
    python -m bench.infer --engines
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import statistics
import sys
import time
from typing import Any

from pawlette.detect import detect_template, verify
from pawlette.infer import Inference, infer_template
from tests.support.conversations import generate_conversations
from tests.support.template_compare import compare_renders, corpus_reference
from tests.support.template_corpus import (
    NEWER_TEMPLATES,
    CorpusTemplate,
    corpus,
    corpus_template,
)

LETTERS = (
    ("system messages", "S"),
    ("reasoning", "R"),
    ("tools", "T"),
    ("tool calls", "C"),
    ("parallel tool calls", "P"),
    ("text with tool calls", "X"),
    ("tool results", "O"),
)


def _load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def derived(inference: Inference) -> str:
    states = {item.name: item.status for item in inference.capabilities}
    letters = []
    for name, letter in LETTERS:
        status = states.get(name, "derived" if name == "parallel tool calls" else None)
        if (
            name in ("parallel tool calls", "text with tool calls")
            and states.get("tool calls") != "derived"
        ):
            status = "not derived"
        if status == "derived":
            letters.append(letter)
        elif status in ("dropped", "refused"):
            letters.append(letter.lower())
        else:
            letters.append("-")
    return "".join(letters)


def harness(template: CorpusTemplate, inference: Inference, count: int) -> str:
    """The accepted declaration against transformers on the harness's conversations."""
    fmt = inference.format
    if fmt is None:
        return ""
    settings: dict[str, Any] = {"empty_content": inference.empty_content}
    layout = inference.layout
    if layout is not None and layout.tools_variables is not None and not template.caller_variables:
        # A template whose callers always pass tools as a list (Hermes' tool_use): rendered
        # as they render it, the list empty without tools.
        settings["caller_variables"] = lambda tools, today: layout.reference_tools_variables(
            list(tools or ())
        )
    reference = corpus_reference(template.name, **settings)
    conversations = generate_conversations(count, seed=1, avoid=fmt.special_markers)
    report = compare_renders(fmt, reference, conversations)
    both = report.identical + len(report.differing)
    refused = len(report.pawlette_refused) + sum(
        1 for item in report.reference_refused if item.pawlette is not None
    )
    wrong = len(report.pawlette_failed) + sum(
        1 for item in report.reference_refused if item.pawlette is None
    )
    text = f"{report.identical}/{both}"
    if refused:
        text += f", {refused} refused"
    if wrong:
        text += f", {wrong} wrong"
    return text


def checked(template: CorpusTemplate, inference: Inference) -> tuple[int, int] | None:
    """What ``pawlette verify`` finds of an accepted declaration: renders it refuses,
    differences its losses do not explain."""
    if inference.format is None:
        return None
    found = verify(
        inference.format, template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    return len(found.refused), len(found.unexplained)


def run(templates: list[CorpusTemplate], conversations: int, check: int) -> list[dict[str, Any]]:
    rows = []
    for template in templates:
        wall, cpu = time.perf_counter(), time.process_time()
        inference = infer_template(
            template.text,
            bos_token=template.bos_token,
            eos_token=template.eos_token,
            conversations=conversations,
        )
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        verification = inference.verification
        verified = checked(template, inference)
        rows.append(
            {
                "template": template.name,
                "inferred": "yes" if inference.accepted else "no",
                "renders": (
                    f"{verification.identical}/{verification.compared}" if verification else "—"
                ),
                "turns": (
                    f"{verification.parsed_back}/{verification.turns}" if verification else "—"
                ),
                "harness": harness(template, inference, check) if check else "",
                "derived": derived(inference) if inference.layout is not None else "",
                "complete": inference.accepted and not inference.needs,
                "not derived": len(inference.needs),
                "verify": verified,
                "wall": wall,
                "cpu": cpu,
                "refusal": (inference.refusal or "").replace("\n", " ")[:160],
                "switches": [
                    (item.name.removeprefix("switch "), item.status)
                    for item in inference.capabilities
                    if item.name.startswith("switch ")
                ],
            }
        )
        row = rows[-1]
        print(
            f"{row['template']:46s} {row['inferred']:3s} {row['renders']:>6s} {row['turns']:>6s}"
            f" {row['harness']:>20s} {row['derived']:7s} {wall:5.2f}s {cpu:5.2f}s"
            f" {'' if verified is None else f'{verified[0]}/{verified[1]}':>7s} {row['refusal']}",
            flush=True,
        )
    return rows


def detection_times(templates: list[CorpusTemplate]) -> None:
    """What serve and tokenize run at start: declared families first, then inference."""
    times, cpu_times = [], []
    for template in templates:
        wall, cpu = time.perf_counter(), time.process_time()
        detect_template(template.text, bos_token=template.bos_token, eos_token=template.eos_token)
        times.append(time.perf_counter() - wall)
        cpu_times.append(time.process_time() - cpu)
    slowest = max(range(len(times)), key=lambda index: cpu_times[index])
    print(
        f"\ndetect_template (declared families first, inference as the fallback), "
        f"{len(times)} templates: wall median {statistics.median(times):.2f}s "
        f"max {max(times):.2f}s, CPU median {statistics.median(cpu_times):.2f}s "
        f"max {cpu_times[slowest]:.2f}s ({templates[slowest].name}) ({_load()})"
    )


def engines(templates: list[CorpusTemplate]) -> None:
    """jinja2 (transformers' engine) against minijinja on the probe conversations."""
    try:
        import minijinja
    except ImportError:
        print("\nminijinja is not installed (pip install minijinja): engines not compared")
        return
    from pawlette.detect import PROBES
    from pawlette.infer.template import TemplateRunner, hugging_face_messages

    jinja_time = mini_time = 0.0
    same = rendered = failed = 0
    for template in templates:
        variables = template.tokens.variables()
        start = time.perf_counter()
        try:
            runner = TemplateRunner(template.text, variables)
            ours = [
                runner.render(
                    probe.messages,
                    probe.tools or None,
                    add_generation_prompt=probe.add_generation_prompt,
                ).text
                for probe in PROBES
            ]
        except Exception:
            continue
        jinja_time += time.perf_counter() - start
        start = time.perf_counter()
        environment = minijinja.Environment(pycompat=True)
        environment.trim_blocks = True
        environment.lstrip_blocks = True
        try:
            environment.add_template("chat", template.text)
        except Exception:
            failed += 1
            mini_time += time.perf_counter() - start
            continue
        for probe, expected in zip(PROBES, ours, strict=True):
            try:
                theirs = environment.render_template(
                    "chat",
                    messages=hugging_face_messages(probe.messages),
                    tools=[dict(tool) for tool in probe.tools] or None,
                    add_generation_prompt=probe.add_generation_prompt,
                    **variables,
                )
            except Exception:
                theirs = None
            if expected is not None:
                rendered += 1
                same += theirs == expected
        mini_time += time.perf_counter() - start
    print(
        f"\nJinja engines, compile + {len(PROBES)} probe renders per template:"
        f" jinja2 {jinja_time:.2f}s, minijinja {mini_time:.2f}s"
        f" (ratio minijinja/jinja2 {mini_time / jinja_time:.2f});"
        f" minijinja renders identical to jinja2 {same}/{rendered},"
        f" {failed} templates it cannot compile ({_load()})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="templates whose name matches this pattern")
    parser.add_argument("--conversations", type=int, default=24, help="verification size")
    parser.add_argument("--check", type=int, default=40, help="harness conversations (0: none)")
    parser.add_argument("--engines", action="store_true", help="compare jinja2 with minijinja")
    arguments = parser.parse_args(argv)
    templates = [
        template
        for template in (*corpus(), *map(corpus_template, NEWER_TEMPLATES))
        if arguments.only is None or fnmatch.fnmatch(template.name, arguments.only)
    ]
    print(f"{_load()} at start; {os.cpu_count()} CPUs; Python {sys.version.split()[0]}")
    print(
        f"{'template':46s} inf renders  turns {'harness':>20s} derived  wall    cpu  verify refusal"
    )
    rows = run(templates, arguments.conversations, arguments.check)
    accepted = sum(1 for row in rows if row["inferred"] == "yes")
    walls = [row["wall"] for row in rows]
    cpus = [row["cpu"] for row in rows]
    print(
        f"\ninferred {accepted}/{len(rows)} ({100 * accepted / max(1, len(rows)):.0f}%);"
        f" inference wall median {statistics.median(walls):.2f}s max {max(walls):.2f}s,"
        f" CPU median {statistics.median(cpus):.2f}s max {max(cpus):.2f}s ({_load()})"
    )
    complete = sum(1 for row in rows if row["complete"])
    verified = [row["verify"] for row in rows if row["verify"] is not None]
    print(
        f"fully inferred (accepted, every part derived) {complete}/{len(rows)};"
        f" parts not derived {sum(row['not derived'] for row in rows)};"
        f" verify of the accepted: {sum(item[0] for item in verified)} renders the declaration"
        f" refuses, {sum(item[1] for item in verified)} unexplained differences"
    )
    for status in ("derived", "not derived"):
        found = []
        for row in rows:
            names = [name for name, state in row["switches"] if state == status]
            if names:
                found.append(f"{row['template']} ({', '.join(names)})")
        print(f"switches {status} on {len(found)} templates: {'; '.join(found) or 'none'}")
    detection_times(templates)
    if arguments.engines:
        engines(templates)
    return 0


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="inference",
        title="Inference on real chat templates, the declared families switched off",
        what=(
            "Every chat template of llama.cpp's collection (and three newer ones), given to "
            "`pawlette.infer.infer_template` as a template no declared family writes: whether "
            "a declaration was inferred and verified (renders identical and the template's own "
            "assistant turns parsed back, on conversations inference generates), an "
            "independent check of it (the test harness's conversations through transformers' "
            "renderer), which parts it derived (S system, R reasoning, T tools, C calls, P "
            "parallel calls, X text with calls, O results; lower case: dropped or refused as "
            "the template does; `-`: not derived, the declaration refuses it saying why), what "
            "`pawlette verify` finds of it, and the time inference took. Then the switches "
            "(`enable_thinking` and the like) derived as options, and the time of what "
            "`serve` and `tokenize` run at start (declared families first)."
        ),
        peer="none (transformers renders the templates the figures compare with)",
    )
    sys.exit(pages.run(main, PAGE))
