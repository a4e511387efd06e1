"""``emit/turn_rules.constrained_text``: a string parameter's lengths in a tag-call grammar
(the XmlCalls formats write string values as free text).  A length of the wrong type is no
bound, as when it is missing, never a crash: found by ``bench/fuzz_requests.py``, whose
``maxLength`` of 40 beside a ``minLength`` mutated into an object reached the server as a
500."""

from __future__ import annotations

from typing import Any

import pytest

from pawlette.emit.grammar_ast import Rules
from pawlette.emit.turn_rules import constrained_text
from pawlette.export.grammar import export_grammar_bundle
from pawlette.openai import tools_from_openai


@pytest.mark.parametrize("low", [{}, [], "x", None])
def test_a_minimum_length_of_no_integer_is_no_bound(low: Any) -> None:
    rules = Rules()
    assert constrained_text(rules, "S", "f.s", {"minLength": low, "maxLength": 40}) is not None
    assert rules.lark_extra["S"] == "(TEXT_NE) & /(?s:.{1,40})/"


def test_a_maximum_length_of_no_integer_is_no_bound() -> None:
    rules = Rules()
    assert constrained_text(rules, "S", "f.s", {"minLength": 2, "maxLength": {}}) is not None
    assert rules.lark_extra["S"] == "(TEXT_NE) & /(?s:.{2,})/"


@pytest.mark.parametrize("name", ["spark", "glm", "laguna:xs-2.1", "hy3"])
def test_a_tag_call_grammar_takes_a_mutated_minimum_length(name: str) -> None:
    schema = {"type": "string", "minLength": {"a": 1}, "maxLength": 40}
    parameters = {"type": "object", "properties": {"query": schema}, "required": ["query"]}
    tool = {"type": "function", "function": {"name": "search", "parameters": parameters}}
    bundle = export_grammar_bundle(name, tools_from_openai([tool]), "required", True, "lark")
    assert "{1,40}" in str(bundle)
