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
