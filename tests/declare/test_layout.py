"""Declaring is an interface: a declaration that cannot work is refused when it is made, with
the field, what was given and what is allowed; every declaration type documents its fields."""

from __future__ import annotations

import dataclasses
import datetime
import inspect
from collections.abc import Callable
from typing import Any

import pytest

import pawlette
from pawlette import declare as declaration
from pawlette.declare import (
    CallTurnEnd,
    Concept,
    ConversationEnd,
    Frame,
    Ignored,
    JsonCalls,
    Layout,
    Marker,
    NamedCalls,
    Option,
    PromptRest,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    Trimmed,
    XmlCalls,
    declare,
    fence,
)
from pawlette.declare.pieces import Fence
from pawlette.errors import FormatError, RequestError

END = Marker("<|end|>")


def frames(**changes: Frame) -> dict[str, Frame]:
    made = {
        role: Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), after=fence("\n"))
        for role in ("system", "user", "assistant", "tool")
    }
    return {**made, **changes}


def tiny(*concepts: Concept, **changes: Any) -> Layout:
    """A layout of ``concepts``, with a tool frame only where one of them writes tool
    messages (a tool frame that nothing writes in is refused)."""
    made = frames()
    if not any("tool" in getattr(concept, "claims", ()) for concept in concepts):
        del made["tool"]
    return Layout(name="tiny", summary="a test layout", frames=made, concepts=concepts, **changes)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: Layout(name="a b", summary="", frames=frames()), "Layout.name: 'a b'"),
        (
            lambda: Layout(name="x", summary="", frames={"user": Frame()}),
            "no 'assistant' frame; expected a Frame for 'user' and 'assistant'",
        ),
        (
            lambda: Layout(name="x", summary="", frames={**frames(), "robot": Frame()}),
            "Layout.frames['robot']: an unknown role; expected one of system, user",
        ),
        (
            lambda: Layout(name="x", summary="", frames={**frames(), "user": "<user>"}),  # type: ignore[dict-item]
            "Layout.frames['user']: a str; expected a Frame",
        ),
        (
            # A frame's openers are checked by its layout: the error names the format and
            # the frame's role.
            lambda: Layout(
                name="tiny", summary="", frames=frames(user=Frame(open_after={"robot": ()}))
            ),
            "tiny: Layout.frames['user'].open_after: the key 'robot'; expected one of system, "
            "user, assistant, tool, start",
        ),
        (
            lambda: Layout(
                name="tiny", summary="", frames=frames(assistant=Frame(open_after={"tool": "<a>"}))
            ),  # type: ignore[dict-item]
            "tiny: Layout.frames['assistant'].open_after['tool']: '<a>'; expected a fence, a "
            "tuple of Marker, Lit and Option pieces (build it with fence(Marker('<a>')) if it "
            "is one of the tokenizer's special tokens, fence('<a>') if it is text)",
        ),
        (
            lambda: Layout(
                name="tiny", summary="", frames=frames(assistant=Frame(open_after=[("tool", ())]))
            ),  # type: ignore[arg-type]
            "tiny: Layout.frames['assistant'].open_after: [('tool', ())]; expected a dict of a "
            "role (or 'start') to a fence",
        ),
        (
            lambda: Layout(
                name="tiny", summary="", frames=frames(assistant=Frame(prompt_after={"bot": ()}))
            ),
            "tiny: Layout.frames['assistant'].prompt_after: the key 'bot'; expected one of",
        ),
        (
            lambda: Layout(name="x", summary=None, frames=frames()),  # type: ignore[arg-type]
            "x: Layout.summary: None; expected a string (one line for listings)",
        ),
        (
            lambda: Layout(name="x", summary=("a", "b"), frames=frames()),  # type: ignore[arg-type]
            "x: Layout.summary: ('a', 'b'); expected a string",
        ),
        (
            lambda: tiny(
                JsonCalls(open=fence("<c>"), close=fence("</c>")),
                Results(),
                XmlCalls(
                    open=fence("<call>"),
                    name_close=fence(">"),
                    key_open=fence("<p="),
                    key_close=fence(">"),
                    value_close=fence("</p>"),
                    close=fence("</call>"),
                ),
            ),
            "tiny: Layout.concepts[2]: XmlCalls writes the calls, as JsonCalls (concepts[0]) "
            "does; expected one calls concept",
        ),
        (
            lambda: tiny(
                ToolsBlock(place="first_user", open=fence("<tools>")),
                ToolsBlock(place="own_turn", open=fence("<t>")),
            ),
            "tiny: Layout.concepts[1]: ToolsBlock writes the tools block, as ToolsBlock "
            "(concepts[0]) does; expected one ToolsBlock",
        ),
        (
            lambda: tiny(
                Reasoning(open=fence("<t>"), close=fence("</t>")),
                Reasoning(open=fence("<r>"), close=fence("</r>")),
            ),
            "tiny: Layout.concepts[1]: Reasoning writes the reasoning, as Reasoning "
            "(concepts[0]) does; expected one Reasoning",
        ),
        (lambda: tiny(object()), "Layout.concepts[0]: an object; expected a Concept"),  # type: ignore[arg-type]
        (lambda: tiny(Results(), Results()), "writes 'tool' messages, as Results does"),
        (
            lambda: tiny(Trimmed(), Trimmed()),
            "tiny: Layout.concepts[1]: Trimmed again, equal to concepts[0]; expected each "
            "concept once",
        ),
        (
            lambda: tiny(ConversationEnd(Marker("<|a|>")), ConversationEnd(Marker("<|b|>"))),
            "tiny: Layout.concepts[1]: ConversationEnd writes the conversation end, as "
            "ConversationEnd (concepts[0]) does; expected one ConversationEnd",
        ),
        (
            lambda: declare(tiny(Results(id_after=fence(", id: "), id_close=fence(":")))),
            "Results.id_after empty, or with id_close or without item_close",
        ),
        (
            lambda: tiny(ToolsBlock(place="nowhere")),  # type: ignore[arg-type]
            "ToolsBlock.place: 'nowhere'; expected 'system', 'first_user', 'last_user', "
            "'before_last_user', 'own_turn', 'after_system' or 'user_after_system'",
        ),
        (
            lambda: Layout(
                name="tiny",
                summary="",
                frames={role: frames()[role] for role in ("user", "assistant")},
                concepts=(ToolsBlock(place="user_after_system", open=fence("<tools>")),),
            ),
            "ToolsBlock(place='user_after_system') and no 'system' frame; expected one",
        ),
        (
            lambda: Layout(
                name="tiny",
                summary="",
                frames=frames(system=Frame(open=fence(Marker("<|system|>")), end=fence(END))),
                concepts=(ToolsBlock(place="user_after_system", open=fence("<tools>")),),
            ),
            "ToolsBlock(place='user_after_system') with system and user frames that end "
            "differently; expected the same end and after",
        ),
        (
            lambda: tiny(ToolsBlock(array=True, item_open=fence("\n"))),
            "item_open/item_close with array=True",
        ),
        (
            lambda: tiny(Reasoning(open=(), close=fence("</think>"))),
            "Reasoning: an empty open or close fence; expected both",
        ),
        (
            lambda: tiny(Reasoning(open=fence("<t>"), close=fence("</t>"), keep="some")),  # type: ignore[arg-type]
            "Reasoning.keep: 'some'; expected 'all', 'after_last_query', 'calls' or 'none'",
        ),
        (
            lambda: tiny(NamedCalls(open=(), arguments_open=fence("[ARGS]"))),
            "NamedCalls: an empty open or arguments_open fence",
        ),
        (
            lambda: tiny(JsonCalls(open=(), close=())),
            "JsonCalls: empty open and close fences",
        ),
        (
            # Bare calls joined as the whole turn are read (tests/declare/test_json_calls.py);
            # a turn that writes its text in place of its calls cannot also write both.
            lambda: tiny(JsonCalls(open=None, drops_calls=True)),
            "JsonCalls.drops_calls: True with with_content=True; expected with_content=False",
        ),
        (
            lambda: tiny(
                XmlCalls(
                    open=fence("<call>"),
                    name_close=(),
                    key_open=fence("\n"),
                    key_close=fence(">"),
                    value_close=fence("</p>"),
                    close=fence("</call>"),
                )
            ),
            "XmlCalls.key_open",
        ),
        (lambda: tiny(Ignored(("colour",))), "Ignored.fields: 'colour'; expected some of"),
        (
            lambda: tiny(
                JsonCalls(open=fence("<c>"), close=fence("</c>")), CallTurnEnd(fence("<e>"))
            ),
            "CallTurnEnd.end: (Lit(text='<e>'),) is not one of the assistant frame's also_end",
        ),
        (
            lambda: tiny(
                JsonCalls(open=fence("<c>"), close=fence("</c>")),
                Reasoning(open=fence("<t>"), close=fence("</t>"), calls_end=True),
            ),
            "Reasoning(calls_end=True) is Layout.concepts[1], after the calls concept",
        ),
        (
            lambda: tiny(Ignored("name")),  # type: ignore[arg-type]
            "Ignored.fields: 'name', a str; expected a tuple of str",
        ),
        (
            lambda: Layout(
                name="tiny",
                summary="",
                frames=frames(user=Frame(open=fence(Marker("<u>")), prompt_after={"user": ()})),
            ),
            "Layout.frames['user'].prompt_after: given; expected it only on the 'assistant' frame",
        ),
        (
            lambda: tiny(SystemPrompt(default=fence("Today is ", Option("date", "%Y")))),
            "Option('date'): no option 'date' (Layout.options is None); expected the name",
        ),
        (
            lambda: tiny(options=Dated(), today="date"),
            "Layout.today: no option 'date' (the options are today); expected the name",
        ),
        (
            lambda: Layout(
                name="tiny",
                summary="",
                frames=frames(system=Frame(open=fence(Marker("<s>"), Option("todya", "%Y")))),
                options=Dated(),
            ),
            "Option('todya'): no option 'todya' (the options are today); expected the name",
        ),
        (
            lambda: tiny(SystemPrompt(default=fence(Option("yaer", "%Y"))), options=Weekly()),
            "Option('yaer'): no option 'yaer' (the options are today, week (derived)); expected",
        ),
        (
            lambda: tiny(template_untested=("reasoning",)),
            "Layout.template_untested: 'reasoning'; expected one of tools, calls",
        ),
        (
            lambda: tiny(SystemPrompt(placement="gathered", empty_later="dropped")),
            "SystemPrompt.empty_later: 'dropped' with placement='gathered'; expected "
            "placement 'in_place'",
        ),
        (
            lambda: tiny(SystemPrompt(empty_first="dropped")),  # type: ignore[arg-type]
            "SystemPrompt.empty_first: 'dropped'; expected",
        ),
        (
            lambda: tiny(ToolsBlock(open="Tools:")),  # type: ignore[arg-type]
            "ToolsBlock.open: 'Tools:'; expected a fence, a tuple of Marker, Lit and Option "
            "pieces (build it with fence(Marker('Tools:')) if it is one of the tokenizer's "
            "special tokens, fence('Tools:') if it is text)",
        ),
        (
            lambda: tiny(PromptRest(prompt=fence("A:"), rest=" ")),  # type: ignore[arg-type]
            "PromptRest.prompt: (Lit(text='A:'),), a fence; expected plain text (a str)",
        ),
        (
            lambda: tiny(SystemPrompt(default=3)),  # type: ignore[arg-type]
            "SystemPrompt.default: 3; expected a string or a fence",
        ),
        (
            lambda: tiny(SystemPrompt(default=fence("On ", Option("today"))), options=Dated()),
            "Option('today'): options.today is datetime.date(2025, 6, 20); expected a string "
            "option, or a date format: Option('today', '%d %b %Y')",
        ),
        (
            lambda: tiny(options={"today": datetime.date(2025, 6, 20)}),
            "Layout.options: a dict; expected None or a frozen dataclass instance",
        ),
        (
            lambda: tiny(Trimmed(roles=("bot",))),
            "Trimmed.roles: 'bot'; expected some of system, user, assistant, tool",
        ),
        (
            lambda: tiny(Trimmed(roles="user")),  # type: ignore[arg-type]
            "Trimmed.roles: 'user', a str; expected a tuple of str",
        ),
        (
            lambda: tiny(JsonCalls(open=None, drops_content=True)),
            "JsonCalls.drops_content: True with with_content=True; expected with_content=False",
        ),
        (
            lambda: tiny(Results(id_close=fence(Marker("[C]")), id_pattern="[a-")),
            "Results.id_pattern: '[a-', unterminated character set at position 0; expected a "
            "regular expression",
        ),
        (
            lambda: tiny(ToolsBlock(place="first_user", open=fence("<tools>"), indent="4")),  # type: ignore[arg-type]
            "ToolsBlock.indent: '4', a str; expected an int or None",
        ),
        (
            lambda: tiny(ToolsBlock(place="first_user")),
            "ToolsBlock.open: empty with place='first_user'; expected a fence with text",
        ),
        (
            # The first concept whose content hook writes a turn's text wins: Trimmed first
            # would write the text JsonCalls reports as dropped.
            lambda: tiny(
                Trimmed(roles=("assistant",)),
                JsonCalls(open=None, with_content=False, drops_content=True),
            ),
            "Layout.concepts: Trimmed (concepts[0]) before JsonCalls (concepts[1]); expected "
            "JsonCalls first",
        ),
        (lambda: Marker(""), "an empty marker"),
        (lambda: fence(3), "fence piece 3: a int; expected a Marker, a Lit"),  # type: ignore[arg-type]
    ],
)
def test_a_declaration_that_cannot_work_is_refused_with_its_field(make: Any, says: str) -> None:
    with pytest.raises(FormatError) as raised:
        make()
    assert says in str(raised.value)


@dataclasses.dataclass(frozen=True)
class _OwnReasoning(Concept):
    """A concept of a format's own that writes the reasoning, without subclassing Reasoning."""

    job = "reasoning"


def test_a_concept_of_its_own_declares_its_job_and_two_for_one_job_are_refused() -> None:
    # The layout asks each concept which job it does, never what class it is.
    with pytest.raises(FormatError) as raised:
        tiny(Reasoning(open=fence("<t>"), close=fence("</t>")), _OwnReasoning())
    assert str(raised.value) == (
        "tiny: Layout.concepts[1]: _OwnReasoning writes the reasoning, as Reasoning "
        "(concepts[0]) does; expected one Reasoning"
    )
    assert tiny(_OwnReasoning()).concepts == (_OwnReasoning(),)


def test_a_layout_without_results_refuses_a_tool_message_by_path() -> None:
    fmt = declare(tiny())
    with pytest.raises(RequestError, match=r"messages\[1\]\.role"):
        fmt.render([{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}])


@pytest.mark.parametrize(
    "kind",
    [
        kind
        for kind in (getattr(declaration, name) for name in declaration.__all__)
        if isinstance(kind, type) and dataclasses.is_dataclass(kind)
    ],
    ids=lambda kind: kind.__name__,
)
def test_every_declaration_type_documents_its_fields(kind: type) -> None:
    documented = inspect.getdoc(kind) or ""
    for field in dataclasses.fields(kind):
        if field.name.startswith("_") or (field.name in ("text", "name") and kind is Option):
            continue
        assert f"``{field.name}``" in documented or field.name in documented, (kind, field.name)


def test_the_public_declaration_api_is_listed() -> None:
    for name in declaration.__all__:
        assert getattr(declaration, name) is not None


# ------------------------------------------------------------------ options and dates


@dataclasses.dataclass(frozen=True)
class Dated:
    today: datetime.date = datetime.date(2025, 6, 20)


@dataclasses.dataclass(frozen=True)
class Weekly(Dated):
    @property
    def week(self) -> str:
        return self.today.strftime("%V")


def test_a_date_option_is_written_with_its_format_never_the_clock() -> None:
    layout = tiny(
        SystemPrompt(default=fence("Today is ", Option("today", "%Y-%m-%d"), ".")),
        options=Dated(),
    )
    fmt = declare(layout)
    text = fmt.render([{"role": "user", "content": "Hi"}]).text
    assert text.startswith("<|system|>Today is 2025-06-20.<|end|>")
    later = fmt.with_options(today=datetime.date(2026, 1, 2))
    assert "Today is 2026-01-02." in later.render([{"role": "user", "content": "Hi"}]).text
    with pytest.raises(RequestError, match=r"options\.today: 5 \(int\); expected a datetime\.date"):
        fmt.with_options(today=5).render([{"role": "user", "content": "Hi"}])


def test_a_system_prompt_may_skip_empty_system_messages() -> None:
    """Phi-3.5's ``SystemPrompt(empty_first="absent", empty_later="dropped")``: an empty
    system message, first or later, is not written (its turn neither; a recorded loss), in
    the writer and in the exported template alike; one with text is, in place."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    messages = [
        {"role": "system", "content": ""},
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": "Later."},
        {"role": "user", "content": "Bye"},
        {"role": "system", "content": ""},
        {"role": "user", "content": "End"},
    ]
    skipping = declare(tiny(SystemPrompt(empty_first="absent", empty_later="dropped")))
    rendering = skipping.render(messages)
    text = rendering.text
    assert text == (
        "<|user|>Hi<|end|>\n<|system|>Later.<|end|>\n<|user|>Bye<|end|>\n<|user|>End<|end|>\n"
    )
    assert rendering.losses == (
        "messages[0]: a system message with empty text, written as none",
        "messages[4]: a system message with empty text, dropped",
    )
    rendered, _ = render_jinja_template([messages], chat_template=export_jinja(skipping))
    assert rendered[0] == text
    assert skipping.parse_conversation(text).messages == messages[1:4] + messages[5:]
    writing = declare(tiny(SystemPrompt())).render(messages).text
    # The layout that writes every system message: the same turns, and both empty ones.
    assert writing == (
        "<|system|><|end|>\n<|user|>Hi<|end|>\n<|system|>Later.<|end|>\n<|user|>Bye<|end|>\n"
        "<|system|><|end|>\n<|user|>End<|end|>\n"
    )


def test_an_empty_first_system_message_can_be_written_as_none() -> None:
    """``SystemPrompt(empty_first="absent")``: the default text, or no turn, in its place
    (a recorded loss); with another concept writing into that turn, the default text where
    one applies (MiniMax-M2's and M3's templates), else the empty text; the exported template
    agrees."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    empty = [{"role": "system", "content": ""}, {"role": "user", "content": "Hi"}]
    tool = {"type": "function", "function": {"name": "f", "parameters": {}}}
    for default, expected in (("D", "<|system|>D<|end|>\n<|user|>Hi"), (None, "<|user|>Hi")):
        fmt = declare(tiny(SystemPrompt(default=default, empty_first="absent")))
        rendering = fmt.render(empty)
        assert rendering.text.startswith(expected)
        assert rendering.losses == (
            "messages[0]: a system message with empty text, written as none",
        )
        rendered, _ = render_jinja_template([empty], chat_template=export_jinja(fmt))
        assert rendered[0] == rendering.text
    block = ToolsBlock(place="system", open=fence("T:"))
    for default, expected in (("D", "<|system|>DT:"), (None, "<|system|>T:")):
        fmt = declare(tiny(SystemPrompt(default=default, empty_first="absent"), block))
        written = fmt.render({"messages": empty, "tools": [tool]}).text
        assert written.startswith(expected)
        rendered, _ = render_jinja_template([empty], tools=[tool], chat_template=export_jinja(fmt))
        assert rendered[0] == written


# ------------------------------------------------------------------ losses


def test_what_a_format_drops_is_reported_never_refused() -> None:
    fmt = declare(tiny(Ignored(("reasoning", "name", "tools")), Trimmed(("user",))))
    request = {
        "messages": [
            {"role": "user", "name": "Ann", "content": "  Hi  "},
            {"role": "assistant", "content": "Hello", "reasoning_content": "greet"},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    }
    rendering = fmt.render(request)
    assert rendering.text == "<|user|>Hi<|end|>\n<|assistant|>Hello<|end|>\n"
    assert rendering.losses == (
        "messages[1].reasoning_content: not written",
        "messages[0].name: not written",
        "tools: not written",
        "messages[0].content: whitespace at its ends trimmed",
    )


def test_a_rendering_that_loses_nothing_says_so() -> None:
    assert declare(tiny()).render([{"role": "user", "content": "Hi"}]).losses == ()


def test_reasoning_kept_after_the_last_query_records_what_it_drops() -> None:
    think = Reasoning(
        open=fence(Marker("<t>")), close=fence(Marker("</t>")), keep="after_last_query"
    )
    fmt = declare(tiny(think))
    rendering = fmt.render(
        [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b", "reasoning_content": "old"},
            {"role": "user", "content": "c"},
            {"role": "assistant", "content": "d", "reasoning_content": "new"},
        ]
    )
    assert "<t>new</t>" in rendering.text and "old" not in rendering.text
    assert rendering.losses == (
        "messages[1].reasoning_content: dropped (before the last user message)",
    )


def test_an_end_of_text_only_that_is_a_stop_is_left_to_the_engine() -> None:
    from pawlette.export import export_grammar

    def blank_line(end: Fence) -> pawlette.Format:
        frames = {role: Frame(fence(f"{role}: "), end) for role in ("user", "assistant")}
        return declare(
            Layout(name="blank-line", summary="turns end with a blank line", frames=frames)
        )

    # The blank line is the model's end-of-turn (a stop): the turn's text holds none, and the
    # engine ends the turn there, as it ends one at a stop marker.
    grammar = export_grammar(blank_line(fence("\n\n")), [], "auto")
    assert "start: TEXT?" in grammar.splitlines()
    assert "\\n\\n)" in next(line for line in grammar.splitlines() if line.startswith("TEXT:"))
    marked = export_grammar(blank_line(fence("\n\n", Marker("<end>"))), [], "auto")
    assert 'start: TEXT_NL | "\\n\\n"' in marked.splitlines()  # up to the stop marker


def test_a_frame_takes_plain_text_for_its_fences() -> None:
    written = Frame(open="<u>", end="", after="\n")  # type: ignore[arg-type]
    assert written == Frame(open=fence("<u>"), end=(), after=fence("\n"))


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        (
            lambda: Frame(after=5),  # type: ignore[arg-type]
            "tiny: Layout.frames['user'].after: 5; expected a string or a fence, a tuple of "
            "Marker, Lit and Option pieces (build it with fence(...))",
        ),
        (
            lambda: Frame(open=("<user>",)),  # type: ignore[arg-type]
            "tiny: Layout.frames['user'].open: ('<user>',); expected a string or a fence",
        ),
        (
            lambda: Frame(end=(Marker("<|end|>"), "\n")),  # type: ignore[arg-type]
            "tiny: Layout.frames['user'].end: (Marker(text='<|end|>'), '\\n'); expected a "
            "string or a fence",
        ),
        (
            lambda: Frame(after=fence(END)),
            "tiny: Layout.frames['user'].after: Marker(text='<|end|>'); expected whitespace "
            "only (it is layout between turns: put a marker in end)",
        ),
        (
            lambda: Frame(also_end=[fence(END)]),  # type: ignore[arg-type]
            "tiny: Layout.frames['user'].also_end: [(Marker(text='<|end|>'),)]; expected a "
            "tuple of fences, each built with fence(...)",
        ),
        (
            lambda: Frame(also_end=("<|end|>",)),  # type: ignore[arg-type]
            "tiny: Layout.frames['user'].also_end[0]: '<|end|>'; expected a fence",
        ),
        (
            lambda: Frame(end_stops="no"),  # type: ignore[arg-type]
            "tiny: Layout.frames['user'].end_stops: 'no'; expected True or False",
        ),
    ],
)
def test_a_frames_error_names_the_format_the_role_and_the_field(
    frame: Callable[[], Frame], says: str
) -> None:
    with pytest.raises(FormatError) as raised:
        Layout(name="tiny", summary="a test layout", frames=frames(user=frame()))
    assert str(raised.value).startswith(says)


def test_two_meanings_of_one_marker_name_both_sides() -> None:

    # The assistant's opener also ends the conversation: the frames and the concept disagree.
    with pytest.raises(FormatError) as raised:
        declare(tiny(ConversationEnd(marker=Marker("<|assistant|>"))))
    message = str(raised.value)
    assert "'<|assistant|>' has two meanings between turns: one of the frames, one of " in message
    assert "ConversationEnd; expected one meaning per marker" in message
    assert "state 'outside' goes to 'assistant.head' and to 'outside'" in message


def test_a_field_ignored_before_the_concept_that_writes_it_is_refused() -> None:
    chatml = pawlette.get_format("chatml").declaration
    assert isinstance(chatml, Layout)
    first = (Ignored(("reasoning",)), *chatml.concepts)
    with pytest.raises(FormatError) as refused:
        dataclasses.replace(chatml, concepts=first)
    assert str(refused.value) == (
        "chatml: Ignored.fields: 'reasoning', which Reasoning after it writes; expected "
        "Ignored after Reasoning (it then drops only what Reasoning leaves unwritten), or "
        "'reasoning' left out of Ignored"
    )
    # After it, Ignored stands for what the writer leaves unwritten (as nemotron_v2 declares).
    last = (*chatml.concepts, Ignored(("reasoning",)))
    assert dataclasses.replace(chatml, concepts=last).concepts[-1] == Ignored(("reasoning",))
