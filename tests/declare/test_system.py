"""SystemPrompt (:mod:`pawlette.declare.system`): a default system text of its own when the
request has tools (``default_with_tools``), and an empty first system message written as none
(``empty_first="absent"``) with the tools or without them, on a tiny layout, in every
artifact."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.declare import (
    Frame,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)
from pawlette.errors import FormatError
from pawlette.export import export_jinja

FRAMES = {
    role: Frame(open=fence(Marker(f"<{role}>"), "\n"), end=fence(Marker(f"</{role}>")))
    for role in ("system", "user", "assistant", "tool")
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
    }
]
USER = {"role": "user", "content": "Hi"}


def _format(**system: Any) -> pawlette.Format:
    return declare(
        Layout(
            name="tiny-tools-default",
            summary="a default system text of its own with tools",
            frames=FRAMES,
            concepts=(
                SystemPrompt(**system),
                ToolsBlock(open=fence("\nTools: "), array=True),
                Results(),
            ),
        )
    )


def test_the_default_with_tools_is_written_with_tools_and_read_as_no_message() -> None:
    fmt = _format(default="Plain.", default_with_tools="With tools.")
    plain = fmt.render([USER]).text
    assert plain.startswith("<system>\nPlain.</system>")
    with_tools = fmt.render({"messages": [USER], "tools": TOOLS}).text
    assert with_tools.startswith("<system>\nWith tools.\nTools: [")
    # Either default is the format's own text: no system message comes back.
    assert fmt.parse_conversation(plain).messages == [USER]
    assert fmt.parse_conversation(with_tools).messages == [USER]
    # A system message of the caller's replaces both.
    system = {"role": "system", "content": "Mine."}
    assert fmt.render({"messages": [system, USER], "tools": TOOLS}).text.startswith(
        "<system>\nMine.\nTools: ["
    )


def test_the_exported_template_writes_the_same() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = _format(default="Plain.", default_with_tools="With tools.")
    template = export_jinja(fmt)
    for tools in (None, TOOLS):
        for messages in ([USER], [{"role": "system", "content": "Mine."}, USER]):
            rendered, _ = render_jinja_template([messages], tools=tools, chat_template=template)
            request = {"messages": messages, **({"tools": tools} if tools else {})}
            assert rendered[0] == fmt.render(request).text, (messages, tools)


@pytest.mark.parametrize(
    ("system", "found"),
    [
        ({"default_with_tools": "With tools."}, "default=None, default_when='always'"),
        (
            {"default": "Plain.", "default_when": "without_tools", "default_with_tools": "W."},
            "default='Plain.', default_when='without_tools'",
        ),
    ],
)
def test_a_default_with_tools_needs_a_default_written_always(
    system: dict[str, Any], found: str
) -> None:
    with pytest.raises(FormatError, match=r"SystemPrompt\.default_with_tools") as caught:
        _format(**system)
    assert found in str(caught.value)
    assert "expected a default text and default_when='always'" in str(caught.value)


EMPTY = {"role": "system", "content": ""}


def _request(messages: list[dict[str, Any]], tools: list[Any] | None) -> dict[str, Any]:
    return {"messages": messages, **({"tools": tools} if tools else {})}


@pytest.mark.parametrize("when", ["always", "without_tools", "with_tools"])
@pytest.mark.parametrize("tools", [None, TOOLS])
def test_an_absent_empty_first_message_is_written_as_the_default_where_it_applies(
    when: str, tools: list[Any] | None
) -> None:
    fmt = _format(default="Plain.", default_when=when, empty_first="absent")
    applies = when == "always" or (when == "with_tools") == bool(tools)
    empty = fmt.render(_request([EMPTY, USER], tools))
    if applies or not tools:
        # Written as no system message, a recorded loss: the default text (the tools block
        # after it), or no turn.
        assert empty.text == fmt.render(_request([USER], tools)).text
        assert ("<system>\nPlain." in empty.text) == applies
        assert empty.losses == ("messages[0]: a system message with empty text, written as none",)
    else:
        # The tools block writes into the turn and no default text stands there: the
        # message is kept, its empty text before the block, and the turn reads back as the
        # tools block's alone: a recorded loss.
        assert empty.text.startswith("<system>\n\nTools: [")
        assert empty.losses == (
            "messages[0]: a system message with empty text, read back as none "
            "(its turn reads as one without it)",
        )
    # The turn reads back as no message (the default text is the format's own).
    assert fmt.parse_conversation(empty.text).messages == [USER]


@pytest.mark.parametrize("when", ["always", "without_tools", "with_tools"])
def test_the_exported_template_writes_an_absent_empty_first_message_the_same(when: str) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = _format(default="Plain.", default_when=when, empty_first="absent")
    template = export_jinja(fmt)
    for tools in (None, TOOLS):
        for messages in ([EMPTY, USER], [USER], [{"role": "system", "content": "Mine."}, USER]):
            rendered, _ = render_jinja_template([messages], tools=tools, chat_template=template)
            assert rendered[0] == fmt.render(_request(messages, tools)).text, (messages, tools)
