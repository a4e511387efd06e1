"""Every code example of the README and the hand-written docs runs (see :mod:`.snippets`)."""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pawlette.cli import build_parser

from .snippets import ROOT, Snippet, hand_written_pages, python_snippets, shell_commands, snippets

SNIPPETS = python_snippets()
SERVER_ADDRESS = "http://127.0.0.1:8000"
PREPARED = "prepared/"


class Page:
    """One page's namespace and directory, shared by its blocks in order."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.namespace: dict[str, Any] = {"__name__": "__snippet__"}
        self.ran: set[int] = set()


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Page]:
    made: dict[Path, Page] = {}
    for page in hand_written_pages():
        made[page] = Page(tmp_path_factory.mktemp(page.stem))
    return made


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    """``pawlette serve`` (pcml) over a scripted engine that answers ``Hello!``."""
    from tests.serve.upstream import FakeUpstream

    engine = FakeUpstream().start()
    port = _free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed when the server is stopped)
    command = ["serve", "-f", "pcml", "--upstream", engine.url, "--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "pawlette.cli", *command], stdout=subprocess.DEVNULL, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    output = log.read().decode(errors="replace")
                    raise RuntimeError(f"pawlette serve did not start: {output}") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(20)
        log.close()
        engine.stop()


def _prepare_tokenizer(directory: Path) -> None:
    """A small byte-level BPE with pcml's markers added, as ``pawlette tokenizer prepare``
    writes it, where the docs say ``prepared/``."""
    if (directory / PREPARED).exists():
        return
    from pawlette.cli import main
    from tests.support.small_bpe import small_tokenizer

    base = directory / "base-tokenizer.json"
    base.write_text(small_tokenizer([]).to_str(), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        status = main(["tokenizer", "prepare", "-f", "pcml", "--base", str(base), "-o", PREPARED])
    assert status == 0


def _run(snippet: Snippet, page: Page, server: Any) -> None:
    code = snippet.code
    if SERVER_ADDRESS in code:
        code = code.replace(SERVER_ADDRESS, server())
    if PREPARED in code:
        _prepare_tokenizer(page.directory)
    # As a reader pastes it: without this module's own `from __future__ import annotations`
    # (a dataclass whose annotations are strings looks its module up, and a page has none).
    compiled = compile(code, snippet.name, "exec", dont_inherit=True)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compiled, page.namespace)


@pytest.fixture(autouse=True)
def _registry_restored() -> Iterator[None]:
    """A page's example that registers a format (``pawlette.register_format``) registers it
    in this process: it is taken out again, so no later test meets a format of the docs."""
    registry = importlib.import_module("pawlette.formats")
    before = dict(registry._REGISTERED)
    yield
    registry._REGISTERED.clear()
    registry._REGISTERED.update(before)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[snippet.name for snippet in SNIPPETS])
def test_python_example_runs(
    snippet: Snippet,
    pages: dict[Path, Page],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if snippet.skip is not None:
        pytest.skip(f"{snippet.name}: marked skip ({snippet.skip})")
    page = pages[snippet.path]
    monkeypatch.chdir(page.directory)

    def server() -> str:
        url: str = request.getfixturevalue("server")
        return url

    # The blocks before this one set up its names: run them first when they have not run
    # (a block selected alone with -k still runs as the page reads).
    for earlier in snippets(snippet.path):
        if earlier.line >= snippet.line:
            break
        runs = earlier.language in ("python", "py") and earlier.skip is None
        if runs and earlier.line not in page.ran:
            _run(earlier, page, server)
            page.ran.add(earlier.line)
    if snippet.line not in page.ran:
        _run(snippet, page, server)
        page.ran.add(snippet.line)


def test_every_python_block_is_collected() -> None:
    """No ``python`` fence is lost to the reader (a block never silently skips)."""
    for page in hand_written_pages():
        text = page.read_text(encoding="utf-8")
        fences = sum(
            1
            for line in text.splitlines()
            if line.strip().startswith("```python") or line.strip() == "```py"
        )
        collected = sum(1 for snippet in SNIPPETS if snippet.path == page)
        assert fences == collected, f"{page}: {fences} python fences, {collected} collected"
    assert any(snippet.path.name == "README.md" for snippet in SNIPPETS)


COMMANDS = shell_commands()


@pytest.mark.parametrize(
    ("snippet", "argv"),
    COMMANDS,
    ids=[f"{snippet.name}:{' '.join(argv[:2])}" for snippet, argv in COMMANDS],
)
def test_command_line_example_parses(snippet: Snippet, argv: list[str]) -> None:
    parser = build_parser()
    error = io.StringIO()
    try:
        with contextlib.redirect_stderr(error):
            parser.parse_args(argv)
    except SystemExit as exit:
        if exit.code not in (0, None):  # --help exits 0
            pytest.fail(f"{snippet.name}: pawlette {' '.join(argv)}: {error.getvalue()}")


def test_readme_starts_with_the_two_set_up_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ")
    fence = next(index for index, line in enumerate(lines[1:], 1) if line.strip())
    assert lines[fence] == "```bash"
    assert "pawlette demo" in lines[fence + 1]
    assert lines[fence + 2] == "bash .ci/run"
    assert lines[fence + 3] == "```"
    assert len(lines) <= 200, f"README.md: {len(lines)} lines; keep it to 200"


def test_readme_links_point_at_files() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"
