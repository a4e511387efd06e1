"""Every declared family against its real templates (the cases in
:mod:`tests.formats.families`): renders byte for byte, the template's own assistant turns
parsed back, and detection naming the family and variant."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.declare import layout_of
from pawlette.detect import detect_template

from ..support.conversations import generate_conversations
from ..support.template_compare import compare_renders, corpus_reference, own_turns
from ..support.template_corpus import NEWER_TEMPLATES
from . import families
from .families import FamilyCase


def _cases() -> list[FamilyCase]:
    found: list[FamilyCase] = []
    for module in pkgutil.iter_modules(families.__path__):
        found += importlib.import_module(f"{families.__name__}.{module.name}").CASES
    return found


CASES = _cases()


def _reference(case: FamilyCase) -> Any:
    fmt = pawlette.get_format(case.format)
    layout = layout_of(fmt)
    variables = {**(layout.reference_variables() if layout else {}), **case.variables}
    today = getattr(fmt.options, layout.today, None) if layout and layout.today else None
    settings: dict[str, Any] = {"variables": variables, "empty_content": case.empty_content}
    if today is not None:
        settings["today"] = today
    return corpus_reference(case.template, **settings)


def _conversations(case: FamilyCase) -> Any:
    fmt = pawlette.get_format(case.format)
    switches = {"avoid": fmt.special_markers, **case.switches}
    return generate_conversations(case.count, seed=case.seed, **switches)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.template)
def test_renders_as_the_template(case: FamilyCase) -> None:
    report = compare_renders(
        pawlette.get_format(case.format), _reference(case), _conversations(case)
    )
    assert report.agrees, report.describe()


@pytest.mark.parametrize(
    "case", [case for case in CASES if case.own_turns], ids=lambda case: case.template
)
def test_the_templates_own_turns_parse_back(case: FamilyCase) -> None:
    report = own_turns(
        pawlette.get_format(case.format),
        _reference(case),
        _conversations(case),
        normalise=case.normalise,
        opener=case.opener,
        prompt_tail=case.prompt_tail,
        stand_in=case.stand_in,
    )
    assert report.agrees, report.describe()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.template)
def test_detection_names_the_family(case: FamilyCase) -> None:
    reference = _reference(case)
    detection = detect_template(
        reference.template, bos_token=reference.bos_token, eos_token=reference.eos_token
    )
    if case.undetectable is not None:
        # Every probe meets the template's refusal: nothing is named, and the refusal is why.
        assert detection.name is None, detection
        assert detection.mismatches, detection
        assert all(case.undetectable in mismatch.expected for mismatch in detection.mismatches)
        return
    assert detection.name == case.format, detection


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if case.template in NEWER_TEMPLATES],
    ids=lambda case: case.template,
)
def test_the_command_names_the_format_of_a_template_file(case: FamilyCase, tmp_path: Path) -> None:
    """``pawlette detect -t FILE`` with the model's special tokens as options, for the
    templates of the newer corpus (each a file as a user has it, no model directory)."""
    reference = _reference(case)
    template = tmp_path / f"{case.template}.jinja"
    template.write_text(reference.template, encoding="utf-8")
    tokens = [
        argument
        for option, value in (
            ("--bos-token", reference.bos_token),
            ("--eos-token", reference.eos_token),
        )
        if value is not None
        for argument in (option, value)
    ]
    command = [sys.executable, "-m", "pawlette.cli", "detect", "-t", str(template), *tokens]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if case.undetectable is not None:
        assert result.returncode == 1, (result.stdout, result.stderr)
        assert result.stdout.startswith("no declared family renders this chat template")
        assert case.undetectable in result.stdout
        return
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{case.format}: a declared family"), result.stdout
