"""Helpers the format tests share."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

from pawlette.engine.fold import fold
from pawlette.format import Format, coerce_conversation
from pawlette.openai import conversation_to_openai
from pawlette.types import Event, Rendering

OPEN, CLOSE = "⟦", "⟧"


WITHOUT_SYSTEM = frozenset({"gemma"})
"""Registered formats whose templates refuse a system message (the refusal names its path):
shared tests assert the refusal, then run on the conversation without it."""
WITHOUT_CALLS = frozenset({"gemma", "phi3", "smollm3", "rwkv"})
"""Registered formats whose templates have no call syntax: they write no call (a recorded
loss), and a forced ``tool_choice`` is refused naming ``tool_choice``."""


def stop_texts(fmt: Format) -> set[str]:
    """The format's stops of text only, which no marker ends (RWKV World's blank line, its
    model's end-of-turn token): an engine's generation stops at that text."""
    markers = fmt.special_markers
    return {stop for stop in fmt.stop if not any(stop.endswith(marker) for marker in markers)}


def without_stop(ids: list[int], stops: set[int], texts: list[list[int]]) -> list[int]:
    """A turn's ``ids`` without its own stop at their end: a stop marker's id (``stops``),
    or the ids of a stop of text (``texts``, each as the tokenizer encodes it)."""
    if ids and ids[-1] in stops:
        return ids[:-1]
    for tail in texts:
        if tail and ids[-len(tail) :] == tail:
            return ids[: -len(tail)]
    return ids


def without_refused_system(fmt: Format, request: dict[str, Any]) -> dict[str, Any]:
    """``request`` as ``fmt`` expresses it: whole, or without its leading system message where
    the format is one of :data:`WITHOUT_SYSTEM` (whose refusal, naming the message, is checked
    here); every other format must render it."""
    from pawlette.errors import UnsupportedFeature

    try:
        fmt.render(request)
    except UnsupportedFeature as error:
        assert fmt.name in WITHOUT_SYSTEM, error
        assert error.path == "messages[0].role" and "'system'" in str(error), error
        assert request["messages"][0]["role"] == "system"
        return {**request, "messages": request["messages"][1:]}
    assert fmt.name not in WITHOUT_SYSTEM, f"{fmt.name} renders a system message"
    return request


def mask_text(rendering: Rendering) -> str:
    """The rendering with every run of trainable segments wrapped in ⟦ ⟧."""
    pieces: list[str] = []
    inside = False
    for segment in rendering.segments:
        if segment.trainable and not inside:
            pieces.append(OPEN)
            inside = True
        elif not segment.trainable and inside:
            pieces.append(CLOSE)
            inside = False
        pieces.append(segment.text)
    if inside:
        pieces.append(CLOSE)
    return "".join(pieces)


def sequential_ids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def canonical(request: dict[str, Any]) -> dict[str, Any]:
    """The request as the OpenAI edge writes it back (defaults made explicit)."""
    messages, tools = coerce_conversation(request)
    return conversation_to_openai(messages, tools)


def feed_in_pieces(
    fmt: Format,
    text: str,
    sizes: list[int],
    *,
    conversation: bool,
    stream_arguments: bool = False,
    prompt: str | None = None,
) -> list[Event]:
    parser = fmt.parser(
        conversation=conversation,
        id_factory=sequential_ids(),
        stream_arguments=stream_arguments,
        prompt=prompt,
    )
    events: list[Event] = []
    position = 0
    for size in itertools.cycle(sizes or [len(text) or 1]):
        if position >= len(text):
            break
        events += parser.feed(text[position : position + size])
        position += size
    return events + parser.finish()


def random_sizes(seed: int, count: int = 64) -> list[int]:
    generator = random.Random(seed)
    return [generator.choice([1, 1, 2, 3, 5, 8, 13, 40]) for _ in range(count)]


def folded(fmt: Format, events: list[Event]) -> Any:
    result = fold(events, fmt.grammar.fields)
    return (result.messages, result.tools, [w.text for w in result.warnings])


def model_prompt(fmt: Format, messages: list[Any], tools: Any, full: str) -> str:
    """The prompt the model's turn follows in ``full`` (the render through that turn): the
    render of ``messages`` with the generation prompt, except where a prompt written after
    every render goes past the assistant's opener (Command R7B's empty reasoning block) and
    the turn writes otherwise; there the model's text follows the opener."""
    from .support.template_compare import always_prompt

    rendering = fmt.render(messages, tools, add_generation_prompt=True)
    prompt = rendering.text
    always = always_prompt(fmt, messages, tools)
    if always is not None and not full.startswith(prompt):
        written, opener = always
        prompt = prompt[: len(prompt) - len(written)] + opener
    elif not full.startswith(prompt):
        # A generation prompt that writes more than the turn's opener (Gemma 4's empty
        # thought block, which its past turns do not hold): the model's text follows the
        # prompt, and the turn as the template keeps it follows the opener.
        # Where the turn holds a stand-in for the prompt's empty block (DeepSeek V3.2's
        # </think> for its <think></think>), the model's text follows the stand-in.
        opened = _opener_only(fmt, rendering, messages)
        if opened is not None and full.startswith(opened):
            prompt = opened + _stand_in(fmt, full[len(opened) :])
    return prompt


def _stand_in(fmt: Format, turn: str) -> str:
    """The stand-in ``turn`` begins with for the generation prompt's empty reasoning block
    (:meth:`pawlette.declare.Reasoning.prompt_writes_absent`), or ``""``."""
    from pawlette.declare import Reasoning, layout_of
    from pawlette.declare.pieces import text_of

    layout = layout_of(fmt)
    reasoning = None if layout is None else layout.concept(Reasoning)
    if layout is None or reasoning is None or not reasoning.prompt_writes_absent():
        return ""
    stand_in = text_of(reasoning.absent, layout.options, layout.name)
    return stand_in if turn.startswith(stand_in) else ""


def prompt_past_opener(fmt: Format, messages: list[Any], tools: Any, full: str) -> bool:
    """Whether the generation prompt after ``messages`` writes more than the assistant's
    opener, and the turn in ``full`` follows that opener (Gemma 4's empty thought block)."""
    rendering = fmt.render(messages, tools, add_generation_prompt=True)
    opened = _opener_only(fmt, rendering, messages)
    return opened is not None and opened != rendering.text and full.startswith(opened)


def _opener_only(fmt: Format, rendering: Any, messages: list[Any]) -> str | None:
    """The prompt render with its generation prompt cut down to the assistant's opener."""
    from pawlette.declare import layout_of
    from pawlette.declare.pieces import text_of

    layout = layout_of(fmt)
    if layout is None:
        return None
    written = ""
    for segment in reversed(rendering.segments):
        if segment.kind != "generation_prompt":
            break
        written = segment.text + written
    previous = messages[-1]["role"] if messages else "start"
    opener = layout.frames["assistant"].opener(previous)
    return rendering.text[: len(rendering.text) - len(written)] + text_of(
        opener, layout.options, layout.name
    )


def completion_text(fmt: Format, request: dict[str, Any], index: int) -> str:
    """What the model produced for assistant message ``index``: the training render of the
    conversation through that message, minus the generation-prompt render before it."""
    tools = request.get("tools")
    messages = request["messages"]
    rendering = fmt.render(messages[: index + 1], tools)
    full = rendering.text
    # A template that writes the generation prompt after every conversation (Firefunction):
    # no model writes the next turn's opener after its own turn.
    for segment in reversed(rendering.segments):
        if segment.kind != "generation_prompt":
            break
        full = full[: len(full) - len(segment.text)]
    prompt = model_prompt(fmt, messages[:index], tools, full)
    if not full.startswith(prompt):
        raise AssertionError(
            f"{fmt.name}: the prompt render is not a prefix of the training render\n"
            f"prompt: {prompt!r}\nfull:   {full!r}"
        )
    return full[len(prompt) :]
