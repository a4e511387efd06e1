"""Which formats the heavy per-format checks run on in one test run.

A few checks cost seconds for every format: a real llama.cpp answering every tool choice,
transformers loading a 128k-token vocabulary, a hundred conversations through the engine's
Jinja.  Run on every format, they would take most of the test command's time, and each new
family would make it longer.  A test marked ``@pytest.mark.sampled`` runs, in one test run,
on the formats in ``ALWAYS`` and on a share of the others drawn from a seed.  The draw differs
from test to test (each check covers different formats in the same run) and from seed to seed
(runs cover them all over time).

The deep property checks (hypothesis drawing a hundred conversations per format) run on every
format in every run, but draw their full count of examples only for the formats the run samples
for them; the others get a first few (:func:`examples`), enough to catch a format that breaks
outright.

The seed is the commit under test (``git rev-parse HEAD``), so running the same commit again
runs the same formats; ``PAWLETTE_SAMPLE_SEED`` sets it (a red run prints its seed in the
header), and ``PAWLETTE_SAMPLE=all`` runs every format, as ``python -m bench.full_checks``
does.
"""

from __future__ import annotations

import functools
import math
import os
import random
import subprocess
from collections.abc import Iterable
from pathlib import Path

ALWAYS = ("pcml", "chatml", "llama3")
"""The formats every sampled check runs on: the seed format and the two most served ones."""
SHARE = 0.1
"""The share of the other formats a sampled check runs on in one test run."""


SHALLOW = 5
"""The examples a deep property check draws for a format outside this run's draw for it."""

narrowed = False
"""Whether the run names the tests it wants (set by the test configuration): it gets them whole."""


def run_every_format() -> bool:
    return os.environ.get("PAWLETTE_SAMPLE", "").strip().lower() == "all"


def examples(name: str, names: Iterable[str], full: int) -> int:
    """How many examples the running property check draws for format ``name`` (of ``names``):
    ``full`` for the formats this run samples for the check, and for every format when the
    run asks for every format or names its tests; at most :data:`SHALLOW` for the others."""
    if narrowed or run_every_format():
        return full
    # The running test's id, as pytest sets it: "tests/x.py::test_y[params] (call)".
    check = os.environ.get("PYTEST_CURRENT_TEST", "").split("[", 1)[0].split(" ", 1)[0]
    if name in chosen_formats(check, names, seed()):
        return full
    return min(full, SHALLOW)


@functools.cache
def seed() -> str:
    """The seed of this run's draw: ``PAWLETTE_SAMPLE_SEED``, else the commit under test."""
    chosen = os.environ.get("PAWLETTE_SAMPLE_SEED", "").strip()
    if chosen:
        return chosen
    root = Path(__file__).resolve().parents[2]
    try:
        found = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        # Not a git checkout (an unpacked sdist): one fixed draw, named in the header.
        return "no-commit"
    return found.stdout.strip()[:12] or "no-commit"


def chosen_formats(check: str, names: Iterable[str], run_seed: str) -> frozenset[str]:
    """The formats the check named ``check`` runs on, of ``names``, for this seed."""
    universe = sorted(set(names))
    always = [name for name in universe if name in ALWAYS]
    others = [name for name in universe if name not in ALWAYS]
    count = math.ceil(len(others) * SHARE)
    # A string seed: random.Random hashes it the same way in every process (no PYTHONHASHSEED
    # dependence), so every pytest-xdist worker draws the same formats.
    drawn = random.Random(f"{run_seed}:{check}").sample(others, count)
    return frozenset(always + drawn)
