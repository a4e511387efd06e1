"""Tools written as a declared family writes them, inferred from the family's own corpus
template with the declared families out of the way (inference never looks at them): the
presentation found, where it goes, the calls behind it, and ``verify`` of the declaration
against the template."""

from __future__ import annotations

from typing import Any

from pawlette.declare import ToolsBlock, declare
from pawlette.declare.pieces import text_of
from pawlette.detect import verify
from pawlette.formats.apertus.typescript import DeveloperBlock
from pawlette.infer import Inference, infer_template
from pawlette.infer.atoms import Tokens
from pawlette.infer.core import DEFAULT_TODAY, TemplateRunner, _stages
from pawlette.infer.draft import Draft
from pawlette.infer.frames import derive_frames
from pawlette.infer.literal_tools import LiteralTools
from pawlette.infer.probe import Probe
from pawlette.infer.tools import derive_tools

from ..support.template_compare import Reference
from ..support.template_corpus import corpus_template

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "Its name."}},
            "required": ["city"],
        },
    },
}
CALLED = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
]


def _inferred(name: str) -> tuple[Inference, Reference, Any]:
    template = corpus_template(name)
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    reference = Reference(
        template.text, name, bos_token=template.bos_token, eos_token=template.eos_token
    )
    return inference, reference, template


def _tools(inference: Inference) -> ToolsBlock:
    assert inference.layout is not None
    (tools,) = [c for c in inference.layout.concepts if isinstance(c, ToolsBlock)]
    return tools


def _status(inference: Inference) -> dict[str, str]:
    return {item.name: item.status for item in inference.capabilities}


def _verified_with_tools(inference: Inference, reference: Reference, template: Any) -> None:
    """``verify`` passes, and a conversation with tools and a call renders as the template
    renders it."""
    fmt = inference.format
    assert fmt is not None
    checked = verify(fmt, template.text, bos_token=template.bos_token, eos_token=template.eos_token)
    assert checked.passed, checked
    for messages, prompt in ((CALLED[:1], True), (CALLED, False)):
        expected = reference.render(messages, [WEATHER], add_generation_prompt=prompt).text
        written = fmt.render(messages, [WEATHER], add_generation_prompt=prompt).text
        assert written == expected


def test_apriel_1_6_python_literals_after_the_default_text() -> None:
    """Apriel 1.6 writes each tool as a Python literal, run together, after the default
    system text its start always holds (a diff places the block after that text's
    newline)."""
    inference, reference, template = _inferred("Apriel-1.6-15b-Thinker-fixed")
    tools = _tools(inference)
    assert type(tools) is LiteralTools and tools.place == "own_turn"
    assert (tools.item_open, tools.item_close) == ((), ())
    status = _status(inference)
    assert status["tools"] == status["tool calls"] == "derived", status
    _verified_with_tools(inference, reference, template)


def _drafted_to_tools(name: str) -> Draft:
    """The draft of ``name``'s template through the tools stage (before the calls, which
    verification then checks with it)."""
    template = corpus_template(name)
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    given = {key: text for key, text in tokens.items() if text is not None}
    runner = TemplateRunner(template.text, given, today=DEFAULT_TODAY)
    special = frozenset(text for text in given.values() if text)
    probe = Probe(runner, Tokens(special=special, by_shape=True))
    draft = Draft(probe.tokens)
    derive_frames(probe, draft)
    for stage in _stages():
        stage(probe, draft)
        if stage is derive_tools:
            return draft
    raise AssertionError("no tools stage")


def test_apertus_developer_turn_cut_from_the_system_turn_end() -> None:
    """Apertus writes its developer turn after every first system turn, ``disabled`` where
    the tools go without them: the system turn's end is cut after ``<|system_end|>``, the
    rest the block's open and close, placed after the system turn."""
    name = "Apertus-8B-Instruct"
    draft = _drafted_to_tools(name)
    assert draft.status("tools") == "derived"
    (tools,) = [c for c in draft.concepts if isinstance(c, ToolsBlock)]
    assert type(tools) is DeveloperBlock and tools.place == "after_system"
    assert draft.frames["system"].end == "<|system_end|>"
    assert text_of(tools.open).endswith("Tool Capabilities:")
    fmt = declare(draft.layout(name, "drafted"))
    template = corpus_template(name)
    reference = Reference(
        template.text, name, bos_token=template.bos_token, eos_token=template.eos_token
    )
    system = [{"role": "system", "content": "Be brief."}]
    for messages in (CALLED[:1], system + CALLED[:1]):
        for tools_given in ([WEATHER], []):
            expected = reference.render(messages, tools_given, add_generation_prompt=True).text
            assert fmt.render(messages, tools_given, add_generation_prompt=True).text == expected
