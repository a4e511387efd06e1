"""Declaring a layout with a field of the wrong kind is refused at once, and the error names
the field, what was given and what is allowed: mistakes a newcomer makes when declaring
Phi-3.5, Qwen3-Coder and gpt-oss from their templates."""

from __future__ import annotations

import pytest

from pawlette.declare import (
    ConversationEnd,
    Frame,
    Layout,
    Marker,
    Names,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)
from pawlette.declare.concept import Concept
from pawlette.errors import FormatError, UnsupportedFeature

END = Marker("<|end|>")
FRAMES = {
    role: Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after="\n")
    for role in ("system", "user", "assistant", "tool")
}


def _layout(*concepts: Concept, frames: dict[str, Frame] = FRAMES) -> Layout:
    """A layout of ``concepts``, with a tool frame only where one of them writes tool
    messages (a tool frame that nothing writes in is refused)."""
    if not any("tool" in getattr(concept, "claims", ()) for concept in concepts):
        frames = {role: frame for role, frame in frames.items() if role != "tool"}
    return Layout(name="probe", summary="a probe", frames=frames, concepts=concepts)


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        (fence(Marker("<|endoftext|>")), r"\(Marker\(text='<\|endoftext\|>'\), without fence"),
        ("<|endoftext|>", r"\(Marker\('<\|endoftext\|>'\)\)"),
    ],
)
def test_conversation_end_takes_one_marker(given: object, hint: str) -> None:
    """A fence or a string where ConversationEnd wants one Marker (every other end is a
    fence) is refused by name, with the marker to write instead."""
    with pytest.raises(
        FormatError,
        match=r"probe: ConversationEnd\.marker: .*; expected one Marker, a special token, not a "
        r"fence or a string " + hint,
    ):
        _layout(ConversationEnd(marker=given))  # type: ignore[arg-type]


def test_conversation_end_with_a_marker_writes_it() -> None:
    phi = declare(_layout(SystemPrompt(), ConversationEnd(marker=Marker("<|endoftext|>"))))
    text = phi.render([{"role": "user", "content": "Hi"}]).text
    assert text == "<|user|>Hi<|end|>\n<|endoftext|>"


@pytest.mark.parametrize("role", ["tool", "developer"])
def test_names_roles_are_the_framed_roles(role: str) -> None:
    """A tool result's name is the results concept's: Names(roles=("tool",)) wrote nothing
    and said nothing; an unknown role was reported as a frame of None."""
    with pytest.raises(
        FormatError,
        match=rf"probe: Names\.roles: '{role}'; expected some of system, user, assistant "
        r"\(a tool result's name is written by the results concept: Results\.name_close\)",
    ):
        _layout(Names(roles=(role,)))


def test_names_roles_is_a_tuple() -> None:
    with pytest.raises(
        FormatError, match=r"probe: Names\.roles: 'user', a str; expected a tuple of roles"
    ):
        _layout(Names(roles="user"))  # type: ignore[arg-type]


def test_names_role_without_a_frame() -> None:
    frames = {role: frame for role, frame in FRAMES.items() if role != "system"}
    with pytest.raises(
        FormatError,
        match=r"probe: Names\.roles: 'system', a role with no frame; expected "
        r"Layout\.frames\['system'\]",
    ):
        _layout(Names(roles=("system", "user")), frames=frames)


def test_tools_in_the_system_turn_need_a_system_concept() -> None:
    """Without a concept that writes the system turn, ToolsBlock(place="system") wrote the
    tools nowhere and reported no loss."""
    block = ToolsBlock(open=fence(Marker("<tools>")))
    with pytest.raises(
        FormatError,
        match=r"probe: ToolsBlock\(place='system'\) and no concept that writes the system "
        r"turn; expected a SystemPrompt",
    ):
        _layout(block)
    tools = [{"type": "function", "function": {"name": "get", "parameters": {}}}]
    written = declare(_layout(SystemPrompt(), block)).render(
        [{"role": "user", "content": "Hi"}], tools
    )
    assert written.text.startswith('<|system|><tools>{"type": "function"')


def test_results_name_close_without_an_id_says_what_was_given() -> None:
    with pytest.raises(
        FormatError,
        match=r"probe: Results\.name_close without id_close: name_close=\(Lit\(text=' to='\),\), "
        r"id_close=None; expected an id_close too",
    ):
        _layout(Results(name_close=fence(" to=")))


def test_a_request_a_layout_cannot_write_is_refused_naming_what_it_writes() -> None:
    # (What a newcomer meets rendering a tool message or a call with a layout that declares
    # no results and no calls: the roles it writes, and that it has no calls.)
    fmt = declare(_layout(SystemPrompt()))
    with pytest.raises(
        UnsupportedFeature,
        match=r"^messages\[1\]\.role: 'tool'; expected a role probe writes "
        r"\(system, user, assistant\)$",
    ):
        fmt.render([{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}])
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    with pytest.raises(
        UnsupportedFeature,
        match=r"^messages\[1\]\.tool_calls: tool calls; expected none: probe has no tool calls$",
    ):
        fmt.render([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [call]}])
