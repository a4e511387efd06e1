"""The benchmark tables and the whole-turn comparison's inputs (``bench/tables.py``,
``bench/peers.py``): a table writes as markdown, and on every shape pawlette and
transformers' ``parse_response`` read the same message, so the timed sides do the same job."""

from __future__ import annotations

import json

import pytest

import pawlette
from bench import peers
from bench.tables import Table


def test_a_table_writes_its_rows_as_markdown_and_its_facts_as_text() -> None:
    table = Table("Title", ["a", "b"], [["1", "2"], ["3", "4"]], {"load": "0.5"}, ["a note"])
    assert table.markdown() == "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\na note"
    text = table.text().splitlines()
    assert text[0] == "Title" and "load: 0.5" in text[1] and text[-1].strip() == "a note"


@pytest.mark.parametrize("name", ["pcml", "chatml", "chatml:qwen3.5", "gemma4"])
@pytest.mark.parametrize("shape", peers.SHAPE_NAMES)
def test_both_sides_read_the_same_message_on_every_shape(name: str, shape: str) -> None:
    from transformers.utils.chat_parsing.response_parser import parse_response
    from transformers.utils.chat_parsing.response_templates import load_response_template

    template, _ = peers.peer_templates()[name]
    text = peers.shape_completion(name, shape)
    ours = pawlette.get_format(name).parse(text)
    prefix = peers.shape_prompt(name) if name in peers.PEER_PREFIX else ""
    theirs = parse_response(text, load_response_template(template), prefix=prefix)
    assert not ours.warnings
    textual = name in peers.TEXT_PARAMETERS
    assert peers.comparable(
        ours.message, decoded=False, text_parameters=textual
    ) == peers.comparable(theirs, decoded=True, text_parameters=textual)
    expected = peers.shape_message(shape)
    assert len(ours.message.get("tool_calls") or ()) == len(expected.get("tool_calls") or ())


@pytest.mark.parametrize("name", pawlette.formats())
def test_the_streaming_completion_is_one_every_format_writes_and_reads(name: str) -> None:
    from bench.parse import big_completion

    fmt = pawlette.get_format(name)
    text = big_completion(fmt, 25_000)
    result = fmt.parse(text)
    assert len(text) >= 12_500 and not result.warnings
    message = result.message
    written = len(json.dumps(message.get("tool_calls") or [])) + len(message.get("content") or "")
    assert written >= 12_500  # the bulk came back as calls or as text, not dropped
