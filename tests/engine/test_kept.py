"""The store of work kept by content (:mod:`pawlette.engine.kept`)."""

from __future__ import annotations

from pawlette.engine.kept import Kept, marshal_key


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
