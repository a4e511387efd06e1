"""The compiled renderer against its reference, the generic writer: the same text, segments
and losses for every registered format and variant, on the golden inputs and generated
conversations, and the same error (type and message) where the reference refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pawlette
from pawlette.compile import is_compiled, reference_of
from pawlette.demo import WEATHER_TOOL
from pawlette.engine.writer import Writer
from pawlette.format import coerce_conversation
from tests.support.conversations import conversation_strategy, generate_conversations

GOLDEN = Path(__file__).parent.parent / "golden"


def _names() -> list[str]:
    """Every registered format and every declared variant (``chatml:qwen2.5``)."""
    names = []
    for name in pawlette.formats():
        names.append(name)
        layout = pawlette.get_format(name).declaration
        names += [f"{name}:{variant}" for variant in getattr(layout, "variants", None) or {}]
    return names


NAMES = _names()
GOLDEN_INPUTS = {
    name: [
        json.loads((case / "input.json").read_text(encoding="utf-8"))
        for case in sorted((GOLDEN / name).glob("*/input.json"))
        for case in [case.parent]
    ]
    for name in pawlette.formats()
}
GENERATED = [conversation.request for conversation in generate_conversations(60, seed=7)]


def _outcome(write: Any, fmt: pawlette.Format, request: Any, prompt: bool) -> tuple[Any, ...]:
    """What ``write`` makes of ``request``: the rendering's text, segments and losses, or the
    error's type and message."""
    messages, tools = coerce_conversation(request)
    writer = Writer(fmt.escape_pattern)
    try:
        write(writer, messages, tools, prompt)
    except Exception as error:  # the comparison is of the errors themselves
        return ("error", type(error), str(error))
    rendering = writer.rendering()
    # (a turn written again gives its text whole: the text is still the segments' own)
    assert rendering.text == "".join(segment.text for segment in rendering.segments)
    return ("rendered", rendering.text, rendering.segments, rendering.losses)


def _same(fmt: pawlette.Format, request: Any) -> None:
    try:
        coerce_conversation(request)
    except pawlette.RequestError:
        return  # refused before any writer runs: both see nothing
    for prompt in (False, True):
        compiled = _outcome(fmt.write, fmt, request, prompt)
        reference = _outcome(reference_of(fmt.write), fmt, request, prompt)
        assert compiled == reference, (fmt.name, prompt, request)


def test_every_registered_format_renders_compiled() -> None:
    not_compiled = [name for name in NAMES if not is_compiled(pawlette.get_format(name).write)]
    assert not_compiled == []
    fmt = pawlette.get_format("chatml")
    assert reference_of(fmt.write) is not fmt.write
    assert not is_compiled(reference_of(fmt.write))


@pytest.mark.parametrize("name", NAMES)
def test_golden_inputs_and_generated_conversations_render_as_the_reference(name: str) -> None:
    fmt = pawlette.get_format(name)
    for request in GOLDEN_INPUTS.get(name.split(":")[0], []) + GENERATED:
        _same(fmt, request)


@given(st.sampled_from(NAMES), conversation_strategy())
def test_hypothesis_conversations_render_as_the_reference(name: str, conversation: Any) -> None:
    _same(pawlette.get_format(name), conversation.request)


@pytest.mark.parametrize("arguments", ["repr", "verbatim"])
def test_a_declaration_no_format_ships_renders_as_the_reference(arguments: str) -> None:
    """Phi-4-mini's declaration (text written in place of calls, bare calls joined, arguments
    as Python's repr): concepts no registered format uses are compiled as the reference."""
    from pawlette.declare import declare

    from ..declare.test_json_calls import PHI4_CONVERSATIONS, WEATHER, phi4_layout

    fmt = declare(phi4_layout(arguments))
    requests = [c.request for c in generate_conversations(40, seed=11)]
    requests += [{"messages": messages, "tools": [WEATHER]} for messages in PHI4_CONVERSATIONS]
    for request in requests:
        _same(fmt, request)


def test_refusals_are_the_references() -> None:
    """Requests the writer refuses (a role without a frame, tools in a format without a tools
    block, a name where none is written): the same error from both."""
    requests = [
        {"messages": [{"role": "tool", "content": "18", "tool_call_id": "x"}]},
        {"messages": [{"role": "user", "content": "hi", "name": "ann"}]},
        {
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        },
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "a", "reasoning_content": "r"},
                {"role": "assistant", "content": "b"},
            ]
        },
    ]
    refused = 0
    for name in NAMES:
        fmt = pawlette.get_format(name)
        for request in requests:
            _same(fmt, request)
            refused += _outcome(fmt.write, fmt, request, True)[0] == "error"
    assert refused > 0  # the cases reach the refusals they are here for


@pytest.mark.parametrize("name", ["rwkv", "reka"])
def test_fences_made_in_each_render_are_built_once(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A concept that makes an equal fence anew in each render (another tuple) gets the
    segments kept by value from its second render on: the same text and segments, nothing
    built again."""
    from pawlette.engine.writer import ConstantSegments

    fmt = pawlette.get_format(name)
    conversation = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "And?"},
        ]
    }
    first = fmt.render(conversation, add_generation_prompt=True)
    built: list[object] = []
    build = ConstantSegments.build

    def counted(self: ConstantSegments, *arguments: Any, **keywords: Any) -> Any:
        built.append(arguments[1])
        return build(self, *arguments, **keywords)

    monkeypatch.setattr(ConstantSegments, "build", counted)
    assert fmt.render(conversation, add_generation_prompt=True) == first
    assert built == []


def _kept(whole: dict[tuple[Any, ...], Any], index: int, message: Any) -> Any:
    """The entry a compiled writer's store of whole turns holds for ``message`` at ``index``
    (after whichever role came before it)."""
    found = [kept for key, kept in whole.items() if key[:2] == (index, id(message))]
    assert len(found) == 1, whole.keys()
    return found[0]


WHOLE_TURN_NAMES = [
    name
    for name in NAMES
    if any(key.startswith("whole_") for key in pawlette.get_format(name).write.__globals__)
]
"""The formats some of whose turns the compiled writer keeps whole by message."""


def test_some_formats_keep_turns_whole() -> None:
    assert {"phi3", "gemma", "chatml"} <= set(WHOLE_TURN_NAMES)
    # (an assistant turn whose hooks act only on reasoning or calls: kept for a text alone)
    assert "whole_assistant" in pawlette.get_format("bielik").write.__globals__
    kept = [key for key in pawlette.get_format("kimi").write.__globals__ if "whole_" in key]
    assert "whole_user" not in kept  # (its user turn's opener is a concept's)


@pytest.mark.parametrize("name", ["phi3", "gemma", "smollm3"])
def test_a_turn_met_again_is_written_from_its_kept_segments(name: str) -> None:
    """A message written again at the same index (the next request of a conversation) is
    written from the segments its turn wrote before: the same segment objects."""
    fmt = pawlette.get_format(name)
    conversation = {
        "messages": [
            {"role": "user", "content": "What is Lima known for?"},
            {"role": "assistant", "content": " Its food. "},
            {"role": "user", "content": "And Oslo?"},
        ]
    }
    first = fmt.render(conversation, add_generation_prompt=True)
    again = fmt.render(conversation, add_generation_prompt=True)
    assert again == first
    questions = [
        number
        for number, segment in enumerate(first.segments)
        if segment.kind == "content" and segment.message_index == 0
    ]
    assert questions
    assert all(again.segments[number] is first.segments[number] for number in questions)


@pytest.mark.parametrize("name", ["rwkv", "smollm3", "phi3"])
def test_a_turn_of_calls_the_format_drops_is_kept_whole(name: str) -> None:
    """An assistant message of calls alone, in a format that drops calls, writes an empty
    turn: kept whole by the message, as a turn of text is."""
    fmt = pawlette.get_format(name)
    call = {"id": "call00001", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    conversation = {
        "messages": [
            {"role": "user", "content": "What is Lima known for?"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "user", "content": "And Oslo?"},
        ]
    }
    first = fmt.render(conversation, add_generation_prompt=True)
    messages, _ = coerce_conversation(conversation)
    whole = fmt.write.__globals__["whole_assistant"]
    assert _kept(whole, 1, messages[1])[0] is messages[1]
    assert fmt.render(conversation, add_generation_prompt=True) == first


@pytest.mark.parametrize(
    ("name", "role", "index"),
    [
        ("minimax", "system", 0),  # (a tools block before the next turn; its text trimmed)
        ("minimax", "user", 1),  # (after the tools block, written before it)
        ("smollm3", "system", 0),  # (a preamble at the first message, its text cleaned)
    ],
)
def test_a_turn_whose_hooks_act_on_its_message_alone_is_kept_whole(
    name: str, role: str, index: int
) -> None:
    """A turn whose hooks write outside it (a tools block before it) or as a function of its
    message and index (a preamble, a trimmed or cleaned text) is kept whole by the message."""
    fmt = pawlette.get_format(name)
    conversation = {
        "messages": [
            {"role": "system", "content": "Be brief. "},
            {"role": "user", "content": "What is Lima known for?"},
        ],
        "tools": [WEATHER_TOOL],
    }
    first = fmt.render(conversation, add_generation_prompt=True)
    messages, _ = coerce_conversation(conversation)
    whole = fmt.write.__globals__[f"whole_{role}"]
    assert _kept(whole, index, messages[index])[0] is messages[index]
    assert fmt.render(conversation, add_generation_prompt=True) == first


@pytest.mark.parametrize("name", WHOLE_TURN_NAMES)
def test_turns_kept_whole_render_as_the_reference_wherever_met_again(name: str) -> None:
    """The same messages met again at other indices, twice in one conversation, after a
    system message and behind other turns: each render as the reference's."""
    fmt = pawlette.get_format(name)
    question = {"role": "user", "content": "What is Lima known for?"}
    answer = {"role": "assistant", "content": "Its food."}
    blank = {"role": "assistant", "content": "  Its food.\n"}
    system = {"role": "system", "content": "Be brief."}
    spaced = {"role": "system", "content": " Be brief. /think "}
    thought = {"role": "assistant", "content": "Its food.", "reasoning_content": "Lima."}
    call = {
        "role": "assistant",
        "content": "Its food.",
        "tool_calls": [
            {
                "id": "call00001",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "Lima"}'},
            }
        ],
    }
    result = {"role": "tool", "tool_call_id": "call00001", "content": "Its food."}
    calls_only = {**call, "content": ""}  # (a turn of no content: kept whole where dropped)
    calls_null = {**call, "content": None}
    empty = {"role": "assistant", "content": ""}
    requests = [
        {"messages": [question, calls_only, result, answer, question], "tools": [WEATHER_TOOL]},
        {"messages": [question, calls_null, result, calls_only, question]},
        {"messages": [question, empty, question, calls_only, result, empty]},
        {"messages": [system, question, calls_only, question, empty, question]},
        {"messages": [system, question, answer, question], "tools": [WEATHER_TOOL]},
        {"messages": [spaced, question, system, question], "tools": [WEATHER_TOOL]},
        {"messages": [question, system, question, answer, question], "tools": [WEATHER_TOOL]},
        {"messages": [question, answer, question]},
        {"messages": [question, thought, question, answer, question]},
        # (a turn kept at or before the last query, met again at its index after it)
        {"messages": [question, thought, question]},
        {"messages": [question, thought]},
        {"messages": [question, call, result, question], "tools": [WEATHER_TOOL]},
        {"messages": [question, call, result], "tools": [WEATHER_TOOL]},
        {"messages": [question, call, result, answer, question], "tools": [WEATHER_TOOL]},
        {"messages": [question, answer, result, call, result], "tools": [WEATHER_TOOL]},
        {"messages": [question, answer, question, answer, question]},
        {"messages": [system, question, answer, question]},
        {"messages": [question, blank, question, answer, question]},
        {"messages": [question, answer, question]},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}, answer]},
    ]
    for request in requests * 2:
        _same(fmt, request)


ESCAPING_NAMES = [name for name in WHOLE_TURN_NAMES if pawlette.get_format(name).escape_pattern]


def test_formats_that_escape_keep_turns_whole() -> None:
    assert {"pcml", "omni"} <= set(ESCAPING_NAMES)
    # (a result alone in its turn, which the results concept writes itself)
    assert "whole_claim_tool" in pawlette.get_format("pcml").write.__globals__


@pytest.mark.parametrize("name", ESCAPING_NAMES)
def test_turns_kept_whole_where_markers_are_escaped_render_as_the_reference(name: str) -> None:
    """In a format that escapes markers in text, messages holding marker spellings and
    backslashes before them, names, reasoning, calls and results, met again after other
    turns (and after text whose backslashes a marker settles): each render as the
    reference's."""
    fmt = pawlette.get_format(name)
    markers = [*sorted(fmt.stop), "[USR]", "<|im_end|>", "<end>"]
    tricky = "\\".join(markers) + "\\"
    question = {"role": "user", "content": f"Say {tricky}"}
    named = {"role": "user", "name": 'Al "x" \\', "content": "Hi \\"}
    answer = {"role": "assistant", "content": f"{markers[0]} \\\\"}
    thought = {"role": "assistant", "content": "ok\\", "reasoning_content": f"{tricky}"}
    call = {
        "role": "assistant",
        "content": "Checking\\",
        "tool_calls": [
            {
                "id": "call00001",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "\\\\Lima"}'},
            }
        ],
    }
    result = {"role": "tool", "tool_call_id": "call00001", "content": f"{tricky}"}
    system = {"role": "system", "content": f"Be brief {tricky}"}
    tools = [WEATHER_TOOL]
    requests = [
        {"messages": [question, answer, question]},
        {"messages": [named, answer, question, answer, named]},
        {"messages": [question, thought, named, call, result, answer, question], "tools": tools},
        {"messages": [question, call, result, result, answer, question], "tools": tools},
        {"messages": [system, question, call, result, thought, question], "tools": tools},
        {"messages": [question, call, result, thought, question]},
        {"messages": [result, question, answer]},
    ]
    for request in requests * 2:
        _same(fmt, request)


@pytest.mark.parametrize("name", ["pcml", "llama3", "deepseek"])
def test_a_result_met_again_is_written_from_its_kept_segments(name: str) -> None:
    """A result its concept writes itself, met again at the same index after the same turn,
    is written from the segments it wrote before (the same segment objects), and after
    another turn as the reference writes it."""
    fmt = pawlette.get_format(name)
    call = {
        "id": "call00001",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"location": "Lima"}'},
    }
    result = {"role": "tool", "tool_call_id": "call00001", "content": "Sunny."}
    conversation = {
        "messages": [
            {"role": "user", "content": "Weather in Lima?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            result,
        ],
        "tools": [WEATHER_TOOL],
    }
    first = fmt.render(conversation, add_generation_prompt=True)
    again = fmt.render(conversation, add_generation_prompt=True)
    assert again == first
    written = [n for n, segment in enumerate(first.segments) if segment.message_index == 2]
    assert written
    assert all(again.segments[n] is first.segments[n] for n in written)
    _same(fmt, {"messages": [conversation["messages"][0], result, result], "tools": [WEATHER_TOOL]})


def test_a_kept_turn_after_a_pending_backslash_renders_as_the_reference() -> None:
    """Turns with no end marker, in a format that escapes: text ending in a backslash leaves
    its run pending until the next marker settles it, so a kept turn met right after such a
    text is written anew (and a kept turn that ends so leaves it pending again)."""
    from pawlette.declare import Frame, Layout, Marker, Results, declare, fence
    from pawlette.formats.pcml.escaping import EscapedText

    fmt = declare(
        Layout(
            name="pending",
            summary="turns without an end marker",
            frames={
                "user": Frame(open=fence(Marker("<u>"))),
                "assistant": Frame(open=fence(Marker("<a>")), end=fence(Marker("<e>"))),
                "tool": Frame(open=fence(Marker("<t>"))),
            },
            concepts=(Results(), EscapedText()),
        )
    )
    assert {"whole_user", "whole_claim_tool"} <= set(fmt.write.__globals__)
    first = {"role": "user", "content": "a\\"}
    second = {"role": "user", "content": "b\\"}
    answer = {"role": "assistant", "content": "c\\"}
    result = {"role": "tool", "content": "d\\"}
    requests = [
        {"messages": [first, second, answer]},
        {"messages": [first, second, answer]},
        {"messages": [second, first, answer, result, result, first]},
        {"messages": [second, first, answer, result, result, first]},
    ]
    for request in requests:
        _same(fmt, request)


def test_a_kept_result_after_another_role_renders_as_the_reference() -> None:
    """A results turn whose opener depends on the turn before it: the same result at the same
    index after another role is written with that role's opener, not the kept one's."""
    from pawlette.declare import Frame, Layout, Marker, Results, declare, fence

    fmt = declare(
        Layout(
            name="after_role",
            summary="a result's opener by the turn before it",
            frames={
                "user": Frame(open=fence(Marker("<u>")), end=fence(Marker("<e>"))),
                "assistant": Frame(open=fence(Marker("<a>")), end=fence(Marker("<e>"))),
                "tool": Frame(
                    open=fence(Marker("<t>")),
                    end=fence(Marker("<e>")),
                    open_after={"tool": fence(Marker("<t+>"))},
                ),
            },
            concepts=(Results(),),
        )
    )
    assert "whole_claim_tool" in fmt.write.__globals__
    result = {"role": "tool", "content": "Sunny."}
    question = {"role": "user", "content": "Hi"}
    answer = {"role": "assistant", "content": "Hello."}
    requests = [
        {"messages": [question, answer, result, result]},
        {"messages": [question, result, result, answer]},
        {"messages": [answer, question, result, result]},
    ]
    for request in requests * 2:
        _same(fmt, request)


def test_a_grouped_result_is_kept_by_the_roles_around_it() -> None:
    """Results grouped in one turn (the turn opens before the first, ends after the last): a
    result met again at the same index is written from its kept segments where the messages
    around it have the same roles, and as the reference writes it between others."""
    fmt = pawlette.get_format("chatml")
    assert "whole_claim_tool" in fmt.write.__globals__["compiled_write"].__globals__
    question = {"role": "user", "content": "Weather in Lima and Oslo?"}
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call0000{number}",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "Lima"}'},
            }
            for number in (1, 2)
        ],
    }
    result = {"role": "tool", "tool_call_id": "call00001", "content": "Sunny."}
    other = {"role": "tool", "tool_call_id": "call00002", "content": "Rain."}
    answer = {"role": "assistant", "content": "Sunny, then rain."}
    requests = [
        {"messages": [question, call, result, other, answer]},
        {"messages": [question, call, result, answer]},
        {"messages": [question, call, result]},
        {"messages": [question, call, other, result, answer]},
        {"messages": [question, call, other, result]},
        {"messages": [question, result, result, result]},
    ]
    for request in requests * 2:
        _same(fmt, request)
    first = fmt.render(requests[0], add_generation_prompt=True)
    again = fmt.render(requests[0], add_generation_prompt=True)
    assert again == first
    written = [n for n, segment in enumerate(first.segments) if segment.message_index == 2]
    assert written
    assert all(again.segments[n] is first.segments[n] for n in written)


def _counted_checks(local: bool) -> tuple[pawlette.Format, list[str]]:
    """A format of two concepts whose checks record each call and a loss naming what they
    saw (``local``: they say their checks are functions of the request)."""
    from dataclasses import dataclass

    from pawlette.declare import Concept, Frame, Layout, Marker, declare, fence
    from pawlette.declare.write import Render

    calls: list[str] = []

    @dataclass(frozen=True)
    class Counted(Concept):
        label: str

        def check_is_local(self) -> bool:
            return local

        def check(self, out: Render) -> None:
            calls.append(self.label)
            out.handles("tools")
            seen = f"{len(out.messages)} messages, {len(out.tools)} tools, prompt {out.prompt}"
            out.lose("messages", f"{self.label}: {seen}")

    fmt = declare(
        Layout(
            name="counted",
            summary="checks that count their calls",
            frames={
                "user": Frame(open=fence(Marker("<u>")), end=fence(Marker("<e>"))),
                "assistant": Frame(open=fence(Marker("<a>")), end=fence(Marker("<e>"))),
            },
            concepts=(Counted("first"), Counted("second")),
        )
    )
    return fmt, calls


def test_checks_of_a_request_met_again_are_replayed() -> None:
    """Checks that are functions of the request (:meth:`Concept.check_is_local`) are called
    once for the same messages, tools and prompt flag: their losses come back in their
    order; other messages, other tools or the other flag are checked anew."""
    fmt, calls = _counted_checks(local=True)
    question = {"role": "user", "content": "Hi"}
    answer = {"role": "assistant", "content": "Hello."}
    time_tool = {"type": "function", "function": {"name": "get_time", "parameters": {}}}
    requests = [
        {"messages": [question], "tools": [WEATHER_TOOL]},
        {"messages": [question, answer, question], "tools": [WEATHER_TOOL]},
        {"messages": [question], "tools": [WEATHER_TOOL, time_tool]},
        {"messages": [question]},
    ]
    for request in requests:
        for _ in range(2):  # (the reader keeps tools it meets again)
            fmt.render(request)
            fmt.render(request, add_generation_prompt=True)
        for prompt in (False, True):
            before = len(calls)
            rendering = fmt.render(request, add_generation_prompt=prompt)
            assert len(calls) == before, request  # replayed, not called
            messages, tools = len(request["messages"]), len(request.get("tools", ()))
            seen = f"{messages} messages, {tools} tools, prompt {prompt}"
            assert rendering.losses == (f"messages: first: {seen}", f"messages: second: {seen}")
        _same(fmt, request)


def test_checks_of_messages_met_again_with_new_tools_of_the_same_kinds_are_replayed() -> None:
    """A local check reads of the tools only their number and kinds: messages checked with
    tools the reader keeps, met again with tools it has not kept (other definitions each
    time), replay the checks; tools of another number or kind are checked anew."""
    fmt, calls = _counted_checks(local=True)
    question = {"role": "user", "content": "Hi"}

    def tool(kind: str, number: int) -> dict[str, Any]:
        return {"type": kind, kind: {"name": "probe", "description": f"version {number}"}}

    for _ in range(3):  # (the reader keeps tools it meets again: their checks are kept)
        fmt.render({"messages": [question], "tools": [tool("function", 0)]})
    before = len(calls)
    for number in range(1, 4):
        rendering = fmt.render({"messages": [question], "tools": [tool("function", number)]})
        assert len(calls) == before  # replayed, not called
        assert rendering.losses == tuple(
            f"messages: {label}: 1 messages, 1 tools, prompt False" for label in ("first", "second")
        )
    two = [tool("function", 7), tool("function", 8)]
    assert (
        fmt.render({"messages": [question], "tools": two})
        .losses[0]
        .endswith("2 tools, prompt False")
    )
    assert len(calls) == before + 2
    fmt.render({"messages": [question], "tools": [tool("action", 9)]})
    assert len(calls) == before + 4  # another kind: checked anew


def test_checks_of_messages_met_again_with_tools_never_kept_are_replayed() -> None:
    """Messages checked with tools the reader does not keep (a new description in each
    request) are checked anew the first time; met again with other new tools of the same
    number and kinds, their checks are replayed.  New messages with new tools are checked
    each time."""
    fmt, calls = _counted_checks(local=True)
    question = {"role": "user", "content": "Hi"}

    def tools(number: int) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": "probe", "description": f"{number}"}}]

    fmt.render({"messages": [question], "tools": tools(0)})
    fmt.render({"messages": [question], "tools": tools(1)})
    before = len(calls)
    for number in range(2, 5):
        rendering = fmt.render({"messages": [question], "tools": tools(number)})
        assert len(calls) == before  # replayed, not called
        assert rendering.losses[0] == "messages: first: 1 messages, 1 tools, prompt False"
    for number in range(5, 8):
        fmt.render(
            {"messages": [{"role": "user", "content": f"new {number}"}], "tools": tools(number)}
        )
    assert len(calls) == before + 6


def test_a_turn_kept_before_the_last_query_is_kept_when_met_again() -> None:
    """An answer whose turn a hook writes otherwise after the last query (Qwen3's reasoning)
    is kept whole at or before it, from its second meeting on: a turn met once (a new call
    in every request) makes no entry."""
    fmt = pawlette.get_format("chatml")
    # (texts no other test renders: the reader hands back the message it read before)
    answer = {"role": "assistant", "content": "Its ceviche.", "reasoning_content": "Peru."}
    conversation = {
        "messages": [
            {"role": "user", "content": "What is Lima known for, first?"},
            answer,
            {"role": "user", "content": "And Oslo?"},
        ]
    }
    messages, _ = coerce_conversation(conversation)
    whole = fmt.write.__globals__["whole_assistant"]
    first = fmt.render(conversation, add_generation_prompt=True)
    assert not [key for key in whole if key[:2] == (1, id(messages[1]))]
    assert fmt.render(conversation, add_generation_prompt=True) == first
    assert _kept(whole, 1, messages[1])[0] is messages[1]
    assert fmt.render(conversation, add_generation_prompt=True) == first
    # (after the last query, the reasoning is written: never from the kept turn)
    _same(fmt, {"messages": conversation["messages"][:2]})


@pytest.mark.parametrize("name", NAMES)
def test_messages_met_again_with_new_tools_render_as_the_reference(name: str) -> None:
    """The same messages with tools that differ in each request (never the reader's kept
    ones), then with none: the compiled writer's replayed checks and kept turns give what
    the reference gives each time."""
    fmt = pawlette.get_format(name)
    requests = [c.request for c in generate_conversations(12, seed=5)]
    for request in requests:
        for number in range(3):
            tools = json.loads(json.dumps(request.get("tools") or [WEATHER_TOOL]))
            for tool in tools:
                tool["function"]["description"] = f"changed {number}"
            _same(fmt, {"messages": request["messages"], "tools": tools})
        _same(fmt, {"messages": request["messages"]})


def test_checks_not_said_local_are_called_in_every_render() -> None:
    fmt, calls = _counted_checks(local=False)
    request = {"messages": [{"role": "user", "content": "Hi"}]}
    for _ in range(3):
        fmt.render(request)
    assert calls == ["first", "second"] * 3


def test_a_turn_holding_the_tools_is_kept_by_the_tools() -> None:
    """PCML's system turn holds the tools block (:meth:`Concept.hook_reads_tools`): met
    again with the same tools, it is written from its kept segments; with other tools it is
    written with those."""
    fmt = pawlette.get_format("pcml")
    system = {"role": "system", "content": "Be brief."}
    question = {"role": "user", "content": "Hi"}
    time_tool = {"type": "function", "function": {"name": "get_time", "parameters": {}}}
    weather = {"messages": [system, question], "tools": [WEATHER_TOOL]}
    for _ in range(2):  # (the reader keeps tools it meets again)
        fmt.render(weather)
    first = fmt.render(weather)
    again = fmt.render(weather)
    assert again == first
    turn = [n for n, segment in enumerate(first.segments) if segment.message_index == 0]
    assert any(first.segments[n].kind == "tools" for n in turn)
    assert all(again.segments[n] is first.segments[n] for n in turn)
    other = {"messages": [system, question], "tools": [time_tool]}
    for _ in range(3):
        text = fmt.render(other).text
        assert "get_time" in text and "get_weather" not in text
        _same(fmt, other)


@pytest.mark.parametrize("text", ["Be brief.", "Ends in a backslash \\", "Says [SYS] and \\[/SYS]"])
def test_a_turn_holding_new_tools_writes_its_part_before_them_from_kept_segments(
    text: str,
) -> None:
    """PCML's system turn with tools new in each request (never the reader's kept ones): its
    part before the tools block (its open, its text) is written again from the segments kept
    for its message, the block and the turn's end anew; the text is the reference's, with a
    backslash run the block's marker settles and escaped markers too."""
    fmt = pawlette.get_format("pcml")
    system = {"role": "system", "content": text}
    question = {"role": "user", "content": "Hi"}
    renderings = []
    for number in range(3):
        tool = json.loads(json.dumps(WEATHER_TOOL))
        tool["function"]["description"] = f"new {number}"
        request = {"messages": [system, question], "tools": [tool]}
        _same(fmt, request)
        renderings.append(fmt.render(request))
        assert f"new {number}" in renderings[-1].text
    # (the system text's segment, written by the writer anew in each render, is the same
    # object from the kept part; a pending backslash run is settled on a copy of it)
    first, second = (rendering.segments[1] for rendering in renderings[1:])
    assert first.kind == second.kind == "content"
    assert (second is first) is not text.endswith("\\")
    assert second == first


def test_a_turn_holding_tools_the_reader_does_not_keep_is_written_anew() -> None:
    """Tools given as core values (a caller may change their definitions between renders)
    are not the reader's kept ones: a turn holding them is never kept by their identity."""
    from pawlette.types import Tool

    fmt = pawlette.get_format("pcml")
    system = {"role": "system", "content": "Be brief."}
    messages, _ = coerce_conversation({"messages": [system, {"role": "user", "content": "Hi"}]})
    tools = (Tool("probe", {"name": "probe", "description": "first"}),)

    def text() -> str:
        writer = Writer(fmt.escape_pattern)
        fmt.write(writer, messages, tools, False)
        return writer.rendering().text

    assert '"description":"first"' in text()
    tools[0].definition["description"] = "second"  # type: ignore[index]
    assert '"description":"second"' in text()


def _counted_prompt(local: bool) -> tuple[pawlette.Format, list[int]]:
    """A format whose generation prompt a concept writes to (``local``: it says the prompt is
    a function of its index and the role before it), recording each call's index."""
    from dataclasses import dataclass

    from pawlette.declare import Concept, Frame, Layout, Marker, declare, fence
    from pawlette.declare.write import Render

    calls: list[int] = []

    @dataclass(frozen=True)
    class Lead(Concept):
        def prompt_is_local(self) -> bool:
            return local

        def write_prompt(self, out: Render) -> None:
            calls.append(len(out.messages))
            out.raw(f"#{len(out.messages)} after {out.previous}:", "generation_prompt")

    fmt = declare(
        Layout(
            name="prompt_lead",
            summary="a prompt a concept writes to",
            frames={
                "user": Frame(open=fence(Marker("<u>")), end=fence(Marker("<e>"))),
                "assistant": Frame(
                    open=fence(Marker("<a>")),
                    end=fence(Marker("<e>")),
                    open_after={"assistant": fence(Marker("<a+>"))},
                ),
            },
            concepts=(Lead(),),
        )
    )
    return fmt, calls


def test_a_generation_prompt_met_again_is_written_from_its_kept_segments() -> None:
    """A generation prompt whose concepts say it is a function of its index and the role
    before it (:meth:`Concept.prompt_is_local`) is written once for each: met again, from its
    kept segments; at another index or after another role, anew."""
    fmt, calls = _counted_prompt(local=True)
    question = {"role": "user", "content": "Hi"}
    answer = {"role": "assistant", "content": "Hello."}
    requests = [{"messages": [question]}, {"messages": [answer]}, {"messages": [answer, answer]}]
    for request in requests:
        first = fmt.render(request, add_generation_prompt=True)
        before = len(calls)
        assert fmt.render(request, add_generation_prompt=True) == first
        assert len(calls) == before  # kept, not written again
    assert calls == [1, 1, 2]
    for request in requests:
        _same(fmt, request)
    texts = [fmt.render(request, add_generation_prompt=True).text for request in requests]
    assert texts == [
        "<u>Hi<e><a>#1 after user:",
        "<a>Hello.<e><a+>#1 after assistant:",
        "<a>Hello.<e><a+>Hello.<e><a+>#2 after assistant:",
    ]


def test_a_generation_prompt_not_said_local_is_written_in_every_render() -> None:
    fmt, calls = _counted_prompt(local=False)
    for _ in range(3):
        fmt.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    assert calls == [1, 1, 1]


def test_a_kept_generation_prompt_after_a_pending_backslash_renders_as_the_reference() -> None:
    """In a format that escapes, a prompt after text ending in a backslash settles its run
    (the prompt's opener is a marker): written anew there, kept elsewhere."""
    from pawlette.declare import Frame, Layout, Marker, declare, fence
    from pawlette.formats.pcml.escaping import EscapedText

    fmt = declare(
        Layout(
            name="pending_prompt",
            summary="turns without an end marker",
            frames={
                "user": Frame(open=fence(Marker("<u>"))),
                "assistant": Frame(open=fence(Marker("<a>")), end=fence(Marker("<e>"))),
            },
            concepts=(EscapedText(),),
        )
    )
    assert "prompts_kept" in fmt.write.__globals__
    requests = [
        {"messages": [{"role": "user", "content": "a"}]},
        {"messages": [{"role": "user", "content": "a\\"}]},
        {"messages": [{"role": "user", "content": "b"}]},
        {"messages": [{"role": "user", "content": "b\\"}]},
    ]
    for request in requests * 2:
        _same(fmt, request)
    assert fmt.render(requests[1], add_generation_prompt=True).text == "<u>a\\\\<a>"


def test_a_local_turn_is_kept_whatever_the_tools() -> None:
    """A turn whose hooks are all local (SmolLM3's system turn: a preamble that does not
    depend on the tools) is kept by its message alone, with tools the reader does not keep."""
    from pawlette.types import Tool

    fmt = pawlette.get_format("smollm3")
    assert not fmt.write.__globals__["plan"].turns["system"].reads_tools
    system = {"role": "system", "content": "Be brief."}
    messages, _ = coerce_conversation({"messages": [system, {"role": "user", "content": "Hi"}]})
    renderings = []
    for number in range(2):
        tools = (Tool("probe", {"name": "probe", "description": f"tools {number}"}),)
        writer = Writer(fmt.escape_pattern)
        fmt.write(writer, messages, tools, True)
        renderings.append(writer.rendering())
    first, again = renderings
    turn = [n for n, segment in enumerate(first.segments) if segment.message_index == 0]
    assert any(first.segments[n].kind == "content" for n in turn)
    assert all(again.segments[n] is first.segments[n] for n in turn)


def test_a_claim_up_to_an_index_leaves_later_messages_to_their_framed_turns() -> None:
    """Llama 3's tools block claims the assistant messages (an answer right after the system
    message holds the tools, as a user turn): it writes those at index 0 and 1 itself
    (:meth:`Concept.claims_up_to`), and every later one is the framed turn the compiled writer
    writes without the claim's call, found whole when met again."""
    fmt = pawlette.get_format("llama3")
    source = fmt.write.__doc__ or fmt.write.__globals__["compiled_write"].__doc__
    assert "if index <= 1:\n                claim_assistant(out, index)" in source
    answer = {"role": "assistant", "content": "Lima is known for its food."}
    for head in ([answer], [{"role": "system", "content": "Be brief."}, answer]):
        conversation = {
            "messages": [*head, {"role": "user", "content": "And Oslo?"}, answer],
            "tools": [WEATHER_TOOL],
        }
        _same(fmt, conversation)
        first = fmt.render(conversation, add_generation_prompt=True)
        assert fmt.render(conversation, add_generation_prompt=True) == first
        messages, _ = coerce_conversation(conversation)
        last = len(messages) - 1
        whole = fmt.write.__globals__["whole_assistant"]
        assert _kept(whole, last, messages[last])[0] is messages[last]
        # (the answer after the system message holds the tools, in a user turn)
        hosted = [segment for segment in first.segments if segment.kind == "tools"]
        assert hosted and hosted[0].role == "user" and hosted[0].message_index == len(head) - 1


def test_a_hook_acting_on_the_first_two_messages_leaves_later_turns_kept_whole() -> None:
    """Llama 3's tools block is in the turn of the message after the system message
    (``hook_needs``: ``"first_two_messages"``): a later user turn is kept whole by its
    message, the one holding the tools is not."""
    fmt = pawlette.get_format("llama3")
    conversation = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is Lima known for?"},
            {"role": "assistant", "content": "Its food."},
            {"role": "user", "content": " And Oslo? "},
        ],
        "tools": [WEATHER_TOOL],
    }
    _same(fmt, conversation)
    first = fmt.render(conversation, add_generation_prompt=True)
    messages, _ = coerce_conversation(conversation)
    whole = fmt.write.__globals__["whole_user"]
    assert _kept(whole, 3, messages[3])[0] is messages[3]
    assert not [key for key in whole if key[:2] == (1, id(messages[1]))]
    again = fmt.render(conversation, add_generation_prompt=True)
    assert again == first
    question = [
        number for number, segment in enumerate(first.segments) if segment.message_index == 3
    ]
    assert question and all(again.segments[n] is first.segments[n] for n in question)
