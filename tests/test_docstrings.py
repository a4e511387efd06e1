"""The package's docstrings read as written: ``help()`` and the generated docs show them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pawlette

PACKAGE = Path(pawlette.__file__).parent
_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\[nt]")


def _escaped_docstrings(path: Path) -> list[str]:
    """Docstrings (and attribute docstrings) whose literal writes ``\\n`` or ``\\t`` as an
    escape: ``help()`` and the generated docs then show a line break or a tab where the text
    meant the two characters (``Reasoning.prompt``'s ``<assistant>\\n</think>``)."""
    source = path.read_text(encoding="utf-8")
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if not isinstance(node.value.value, str):
            continue
        literal = ast.get_source_segment(source, node.value) or ""
        prefix = literal[: len(literal) - len(literal.lstrip("rRbBuU"))]
        if "r" not in prefix.lower() and _ESCAPE.search(literal):
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_docstrings_spell_backslashes_as_they_mean_them() -> None:
    found = [place for path in sorted(PACKAGE.rglob("*.py")) for place in _escaped_docstrings(path)]
    assert not found, "docstrings with \\n or \\t escapes (write \\\\n): " + ", ".join(found)
