"""``python -m bench.models``: the Supported models page is measured, dated and complete."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
import transformers

import pawlette
from bench.models import PAGE, _cell, _name, main, measure_model
from tests.support.conversations import generate_conversations
from tests.support.template_corpus import (
    NEWER_TEMPLATES,
    CorpusTemplate,
    TokenFacts,
    corpus,
    corpus_template,
)

VERDICT = re.compile(
    r"(inferred and verified: \d+/\d+ renders, \d+/\d+ own turns"
    r"|refused: .+|not recognised)"
)


def test_a_declared_family_names_its_family_and_variant() -> None:
    conversations = generate_conversations(6)
    model = measure_model(corpus_template("Qwen-Qwen2.5-7B-Instruct"), conversations)
    assert (model.family, model.variant) == ("chatml", "qwen2.5")
    assert model.detect == "declared `chatml:qwen2.5`" and not model.inferred
    assert re.match(r"\d+/\d+", model.matrix.renders)


# A template no family writes (every corpus template has one): a layout of its own.
UNKNOWN = CorpusTemplate(
    "handmade-unknown",
    "{%- for message in messages %}<<{{ message.role }}>>{{ message.content }}{%- endfor %}"
    "{%- if add_generation_prompt %}<<assistant>>{%- endif %}",
    TokenFacts(None, None, "handmade: reads no special token"),
)


def test_a_template_no_family_writes_gets_what_detect_infers() -> None:
    conversations = generate_conversations(6)
    model = measure_model(UNKNOWN, conversations)
    assert (model.family, model.variant, model.matrix.renders) == ("", "", "—")
    assert VERDICT.fullmatch(model.detect), model.detect
    assert model.inferred == model.detect.startswith("inferred and verified")


def test_the_page_says_when_on_what_and_against_which_peers(tmp_path: Path) -> None:
    page = tmp_path / "models.md"
    assert main(["--only", "Qwen-Qwen3-0.6B", "--conversations", "4", "--out", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "| command | `python -m bench.models --only Qwen-Qwen3-0.6B --conversations 4" in text
    assert re.search(r"\| date \| \d{4}-\d\d-\d\d \d\d:\d\d UTC \|", text)
    assert re.search(rf"\| pawlette \| {pawlette.__version__}, commit `[0-9a-f]{{7,}}", text)
    assert f"transformers {transformers.__version__}" in text
    assert f"jinja2 {jinja2.__version__}" in text
    row = "| Qwen-Qwen3-0.6B | [chatml](formats/chatml.md) / default | "
    assert row in text
    assert "| `Qwen-Qwen3-0.6B` | — / <code>&lt;&#124;im_end&#124;&gt;</code> | " in text
    assert "| [chatml](formats/chatml.md) | default | `Qwen-Qwen3-0.6B` |" in text


def test_engine_results_when_there_are_some_are_a_column(tmp_path: Path) -> None:
    results = tmp_path / "tool_choice.json"
    results.write_text(json.dumps({"Qwen-Qwen3-0.6B": "required: 3/3"}))
    page = tmp_path / "models.md"
    arguments = ["--only", "Qwen-Qwen3-0.6B", "--conversations", "2", "--out", str(page)]
    assert main([*arguments, "--engine-results", str(results)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "| template renders | engine tool choice |" in text
    assert text.count("| required: 3/3 |") == 1 and "- **engine tool choice**" in text
    assert main([*arguments, "--engine-results", str(tmp_path / "none.json")]) == 0
    assert "engine tool choice" not in page.read_text(encoding="utf-8")


def test_cells_keep_pipes_and_markers_from_breaking_the_table() -> None:
    assert _cell("`a|b` and c|d <e>") == "<code>a&#124;b</code> and c\\|d &lt;e&gt;"


def test_the_committed_page_is_the_commands_over_the_whole_collection() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith("<!-- Written by python -m bench.models;")
    command = re.search(r"^\| command \| `([^`]*)` \|$", text, re.MULTILINE)
    assert command is not None and command.group(1).startswith("python -m bench.models")
    assert "--only" not in command.group(1) and "--out" not in command.group(1)
    for template in (*corpus(), *map(corpus_template, NEWER_TEMPLATES)):
        assert f"| `{template.name}` |" in text, template.name  # in the tokens' table
        assert f"| {_name(template.name)} |" in text, template.name
    for family in re.findall(r"\[(\S+)\]\(formats/\1\.md\)", text):
        assert family in pawlette.formats()
