"""Tools and call arguments of awkward JSON values, new in each render, through the compiled
renderer, its reference and the real templates of Qwen3 (``chatml``: one-line ``tojson``) and
Llama 3.3 (``llama3``: the tools as ``tojson(indent=4)``, the arguments as ``tojson``): the
same text everywhere, byte for byte, and the indented tools what ``json.dumps(indent=4,
ensure_ascii=False)`` writes (transformers' ``tojson`` filter is that call)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import pawlette
from pawlette.compile import reference_of
from pawlette.declare import layout_of
from pawlette.engine.writer import Writer
from pawlette.format import coerce_conversation
from tests.formats.test_families import CASES
from tests.support.template_compare import corpus_reference

AWKWARD: list[Any] = [
    {},
    [],
    [{}],
    [[], {}, [[]]],
    {"a": {"b": []}, "c": [{}]},
    {"z": 1, "a": 2, "m": {"y": 3, "b": 4}},  # key order kept
    "é 日本語 🙂 \u2028 \u00a0",
    'quote " backslash \\ newline \n tab \t nul \x00 unit \x1f del \x7f',
    '[1, 2], {"a": 1}: not JSON, a string',
    0.1,
    -0.0,
    1e300,
    5e-324,
    1.5e-7,
    1e16,
    123456789.125,
    10**40,
    -(2**64),
    0,
    True,
    False,
    None,
    {"": "", " ": " ", "\n": "\t"},
    {"deep": [[[[{"x": [1, [2, [3, {}]]]}]]]]},
]
"""Values a tool's schema or a call's arguments may hold (JSON values a reader keeps)."""


def _request(number: int, value: Any) -> dict[str, Any]:
    """A conversation whose tool and call arguments hold ``value`` (``number`` makes both new
    to every store: a first request)."""
    tool = {
        "type": "function",
        "function": {
            "name": "probe",
            "description": f"Probe {number}: {json.dumps(value)[:40]}",
            "parameters": {
                "type": "object",
                "properties": {"value": {"description": "awkward", "default": value}},
                "required": ["value"],
                "examples": [value, {"nested": value}],
            },
        },
    }
    arguments = json.dumps({"value": value, "number": number, "also": [value]})
    call = {"id": f"call{number:05d}", "type": "function"}
    call["function"] = {"name": "probe", "arguments": arguments}
    return {
        "messages": [
            {"role": "system", "content": "You call tools."},
            {"role": "user", "content": "Probe it."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": "done"},
            {"role": "user", "content": "Again?"},
        ],
        "tools": [tool],
    }


def _text(write: Any, fmt: pawlette.Format, request: dict[str, Any]) -> str:
    messages, tools = coerce_conversation(copy.deepcopy(request))
    writer = Writer(fmt.escape_pattern)
    write(writer, messages, tools, True)
    return writer.rendering().text


def _case(family: str) -> Any:
    return next(case for case in CASES if case.format == family)


def _template(family: str) -> Any:
    """The family's real template, run as transformers runs it (``tests/formats/families``)."""
    case = _case(family)
    fmt = pawlette.get_format(case.format)
    layout = layout_of(fmt)
    variables = {**(layout.reference_variables() if layout else {}), **case.variables}
    settings: dict[str, Any] = {"variables": variables, "empty_content": case.empty_content}
    if layout and layout.today:
        settings["today"] = getattr(fmt.options, layout.today)
    return corpus_reference(case.template, **settings)


@pytest.mark.parametrize("family", ["chatml", "llama3"])
def test_awkward_tools_and_arguments_render_as_the_reference_and_the_template(
    family: str,
) -> None:
    fmt = pawlette.get_format(family)
    template = _template(family)
    for number, value in enumerate(AWKWARD):
        request = _request(number, value)
        compiled = _text(fmt.write, fmt, request)
        assert compiled == _text(reference_of(fmt.write), fmt, request), (family, value)
        rendered = fmt.render(copy.deepcopy(request), add_generation_prompt=True).text
        assert rendered == compiled, (family, value)
        expected = template.render(
            copy.deepcopy(request["messages"]), request["tools"], add_generation_prompt=True
        ).text
        assert rendered == expected, (family, value)


def test_llama3_writes_each_tool_as_json_indents_it() -> None:
    fmt = pawlette.get_format("llama3")
    for number, value in enumerate(AWKWARD):
        request = _request(1000 + number, value)
        indented = json.dumps(request["tools"][0], indent=4, ensure_ascii=False)
        text = fmt.render(request, add_generation_prompt=True).text
        assert indented + "\n\n" in text, value
