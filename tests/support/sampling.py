"""Which formats the heavy per-format checks run on in one test run.

A few checks cost seconds for every format: a real llama.cpp answering every tool choice,
transformers loading a 128k-token vocabulary, a hundred conversations through the engine's
Jinja.  Run on every format, they would take most of the test command's time, and each new
family would make it longer.  A test marked ``@pytest.mark.sampled`` runs, in one test run,
on the formats in ``ALWAYS`` and on a share of the others drawn from a seed.  The draw differs
from test to test (each check covers different formats in the same run) and from seed to seed
(runs cover them all over time).

The seed is the commit under test (``git rev-parse HEAD``), so running the same commit again
runs the same formats; ``PAWLETTE_SAMPLE_SEED`` sets it (a red run prints its seed in the
header), and ``PAWLETTE_SAMPLE=all`` runs every format, as ``python -m bench.full_checks``
does.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
from collections.abc import Iterable
from pathlib import Path

ALWAYS = ("pcml", "chatml", "llama3")
"""The formats every sampled check runs on: the seed format and the two most served ones."""
SHARE = 0.2
"""The share of the other formats a sampled check runs on in one test run."""


def run_every_format() -> bool:
    return os.environ.get("PAWLETTE_SAMPLE", "").strip().lower() == "all"


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
