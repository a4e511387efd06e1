"""A benchmark's result as data: the table and the facts its page's header states.

Every comparison in ``bench/`` that a benchmark page shows returns a :class:`Table` (and
prints it): the rows, and the facts a reader needs to judge them (when, which code, the load
average, what was timed and how, the peer's version).  A page writer takes ``markdown()``
and ``facts`` as they are.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Table:
    """One comparison: ``columns`` and ``rows`` (cells as text), ``facts`` for the header
    (name -> value, in order), ``notes`` under the table."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        """The table as GitHub markdown (header row, rule, rows), then the notes."""
        lines = [
            "| " + " | ".join(self.columns) + " |",
            "|" + "|".join("---" for _ in self.columns) + "|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines + (["", *self.notes] if self.notes else []))

    def text(self) -> str:
        """The facts, then the table aligned for a terminal, then the notes."""
        widths = [
            max(len(cells[index]) for cells in [self.columns, *self.rows])
            for index in range(len(self.columns))
        ]
        lines = [self.title]
        lines += [f"  {name}: {value}" for name, value in self.facts.items()]
        lines.append(
            "  " + "  ".join(c.ljust(w) for c, w in zip(self.columns, widths, strict=True))
        )
        lines += [
            "  " + "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True))
            for row in self.rows
        ]
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)


def load_average() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def machine_facts() -> dict[str, str]:
    """When and where: the time, the code's commit, Python, processor and core count."""
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit or "unknown",
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }


def version_of(distribution: str) -> str:
    """An installed distribution's version, or "not installed"."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"
