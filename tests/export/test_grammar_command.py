"""``pawlette export grammar`` for a format whose markers a grammar names by id alone
(Mistral's ``[TOOL_CALLS]``): by the tokenizer's ids with ``--tokenizer``, else as text with
a word on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tokenizers import Tokenizer

import pawlette

from ..support.small_bpe import small_tokenizer

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def _export(tmp_path: Path, *more: str) -> subprocess.CompletedProcess[str]:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    command = ["export", "grammar", "-f", "mistral", "--tools", str(tools), *more]
    return subprocess.run(
        [sys.executable, "-m", "pawlette", *command],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("syntax", ["lark", "gbnf"])
def test_markers_are_named_by_the_tokenizers_ids(tmp_path: Path, syntax: str) -> None:
    path = tmp_path / "tokenizer.json"
    small_tokenizer(pawlette.get_format("mistral").special_markers).save(str(path))
    result = _export(
        tmp_path, "--tool-choice", "required", "--syntax", syntax, "--tokenizer", str(path)
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    tool_calls = Tokenizer.from_file(str(path)).token_to_id("[TOOL_CALLS]")
    assert f"<[{tool_calls}]>" in result.stdout
    assert '"[TOOL_CALLS]"' not in result.stdout


def test_without_ids_the_markers_are_text_and_stderr_says_so(tmp_path: Path) -> None:
    result = _export(tmp_path, "--tool-choice", "required", "--syntax", "gbnf")
    assert result.returncode == 0, result.stderr
    assert '"[TOOL_CALLS]"' in result.stdout
    assert "give --tokenizer" in result.stderr


def test_a_tokenizer_without_the_markers_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    small_tokenizer(["<s>", "</s>"]).save(str(path))
    result = _export(tmp_path, "--tokenizer", str(path))
    assert result.returncode != 0
    assert "[INST]" in result.stderr or "marker" in result.stderr


def test_a_misspelt_tool_choice_is_named_by_its_option(tmp_path: Path) -> None:
    result = _export(tmp_path, "--tool-choice", "requird")
    assert result.returncode == 2
    assert result.stderr == (
        "pawlette export: --tool-choice: found 'requird', neither a mode nor a declared tool; "
        "expected 'auto', 'none', 'required', or a declared tool's name: one of "
        "'get_weather'\n"
    )
    result = _export(tmp_path, "--tool-choice", "get_weather")
    assert result.returncode == 0, result.stderr
