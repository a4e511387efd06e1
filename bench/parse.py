"""Parser and renderer throughput (PCML by default).  Prints a table; not a test.

- streaming a ~1 MB completion with long tool-call arguments in 1- and 4-character chunks,
  and the same at twice the size (linear cost: the time should about double);
- whole-text parse speed in MB/s;
- render speed in conversations/s for a 6-message conversation with one tool, against a plain
  Python f-string renderer of the same text (the floor) and, when installed, transformers'
  ``apply_chat_template`` with an equivalent Jinja template.

Usage, from the repository root: python -m bench.parse [--format pcml] [--megabytes 1]
(``-m`` keeps ``bench/`` off ``sys.path``: ``bench/tokenize.py`` would shadow the standard
library's ``tokenize``.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import pawlette
from pawlette.demo import WEATHER

# The demo's weather conversation (seed 001) plus a follow-up question: six messages, one tool.
CONVERSATION: dict[str, Any] = {
    "messages": [*WEATHER["messages"], {"role": "user", "content": "Thanks! And tomorrow?"}],
    "tools": WEATHER["tools"],
}


def big_completion(fmt: pawlette.Format, size: int) -> str:
    """A completion of about ``size`` characters: reasoning, text and long-argument calls."""
    calls = []
    index = 0
    per_call = 20_000
    while len(json.dumps(calls)) < size:
        payload = {
            "text": ('lorem ipsum dolor sit amet, 東京 "quoted" \\ ' * 500)[:per_call],
            "numbers": list(range(200)),
            "nested": {"a": [1, 2, {"b": None}]},
        }
        calls.append(
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {"name": "store", "arguments": json.dumps(payload)},
            }
        )
        index += 1
    message = {
        "role": "assistant",
        "content": "Storing.",
        "reasoning_content": "ok",
        "tool_calls": calls,
    }
    prompt = fmt.render([{"role": "user", "content": "go"}], add_generation_prompt=True).text
    full = fmt.render([{"role": "user", "content": "go"}, message]).text
    return full[len(prompt) :]


def stream(fmt: pawlette.Format, text: str, piece: int) -> float:
    parser = fmt.parser()
    start = time.perf_counter()
    for position in range(0, len(text), piece):
        parser.feed(text[position : position + piece])
    parser.finish()
    return time.perf_counter() - start


def best(function: Callable[[], float], repeat: int = 3) -> float:
    return min(function() for _ in range(repeat))


def render_rate(function: Callable[[], object], seconds: float = 1.0) -> float:
    count = 0
    start = time.perf_counter()
    while True:
        for _ in range(200):
            function()
        count += 200
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed


def plain_pcml(request: dict[str, Any]) -> str:
    """The floor: an f-string renderer with no validation, no segments, no escaping."""
    tools = json.dumps([t["function"] for t in request["tools"]], separators=(",", ":"))
    out = []
    for message in request["messages"]:
        role = message["role"]
        if role == "system":
            out.append(f"[SYS]{message['content']}\n<tools>{tools}</tools>[/SYS]")
        elif role == "user":
            name = f'name="{message["name"]}"[SEP]' if "name" in message else ""
            out.append(f"[USR]{name}{message['content']}[/USR]")
        elif role == "tool":
            out.append(f'[OBS]id="{message["tool_call_id"]}"[SEP]{message["content"]}[/OBS]')
        else:
            body = ""
            if message.get("reasoning_content") is not None:
                body += f"<think>{message['reasoning_content']}</think>\n"
            body += message.get("content") or ""
            for call in message.get("tool_calls", []):
                function = call["function"]
                body += (
                    f'<call>{{"id": "{call["id"]}", "name": "{function["name"]}", '
                    f'"arguments": {function["arguments"]}}}</call>'
                )
            out.append(f"[AST]{body}<end>[/AST]")
    return "\n\n".join(out) + "\n\n[AST]"


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--format", default="pcml")
    options.add_argument("--megabytes", type=float, default=1.0)
    arguments = options.parse_args()
    fmt = pawlette.get_format(arguments.format)
    size = int(arguments.megabytes * 1_000_000)
    one = big_completion(fmt, size)
    two = big_completion(fmt, 2 * size)
    rows = []
    for piece in (1, 4):
        first = best(lambda piece=piece: stream(fmt, one, piece), 2)  # type: ignore[misc]
        second = best(lambda piece=piece: stream(fmt, two, piece), 2)  # type: ignore[misc]
        rows.append(
            (
                f"stream {piece}-char chunks",
                len(one) / first / 1e6,
                f"{len(one) / first:,.0f} chars/s",
                f"2x input: {second / first:.2f}x time",
            )
        )
    whole = best(lambda: _timed(lambda: fmt.parse(one)))
    rows.append(
        ("whole-text parse", len(one) / whole / 1e6, f"{len(one) / whole / 1e6:.1f} MB/s", "")
    )
    ours = render_rate(lambda: fmt.render(CONVERSATION, add_generation_prompt=True))
    print(f"pawlette {pawlette.__version__}, format {fmt.name}, completion {len(one):,} chars")
    print(f"{'measure':28} {'result':>22}  note")
    for label, _, result, note in rows:
        print(f"{label:28} {result:>22}  {note}")
    print(f"{'render (6 messages, 1 tool)':28} {ours:>16,.0f} conv/s")
    if arguments.format == "pcml":
        floor = render_rate(lambda: plain_pcml(CONVERSATION))
        print(
            f"{'  plain f-string floor':28} {floor:>16,.0f} conv/s  ours/floor = {ours / floor:.2f}"
        )
    peer = _transformers_rate(fmt)
    if peer is not None:
        print(
            f"{'  transformers template':28} {peer:>16,.0f} conv/s  ours/peer = {ours / peer:.2f}"
        )
    return 0


def _timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def _transformers_rate(fmt: pawlette.Format) -> float | None:
    """transformers' apply_chat_template with pawlette's exported template, if both exist."""
    try:
        from transformers.utils.chat_template_utils import render_jinja_template

        from pawlette.export.jinja import export_jinja
    except ImportError:
        return None
    template = export_jinja(fmt.name)
    messages = CONVERSATION["messages"]
    tools = CONVERSATION["tools"]

    def run() -> object:
        return render_jinja_template(
            conversations=[messages],
            tools=tools,
            chat_template=template,
            add_generation_prompt=True,
        )

    try:
        run()
    except Exception as error:  # a peer failure is reported, not fatal to the benchmark
        print(f"transformers template failed: {error}", file=sys.stderr)
        return None
    return render_rate(run)


if __name__ == "__main__":
    sys.exit(main())
