"""``pawlette demo``: what pawlette does, shown on seed 001's weather conversation."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from typing import Any, TextIO

from .errors import PawletteError
from .format import Format, coerce_conversation
from .formats import formats, get_format
from .openai import conversation_to_openai
from .serve.chunks import ChunkStream

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["location"],
        },
    },
}
"""Seed 001's weather tool (bench/declared.py renders it too)."""

WEATHER: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are a helpful assistant with access to weather tools."},
        {"role": "user", "name": "Alice", "content": "What's the weather in Beijing?"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "User wants Beijing's weather. I need to call get_weather.",
            "tool_calls": [
                {
                    "id": "call12345",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": '{"location": "Beijing", "unit": "celsius"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call12345", "content": "25°C, Sunny"},
        {"role": "assistant", "content": "The weather in Beijing is 25 degrees Celsius and sunny."},
    ],
    "tools": [WEATHER_TOOL],
}

NEXT_COMMAND = (
    """echo '{"messages": [{"role": "user", "content": "What is 7 x 8?"}]}'"""
    " | pawlette render -f pcml - | pawlette parse -f pcml --conversation -"
)
"""The demo's last line: a shell command that runs as printed (the request on stdin)."""


def _drop_name(request: dict[str, Any]) -> None:
    for message in request["messages"]:
        if message["role"] == "user":
            message.pop("name", None)


def _drop_reasoning(request: dict[str, Any]) -> None:
    for message in request["messages"]:
        if message["role"] == "assistant":
            message.pop("reasoning_content", None)


def _drop_system(request: dict[str, Any]) -> None:
    request["messages"] = [m for m in request["messages"] if m["role"] != "system"]


def _drop_calls(request: dict[str, Any]) -> None:
    request["messages"] = [
        m for m in request["messages"] if m["role"] != "tool" and not m.get("tool_calls")
    ]


# Features some formats cannot write; the demo leaves out the fewest that make it render.
_SIMPLIFICATIONS: tuple[tuple[str, Callable[[dict[str, Any]], None]], ...] = (
    ("the user's name", _drop_name),
    ("the reasoning", _drop_reasoning),
    ("the system message", _drop_system),
    ("the call and its result", _drop_calls),
)


class _Style:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def heading(self, text: str) -> str:
        return self.paint(text, "1;4")

    def marker(self, text: str) -> str:
        return self.paint(text, "1;36")

    def dim(self, text: str) -> str:
        return self.paint(text, "2")


def _renderable(fmt: Format) -> tuple[dict[str, Any], list[str]]:
    """The demo request with the fewest parts left out that the format renders, one it writes
    without losses first."""
    renderable: list[tuple[dict[str, Any], list[str]]] = []
    for size in range(len(_SIMPLIFICATIONS) + 1):
        for chosen in itertools.combinations(_SIMPLIFICATIONS, size):
            request = copy.deepcopy(WEATHER)
            for _, simplify in chosen:
                simplify(request)
            try:
                rendering = fmt.render(request)
            except PawletteError:
                continue
            if not rendering.losses:
                return request, [label for label, _ in chosen]
            renderable.append((request, [label for label, _ in chosen]))
    if renderable:
        return renderable[0]
    raise PawletteError(f"{fmt.name}: cannot render the demo conversation")


def _show_rendering(fmt: Format, request: dict[str, Any], style: _Style, out: TextIO) -> None:
    rendering = fmt.render(request)
    pieces = [
        style.marker(segment.text) if segment.special else segment.text
        for segment in rendering.segments
    ]
    out.write("".join(pieces) + "\n")


def run(out: TextIO, *, colour: bool) -> int:
    style = _Style(colour)
    out.write(style.heading("pawlette demo") + "\n\n")
    out.write(
        "One conversation in OpenAI chat JSON (a user asks for the weather; the assistant\n"
        "reasons, calls get_weather, reads the result and answers), rendered into every\n"
        "registered format."
        + ("\nMarkers (control tokens) are highlighted in colour." if colour else "")
        + "\n\n"
    )
    out.write(style.dim(json.dumps(WEATHER, ensure_ascii=False)[:300] + " ...") + "\n\n")
    for name in formats():
        fmt = get_format(name)
        request, dropped = _renderable(fmt)
        note = f" (cannot express {', '.join(dropped)}: left out)" if dropped else ""
        out.write(style.heading(f"{name}: {fmt.summary}") + style.dim(note) + "\n")
        losses = fmt.render(request).losses
        if losses:
            # What the format renders but does not write (its declared losses): without this
            # line a call or a tool result the format drops would vanish unremarked.
            out.write(style.dim(f"(rendered with losses: {'; '.join(losses)})") + "\n")
        _show_rendering(fmt, request, style, out)
        out.write("\n")

    fmt = get_format("pcml")
    prompt = fmt.render(WEATHER["messages"][:2], WEATHER["tools"], add_generation_prompt=True)
    full = fmt.render(WEATHER["messages"][:3], WEATHER["tools"])
    completion = full.text[len(prompt.text) :].removesuffix("[/AST]")
    out.write(style.heading("Streaming a model completion through the pcml parser") + "\n")
    out.write(f"The model writes {completion!r}\n")
    out.write("fed 7 characters at a time; each OpenAI chat.completion.chunk delta as it comes:\n")
    parser = fmt.parser()
    stream = ChunkStream(model="demo", completion_id="chatcmpl-demo", created=0)
    for start in range(0, len(completion), 7):
        for chunk in stream.chunks(parser.feed(completion[start : start + 7])):
            _write_chunk(chunk, style, out)
    for chunk in stream.chunks(parser.finish()):
        _write_chunk(chunk, style, out)
    result = fmt.parse(completion)
    out.write("\nThe same text parsed whole, as an OpenAI assistant message:\n")
    out.write(json.dumps(result.message, ensure_ascii=False, indent=2) + "\n")
    out.write(f"finish_reason: {result.finish_reason}\n\n")

    out.write(style.heading("Every format parses its own rendering back") + "\n")
    for name in formats():
        other = get_format(name)
        messages, tools, verdict = _round_trip(other)
        out.write(f"  {name:10} {messages} messages, {tools} tools: {verdict}\n")
    # A command that runs as printed: the request comes on stdin, no file to make first.
    out.write(f"\nNext: {NEXT_COMMAND}\n")
    return 0


def _round_trip(fmt: Format) -> tuple[int, int, str]:
    """Render the demo request, parse the text back as a conversation, and say how the JSON
    compares: the request with the fewest parts left out that the format renders and reads
    back (a part it writes but does not read back, such as Kimi's user names, is named)."""
    counts = (0, 0)
    every = [
        chosen
        for size in range(len(_SIMPLIFICATIONS) + 1)
        for chosen in itertools.combinations(_SIMPLIFICATIONS, size)
    ]
    for lossless in (True, False):  # one the format writes without losses first
        for chosen in every:
            request = copy.deepcopy(WEATHER)
            for _, simplify in chosen:
                simplify(request)
            try:
                rendering = fmt.render(request)
            except PawletteError:
                continue
            if lossless and rendering.losses:
                continue
            parsed = fmt.parse_conversation(rendering.text)
            counts = (len(parsed.messages), len(parsed.tools))
            back = parsed.to_request()
            sent = conversation_to_openai(*coerce_conversation(request))
            tools_dropped = "tools: not written" in rendering.losses
            if not parsed.tools and sent.get("tools") and not tools_dropped:
                # A tools block written in another language (harmony's TypeScript) is not
                # read back as JSON Schema: compare the messages.
                sent = {"messages": sent["messages"]}
                found = "; the tools are written, not read back"
            else:
                found = ""
            if back == sent:
                verdict = "the same JSON back" + found
            elif _renumber_call_ids(back) == _renumber_call_ids(sent):
                verdict = (
                    "the same JSON back, call ids aside (the text has none: call_0, ...)" + found
                )
            elif rendering.losses and fmt.render(back, sent.get("tools")).text == (rendering.text):
                verdict = (
                    f"the same JSON back but what the format drops "
                    f"({len(rendering.losses)} written down)" + found
                )
            else:
                continue
            if chosen:
                verdict += f" (without {', '.join(label for label, _ in chosen)})"
            return (*counts, verdict)
    return (*counts, "DIFFERENT JSON back (a bug: please report)")


def _renumber_call_ids(request: dict[str, Any]) -> dict[str, Any]:
    """The request with call ids replaced by call_0, call_1, ... in order (tool messages too)."""
    renumbered = copy.deepcopy(request)
    names: dict[str, str] = {}
    for message in renumbered["messages"]:
        for call in message.get("tool_calls", []):
            call["id"] = names.setdefault(call["id"], f"call_{len(names)}")
        if "tool_call_id" in message:
            message["tool_call_id"] = names.get(message["tool_call_id"], message["tool_call_id"])
    return renumbered


def _write_chunk(chunk: dict[str, Any], style: _Style, out: TextIO) -> None:
    choice = chunk["choices"][0]
    delta = json.dumps(choice["delta"], ensure_ascii=False)
    finish = choice["finish_reason"]
    out.write("  " + delta + (style.dim(f"  finish_reason={finish}") if finish else "") + "\n")
