"""XmlCalls' string values: written as they are unless a subclass wraps them
(``string_text``, ``jinja_string``), and read through the wrapper's pair
(``Tags.unwrap``): one pair around the whole value is taken off, nothing else."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import pytest

from pawlette.declare import (
    Frame,
    Layout,
    Marker,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    declare,
    fence,
)
from pawlette.declare.jinja import Template
from pawlette.declare.table import Table
from pawlette.declare.xml_calls import Tags
from pawlette.export.jinja import export_jinja

END = Marker("<end>")


@dataclass(frozen=True)
class Guillemets(XmlCalls):
    """Every string value written between « and »."""

    def string_text(self, value: str) -> str:
        return "«" + value + "»"

    def jinja_string(self, out: Template) -> None:
        out.out("{{- '«' + value + '»' -}}")

    def tags(self, table: Table) -> Tags:
        return dataclasses.replace(super().tags(table), unwrap=("«", "»"))


def _layout(calls: type[XmlCalls]) -> Layout:
    return Layout(
        name="tags",
        summary="tag calls",
        frames={
            role: Frame(fence(Marker(f"<{role}>")), fence(END), fence("\n"))
            for role in ("system", "user", "assistant")
        },
        concepts=(
            SystemPrompt(),
            ToolsBlock(place="system", open=fence("Tools:"), item_open=fence("\n")),
            calls(
                open=fence('<call name="'),
                name_close=fence('">'),
                key_open=fence('<arg name="'),
                key_close=fence('">'),
                value_close=fence("</arg>"),
                close=fence("</call>"),
                values="literal",
            ),
        ),
    )


PLAIN, WRAPPED = declare(_layout(XmlCalls)), declare(_layout(Guillemets))
TOOL = {
    "type": "function",
    "function": {
        "name": "f",
        "parameters": {"type": "object", "properties": {"s": {"type": "string"}, "n": {}}},
    },
}


def _messages(arguments: dict[str, Any]) -> list[dict[str, Any]]:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
    call["function"]["arguments"] = json.dumps(arguments)
    return [
        {"role": "user", "content": "Go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]


@pytest.mark.parametrize(
    ("fmt", "written"),
    [
        (PLAIN, '<call name="f"><arg name="s">x</arg><arg name="n">[1]</arg></call>'),
        (WRAPPED, '<call name="f"><arg name="s">«x»</arg><arg name="n">[1]</arg></call>'),
    ],
)
def test_a_string_is_written_by_string_text_in_the_writer_and_the_template(
    fmt: Any, written: str
) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    messages = _messages({"s": "x", "n": [1]})
    rendering = fmt.render(messages, [TOOL])
    assert written in rendering.text
    # The exported template gets the arguments as an object, as Hugging Face's callers pass
    # them, and writes what the writer writes.
    objects = [dict(message) for message in messages]
    objects[1]["tool_calls"] = [
        {"type": "function", "function": {"name": "f", "arguments": {"s": "x", "n": [1]}}}
    ]
    rendered, _ = render_jinja_template(
        [objects], tools=[TOOL], chat_template=export_jinja(fmt), add_generation_prompt=False
    )
    assert rendered[0] == rendering.text


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("«x»", "x"),  # the pair taken off
        ("««x»»", "«x»"),  # one pair only
        ("«x", "«x"),  # no close: as written
        ("«", "«"),  # too short to hold both
        ("x»", "x»"),
    ],
)
def test_the_reader_takes_one_pair_off(value: str, read: str) -> None:
    text = f'<call name="f"><arg name="s">{value}</arg></call><end>'
    (call,) = WRAPPED.parse(text, tools=[TOOL]).message["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"s": read}
    (plain,) = PLAIN.parse(text, tools=[TOOL]).message["tool_calls"]
    assert json.loads(plain["function"]["arguments"]) == {"s": value}


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ('[1, 2.5, {"a": null}]', [1, 2.5, {"a": None}]),  # JSON: its value
        ('1, "v": 2', '1, "v": 2'),  # JSON only inside an object: the text
        ("1e400", "1e400"),  # beyond a double: the text
        ("[" * 99 + "]" * 99, json.loads("[" * 99 + "]" * 99)),  # the arguments' 100th level
        ("[" * 100 + "]" * 100, "[" * 100 + "]" * 100),  # one more: the text
    ],
)
def test_a_value_of_no_schema_type_is_json_where_it_is(written: str, read: Any) -> None:
    """A parameter the tool does not type is read as JSON where the whole value is JSON (the
    arguments around it nested at most the limit), else as its text."""
    text = f'<call name="f"><arg name="s">{written}</arg></call><end>'
    (call,) = PLAIN.parse(text).message["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"s": read}


@pytest.mark.parametrize("parameters", [{"properties": 1.5}, {"properties": "x"}, {"required": 5}])
@pytest.mark.parametrize("name", ["glm", "glm:4.7", "deepseek_dsml", "seed_oss", "minicpm"])
def test_a_schema_keyword_of_the_wrong_shape_is_the_schemas_error_in_the_grammar(
    name: str, parameters: dict[str, Any]
) -> None:
    """As in the JSON formats' grammars (``emit/schema_walk.py``): a ValueError naming the
    keyword, which the server answers with a 400 (found by ``bench/fuzz_requests.py``)."""
    from pawlette.export.grammar import export_grammar_bundle
    from pawlette.openai import tools_from_openai

    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    with pytest.raises(ValueError, match=r"properties|required"):
        export_grammar_bundle(name, tools_from_openai([tool]), "required", True, "gbnf")


@pytest.mark.parametrize("name", ["glm", "minimax_m2:m3-no-thinking"])
def test_a_required_name_that_is_no_string_names_no_parameter(name: str) -> None:
    """``required`` listing a non-string (an object) requires nothing of the grammar, as in
    the JSON formats' grammars (it was a TypeError: a 500 from the server, found by
    ``bench/fuzz_requests.py``)."""
    from pawlette.export.grammar import export_grammar_bundle
    from pawlette.openai import tools_from_openai

    parameters = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": [{"1": "x"}],
    }
    tool = {"type": "function", "function": {"name": "f", "parameters": parameters}}
    tools = tools_from_openai([tool])
    assert export_grammar_bundle(name, tools, "required", True, "lark", markers_as_text=True)
