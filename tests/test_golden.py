"""Walk every golden folder: tests/golden/<format>/<case>/.

Each case checks render, mask, parse_conversation (of the rendering and of ``source.txt``)
and, where present, the parse of ``completion.txt`` (whole and one character at a time).

A case of a variant names it in its ``input.json`` (``"format": "kimi:k3"``, a variant of the
folder's format); the other cases are the folder's format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.engine.fold import fold, merge_assistant
from pawlette.openai import message_to_openai

from .helpers import canonical, feed_in_pieces, mask_text, sequential_ids

GOLDEN = Path(__file__).parent / "golden"
NOT_FORMATS = {"prompter"}  # golden data of other components
CASES = sorted(
    case
    for case in GOLDEN.glob("*/*")
    if (case / "input.json").exists() and case.parent.name not in NOT_FORMATS
)


def case_id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def load(case: Path) -> dict[str, Any]:
    """The case's request (without its ``format``)."""
    data: dict[str, Any] = json.loads((case / "input.json").read_text(encoding="utf-8"))
    data.pop("format", None)
    return data


def format_of(case: Path) -> pawlette.Format:
    """The folder's format, or the variant of it the case's ``input.json`` names."""
    data = json.loads((case / "input.json").read_text(encoding="utf-8"))
    name = data.get("format", case.parent.name)
    assert name.split(":")[0] == case.parent.name, f"{case}: {name} is not a variant of its folder"
    return pawlette.get_format(name)


def check_file(path: Path, actual: str, update: bool) -> None:
    if update:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing: run pytest --update-golden and review it"
    assert actual == path.read_text(encoding="utf-8"), f"{path} differs"


def test_every_golden_folder_is_a_registered_format() -> None:
    folders = {path.name for path in GOLDEN.iterdir() if path.is_dir()} - NOT_FORMATS
    assert folders <= set(pawlette.formats()), folders - set(pawlette.formats())
    assert {case.parent.name for case in CASES} == folders


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_render_and_mask(case: Path, update_golden: bool) -> None:
    fmt = format_of(case)
    data = load(case)
    rendering = fmt.render(
        data, add_generation_prompt=bool(data.get("add_generation_prompt", False))
    )
    assert rendering.text == "".join(segment.text for segment in rendering.segments)
    check_file(case / "rendered.txt", rendering.text, update_golden)
    check_file(case / "mask.txt", mask_text(rendering), update_golden)


def request_of(data: dict[str, Any]) -> dict[str, Any]:
    return canonical({"messages": data["messages"], "tools": data.get("tools")})


# A rendering that ends in a generation prompt is not a whole conversation: not parsed back.
WHOLE = [case for case in CASES if not load(case).get("add_generation_prompt")]


@pytest.mark.parametrize("case", WHOLE, ids=case_id)
def test_rendered_text_parses_back(case: Path) -> None:
    data = load(case)
    fmt = format_of(case)
    text = (case / "rendered.txt").read_text(encoding="utf-8")
    parsed = fmt.parse_conversation(text, strict=True)
    assert parsed.to_request() == request_of(data)
    assert not parsed.warnings


@pytest.mark.parametrize("case", [c for c in CASES if (c / "source.txt").exists()], ids=case_id)
def test_source_text_parses_to_input(case: Path) -> None:
    fmt = format_of(case)
    source = (case / "source.txt").read_text(encoding="utf-8")
    if fmt.name == "chatglm3":
        # The seed's prompt document writes a newline before each role token for reading;
        # the real prompt has none (and pawlette reads every newline as text).
        source = re.sub(r"\n(?=<\|(system|user|assistant|observation)\|>)", "", source)
    parsed = fmt.parse_conversation(source, strict=True)
    assert parsed.to_request() == request_of(load(case))


@pytest.mark.parametrize("case", [c for c in CASES if (c / "completion.txt").exists()], ids=case_id)
def test_completion_parses(case: Path, update_golden: bool) -> None:
    fmt = format_of(case)
    completion = (case / "completion.txt").read_text(encoding="utf-8")
    result = fmt.parse(completion, id_factory=sequential_ids())
    actual = {"message": result.message, "finish_reason": result.finish_reason}
    if result.warnings:
        actual["warnings"] = [w.message for w in result.warnings]
    check_file(
        case / "parsed.json", json.dumps(actual, ensure_ascii=False, indent=2) + "\n", update_golden
    )
    # Streaming one character at a time folds to the same message.
    events = feed_in_pieces(fmt, completion, [1], conversation=False)
    streamed = merge_assistant(fold(events, fmt.grammar.fields).messages)
    assert message_to_openai(streamed) == result.message
