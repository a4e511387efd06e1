"""Render speed of the declared formats (chatml, llama3) against the real templates.

For each format, one conversation with a tool (system, user, a call, its result, an answer,
a follow-up question; a generation prompt), OpenAI dicts in, rendered by:

- ``pawlette``: :meth:`pawlette.Format.render` (segments with roles and trainability);
- ``exported``: transformers' chat-template renderer with pawlette's exported template;
- ``real``: transformers' renderer with the model's own template (Qwen3, Llama 3.1) from
  llama.cpp's ``models/templates`` in the pinned llama-cpp-python sdist (the test cache).

Usage, from the repository root: python -m bench.declared
"""

from __future__ import annotations

import json
import os
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pawlette
from pawlette.demo import WEATHER_TOOL
from pawlette.export import export_jinja

SDIST = "llama_cpp_python-0.3.36.tar.gz"
ROOT = "llama_cpp_python-0.3.36/vendor/llama.cpp/models/templates/"
REAL = {"chatml": "Qwen-Qwen3-0.6B.jinja", "llama3": "meta-llama-Llama-3.1-8B-Instruct.jinja"}
CALL = {
    "id": "call_0",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"location": "Beijing", "unit": "celsius"}'},
}
CONVERSATION: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are a helpful assistant with access to weather tools."},
        {"role": "user", "content": "What's the weather in Beijing?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_0", "content": "25°C, Sunny"},
        {"role": "assistant", "content": "It is 25 degrees Celsius and sunny in Beijing."},
        {"role": "user", "content": "Thanks! And tomorrow?"},
    ],
    "tools": [WEATHER_TOOL],
}


def cache_directory() -> Path:
    configured = os.environ.get("PAWLETTE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "pawlette"


def real_template(file_name: str) -> str | None:
    sdist = cache_directory() / "llama_cpp_jinja" / SDIST
    if not sdist.is_file():
        return None  # run the test suite once: it downloads and checks the sdist
    with tarfile.open(sdist) as archive:
        member = archive.extractfile(ROOT + file_name)
        return None if member is None else member.read().decode("utf-8")


def hugging_face(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result = []
    for message in messages:
        if message.get("tool_calls"):
            calls = [
                {
                    **c,
                    "function": {
                        **c["function"],
                        "arguments": json.loads(c["function"]["arguments"]),
                    },
                }
                for c in message["tool_calls"]
            ]
            message = {**message, "tool_calls": calls}
        result.append(message)
    return result


def main() -> int:
    from bench.parse import render_rates

    try:
        from transformers.utils.chat_template_utils import render_jinja_template
    except ImportError:
        print("transformers is not installed: only pawlette's rate is measured", file=sys.stderr)
        render_jinja_template = None
    print("load average at start: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    print(f"{'format':8} {'pawlette':>10} {'exported':>10} {'real':>10} {'pawlette/real':>14}")
    for name in ("chatml", "llama3"):
        fmt = pawlette.get_format(name)
        sides: dict[str, Callable[[], object]] = {
            "pawlette": lambda fmt=fmt: fmt.render(CONVERSATION, add_generation_prompt=True)
        }
        if render_jinja_template is not None:
            messages = hugging_face(CONVERSATION["messages"])
            variables = {"date_string": "26 Jul 2024", "bos_token": "<|begin_of_text|>"}
            for label, template in (
                ("exported", export_jinja(fmt)),
                ("real", real_template(REAL[name])),
            ):
                if template is None:
                    continue
                expected = fmt.render(CONVERSATION, add_generation_prompt=True).text

                def run(
                    template: str = template,
                    messages: list[dict[str, Any]] = messages,
                    variables: dict[str, str] = variables,
                ) -> str:
                    rendered, _ = render_jinja_template(
                        conversations=[messages],
                        tools=CONVERSATION["tools"],
                        chat_template=template,
                        add_generation_prompt=True,
                        **variables,
                    )
                    return rendered[0]

                text = run()
                if label == "exported":
                    assert text == expected, "the exported template differs from render"
                elif name == "chatml":
                    assert text == expected, "the real template differs from render"
                sides[label] = run
        rates = render_rates(sides)
        ours, real = rates["pawlette"], rates.get("real")
        ratio = f"{ours / real:13.1f}x" if real else f"{'-':>14}"
        columns = [
            f"{rates[label]:10.0f}" if label in rates else f"{'-':>10}"
            for label in ("exported", "real")
        ]
        print(f"{name:8} {ours:10.0f} {columns[0]} {columns[1]} {ratio}")
    print("(conversations rendered per CPU second of this process, best of 5 windows of 0.2 s,")
    print(" the sides taking turns)")
    print("load average at end: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    return 0


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="render-real-templates",
        title="Render speed against the real templates",
        what=(
            "Conversations rendered per CPU second by pawlette's declared formats (chatml, "
            "llama3) against transformers rendering the real Qwen3 and Llama 3.1 templates "
            "and pawlette's exported template: a six-message conversation with one call and "
            "its result, with the generation prompt, OpenAI dicts in; the best of five "
            "0.2-second windows, the sides taking turns."
        ),
        peer=(
            "transformers (`render_jinja_template`, the `bench` extra's version) on the real"
            " templates and on pawlette's exported ones"
        ),
    )
    sys.exit(pages.run(main, PAGE))
