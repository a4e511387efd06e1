"""The heavy per-format checks on every format: ``python -m bench.full_checks``.

The test command runs each check marked ``sampled`` on a drawn share of the formats, and each
check marked ``deep`` with its full count of examples on a drawn share and a few on the rest
(tests/support/sampling.py); this runs them all in full (``PAWLETTE_SAMPLE=all``), on every
core, and prints, per check, how many formats passed and failed and the time the checks took.

    python -m bench.full_checks                      # every sampled check, every format
    python -m bench.full_checks -k glm               # pytest's -k, to narrow it
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

from bench.tables import Table, load_average


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(selection: str | None, workers: str) -> tuple[Table, int]:
    """Runs pytest on the sampled and deep checks of every format; the table and pytest's
    status."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--hypothesis-profile=ci",
            "-m",
            "sampled or deep",
            "-n",
            workers,
            f"--junitxml={report}",
        ]
        if selection:
            command += ["-k", selection]
        load_before = load_average()
        wall, cpu = time.perf_counter(), _children_cpu()
        status = subprocess.run(
            command, cwd=root, env={**os.environ, "PAWLETTE_SAMPLE": "all"}, check=False
        ).returncode
        wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
        counts: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])
        if report.exists():
            for case in ElementTree.parse(report).iter("testcase"):
                check = re.sub(r"\[.*", "", f"{case.get('classname')}.{case.get('name')}")
                tags = {child.tag for child in case}
                # passed, failed, or skipped (an expected failure is reported as skipped)
                column = 1 if tags & {"failure", "error"} else 2 if "skipped" in tags else 0
                entry = counts[check]
                entry[column] += 1
                entry[3] += float(case.get("time", 0.0))
    table = Table(
        "The heavy per-format checks on every format",
        ["check", "passed", "failed", "xfailed or skipped", "test time (s)"],
        [
            [check, str(int(passed)), str(int(failed)), str(int(skipped)), f"{seconds:.1f}"]
            for check, (passed, failed, skipped, seconds) in sorted(counts.items())
        ],
        facts={
            "load average before": load_before,
            "load average after": load_average(),
            "wall": f"{wall:.0f} s",
            "CPU (pytest and its workers)": f"{cpu:.0f} s",
            "pytest status": str(status),
        },
    )
    return table, status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="selection", help="pytest's -k expression")
    parser.add_argument("-n", dest="workers", default="auto", help="pytest-xdist workers")
    arguments = parser.parse_args(argv)
    table, status = run(arguments.selection, arguments.workers)
    print(table.text())
    return status


if __name__ == "__main__":
    raise SystemExit(main())
