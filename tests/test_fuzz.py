"""The fuzz harness of ``bench/fuzz.py``, bounded: a few hundred inputs per format and target
(the bench runs thousands), every kind of problem zero, on every registered format and each
variant of a declared one (``chatml:qwen2.5``: its options change what it writes and reads).

Like the deep property checks, the formats this run draws for the check
(``tests/support/sampling.py``) get the full count, the others the first few of the same
inputs (a fixed seed: a red run is a change's doing; new inputs are the bench's job).  The
variants are drawn apart from the formats, for a third of the count: most share their
format's readers, and there are more of them.
"""

from __future__ import annotations

import pytest

import pawlette
from bench.fuzz import KINDS, TARGETS, report, run
from bench.registered import every_format

from .support import sampling

FULL = 300
FULL_VARIANT = 100
SEED = 20261124


def _count(name: str, formats: list[str], variants: list[str]) -> int:
    if name in formats:
        return sampling.examples(name, formats, FULL)
    return sampling.examples(name, variants, FULL_VARIANT)


@pytest.mark.deep
def test_fuzzing_every_target_finds_nothing() -> None:
    formats = pawlette.formats()
    names = every_format()
    variants = [name for name in names if name not in formats]
    assert variants and all(":" in name for name in variants)
    tallies = {}
    for name in names:
        tallies.update(run(TARGETS, [name], inputs=_count(name, formats, variants), seed=SEED))
    assert {target.name for target in TARGETS} <= {target for target, _ in tallies}
    assert {name for _, name in tallies} == set(names)
    for (_, name), tally in tallies.items():
        assert tally.inputs == _count(name, formats, variants)
        assert tally.counts is not None
        assert all(tally.counts[kind] == 0 for kind in KINDS), (
            f"draw {sampling.seed()}\n{report(tallies)}"
        )
