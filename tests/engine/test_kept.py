"""The store of work kept by content (:mod:`pawlette.engine.kept`)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pawlette.engine.kept import Kept, checked_once, marshal_key, shared_key


def test_values_that_compare_equal_have_different_keys() -> None:
    """``1 == 1.0 == True`` and a list equals no tuple, but each is written differently."""
    keys = [marshal_key(value) for value in ([1], [1.0], [True], (1,), ["1"], {"a": 1})]
    assert None not in keys
    assert len(set(keys)) == len(keys)
    assert marshal_key({"a": 1, "b": 2}) != marshal_key({"b": 2, "a": 1})


def test_a_subclass_has_no_key() -> None:
    class Lying(dict[str, int]):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = None  # type: ignore[assignment]

    assert marshal_key(Lying(a=1)) is None
    assert marshal_key([Lying(a=1)]) is None


def test_made_once_per_key_bounded_and_never_for_no_key() -> None:
    made: list[str] = []

    def make(text: str) -> str:
        made.append(text)
        return text.upper()

    kept: Kept[str] = Kept(limit=2, longest=4)
    assert kept.get("ab", lambda: make("ab")) == "AB"
    assert kept.get("ab", lambda: make("ab")) == "AB"
    assert made == ["ab"]
    assert kept.get("longer", lambda: make("longer")) == "LONGER"
    assert kept.get("longer", lambda: make("longer")) == "LONGER"
    assert made == ["ab", "longer", "longer"]  # a key over `longest` is not kept
    assert kept.get(None, lambda: make("x")) == "X"
    assert kept.get(None, lambda: make("x")) == "X"
    assert made.count("x") == 2
    kept.get("cd", lambda: make("cd"))
    kept.get("ef", lambda: make("ef"))  # full: the store starts over
    kept.get("ab", lambda: make("ab"))
    assert made.count("ab") == 2


def test_a_kept_none_is_returned_not_made_again() -> None:
    made: list[int] = []
    kept: Kept[str | None] = Kept(limit=4, longest=64)
    for _ in range(3):
        assert kept.get(b"k", lambda: made.append(1)) is None  # type: ignore[func-returns-value]
    assert made == [1]


def test_shared_keys_tell_values_apart_and_decode_to_the_value() -> None:
    """Format 4 writes an object met again as a reference: equal keys still decode to one
    value (so an equal value of the same types); the same value shared or copied may differ."""
    import marshal

    values: list[Any] = [[1], [1.0], [True], (1,), ["1"], {"a": 1}, {1: "a"}, [0.0], [-0.0]]
    keys = [shared_key(value) for value in values]
    assert None not in keys
    assert len(set(keys)) == len(keys)
    part = {"type": "string"}
    for value in ([part, part], [part, dict(part)], {"x": [part], "y": part}):
        key = shared_key(value)
        assert key is not None and marshal.loads(key) == value
    looped: list[Any] = []
    looped.append(looped)
    assert shared_key(looped) is not None  # (a store using it refuses such a value itself)

    class Text(str):
        pass

    assert shared_key([Text("a")]) is None
    assert shared_key({"a": {Text("a"): 1}}) is None


def test_a_check_runs_once_per_content_it_passed_and_every_time_it_fails() -> None:
    seen: list[str] = []

    @checked_once
    def check(value: dict[str, Any], where: str) -> None:
        seen.append(where)
        if value.get("bad"):
            raise ValueError(f"{where}: bad")

    definition: dict[str, Any] = {"name": "f"}
    check(definition, "tools[0]")
    check(dict(definition), "tools[1]")  # the same content: passed before
    definition["bad"] = True  # changed in place: a new content, checked again
    for where in ("tools[2]", "tools[3]"):  # a failure is never kept
        with pytest.raises(ValueError, match=re.escape(f"{where}: bad")):
            check(definition, where)
    check({"name": object()}, "tools[4]")  # no content key: checked every time
    check({"name": object()}, "tools[5]")
    assert seen == ["tools[0]", "tools[2]", "tools[3]", "tools[4]", "tools[5]"]
    assert check.__name__ == "check"
