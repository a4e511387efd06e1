"""Declaring a layout with a field of the wrong kind is refused at once, and the error names
the field, what was given and what is allowed: mistakes a newcomer makes when declaring
Phi-3.5, Qwen3-Coder and gpt-oss from their templates."""

from __future__ import annotations

import dataclasses
import datetime
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass

import pytest

import pawlette
from bench.registered import every_format
from pawlette.declare import (
    ConversationEnd,
    Frame,
    Ignored,
    Layout,
    Marker,
    NamedCalls,
    Names,
    Option,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
    layout_of,
)
from pawlette.declare.concept import Concept
from pawlette.errors import FormatError, RequestError, UnsupportedFeature

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
        FormatError, match=r"probe: Names\.roles: 'user', a str; expected a tuple of str$"
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


# ------------------------------------------------------------------ settings that do nothing
# Found declaring Mistral Small 3.2, DeepSeek V3.1, IBM Granite 4.0 and Gemma 2 from the docs
# alone: each was accepted and changed nothing, or failed later naming no field.


@dataclass(frozen=True)
class _Options:
    today: datetime.date = datetime.date(2025, 6, 20)
    greeting: str = "Hi"


def _refused(make: Callable[[], object]) -> str:
    """The message of the FormatError ``make`` raises (never another error type)."""
    with pytest.raises(FormatError) as raised:
        make()
    assert type(raised.value) is FormatError
    return str(raised.value)


@pytest.mark.parametrize(
    ("variants", "where", "found", "expected"),
    [
        (["small"], "Layout.variants", "a list", "a dict of a variant's name to its options"),
        (
            {"small": {"greeting": "Hello"}},
            "Layout.variants['small']",
            "{'greeting': 'Hello'}, a dict",
            "an instance of _Options, as Layout.options is (such as _Options(today=...))",
        ),
        (
            {"small": "Hello"},
            "Layout.variants['small']",
            "'Hello', a str",
            "an instance of _Options",
        ),
        (
            {"a:b": _Options()},
            "Layout.variants",
            "the name 'a:b'",
            "letters, digits, '.', '_' and '-'",
        ),
        (
            {"small": _Options(greeting=3)},  # type: ignore[arg-type]
            "Layout.variants['small'].greeting",
            "3 (int)",
            "a str",
        ),
    ],
)
def test_a_variant_that_is_no_set_of_options_is_refused(
    variants: object, where: str, found: str, expected: str
) -> None:
    """A variant that is not the layout's options class failed with a bare TypeError when
    ``get_format("NAME:VARIANT")`` built it; a wrong option's value only there."""
    message = _refused(
        lambda: Layout(
            name="probe",
            summary="a probe",
            frames=_frames(),
            options=_Options(),
            variants=variants,  # type: ignore[arg-type]
        )
    )
    assert message.startswith(f"probe: {where}: {found}; expected {expected}")


def test_variants_without_options_are_refused() -> None:
    message = _refused(
        lambda: Layout(
            name="probe", summary="a probe", frames=_frames(), variants={"small": _Options()}
        )
    )
    assert message == (
        "probe: Layout.variants: 1 given and Layout.options is None; expected no variants: a "
        "variant is a set of the layout's options"
    )


def test_a_variant_of_the_options_is_declared_and_registered() -> None:
    layout = Layout(
        name="probe-variants",
        summary="a probe",
        frames=_frames(),
        concepts=(SystemPrompt(default=fence(Option("greeting"))),),
        options=_Options(),
        variants={"hello": _Options(greeting="Hello")},
    )
    fmt = declare(layout).with_options(**dataclasses.asdict(layout.variants["hello"]))
    assert fmt.render([{"role": "user", "content": "q"}]).text.startswith("<|system|>Hello<|end|>")


def test_named_calls_id_pattern_needs_id_open() -> None:
    """Without id_open no id is written or read, so the pattern checked the request's ids
    against a shape the format never writes."""
    calls = NamedCalls(open=fence(Marker("[TOOL_CALLS]")), arguments_open=fence(Marker("[ARGS]")))
    message = _refused(lambda: _layout(dataclasses.replace(calls, id_pattern="[A-Za-z0-9]{9}")))
    assert message == (
        "probe: NamedCalls.id_pattern: '[A-Za-z0-9]{9}' with id_open=None; expected an id_open "
        "too (the pattern checks the ids the format writes after id_open, and without it no id "
        "is written or read), or id_pattern left out"
    )
    with_ids = dataclasses.replace(calls, id_open=fence(Marker("[CALL_ID]")), id_pattern="[a-z]{3}")
    fmt = declare(_layout(with_ids))
    call = {"id": "abc", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    written = fmt.render(
        [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [call]}]
    )
    assert written.text.endswith("[TOOL_CALLS]f[CALL_ID]abc[ARGS]{}<|end|>\n")
    with pytest.raises(RequestError) as refused:
        fmt.render(
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "tool_calls": [{**call, "id": "abcd"}]},
            ]
        )
    # A request's id against the declaration, which names itself, not a template.
    assert str(refused.value) == (
        "messages[1].tool_calls[0].id: 'abcd'; expected an id matching [a-z]{3} (probe declares "
        "its call ids so: NamedCalls.id_pattern)"
    )


def test_a_call_id_pattern_the_format_cannot_mint_names_the_layout() -> None:
    calls = NamedCalls(
        open=fence(Marker("[TOOL_CALLS]")),
        arguments_open=fence(Marker("[ARGS]")),
        id_open=fence(Marker("[CALL_ID]")),
        id_pattern="[a-z]+",
    )
    message = _refused(lambda: _layout(calls))
    assert message.startswith(
        "probe: NamedCalls.id_pattern: '[a-z]+', '+' at 5: not a character, a set of "
        "characters or a count; expected characters and bracketed sets of them"
    )


def test_a_result_id_pattern_the_format_cannot_mint_names_the_layout() -> None:
    """A result's id of another shape is read back as a new id of the pattern's shape, so
    the pattern must be one ids can be minted of, as a call's."""
    results = Results(id_close=fence(Marker("<id>")), id_pattern="[a-z]+")
    message = _refused(lambda: _layout(results))
    assert message.startswith(
        "probe: Results.id_pattern: '[a-z]+', '+' at 5: not a character, a set of "
        "characters or a count; expected characters and bracketed sets of them"
    )


def test_results_id_pattern_needs_an_id_written() -> None:
    message = _refused(lambda: _layout(Results(id_pattern="[A-Za-z0-9]{9}")))
    assert message == (
        "probe: Results.id_pattern: '[A-Za-z0-9]{9}' without id_close or id_after; expected one "
        "of them too (the pattern checks the tool_call_id the format writes, and without them "
        "no id is written), or id_pattern left out"
    )
    # With an id written, the pattern checks it.
    fmt = declare(_layout(Results(id_close=fence(Marker("<id>")), id_pattern="[a-z]{3}")))
    result = [
        {"role": "user", "content": "q"},
        {"role": "tool", "tool_call_id": "abcd", "content": "r"},
    ]
    with pytest.raises(RequestError, match=r"messages\[1\]\.tool_call_id: 'abcd'"):
        fmt.render(result)


@pytest.mark.parametrize(
    ("prompt", "field", "given"),
    [
        (SystemPrompt(joiner="\n"), "joiner", "joiner='\\n'"),
        (SystemPrompt(heading=fence("## System")), "heading", "heading=(Lit(text='## System'),)"),
        (
            SystemPrompt(placement="first_only", joiner=" "),
            "joiner",
            "joiner=' '",
        ),
    ],
)
def test_system_joiner_and_heading_need_gathered_texts(
    prompt: SystemPrompt, field: str, given: str
) -> None:
    """Written in place, each system message is a turn of its own: nothing is joined, and no
    heading is written."""
    message = _refused(lambda: _layout(prompt))
    assert message == (
        f"probe: SystemPrompt.{field}: {given} with placement={prompt.placement!r}; expected "
        "placement='gathered', the only one that joins the system texts (under a heading) "
        "into one turn, or the field left out: here each system message is written as it is"
    )


def test_gathered_system_texts_are_joined_under_the_heading() -> None:
    prompt = SystemPrompt(placement="gathered", joiner=" | ", heading=fence("## "))
    fmt = declare(_layout(prompt))
    messages = [
        {"role": "system", "content": "a"},
        {"role": "user", "content": "q"},
        {"role": "system", "content": "b"},
    ]
    assert fmt.render(messages).text.startswith("<|system|>## a | b<|end|>\n<|user|>q")


@pytest.mark.parametrize("when", ["without_tools", "with_tools"])
def test_default_when_needs_something_that_takes_the_tools(when: str) -> None:
    """Without a tools block a request with tools is refused, so the condition never
    differs: the default text is written in every render, or in none."""
    prompt = SystemPrompt(default="Be brief.", default_when=when)  # type: ignore[arg-type]
    message = _refused(lambda: _layout(prompt))
    assert message == (
        f"probe: SystemPrompt.default_when: {when!r} and no concept that handles a request's "
        "tools; expected 'always', or a tools block (ToolsBlock, or Ignored(('tools',)) where "
        "the template drops them): without one a request with tools is refused, so the "
        "default text is written in every render or in none"
    )
    # Where the template drops the tools, the condition does differ.
    fmt = declare(_layout(prompt, Ignored(("tools",))))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    hello = [{"role": "user", "content": "q"}]
    with_tools = "Be brief." in fmt.render(hello, tools).text
    without = "Be brief." in fmt.render(hello).text
    assert (with_tools, without) == (when == "with_tools", when == "without_tools")


@pytest.mark.parametrize("role", ["system", "user", "tool"])
def test_end_stops_belongs_to_the_assistant_frame(role: str) -> None:
    frame = Frame(open=fence(Marker(f"<|{role}|>")), end=fence(END), end_stops=False)
    message = _refused(
        lambda: Layout(
            name="probe",
            summary="a probe",
            frames={**FRAMES, role: frame},
            concepts=(Results(),),
        )
    )
    assert message == (
        f"probe: Layout.frames[{role!r}].end_stops: False; expected it only on the "
        "'assistant' frame (only the end of the assistant's turn, which the model writes, is "
        "a stop; another role's end never is)"
    )


def test_a_tool_frame_needs_a_results_concept() -> None:
    message = _refused(
        lambda: Layout(name="probe", summary="a probe", frames=FRAMES, concepts=(SystemPrompt(),))
    )
    assert message == (
        "probe: Layout.frames['tool']: a tool frame, and no concept that writes tool messages "
        "in it; expected a Results concept in Layout.concepts (Results(), or JoinedResults), "
        "or no 'tool' frame: without one a tool message is refused, never written"
    )


def test_today_names_a_date_option() -> None:
    """A text option as the clock's date was accepted, and the comparisons then froze the
    template's clock at another date."""
    message = _refused(
        lambda: Layout(
            name="probe", summary="a probe", frames=_frames(), options=_Options(), today="greeting"
        )
    )
    assert message == (
        "probe: Layout.today: 'greeting', an option declared a str; expected the name of a "
        "date option (annotated datetime.date: the comparisons freeze the template's clock at "
        "its date), or None when the template reads no clock"
    )
    dated = Layout(
        name="probe", summary="a probe", frames=_frames(), options=_Options(), today="today"
    )
    assert dated.today == "today"


def test_two_frames_spelled_alike_are_named_once() -> None:
    """Two of the frames' own fences alike were named "one of the frames, one of the
    frames"."""
    frames = {**_frames(), "system": Frame(open=fence(Marker("<|user|>")), end=fence(END))}
    message = _refused(lambda: declare(Layout(name="probe", summary="a probe", frames=frames)))
    assert message == (
        "probe: '<|user|>' has two meanings between turns: two fences of the frames; expected "
        "one meaning per marker (two fences are spelled alike; in the parse table, state "
        "'outside' goes to 'system.body' and to 'user.body')"
    )


def _frames() -> dict[str, Frame]:
    """The frames without a tool frame (these layouts write no results)."""
    return {role: frame for role, frame in FRAMES.items() if role != "tool"}


def test_a_refusal_a_declaration_makes_names_the_declaration() -> None:
    """A declared format has no template of its own: what its declaration refuses is said
    of the declaration (its name and the field)."""
    reasoning = Reasoning(
        open=fence(Marker("<think>")),
        close=fence(Marker("</think>")),
        keep="after_last_query",
        no_query="refused",
    )
    fmt = declare(_layout(SystemPrompt(), reasoning))
    with pytest.raises(RequestError) as refused:
        fmt.render([{"role": "system", "content": "s"}], add_generation_prompt=True)
    assert str(refused.value) == (
        "messages: no user message; expected a user message (probe keeps reasoning after the "
        "last user query, and refuses a conversation without one: Reasoning.no_query)"
    )


class _Nothing:
    """A value no field of plain values takes (not a bool, number, text, tuple nor None)."""

    def __repr__(self) -> str:
        return "<nothing>"


def _plain_fields(concept: Concept) -> list[str]:
    """The fields of ``concept`` whose annotation takes plain values only (bool, int, float,
    str, None, a Literal, tuples and unions of them): ``_plain_annotation``."""
    hints = typing.get_type_hints(type(concept))
    return [
        item.name
        for item in dataclasses.fields(concept)  # type: ignore[arg-type]
        if _plain_annotation(hints[item.name])
    ]


def _plain_annotation(annotation: object) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin in (tuple, frozenset, typing.Union, types.UnionType):
        return all(
            item is Ellipsis or item == () or _plain_annotation(item)
            for item in typing.get_args(annotation)
        )
    return annotation in (bool, int, float, str, type(None))


def _concepts_of_every_format() -> list[tuple[str, int, str]]:
    """(format, concept number, field) for each plain field of each concept of every
    registered format and variant's layout, once per concept class and field."""
    seen: set[tuple[type, str]] = set()
    cases = []
    for name in every_format():
        layout = layout_of(pawlette.get_format(name))
        assert layout is not None, name
        for number, concept in enumerate(layout.concepts):
            if not dataclasses.is_dataclass(concept):
                continue
            for field_name in _plain_fields(concept):
                if (type(concept), field_name) not in seen:
                    seen.add((type(concept), field_name))
                    cases.append((name, number, field_name))
    return cases


CONCEPT_FIELDS = _concepts_of_every_format()


def test_the_plain_fields_of_every_format_are_checked() -> None:
    """The concepts of the registered formats have plain fields (flags, choices, role
    tuples): the check below runs over them, not over nothing."""
    kinds = {type(layout_of(pawlette.get_format(name))).__name__ for name, _, _ in CONCEPT_FIELDS}
    assert len(CONCEPT_FIELDS) > 100 and kinds == {"Layout"}


@pytest.mark.parametrize(("name", "number", "field_name"), CONCEPT_FIELDS)
def test_a_plain_field_of_another_type_is_refused_naming_it(
    name: str, number: int, field_name: str
) -> None:
    """Every concept field of plain values (``Reasoning(loose=5)``, ``empty_on_last=None``,
    a str for a tuple of roles) is refused when declaring, naming the concept's class, the
    field, the value given and what the field takes: before, a flag given ``5`` was read as
    true and a ``None`` as false."""
    layout = layout_of(pawlette.get_format(name))
    assert layout is not None
    concept = layout.concepts[number]
    broken = dataclasses.replace(concept, **{field_name: _Nothing()})  # type: ignore[type-var]
    concepts = (*layout.concepts[:number], broken, *layout.concepts[number + 1 :])
    with pytest.raises(FormatError) as raised:
        declare(dataclasses.replace(layout, concepts=concepts))
    message = str(raised.value)
    assert f"{type(concept).__name__}.{field_name}: <nothing>" in message, message
    assert "; expected " in message, message
