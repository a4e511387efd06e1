"""Tools written as a declared family writes them, inferred from the family's own corpus
template with the declared families out of the way (inference never looks at them): the
presentation found, where it goes, the calls behind it, and ``verify`` of the declaration
against the template."""

from __future__ import annotations

import dataclasses
from typing import Any

from pawlette.declare import FirstSystemText, Layout, SystemPrompt, ToolsBlock, declare
from pawlette.declare.pieces import text_of
from pawlette.detect import verify
from pawlette.export.jinja import export_jinja
from pawlette.format import Format
from pawlette.formats.apertus.typescript import DeveloperBlock
from pawlette.formats.cohere.concepts import CohereTools
from pawlette.infer import Inference, Underived, infer_template
from pawlette.infer.atoms import Tokens
from pawlette.infer.core import DEFAULT_TODAY, TemplateRunner, _stages
from pawlette.infer.described_tools import DescribedTools
from pawlette.infer.draft import Draft
from pawlette.infer.frames import derive_frames
from pawlette.infer.literal_tools import LiteralTools
from pawlette.infer.namespace_tools import NamespaceTypes
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
RICH = {
    "name": "find_rooms",
    "description": 'Rooms free on a day & their "size" <m2>.',
    "parameters": {
        "type": "object",
        "properties": {
            "day": {"type": "string", "enum": ["mon", "tue"], "description": "The day."},
            "size": {"type": "integer", "description": "At least this many m2."},
        },
        "required": ["day"],
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
    assert inference.format is not None
    _writes_tools_as_the_template(inference.format, template.name, system=False)


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


def _lifted(layout: Layout) -> Format:
    """The declaration less its refusal of tools (refused only for the calls behind them)."""
    concepts = []
    for concept in layout.concepts:
        if isinstance(concept, Underived):
            kept = tuple(pair for pair in concept.refused if pair[0] != "tools")
            concept = dataclasses.replace(concept, refused=kept)
        concepts.append(concept)
    return declare(dataclasses.replace(layout, concepts=tuple(concepts)))


def _writes_tools_as_the_template(fmt: Format, name: str, *, system: bool = True) -> None:
    """``fmt`` renders conversations with tools (and without) as the template does, and its
    exported template as ``fmt`` does (``system``: with a system message too)."""
    template = corpus_template(name)
    reference = Reference(
        template.text, name, bos_token=template.bos_token, eos_token=template.eos_token
    )
    exported = TemplateRunner(export_jinja(fmt))
    led = [{"role": "system", "content": "Be brief."}, *CALLED[:1]]
    for messages in (CALLED[:1], led) if system else (CALLED[:1],):
        for tools_given in ([WEATHER], [WEATHER, {"type": "function", "function": RICH}], []):
            expected = reference.render(messages, tools_given, add_generation_prompt=True).text
            written = fmt.render(messages, tools_given, add_generation_prompt=True).text
            assert written == expected
            again = exported.render(messages, tools_given, add_generation_prompt=True).text
            assert again == written


def test_functionary_v3_1_described_json_inside_its_generated_turn() -> None:
    """Functionary v3.1 writes each tool as a ``Use the function`` line and its JSON,
    HTML-escaped, inside the system turn it starts every conversation with, before that
    turn's ``<|eot_id|>``: the start is cut there."""
    name = "meetkai-functionary-medium-v3.1"
    template = corpus_template(name)
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    assert inference.layout is not None
    tools = _tools(inference)
    assert type(tools) is DescribedTools and tools.escaped and tools.place == "own_turn"
    assert text_of(tools.item_close) == "\n\n"
    assert {item.name: item for item in inference.capabilities}["tools"].status == "derived"
    fmt = _lifted(inference.layout)
    _writes_tools_as_the_template(fmt, name)
    tools_given = [WEATHER, {"type": "function", "function": RICH}]
    written = fmt.render(CALLED[:1], tools_given, add_generation_prompt=False).text
    assert fmt.parse_conversation(written).tools == tools_given  # (read back)


def test_functionary_v3_2_typescript_inside_its_namespace() -> None:
    """Functionary v3.2 writes each tool as a TypeScript type inside the ``functions``
    namespace its start always holds (empty without tools): the start's text around them is
    the block's open and close, written always."""
    name = "meetkai-functionary-medium-v3.2"
    draft = _drafted_to_tools(name)
    assert draft.status("tools") == "derived"
    (tools,) = [c for c in draft.concepts if isinstance(c, ToolsBlock)]
    assert type(tools) is NamespaceTypes and tools.place == "own_turn" and tools.always
    assert text_of(tools.close).startswith("} // namespace functions")
    _writes_tools_as_the_template(declare(draft.layout(name, "drafted")), name)


def test_spark_tools_between_the_default_text_and_the_lead_of_the_system_text() -> None:
    """Spark2.5 writes its tools after the default text its system turn starts with, before
    the blank line that leads the first system message's text: the block first in the turn,
    declared before that lead (:class:`FirstSystemText`), and the calls and results after
    it."""
    inference, reference, template = _inferred("Spark2.5")
    tools = _tools(inference)
    assert type(tools) is ToolsBlock and (tools.place, tools.first) == ("system", True)
    assert inference.layout is not None
    kinds = [type(concept) for concept in inference.layout.concepts]
    assert kinds.index(ToolsBlock) < kinds.index(FirstSystemText)
    status = _status(inference)
    assert status["tools"] == status["tool calls"] == status["tool results"] == "derived"
    _verified_with_tools(inference, reference, template)
    assert inference.format is not None
    _writes_tools_as_the_template(inference.format, template.name)


def test_command_r7b_tools_inside_its_fixed_preamble() -> None:
    """Command R7B writes its tools inside the preamble every first system turn starts with
    (between its safety and default sections): the preamble is cut there, the part before
    the tools written with them, the rest closing the block, the whole without tools.  Its
    calls follow the plan (reasoning kept on turns of calls alone), and verify with the
    tools."""
    name = "CohereForAI-c4ai-command-r7b-12-2024-tool_use"
    inference, _, _ = _inferred(name)
    tools = _tools(inference)
    assert type(tools) is CohereTools and (tools.place, tools.first) == ("system", True)
    assert "# Default Preamble" in text_of(tools.close)
    assert inference.layout is not None
    (prompt,) = [c for c in inference.layout.concepts if isinstance(c, SystemPrompt)]
    assert prompt.preamble == () and prompt.preamble_with_tools
    assert text_of(prompt.preamble_without_tools).startswith(text_of(prompt.preamble_with_tools))
    status = _status(inference)
    assert status["tools"] == status["tool calls"] == "derived", status
    assert inference.format is not None
    _writes_tools_as_the_template(inference.format, name)
