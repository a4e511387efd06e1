"""The plain render (pawlette.declare.plain) against the generic writer, its reference.

For every generated request the plain render either leaves it to the generic writer (None)
or gives the generic writer's rendering exactly: text, segments (role, index, kind,
trainability) and losses.  A request the generic writer refuses is always left to it.  The
layouts are the declared chatml and llama3 and small layouts that set the options the plain
render specialises (tools placed in the first or last user turn or the system turn, before or
after its text, as items or an array; reasoning kept, dropped, opened or emptied by the
prompt; call ids, verbatim arguments, one bare call per turn; results with ids, grouped).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pawlette
from pawlette.declare import (
    Frame,
    JsonCalls,
    Layout,
    Marker,
    Option,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
    layout_of,
)
from pawlette.engine.writer import Writer
from pawlette.errors import PawletteError
from pawlette.format import Format
from pawlette.formats import formats
from pawlette.openai import conversation_from_openai
from pawlette.types import Rendering

END = Marker("</s>")


def frames(**changes: Frame) -> dict[str, Frame]:
    made = {
        role: Frame(open=fence(Marker(f"<{role}>"), "\n"), end=fence(END), after=fence("\n"))
        for role in ("system", "user", "assistant", "tool")
    }
    return {**made, **changes}


@dataclasses.dataclass(frozen=True)
class DateOptions:
    today: str = "1 May 2025"


ARRAY_FIRST_IDS = Layout(
    name="array-first-ids",
    summary="tools before the last user text as one array; call ids; results with ids",
    frames=frames(
        assistant=Frame(
            open=fence(Marker("<assistant>")),
            end=fence(END),
            open_after={"tool": fence(Marker("<more>"))},
        )
    ),
    concepts=(
        SystemPrompt(default="Be brief.", default_when="without_tools", placement="first_only"),
        ToolsBlock(
            place="last_user",
            first=True,
            open=fence(Marker("[TOOLS]")),
            close=fence(Marker("[/TOOLS]")),
            array=True,
            wrap="function",
        ),
        Reasoning(open=fence(Marker("<think>")), close=fence(Marker("</think>")), prompt="open"),
        JsonCalls(
            open=fence(Marker("[CALL]")),
            close=fence(Marker("[/CALL]")),
            id_key="id",
            arguments="verbatim",
        ),
        Results(id_close=fence(Marker("[ID]")), id_pattern="[A-Za-z0-9_]+"),
    ),
)

BARE_GROUPED = Layout(
    name="bare-grouped",
    summary="tools after the first user text, indented; one bare call; grouped results",
    begin=fence(Marker("<s>")),
    frames=frames(),
    concepts=(
        Results(grouped=True, item_open=fence("<r>"), item_close=fence(Marker("</r>"))),
        SystemPrompt(default=fence("Today is ", Option("today"), "."), preamble=fence("P: ")),
        ToolsBlock(
            place="first_user",
            separator=fence("\n\n"),
            item_open=fence("\n"),
            item_close=fence("\n"),
            indent=4,
        ),
        Reasoning(
            open=fence(Marker("<think>")),
            close=fence(Marker("</think>")),
            keep="none",
            absent=fence(Marker("<think>"), Marker("</think>")),
            prompt="empty",
        ),
        JsonCalls(open=None, parallel=False, with_content=False, arguments_key="parameters"),
    ),
    options=DateOptions(),
)

SYSTEM_TOOLS_FIRST = Layout(
    name="system-tools-first",
    summary="the tools block first in the system turn, before the preamble",
    frames=frames(
        assistant=Frame(
            open=fence(Marker("<assistant>")),
            end=fence(END),
            prompt_after={"user": fence(Marker("<assistant>"), Marker("<think>"))},
        )
    ),
    concepts=(
        ToolsBlock(
            place="system", first=True, open=fence("Tools:"), item_open=fence(Marker("<tool>"))
        ),
        SystemPrompt(
            always=True, preamble_with_tools=fence("T "), preamble_without_tools=fence("N ")
        ),
        Reasoning(
            open=fence(Marker("<think>")),
            close=fence(Marker("</think>"), "\n"),
            keep="after_last_query",
            empty_on_last=True,
            prompt="opened",
        ),
        JsonCalls(
            open=fence(Marker("<call>")),
            close=fence(Marker("</call>")),
            separator=fence("\n"),
        ),
        Results(),
    ),
)


def _registered_plain() -> dict[str, Format]:
    """The registered formats (and variants) the plain render writes."""
    found = {}
    for name in formats():
        layout = layout_of(pawlette.get_format(name))
        for full in [
            name,
            *(f"{name}:{variant}" for variant in (layout.variants if layout else ())),
        ]:
            fmt = pawlette.get_format(full)
            if getattr(fmt.write, "plain_render", None) is not None:
                found[full] = fmt
    return found


FORMATS: dict[str, Format] = {
    **{
        layout.name: declare(layout)
        for layout in (ARRAY_FIRST_IDS, BARE_GROUPED, SYSTEM_TOOLS_FIRST)
    },
    **_registered_plain(),
}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather \u00e9t\u00e9",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}},
]

TEXT = st.lists(
    st.sampled_from(["a", " ", "\n", "\u00e9", '"', "\\", "<", "</s>", "\u4e2d"]), max_size=6
).map("".join)


@st.composite
def calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    made = []
    for number in range(draw(st.integers(0, 2))):
        arguments = {"city": draw(TEXT)} if draw(st.booleans()) else {}
        spacing = draw(st.sampled_from([None, (",", ":"), (", ", ": ")]))
        call: dict[str, Any] = {
            "type": "function",
            "function": {
                "name": draw(st.sampled_from(["get_weather", "now", ""])),
                "arguments": " " * draw(st.integers(0, 1))
                + json.dumps(arguments, separators=spacing, ensure_ascii=draw(st.booleans())),
            },
        }
        if draw(st.booleans()):
            call["id"] = draw(st.sampled_from([f"call_{number}", "bad id", None]))
        made.append(call)
    return made


@st.composite
def messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    made: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 7))):
        role = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool", "tool"]))
        message: dict[str, Any] = {"role": role}
        content: Any = draw(TEXT)
        if draw(st.integers(0, 9)) == 0:
            content = [{"type": "text", "text": content}, {"type": "text", "text": "!"}]
        if role == "assistant":
            found = draw(calls())
            if found:
                message["tool_calls"] = found
                content = draw(st.sampled_from([content, "", None]))
            if draw(st.booleans()):
                message["reasoning_content"] = draw(TEXT)
        if role == "tool":
            if draw(st.booleans()):
                message["tool_call_id"] = draw(st.sampled_from(["call_0", "bad id"]))
            if draw(st.integers(0, 4)) == 0:
                message["name"] = "get_weather"
        if draw(st.integers(0, 19)) == 0:
            message["name"] = "someone"
        if content is not None or draw(st.booleans()):
            message["content"] = content
        made.append(message)
    return made


def generic(fmt: Format, request: dict[str, Any], prompt: bool) -> Rendering | None:
    """The generic writer's rendering (None: it refuses the request)."""
    try:
        messages, tools = conversation_from_openai(request)
        writer = Writer(fmt.escape_pattern)
        fmt.write(writer, messages, tools, prompt)
    except PawletteError:
        return None
    return writer.rendering()


def plain(fmt: Format, request: object, prompt: bool) -> Rendering | None:
    render = getattr(fmt.write, "plain_render", None)
    assert render is not None, f"{fmt.name} has no plain render"
    found: Rendering | None = render(request, None, prompt)
    return found


@pytest.mark.parametrize("name", sorted(FORMATS))
@given(messages(), st.sampled_from([[], TOOLS[:1], TOOLS]), st.booleans())
def test_the_plain_render_is_the_generic_writers(
    name: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], prompt: bool
) -> None:
    fmt = FORMATS[name]
    request = {"messages": messages, "tools": tools} if tools else {"messages": messages}
    found = plain(fmt, request, prompt)
    if found is not None:
        assert found == generic(fmt, request, prompt)


CONVERSATION: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "A call.",
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "name": "get_weather", "content": "18\u00b0C"},
        {"role": "assistant", "content": "It is 18\u00b0C.", "reasoning_content": "Done."},
        {"role": "user", "content": "Thanks! And tomorrow?"},
    ],
    "tools": TOOLS,
}


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("prompt", [True, False])
def test_a_usual_request_is_rendered_plain(name: str, prompt: bool) -> None:
    # The comparison above must not pass by the plain render leaving everything: the usual
    # request (a system prompt, tools, reasoning, a call and its result) is its own.
    fmt = FORMATS[name]
    request = json.loads(json.dumps(CONVERSATION))
    layout = layout_of(fmt)
    assert layout is not None
    if layout.concept(Reasoning) is None:  # (reasoning is refused there)
        for message in request["messages"]:
            message.pop("reasoning_content", None)
    expected = generic(fmt, request, prompt)
    assert expected is not None
    found = plain(fmt, request, prompt)
    assert found == expected
    assert fmt.render(request, add_generation_prompt=prompt) == expected


def test_losses_come_in_the_layouts_order() -> None:
    # system-tools-first drops reasoning before the last user message and a tool message's
    # name: the reasoning concept comes before the results concept, so its losses come first.
    fmt = FORMATS["system-tools-first"]
    found = plain(fmt, CONVERSATION, True)
    assert found is not None
    assert found == generic(fmt, CONVERSATION, True)
    kinds = [loss.split(": ", 1)[0].rsplit(".", 1)[1] for loss in found.losses]
    assert "reasoning_content" in kinds and "name" in kinds, found.losses
    assert kinds.index("name") > max(i for i, k in enumerate(kinds) if k == "reasoning_content")
