"""The generated pages of the site, written by the build from the code (``docs/hooks.py``).

- ``formats/index.md`` and ``formats/<name>.md``: one page per format that
  :func:`pawlette.formats` lists, from its declaration's docstring (the module that defines
  it), its stop markers, options and variants, the demo conversation rendered, and its parse
  machine as ``pawlette table -f NAME`` prints it;
- ``reference/cli.md``: every ``pawlette`` command and option, from the argument parser;
- the ``Formats`` and ``Benchmarks`` sections of the navigation, and the table of
  ``benchmarks/index.md``.

A format registered in :mod:`pawlette.formats` gets its page at the next build; nothing is
written into the repository.  ``python -m docs.gen DIR`` writes the pages under ``DIR`` to
read them without building the site.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import html
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pawlette
from pawlette.cli import build_parser
from pawlette.demo import WEATHER
from pawlette.format import derived_options
from pawlette.option_types import describe, option_annotations
from pawlette.state_table import table_text

from .griffe_docstrings import docstring_markdown

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GENERATED = "<!-- Generated from the code by docs/gen.py at build time. -->"


def cell(text: str) -> str:
    """Plain text for a Markdown table cell: ``<`` and ``&`` as entities (markers such as
    ``<think>`` are not HTML), pipes escaped."""
    return html.escape(text, quote=False).replace("|", "\\|")


def marker_code(marker: str) -> str:
    """A marker as inline code; one holding a newline or other unprintable character as a
    JSON string (``"\\n<SPECIAL_12>"``), which a code span or a table row could not hold."""
    return f"`{marker}`" if marker.isprintable() else f"`{json.dumps(marker, ensure_ascii=False)}`"


# ------------------------------------------------------------------ format pages


def declaring_module(fmt: pawlette.Format) -> Any:
    """The module whose ``FORMAT`` is ``fmt`` (a declaration module), or None."""
    for module in list(sys.modules.values()):
        if getattr(module, "FORMAT", None) is fmt:
            return module
    return None


def _renderable(fmt: pawlette.Format) -> tuple[dict[str, Any], list[str]] | None:
    """The demo's weather conversation as this format can write it, and what was left out."""
    simplifications: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
        ("the user's name", lambda request: request["messages"][1].pop("name", None)),
        ("the reasoning", lambda request: request["messages"][2].pop("reasoning_content", None)),
    ]
    for chosen in ([], [0], [1], [0, 1]):
        request = copy.deepcopy(WEATHER)
        for number in chosen:
            simplifications[number][1](request)
        try:
            fmt.render(request)
        except pawlette.PawletteError:
            continue
        return request, [simplifications[number][0] for number in chosen]
    return None


def _fence(text: str, language: str = "text") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{language}\n{text.rstrip(chr(10))}\n{ticks}"


def _options(fmt: pawlette.Format) -> list[str]:
    if fmt.options is None or not dataclasses.is_dataclass(fmt.options):
        return []
    lines = [
        "## Options",
        "",
        f"`get_format({fmt.name!r}).with_options(...)` takes these fields of"
        f" `{type(fmt.options).__name__}` (`--option NAME=VALUE` on the command line), each"
        " refusing a value of another type:",
        "",
        "| option | default | takes |",
        "|---|---|---|",
    ]
    annotations = option_annotations(type(fmt.options))
    for option in dataclasses.fields(fmt.options):
        value = getattr(fmt.options, option.name)
        shown = repr(value) if not callable(value) else getattr(value, "__name__", "a function")
        shown_cell = shown.replace("|", "\\|")
        takes = describe(annotations[option.name]) if option.name in annotations else "anything"
        lines.append(f"| `{option.name}` | `{shown_cell}` | {cell(takes)} |")
    derived = derived_options(fmt.options)
    if derived:
        lines += ["", "Derived from those (computed whenever they change, never set):", ""]
        for name in derived:
            described = (inspect.getdoc(getattr(type(fmt.options), name)) or "").split("\n\n")[0]
            lines.append(f"- `{name}`" + (f": {' '.join(described.split())}" if described else ""))
    variants = getattr(fmt.declaration, "variants", None) or {}
    if variants:
        lines += [
            "",
            'Named variants (`get_format("NAME:VARIANT")`, also `-f NAME:VARIANT`):',
            "",
        ]
        for name, options in sorted(variants.items()):
            lines.append(f"- `{fmt.name}:{name}`: `{options!r}`")
    return [*lines, ""]


def _measured_models(name: str) -> list[str]:
    """The templates the Supported models page (``docs/models.md``, measured by ``python -m
    bench.models``) found written in this format, with its figures and its date."""
    path = DOCS / "models.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    date = re.search(r"^\| date \| (.*) \|$", text, re.MULTILINE)
    if date is None:
        return []
    row = re.compile(
        rf"^\| \[{re.escape(name)}\]\(formats/{re.escape(name)}\.md\) \| ([^|]*) \| (.*)"
        r" \| ([^|]*) \| ([^|]*) \|$",
        re.MULTILINE,
    )
    found = row.findall(text)
    lines = ["## Models", ""]
    if not found:
        return [
            *lines,
            f"On the last measure of [Supported models](../models.md) ({date.group(1)}), no"
            " template of llama.cpp's collection was written in this format.",
            "",
        ]
    lines += [
        f"The templates of llama.cpp's collection written in this format, as"
        f" [Supported models](../models.md) measured them ({date.group(1)}):",
        "",
        "| variant | templates | renders identical | own turns parsed back |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {variant} | {templates} | {renders} | {turns} |"
        for variant, templates, renders, turns in found
    ]
    return [*lines, ""]


def format_page(name: str) -> str:
    fmt = pawlette.get_format(name)
    module = declaring_module(fmt)
    doc = module.__doc__ if module is not None and module.__doc__ else ""
    lines = [GENERATED, "", f"# {name}", "", f"*{html.escape(fmt.summary, quote=False)}*", ""]
    facts = [
        f"- **Get it**: `pawlette.get_format({name!r})`, `-f {name}` on the command line.",
        "- **Stop markers** (what an engine must stop on): "
        + ", ".join(map(marker_code, fmt.stop)),
        f"- **Markers** written as control tokens: {len(fmt.special_markers)}"
        + (
            "; spelt in text they are escaped with a backslash."
            if fmt.escape_pattern is not None
            else "; text that spells one is not escaped (it reads exactly only from token ids)."
        ),
    ]
    if module is not None:
        path = Path(module.__file__).resolve()
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
        facts.append(f"- **Declared in** `{where}`.")
    lines += [*facts, ""]
    if doc:
        lines += ["## The format", "", docstring_markdown(doc)]
    lines += _options(fmt)
    lines += _measured_models(name)
    example = _renderable(fmt)
    if example is not None:
        request, dropped = example
        note = f" ({', '.join(dropped)} left out: the format cannot write it)" if dropped else ""
        lines += [
            "## Example",
            "",
            f"The [demo](../getting-started.md)'s weather conversation{note}, rendered:",
            "",
            _fence(fmt.render(request).text),
            "",
        ]
    lines += [
        "## Parse machine",
        "",
        "What `pawlette table -f " + name + "` prints: the states of the parser, each with"
        " the reader of the text between markers, and its rows `state --marker--> target"
        " [actions]` (see [Architecture](../concepts/architecture.md)).",
        "",
        _fence(table_text(fmt)),
        "",
    ]
    return "\n".join(lines)


def formats_index() -> str:
    lines = [
        GENERATED,
        "",
        "# Formats",
        "",
        "Every format pawlette knows, one page each: the wire format, the decisions its"
        " declaration makes, its options, an example and its parse machine. `pawlette formats`"
        " lists the same; `pawlette detect MODEL_DIR` names the format a model directory's chat"
        " template writes. Which real model templates each format reproduces is measured on"
        " [Supported models](../models.md).",
        "",
        "| format | what it is | stop markers |",
        "|---|---|---|",
    ]
    for name in pawlette.formats():
        fmt = pawlette.get_format(name)
        stops = ", ".join(map(marker_code, fmt.stop))
        lines.append(f"| [{name}]({name}.md) | {cell(fmt.summary)} | {stops} |")
    return "\n".join([*lines, ""])


# ------------------------------------------------------------------ the command line


def _subcommands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, Any]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", (sub, helps.get(name))
                yield from _subcommands(sub, f"{prefix} {name}")


def _option_row(action: argparse.Action, command: str) -> str | None:
    if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
        return None
    if action.option_strings:
        flags = ", ".join(action.option_strings)
        if action.nargs != 0:
            metavar = action.metavar or action.dest.upper()
            flags += f" {metavar if isinstance(metavar, str) else ' '.join(metavar)}"
    else:
        flags = str(action.metavar or action.dest)
    # As argparse prints it: %(default)s and the like filled in, %% read as %.
    text = (action.help or "") % {**vars(action), "prog": command}
    if action.choices and not isinstance(action.choices, dict):
        text += f" (one of {', '.join(str(choice) for choice in action.choices)})"
    if action.required and action.option_strings:
        text += " (required)"
    elif action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
        text += f" (default: {action.default})"
    text = text.replace("|", "\\|").replace("\n", " ").strip()
    return f"| `{flags}` | {text} |"


def cli_page() -> str:
    lines = [
        GENERATED,
        "",
        "# Command line",
        "",
        "Every `pawlette` command and its options. Input files may be `-` for stdin. A user"
        " error prints one line on stderr and exits with status 2.",
        "",
    ]
    for command, (parser, summary) in _subcommands(build_parser(), "pawlette"):
        rows = [row for action in parser._actions if (row := _option_row(action, command))]
        has_subcommands = any(
            isinstance(action, argparse._SubParsersAction) for action in parser._actions
        )
        lines += [f"## `{command}`", ""]
        if summary:
            lines += [summary[0].upper() + summary[1:] + ".", ""]
        if rows and not has_subcommands:
            lines += ["| argument | meaning |", "|---|---|", *rows, ""]
    return "\n".join(lines)


# ------------------------------------------------------------------ benchmarks


def benchmark_pages() -> list[tuple[str, str, str, str]]:
    """``(file name, title, date, commit)`` of every page under ``docs/benchmarks/`` but the
    index, sorted by title (the bench scripts write them: ``bench/pages.py``)."""
    found = []
    for path in sorted((DOCS / "benchmarks").glob("*.md")):
        if path.name == "index.md":
            continue
        text = path.read_text(encoding="utf-8")
        title = next((line[2:] for line in text.splitlines() if line.startswith("# ")), path.stem)
        date = re.search(r"^\| date \| (.*) \|$", text, re.MULTILINE)
        commit = re.search(r"commit `([^`]+)`", text)
        found.append(
            (path.name, title, date.group(1) if date else "", commit.group(1) if commit else "")
        )
    return sorted(found, key=lambda page: page[1].lower())


def benchmarks_table() -> str:
    rows = ["| measure | measured on | commit |", "|---|---|---|"]
    for name, title, date, commit in benchmark_pages():
        rows.append(f"| [{cell(title)}]({name}) | {date} | `{commit}` |")
    return "\n".join(rows)


def fill(text: str, name: str, block: str, where: str) -> str:
    """``text`` with its ``<!-- NAME -->`` line replaced by ``block``."""
    marker = f"<!-- {name} -->"
    if marker not in text:
        raise ValueError(f"{where}: no {marker} line to fill")
    return text.replace(marker, block)


# ------------------------------------------------------------------ the site


def site_pages() -> dict[str, str]:
    """Every generated page of the site, by its path under ``docs/``: the formats' pages
    and their index, and the command-line reference.  The build writes them
    (``docs/hooks.py``); they are never files of the repository."""
    written = {"formats/index.md": formats_index(), "reference/cli.md": cli_page()}
    for name in pawlette.formats():
        written[f"formats/{name}.md"] = format_page(name)
    return written


def filled(path: str, markdown: str) -> str:
    """A hand-written page with its generated block filled in (the benchmarks' table)."""
    if path == "benchmarks/index.md":
        return fill(markdown, "benchmark pages", benchmarks_table(), path)
    return markdown


def navigation(nav: list[Any]) -> list[Any]:
    """``mkdocs.yml``'s navigation with the pages of its ``Formats`` and ``Benchmarks``
    sections listed: every registered format, every benchmark page."""
    sections = {
        "Formats": [
            "formats/index.md",
            *({name: f"formats/{name}.md"} for name in pawlette.formats()),
        ],
        "Benchmarks": [
            "benchmarks/index.md",
            *({title: f"benchmarks/{name}"} for name, title, _, _ in benchmark_pages()),
        ],
    }
    result: list[Any] = []
    for item in nav:
        if isinstance(item, dict) and len(item) == 1:
            ((title, value),) = item.items()
            if title in sections:
                item = {title: sections[title]}
            elif isinstance(value, list):
                item = {title: navigation(value)}
        result.append(item)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.gen", description=__doc__)
    parser.add_argument(
        "out", type=Path, help="write the generated pages under this directory, to read them"
    )
    arguments = parser.parse_args(argv)
    for relative, text in site_pages().items():
        path = arguments.out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["docstring_markdown", "filled", "format_page", "main", "navigation", "site_pages"]
