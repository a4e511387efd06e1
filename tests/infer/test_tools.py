"""Tools inferred from real templates: how their JSON is written."""

from __future__ import annotations

from pawlette.declare import ToolsBlock
from pawlette.infer import infer_template

from ..support.template_corpus import corpus_template
from .reka import reka


def test_tools_escaped_as_the_template_escapes_them() -> None:
    """Reka Edge writes tools with ``tojson(ensure_ascii=True)``; Qwen 2.5 keeps non-ASCII."""
    layout = reka().layout
    assert layout is not None
    (tools,) = [concept for concept in layout.concepts if isinstance(concept, ToolsBlock)]
    assert tools.ascii
    template = corpus_template("Qwen-Qwen2.5-7B-Instruct")
    kept = infer_template(template.text, bos_token=template.bos_token).layout
    assert kept is not None
    (tools,) = [concept for concept in kept.concepts if isinstance(concept, ToolsBlock)]
    assert not tools.ascii
