"""The extras tables of the README and Getting started list what each extra installs.

Each row names an extra of ``pyproject.toml`` and the packages it brings; the packages must be
exactly the extra's requirements (by name: versions, markers and a package's own extras
such as ``ray[data]`` aside), so a package added to
or taken out of an extra shows here.  The ``test`` row says what it is for in words (it is
every package the tests use) and is checked only to be an extra.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .snippets import DOCS, ROOT

PAGES = (ROOT / "README.md", DOCS / "getting-started.md")
DESCRIBED_IN_WORDS = {"test"}
_ROW = re.compile(r"^\| `(?P<extra>[a-z]+)` \| (?P<brings>[^|]+) \|")
_REQUIREMENT_NAME = re.compile(r"^[A-Za-z0-9_.-]+")


def extras() -> dict[str, set[str]]:
    """``[project.optional-dependencies]`` of pyproject.toml: each extra's requirement names
    (read by hand: the suite runs on Python 3.10, which has no tomllib)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]\n", 1)[1]
    section = re.split(r"^\[", section, maxsplit=1, flags=re.MULTILINE)[0]
    found: dict[str, set[str]] = {}
    current: str | None = None
    for line in section.splitlines():
        start = re.match(r"^(?P<name>[a-z][a-z0-9_-]*) = \[", line)
        if start is not None:
            current = start.group("name")
            found[current] = set()
        if current is None:
            continue
        for requirement in re.findall(r'"([^"]+)"', line.split("#", 1)[0]):
            name = _REQUIREMENT_NAME.match(requirement)
            assert name is not None, f"pyproject.toml: {requirement!r}: no package name"
            found[current].add(name.group(0))
        outside_strings = re.sub(r'"[^"]*"', "", line.split("#", 1)[0])
        if "]" in outside_strings:
            current = None
    return found


def table(page_text: str) -> dict[str, set[str]]:
    rows: dict[str, set[str]] = {}
    for line in page_text.splitlines():
        row = _ROW.match(line)
        if row is not None:
            names = (name.strip() for name in row.group("brings").split(","))
            rows[row.group("extra")] = {name.split("[", 1)[0] for name in names if name}
    return rows


def test_pyproject_extras_are_read() -> None:
    declared = extras()
    assert {"serve", "tokenize", "test"} <= set(declared)
    assert "ray" in declared["ray"] and "uvloop" in declared["serve"]


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_extras_table_lists_each_extras_packages(page: Path) -> None:
    declared = extras()
    rows = table(page.read_text(encoding="utf-8"))
    assert set(rows) == set(declared), (
        f"{page.name}: the table's extras {sorted(rows)}; pyproject.toml's {sorted(declared)}"
    )
    for extra, packages in rows.items():
        if extra in DESCRIBED_IN_WORDS:
            continue
        assert packages == declared[extra], (
            f"{page.name}: extra {extra!r} lists {sorted(packages)};"
            f" pyproject.toml installs {sorted(declared[extra])}"
        )
