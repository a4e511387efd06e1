"""Tools written as code or markup, inferred from templates a fine-tuner changed.

Each template here is a corpus template with something changed that a fine-tune changes (its
default system text, the spelling of a turn marker), so no declared family writes it: the
tools are found as the presentation of the family it was made from, and the calls behind
them derived as for JSON tools.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pawlette.declare import ToolsBlock, declare
from pawlette.formats.bielik.tools import LinedToolArray
from pawlette.formats.chatml.xml_tools import XmlToolsBlock
from pawlette.formats.cohere.concepts import CohereTools
from pawlette.formats.gemma4.concepts import GemmaTools
from pawlette.formats.gigachat.typescript import TypeScriptTools
from pawlette.formats.kimi.k3 import SortedToolsBlock
from pawlette.infer import Inference, Underived, infer_template
from pawlette.infer.presentations import PRESENTATIONS
from pawlette.infer.tools import PROBE_TOOLS

from ..support.conversations import generate_conversations
from ..support.template_compare import Reference, compare_renders
from ..support.template_corpus import corpus_template


def _variant(name: str, old: str, new: str) -> tuple[Inference, Reference]:
    template = corpus_template(name)
    assert old in template.text
    text = template.text.replace(old, new)
    inference = infer_template(text, bos_token=template.bos_token, eos_token=template.eos_token)
    reference = Reference(
        text, f"{name} (changed)", bos_token=template.bos_token, eos_token=template.eos_token
    )
    return inference, reference


def _tools(inference: Inference) -> ToolsBlock:
    assert inference.accepted, inference.describe()
    assert inference.layout is not None
    (tools,) = [c for c in inference.layout.concepts if isinstance(c, ToolsBlock)]
    return tools


def _status(inference: Inference) -> dict[str, str]:
    return {item.name: item.status for item in inference.capabilities}


def _tools_refused_for_their_calls(inference: Inference, reference: Reference) -> None:
    """Tools found where the calls behind them are not read: the declaration refuses tools,
    saying why (a model's calls would read back as text); without that refusal, the block
    found writes the probe tools as the template does."""
    status = {item.name: item for item in inference.capabilities}
    assert status["tools"].status == "not derived"
    assert status["tools"].detail.endswith("a model's calls would read back as text")
    assert inference.layout is not None
    concepts = []
    for concept in inference.layout.concepts:
        if isinstance(concept, Underived):
            kept = tuple(pair for pair in concept.refused if pair[0] != "tools")
            concept = dataclasses.replace(concept, refused=kept)
        concepts.append(concept)
    fmt = declare(dataclasses.replace(inference.layout, concepts=tuple(concepts)))
    messages = [{"role": "user", "content": "What is the weather?"}]
    for prompt in (False, True):
        expected = reference.render(messages, list(PROBE_TOOLS), add_generation_prompt=prompt)
        written = fmt.render(messages, list(PROBE_TOOLS), add_generation_prompt=prompt).text
        assert written == expected.text


def _renders_as_the_template(inference: Inference, reference: Reference, **switches: Any) -> None:
    """The declaration renders generated conversations (tools and calls among them) as the
    changed template does; it may refuse some, never write them otherwise."""
    fmt = inference.format
    assert fmt is not None
    conversations = generate_conversations(30, seed=3, avoid=fmt.special_markers, **switches)
    report = compare_renders(fmt, reference, conversations)
    assert not report.differing and not report.pawlette_failed, report.describe()
    assert report.identical >= 10, report.summary()


def test_qwen3_coder_with_its_own_default_text() -> None:
    """Qwen3-Coder's template with another default system text (written only beside tools):
    its XML tools, that default text, and its calls and results."""
    inference, reference = _variant(
        "Qwen3-Coder",
        "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks.",
        "You are Kodo, a careful coding assistant.",
    )
    tools = _tools(inference)
    assert type(tools) is XmlToolsBlock and tools.place == "system"
    status = _status(inference)
    assert status["tool calls"] == status["tool results"] == "derived"
    assert inference.format is not None
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    text = inference.format.render([{"role": "user", "content": "Hi"}], [weather]).text
    assert text.startswith("<|im_start|>system\nYou are Kodo, a careful coding assistant.")
    assert "<name>get_weather</name>" in text
    _renders_as_the_template(inference, reference)


def test_gigachat_with_another_role_separator() -> None:
    """GigaChat 3's template with its role separator spelled otherwise: the TypeScript
    namespace of its tools after the system turn, and its calls."""
    inference, reference = _variant("GigaChat3-10B-A1.8B", "<|role_sep|>", "<|role_end|>")
    tools = _tools(inference)
    assert type(tools) is TypeScriptTools and tools.place == "after_system"
    status = _status(inference)
    assert status["tool calls"] == status["tool results"] == "derived"
    _renders_as_the_template(inference, reference)


def test_gemma4_with_another_turn_marker() -> None:
    """Gemma 4's template with its turn opener spelled otherwise: its declarations in the
    system turn, each between the item fences found between two tools, and the calls a
    model writes with them read (the family's call syntax)."""
    inference, reference = _variant("google-gemma-4-31B-it", "<|turn>", "<|turn_start>")
    tools = _tools(inference)
    assert type(tools) is GemmaTools and not tools.interleaved
    assert (tools.item_open, tools.item_close) != ((), ())
    status = _status(inference)
    assert status["tools"] == status["tool calls"] == "derived"
    _renders_as_the_template(inference, reference)


def test_gemma4_interleaved_told_apart_by_a_richer_tool() -> None:
    """The interleaved-thinking Gemma 4 template writes the probe tools as the other does: a
    richer tool's schema tells which presentation it is."""
    inference, reference = _variant("google-gemma-4-31B-it-interleaved", "<|turn>", "<|turn_start>")
    tools = _tools(inference)
    assert type(tools) is GemmaTools and tools.interleaved
    _renders_as_the_template(inference, reference)


# Tools as JSON in places a template changes: each corpus template with a text a fine-tuner
# changes, the tools' concept and place expected, then the parts derived after them.
PLACED = [
    pytest.param(
        "meta-llama-Llama-3.1-8B-Instruct",
        ("Cutting Knowledge Date: December 2023", "Cutting Knowledge Date: March 2025"),
        (ToolsBlock, "user_after_system", {"first": True}),
        ("tool calls", "tool results"),
        id="llama-3.1: a preamble with tools, the block in the message after the system one",
    ),
    pytest.param(
        "moonshotai-Kimi-K2",
        ("You are a helpful assistant<", "You are Moon, a careful assistant<"),
        (ToolsBlock, "own_turn"),
        ("tool calls", "tool results"),
        id="kimi-k2: a turn of tools before the default system turn",
    ),
    pytest.param(
        "ibm-granite-granite-3.3-2B-Instruct",
        ("You are Granite, developed by IBM.", "You are Slate, tuned from Granite."),
        (ToolsBlock, "after_system"),
        ("tool results",),
        id="granite-3.3: an indented array, a default text of its own beside tools",
    ),
    pytest.param(
        "Bielik-11B-v3.0-Instruct",
        ("<|im_start|>", "<|turn_start|>"),
        (LinedToolArray, "system"),
        ("tool calls",),
        id="bielik: a JSON array on lines",
    ),
    pytest.param(
        "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
        ("<|im_start|>", "<|turn_start|>"),
        (XmlToolsBlock, "system", {"enum": True, "separator_when": "text"}),
        ("tool calls", "tool results"),
        id="nemotron-3: XML tags, a separator only after system text",
    ),
    pytest.param(
        "Kimi-K3",
        ("Now the system is invoked with", "The system now runs with"),
        (SortedToolsBlock, "own_turn"),
        (),
        id="kimi-k3: sorted JSON before a fixed turn",
    ),
    pytest.param(
        "Cohere2MoE",
        ("North Mini Code", "South Mini Code"),
        (CohereTools, "own_turn", {"always": True}),
        (),
        id="cohere2moe: a listing inside the start, empty without tools",
    ),
]


@pytest.mark.parametrize(("name", "change", "expected", "derived"), PLACED)
def test_tools_found_where_the_changed_template_writes_them(
    name: str,
    change: tuple[str, str],
    expected: tuple[Any, ...],
    derived: tuple[str, ...],
) -> None:
    inference, reference = _variant(name, *change)
    tools = _tools(inference)
    kind, place, *fields = expected
    assert (type(tools), tools.place) == (kind, place)
    for field, value in (fields or [{}])[0].items():
        assert getattr(tools, field) == value, field
    status = _status(inference)
    if status["tool calls"] in ("derived", "refused"):
        assert status["tools"] == "derived"
    else:  # (calls in a syntax no concept reads, or none the template writes)
        _tools_refused_for_their_calls(inference, reference)
    assert all(status[part] == "derived" for part in derived), status
    _renders_as_the_template(inference, reference)


def test_every_presentation_writes_the_probe_tools() -> None:
    """Each presentation inference tries writes the probe tools (a block that needed more of
    a render than the tools would never be found), one tool apart from two."""
    for presentation in PRESENTATIONS:
        one, two = presentation.text(PROBE_TOOLS[:1]), presentation.text(PROBE_TOOLS)
        assert one and two and one != two, presentation.name
        assert "zq_alpha" in one and "zq_beta" in two, presentation.name
