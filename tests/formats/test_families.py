"""Every declared family against its real templates (the cases in
:mod:`tests.formats.families`): renders byte for byte, the template's own assistant turns
parsed back, and detection naming the family and variant."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest

import pawlette
from pawlette.declare import layout_of
from pawlette.detect import detect_template

from ..support.conversations import generate_conversations
from ..support.template_compare import compare_renders, corpus_reference, own_turns
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
    assert detection.name == case.format, detection
