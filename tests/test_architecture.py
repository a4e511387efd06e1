"""The package's shape, checked: no module reaches another module's private names (the
layer contract itself is ``lint-imports``'s, in ``.ci/run``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pawlette

PACKAGE = Path(pawlette.__file__).parent


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
            continue
        parts = (node.module or "").split(".")
        names = [alias.name for alias in node.names]
        for name in [*parts, *names]:
            if name.startswith("_") and not name.startswith("__"):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {name}")
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    found = [item for path in sorted(PACKAGE.rglob("*.py")) for item in _private_imports(path)]
    assert found == []
