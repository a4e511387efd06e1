"""``ToolsBlock(place="user_after_system")``, as a user outside the package would use it: Llama
3.2 declared from public names only (``pawlette.declare``), against Meta's real template in
llama.cpp's corpus, run as transformers runs it.

Meta's Llama 3.x templates (``tools_in_user_message``) write the tools into the message right
after the first system message (the first message when there is none), whatever its role, as
a user turn.  The declaration says so with the place alone: its renders are the template's,
with and without tools; the template's own call turns parse back; a system message there is
written as the user turn (a recorded loss), and so is an answer without calls; a tool
message or an answer with calls is refused with the message's role or calls as the path.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

import pytest

import pawlette
from pawlette.declare import (
    Frame,
    Ignored,
    JsonCalls,
    Layout,
    Marker,
    Option,
    Results,
    SystemPrompt,
    ToolsBlock,
    Trimmed,
    declare,
    fence,
)
from pawlette.export import export_jinja

from ..formats.families.llama3 import KEPT
from ..support.conversations import generate_conversations
from ..support.template_compare import compare_renders, corpus_reference, own_turns
from . import registering

BEGIN = Marker("<|begin_of_text|>")
HEADER, HEADER_END = Marker("<|start_header_id|>"), Marker("<|end_header_id|>")
END_OF_TURN, END_OF_MESSAGE = Marker("<|eot_id|>"), Marker("<|eom_id|>")
INSTRUCTION = (
    "Given the following functions, please respond with a JSON for a function call with its "
    "proper arguments that best answers the given prompt.\n\n"
    'Respond in the format {"name": function name, "parameters": dictionary of argument name '
    "and its value}.Do not use variables.\n\n"
)
TODAY = datetime.date(2025, 3, 5)


@dataclass(frozen=True)
class Options:
    """The day Llama 3.2's template reads from its clock (``strftime_now("%d %b %Y")``)."""

    date: datetime.date = TODAY


def header(role: str) -> Frame:
    also = (fence(END_OF_MESSAGE),) if role == "assistant" else ()
    return Frame(
        open=fence(HEADER, role, HEADER_END, "\n\n"), end=fence(END_OF_TURN), also_end=also
    )


LAYOUT = Layout(
    name="outsider-llama-3.2",
    summary="Llama 3.2 as an outside user declares it: the tools after the system message",
    begin=fence(BEGIN),
    frames={
        "system": header("system"),
        "user": header("user"),
        "assistant": header("assistant"),
        "tool": header("ipython"),
    },
    concepts=(
        SystemPrompt(
            always=True,
            preamble_with_tools=fence("Environment: ipython\n"),
            preamble=fence(
                "Cutting Knowledge Date: December 2023\nToday Date: ",
                Option("date", "%d %b %Y"),
                "\n\n",
            ),
        ),
        ToolsBlock(
            place="user_after_system",
            first=True,
            open=fence(INSTRUCTION),
            item_close=fence("\n\n"),
            indent=4,
        ),
        JsonCalls(
            open=None,
            arguments_key="parameters",
            parallel=False,
            with_content=False,
            drops_content=True,
        ),
        Trimmed(roles=("system", "user", "assistant")),
        Results(json_text=True),
        Ignored(("name", "reasoning")),
    ),
    options=Options(),
)
FORMAT = declare(LAYOUT)
REFERENCE = corpus_reference("meta-llama-Llama-3.2-3B-Instruct", today=TODAY)
CONVERSATIONS = generate_conversations(
    48, seed=22, avoid=FORMAT.special_markers, parallel_calls=False
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "now",
            "description": "The time.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


def test_the_conversations_hold_what_the_place_decides() -> None:
    kinds = [conversation.kinds for conversation in CONVERSATIONS]
    assert sum("tools" in held for held in kinds) >= 10
    assert sum("tools" not in held for held in kinds) >= 10
    # A second system message after the first, with tools: the host is that system message.
    assert any({"tools", "several-systems"} <= held for held in kinds)


def test_renders_as_the_template_with_and_without_tools() -> None:
    report = compare_renders(FORMAT, REFERENCE, CONVERSATIONS)
    assert report.agrees, report.describe()
    assert report.identical == report.compared >= 60, report.summary()
    assert report.read_clock  # the date written is the one the template reads


def test_the_templates_own_call_turns_parse_back() -> None:
    report = own_turns(FORMAT, REFERENCE, CONVERSATIONS, normalise=KEPT)
    assert report.agrees, report.describe()
    calls = sum(
        1
        for conversation in CONVERSATIONS
        for message in conversation.request["messages"]
        if message["role"] == "assistant" and message.get("tool_calls")
    )
    assert calls >= 10 and report.total >= calls


def _request(*roles: str) -> dict[str, Any]:
    messages = [{"role": role, "content": f"Text {number}."} for number, role in enumerate(roles)]
    return {"messages": messages, "tools": TOOLS}


@pytest.mark.parametrize(
    "roles",
    [
        ("system", "system", "user"),
        ("system", "user", "user"),
        ("user", "user"),
        ("system",),
        ("system", "assistant", "user"),
        ("assistant", "user"),
    ],
)
def test_the_host_is_the_message_after_the_system_message_as_the_template_writes_it(
    roles: tuple[str, ...],
) -> None:
    request = _request(*roles)
    expected = REFERENCE.render_request(request, add_generation_prompt=True)
    if expected.text is None:  # the template refuses tools with no message to hold them
        with pytest.raises(pawlette.RequestError, match=r"^messages: no message to hold"):
            FORMAT.render(request, add_generation_prompt=True)
        return
    rendering = FORMAT.render(request, add_generation_prompt=True)
    assert rendering.text == expected.text
    host = 1 if roles[0] == "system" else 0
    lost = f"messages[{host}].role: written as the user turn holding the tools"
    assert (lost in rendering.losses) == (roles[host] != "user")
    parsed = FORMAT.parse_conversation(FORMAT.render(request).text)
    assert [tool["function"]["name"] for tool in parsed.tools] == ["now"]
    # The host comes back as the user message it was written as.
    expected_roles = ["user" if number == host else role for number, role in enumerate(roles)]
    assert [message["role"] for message in parsed.messages] == expected_roles


@pytest.mark.parametrize(
    ("roles", "host"),
    [(("system", "assistant", "user"), 1), (("assistant", "user"), 0), (("tool", "user"), 0)],
)
def test_a_host_that_is_no_user_system_or_answer_is_refused(
    roles: tuple[str, ...], host: int
) -> None:
    request = _request(*roles)
    if roles[host] == "tool":
        request["messages"][host]["tool_call_id"] = "a"
        field, found = "role", "'tool'"
    else:  # an answer with calls: the template writes its text alone
        call = {"id": "a", "type": "function", "function": {"name": "now", "arguments": "{}"}}
        request["messages"][host]["tool_calls"] = [call]
        field, found = "tool_calls", "calls"
    with pytest.raises(pawlette.RequestError) as raised:
        FORMAT.render(request)
    assert raised.value.path == f"messages[{host}].{field}"
    assert f"messages[{host}].{field}: {found}; expected a user message" in str(raised.value)
    # Without tools there is no host: the same messages are written.
    assert FORMAT.render({"messages": request["messages"]}).text


def test_the_exported_template_writes_what_the_format_writes() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    with registering.registered(LAYOUT):
        template = export_jinja(LAYOUT.name)
    for roles in (
        ("system", "system", "user"),
        ("system", "user"),
        ("user",),
        ("system", "assistant", "user"),
        ("assistant", "user", "assistant"),
    ):
        request = _request(*roles)
        rendered, _ = render_jinja_template(
            [request["messages"]],
            tools=TOOLS,
            chat_template=template,
            add_generation_prompt=True,
        )
        assert rendered[0] == FORMAT.render(request, add_generation_prompt=True).text


def test_the_template_finds_the_host_once() -> None:
    # The check that refuses a host and every turn that writes the tools read one index.
    with registering.registered(LAYOUT):
        template = export_jinja(LAYOUT.name)
    assert template.count("1 if messages and messages[0].role in") == 1
    assert "first_user.index >= messages | length" in template


@pytest.mark.parametrize(
    "roles", [("assistant", "user", "assistant"), ("system", "assistant", "user", "assistant")]
)
def test_an_answer_holding_the_tools_is_written_as_an_untrained_user_turn(
    roles: tuple[str, ...],
) -> None:
    """The template writes the answer at the host's place as the user turn holding the tools:
    the model writes none of it, so neither the writer's mask nor the exported template's
    ``{% generation %}`` spans hold it; the last answer alone is trained."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from ..export.support import merged, trainable_spans

    with registering.registered(LAYOUT):
        template = export_jinja(LAYOUT.name)
    request = _request(*roles)
    rendering = FORMAT.render(request)
    assert rendering.text == REFERENCE.render_request(request, add_generation_prompt=False).text
    last = len(roles) - 1
    trained = [(s.message_index, s.text) for s in rendering.segments if s.trainable and s.text]
    assert trained == [(last, f"Text {last}."), (last, "<|eot_id|>")]
    host = last - 2
    assert {s.role for s in rendering.segments if s.message_index == host} == {"user"}
    rendered, spans = render_jinja_template(
        [request["messages"]],
        tools=TOOLS,
        chat_template=template,
        return_assistant_tokens_mask=True,
    )
    assert rendered[0] == rendering.text
    assert merged([(start, end) for start, end in spans[0]]) == trainable_spans(rendering)
