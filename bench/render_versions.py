"""Render speed of this tree against another commit's, side by side.  Not a test.

Two versions of pawlette cannot share a process, so each side runs in worker processes of
its own, the two sides' workers taking turns for ``--rounds`` rounds.  A worker renders, with
the generation prompt and OpenAI dicts in (:meth:`pawlette.Format.render`), every format its
version has on:

- the conversations of ``bench.declared`` (each declared family's 6 and 26 messages);
- the conversation of ``bench.parse --render-only`` (6 messages, each format's copy) for the
  formats both pages measure there (pcml, chatglm3, breeze, omni, chatml, llama3).

Times are thread CPU per conversation, the best of the rounds (each round the best of three
runs of about 3,000 messages).  The other commit's ``src/`` is taken with ``git archive``
into a temporary directory; both sides get this tree's ``bench`` and ``tests`` conversations.

Usage, from the repository root: python -m bench.render_versions [--against 1dcafa3]
    [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PARSE_PAGE = ("pcml", "chatglm3", "breeze", "omni", "chatml", "llama3")
"""The formats measured on ``bench.parse``'s render conversation."""


def _worker(specs: list[tuple[str, bool]]) -> dict[str, float | None]:
    """Each case's best thread CPU per render (None: this version cannot render it)."""
    import pawlette
    from bench.declared import CONVERSATION, alternating_conversation, long_conversation
    from bench.parse import conversation_for

    found: dict[str, float | None] = {}
    for name, tools in specs:
        try:
            fmt = pawlette.get_format(name)
        except Exception:  # a format this version does not have
            continue
        cases: list[tuple[str, dict[str, Any]]] = [
            ("6", CONVERSATION if tools else alternating_conversation(6)),
            ("26", long_conversation() if tools else alternating_conversation(26)),
        ]
        if name in PARSE_PAGE:
            cases = [("6, render page", conversation_for(name))] + (
                cases if name in ("chatml", "llama3") else []
            )
        for label, conversation in cases:
            key = f"{name} | {label}"
            try:
                fmt.render(conversation, add_generation_prompt=True)
            except Exception:  # a conversation this version refuses
                found[key] = None
                continue
            calls = max(20, 3000 // len(conversation["messages"]))
            best = float("inf")
            for _ in range(3):
                start = time.thread_time()
                for _ in range(calls):
                    fmt.render(conversation, add_generation_prompt=True)
                best = min(best, (time.thread_time() - start) / calls)
            found[key] = best
    return found


def _specs() -> list[tuple[str, bool]]:
    from bench.declared import family_cases

    specs = [(case.format, case.switches.get("tools", True)) for case in family_cases().values()]
    return specs + [(name, True) for name in PARSE_PAGE if name not in dict(specs)]


def _source_of(commit: str, into: Path) -> Path:
    """``commit``'s ``src/`` unpacked under ``into``."""
    archive = into / "source.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", commit, "src"], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--against", default="1dcafa3", help="the other commit")
    options.add_argument("--rounds", type=int, default=3)
    options.add_argument("--worker", help=argparse.SUPPRESS)
    arguments = options.parse_args()
    if arguments.worker:
        print(json.dumps(_worker([tuple(spec) for spec in json.loads(arguments.worker)])))
        return 0
    from bench.tables import load_average

    print(f"load average at start: {load_average()}")
    specs = json.dumps(_specs())
    best: dict[tuple[str, str], float | None] = {}
    with tempfile.TemporaryDirectory() as directory:
        sides = {
            "this tree": ROOT / "src",
            arguments.against: _source_of(arguments.against, Path(directory)),
        }
        for _ in range(arguments.rounds):
            for side, source in sides.items():
                environment = {**os.environ, "PYTHONPATH": f"{source}{os.pathsep}{ROOT}"}
                ran = subprocess.run(
                    [sys.executable, "-m", "bench.render_versions", "--worker", specs],
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                    env=environment,
                    check=True,
                )
                for key, seconds in json.loads(ran.stdout.splitlines()[-1]).items():
                    kept = best.get((side, key))
                    if seconds is None or kept is None:
                        best[(side, key)] = seconds if (side, key) not in best else kept
                    else:
                        best[(side, key)] = min(kept, seconds)
    print(f"load average at end: {load_average()}")
    print()
    print(f"| format | messages | this tree µs | {arguments.against} µs | ratio |")
    print("|---|---|---|---|---|")
    keys = sorted({key for _, key in best}, key=lambda key: key.split(" | "))
    for key in keys:
        ours, theirs = best.get(("this tree", key)), best.get((arguments.against, key))
        if ours is None or theirs is None:
            continue  # a case only one version renders
        name, label = key.split(" | ")
        print(
            f"| {name} | {label} | {ours * 1e6:.1f} | {theirs * 1e6:.1f} | {ours / theirs:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
