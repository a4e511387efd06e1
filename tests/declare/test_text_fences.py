"""Fences spelled as text (no special token: ``fence("<tool_call>")``), generated over the
call concepts and a reasoning block: every turn the writer writes with text before its calls,
or reasoning before its answer, is one the exported grammars (Lark under llguidance, and GBNF
turned into Lark by the test translator) accept, and parsing its token ids gives what parsing
its text gives, with or without ``markers_in_text``.

Free text and the text-spelled fence after it meet without a marker between them: a grammar
whose text stops where the fence could begin (its last character would complete the fence)
refuses the turn, and a reader of ids that looks for special tokens only reads the calls as
content."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import pawlette
from pawlette.declare import (
    Concept,
    Frame,
    JsonCallList,
    JsonCalls,
    Layout,
    Marker,
    NamedCalls,
    PythonCalls,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    fence,
)
from pawlette.declare.pieces import Fence, text_of
from pawlette.format import Format
from pawlette.tokenization.ids import IdParser

from ..helpers import feed_in_pieces, folded, sequential_ids
from . import registering
from .conversations import TOOLS
from .test_cross_artifacts import as_lark, completion, export_grammar, text_ids
from .tokens import accepts, segment_ids, tokenizer

M = Marker


def _json(open: Fence, close: Fence) -> Concept:
    return JsonCalls(open=open, close=close)


def _listed(open: Fence, close: Fence) -> Concept:
    return JsonCallList(open=open, close=close)


def _named(open: Fence, close: Fence) -> Concept:
    return NamedCalls(open=open, arguments_open=fence(M("<args>")), close=close)


def _named_ids(open: Fence, close: Fence) -> Concept:
    """Ids written after the name, before arguments opened by text: the free id ends there."""
    return NamedCalls(
        open=open, id_open=fence(M("<id>")), arguments_open=fence("<args>"), close=close
    )


def _xml(open: Fence, close: Fence) -> Concept:
    return XmlCalls(
        open=fence(*open, "<function="),
        name_close=fence(">\n"),
        key_open=fence("<parameter="),
        key_close=fence(">\n"),
        value_close=fence("\n</parameter>\n"),
        close=fence("</function>", *close),
    )


def _python(open: Fence, close: Fence) -> Concept:
    return PythonCalls(open=open, close=close)


CALLS: dict[str, Callable[[Fence, Fence], Concept]] = {
    "json": _json,
    "listed": _listed,
    "named": _named,
    "named-ids": _named_ids,
    "xml": _xml,
    "python": _python,
}
OPENS: dict[str, tuple[Fence, Fence]] = {
    "text": (fence("<tool_call>"), fence("</tool_call>")),
    "newline": (fence("\n<tool_call>"), fence("</tool_call>")),
}
"""The calls' open and close fences, spelled as text (no special token in them)."""
REASONING: dict[str, Concept | None] = {
    "none": None,
    "text": Reasoning(open=fence("<think>"), close=fence("</think>")),
}


def layout(calls: str, spelling: str, reasoning: str, in_text: bool) -> Layout:
    open, close = OPENS[spelling]
    thinking = REASONING[reasoning]
    concepts: tuple[Concept, ...] = (
        SystemPrompt(),
        ToolsBlock(open=fence(M("<tools>")), close=fence(M("</tools>"))),
        *((thinking,) if thinking is not None else ()),
        CALLS[calls](open, close),
        Results(),
    )
    return Layout(
        name=f"text-fences-{calls}-{spelling}-{reasoning}-{'in-text' if in_text else 'ids'}",
        summary="a declared format whose calls (and reasoning) are fenced by text",
        frames={
            role: Frame(open=fence(M(f"<{role}>")), end=fence(M(f"</{role}>")))
            for role in ("system", "user", "assistant", "tool")
        },
        concepts=concepts,
        markers_in_text=in_text,
    )


LAYOUTS = [
    layout(calls, spelling, reasoning, in_text)
    for calls, spelling, reasoning, in_text in itertools.product(
        CALLS, OPENS, REASONING, (True, False)
    )
]


@pytest.fixture(scope="module", params=LAYOUTS, ids=lambda declared: declared.name)
def fmt(request: pytest.FixtureRequest) -> Iterator[Format]:
    with registering.registered(request.param):
        yield pawlette.get_format(request.param.name)


CALL = {
    "id": "call_0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}


def requests(fmt: Format) -> list[dict[str, Any]]:
    """Turns with text before the calls, and (where the format reasons) reasoning before
    text, before calls and before both."""
    reasons = any(isinstance(concept, Reasoning) for concept in _layout(fmt).concepts)
    turns: list[dict[str, Any]] = [
        {"content": "Sure.", "tool_calls": [CALL]},
        {"content": "Sure <tool_call", "tool_calls": [CALL]},  # the fence's start is text
        {"content": "Sure.", "tool_calls": [CALL, {**CALL, "id": "call_1"}]},
    ]
    if reasons:
        turns += [
            {"content": "Sure.", "reasoning_content": "Hm </think"},
            {"content": "", "reasoning_content": "Hm.", "tool_calls": [CALL]},
            {"content": "Sure.", "reasoning_content": "Hm.", "tool_calls": [CALL]},
        ]
    user = {"role": "user", "content": "Weather in Paris?"}
    return [{"messages": [user, {"role": "assistant", **turn}], "tools": TOOLS} for turn in turns]


def _layout(fmt: Format) -> Layout:
    declared = fmt.declaration
    assert isinstance(declared, Layout)
    return declared


@pytest.mark.parametrize("syntax", ["lark", "gbnf"])
def test_the_grammar_accepts_text_before_a_text_fence(fmt: Format, syntax: str) -> None:
    for request in requests(fmt):
        text, full, start = completion(fmt, request)
        ids = segment_ids(fmt.name, full, start=start)
        grammar = export_grammar(fmt.name, request["tools"], "auto", True, syntax)
        assert accepts(fmt.name, as_lark(fmt, grammar, syntax), ids), text


def test_the_grammar_still_refuses_the_fence_inside_the_text(fmt: Format) -> None:
    """The text before the calls spells no fence: a turn whose text holds the calls' whole
    open before the calls is refused (the open is the calls', never the text's)."""
    request = requests(fmt)[0]
    text, full, start = completion(fmt, request)
    grammar = export_grammar(fmt.name, request["tools"], "auto")
    assert accepts(fmt.name, grammar, segment_ids(fmt.name, full, start=start))
    kinds = (JsonCalls, JsonCallList, NamedCalls, XmlCalls, PythonCalls)
    calls = next(concept for concept in _layout(fmt).concepts if isinstance(concept, kinds))
    opener = text_of(calls.open or (), None, fmt.name)
    assert "<tool_call>" in opener
    written = text.replace("Sure.", "Sure." + opener, 1)
    assert written != text
    assert not accepts(fmt.name, grammar, text_ids(fmt, written)), written


def test_text_and_ids_read_the_same_turn(fmt: Format) -> None:
    for request in requests(fmt):
        text, full, start = completion(fmt, request)
        prompt = full.text[:start]
        whole = folded(
            fmt, feed_in_pieces(fmt, text, [len(text)], conversation=False, prompt=prompt)
        )
        messages, _, warnings = whole
        written = request["messages"][-1].get("tool_calls", [])
        assert len(messages[-1].tool_calls) == len(written), whole  # the text reads its calls
        assert not warnings, whole
        ids = segment_ids(fmt.name, full, start=start)
        for size in (1, 3, len(ids)):
            parser = IdParser(fmt, tokenizer(fmt.name), id_factory=sequential_ids(), prompt=prompt)
            events = []
            for position in range(0, len(ids), size):
                events += parser.feed_ids(ids[position : position + size])
            events += parser.finish()
            assert folded(fmt, events) == whole, (text, size)
