"""The Python-calls concept (``pawlette.declare.PythonCalls``) on its own.

The generated cross-artifact checks run it inside declared layouts (``tests.declare``'s
``python_format`` and ``decision_format``); breeze's tests run it inside breeze.  Here: what
it promises by itself.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.codecs.python_literals import encode_calls
from pawlette.declare import Fence, Marker, PythonCalls, declare, fence
from pawlette.errors import UnsupportedFeature
from pawlette.export import export_grammar_bundle
from pawlette.formats.breeze.decision import DecisionCalls
from pawlette.types import Message, ToolCall

from . import decision_format, python_format
from .conversations import TOOLS

CALLS = PythonCalls(open=fence("<calls>"), quote="repr")


def message(*calls: tuple[str, str]) -> Message:
    tool_calls = tuple(
        ToolCall(f"id{n}", name, arguments) for n, (name, arguments) in enumerate(calls)
    )
    return Message(role="assistant", content=None, tool_calls=tool_calls)


values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab'\"\\\né", max_size=4),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=2)
    ),
    max_leaves=4,
)


@settings(max_examples=60)
@given(arguments=st.dictionaries(st.sampled_from(["a", "b_1", "city"]), values, max_size=3))
def test_the_writer_is_the_codec_and_parses_back(arguments: dict[str, object]) -> None:
    text = json.dumps(arguments)
    calls = message(("f", text), ("g", "{}")).tool_calls
    written = CALLS.list_text(None, 0, calls)  # type: ignore[arg-type]  # (it reads no render)
    assert written == encode_calls([("f", text), ("g", "{}")], quote="repr", separator=",")
    with python_format.registered() as fmt:
        parsed = fmt.parse("<calls>" + written + "</calls>", strict=True)
    assert [json.loads(call["function"]["arguments"]) for call in parsed.message["tool_calls"]] == [
        arguments,
        {},
    ]


def test_the_named_prefix_opens_the_call() -> None:
    assert CALLS.head("get_weather") == "[get_weather("
    with python_format.registered() as fmt:
        named = {"type": "function", "function": {"name": "get_weather"}}
        assert fmt.forced_prefix(named, TOOLS) == "<calls>[get_weather("
        bundle = export_grammar_bundle(fmt.name, TOOLS, named)
        assert bundle["forced_prefix"]["functions"]["get_weather"] == "<calls>[get_weather("
        assert bundle["trigger"]["marker"] == "<calls>"


def test_what_a_layout_refuses_is_said_where() -> None:
    import dataclasses

    calls = PythonCalls(open=fence("<calls>"), parallel=False, with_content=False)
    concepts = tuple(
        calls if isinstance(concept, PythonCalls) else concept
        for concept in python_format.LAYOUT.concepts
    )
    serial = declare(dataclasses.replace(python_format.LAYOUT, name="serial", concepts=concepts))
    call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "text", "tool_calls": [call]},
    ]
    with pytest.raises(UnsupportedFeature, match=r"messages\[1\]\.content"):
        serial.render(messages, TOOLS)
    messages[1] = {"role": "assistant", "tool_calls": [call, call]}
    with pytest.raises(UnsupportedFeature, match=r"messages\[1\]\.tool_calls"):
        serial.render(messages, TOOLS)


def test_decision_layouts_are_checked() -> None:
    import dataclasses

    from pawlette.declare import Reasoning

    layout = decision_format.LAYOUT
    texts = tuple(
        dataclasses.replace(concept, with_content=True)
        if isinstance(concept, DecisionCalls)
        else concept
        for concept in layout.concepts
    )
    thinking = (*layout.concepts, Reasoning(open=fence("<t>"), close=fence("</t>")))
    for concepts in (texts, thinking):
        with pytest.raises(pawlette.FormatError):
            declare(dataclasses.replace(layout, concepts=concepts))


def test_decision_tokens_only_on_the_last_turn_of_a_request_with_tools() -> None:
    with decision_format.registered() as fmt:
        call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
        messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]}]
        assert fmt.render(messages, TOOLS).text.endswith(
            "<|assistant|><|use_tool|>[now()]<|end|>\n"
        )
        assert fmt.render(messages).text.endswith("<|assistant|><|python_tag|>[now()]<|eom|>\n")
        answer = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
        assert fmt.render(answer, TOOLS).text.endswith("<|assistant|><|answer|>ok<|end|>\n")
        assert fmt.render(answer).text.endswith("<|assistant|>ok<|end|>\n")
        assert fmt.forced_prefix("none", TOOLS) == "<|answer|>"
        assert fmt.forced_prefix("required", TOOLS) == "<|use_tool|>"
        for text in ("<|use_tool|>[now()]", "<|python_tag|>[now()]<|eom|>"):
            assert (
                fmt.parse(text, strict=True).message["tool_calls"][0]["function"]["name"] == "now"
            )
        assert fmt.parse("<|answer|>ok<|end|>", strict=True).message["content"] == "ok"


def test_decision_tokens_need_python_calls() -> None:
    """Decision tokens are Python calls' (DecisionCalls is a PythonCalls): a layout that has
    another calls concept beside them is refused."""
    import dataclasses

    from pawlette.declare import JsonCalls

    json_calls = JsonCalls(open=fence("<call>"), with_content=False)
    beside = (*decision_format.LAYOUT.concepts, json_calls)
    with pytest.raises(pawlette.FormatError, match="decision tokens"):
        declare(dataclasses.replace(decision_format.LAYOUT, concepts=beside))
    assert isinstance(decision_format.CALLS, PythonCalls)


@dataclasses.dataclass(frozen=True)
class _OpenedOtherwise(PythonCalls):
    """Calls a model opens with ``<go>``, though past turns are written with ``open``."""

    @property
    def model_open(self) -> Fence:
        return fence(Marker("<go>"))


def test_the_grammar_opens_the_list_with_model_open() -> None:
    concepts = tuple(
        _OpenedOtherwise(
            **{field.name: getattr(concept, field.name) for field in dataclasses.fields(concept)}
        )
        if isinstance(concept, PythonCalls)
        else concept
        for concept in python_format.LAYOUT.concepts
    )
    fmt = declare(
        dataclasses.replace(python_format.LAYOUT, name="user-python-go", concepts=concepts)
    )
    named = {"type": "function", "function": {"name": "get_weather"}}
    assert fmt.forced_prefix(named, TOOLS) == "<go>[get_weather("
