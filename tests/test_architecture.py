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


FORMATS = PACKAGE / "formats"

# A family's variant may take its family's tokens from the family's module; a concept two
# families share lives in pawlette.declare.  (family, family it may import, why)
FAMILY_IMPORTS_ALLOWED = {
    # DeepSeek V3.2's DSML calls keep DeepSeek's BOS/EOS, user and assistant markers.
    ("deepseek_dsml", "deepseek"),
}


def _family(path: Path) -> str:
    return path.relative_to(FORMATS).parts[0].removesuffix(".py")


def _imported_families(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """The ``pawlette.formats`` packages the module at ``path`` imports (relative imports
    resolved), each with its line; ``source``: its text, if not the file's."""
    module = ["pawlette", *path.relative_to(PACKAGE).with_suffix("").parts]
    if module[-1] == "__init__":
        module.pop()
    package = module if path.name == "__init__.py" else module[:-1]
    found = []
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (package[: len(package) - node.level + 1] if node.level else []) + (
                node.module.split(".") if node.module else []
            )
            # ``from pawlette.formats import x``: each name may be a family.
            names = [".".join([*base, alias.name]) for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["pawlette", "formats"] and len(parts) > 2:
                found.append((node.lineno, parts[2]))
    return found


def test_no_format_family_imports_another() -> None:
    found = []
    for path in sorted(FORMATS.rglob("*.py")):
        if path.parent == FORMATS and path.name == "__init__.py":
            continue  # the registry imports every family
        family = _family(path)
        for line, other in _imported_families(path):
            if other != family and (family, other) not in FAMILY_IMPORTS_ALLOWED:
                found.append(f"{path.relative_to(PACKAGE)}:{line}: imports formats.{other}")
    assert found == []


def test_the_family_check_resolves_relative_imports() -> None:
    source = (
        "from ..deepseek import LastSystemPrompt\n"
        "from . import content\n"
        "from pawlette.formats import phi3\n"
        "import pawlette.formats.hermes.tools\n"
    )
    found = _imported_families(FORMATS / "rwkv" / "turns.py", source)
    assert found == [(1, "deepseek"), (2, "rwkv"), (3, "phi3"), (4, "hermes")]
