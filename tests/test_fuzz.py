"""The fuzz harness of ``bench/fuzz.py``, bounded: a fixed seed, a few hundred inputs per
format and target (the bench runs 100,000), every kind of problem zero."""

from __future__ import annotations

import pawlette
from bench.fuzz import KINDS, TARGETS, report, run


def test_fuzzing_every_target_finds_nothing() -> None:
    tallies = run(TARGETS, pawlette.formats(), inputs=300, seed=20261124)
    assert {target.name for target in TARGETS} <= {target for target, _ in tallies}
    for tally in tallies.values():
        assert tally.inputs == 300
        assert tally.counts is not None
        assert all(tally.counts[kind] == 0 for kind in KINDS), report(tallies)
