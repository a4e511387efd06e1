"""The concepts that own a whole layout are found in one table, and only one may own it."""

from __future__ import annotations

import dataclasses

import pytest

import pawlette
from pawlette.errors import FormatError
from pawlette.legacy import declare, layout_of
from pawlette.legacy.owners import INTERPRETERS, OWNERS, owner


def _layout(name: str) -> pawlette.legacy.Layout:
    layout = layout_of(pawlette.get_format(name))
    assert layout is not None
    return layout


@pytest.mark.parametrize(
    ("name", "field"), [("pcml", "containers"), ("chatglm3", "headed"), ("omni", "blocks")]
)
def test_each_owner_has_every_interpreter(name: str, field: str) -> None:
    layout = _layout(name)
    assert set(OWNERS[field]) == set(INTERPRETERS)
    for interpreter in INTERPRETERS:
        found = owner(layout, interpreter)
        assert found is not None and found.__name__ == interpreter


def test_a_layout_without_an_owner_uses_the_shared_interpreters() -> None:
    assert all(owner(_layout("breeze"), interpreter) is None for interpreter in INTERPRETERS)


def test_two_owners_are_refused_when_declared() -> None:
    both = dataclasses.replace(_layout("pcml"), headed=_layout("chatglm3").headed)
    with pytest.raises(FormatError, match="headed and containers each own every turn"):
        declare(both)
