"""The rest of an opener that the generation prompt leaves out, as the grammar names it."""

from __future__ import annotations

from pawlette.export.grammar import export_grammar


def test_the_grammar_names_the_prompt_rest_for_what_it_is() -> None:
    # RWKV's prompt ends 'Assistant:' and the model writes the ' ' of 'Assistant: ' itself.
    lark = export_grammar("rwkv", [], "auto")
    assert 'prompt_rest: " "' in lark.splitlines()
    assert "start: prompt_rest? " in lark
    assert "reasoning" not in lark


def test_a_reasoning_block_keeps_its_name() -> None:
    lark = export_grammar("smollm3", [], "auto")
    assert "start: reasoning? " in lark
