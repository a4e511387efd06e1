"""Render speed of the declared formats (chatml, llama3) against the real templates.

For each format, one conversation with a tool (system, user, a call, its result, an answer,
a follow-up question; a generation prompt), OpenAI dicts in, rendered by:

- ``pawlette``: :meth:`pawlette.Format.render` (segments with roles and trainability);
- ``exported``: transformers' chat-template renderer with pawlette's exported template;
- ``real``: transformers' renderer with the model's own template (Qwen3, Llama 3.1) from
  llama.cpp's ``models/templates`` in the pinned llama-cpp-python sdist (the test cache).

Then the side-by-side table (:func:`render_table`): the same conversation and a 26-message
one (six rounds of a question, a call, its result and an answer, then a question), rendered
by pawlette and by the real template compiled once in ``minijinja`` (a Rust Jinja engine: the
template added to an environment once, ``render_template`` per conversation, as a server
holds it) and in transformers (its template cache: compiled on the first call), in thread CPU
time, best and median of the rounds, the sides interleaved; whether each peer's text is
pawlette's; the load average and the peers' versions.

Usage, from the repository root: python -m bench.declared [--rounds 7]
"""

from __future__ import annotations

import json
import os
import sys
import tarfile
import time
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


def long_conversation(rounds: int = 6) -> dict[str, Any]:
    """A system message, ``rounds`` rounds of a question, a call, its result and an answer,
    then a question: 2 + 4 * rounds messages (26 for six rounds)."""
    cities = ["Beijing", "Paris", "Lima", "Oslo", "Cairo", "Perth", "Quito", "Hanoi"]
    messages: list[dict[str, Any]] = [CONVERSATION["messages"][0]]
    for number in range(rounds):
        city = cities[number % len(cities)]
        call = {
            "id": f"call_{number}",
            "type": "function",
            "function": {
                "name": "get_weather",
                "arguments": json.dumps({"location": city, "unit": "celsius"}),
            },
        }
        messages += [
            {"role": "user", "content": f"What's the weather in {city}?"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{number}", "content": f"{20 + number}°C"},
            {"role": "assistant", "content": f"It is {20 + number} degrees in {city}."},
        ]
    messages.append({"role": "user", "content": "Thanks! And tomorrow?"})
    return {"messages": messages, "tools": CONVERSATION["tools"]}


def fresh_conversations(conversation: dict[str, Any], count: int = 1000) -> list[dict[str, Any]]:
    """``count`` copies of ``conversation`` whose call arguments and tool description differ
    from copy to copy (more than pawlette keeps: every render writes them anew)."""
    made = []
    for number in range(count):
        copy = json.loads(json.dumps(conversation))
        for message in copy["messages"]:
            for call in message.get("tool_calls", ()):
                arguments = json.loads(call["function"]["arguments"])
                arguments["unit"] = f"celsius {number}"
                call["function"]["arguments"] = json.dumps(arguments)
        copy["tools"][0]["function"]["description"] += f" ({number})"
        made.append(copy)
    return made


def cycling(function: Callable[[Any], object], inputs: list[Any]) -> Callable[[], object]:
    """``function`` of each input in turn, one per call."""
    turn = iter(range(1 << 62))
    size = len(inputs)

    def call() -> object:
        return function(inputs[next(turn) % size])

    return call


def _minijinja(template: str) -> Callable[..., str] | None:
    """``render(**variables)`` of ``template`` compiled once in minijinja (None: not
    installed), with transformers' Jinja settings (trim_blocks, lstrip_blocks, Python
    methods on values, ``raise_exception``)."""
    try:
        import minijinja
    except ImportError:
        return None
    environment = minijinja.Environment(pycompat=True)
    environment.trim_blocks = True
    environment.lstrip_blocks = True

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    environment.add_global("raise_exception", raise_exception)
    environment.add_template("chat", template)

    def render(**variables: Any) -> str:
        return str(environment.render_template("chat", **variables))

    return render


def render_table(rounds: int = 7) -> Any:
    """pawlette against the real templates in minijinja and transformers (see the module)."""
    from bench.peers import interleaved
    from bench.tables import Table, load_average, machine_facts, version_of

    table = Table(
        "Render: pawlette against the real template (minijinja, transformers)",
        [
            "format",
            "messages",
            "pawlette µs",
            "minijinja µs",
            "pawlette/minijinja",
            "transformers µs",
            "pawlette/transformers",
            "same text",
        ],
    )
    table.facts.update(machine_facts())
    table.facts["load average at start"] = load_average()
    table.facts["peers"] = (
        f"minijinja {version_of('minijinja')}, transformers {version_of('transformers')}"
    )
    table.facts["timing"] = (
        f"thread CPU µs per conversation, best (median) of {rounds} rounds, sides interleaved"
    )
    try:
        from transformers.utils.chat_template_utils import render_jinja_template
    except ImportError:
        render_jinja_template = None
    variables = {"date_string": "26 Jul 2024", "bos_token": "<|begin_of_text|>"}
    for name in ("chatml", "llama3"):
        fmt = pawlette.get_format(name)
        template = real_template(REAL[name])
        if template is None:
            table.notes.append(f"{name}: the real template is not in the test cache")
            continue
        compiled = _minijinja(template)
        cases = [
            ("", [CONVERSATION]),
            ("", [long_conversation()]),
            (", new arguments and tools each render", fresh_conversations(long_conversation())),
        ]
        for label, conversations in cases:
            count = len(conversations[0]["messages"])
            peers_input = [
                (hugging_face(conversation["messages"]), conversation["tools"])
                for conversation in conversations
            ]
            ours = fmt.render(conversations[0], add_generation_prompt=True).text
            sides: dict[str, Callable[[], object]] = {
                "pawlette": cycling(
                    lambda conversation, fmt=fmt: fmt.render(
                        conversation, add_generation_prompt=True
                    ),
                    conversations,
                )
            }
            same = []
            if compiled is not None:

                def mini(
                    given: tuple[list[dict[str, Any]], list[dict[str, Any]]],
                    compiled: Callable[..., str] = compiled,
                ) -> str:
                    return compiled(
                        messages=given[0], tools=given[1], add_generation_prompt=True, **variables
                    )

                sides["minijinja"] = cycling(mini, peers_input)
                same.append(f"minijinja {'yes' if mini(peers_input[0]) == ours else 'no'}")
            if render_jinja_template is not None:

                def hugging(
                    given: tuple[list[dict[str, Any]], list[dict[str, Any]]],
                    template: str = template,
                ) -> str:
                    rendered, _ = render_jinja_template(
                        conversations=[given[0]],
                        tools=given[1],
                        chat_template=template,
                        add_generation_prompt=True,
                        **variables,
                    )
                    return str(rendered[0])

                sides["transformers"] = cycling(hugging, peers_input)
                same.append(f"transformers {'yes' if hugging(peers_input[0]) == ours else 'no'}")
            calls = max(20, 6000 // count)
            results = interleaved(sides, calls, rounds, clock=time.thread_time)
            best, median, _ = results["pawlette"]
            row = [name, f"{count}{label}", f"{best * 1e6:.1f} ({median * 1e6:.1f})"]
            for peer in ("minijinja", "transformers"):
                if peer in results:
                    peer_best, peer_median, _ = results[peer]
                    row += [
                        f"{peer_best * 1e6:.1f} ({peer_median * 1e6:.1f})",
                        f"**{best / peer_best:.2f}x** ({median / peer_median:.2f}x)",
                    ]
                else:
                    row += ["-", "-"]
            row.append(", ".join(same) or "-")
            table.rows.append(row)
    table.notes.append(
        "llama3: Meta's template writes a tool result's text as JSON (`\"20°C\"`); pawlette "
        "writes the text (its documented difference): the texts differ there only."
    )
    table.facts["load average at end"] = load_average()
    return table


def main() -> int:
    import argparse

    from bench.parse import render_rates

    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rounds", type=int, default=7)
    arguments = options.parse_args()

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
    print()
    print(render_table(arguments.rounds).text())
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
