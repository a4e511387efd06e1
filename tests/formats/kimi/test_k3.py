"""Kimi K3 (:mod:`pawlette.formats.kimi.k3`): the template's other settings (thinking off,
other efforts), results the template reorders or names otherwise, and what a model writes
(typed argument tags, escaped attributes, a JSON block), whole and in pieces.

The default variant's renders and own turns are compared in tests/formats/test_families.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import pawlette
from pawlette.errors import FormatError
from pawlette.export import export_grammar
from pawlette.format import Format

from ...declare.test_variants import jinja_render
from ...declare.tokens import accepts, marker_ids, tokenizer
from ...helpers import feed_in_pieces, folded, random_sizes
from ...support.conversations import generate_conversations
from ...support.template_compare import (
    compare_renders,
    corpus_reference,
    own_turns,
    without_reasoning,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": 'say "hi" & go',
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
    },
]


def _reference(fmt: Format) -> Any:
    variables = fmt.declaration.reference_variables() if fmt.declaration else {}
    return corpus_reference("Kimi-K3", variables=variables)


def _k3(**options: Any) -> Format:
    return pawlette.get_format("kimi:k3").with_options(**options)


@pytest.mark.parametrize(
    ("fmt", "normalise"),
    [
        (pawlette.get_format("kimi:k3-no-thinking"), without_reasoning),
        (_k3(thinking_effort="low"), None),
        (_k3(thinking_effort=None), None),
    ],
    ids=["no-thinking", "effort-low", "effort-none"],
)
def test_other_settings_render_as_the_template(fmt: Format, normalise: Any) -> None:
    conversations = generate_conversations(10, seed=3, avoid=fmt.special_markers)
    report = compare_renders(fmt, _reference(fmt), conversations)
    assert report.agrees, report.describe()
    turns = own_turns(fmt, _reference(fmt), conversations, normalise=normalise)
    assert turns.agrees, turns.describe()


def test_a_thinking_effort_the_template_refuses_is_refused() -> None:
    with pytest.raises(FormatError, match="thinking_effort: 'medium'"):
        _k3(thinking_effort="medium")


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


CALLS = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        _call("a1", "get_weather", {"city": "Bern", "days": 2}),
        _call("a2", 'say "hi" & go', {"text": "x"}),
    ],
}


@pytest.mark.parametrize(
    "results",
    [
        # answered out of the calls' order: the template writes them in the calls' order
        [
            {"role": "tool", "tool_call_id": "a2", "content": "said"},
            {"role": "tool", "tool_call_id": "a1", "content": "sunny"},
        ],
        # ids that answer no call: in the messages' order, named by name, else by position
        [
            {"role": "tool", "tool_call_id": "zz", "content": "sunny"},
            {"role": "tool", "tool_call_id": "yy", "name": "other", "content": "said"},
        ],
    ],
    ids=["reordered", "unmatched"],
)
def test_results_are_written_as_the_template_writes_them(results: list[dict[str, Any]]) -> None:
    fmt = pawlette.get_format("kimi:k3")
    messages = [{"role": "user", "content": "Go"}, CALLS, *results]
    rendering = fmt.render({"messages": messages, "tools": TOOLS}, add_generation_prompt=True)
    expected = _reference(fmt).render(messages, TOOLS, add_generation_prompt=True)
    assert rendering.text == expected.text
    reordered = results[0]["tool_call_id"] == "a2"
    assert bool(rendering.losses) == reordered, rendering.losses


def test_names_and_escaped_attributes_read_back() -> None:
    fmt = pawlette.get_format("kimi:k3")
    messages = [
        {"role": "user", "name": 'a "b" & c', "content": "Go"},
        {**CALLS, "name": "kimi"},
        {"role": "tool", "tool_call_id": "a1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "a2", "content": "said"},
    ]
    text = fmt.render({"messages": messages, "tools": TOOLS}).text
    assert 'name="a &quot;b&quot; &amp; c"' in text
    assert 'tool="say &quot;hi&quot; &amp; go"' in text
    parsed = fmt.parse_conversation(text, strict=True).to_request()["messages"]
    assert parsed[0]["name"] == 'a "b" & c'
    assert parsed[1]["name"] == "kimi"
    assert [call["function"]["name"] for call in parsed[1]["tool_calls"]] == [
        "get_weather",
        'say "hi" & go',
    ]


CALL_HEAD = '<|open|>call tool="get_weather" index="1"<|sep|>'
TURN_END = "<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>"


def _completion(arguments: str) -> str:
    return (
        "Think.<|close|>think<|sep|><|open|>response<|sep|>On it.<|close|>response<|sep|>"
        f"<|open|>tools<|sep|>{CALL_HEAD}{arguments}{TURN_END}"
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        # a string is its text, whatever it looks like
        (
            '<|open|>argument key="city" type="string"<|sep|>3<|close|>argument<|sep|>',
            {"city": "3"},
        ),
        (
            '<|open|>argument key="days" type="number"<|sep|>2<|close|>argument<|sep|>'
            '<|open|>argument key="x" type="object"<|sep|>{"a": [1]}<|close|>argument<|sep|>',
            {"days": 2, "x": {"a": [1]}},
        ),
        # an escaped key
        (
            '<|open|>argument key="a&quot;b" type="boolean"<|sep|>true<|close|>argument<|sep|>',
            {'a"b': True},
        ),
        # the template's JSON block
        (
            '<|open|>json type="object"<|sep|>{"city": "Bern"}<|close|>json<|sep|>',
            {"city": "Bern"},
        ),
        # without a type: the tool's schema types it; whitespace between tags
        (
            '\n<|open|>argument key="days"<|sep|>4<|close|>argument<|sep|>\n',
            {"days": 4},
        ),
        ("", {}),
    ],
    ids=["string", "typed", "escaped-key", "json-block", "schema-typed", "no-arguments"],
)
def test_calls_a_model_writes_are_read(arguments: str, expected: dict[str, Any]) -> None:
    fmt = pawlette.get_format("kimi:k3")
    output = _completion(arguments)
    result = fmt.parse(output, tools=TOOLS)
    assert not result.warnings, result.warnings
    message = result.message
    assert message["reasoning_content"] == "Think."
    assert message["content"] == "On it."
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == expected
    whole = folded(fmt, feed_in_pieces(fmt, output, [len(output)], conversation=False))
    for seed in range(3):
        pieces = feed_in_pieces(fmt, output, random_sizes(seed), conversation=False)
        assert folded(fmt, pieces) == whole


@pytest.mark.parametrize(
    "arguments",
    [
        '<|open|>argument key="days" type="number"<|sep|>two<|close|>argument<|sep|>',
        '<|open|>argument key="days" type="number"<|sep|>2',
        'text<|open|>argument key="days" type="number"<|sep|>2<|close|>argument<|sep|>',
    ],
    ids=["not-a-number", "unclosed", "stray-text"],
)
def test_a_malformed_call_is_kept_as_text_with_a_warning(arguments: str) -> None:
    result = pawlette.get_format("kimi:k3").parse(_completion(arguments), tools=TOOLS)
    assert result.warnings
    assert not result.message.get("tool_calls")
    assert CALL_HEAD in result.message["content"]


def test_a_call_to_an_unknown_tool_is_no_call() -> None:
    output = _completion("").replace("get_weather", "launch")
    result = pawlette.get_format("kimi:k3").parse(output, tools=TOOLS)
    assert result.warnings
    assert not result.message.get("tool_calls")


@pytest.mark.parametrize("name", ["kimi:k3", "kimi:k3-no-thinking"])
@pytest.mark.parametrize("prompt", [False, True])
def test_the_exported_template_renders_as_render(name: str, prompt: bool) -> None:
    """Generated conversations, and results the template reorders or names by position: the
    exported Jinja template (json_sorted, typed argument tags, result runs) writes what
    render writes."""
    fmt = pawlette.get_format(name)
    requests = [
        dict(conversation.request)
        for conversation in generate_conversations(12, seed=5, avoid=fmt.special_markers)
    ]
    for results in (
        [
            {"role": "tool", "tool_call_id": "a2", "content": "said"},
            {"role": "tool", "tool_call_id": "a1", "content": "sunny"},
        ],
        [
            {"role": "tool", "tool_call_id": "zz", "content": "sunny"},
            {"role": "tool", "tool_call_id": "yy", "name": "other", "content": "said"},
        ],
    ):
        messages = [{"role": "user", "name": 'a "b" & c', "content": "Go"}, CALLS, *results]
        requests.append({"messages": messages, "tools": TOOLS})
    for request in requests:
        rendering = fmt.render(request, add_generation_prompt=prompt)
        text, _ = jinja_render(fmt, request, prompt)
        assert text == rendering.text


@pytest.mark.parametrize("choice", ["auto", "required", "get_weather"])
def test_the_turn_grammar_accepts_the_writers_turns(choice: str) -> None:
    """The grammar (Lark under llguidance) takes a call turn as the writer writes it, up to
    the end marker (the engine's stop), and refuses a call to an undeclared tool."""
    name = "kimi:k3"
    fmt = pawlette.get_format(name)
    tool_choice: Any = choice
    if choice == "get_weather":
        tool_choice = {"type": "function", "function": {"name": choice}}
    lark = export_grammar(fmt, TOOLS[:1], tool_choice, token_ids=marker_ids(name))
    prompt = [{"role": "user", "content": "Go"}]
    turn = {
        "role": "assistant",
        "reasoning_content": "Think.",
        "content": "On it." if choice == "auto" else "",
        "tool_calls": [_call("a1", "get_weather", {"city": "Bern", "days": 2})],
    }
    before = fmt.render({"messages": prompt, "tools": TOOLS[:1]}, add_generation_prompt=True)
    whole = fmt.render({"messages": [*prompt, turn], "tools": TOOLS[:1]})
    assert whole.text.startswith(before.text)
    forced = fmt.forced_prefix(tool_choice, TOOLS[:1])
    written = whole.text[len(before.text) :]
    assert written.endswith("<|end_of_msg|>")
    tok = tokenizer(name)
    end = tok.token_to_id("<|end_of_msg|>")

    def ids(text: str) -> list[int]:
        found: list[int] = []
        for piece in re.split(r"(<\|(?:open|sep|close|end_of_msg)\|>)", text):
            if piece.startswith("<|") and piece.endswith("|>"):
                found.append(tok.token_to_id(piece))
            elif piece:
                found += tok.encode(piece).ids
        return found

    if choice != "auto":  # a forced call skips the reasoning: its prefix closes the block
        written = written[written.index("<|close|>think") :]
        assert forced
        assert written.startswith(forced)
    tokens = ids(written)
    assert tokens[-1] == end  # the engine's stop, after the grammar's end
    assert accepts(name, lark, tokens[:-1])
    assert not accepts(name, lark, ids(written.replace("get_weather", "get_wetter"))[:-1])
    assert not accepts(name, lark, [*tokens, tokens[-1]])  # the end marker is the engine's


@pytest.mark.parametrize("parameters", [{"properties": 1.5}, {"properties": "x"}, {"required": 5}])
def test_a_schema_keyword_of_the_wrong_shape_is_the_schemas_error_in_the_grammar(
    parameters: dict[str, object],
) -> None:
    """A ValueError naming the keyword (the server's 400), not a TypeError or an
    AttributeError (a 500: found by ``bench/fuzz_requests.py`` on kimi:k3-no-thinking)."""
    from pawlette.export.grammar import export_grammar_bundle
    from pawlette.openai import tools_from_openai

    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    with pytest.raises(ValueError, match=r"parameters\.(properties|required)"):
        export_grammar_bundle("kimi:k3", tools_from_openai([tool]), "required", True, "gbnf")
