"""The fuzz harness of ``bench/fuzz.py``, bounded: a few hundred inputs per format and target
(the bench runs 100,000), every kind of problem zero.

Like the deep property checks, the formats this run draws for the check
(``tests/support/sampling.py``) get the full count, the others the first few of the same
inputs (a fixed seed: a red run is a change's doing; new inputs are the bench's job).
"""

from __future__ import annotations

import pytest

import pawlette
from bench.fuzz import KINDS, TARGETS, report, run

from .support import sampling

FULL = 300
SEED = 20261124


@pytest.mark.deep
def test_fuzzing_every_target_finds_nothing() -> None:
    names = pawlette.formats()
    tallies = {}
    for name in names:
        count = sampling.examples(name, names, FULL)
        tallies.update(run(TARGETS, [name], inputs=count, seed=SEED))
    assert {target.name for target in TARGETS} <= {target for target, _ in tallies}
    assert {name for _, name in tallies} == set(names)
    for (_, name), tally in tallies.items():
        assert tally.inputs == sampling.examples(name, names, FULL)
        assert tally.counts is not None
        assert all(tally.counts[kind] == 0 for kind in KINDS), (
            f"draw {sampling.seed()}\n{report(tallies)}"
        )
