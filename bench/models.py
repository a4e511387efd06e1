"""The Supported models page: ``docs/models.md``, measured, never typed.

For every chat template of llama.cpp's collection (``tests/support/template_corpus.py``),
the row of :mod:`bench.matrix` (the declared family :func:`pawlette.detect.detect_template`
names, renders identical to transformers' ``apply_chat_template`` on generated
conversations, the template's own assistant turns parsed back) and what ``pawlette detect``
does with it when no declared family writes it (a declaration inferred and verified, or
refused, with why).  The page says when, on which commit and against which versions of the
peers it was measured, sums the rows by family and variant, and lists every template.

Usage, from the repository root (the peers come with the ``test`` extra)::

    python -m bench.models                      # measure and rewrite docs/models.md
    python -m bench.models --only 'Qwen*' --out /tmp/models.md --conversations 20
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import fnmatch
import html
import os
import re
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pawlette
from pawlette.detect import detect_template
from pawlette.errors import PawletteError
from tests.support.conversations import Conversation, generate_conversations
from tests.support.gguf_checks import CHAINING
from tests.support.llama_cpp_build import LLAMA_CPP_PYTHON_VERSION, XLLAMACPP_VERSION
from tests.support.template_corpus import NEWER_TEMPLATES, CorpusTemplate, corpus, corpus_template

from . import pages
from .matrix import RESULTS, Row, _engine_results, measure

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "models.md"
COMMAND = "python -m bench.models"
NOT_RECOGNISED = "not recognised"


@dataclasses.dataclass(frozen=True)
class Model:
    """One template's row: the matrix's figures and what ``pawlette detect`` says."""

    matrix: Row
    family: str
    """The declared family that writes the template ("" when none does)."""
    variant: str
    """Its named variant ("" for the family's defaults)."""
    detect: str
    """What ``pawlette detect`` does with the template, in a few words."""
    inferred: bool
    """No declared family writes it and inference gave a verified declaration."""


def detect_column(template: CorpusTemplate, family: str, variant: str) -> tuple[str, bool]:
    """``pawlette detect``'s result for ``template``, and whether it inferred a format."""
    if family:
        return f"declared `{family}:{variant}`" if variant else f"declared `{family}`", False
    try:
        detection = detect_template(template.text, template.tokens.variables(), declared=False)
    except PawletteError as error:
        return f"error: {error}", False
    inference = detection.inference
    if inference is None:
        return NOT_RECOGNISED, False
    verification = inference.verification
    if detection.inferred and verification is not None:
        return (
            f"inferred and verified: {verification.identical}/{verification.compared}"
            f" renders, {verification.parsed_back}/{verification.turns} own turns",
            True,
        )
    why = (inference.refusal or "no declaration").splitlines()[0]
    why = why if len(why) <= 70 else why[:69] + "…"
    return f"refused: {why}", False


def measure_model(
    template: CorpusTemplate,
    conversations: list[Conversation],
    engine: Mapping[str, str] | None = None,
) -> Model:
    row = measure(template, conversations, dict(engine or {}))
    declared = row.detected != NOT_RECOGNISED and not row.detected.startswith("error:")
    family, _, variant = row.detected.partition(":") if declared else ("", "", "")
    detect, inferred = detect_column(template, family, variant)
    return Model(row, family, variant, detect, inferred)


def _fraction(text: str) -> tuple[int, int] | None:
    found = re.match(r"(\d+)/(\d+)", text)
    return None if found is None else (int(found.group(1)), int(found.group(2)))


def _sum(texts: Sequence[str]) -> str:
    parts = [part for part in map(_fraction, texts) if part is not None]
    if not parts:
        return "—"
    return f"{sum(part[0] for part in parts)}/{sum(part[1] for part in parts)}"


def _cell(text: str) -> str:
    """Text for a table cell, read alike by mkdocs and GitHub: pipes escaped, ``<`` and
    ``&`` as entities, and a code span holding a pipe written as HTML (``\\|`` would show
    in mkdocs' code, a bare pipe would split GitHub's cell)."""
    pieces = re.split(r"(`[^`]*`)", text.replace("\n", " "))
    written = []
    for piece in pieces:
        if piece.startswith("`") and "|" in piece:
            written.append(f"<code>{html.escape(piece[1:-1]).replace('|', '&#124;')}</code>")
        elif piece.startswith("`"):
            written.append(piece)
        else:
            written.append(html.escape(piece, quote=False).replace("|", "\\|"))
    return "".join(written)


def _name(template: str) -> str:
    """A template's name as plain text, which wraps at its hyphens in a narrow column."""
    return html.escape(template, quote=False).replace("_", "\\_")


def _family_link(family: str) -> str:
    return f"[{family}](formats/{family}.md)" if family else "—"


def _totals(declared: Sequence[Model]) -> str:
    """The declared families' renders and own turns over every template, in one line."""
    parts = []
    for what, texts in (
        ("renders identical", [model.matrix.renders for model in declared]),
        ("own turns parsed back", [model.matrix.turns for model in declared]),
    ):
        total = _fraction(_sum(texts))
        if total is not None and total[1]:
            parts.append(f"{total[0]}/{total[1]} {what} ({100 * total[0] / total[1]:.1f}%)")
    if not parts:
        return "No declared family writes a template of the collection."
    return "Over the declared families' templates: " + "; ".join(parts) + "."


def families_table(models: Sequence[Model]) -> str:
    groups: dict[tuple[str, str], list[Model]] = {}
    for model in models:
        if model.family:
            groups.setdefault((model.family, model.variant), []).append(model)
    lines = [
        "| family | variant | templates | renders identical | own turns parsed back |",
        "|---|---|---|---|---|",
    ]
    for (family, variant), members in sorted(groups.items()):
        names = ", ".join(f"`{model.matrix.template}`" for model in members)
        lines.append(
            f"| {_family_link(family)} | {variant or 'default'} | {names}"
            f" | {_sum([model.matrix.renders for model in members])}"
            f" | {_sum([model.matrix.turns for model in members])} |"
        )
    return "\n".join(lines)


def templates_table(models: Sequence[Model]) -> str:
    engine = any(model.matrix.engine != "not run" for model in models)
    lines = [
        "| template | family / variant | renders identical | own turns parsed back"
        " | `pawlette detect` | template renders |" + (" engine tool choice |" if engine else ""),
        "|---|---|---|---|---|---|" + ("---|" if engine else ""),
    ]
    for model in models:
        row = model.matrix
        cells = [
            _name(row.template),
            _family_link(model.family)
            + (f" / {model.variant or 'default'}" if model.family else ""),
            _cell(row.renders),
            row.turns,
            _cell(model.detect),
            row.coverage,
        ]
        if engine:
            cells.append(_cell(row.engine))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tokens_table(models: Sequence[Model]) -> str:
    """What each template is given, and the kinds of conversation it refuses."""
    lines = ["| template | bos / eos | kinds it never renders |", "|---|---|---|"]
    for model in models:
        row = model.matrix
        lines.append(f"| `{row.template}` | {_cell(row.tokens)} | {_cell(row.never)} |")
    return "\n".join(lines)


def _peer_versions() -> str:
    import jinja2
    import transformers

    return (
        f"transformers {transformers.__version__} (`apply_chat_template`), jinja2"
        f" {jinja2.__version__}; the templates of llama.cpp's `models/templates` as"
        f" llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}'s sdist ships them, and the"
        f" {len(NEWER_TEMPLATES)} that sdist lacks ({', '.join(NEWER_TEMPLATES)}) as"
        f" xllamacpp {XLLAMACPP_VERSION}'s sdist ships them"
    )


def render_page(
    models: Sequence[Model],
    command: str,
    conversations: int,
    seed: int,
    run: str,
    out: Path = PAGE,
) -> str:
    declared = [model for model in models if model.family]
    inferred = [model for model in models if model.inferred]
    families = sorted({model.family for model in declared})
    unmatched = [name for name in pawlette.formats() if name not in families]
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = pages.commit(ignoring=[out] if out.resolve().is_relative_to(ROOT) else [])
    lines = [
        "<!-- Written by python -m bench.models; rerun it, never edit this page. -->",
        "",
        "# Supported models",
        "",
        "Every chat template of llama.cpp's template collection, each with its model's"
        " `bos_token` and `eos_token`, compared with pawlette. For a model directory of your"
        " own, `pawlette detect MODEL_DIR` does the same comparison and names its format.",
        "",
        "- **family** and **variant**: the declared format (and its named option set) whose"
        " renders equal the template's on `pawlette detect`'s probe conversations; its page"
        " says how it writes a conversation;",
        f"- **renders identical**: of the renders of {conversations} generated conversations of"
        " every kind (one ending on a user or tool message rendered with and without the"
        " generation prompt, one ending on an answer without it: more renders than"
        " conversations), how many the family renders byte for byte"
        " as transformers renders the template (a conversation both refuse counts as"
        " identical); the rest, by why, and beside the fraction the conversations only the"
        " template refuses (no render to compare with);",
        "- **own turns parsed back**: of the assistant turns the template writes, how many the"
        " family parses back into the message as its page declares it gives a message back"
        " (reasoning the template never writes, text it trims); the rest, by why;",
        "- **`pawlette detect`**: for a template no declared family writes, detection infers"
        " a declaration from the template and verifies it on conversations of its own, or"
        " refuses and says why;",
        "- **template renders**: how many of the conversations the template renders at all"
        " (it raises on the others); [below](#what-each-template-is-given), the kinds it"
        " never renders.",
    ]
    if any(model.matrix.engine != "not run" for model in models):
        lines[-1] = lines[-1][:-1] + ";"
        lines.append(
            "- **engine tool choice**: `tool_choice` through `pawlette serve` on a real"
            " llama.cpp (`python -m bench.engine --corpus --seeds 3 --results"
            " bench/results/tool_choice.json`): requests passed of those sent, per tool choice,"
            " to a tiny random-weight model biased towards the format's markers, 96 tokens at"
            " most. A request passes when its calls go only to allowed functions with JSON-object"
            " arguments, at least one comes under `required` or a named function and none under"
            " `none`, no marker text is in the content and the finish reason is right; most"
            " misses are answers the random model had not finished within 96 tokens. For"
            f" {' and '.join(f'`{name}`' for name in sorted(CHAINING))} the forced choices are"
            " asked with `parallel_tool_calls` false: allowed several calls, their random models"
            " write one after another until the limit."
        )
    lines += [
        "",
        "| | |",
        "|---|---|",
        f"| command | `{command}` |",
        f"| date | {date} |",
        f"| pawlette | {pawlette.__version__}, commit `{commit}` |",
        f"| peers | {_peer_versions()} |",
        f"| conversations | {conversations} per template (seed {seed}) |",
        f"| run | {run} |",
        "",
        "## Summary",
        "",
        f"Of {len(models)} templates, {len(declared)} are written by a declared family"
        f" ({', '.join(f'`{name}`' for name in families) or 'none'})"
        + (
            f", and `pawlette detect` infers and verifies a declaration for {len(inferred)}"
            f" of the {len(models) - len(declared)} others."
            if len(declared) < len(models)
            else "."
        ),
        "",
        _totals(declared),
    ]
    if unmatched:
        lines += [
            "",
            "Formats that write none of the collection's templates: "
            + ", ".join(f"[`{name}`](formats/{name}.md)" for name in unmatched)
            + ".",
        ]
    lines += [
        "",
        "## By family",
        "",
        families_table(models),
        "",
        "## Every template",
        "",
        templates_table(models),
        "",
        "## What each template is given",
        "",
        "The `bos_token` and `eos_token` each template is rendered with (the model's"
        " tokenizer's), and the kinds of generated conversation it never renders.",
        "",
        tokens_table(models),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=50, help="per template")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="*", help="a glob over template names")
    parser.add_argument("--out", type=Path, default=PAGE, help="the page (docs/models.md)")
    parser.add_argument(
        "--engine-results",
        type=Path,
        default=RESULTS,
        help="tool_choice results of real engine runs, by template (a column when present)",
    )
    options = parser.parse_args(argv)
    given = list(sys.argv[1:] if argv is None else argv)

    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    wall, cpu = time.perf_counter(), time.process_time()
    conversations = generate_conversations(options.conversations, seed=options.seed)
    engine = _engine_results(options.engine_results)
    collection = [*corpus(), *(corpus_template(name) for name in NEWER_TEMPLATES)]
    templates = [t for t in collection if fnmatch.fnmatchcase(t.name, options.only)]
    if not templates:
        raise SystemExit(f"--only {options.only!r}: no template of the collection matches")
    models = []
    for template in templates:
        models.append(measure_model(template, conversations, engine))
        model = models[-1]
        print(f"{template.name}: {model.matrix.detected}; {model.detect}", file=sys.stderr)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    run = f"{wall:.1f} s wall, {cpu:.1f} s CPU; {pages.machine(load)}"
    command = " ".join([COMMAND, *map(shlex.quote, given)])
    page = render_page(models, command, options.conversations, options.seed, run, options.out)
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(page, encoding="utf-8")
    shown = options.out.relative_to(ROOT) if options.out.is_relative_to(ROOT) else options.out
    print(f"wrote {shown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
