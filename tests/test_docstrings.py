"""The package's docstrings read as written: ``help()`` and the generated docs show them."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import pydoc
import re
from pathlib import Path

import pytest

import pawlette
from pawlette import declare
from pawlette.declare.concept import PROTOCOL, Concept

PACKAGE = Path(pawlette.__file__).parent
_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\[nt]")


def _escaped_docstrings(path: Path) -> list[str]:
    """Docstrings (and attribute docstrings) whose literal writes ``\\n`` or ``\\t`` as an
    escape: ``help()`` and the generated docs then show a line break or a tab where the text
    meant the two characters (``Reasoning.prompt``'s ``<assistant>\\n</think>``)."""
    source = path.read_text(encoding="utf-8")
    lines = source.encode("utf-8").splitlines(keepends=True)
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if not isinstance(node.value.value, str) or node.value.end_lineno is None:
            continue
        # The literal's source, cut from the lines (ast.get_source_segment splits the whole
        # source again for every string: seconds over the package).
        first, last = node.value.lineno - 1, node.value.end_lineno - 1
        end = node.value.end_col_offset
        chunk = b"".join(lines[first : last + 1])
        cut = len(chunk) - len(lines[last]) + (end if end is not None else len(lines[last]))
        literal = chunk[node.value.col_offset : cut].decode("utf-8")
        prefix = literal[: len(literal) - len(literal.lstrip("rRbBuU"))]
        if "r" not in prefix.lower() and _ESCAPE.search(literal):
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_docstrings_spell_backslashes_as_they_mean_them() -> None:
    found = [place for path in sorted(PACKAGE.rglob("*.py")) for place in _escaped_docstrings(path)]
    assert not found, "docstrings with \\n or \\t escapes (write \\\\n): " + ", ".join(found)


def _concepts() -> list[type[Concept]]:
    found = [getattr(declare, name) for name in declare.__all__]
    return [kind for kind in found if isinstance(kind, type) and issubclass(kind, Concept)]


@pytest.mark.parametrize("kind", _concepts(), ids=lambda kind: kind.__name__)
def test_help_of_a_concept_shows_its_fields_and_points_to_the_hooks(kind: type[Concept]) -> None:
    """``help()`` of a concept: its docstring, each field's meaning and a pointer to the
    hook protocol, not the hooks and helpers only the interpreters call (some 250 lines)."""
    said = pydoc.render_doc(kind, renderer=pydoc.plaintext)
    if kind is Concept:
        # The protocol itself: every hook, documented.
        for hook in PROTOCOL:
            assert f"\n |  {hook}" in said, hook
        return
    assert len(said.splitlines()) < 150, said
    assert inspect.cleandoc(kind.__doc__ or "").splitlines()[0] in said
    for field in dataclasses.fields(kind):
        assert f"``{field.name}``" in said, field.name  # its meaning, in the docstring
    listed = {line.split("(")[0].split(" = ")[0].strip(" |") for line in said.splitlines()}
    assert not listed & PROTOCOL, listed & PROTOCOL
    assert "hooks() -> " in said and "help(pawlette.declare.Concept)" in said
    # Still the concept's methods: an interpreter, or a subclass, finds every hook.
    for hook in kind.hooks():
        assert getattr(kind, hook) is not getattr(Concept, hook)
        assert hook in dir(kind.__new__(kind))


def test_a_concepts_hooks_are_those_it_implements() -> None:
    hooks = declare.Reasoning.hooks()
    assert {"write_opening", "rows", "jinja_opening", "grammar"} <= set(hooks)
    assert "write_message" not in hooks  # (Reasoning claims no role)
    assert Concept.hooks() == ()
    assert set(hooks) <= PROTOCOL
