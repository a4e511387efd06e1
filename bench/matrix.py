"""Which models pawlette supports: every template of llama.cpp's corpus against pawlette.

For each of the 70 real chat templates in llama.cpp's ``models/templates`` (the pinned
llama-cpp-python sdist, read by ``tests/support/template_corpus.py``), with the model's
``bos_token``/``eos_token``:

- **detected**: the format and variant :func:`pawlette.detect.detect_template` names, or
  "not recognised";
- **renders identical**: of the generated conversations (``tests/support/conversations.py``,
  every kind), how many renders of the detected format equal the template's, as
  transformers' ``apply_chat_template`` makes them (``tests/support/template_compare.py``);
  the template's refusals that the format refused too count as agreeing; the others are
  counted by why (differ, refused by pawlette only, the format failed), and conversations
  only the template refuses are counted beside the fraction (no render to compare with).
  Every kind is tried, also those a family declares it cannot express (its own tests
  select them);
- **own turns parsed back**: of the assistant turns the template itself writes, how many the
  format parses back into the message, as the format declares it gives a message back
  (reasoning the template never writes, text it trims: ``Rendering.losses``); the rest are
  counted by why;
- **template renders**: how many of the conversations the template renders at all (it
  raises on the others), and the kinds it never rendered;
- **engine tool choice**: read from a results file others' engine runs write (a JSON object
  of template name to a short result), else "not run".

The template's clock reads 26 Jul 2024, and a turn of calls without text is passed with
``"content": ""`` (templates that read the content of every message need it).

Usage, from the repository root::

    python -m bench.matrix                                   # the table on stdout
    python -m bench.matrix --write matrix.md                 # and a page of it
    python -m bench.matrix --conversations 20 --only 'Qwen*'

The site's Supported models page is ``python -m bench.models`` (this table and what
``pawlette detect`` infers for the other templates).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import fnmatch
import functools
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pawlette
from pawlette.declare import layout_of
from pawlette.detect import detect_template
from pawlette.errors import PawletteError
from tests.declare.conversations import normalise_completion
from tests.support.conversations import Conversation, generate_conversations
from tests.support.template_compare import Reference, TurnReport, compare_renders, own_turns
from tests.support.template_corpus import CorpusTemplate, corpus

RESULTS = Path("bench/results/tool_choice.json")


@dataclasses.dataclass(frozen=True)
class Row:
    template: str
    tokens: str
    detected: str
    renders: str
    turns: str
    coverage: str
    never: str
    engine: str
    seconds: float


def _tokens(template: CorpusTemplate) -> str:
    if template.tokens.unknown:
        return "unknown"
    # In code spans: a token such as <s> would otherwise be read as HTML.
    bos, eos = (
        f"`{token}`" if token else "—" for token in (template.bos_token, template.eos_token)
    )
    return f"{bos} / {eos}"


def _option_variables(fmt: pawlette.Format) -> dict[str, Any]:
    """A format's text options, as template variables (Llama 3's ``date_string``)."""
    options = fmt.options
    if options is None or not dataclasses.is_dataclass(options):
        return {}
    return {
        item.name: getattr(options, item.name)
        for item in dataclasses.fields(options)
        if isinstance(getattr(options, item.name), str)
    }


@functools.cache
def _prompt_tails() -> dict[str, tuple[str | None, str | None, str | None]]:
    """By template, what its generation prompt writes after the assistant's opener that its
    past turns do not hold (Gemma 4's empty thought block), what those turns write there
    instead (DeepSeek V3.2's ``</think>``), and the opener a turn is cut after where the
    prompt render does not begin the turn's (Command R+'s prompt writes a fixed system turn
    before it), as its family case declares them."""
    import importlib
    import pkgutil

    from tests.formats import families

    tails: dict[str, tuple[str | None, str | None, str | None]] = {}
    for module in pkgutil.iter_modules(families.__path__):
        for case in importlib.import_module(f"{families.__name__}.{module.name}").CASES:
            if case.prompt_tail or case.opener:
                tails[case.template] = (case.prompt_tail, case.stand_in, case.opener)
    return tails


def _prompts(conversation: Conversation) -> tuple[bool, ...]:
    return (False,) if conversation.ends_with == "assistant" else (True, False)


def _coverage(reference: Reference, conversations: list[Conversation]) -> tuple[str, str]:
    """How many renders the template makes, and the kinds no rendered conversation held."""
    rendered = total = 0
    seen: Counter[str] = Counter()
    kept: set[str] = set()
    for conversation in conversations:
        seen.update(conversation.kinds)
        ok = True
        for prompt in _prompts(conversation):
            total += 1
            if (
                reference.render_request(conversation.request, add_generation_prompt=prompt).text
                is None
            ):
                ok = False
            else:
                rendered += 1
        if ok:
            kept.update(conversation.kinds)
    never = sorted(set(seen) - kept)
    return f"{rendered}/{total}", ", ".join(never) if never else "—"


def measure(
    template: CorpusTemplate,
    conversations: list[Conversation],
    engine: dict[str, str],
    *,
    seed: int = 0,
) -> Row:
    """``conversations``: generated with ``seed``; the own turns are read from as many made
    with the same seed without the format's own markers in their text (a text holding the
    format's end marker cannot be read back from text, only from token ids)."""
    started = time.perf_counter()
    variables = template.tokens.variables()
    try:
        # The declared families only (inference has its own table: python -m bench.infer).
        detection = detect_template(template.text, variables, infer=False)
        fmt = detection.format
        detected = "not recognised" if fmt is None else f"{detection.name}"
    except PawletteError as error:
        fmt, detected = None, f"error: {error}"
    base = Reference(
        template.text,
        template.name,
        template.bos_token,
        template.eos_token,
        variables={},
        empty_content=True,
        caller_variables=template.caller_variables,
        text_arguments=template.text_arguments,
        caller_messages=template.caller_messages,
    )
    coverage, never = _coverage(base, conversations)
    renders = turns = "—"
    if fmt is not None:
        layout = layout_of(fmt)
        # The template's variables as the format's options set them (QwQ's enable_thinking),
        # as detection and the family tests render it.
        declared = layout.reference_variables() if layout is not None else {}
        # (an option a switch gives the template under another name is not the template's
        # variable: IFM's template refuses a variable it does not know)
        renamed = {
            switch.option
            for switch in (layout.switches if layout is not None else ())
            if switch.variable != switch.option
        }
        options = {
            name: value for name, value in _option_variables(fmt).items() if name not in renamed
        }
        reference = dataclasses.replace(base, variables={**declared, **options})
        if layout is not None and layout.today is not None:  # the clock at the date option
            reference = dataclasses.replace(reference, today=getattr(fmt.options, layout.today))
        report = compare_renders(fmt, reference, conversations)
        agreeing = report.identical + report.both_refused
        # A conversation the template refuses and pawlette writes has no render to compare
        # with (Kimi K2's templates mutate a list, which transformers' sandbox refuses): it is
        # counted beside the fraction, not in it.
        template_only = len(report.reference_refused) - report.both_refused
        why = [
            f"{count} {what}"
            for count, what in (
                (len(report.differing), "differ"),
                (len(report.pawlette_refused), "refused by pawlette only"),
                (len(report.pawlette_failed), "pawlette failed"),
            )
            if count
        ]
        if template_only:
            why.append(f"{template_only} refused by the template only, written by pawlette")
        renders = f"{agreeing}/{report.compared - template_only}" + (
            f" ({'; '.join(why)})" if why else ""
        )
        # Compared with the message as the format declares it gives it back (reasoning a
        # template never writes, text it trims): documented losses are not failures.
        declared = functools.partial(normalise_completion, fmt, tools_known=True)
        readable = generate_conversations(len(conversations), seed=seed, avoid=fmt.special_markers)
        tail, stand_in, opener = _prompt_tails().get(template.name, (None, None, None))
        turn_report = own_turns(
            fmt,
            reference,
            readable,
            normalise=declared,
            within_losses=True,
            prompt_tail=tail,
            stand_in=stand_in,
            opener=opener,
        )
        turns = _turns(turn_report)
    return Row(
        template=template.name,
        tokens=_tokens(template),
        detected=detected,
        renders=renders,
        turns=turns,
        coverage=coverage,
        never=never,
        engine=engine.get(template.name, "not run"),
        seconds=time.perf_counter() - started,
    )


# Turns the template does not write on its own: it refuses the conversation, or its render
# with the generation prompt does not begin its render with the turn (DeepSeek R1's prompt
# opens a block its past turns drop), so no text of the turn can be cut out.
UNWRITTEN = {"refused": "refused by the template", "not a prefix": "not cut out of its renders"}


def _turns(report: TurnReport) -> str:
    """Parsed back of the turns the template writes, then why the others failed, counted
    ("40/42 (2 differ in content; 5 refused by the template)")."""
    failed: Counter[str] = Counter()
    unwritten: Counter[str] = Counter()
    for problem in report.problems:
        what = problem.problem
        if what in UNWRITTEN:
            unwritten[UNWRITTEN[what]] += 1
        else:
            failed[f"differ in {problem.field}" if what == "differs" else what] += 1
    written = report.total - sum(unwritten.values())
    notes = [
        ", ".join(f"{count} {why}" for why, count in counts.most_common())
        for counts in (failed, unwritten)
        if counts
    ]
    if report.within_losses:
        notes.insert(0, f"{report.within_losses} as its page says it loses")
    return f"{report.parsed_back}/{written}" + (f" ({'; '.join(notes)})" if notes else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(rows: list[Row]) -> str:
    lines = [
        "| template | bos / eos | detected | renders identical | own turns parsed back"
        " | template renders | kinds it never renders | engine tool choice |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = (
            row.template,
            row.tokens,
            row.detected,
            row.renders,
            row.turns,
            row.coverage,
            row.never,
            row.engine,
        )
        lines.append(
            "| "
            + " | ".join(f"`{cells[0]}`" if i == 0 else _cell(c) for i, c in enumerate(cells))
            + " |"
        )
    return "\n".join(lines)


def _commit() -> str:
    try:
        result = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        )
    except OSError:
        return "unknown"
    return result.stdout.strip() or "unknown"


def _engine_results(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise SystemExit(
            f"{path}: a JSON {type(data).__name__}; expected an object of template to result"
        )
    return {str(name): str(result) for name, result in data.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.matrix", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--conversations", type=int, default=50, help="generated conversations per template"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="*", help="a glob over template names")
    parser.add_argument("--write", type=Path, help="also write the Markdown page there")
    parser.add_argument(
        "--engine-results", type=Path, default=RESULTS, help="the engine runs' results file"
    )
    options = parser.parse_args(argv)

    wall, cpu = time.perf_counter(), time.process_time()
    conversations = generate_conversations(options.conversations, seed=options.seed)
    engine = _engine_results(options.engine_results)
    templates = [t for t in corpus() if fnmatch.fnmatchcase(t.name, options.only)]
    rows = []
    for template in templates:
        rows.append(measure(template, conversations, engine, seed=options.seed))
        print(f"{template.name}: {rows[-1].seconds:.2f} s", file=sys.stderr)
    markdown = table(rows)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    load = os.getloadavg()
    recognised = sum(1 for row in rows if row.renders != "—")
    footer = (
        f"{len(rows)} templates, {recognised} recognised; {options.conversations} conversations"
        f" each (seed {options.seed}); {wall:.1f} s wall, {cpu:.1f} s CPU, load average"
        f" {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(markdown)
    print()
    print(footer)
    if options.write is not None:
        command = "python -m bench.matrix " + " ".join(argv if argv is not None else sys.argv[1:])
        header = (
            f"Generated by `{command.strip()}` on {datetime.date.today().isoformat()},"
            f" commit {_commit()}, pawlette {pawlette.__version__}."
        )
        page = "\n\n".join(
            [
                header,
                "# Supported models",
                "Every chat template in llama.cpp's template collection, compared with pawlette."
                " Columns: the model's bos/eos tokens; the format pawlette detects; of the"
                " generated conversations, how many renders equal the template's (refusals by"
                " both count as equal); of the assistant turns the template writes, how many"
                " pawlette parses back; how many renders the template makes at all and the"
                " kinds of conversation it never renders; tool choice on a real engine.",
                markdown,
                footer,
            ]
        )
        options.write.parent.mkdir(parents=True, exist_ok=True)
        options.write.write_text(page + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
