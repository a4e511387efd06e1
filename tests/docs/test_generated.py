"""The generated pages: what the build adds to the site from the code (``docs/hooks.py``),
and the hand-made pages claim nothing unmeasured.

The format pages, their index, the command-line reference and the navigation of the
``Formats`` and ``Benchmarks`` sections are made at every build, so they cannot go stale;
these tests check that every registered format and benchmark page gets them, and what a page
holds.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from mkdocs.config import load_config
from mkdocs.structure.files import Files, get_files

import pawlette
from docs import gen
from pawlette.state_table import table_text

from .snippets import DOCS, ROOT, hand_written_pages


@pytest.fixture(scope="module")
def built() -> tuple[Any, Files]:
    """mkdocs.yml's configuration and the site's files, as the build's hooks leave them."""
    config = load_config(str(ROOT / "mkdocs.yml"))
    config = config.plugins.on_config(config)  # every plugin's, the hooks' among them
    return config, config.plugins.on_files(get_files(config), config=config)


def _navigation_paths(nav: list[Any]) -> list[str]:
    paths: list[str] = []
    for item in nav:
        if isinstance(item, str):
            paths.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                paths += _navigation_paths(value) if isinstance(value, list) else [value]
    return paths


def test_every_registered_format_gets_a_page_and_a_place_in_the_navigation(
    built: tuple[Any, Files],
) -> None:
    config, files = built
    navigation = _navigation_paths(config["nav"])
    assert pawlette.formats()
    for name in pawlette.formats():
        page = files.get_file_from_path(f"formats/{name}.md")
        assert page is not None and page.generated_by is not None, name
        assert f"formats/{name}.md" in navigation
        assert f"[{name}]({name}.md)" in gen.formats_index()
    assert not list(DOCS.glob("formats/*.md")), "a format page written by hand"


def test_a_format_page_holds_its_declaration_docstring_and_its_table() -> None:
    for name in pawlette.formats():
        fmt = pawlette.get_format(name)
        page = gen.format_page(name)
        assert page.splitlines()[2] == f"# {name}"
        assert f"pawlette table -f {name}" in page
        assert table_text(fmt).rstrip("\n") in page  # what pawlette table -f NAME prints
        assert (
            "- **Stop markers** (what an engine must stop on): "
            + ", ".join(map(gen.marker_code, fmt.stop))
            in page.splitlines()
        )
        module = gen.declaring_module(fmt)
        if module is not None and module.__doc__:
            first = gen.docstring_markdown(module.__doc__).splitlines()[0]
            assert f"## The format\n\n{first}" in page, name


def test_a_stop_marker_holding_a_newline_is_shown_as_a_json_string() -> None:
    """A newline inside a code span would end a table row, or be read as a space."""
    assert gen.marker_code("<|im_end|>") == "`<|im_end|>`"
    assert gen.marker_code("\n<SPECIAL_12>") == '`"\\n<SPECIAL_12>"`'
    index = gen.formats_index()
    rows = [line for line in index.splitlines() if line.startswith("| [")]
    assert len(rows) == len(pawlette.formats())
    assert all(line.endswith(" |") for line in rows)
    assert '| `"\\n\\n"`, `<s>` |' in index  # rwkv's stops: a blank line, or <s>


def test_the_command_line_reference_names_every_command() -> None:
    page = gen.site_pages()["reference/cli.md"]
    for command in ("render", "parse", "serve", "detect", "table", "tokenize", "formats"):
        assert f"## `pawlette {command}`" in page


def test_every_argument_of_the_command_line_reference_says_what_it_means() -> None:
    """A row of the reference is the argument's help as ``--help`` prints it: never empty or
    only its default, never argparse's own escapes, never a pointer to a section that is not
    there."""
    page = gen.site_pages()["reference/cli.md"]
    rows = re.findall(r"^\| `([^`]+)` \| (.*) \|$", page, flags=re.MULTILINE)
    assert len(rows) > 50
    for argument, meaning in rows:
        said = re.sub(r"\((?:required|default: [^)]*|one of [^)]*)\)", "", meaning).strip()
        assert said, f"pawlette's {argument}: no help, only {meaning!r}"
        assert "%" not in meaning.replace("5%", ""), f"{argument}: {meaning!r}"
        assert "README" not in meaning, f"{argument}: {meaning!r}"
    assert "a share (5%)" in page  # --max-rejected's 5%%, as --help prints it


def test_every_benchmark_page_is_listed(built: tuple[Any, Files]) -> None:
    config, _ = built
    navigation = _navigation_paths(config["nav"])
    index = gen.filled("benchmarks/index.md", (DOCS / "benchmarks" / "index.md").read_text())
    pages = [path for path in (DOCS / "benchmarks").glob("*.md") if path.name != "index.md"]
    assert pages
    for path in pages:
        assert f"benchmarks/{path.name}" in navigation
        assert f"]({path.name}) |" in index


def test_docstrings_read_as_markdown() -> None:
    text = gen.docstring_markdown(
        """Title.

        See :class:`~pawlette.format.Format` and :mod:`.python_calls`, ``literal``::

            <|wire|> format

        >>> 1 + 1
        2
        """
    )
    assert "See `Format` and `python_calls`, ``literal``:" in text
    assert "```text\n<|wire|> format\n```" in text
    assert "```pycon\n>>> 1 + 1\n2\n```" in text


def test_every_benchmark_page_says_when_where_and_against_what() -> None:
    pages = [path for path in (DOCS / "benchmarks").glob("*.md") if path.name != "index.md"]
    assert pages
    for path in pages:
        text = path.read_text(encoding="utf-8")
        for row in ("| command | `python -m bench.", "| peer | ", "| date | ", "| machine | "):
            assert row in text, f"{path.name}: no {row!r} row"
        assert re.search(r"\| pawlette \| \S+, commit `[0-9a-f]{7,}", text), path.name


# Words of a development log, not of documentation: the pages speak of the software as it is.
HISTORY = re.compile(
    r"\bissue \d+|(?<![&\w])#\d{2,}\b|\bthis round\b|\bbefore this (?:work|round)"
    r"|\bthe round before\b|\.\./shared/|\bother engineers\b|\bhelpers?\b|\bthe lead\b",
    re.IGNORECASE,
)


def test_no_page_speaks_of_the_projects_history() -> None:
    texts = {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in [*hand_written_pages(), *DOCS.glob("benchmarks/*.md"), DOCS / "models.md"]
    }
    texts.update({f"(generated) {path}": text for path, text in gen.site_pages().items()})
    for where, text in texts.items():
        for number, line in enumerate(text.splitlines(), 1):
            found = HISTORY.search(line)
            assert found is None, f"{where}:{number}: {found.group(0)!r}"


# A commit as a git short hash (seven hex digits, letters and digits both): only the dated
# measurement pages name the commit they measured.
SHORT_HASH = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7}\b")


def test_no_hand_written_page_names_a_commit() -> None:
    assert SHORT_HASH.search("measured on 1dcafa3.") and not SHORT_HASH.search("a1b2c3d4e")
    for path in hand_written_pages():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = SHORT_HASH.search(line)
            assert found is None, f"{path.relative_to(ROOT)}:{number}: {found.group(0)!r}"


def test_a_format_page_lists_the_templates_the_models_page_measured_in_it() -> None:
    text = (DOCS / "models.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(\S+)\]\(formats/\1\.md\) \| ([^|]*) \| ([^|]*) \|", text, re.M)
    assert rows, "docs/models.md has no family table"
    for name in pawlette.formats():
        page = gen.format_page(name)
        assert "## Models" in page
        for family, variant, templates in rows:
            if family == name:
                assert f"| {variant} | {templates} |" in page, (name, variant)
        if not any(family == name for family, _, _ in rows):
            assert "no template of llama.cpp's collection" in page


def test_the_declaration_reference_documents_every_public_name() -> None:
    """Every name ``pawlette.declare`` exports has its entry on the reference page."""
    import pawlette.declare

    page = (DOCS / "reference" / "declare.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: pawlette\.declare\.(\w+)$", page, flags=re.MULTILINE))
    assert set(pawlette.declare.__all__) - documented == set()
