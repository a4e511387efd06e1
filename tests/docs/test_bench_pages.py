"""``bench/pages.py``: a bench script's ``--write-page`` run writes its dated page."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import pages

PAGE = pages.Page(measure="example", title="An example", what="What it measures.", peer="none")


def _main() -> int:
    print("load average at start: 0.10 0.20 0.30")
    print("| format | rate |")
    print("|---|---|")
    print("| pcml | 1,000 |")
    print("done")
    return 0


def test_without_the_flag_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pages, "PAGES", tmp_path)
    assert pages.run(_main, PAGE, ["bench/example.py", "--rounds", "3"]) == 0
    assert list(tmp_path.iterdir()) == []
    assert "| pcml | 1,000 |" in capsys.readouterr().out  # the output is unchanged


def test_the_flag_writes_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pages, "PAGES", tmp_path)
    argv = ["bench/example.py", "--rounds", "3", "--write-page"]
    assert pages.run(_main, PAGE, argv) == 0
    assert argv == ["bench/example.py", "--rounds", "3"]  # the script never sees the flag
    assert "| pcml | 1,000 |" in capsys.readouterr().out
    text = (tmp_path / "example.md").read_text(encoding="utf-8")
    assert text.startswith("# An example\n\nWhat it measures.\n")
    assert "| command | `python -m bench.example --rounds 3` |" in text
    assert "| peer | none |" in text
    assert "| date | 20" in text and " UTC |" in text
    assert "| pawlette | 0.1.0, commit `" in text
    assert "cores, load average" in text
    assert "| pcml | 1,000 |\n" in text  # tables stay tables
    assert "```text\nload average at start: 0.10 0.20 0.30\n```" in text
    assert "```text\ndone\n```" in text
    assert "earlier commit" not in text


def test_a_failed_run_writes_no_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "PAGES", tmp_path)
    assert pages.run(lambda: 1, PAGE, ["bench/example.py", "--write-page"]) == 1
    with pytest.raises(RuntimeError):
        pages.run(_raise, PAGE, ["bench/example.py", "--write-page"])
    assert list(tmp_path.iterdir()) == []


def test_a_page_of_findings_is_written_whatever_the_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fuzz run's status counts what it found; what it found is its page's result."""
    monkeypatch.setattr(pages, "PAGES", tmp_path)

    def found() -> int:
        print("| format | crashes |")
        print("|---|---|")
        print("| pcml | 2 |")
        return 1

    fuzz = pages.Page("fuzz", "Fuzz", "What it finds.", "none", findings=True)
    assert pages.run(found, fuzz, ["bench/fuzz.py", "--write-page"]) == 1
    assert "| pcml | 2 |\n" in (tmp_path / "fuzz.md").read_text(encoding="utf-8")
    with pytest.raises(RuntimeError):  # an exception is no finding: no page
        pages.run(
            _raise, pages.Page("broken", "", "", "none", findings=True), ["b.py", "--write-page"]
        )
    assert not (tmp_path / "broken.md").exists()


def _raise() -> int:
    raise RuntimeError("the benchmark broke")


def test_a_page_may_depend_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "PAGES", tmp_path)

    def choose(arguments: object) -> pages.Page:
        return PAGE if "--small" in arguments else pages.Page("big", "Big", "", "none")  # type: ignore[operator]

    pages.run(_main, choose, ["bench/example.py", "--small", "--write-page"])
    assert [path.name for path in tmp_path.iterdir()] == ["example.md"]


def test_figures_from_an_earlier_commit_say_so(tmp_path: Path) -> None:
    run = pages.Run(
        command="python -m bench.example",
        date="2026-01-01",
        commit="abc1234",
        machine="2 cores",
        version="0.1.0",
        earlier=True,
    )
    text = pages.write(PAGE, run, "| a |\n|---|\n| 1 |", tmp_path).read_text(encoding="utf-8")
    assert "measured on commit `abc1234` (2026-01-01)" in text
