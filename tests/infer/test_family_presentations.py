"""Tools written as a declared family writes them, inferred from the family's own corpus
template with the declared families out of the way (inference never looks at them): the
presentation found, where it goes, the calls behind it, and ``verify`` of the declaration
against the template."""

from __future__ import annotations

from typing import Any

from pawlette.declare import ToolsBlock
from pawlette.detect import verify
from pawlette.infer import Inference, infer_template
from pawlette.infer.literal_tools import LiteralTools

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
