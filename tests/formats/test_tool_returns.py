"""A function's ``returns`` (a key beside ``parameters`` some callers give): the request
reader keeps any JSON value (a JSON schema, an object or a boolean, or a value a template
prints as it is); the formats whose real templates read it write it as those templates do,
rendered through transformers' Jinja set-up: IFM-K2-Horizon every value, Seed-OSS a schema
(listing a returns object's properties).  Seed-OSS refuses a value that is no schema, which
its template would drop unseen."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette import openai
from pawlette.errors import RequestError
from tests.declare.conversations import TOOLS

from ..support.template_compare import compare_renders, corpus_reference

WEATHER = TOOLS[0]["function"]  # (the cross-artifact checks' weather tool)
SEED = pawlette.get_format("seed_oss")
IFM = pawlette.get_format("ifm")
SCHEMAS: list[Any] = [
    True,
    False,
    {},
    {"type": "string", "description": "The forecast."},
    {"type": "object", "properties": {"high": {"type": "number", "description": "Celsius."}}},
]
NOT_SCHEMAS: list[Any] = ["The forecast, as text.", 3, ["high", "low"]]


def _tool(returns: Any) -> dict[str, Any]:
    return {"type": "function", "function": {**WEATHER, "returns": returns}}


def _request(returns: Any) -> dict[str, Any]:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Go."}]
    return {"messages": messages, "tools": [_tool(returns)]}


@pytest.mark.parametrize("returns", [*SCHEMAS, *NOT_SCHEMAS, None])
def test_the_request_reader_keeps_any_returns_value(returns: Any) -> None:
    tool = _tool(returns)
    read = openai.tool_from_openai(tool, "tools[0]")
    assert read.definition["returns"] == returns
    assert openai.plain_tool_definition(tool) == tool["function"]  # the fast path agrees


@pytest.mark.parametrize("returns", [*SCHEMAS, *NOT_SCHEMAS])
def test_ifm_writes_returns_as_its_template_does(returns: Any) -> None:
    report = compare_renders(IFM, corpus_reference("IFM-K2-Horizon"), [_request(returns)])
    assert report.agrees, report.describe()
    assert report.identical == report.compared == 2  # with and without the prompt
    assert "**Returns**" in IFM.render(**_request(returns)).text


@pytest.mark.parametrize("returns", SCHEMAS)
def test_seed_oss_writes_a_returns_schema_as_its_template_does(returns: Any) -> None:
    report = compare_renders(SEED, corpus_reference("ByteDance-Seed-OSS"), [_request(returns)])
    assert report.agrees, report.describe()
    assert report.identical == report.compared == 2
    listed = isinstance(returns, dict) and "properties" in returns
    text = SEED.render(**_request(returns)).text
    assert ("Returns:\n    - high (int): Celsius." in text) == listed


@pytest.mark.parametrize("returns", NOT_SCHEMAS)
def test_seed_oss_refuses_a_returns_value_that_is_no_schema(returns: Any) -> None:
    with pytest.raises(RequestError) as raised:
        SEED.render(**_request(returns))
    assert raised.value.path == "tools[0].function.returns"
    assert raised.value.found == f"found {returns!r}"
    assert raised.value.expected.startswith("a JSON schema (an object or a boolean)")
    # The template writes nothing of it: its render is the one without ``returns``.
    template = corpus_reference("ByteDance-Seed-OSS")
    messages = _request(returns)["messages"]
    written = template.render(messages, [_tool(returns)], add_generation_prompt=True)
    without = {"type": "function", "function": WEATHER}
    assert written.text is not None
    assert written.text == template.render(messages, [without], add_generation_prompt=True).text
