"""Formats declared on the generic concepts the way a user outside the package would (public
imports only), one for each call concept and turn shape that no shipped format has alone:
turns without an opener or an end, openers after a given turn, reasoning a prompt opens,
names outside the arguments, tag calls typed by schema, one JSON array of calls, bare calls
joined as the whole turn (a turn's text written in their place), one bare JSON array as the
whole turn (and a default system text that differs when there are tools), calls opened and
never closed, JSON objects listed without brackets, an answer fenced apart from a turn of calls
that ends otherwise.  The
cross-artifact tests (:mod:`.test_cross_artifacts`) check every artifact of each."""

from __future__ import annotations

from pawlette.declare import (
    AnswerFence,
    CallTurnEnd,
    Frame,
    JsonCallList,
    JsonCalls,
    Layout,
    Marker,
    NamedCalls,
    PromptAlways,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    fence,
)

M = Marker


def _tools(place: str = "system") -> ToolsBlock:
    return ToolsBlock(place=place, open=fence(M("<tools>")), close=fence(M("</tools>")), array=True)  # type: ignore[arg-type]


IMPLICIT = Layout(
    name="user-implicit",
    summary="assistant turns with no opener, calls named outside their arguments, result ids",
    begin=fence(M("<s>")),
    frames={
        "system": Frame(open=fence(M("<SYS>")), end=fence(M("</SYS>"))),
        "user": Frame(open=fence(M("<INST>")), end=fence(M("</INST>"))),
        "assistant": Frame(end=fence(M("</s>"))),
        "tool": Frame(open=fence(M("<RES>")), end=fence(M("</RES>"))),
    },
    concepts=(
        SystemPrompt(),
        _tools(),
        NamedCalls(
            open=fence(M("<CALLS>")),
            id_open=fence(M("<ID>")),
            arguments_open=fence(M("<ARGS>")),
            content="refused",
        ),
        Results(id_close=fence(M("<CONTENT>"))),
    ),
)

OPEN_ENDED = Layout(
    name="user-open-ended",
    summary="bare gathered system text, user turns with no end, a prompt that opens reasoning",
    begin=fence(M("<bos>")),
    frames={
        "system": Frame(),
        "user": Frame(open=fence(M("<U>"))),
        "assistant": Frame(
            open_after={"user": fence(M("<A>"))},
            # The prompt opens the block after any turn (the grammar's turn begins inside it).
            prompt_after={"user": fence(M("<A>"), M("<t>")), "tool": fence(M("<t>"))},
            end=fence(M("<eos>")),
        ),
        "tool": Frame(open=fence(M("<out>")), end=fence(M("</out>"))),
    },
    concepts=(
        SystemPrompt(placement="gathered"),
        _tools(),
        Reasoning(
            open=fence(M("<t>")),
            close=fence(M("</t>")),
            keep="after_last_query",
            empty_on_last=True,
            prompt="opened",
        ),
        NamedCalls(
            section_open=fence(M("<calls>")),
            section_close=fence(M("</calls>")),
            open=fence(M("<call>")),
            arguments_open=fence(M("<sep>")),
            close=fence(M("</call>")),
        ),
        Results(),
    ),
)

TAGGED = Layout(
    name="user-tagged",
    summary="calls as tags, one per parameter, typed by the tools' schemas",
    frames={
        role: Frame(open=fence(M("<|im_start|>"), f"{role}\n"), end=fence(M("<|im_end|>")))
        for role in ("system", "user", "assistant")
    }
    | {"tool": Frame(open=fence(M("<|im_start|>"), "tool\n"), end=fence(M("<|im_end|>")))},
    concepts=(
        SystemPrompt(),
        _tools(),
        XmlCalls(
            open=fence(M("<tool_call>"), "\n<function="),
            name_close=fence(">\n"),
            key_open=fence("<parameter="),
            key_close=fence(">\n"),
            value_close=fence("\n</parameter>\n"),
            close=fence("</function>\n", M("</tool_call>")),
            separator=fence("\n"),
            text_separator=fence("\n"),
        ),
        Results(),
    ),
)

LISTED = Layout(
    name="user-listed",
    summary="the calls of a turn as one JSON array",
    frames={
        role: Frame(open=fence(M(f"<{role}>")), end=fence(M("<end>")), after=fence("\n"))
        for role in ("system", "user", "assistant", "tool")
    },
    concepts=(
        SystemPrompt(),
        _tools("first_user"),
        JsonCallList(
            open=fence(M("<calls>")),
            close=fence(M("</calls>")),
            keys=(("id", "call_id"), ("name", "tool_name"), ("arguments", "parameters")),
        ),
        Results(),
    ),
)

JOINED = Layout(
    name="user-joined",
    summary="bare JSON calls joined as the whole turn, a turn's text written in their place",
    frames={
        role: Frame(open=fence(M(f"<|{role}|>")), end=fence(M("<|end|>")))
        for role in ("system", "user", "assistant", "tool")
    },
    concepts=(
        SystemPrompt(),
        _tools(),
        # Phi-4-mini's: {...},{...} with no opener; text, when there is some, instead.
        JsonCalls(open=None, separator=fence(","), with_content=False, drops_calls=True),
        Results(),
        PromptAlways(),
    ),
)

BARE_LISTED = Layout(
    name="user-bare-listed",
    summary="the calls of a turn as one bare JSON array, the whole turn; its text in their place",
    frames={
        role: Frame(open=fence(M(f"<|{role}|>")), end=fence(M("<|end|>")), after=fence("\n"))
        for role in ("system", "user", "assistant", "tool")
    },
    concepts=(
        # A default system text of its own when the request has tools.
        SystemPrompt(default="You help.", default_with_tools="You help; call a tool if needed."),
        _tools(),
        # [{...}, {...}] with no opener; text, when there is some, instead.
        JsonCallList(open=None, content="replaces_calls"),
        Results(),
    ),
)

OPENED = Layout(
    name="user-opened",
    summary="each call opened by a marker, none closed: the next call's opener or the turn's end",
    frames={
        role: Frame(open=fence(M(f"<|{role}|>")), end=fence(M("<|eot|>")))
        for role in ("system", "user", "assistant", "tool")
    },
    concepts=(
        SystemPrompt(),
        _tools(),
        # Llama 4's <|python_start|> before each call: <c>{...}<c>{...}<|eot|>
        JsonCalls(open=fence(M("<|call|>")), close=()),
        Results(),
    ),
)

UNBRACKETED = Layout(
    name="user-unbracketed",
    summary="the calls of a turn as JSON objects one after another, no brackets",
    frames={
        role: Frame(open=fence(M(f"<{role}>")), end=fence(M("<end>")), after=fence("\n"))
        for role in ("system", "user", "assistant", "tool")
    },
    concepts=(
        SystemPrompt(),
        _tools(),
        JsonCallList(
            open=fence(M("<calls>")),
            close=fence(M("</calls>")),
            list_open="",
            list_close="",
            item_separator="",
        ),
        Results(),
    ),
)

ANSWERED = Layout(
    name="user-answered",
    summary="an answer's text fenced, a turn of calls fenced otherwise and ended by its own marker",
    frames={
        role: Frame(open=fence(M(f"<{role}>")), end=fence(M("<end>")), after=fence("\n"))
        for role in ("system", "user", "tool")
    }
    | {
        "assistant": Frame(
            open=fence(M("<assistant>")),
            end=fence(M("<end>")),
            after=fence("\n"),
            also_end=(fence(M("<called>")),),
        )
    },
    concepts=(
        SystemPrompt(),
        _tools(),
        # Command A's and Solar Open's: <assistant><text>TEXT</text><end> for an answer,
        # <assistant><action>[...]</action><called> for a turn of calls (its text dropped).
        AnswerFence(open=fence(M("<text>")), close=fence(M("</text>"))),
        JsonCallList(open=fence(M("<action>")), close=fence(M("</action>")), content="dropped"),
        CallTurnEnd(end=fence(M("<called>"))),
        Results(),
    ),
)

LAYOUTS = (
    IMPLICIT,
    OPEN_ENDED,
    TAGGED,
    LISTED,
    JOINED,
    BARE_LISTED,
    OPENED,
    UNBRACKETED,
    ANSWERED,
)
