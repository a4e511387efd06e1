"""A tools block written without tools too (``ToolsBlock(always=True)``), one item a tool:
the exported template writes it as render does, with tools and without (``tools`` is then
None in a Hugging Face caller's template)."""

from __future__ import annotations

import dataclasses

import pytest
from transformers.utils.chat_template_utils import render_jinja_template

import pawlette
from pawlette.declare import Layout, ToolsBlock, declare
from pawlette.export import export_jinja

TOOL = {
    "type": "function",
    "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
}


@pytest.mark.parametrize("tools", [None, [TOOL]], ids=["without tools", "with a tool"])
def test_an_always_written_block_of_items_exports_as_it_renders(tools: list | None) -> None:
    chatml = pawlette.get_format("chatml").declaration
    assert isinstance(chatml, Layout)
    concepts = tuple(
        dataclasses.replace(concept, always=True) if isinstance(concept, ToolsBlock) else concept
        for concept in chatml.concepts
    )
    fmt = declare(dataclasses.replace(chatml, concepts=concepts))
    block = fmt.declaration.concept(ToolsBlock)  # type: ignore[union-attr]
    assert block.always and not block.array
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    rendered = fmt.render(messages, tools=tools).text
    assert "<tools>" in rendered
    exported = render_jinja_template(
        conversations=[messages], tools=tools, chat_template=export_jinja(fmt)
    )[0][0]
    assert exported == rendered
