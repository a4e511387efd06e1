"""Dated benchmark pages: every bench script writes its own under ``docs/benchmarks/``.

A script's ``__main__`` hands its ``main`` to :func:`run` with the :class:`Page` it writes::

    if __name__ == "__main__":
        raise SystemExit(pages.run(main, PAGE))

Run as usual, the script prints what it always printed.  With ``--write-page`` (taken out of
the command line before the script reads it) it also writes ``docs/benchmarks/<measure>.md``:
the title and what is measured, the command as run, the peer, the machine (cores, load
average at start and end, Python), the date, pawlette's version and the commit, and the
script's output as it printed it (its Markdown tables as tables, the rest as text).  A run
that fails (an exception or a non-zero status) writes no page, so a page always holds a
finished run; a page with ``findings`` (a fuzz run, whose status counts what it found) is
written whatever the status, which the run still returns.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import io
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "docs" / "benchmarks"
FLAG = "--write-page"


@dataclasses.dataclass(frozen=True)
class Page:
    """What a bench script's page says about the measure, besides the run itself."""

    measure: str
    """The page's file name without ``.md`` (``stream-memory``)."""
    title: str
    what: str
    """What is measured and how to read the table, in a few sentences."""
    peer: str
    """The peer it is compared with (name and how its version is found), or ``none``."""
    findings: bool = False
    """A run whose status is not 0 still writes the page: the status says the run found
    something (a fuzz run's crashes), and what it found is the page's result."""


@dataclasses.dataclass(frozen=True)
class Run:
    """When, where and on what a page's figures were measured."""

    command: str
    date: str
    commit: str
    machine: str
    version: str
    earlier: bool = False
    """Figures carried over from a run on an earlier commit (the page says so)."""


def commit(ignoring: Sequence[Path] = ()) -> str:
    """The short commit of the working tree, with ``+changes`` when it differs from it
    (files in ``ignoring``, such as the page being rewritten, do not count)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        ).stdout.strip()
        dirty = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                *(f":(exclude){path.resolve().relative_to(ROOT)}" for path in ignoring),
            ],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        ).stdout.strip()
    except OSError:
        return "unknown"
    if not head:
        return "unknown"
    return head + ("+changes" if dirty else "")


def _load() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def machine(load_at_start: str) -> str:
    cores = os.cpu_count() or 0
    return (
        f"{cores} cores, load average {load_at_start} at start and {_load()} at end"
        f" (1, 5, 15 min); Python {platform.python_version()} on {platform.system()}"
    )


def render(page: Page, run: Run, body: str) -> str:
    """The page's Markdown."""
    lines = [
        f"# {page.title}",
        "",
        page.what,
        "",
        "| | |",
        "|---|---|",
        f"| command | `{run.command}` |",
        f"| peer | {page.peer} |",
        f"| date | {run.date} |",
        f"| pawlette | {run.version}, commit `{run.commit}` |",
        f"| machine | {run.machine} |",
        "",
    ]
    if run.earlier:
        lines += [
            '!!! note "Measured on an earlier commit"',
            f"    These figures were measured on commit `{run.commit}` ({run.date}); the code"
            " has changed since. Rerun the command with `--write-page` to measure the code as"
            " it is and rewrite this page.",
            "",
        ]
    lines += ["## Results", "", body.strip("\n"), ""]
    return "\n".join(lines)


def write(page: Page, run: Run, body: str, directory: Path | None = None) -> Path:
    directory = PAGES if directory is None else directory
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{page.measure}.md"
    path.write_text(render(page, run, body), encoding="utf-8")
    return path


def as_markdown(output: str) -> str:
    """A script's output as Markdown: its Markdown tables (runs of lines starting with ``|``)
    as they are, everything else in ``text`` blocks, so aligned columns stay aligned."""
    blocks: list[str] = []
    run: list[str] = []
    table = False
    for line in [*output.splitlines(), None]:
        is_table = line is not None and line.startswith("|")
        if line is None or is_table != table:
            while run and not run[-1].strip():
                run.pop()
            while run and not run[0].strip():
                run.pop(0)
            if run:
                blocks.append("\n".join(run) if table else "```text\n" + "\n".join(run) + "\n```")
            run, table = [], is_table
        if line is not None:
            run.append(line)
    return "\n\n".join(blocks)


class _Tee(io.TextIOBase):
    """Writes go to the terminal and are kept for the page."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


@contextlib.contextmanager
def _teed() -> Iterator[_Tee]:
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield tee


def run(
    main: Callable[[], Any],
    page: Page | Callable[[Sequence[str]], Page],
    argv: list[str] | None = None,
) -> int:
    """Run a bench script's ``main``; with ``--write-page`` in ``argv`` (default
    ``sys.argv``, which loses the flag), write its page too.  Returns the exit status.
    ``page`` may depend on the command line (``bench.parse --render-only`` measures rendering
    only, on a page of its own)."""
    arguments = sys.argv if argv is None else argv
    wanted = FLAG in arguments
    while FLAG in arguments:
        arguments.remove(FLAG)
    if not wanted:
        status = main()
        return 0 if status is None else int(status)
    chosen = page(arguments[1:]) if callable(page) else page
    load_at_start = _load()
    with _teed() as tee:
        status = main()
    status = 0 if status is None else int(status)
    if status != 0 and not chosen.findings:
        print(f"{FLAG}: the run failed (status {status}); no page written", file=sys.stderr)
        return status
    import pawlette

    module = Path(arguments[0]).stem if arguments else "bench"
    command = shlex.join(["python", "-m", f"bench.{module}", *arguments[1:]])
    measured = Run(
        command=command,
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        commit=commit(),
        machine=machine(load_at_start),
        version=pawlette.__version__,
    )
    path = write(chosen, measured, as_markdown(tee.kept.getvalue()))
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"{FLAG}: wrote {shown}", file=sys.stderr)
    return status
