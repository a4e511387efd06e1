"""Tools inferred from real templates: how their JSON is written."""

from __future__ import annotations

from pathlib import Path

from pawlette.declare import ToolsBlock
from pawlette.declare.pieces import text_of
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


TEMPLATES = Path(__file__).parent.parent / "fixtures" / "templates"


def test_tools_on_their_own_after_the_system_turn() -> None:
    """InternLM2's tool template (vLLM's examples) writes the tools as a system turn of their
    own after the system message's turn, or after the start without one."""
    template = (TEMPLATES / "internlm2_tool.jinja").read_text(encoding="utf-8")
    inference = infer_template(template, bos_token="<s>", eos_token="</s>")
    assert inference.accepted, inference.describe()
    assert inference.layout is not None
    (tools,) = [c for c in inference.layout.concepts if isinstance(c, ToolsBlock)]
    assert tools.place == "after_system"
    assert inference.format is not None
    weather = {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
    for messages in (
        [{"role": "user", "content": "Hi"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    ):
        text = inference.format.render(messages, [weather]).text
        block = '<|im_start|>system name=<|plugin|>\n[{"name": "get_weather"'
        assert block in text
        assert text.index(block) > text.find("Be brief.")
    capabilities = {c.name: c.status for c in inference.capabilities}
    assert capabilities["tool calls"] == capabilities["tool results"] == "derived"


def test_a_first_system_trail_written_after_the_tools_is_the_thinking_line() -> None:
    """inclusionai-ling-3.0-flash ends its first system turn with ``detailed thinking on``:
    after the system text and a newline, or after the tools block beside tools.  Declared as
    the Bailing family's ThinkingLine, the tools, calls and results verify (before, the tools
    failed verification: the declaration wrote the line before the block)."""
    from pawlette.formats.bailing.thinking import ThinkingLine

    template = corpus_template("inclusionai-ling-3.0-flash")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tools"] == statuses["tool calls"] == statuses["tool results"] == "derived"
    assert inference.layout is not None
    assert ThinkingLine("detailed thinking on") in inference.layout.concepts


def test_literal_tools_closed_otherwise_without_a_system_message() -> None:
    """unsloth-Apriel-1.5 writes its tools as Python literals in a system message's turn,
    closed by ``</available_tools>``, and in the turn it writes without a system message
    closed by its call instructions, then its default system turn: declared as Apriel 1.5's
    family declares it, the tools and calls verify (before, the tools failed verification on
    a conversation without a system message)."""
    from pawlette.formats.apriel.tools import ReprLineTools

    template = corpus_template("unsloth-Apriel-1.5")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tools"] == statuses["tool calls"] == "derived", statuses
    assert inference.layout is not None
    (tools,) = [item for item in inference.layout.concepts if isinstance(item, ToolsBlock)]
    assert isinstance(tools, ReprLineTools)
    assert "Return all function calls" in text_of(tools.close_alone)
    assert "[BEGIN FINAL RESPONSE]" in text_of(tools.default_turn)


def test_tools_after_the_first_system_turn_beside_dropped_system_messages() -> None:
    """MiniMax-M1 writes its tools as a turn after the first system turn, drops later system
    messages and writes a blank first one as no turn at all: declared with MiniMax's
    BlankSystemDropped, which writes the tools before a dropped message too, the tools, calls
    and results verify, and so does an empty system text (before, the tools failed
    verification on two system messages, the block lost with the second)."""
    from pawlette.formats.minimax.system import BlankSystemDropped

    template = corpus_template("MiniMax-M1")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tools"] == statuses["tool calls"] == statuses["tool results"] == "derived"
    assert statuses["empty system text"] == "derived"
    assert inference.layout is not None and inference.format is not None
    assert any(isinstance(item, BlankSystemDropped) for item in inference.layout.concepts)
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    messages = [
        {"role": "system", "content": "A"},
        {"role": "system", "content": "B"},
        {"role": "user", "content": "u"},
    ]
    written = inference.format.render({"messages": messages, "tools": [tool]}).text
    assert "system tool_setting=tools" in written
