"""JsonCalls beyond one call object per fence: bare calls joined as the whole turn
(``open=None, parallel=True``), arguments written as Python's ``repr`` of the object
(``arguments="repr"``), and a turn that writes its text in place of its calls
(``drops_calls``; ``content="replaces_calls"`` on the other call concepts).  Each is checked
in every interpreter it touches: the writer, reading, the exported Jinja template, the
grammar."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.declare import (
    Frame,
    JsonCallList,
    JsonCalls,
    Layout,
    Marker,
    PromptAlways,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)
from pawlette.declare.json_calls import read_calls
from pawlette.engine.readers import CallEnvelope
from pawlette.errors import FormatError, ParseError
from pawlette.export import export_grammar, export_jinja
from pawlette.format import Format

from . import registering

M = Marker
TEMPLATES = Path(__file__).parent.parent / "fixtures" / "templates"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}


def layout(name: str, calls: Any) -> Layout:
    return Layout(
        name=name,
        summary="test",
        frames={
            role: Frame(open=fence(M(f"<|{role}|>")), end=fence(M("<|end|>")))
            for role in ("system", "user", "assistant", "tool")
        },
        concepts=(
            SystemPrompt(),
            ToolsBlock(place="system", open=fence("Tools:\n"), array=True),
            calls,
            Results(),
        ),
    )


JOINED = JsonCalls(open=None, separator=fence(","), with_content=False, drops_calls=True)


def call(number: int, arguments: dict[str, Any], name: str = "get_weather") -> dict[str, Any]:
    return {
        "id": f"call{number}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def read_calls_of(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """A message's calls as (name, arguments as a value) pairs."""
    calls = message.get("tool_calls") or []
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


def request(assistant: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": "Weather?"}, assistant], "tools": [WEATHER]}


def template_render(template: str, req: dict[str, Any], objects: bool) -> str:
    from transformers.utils.chat_template_utils import render_jinja_template

    messages = json.loads(json.dumps(req["messages"]))
    for message in messages:
        for item in message.get("tool_calls") or []:
            if objects:
                item["function"]["arguments"] = json.loads(item["function"]["arguments"])
    rendered, _ = render_jinja_template(
        [messages], tools=req.get("tools"), chat_template=template, add_generation_prompt=False
    )
    return str(rendered[0])


@pytest.fixture
def joined() -> Iterator[Format]:
    with registering.registered(layout("test-joined", JOINED)) as fmt:
        yield fmt


# ---------------------------------------------------------------------- a turn's text or calls


def test_a_turn_with_text_writes_its_text_and_records_its_calls_lost(joined: Format) -> None:
    calls = [call(1, {"city": "Paris"})]
    rendering = joined.render(
        request({"role": "assistant", "content": "Let me see.", "tool_calls": calls})
    )
    assert rendering.text.endswith("<|assistant|>Let me see.<|end|>")
    assert rendering.losses == (
        "messages[1].tool_calls: not written: the text is written in their place",
    )


def test_a_turn_without_text_writes_its_calls(joined: Format) -> None:
    calls = [call(1, {"city": "Paris"}), call(2, {"city": "Zürich", "days": 2})]
    rendering = joined.render(request({"role": "assistant", "content": "", "tool_calls": calls}))
    assert rendering.losses == ()
    assert rendering.text.endswith(
        '<|assistant|>{"name": "get_weather", "arguments": {"city": "Paris"}},'
        '{"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}}<|end|>'
    )


@pytest.mark.parametrize("content", ["Let me see.", "", None])
def test_the_exported_template_writes_the_text_or_the_calls(
    joined: Format, content: str | None
) -> None:
    req = request({"role": "assistant", "content": content, "tool_calls": [call(1, {"city": "P"})]})
    assert template_render(export_jinja(joined.name), req, objects=True) == joined.render(req).text


def test_drops_calls_needs_a_turn_without_text_beside_calls() -> None:
    with pytest.raises(FormatError, match=r"JsonCalls\.drops_calls: True with with_content"):
        layout("test-both", JsonCalls(open=None, parallel=False, drops_calls=True))
    both = JsonCalls(open=None, with_content=False, drops_content=True, drops_calls=True)
    with pytest.raises(FormatError, match="drops_content=True"):
        layout("test-both", both)


def test_a_call_list_may_write_the_text_in_place_of_the_calls() -> None:
    listed = JsonCallList(open=fence(M("<calls>")), content="replaces_calls")
    with registering.registered(layout("test-listed-instead", listed)) as fmt:
        with_text = request({"role": "assistant", "content": "Hm.", "tool_calls": [call(1, {})]})
        rendering = fmt.render(with_text)
        assert rendering.text.endswith("<|assistant|>Hm.<|end|>")
        assert rendering.losses == (
            "messages[1].tool_calls: not written: the text is written in their place",
        )
        alone = request({"role": "assistant", "tool_calls": [call(1, {})]})
        assert fmt.render(alone).text.endswith(
            '<|assistant|><calls>[{"name": "get_weather", "arguments": {}}]<|end|>'
        )
        template = export_jinja(fmt.name)
        for req in (with_text, alone):
            assert template_render(template, req, objects=True) == fmt.render(req).text


def test_the_grammar_allows_text_or_calls_never_both(joined: Format) -> None:
    grammar = export_grammar(joined.name, [WEATHER], "auto", True, "lark")
    assert 'start: call ("," call)*' not in grammar  # auto: text or calls
    assert "BARE_TEXT" in grammar
    required = export_grammar(joined.name, [WEATHER], "required", True, "lark")
    assert 'start: call ("," call)*' in required


# ---------------------------------------------------------------------- bare calls joined


def test_bare_calls_joined_read_back(joined: Format) -> None:
    calls = [call(1, {"city": "Paris"}), call(2, {"city": "Zürich", "days": 2})]
    req = request({"role": "assistant", "tool_calls": calls})
    conversation = joined.parse_conversation(joined.render(req).text)
    read = conversation.messages[-1]
    assert read_calls_of(read) == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Zürich", "days": 2}),
    ]


CALL_A = '{"name": "get_weather", "arguments": {"city": "A"}}'
CALL_EMPTY = '{"name": "get_weather", "arguments": {}}'


@pytest.mark.parametrize(
    "text",
    [
        f"{CALL_A} ,\n {CALL_EMPTY}",
        f"{CALL_A},{CALL_EMPTY}",
    ],
)
def test_a_completion_of_joined_calls_reads_as_calls(joined: Format, text: str) -> None:
    completion = joined.parse(text, tools=[WEATHER])
    assert [call["function"]["name"] for call in completion.message["tool_calls"]] == [
        "get_weather",
        "get_weather",
    ]
    assert completion.warnings == ()


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_weather", "arguments": {}},',  # a separator and no call
        '{"name": "get_weather", "arguments": {}} {"name": "get_weather", "arguments": {}}',
        '{"name": "get_weather", "arguments": {}}, and more',
        '{"name": "get_weather", "arguments": {}},{"name": "", "arguments": {}}',
    ],
)
def test_anything_else_is_content_with_a_warning(joined: Format, text: str) -> None:
    completion = joined.parse(text, tools=[WEATHER])
    assert completion.message["content"] == text
    assert not completion.message.get("tool_calls")
    assert completion.warnings
    with pytest.raises(ParseError):
        joined.parse(text, tools=[WEATHER], strict=True)


def test_text_reads_as_text(joined: Format) -> None:
    assert joined.parse("It is sunny.", tools=[WEATHER]).message["content"] == "It is sunny."


# ---------------------------------------------------------------------- arguments as repr


REPR = JsonCalls(
    open=None, separator=fence(","), with_content=False, drops_calls=True, arguments="repr"
)
FENCED_REPR = JsonCalls(
    open=fence(M("<tool_call>")), close=fence(M("</tool_call>")), arguments="repr"
)
ARGUMENTS = {
    "city": "Zürich 'old' \"town\"\n",
    "days": -3,
    "exact": True,
    "none": None,
    "ratio": 7.0,
    "tags": ["a", {"b": False}],
}


@pytest.fixture(params=[REPR, FENCED_REPR], ids=["bare", "fenced"])
def repr_format(request: pytest.FixtureRequest) -> Iterator[Format]:
    name = "test-repr-bare" if request.param is REPR else "test-repr-fenced"
    with registering.registered(layout(name, request.param)) as fmt:
        yield fmt


def test_repr_arguments_are_written_as_jinja_prints_a_dict(repr_format: Format) -> None:
    req = request({"role": "assistant", "tool_calls": [call(1, ARGUMENTS)]})
    text = repr_format.render(req).text
    assert f'{{"name": "get_weather", "arguments": {ARGUMENTS!r}}}' in text
    # Jinja prints the object so: the exported template, given it, writes the same text.
    assert template_render(export_jinja(repr_format.name), req, objects=True) == text


def test_repr_arguments_read_back_exactly(repr_format: Format) -> None:
    calls = [call(1, ARGUMENTS), call(2, {"city": "Paris"})]
    req = request({"role": "assistant", "tool_calls": calls})
    read = repr_format.parse_conversation(repr_format.render(req).text).messages[-1]
    arguments = [json.loads(c["function"]["arguments"]) for c in read["tool_calls"]]
    assert arguments == [ARGUMENTS, {"city": "Paris"}]


def test_repr_reading_also_takes_json(repr_format: Format) -> None:
    text = '{"name": "get_weather", "arguments": {"city": "Paris", "exact": true}}'
    if repr_format.name.endswith("fenced"):
        text = f"<tool_call>{text}</tool_call>"
    completion = repr_format.parse(text, tools=[WEATHER])
    assert completion.warnings == ()
    arguments = completion.message["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {"city": "Paris", "exact": True}


@pytest.mark.parametrize(
    "arguments",
    [
        "{'city': ('a', 'b')}",  # a tuple
        "{'city': {'a'}}",  # a set
        "{'city': 1+2j}",  # an expression
        "{'city': 'a', 'city': 'b'}",  # a key twice: Python keeps the last
        "{1: 'a'}",  # a key that is no string
        "{'city': b'a'}",  # bytes
        "{'city': float('nan')}",
        "{'city': 1e999}",  # no JSON number
        "{'city': 0x10}",  # a number Python's repr does not write
        "{'city': r'a'}",  # a prefixed string
        "{'city': (1)}",  # a parenthesised value
    ],
)
def test_python_that_is_no_repr_of_json_is_no_call(repr_format: Format, arguments: str) -> None:
    text = f'{{"name": "get_weather", "arguments": {arguments}}}'
    if repr_format.name.endswith("fenced"):
        text = f"<tool_call>{text}</tool_call>"
    completion = repr_format.parse(text, tools=[WEATHER])
    assert not completion.message.get("tool_calls")
    assert completion.message["content"] == text
    assert completion.warnings


def test_the_grammar_asks_for_json_arguments_and_says_why(repr_format: Format) -> None:
    grammar = export_grammar(repr_format.name, [WEATHER], "required", False, "lark")
    assert "Python's repr" in grammar
    assert '"{\\"name\\": \\"get_weather\\", \\"arguments\\": " json_args' in grammar


def test_python_arguments_read_as_the_python_call_codec_reads_literals(
    repr_format: Format,
) -> None:
    for value in (ARGUMENTS, {}, {"a": [[]]}, {"k": [0, -0.5, 1e16, "\u2028\x85é", None]}):
        text = f"{{'name': 'get_weather', 'arguments': {value!r}}}"
        if repr_format.name.endswith("fenced"):
            text = f"<tool_call>{text}</tool_call>"
        call = repr_format.parse(text, tools=[WEATHER]).message["tool_calls"][0]
        assert json.loads(call["function"]["arguments"]) == value
    # JSON's spellings of the constants, which that codec takes as models write them.
    text = "{'name': 'get_weather', 'arguments': {'exact': true, 'city': null}}"
    if repr_format.name.endswith("fenced"):
        text = f"<tool_call>{text}</tool_call>"
    call = repr_format.parse(text, tools=[WEATHER]).message["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"exact": True, "city": None}


def test_read_calls_takes_one_call_without_a_separator() -> None:
    envelope = CallEnvelope(name="name", arguments="arguments")
    one = '{"name": "f", "arguments": {}}'
    assert read_calls(one, envelope, None, False) == [("f", None, "{}")]
    assert read_calls(f"{one},{one}", envelope, None, False) is None
    assert read_calls(f"{one}\n{one}", envelope, "", False) == [("f", None, "{}")] * 2


# ---------------------------------------------------------------------- Phi-4-mini


PHI4_TEMPLATE = (TEMPLATES / "phi4_mini_tool.jinja").read_text(encoding="utf-8")
# What the template writes before the tools: its text between "{%- if tools %}" (whose
# newline trim_blocks drops) and the tools' loop (whose "{%-" drops the whitespace before).
PHI4_INSTRUCTIONS = (
    PHI4_TEMPLATE.split("{%- if tools %}\n", 1)[1].split("{%- for t in tools %}", 1)[0].rstrip()
)


def phi4_layout(arguments: str) -> Layout:
    """Phi-4-mini's tool template (vLLM's examples), declared from the docs."""
    from pawlette.declare import Ignored, Trimmed

    end = fence(M("<|end|>"))
    return Layout(
        name=f"test-phi4-mini-{arguments}",
        summary="Phi-4-mini's tool template (vLLM examples)",
        frames={
            "system": Frame(open=fence(M("<|system|>"), "\n"), end=end),
            "user": Frame(open=fence(M("<|user|>")), end=end),
            "assistant": Frame(open=fence(M("<|assistant|>")), end=end),
            "tool": Frame(open=fence(M("<|tool|>")), end=end),
        },
        concepts=(
            Ignored(("reasoning", "name")),
            SystemPrompt(default="You are a helpful assistant.", placement="first_kept"),
            Trimmed(roles=("system",)),
            ToolsBlock(
                place="system",
                open=fence(PHI4_INSTRUCTIONS),
                item_close=fence("\n\n"),
                wrap="openai",
                indent=4,
            ),
            JsonCalls(
                open=None,
                separator=fence(","),
                arguments=arguments,  # type: ignore[arg-type]
                with_content=False,
                drops_calls=True,
            ),
            Results(grouped=False),
            PromptAlways(),
        ),
    )


PHI4_CONVERSATIONS = [
    [{"role": "user", "content": "Weather in Paris?"}],
    [
        {"role": "system", "content": "Be kind. "},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call(1, {"city": "Paris"}), call(2, {"city": "Zürich", "days": 3})],
        },
        {"role": "tool", "tool_call_id": "call1", "content": "18°C"},
        {"role": "tool", "tool_call_id": "call2", "content": '{"sum": 3}'},
        {"role": "assistant", "content": "two\nlines"},
        {"role": "user", "content": "And?"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [call(3, {"city": "P"})]},
        {"role": "tool", "tool_call_id": "call3", "content": "sunny"},
    ],
]


@pytest.mark.parametrize("arguments", ["repr", "verbatim"])
@pytest.mark.parametrize("messages", PHI4_CONVERSATIONS)
@pytest.mark.parametrize("prompt", [False, True])
def test_phi4_mini_renders_as_its_template(
    arguments: str, messages: list[dict[str, Any]], prompt: bool
) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = declare(phi4_layout(arguments))
    req = {"messages": messages, "tools": [WEATHER]}
    given = json.loads(json.dumps(messages))
    for message in given:
        for item in message.get("tool_calls") or []:
            if arguments == "repr":  # a dict: the template prints its repr
                item["function"]["arguments"] = json.loads(item["function"]["arguments"])
    rendered, _ = render_jinja_template(
        [given],
        tools=[WEATHER],
        chat_template=PHI4_TEMPLATE,
        add_generation_prompt=prompt,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
    )
    rendering = fmt.render(req, add_generation_prompt=prompt)
    assert rendering.text == rendered[0]
    written = [i for i, m in enumerate(messages) if m.get("content") and m.get("tool_calls")]
    dropped = tuple(loss for loss in rendering.losses if ".tool_calls" in loss)
    assert dropped == tuple(
        f"messages[{index}].tool_calls: not written: the text is written in their place"
        for index in written
    )
    read = fmt.parse_conversation(rendering.text).messages
    sent = [m for m in messages if m["role"] == "assistant"]
    back = [m for m in read if m["role"] == "assistant"]
    assert len(back) == len(sent)
    for original, parsed in zip(sent, back, strict=True):
        if original.get("content"):
            assert parsed == {"role": "assistant", "content": original["content"]}
            continue
        assert read_calls_of(parsed) == read_calls_of(original)


def test_phi4_mini_layout_is_registrable() -> None:
    with registering.registered(phi4_layout("repr")) as fmt:
        assert pawlette.get_format(fmt.name) is fmt
