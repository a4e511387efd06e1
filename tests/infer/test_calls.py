"""Calls inferred from real templates: how their arguments are written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pawlette.declare import JsonCallList, JsonCalls, XmlCalls, fence
from pawlette.infer import infer_template
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template
from .reka import reka


def test_arguments_escaped_as_the_template_escapes_them() -> None:
    """Reka Edge writes arguments with ``tojson(ensure_ascii=True)``: so does its format."""
    inference = reka()
    layout, fmt = inference.layout, inference.format
    assert layout is not None and fmt is not None
    (calls,) = [concept for concept in layout.concepts if isinstance(concept, JsonCalls)]
    assert calls.ascii
    request = {
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
            }
        ],
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"x": "é"}'},
                    }
                ],
            },
        ],
    }
    assert '"arguments": {"x": "\\u00e9"}' in fmt.render(request).text


TEMPLATES = Path(__file__).parent.parent / "fixtures" / "templates"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def _call(number: int, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call{number}",
        "type": "function",
        "function": {"name": "get_weather", "arguments": json.dumps(arguments)},
    }


def test_bare_calls_joined_with_arguments_printed_as_python_are_derived() -> None:
    """Phi-4-mini's tool template (vLLM's examples) writes a turn's calls as bare objects
    joined by ``,``, the arguments as Jinja prints the object (``{'city': 'Paris'}``), and a
    turn's text instead of its calls when it has text: derived as :class:`JsonCalls`, the
    turns written as the template writes them and read back."""
    template = (TEMPLATES / "phi4_mini_tool.jinja").read_text(encoding="utf-8")
    tokens = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"}
    inference = infer_template(template, **tokens)
    assert inference.accepted, inference.describe()
    layout, fmt = inference.layout, inference.format
    assert layout is not None and fmt is not None
    (calls,) = [concept for concept in layout.concepts if isinstance(concept, JsonCalls)]
    assert calls == JsonCalls(
        open=None, separator=fence(","), arguments="repr", with_content=False, drops_calls=True
    )
    capabilities = {item.name: item.status for item in inference.capabilities}
    assert capabilities["tool calls"] == capabilities["tool results"] == "derived"
    assert capabilities["text with tool calls"] == "dropped"
    nested = {"city": "Zürich 'old'", "days": 3, "exact": True, "none": None, "tags": ["a"]}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [_call(1, nested), _call(2, {})]},
        {"role": "tool", "tool_call_id": "call1", "content": "18°C"},
        {"role": "tool", "tool_call_id": "call2", "content": '{"sum": 3}'},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [_call(3, {"a": 1})]},
        {"role": "tool", "tool_call_id": "call3", "content": "sunny"},
    ]
    runner = TemplateRunner(template, tokens)
    for prompt in (False, True):
        expected = runner.render(messages, [WEATHER], add_generation_prompt=prompt).text
        rendered = fmt.render(
            {"messages": messages, "tools": [WEATHER]}, add_generation_prompt=prompt
        )
        assert rendered.text == expected
    assert any("messages[4].tool_calls" in loss for loss in rendered.losses)
    before = runner.render(messages[:1], [WEATHER], add_generation_prompt=True).text
    after = runner.render(messages[:2], [WEATHER]).text
    assert before is not None and after is not None
    turn = after[len(before) :]
    assert turn.startswith('{"name": "get_weather", "arguments": {\'city\': "Zürich \'old\'"')
    read = fmt.parse(turn, tools=[WEATHER]).message["tool_calls"]
    assert [json.loads(call["function"]["arguments"]) for call in read] == [nested, {}]
    namespace: dict[str, object] = {}
    exec(compile(inference.source(), "phi4_mini_tool.py", "exec"), namespace)
    assert namespace["LAYOUT"] == layout


def test_parallel_calls_and_text_beside_calls_are_verified_when_derived() -> None:
    """InternLM2's tool template writes several calls in a turn and text before them: both
    are recorded as derived, so the conversations that verify the declaration hold them."""
    template = (TEMPLATES / "internlm2_tool.jinja").read_text(encoding="utf-8")
    inference = infer_template(template, bos_token="<s>", eos_token="</s>")
    assert inference.accepted, inference.describe()
    capabilities = {item.name: item.status for item in inference.capabilities}
    assert capabilities["parallel tool calls"] == "derived"
    assert capabilities["text with tool calls"] == "derived"


def test_tag_values_that_are_objects_printed_as_python_are_derived() -> None:
    """MiniCPM5 writes every parameter's value with ``{{ value }}``: an object as Python's
    ``{'airline': 'Swiss'}``, as ``XmlCalls(values="literal")`` writes it."""
    template = corpus_template("openbmb-MiniCPM5-1B")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    assert inference.layout is not None
    (calls,) = [c for c in inference.layout.concepts if isinstance(c, XmlCalls)]
    assert calls.values == "literal"
    capabilities = {item.name: item.status for item in inference.capabilities}
    assert capabilities["tools"] == capabilities["tool calls"] == "derived"


def test_calls_written_as_one_json_array_are_derived_with_their_key_order() -> None:
    """Mistral Nemo writes a turn's calls as one JSON array after ``[TOOL_CALLS]``, each call's
    keys in the order name, arguments, id (``{"name": ..., "arguments": ..., "id": ...}``),
    ids of nine letters and digits, and no text beside them: derived as
    :class:`JsonCallList`, and a turn of two calls renders as the template renders it."""
    template = corpus_template("mistralai-Mistral-Nemo-Instruct-2407")
    tokens = {"bos_token": template.bos_token, "eos_token": template.eos_token}
    inference = infer_template(template.text, **tokens)
    assert inference.accepted, inference.describe()
    layout, fmt = inference.layout, inference.format
    assert layout is not None and fmt is not None
    (calls,) = [concept for concept in layout.concepts if isinstance(concept, JsonCallList)]
    assert calls.keys == (("name", "name"), ("arguments", "arguments"), ("id", "id"))
    assert (calls.content, calls.separators, calls.id_pattern) == (
        "dropped",
        (", ", ": "),
        "[A-Za-z0-9]{9}",
    )
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {**_call(1, {"city": "Zürich"}), "id": "abc123xyz"},
                {**_call(2, {}), "id": "def456uvw"},
            ],
        },
    ]
    expected = TemplateRunner(template.text, tokens).render(messages, [WEATHER]).text
    assert expected is not None and '[TOOL_CALLS][{"name": "get_weather", "arguments"' in expected
    assert fmt.render({"messages": messages, "tools": [WEATHER]}).text == expected


def test_a_json_array_of_calls_in_another_key_order_and_spacing_is_derived() -> None:
    """A template writing the calls as one compact JSON array, the arguments first, gets the
    keys and separators it writes."""
    template = (
        "{% for m in messages %}<|{{ m.role }}|>"
        "{% if m.tool_calls %}<calls>["
        "{% for c in m.tool_calls %}"
        '{"arguments":{{ c.function.arguments | tojson }},"name":"{{ c.function.name }}"}'
        "{% if not loop.last %},{% endif %}{% endfor %}]"
        "{% else %}{{ m.content }}{% endif %}<|end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    inference = infer_template(template)
    layout = inference.layout
    assert inference.accepted and layout is not None, inference.describe()
    (calls,) = [concept for concept in layout.concepts if isinstance(concept, JsonCallList)]
    assert (calls.keys, calls.separators, calls.item_separator) == (
        (("arguments", "arguments"), ("name", "name")),
        (",", ":"),
        None,
    )
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tool calls"] == statuses["parallel tool calls"] == "derived"


@pytest.mark.parametrize("name", ["GigaChat3-10B-A1.8B", "GigaChat3.1-10B-A1.8B"])
def test_a_turn_whose_calls_after_the_first_the_template_drops_is_derived(name: str) -> None:
    """GigaChat 3 writes a turn of two calls as the turn of its first call alone: declared
    so (``first_only``), the second call a recorded loss, verified with parallel calls."""
    template = corpus_template(name)
    tokens = {"bos_token": str(template.bos_token), "eos_token": str(template.eos_token)}
    inference = infer_template(template.text, **tokens)
    fmt, layout = inference.format, inference.layout
    assert fmt is not None and layout is not None, inference.describe()
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["parallel tool calls"] == "dropped"
    assert statuses["tool calls"] == statuses["tool results"] == "derived"
    (calls,) = [concept for concept in layout.concepts if isinstance(concept, JsonCalls)]
    assert calls.first_only and not calls.parallel
    tools = [
        {
            "type": "function",
            "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    both = {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call(1, {"x": 1}), _call(2, {"x": 2})],
    }
    messages = [{"role": "user", "content": "Hi"}, both]
    theirs = TemplateRunner(template.text, tokens).render(messages, tools).text
    assert theirs is not None and '"x": 1' in theirs and '"x": 2' not in theirs
    rendering = fmt.render({"messages": messages, "tools": tools})
    assert rendering.text == theirs
    assert rendering.losses == ("messages[1].tool_calls: calls after the first not written",)
