"""Whole-turn parse speed against transformers, and the parser's throughput.  Not a test.

The headline is the like-for-like comparison: ``Format.parse`` against transformers'
``parse_response`` with the format's response template compiled once
(``load_response_template``, as a server holds it), on the completion alone, on whole turns of
six shapes (a short call, prose, a 2.5 KB turn, parallel calls, 200 nested objects, an 80 KB
string) in PCML, chatml and the declared families' formats of ``bench.peers.FAMILY_FORMATS``
(against transformers' own template where it ships one: chatml's, Qwen 3.5's and Gemma 4's;
hermes against chatml's; the others pawlette alone), in thread CPU and wall time with the
sides interleaved, each side about 50 ms of calls a round (a peer 30 times slower does not
make a round 30 times longer); then, with the peers (``bench/peers.py``; ``--no-peers`` to
skip them):

- the fixed cost of a completion per format;
- per-token parsing from ids against openai-harmony's Rust ``StreamableParser`` called
  directly (the ``bench`` extra);
- the peak memory of streaming one tool call through each (the resident set's growth after
  ``malloc_trim``, and for pawlette also tracemalloc's peak; ``bench/stream_memory.py``,
  every feed but one character at a time, which the stream-memory page has);

and pawlette alone: streaming a completion with long tool-call arguments in 1- and
4-character chunks, and the same at twice the size (linear cost: the time should about
double), and the whole-text parse speed in MB/s, in CPU time.  Each table comes with its facts
(date, commit, load average, the peer's version): ``bench.tables.Table``.

The render rows (every format against transformers' chat-template renderer with the format's
exported Jinja template, and for PCML a plain f-string floor) are their own page:
``--render-only``; ``--render`` adds them here.

Usage, from the repository root: python -m bench.parse [--format pcml] [--megabytes 0.5]
    [--no-peers] [--rounds 7] [--call-megabytes 1] [--render | --render-only]
(``-m`` keeps ``bench/`` off ``sys.path``: ``bench/tokenize.py`` would shadow the standard
library's ``tokenize``.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import pawlette
from pawlette.demo import WEATHER

# The demo's weather conversation (seed 001) plus a follow-up question: six messages, one tool.
CONVERSATION: dict[str, Any] = {
    "messages": [*WEATHER["messages"], {"role": "user", "content": "Thanks! And tomorrow?"}],
    "tools": WEATHER["tools"],
}
# What each format cannot express, left out of its copy of the conversation (still six messages).
UNSUPPORTED_FIELDS = {
    "omni": ("name",),
    "chatglm3": ("reasoning_content",),
    "breeze": ("name", "reasoning_content"),
    "chatml": ("name",),
    "llama3": ("name", "reasoning_content"),
}


def conversation_for(name: str) -> dict[str, Any]:
    """The conversation without the message fields format ``name`` has no place for."""
    dropped = UNSUPPORTED_FIELDS.get(name, ())
    messages = [
        {key: value for key, value in message.items() if key not in dropped}
        for message in CONVERSATION["messages"]
    ]
    return {"messages": messages, "tools": CONVERSATION["tools"]}


def big_completion(fmt: pawlette.Format, size: int) -> str:
    """A completion of about ``size`` characters: reasoning, text and long-argument calls, in
    the first of these shapes the format can write (each later one leaves out what a format
    refuses: reasoning, then text beside calls, then parallel calls, the arguments then held
    by one call)."""
    payloads: list[dict[str, Any]] = []
    while len(json.dumps(payloads)) < size + 1:
        payloads.append(
            {
                "text": ('lorem ipsum dolor sit amet, 東京 "quoted" \\ ' * 500)[:20_000],
                "numbers": list(range(200)),
                "nested": {"a": [1, 2, {"b": None}]},
            }
        )
    # Nine letters and digits: the strictest call id a declared family asks for (mistral's).
    parallel = [_store_call(f"call{index:05d}", payload) for index, payload in enumerate(payloads)]
    single = [_store_call("call00000", {"items": payloads})]
    shapes = [
        {"content": "Storing.", "reasoning_content": "ok", "tool_calls": parallel},
        {"content": "Storing.", "tool_calls": parallel},
        {"tool_calls": parallel},
        {"tool_calls": single},
        # A format with no calls (it declares them not written): the same size of text.
        {"content": json.dumps(payloads)},
    ]
    prompt = fmt.render([{"role": "user", "content": "go"}], add_generation_prompt=True).text
    refusals = []
    for shape in shapes:
        message = {"role": "assistant", **shape}
        try:
            full = fmt.render([{"role": "user", "content": "go"}, message]).text
        except pawlette.RequestError as error:
            refusals.append(str(error))
            continue
        if len(full) - len(prompt) >= size // 2:  # calls written, not declared unwritten
            return full[len(prompt) :]
        refusals.append(f"{sorted(shape)} written in {len(full) - len(prompt)} characters")
    raise SystemExit(f"{fmt.name} writes none of the completion's shapes: {refusals}")


def _store_call(identifier: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": identifier,
        "type": "function",
        "function": {"name": "store", "arguments": json.dumps(arguments)},
    }


def stream(fmt: pawlette.Format, text: str, piece: int) -> float:
    """CPU seconds to stream ``text`` in pieces of ``piece`` characters."""
    parser = fmt.parser()
    start = time.process_time()
    for position in range(0, len(text), piece):
        parser.feed(text[position : position + piece])
    parser.finish()
    return time.process_time() - start


def best(function: Callable[[], float], repeat: int = 3) -> float:
    return min(function() for _ in range(repeat))


def render_rates(
    functions: dict[str, Callable[[], object]], seconds: float = 0.2, rounds: int = 5
) -> dict[str, float]:
    """Calls per CPU second of each function: the best of ``rounds`` windows of ``seconds``.

    The sides take turns (one window of each per round), so a slow spell on the shared
    machine falls on all of them; CPU time of this process is what is counted, and other work
    only ever slows a window down, so the best window is the steadiest measure (as ``timeit``
    takes the minimum).  Every row is measured the same way.
    """
    best = dict.fromkeys(functions, 0.0)
    for _ in range(rounds):
        for label, function in functions.items():
            count = 0
            start = time.process_time()
            while True:
                for _ in range(50):
                    function()
                count += 50
                elapsed = time.process_time() - start
                if elapsed >= seconds:
                    best[label] = max(best[label], count / elapsed)
                    break
    return best


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
    options.add_argument("--megabytes", type=float, default=0.5)
    options.add_argument("--no-peers", dest="peers", action="store_false")
    options.add_argument("--rounds", type=int, default=7, help="rounds of the peer comparisons")
    options.add_argument("--call-megabytes", type=float, default=1.0)
    options.add_argument("--render", action="store_true", help="the render rows too")
    options.add_argument("--render-only", action="store_true", help="only the render rows")
    arguments = options.parse_args()
    print("load average at start: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    if arguments.render_only:
        _render_rows()
        print("load average at end: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
        return 0
    if arguments.peers:
        from bench import peers

        print()
        whole = peers.whole_turns(
            formats=("pcml", "chatml", *peers.FAMILY_FORMATS), rounds=arguments.rounds
        )
        print(headline(whole.rows))
        print()
        print(whole.text())
        print()
        print(peers.fixed_cost(arguments.rounds).text())
        print()
    _throughput(pawlette.get_format(arguments.format), int(arguments.megabytes * 1_000_000))
    if arguments.render:
        print()
        _render_rows()
    if arguments.peers:
        peers.per_token(arguments.rounds)
        _peak_memory(arguments.call_megabytes)
    print("load average at end: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    return 0


def _peak_memory(megabytes: float) -> None:
    """Peak memory streaming one call (``bench.stream_memory``), every format and feed but
    one character at a time: it holds what 16 characters at a time hold (the stream-memory
    page has both) and takes most of that table's time."""
    from bench import stream_memory

    print()
    feeds = [feed for feed in stream_memory.FEEDS if feed != "1"]
    stream_memory.table(list(stream_memory.FORMATS), feeds, megabytes, harmony=True)


def headline(rows: list[list[str]]) -> str:
    """The like-for-like figure in a line: pawlette's CPU time over transformers' per whole
    turn, its range over the rows with a peer, and per format."""
    ratios: dict[str, list[float]] = {}
    for row in rows:
        cell = row[5].strip("*x")
        if cell:
            ratios.setdefault(row[0], []).append(float(cell))
    if not ratios:
        return "headline: no transformers side (transformers is not installed)"
    every = [ratio for values in ratios.values() for ratio in values]
    within = sum(ratio <= 0.5 for ratio in every)
    per_format = "; ".join(
        f"{name} {min(values):.2f}-{max(values):.2f}x" for name, values in ratios.items()
    )
    return (
        "headline, like for like (transformers' parse_response, its response template "
        "compiled once, on the same completion): pawlette takes "
        f"{min(every):.2f}-{max(every):.2f}x transformers' CPU time per whole turn "
        f"({per_format}); at most 0.5x in {within} of {len(every)} rows"
    )


def _throughput(fmt: pawlette.Format, size: int) -> None:
    """Streaming in 1- and 4-character chunks (at ``size`` and twice it) and the whole-text
    parse, pawlette alone, best of two runs each (CPU time)."""
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
    print(f"pawlette {pawlette.__version__}, format {fmt.name}, completion {len(one):,} chars")
    print("(streaming and whole-text parse rates in CPU time of this process, best of 2)")
    print(f"{'measure':28} {'result':>22}  note")
    for label, _, result, note in rows:
        print(f"{label:28} {result:>22}  {note}")


def _render_rows() -> None:
    print("render, 6 messages + 1 tool, OpenAI dicts in (each format's copy of the conversation")
    print("leaves out the fields it cannot express); conversations per CPU second, best of 5")
    print("0.2-second windows, the sides taking turns:")
    print(f"{'format':28} {'ours':>10} {'transformers':>13} {'ours/transformers':>18}")
    for name in pawlette.formats():
        _render_row(name)


def _render_row(name: str) -> None:
    fmt = pawlette.get_format(name)
    conversation = conversation_for(name)
    try:
        fmt.render(conversation, add_generation_prompt=True)
    except pawlette.RequestError as error:  # a layout that refuses the conversation's shape
        print(f"{name:28} (cannot write this conversation: {error})")
        return
    sides: dict[str, Callable[[], object]] = {
        "ours": lambda: fmt.render(conversation, add_generation_prompt=True)
    }
    peer = _transformers_render(fmt, conversation)
    if peer is not None:
        sides["transformers"] = peer
    if name == "pcml":
        # Like for like: the floor writes pawlette's text, byte for byte (it skips only the
        # validation, the segments and the escaping scan).
        written = fmt.render(conversation, add_generation_prompt=True).text
        assert plain_pcml(conversation) == written, "the f-string floor differs from pcml"
        sides["floor"] = lambda: plain_pcml(conversation)
        sides["new tools"] = _with_new_tools(fmt, conversation)
    rates = render_rates(sides)
    ours = rates["ours"]
    versus = (
        ""
        if peer is None
        else f"{rates['transformers']:>13,.0f} {ours / rates['transformers']:>17.2f}x"
    )
    print(f"{name:28} {ours:>10,.0f} {versus}")
    if name == "pcml":
        floor = rates["floor"]
        label = "  plain f-string floor"
        print(f"{label:28} {floor:>10,.0f}   (ours/floor = {ours / floor:.2f})")
        fresh = rates["new tools"]
        label = "  ours, tools new each time"
        print(f"{label:28} {fresh:>10,.0f}   (its/floor = {fresh / floor:.2f})")


def _with_new_tools(fmt: pawlette.Format, conversation: dict[str, Any]) -> Callable[[], object]:
    """A render whose tools were not rendered before: PCML keeps the tools block of tools it
    checked (a server gets the same tools each request), so this is the first request's cost.
    The tools differ in their description (1,000 lists, more than are kept), taken in turn."""
    variants = []
    for number in range(1000):
        tool = json.loads(json.dumps(conversation["tools"][0]))
        tool["function"]["description"] += f" ({number})"
        variants.append({"messages": conversation["messages"], "tools": [tool]})
    turn = iter(range(1 << 62))

    def render() -> object:
        return fmt.render(variants[next(turn) % 1000], add_generation_prompt=True)

    return render


def _timed(function: Callable[[], object]) -> float:
    """CPU seconds of one call (the machine may be shared: see the module docstring)."""
    start = time.process_time()
    function()
    return time.process_time() - start


def _transformers_render(
    fmt: pawlette.Format, conversation: dict[str, Any]
) -> Callable[[], object] | None:
    """transformers' chat-template renderer with pawlette's exported template, if both exist.

    Call arguments go in as JSON text, as OpenAI sends them, or, for templates that cannot read
    JSON text in Jinja (those that write calls as Python), as objects (Hugging Face's form).
    """
    try:
        from transformers.utils.chat_template_utils import render_jinja_template

        from pawlette.export.jinja import export_jinja
    except ImportError:
        return None
    template = export_jinja(fmt.name)
    failures = []
    for messages in (conversation["messages"], _arguments_as_objects(conversation["messages"])):

        def run(messages: list[dict[str, Any]] = messages) -> object:
            return render_jinja_template(
                conversations=[messages],
                tools=conversation["tools"],
                chat_template=template,
                add_generation_prompt=True,
            )

        try:
            run()
        except Exception as error:  # a peer failure is reported, not fatal to the benchmark
            failures.append(str(error))
            continue
        return run
    print(f"transformers template failed ({fmt.name}): {failures[-1]}", file=sys.stderr)
    return None


def _arguments_as_objects(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result = []
    for message in messages:
        if message.get("tool_calls"):
            calls = [
                {
                    **call,
                    "function": {
                        **call["function"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    },
                }
                for call in message["tool_calls"]
            ]
            message = {**message, "tool_calls": calls}
        result.append(message)
    return result


if __name__ == "__main__":
    from bench import pages

    def page(arguments: Sequence[str]) -> pages.Page:
        if "--render-only" in arguments:
            return pages.Page(
                measure="render-speed",
                title="Render speed",
                what=(
                    "A six-message conversation with one tool (the demo's weather conversation "
                    "and a follow-up; each format's copy leaves out what it cannot express), "
                    "OpenAI dicts in, validated, with segments, in every format, against "
                    "transformers rendering the format's exported template, and for pcml "
                    "against a bare f-string renderer of the same text (no validation, "
                    "segments or escaping: the floor). Conversations per CPU second of the "
                    "process, the best of five 0.2-second windows, the sides taking turns. "
                    "The second pcml row renders with tools new each time (a first request). "
                    "The floor writes pcml's text byte for byte (checked before timing); "
                    "every format renders through its declaration's compiled renderer "
                    "(the skeleton of the generic writer specialised once per format)."
                ),
                peer="transformers (`render_jinja_template`, the `bench` extra's version)",
            )
        return pages.Page(
            measure="parse-speed",
            title="Parse speed",
            what=(
                "The headline is like for like: `Format.parse` against transformers' "
                "`parse_response` with the format's response template compiled once "
                "(`load_response_template`, as a server holds it), on the same completion "
                "alone, on whole turns of six shapes in pcml, chatml and the declared "
                "families' llama3, hermes, glm, chatml:qwen3.5, gemma4, seed_oss and "
                "minimax_m2 (chatml, chatml:qwen3.5 and gemma4 against the response "
                "template transformers ships for their models, hermes against chatml's, "
                "which reads its calls; transformers' Qwen 3.5 template keeps parameters as "
                "text where pawlette types them; llama3, glm, seed_oss and minimax_m2 have "
                "no transformers template: pawlette's time alone). Thread CPU time per "
                "call, best and median "
                "of 7 rounds with the sides taking turns, each side about 50 ms of calls a "
                "round. Then the fixed cost of a completion (5,000 calls a round), "
                "streaming a 0.5 MB completion with long call arguments in 1- and "
                "4-character pieces and the whole-text parse (best of 2), openai-harmony "
                "per token, and the peak memory of streaming a 1 MB call 16 characters at a "
                "time and more (the [stream memory](stream-memory.md) page streams 4 MB, one "
                "character at a time too, which holds what 16 do). The render rows are on "
                "[Render speed](render-speed.md)."
            ),
            peer=(
                "transformers `parse_response` (template compiled once); "
                "openai-harmony `StreamableParser`"
            ),
        )

    sys.exit(pages.run(main, page))
