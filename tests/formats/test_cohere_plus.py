"""Command R+ (``cohere:command-r-plus``, :mod:`pawlette.formats.cohere.plus`): what the model
writes, read as llama.cpp's Command R+ cases read it (facts of its tests: an answer ended by
``<|END_OF_TURN_TOKEN|>``; ``Action:`` and a JSON block of ``tool_name``/``parameters``
objects), whole, streamed and from token ids; the ``directly-answer`` action; renders against
the template with tools it can render (every parameter described), calls and results
included, and its own turns read back; the Python stubs; masks."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import jinja2
import pytest

import pawlette
from pawlette.formats.cohere.stubs import JINJA_MACROS, python_type, tools_text
from pawlette.tokenization.encoder import IGNORE_INDEX

from ..declared.model_output import check_every_way
from ..support.conversations import generate_conversations
from ..support.small_bpe import small_tokenizer
from ..support.template_compare import (
    compare_renders,
    compose,
    corpus_reference,
    own_turns,
    strip_text,
    without_reasoning,
)
from .weather import weather_call

PLUS = pawlette.get_format("cohere:command-r-plus")
TEMPLATE = "CohereForAI-c4ai-command-r-plus-tool_use"
TOKENIZER = small_tokenizer(PLUS.special_markers)
END = "<|END_OF_TURN_TOKEN|>"
OPENER = "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city"],
        },
    },
}
SPECIAL = {  # llama.cpp's test tool
    "type": "function",
    "function": {
        "name": "special_function",
        "description": "I'm special",
        "parameters": {
            "type": "object",
            "properties": {"arg1": {"type": "integer", "description": "The arg."}},
            "required": ["arg1"],
        },
    },
}
TOOLS = [WEATHER, SPECIAL]

TEMPLATE_ACTION = (
    "\nAction:\n```json\n[\n    {\n"
    '        "tool_name": "get_weather",\n'
    '        "parameters": {\n            "city": "Paris"\n        }\n'
    "    },\n    {\n"
    '        "tool_name": "get_weather",\n'
    '        "parameters": {\n            "city": "東京"\n        }\n'
    "    }\n]```\n"
)
PARIS_TOKYO = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "東京"})]
ANSWER_ACTION = '[{"tool_name": "directly-answer", "parameters": {}}]'

# (what the model writes after the prompt, content, calls)
AS_PEERS = [
    # llama.cpp: "Hello, world!\nWhat's up?" ended by the end of turn is the answer.
    ("Hello, world!\nWhat's up?" + END, "Hello, world!\nWhat's up?", []),
    # llama.cpp: Action: and a JSON block, the array's close on a line before the fence's.
    (
        'Action:\n```json\n[{"tool_name": "special_function", "parameters": {"arg1": 1}}]\n```',
        None,
        [("special_function", {"arg1": 1})],
    ),
    # Ollama's template: Action: and the fence on one line.
    (
        'Action: ```json\n[{"tool_name": "special_function", "parameters": {"arg1": 1}}]\n```'
        + END,
        None,
        [("special_function", {"arg1": 1})],
    ),
    # As the template writes a call turn, then the end of turn the model writes.
    (TEMPLATE_ACTION + END, None, PARIS_TOKYO),
    ("Checking both." + TEMPLATE_ACTION + END, "Checking both.", PARIS_TOKYO),
    # The instruction's answer action is no call (Cohere's own tool use: an answer follows).
    ("Action:\n```json\n" + ANSWER_ACTION + "\n```" + END, None, []),
    (
        "Action:\n```json\n"
        '[{"tool_name": "directly-answer", "parameters": {}},'
        ' {"tool_name": "special_function", "parameters": {"arg1": 2}}]\n```' + END,
        None,
        [("special_function", {"arg1": 2})],
    ),
]


def _parsed(text: str, tools: Any) -> tuple[Any, ...]:
    message = PLUS.parse(text, tools=tools).message
    calls = [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for call in message.get("tool_calls") or []
    ]
    return message.get("content") or None, calls


def _reading(text: str) -> tuple[Any, ...]:
    messages, _, warnings = check_every_way(PLUS, TOKENIZER, text)
    (message,) = messages
    calls = [(call.name, json.loads(call.arguments)) for call in message.tool_calls]
    return message.text or None, calls, warnings


@pytest.mark.parametrize(("text", "content", "calls"), AS_PEERS)
def test_what_the_model_writes_reads_as_the_peers_read_it(
    text: str, content: str | None, calls: list[Any]
) -> None:
    assert _parsed(text, TOOLS) == (content, calls)
    assert _reading(text) == (content, calls, [])


def test_a_declared_directly_answer_tool_is_a_call() -> None:
    tool = copy.deepcopy(SPECIAL)
    tool["function"]["name"] = "directly-answer"
    text = "Action:\n```json\n" + ANSWER_ACTION + "\n```" + END
    assert _parsed(text, [tool]) == (None, [("directly-answer", {})])


def test_an_unknown_tool_keeps_the_list_as_text_with_a_warning() -> None:
    text = 'Action:\n```json\n[{"tool_name": "nope", "parameters": {}}]\n```' + END
    parsed = PLUS.parse(text, tools=TOOLS)
    assert not parsed.message.get("tool_calls")
    assert "nope" in parsed.message["content"]
    assert parsed.warnings


ROUND = [
    {"role": "system", "content": "Be brief. "},
    {"role": "user", "content": " Weather in Paris and 東京?"},
    {
        "role": "assistant",
        "content": "Checking both.",
        "tool_calls": [weather_call("a1", "Paris"), weather_call("b2", "東京")],
    },
    {"role": "tool", "tool_call_id": "a1", "content": "18°C\n"},
    {"role": "tool", "tool_call_id": "b2", "content": '{"temp": 21}'},
    {"role": "assistant", "content": "18°C and 21°C."},
    {"role": "system", "content": " Later. "},
]


@pytest.mark.parametrize("prompt", [False, True])
@pytest.mark.parametrize("tools", [TOOLS, None])
def test_renders_as_the_template(prompt: bool, tools: Any) -> None:
    messages = ROUND if tools else [ROUND[0], ROUND[1], ROUND[-2], ROUND[-1]]
    rendering = PLUS.render(messages, tools, add_generation_prompt=prompt)
    expected = corpus_reference(TEMPLATE).render(messages, tools, add_generation_prompt=prompt)
    assert rendering.text == expected.text
    assert "# User Preamble\nBe brief. \n\n## Available Tools\n" in rendering.text
    assert "<|SYSTEM_TOKEN|>Later.<|END_OF_TURN_TOKEN|>" in rendering.text
    if tools:
        assert "Checking both." + TEMPLATE_ACTION + "<|START_OF_TURN_TOKEN|>" in rendering.text
        assert "<|SYSTEM_TOKEN|><results>\n18°C</results>" + END in rendering.text
        assert "def special_function(arg1: int) -> List[Dict]:" in rendering.text
    else:
        assert "available to you:\n\n" + END in rendering.text
    instruction_at = rendering.text.index("Write 'Action:'")
    assert rendering.text.endswith(OPENER) == prompt
    assert rendering.text.rindex(
        "<|START_OF_TURN_TOKEN|>", 0, instruction_at
    ) > rendering.text.index("Later.")


def _described(request: dict[str, Any]) -> dict[str, Any]:
    """The request with tools the template renders: every parameter described, every object
    with ``additionalProperties``."""
    request = copy.deepcopy(request)
    for tool in request.get("tools") or []:
        properties = tool["function"]["parameters"].get("properties", {})
        for name, schema in properties.items():
            schema.setdefault("description", f"The {name}.")
            if schema.get("type") == "object":
                schema.setdefault("additionalProperties", {"type": "string"})
    return request


def _conversations(count: int) -> list[dict[str, Any]]:
    return [
        _described(conversation.request)
        for conversation in generate_conversations(
            count, seed=3, avoid=PLUS.special_markers, text_with_calls=True
        )
    ]


def test_renders_with_tools_as_the_template_on_generated_conversations() -> None:
    conversations = _conversations(24)
    assert sum(1 for request in conversations if request.get("tools")) >= 8
    report = compare_renders(PLUS, corpus_reference(TEMPLATE, empty_content=True), conversations)
    assert report.agrees and report.identical == report.compared, report.describe()


def test_the_templates_own_turns_with_calls_parse_back() -> None:
    report = own_turns(
        PLUS,
        corpus_reference(TEMPLATE, empty_content=True),
        _conversations(24),
        normalise=compose(without_reasoning, strip_text),
        opener=OPENER,
    )
    assert report.agrees, report.describe()
    assert report.total >= 20


def test_the_generated_tools_the_template_refuses_are_written() -> None:
    # The template fails on a parameter without a description; the format writes an empty
    # one, and an object without additionalProperties as Dict[str, Any].
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"place": {"type": "object"}, "note": {"type": "string"}},
                "required": ["note"],
            },
        },
    }
    reference = corpus_reference(TEMPLATE).render(
        [{"role": "user", "content": "Hi"}], [tool], add_generation_prompt=True
    )
    assert reference.text is None
    text = PLUS.render([{"role": "user", "content": "Hi"}], [tool]).text
    assert (
        "def f(place: Optional[Dict[str, Any]] = None, note: str) -> List[Dict]:\n"
        '    """\n\n    Args:\n        place (Optional[Dict[str, Any]]): \n'
        '        note (str): \n    """\n    pass\n```'
    ) in text


SCHEMAS = [
    {"type": "string"},
    {"type": "number"},
    {"type": "integer"},
    {"type": "boolean"},
    {"type": "array", "items": {"type": "string"}},
    {"type": "array"},
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"type": "object", "additionalProperties": True},
    {"type": ["string", "integer"]},
    {"description": "no type"},
    {"type": None},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda schema: json.dumps(schema))
def test_a_parameter_type_is_the_templates(schema: dict[str, Any]) -> None:
    described = {"description": "D.", **schema}
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "description": "F.",
            "parameters": {"type": "object", "properties": {"x": described}, "required": ["x"]},
        },
    }
    expected = corpus_reference(TEMPLATE).render(
        [{"role": "user", "content": "Hi"}], [tool], add_generation_prompt=True
    )
    assert expected.text is not None
    written = python_type(described)
    assert f"def f(x: {written}) -> List[Dict]:" in expected.text
    assert tools_text([tool["function"]]) in expected.text


EDGE_TOOLS = [
    {"name": "g", "description": None},
    {"name": "h", "parameters": {"type": "object"}},
    {
        "name": "k",
        "description": "K.",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {"type": "null"},
                "b": {"type": ["string", "null"], "description": "B."},
                "c": {"type": "object"},
                "d": {"type": "string", "description": None},
            },
            "required": ["d"],
        },
    },
]


def test_the_exported_macros_write_the_stubs_as_the_writer() -> None:
    environment = jinja2.Environment()
    template = environment.from_string(
        JINJA_MACROS
        + "{%- for tool in tools -%}{%- if not loop.first -%}{{- '\\n\\n' -}}{%- endif -%}"
        "{{- plus_stub(tool) -}}{%- endfor -%}"
    )
    for tools in ([tool["function"] for tool in TOOLS], EDGE_TOOLS):
        assert template.render(tools=tools) == tools_text(tools)


def test_the_mask_trains_the_turns_the_model_writes() -> None:
    tokens = pawlette.tokenize(PLUS, TOKENIZER, {"messages": ROUND[:-1], "tools": TOOLS})
    learned = TOKENIZER.decode(
        [label for label in tokens.labels if label != IGNORE_INDEX], skip_special_tokens=False
    )
    assert learned.startswith("Checking both." + TEMPLATE_ACTION)
    assert learned.endswith("18°C and 21°C." + END)
    assert "Write 'Action:'" not in learned


@pytest.mark.parametrize("syntax", ["gbnf", "lark"])
def test_the_grammars_accept_the_turns_the_template_writes(syntax: str) -> None:
    from pawlette.export import export_grammar

    from ..export.test_grammar import accepts, completion_ids

    calls = {**ROUND[2], "content": ""}
    answer = {"role": "assistant", "content": "Run:\n```python\nprint(1)\n```\nDone."}
    for message, choices in ((calls, ("auto", "required")), (answer, ("auto", "none"))):
        ids = completion_ids(PLUS, {"messages": [ROUND[1], message], "tools": TOOLS}, 1)
        for choice in choices:
            grammar = export_grammar(PLUS, TOOLS, choice, True, syntax)  # type: ignore[arg-type]
            assert accepts("cohere", grammar, syntax, ids), (choice, message)
    # Text before the calls, whose opener is plain text: both take it (in Lark the text and
    # the opener are one terminal, so llguidance's greedy lexer cannot take the opener's
    # first characters into the text).
    ids = completion_ids(PLUS, {"messages": ROUND[1:3], "tools": TOOLS}, 1)
    grammar = export_grammar(PLUS, TOOLS, "auto", True, syntax)  # type: ignore[arg-type]
    assert accepts("cohere", grammar, syntax, ids)


@pytest.mark.parametrize("seed", range(40))
def test_any_output_keeps_every_parse_contract(seed: int) -> None:
    # The contracts every registered format's output is held to (tests/strategies/completions:
    # streamed, chunked and whole readings agree, no sentinel lost or doubled, calls valid),
    # and the whole-text reading agrees with the machine where it reads.
    from ..engine.test_whole import _agrees
    from ..strategies.completions import GENERATORS, Writer, problems

    rng = random.Random(seed)
    text = GENERATORS["cohere:command-r-plus"](Writer(rng, PLUS))
    assert problems(PLUS, text, rng) == [], text
    _agrees(PLUS, text, PLUS.grammar.completion_start)
