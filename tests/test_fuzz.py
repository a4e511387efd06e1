"""The fuzz harness of ``bench/fuzz.py``, bounded: a few hundred inputs per format and target
(the bench runs 100,000), every kind of problem zero.

The inputs come from the run's seed (the commit under test: ``tests/support/sampling.py``), so
each commit fuzzes with new inputs and a red run is repeated with its ``PAWLETTE_SAMPLE_SEED``.
Like the deep property checks, the formats this run draws for the check get the full count,
the others a first few.
"""

from __future__ import annotations

import pytest

import pawlette
from bench.fuzz import KINDS, TARGETS, report, run

from .support import sampling

FULL = 300


@pytest.mark.deep
def test_fuzzing_every_target_finds_nothing() -> None:
    names = pawlette.formats()
    tallies = {}
    for name in names:
        count = sampling.examples(name, names, FULL)
        tallies.update(run(TARGETS, [name], inputs=count, seed=f"fuzz:{sampling.seed()}"))
    assert {target.name for target in TARGETS} <= {target for target, _ in tallies}
    assert {name for _, name in tallies} == set(names)
    for (_, name), tally in tallies.items():
        assert tally.inputs == sampling.examples(name, names, FULL)
        assert tally.counts is not None
        assert all(tally.counts[kind] == 0 for kind in KINDS), (
            f"seed {sampling.seed()}\n{report(tallies)}"
        )
