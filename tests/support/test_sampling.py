"""The draw of formats for the heavy per-format checks (tests/support/sampling.py)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pawlette

from . import sampling
from .sampling import ALWAYS, SHARE, chosen_formats

NAMES = pawlette.formats()
COLLECT = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "--co", "-q"]


def test_the_draw_keeps_the_always_checked_formats_and_a_share_of_the_rest() -> None:
    chosen = chosen_formats("tests/x.py::test_y", NAMES, "abc")
    others = [name for name in NAMES if name not in ALWAYS]
    assert set(ALWAYS) <= chosen
    assert len(chosen - set(ALWAYS)) == math.ceil(len(others) * SHARE)
    assert chosen <= set(NAMES)


def test_the_draw_is_the_same_for_the_same_seed_and_differs_between_checks_and_seeds() -> None:
    first = chosen_formats("tests/x.py::test_y", NAMES, "abc")
    assert chosen_formats("tests/x.py::test_y", reversed(NAMES), "abc") == first
    assert chosen_formats("tests/x.py::test_z", NAMES, "abc") != first
    assert chosen_formats("tests/x.py::test_y", NAMES, "abd") != first


def test_over_seeds_every_format_is_drawn() -> None:
    drawn = set().union(*(chosen_formats("check", NAMES, str(seed)) for seed in range(60)))
    assert drawn == set(NAMES)


def _collected(*arguments: str, **environment: str) -> list[str]:
    root = Path(__file__).resolve().parents[2]
    found = subprocess.run(
        [*COLLECT, *arguments],
        cwd=root,
        env={**os.environ, "PAWLETTE_SAMPLE": "", **environment},
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in found.stdout.splitlines() if "::" in line]


def test_a_run_draws_a_named_run_takes_all_and_the_seed_repeats_the_draw() -> None:
    path = "tests/tokenization/test_prepare.py::test_prepared_directories_render_every_golden_case"
    module = path.split("::")[0]
    every = [line for line in _collected(module, PAWLETTE_SAMPLE="all") if path in line]
    drawn = [line for line in _collected(module, PAWLETTE_SAMPLE_SEED="s1") if path in line]
    assert len(every) == len(NAMES)
    assert len(drawn) < len(every)
    # The collecting process drew what this one draws for the seed: the seed repeats the
    # draw in every process (pytest-xdist's workers each collect).
    assert {line.split("[", 1)[1].rstrip("]") for line in drawn} == chosen_formats(
        path, NAMES, "s1"
    )
    # -k names its tests: all of them run, drawn or not.
    assert len(_collected(module, "-k", "render_every_golden_case")) == len(NAMES)


def test_the_formats_a_check_always_runs_on_are_kept_and_not_drawn_from() -> None:
    from ..declare.test_cross_artifacts import CONCEPT_FORMATS, DECLARED, USER_FORMATS

    path = "tests/declare/test_cross_artifacts.py::test_the_grammar_rejects_near_misses"
    ran = {
        line.split("[", 1)[1].rstrip("]")
        for line in _collected(path.split("::")[0], PAWLETTE_SAMPLE_SEED="s1")
        if line.startswith(path + "[")
    }
    kept = {*USER_FORMATS, *CONCEPT_FORMATS}
    assert kept <= ran
    # The share is drawn from the shipped formats alone.
    assert ran - kept == chosen_formats(path, DECLARED, "s1")


def test_a_property_check_draws_all_its_examples_for_the_sampled_formats_and_a_few_for_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check = "tests/x.py::test_y"
    monkeypatch.setenv("PYTEST_CURRENT_TEST", f"{check}[pcml] (call)")
    monkeypatch.setenv("PAWLETTE_SAMPLE", "")
    monkeypatch.setattr(sampling, "narrowed", False)
    chosen = chosen_formats(check, NAMES, sampling.seed())
    counts = {name: sampling.examples(name, NAMES, 40) for name in NAMES}
    assert {name for name, count in counts.items() if count == 40} == chosen
    assert {count for name, count in counts.items() if name not in chosen} == {sampling.SHALLOW}
    assert sampling.examples("gemma", NAMES, 3) == 3  # never more than the check's own count
    monkeypatch.setattr(sampling, "narrowed", True)  # the run named its tests
    assert {sampling.examples(name, NAMES, 40) for name in NAMES} == {40}
    monkeypatch.setattr(sampling, "narrowed", False)
    monkeypatch.setenv("PAWLETTE_SAMPLE", "all")
    assert {sampling.examples(name, NAMES, 40) for name in NAMES} == {40}
