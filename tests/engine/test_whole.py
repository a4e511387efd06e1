"""The whole-text reading against the machine it stands in for, on every registered format.

:func:`pawlette.engine.whole.read_whole` may give up on any text (the machine reads it
then); when it does not, its message, call ids and number of calls must be exactly the
machine's, and the machine must have found nothing wrong (no warning)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pawlette
from pawlette.engine.fold import fold, merge_assistant
from pawlette.engine.machine import Parser
from pawlette.engine.whole import read_whole

from ..strategies.completions import completion
from ..support import sampling

FORMATS = pawlette.formats()


def _ids() -> Callable[[], str]:
    counter = iter(range(10**9))
    return lambda: f"call_{next(counter)}"


def _starts(fmt: pawlette.Format) -> list[str]:
    """The states a completion may start in: the format's own and each a prompt leaves."""
    states = fmt.grammar.states
    found = {fmt.grammar.completion_start}
    for (_, _marker), step in fmt.grammar.steps.items():
        if states[step.target].role == "assistant":
            found.add(step.target)
    return sorted(found)


def _agrees(
    fmt: pawlette.Format, text: str, start: str, tools: tuple[pawlette.Tool, ...] = ()
) -> bool:
    """Whether the whole-text reading agrees with the machine (True: it read the text)."""
    plain = read_whole(fmt.grammar, text, start, _ids(), tools)
    if plain is None:
        return False
    events = Parser(fmt.grammar, id_factory=_ids(), start=start, tools=tools).read_all(text)
    folded = fold(events, fmt.grammar.fields)
    assert folded.warnings == [], (text, folded.warnings)
    message = merge_assistant(folded.messages)
    assert plain == (message, len(message.tool_calls)), text
    return True


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_the_whole_text_reading_is_the_machines_on_any_output(name: str) -> None:
    fmt = pawlette.get_format(name)
    starts = _starts(fmt)

    @settings(max_examples=sampling.examples(name, FORMATS, 60))
    @given(st.randoms(use_true_random=False), st.sampled_from(starts))
    def check(rng: Any, start: str) -> None:
        text = completion(fmt, rng)
        _agrees(fmt, text, start)
        # Cut anywhere: an unclosed part, a marker's first half.
        cut = rng.randint(0, len(text))
        _agrees(fmt, text[:cut], start)

    check()


def _written(fmt: pawlette.Format, message: dict[str, Any]) -> str:
    """``message`` as the format writes it after a generation prompt."""
    question = [{"role": "user", "content": "What's the weather?"}]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    prompt = fmt.render(question, tools=tools, add_generation_prompt=True).text
    full = fmt.render([*question, {"role": "assistant", **message}], tools=tools).text
    return full[len(prompt) :]


_CALL = {
    "id": "call_7",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris", "days": [1, 2.5]}'},
}
_PLAIN = [
    {"content": "Sunny."},
    {"content": "Let me check.", "tool_calls": [_CALL]},
    {"content": None, "tool_calls": [_CALL, {**_CALL, "id": "call_8"}]},
    {"content": "", "reasoning_content": "The user asks.", "tool_calls": [_CALL]},
]


@pytest.mark.parametrize("name", ["pcml", "chatml", "hermes", "gemma", "phi3", "smollm3"])
def test_what_a_format_writes_is_read_whole_and_as_the_machine_reads_it(name: str) -> None:
    """Not a vacuous comparison: the formats the reading knows are read so, text, reasoning
    and calls (every one of these messages, with or without the text after the turn)."""
    fmt = pawlette.get_format(name)
    for message in _PLAIN:
        try:
            text = _written(fmt, message)
        except pawlette.RequestError:  # a layout that cannot write the message
            continue
        stop = next((stop for stop in fmt.stop if stop in text), None)
        ends = [text] if stop is None else [text, text[: text.index(stop) + len(stop)]]
        for written in ends:
            assert _agrees(fmt, written, fmt.grammar.completion_start), (name, written)


_TYPED_TOOL = pawlette.Tool(
    name="get_weather",
    definition={
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "array"},
                "code": {"type": "string"},
                "limit": {"type": "integer"},
            },
        },
    },
)
_TYPED_CALL = {
    "id": "call_7",
    "type": "function",
    "function": {
        "name": "get_weather",
        "arguments": '{"city": "Paris", "days": [1, 2.5, {"a": [true, null]}], "code": "12", '
        '"limit": 3}',
    },
}
_TYPED = [
    {"content": "Let me check.", "tool_calls": [_TYPED_CALL]},
    {"content": None, "tool_calls": [_TYPED_CALL, {**_TYPED_CALL, "id": "call_8"}]},
    {"content": "", "reasoning_content": "The user asks.", "tool_calls": [_TYPED_CALL]},
]


@pytest.mark.parametrize(
    "name",
    [
        *("glm", "seed_oss", "minicpm", "bailing", "spark"),  # tagged parameters
        *("hy3", "ifm"),  # the same, in a call section
        *("kimi", "deepseek", "functionary"),  # a name, then JSON arguments
    ],
)
def test_calls_read_by_their_parameters_are_read_whole_as_the_machine_reads_them(
    name: str,
) -> None:
    """Calls whose parameters are tags typed by the tool's schema (GLM's, Seed-OSS's with
    Python literals, MiniCPM's...), in a section or not, and calls written as a name then
    JSON arguments (Kimi's, DeepSeek's...) are read whole, with the caller's tools or none,
    and a name none of the caller's tools has is left to the machine (which keeps it as
    text)."""
    fmt = pawlette.get_format(name)
    other = pawlette.Tool(name="other", definition={"name": "other", "parameters": {}})
    read = 0
    for message in [*_PLAIN, *_TYPED]:
        try:
            text = _written(fmt, message)
        except pawlette.RequestError:
            continue
        start = fmt.grammar.completion_start
        assert _agrees(fmt, text, start), text
        assert _agrees(fmt, text, start, (_TYPED_TOOL,)), text
        if message.get("tool_calls"):
            assert not _agrees(fmt, text, start, (other,)), text
        read += 1
    assert read >= 4


def test_a_text_the_reading_does_not_know_is_left_to_the_machine() -> None:
    pcml = pawlette.get_format("pcml")
    grammar = pcml.grammar
    # A header, a malformed call, text after the end, an unclosed call: all the machine's.
    for text in (
        'name="x"[SEP]Hi<end>',
        "<call>{not json}</call><end>",
        "Hi<end>more",
        '<call>{"name": "f", "arguments": {}}',
    ):
        assert read_whole(grammar, text) is None, text
    asked: list[int] = []

    def counting() -> str:
        asked.append(1)
        return "call_x"

    # Ids are asked for only once the reading succeeds.
    text = '<call>{"name": "f", "arguments": {}}</call><call>{"name": "f", "arguments": 1}</call>'
    assert read_whole(grammar, text, None, counting) is None
    assert asked == []
    found = read_whole(grammar, '<call>{"name": "f", "arguments": {}}</call><end>', None, counting)
    assert found is not None and found[0].tool_calls[0].id == "call_x" and asked == [1]


def test_a_text_the_reading_gave_up_on_is_not_lexed_again(monkeypatch: Any) -> None:
    """The machine takes the tokens the whole-text reading made before it gave up: one scan
    of the text per parse, and the same result as a scan of its own."""
    from pawlette.engine.lexer import Lexer

    fmt = pawlette.get_format("pcml")
    text = "Hi<call>{not json}</call><end>"  # a malformed call: the machine's
    expected = fmt.parse(text, id_factory=_ids())
    scans: list[str] = []
    read_all = Lexer.read_all

    def counted(self: Lexer, text: str) -> Any:
        scans.append(text)
        return read_all(self, text)

    monkeypatch.setattr(Lexer, "read_all", counted)
    assert fmt.parse(text, id_factory=_ids()) == expected
    assert scans == [text]
    events = Parser(fmt.grammar, id_factory=_ids()).read_all(text)
    tokens = Lexer(fmt.grammar.markers, escape=fmt.grammar.escape).read_all(text)
    taken = Parser(fmt.grammar, id_factory=_ids()).read_all(text, None, tokens)
    assert taken == events and tokens == []
