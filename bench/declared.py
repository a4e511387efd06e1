"""Render speed of every declared family against its real chat template.

For each declared family whose template is in llama.cpp's corpus (``tests/support/
template_corpus.py``; the family's own format, or its first variant that has a template
there: ``tests/formats/families``), two conversations, OpenAI dicts in, with the generation
prompt:

- 6 messages: a system prompt, a question, a call to the weather tool, its result, an answer
  and a follow-up question;
- 26 messages: the system prompt, six rounds of a question, a call, its result and an answer,
  then a question.

A family whose template has no tools or system turn (Gemma 2) gets as many messages of user
and assistant turns in alternation, without tools.  Each is rendered by:

- ``pawlette``: :meth:`pawlette.Format.render` (validated, segments with roles and
  trainability);
- ``minijinja`` (a Rust Jinja engine): the real template added to an environment once, with
  transformers' settings (trim_blocks, lstrip_blocks, Python methods on values,
  ``raise_exception``, ``strftime_now`` on the test's fixed date), and ``render_template``
  per conversation, as a server holds it.  A template that needs ``tojson``'s keyword
  arguments (``ensure_ascii``, GLM's) gets a ``tojson`` filter in Python, as its users would
  have to add; a template minijinja cannot run is said so;
- ``transformers`` (``render_jinja_template``; its template cache compiles each template once).

Every side starts from the same OpenAI dicts, as an application holds them.  The peers'
templates want the messages as Hugging Face callers pass them (call arguments as objects,
``None`` values dropped; ``tests/support/template_compare.py``), so each peer's time
includes that conversion, the job its user has to do before calling it (transformers does not
do it either); they get the variables ``apply_chat_template`` passes (the model's
``bos_token``/``eos_token``, the family's template variables).  minijinja is also timed on
messages converted before timing (``minijinja, converted``): the template's work alone, the
figure most favourable to the peer.  Times are thread CPU per conversation, best and median
of the rounds, the sides interleaved; each row says whether each peer's text is pawlette's,
byte for byte.  The
chatml and llama3 rows are repeated with call arguments and tool descriptions new in each
render (1,000 conversations, more than pawlette keeps: a first request's cost).  The other
rows render one conversation again and again: pawlette's kept messages and whole turns
(``pawlette.openai``, ``pawlette.compile``) serve it, as they serve a conversation's earlier
messages in a server's next request.

Usage, from the repository root: python -m bench.declared [--rounds 7] [--only chatml,llama3]
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import pawlette
from pawlette.demo import WEATHER_TOOL
from tests.support.template_compare import hugging_face_messages

CALL_ID = "call{:05d}"
"""Call ids of nine letters and digits (Mistral's templates require that shape)."""
FRESH = ("chatml", "llama3")
"""The families also measured with new arguments and tools in each render."""


def _call(number: int, city: str) -> dict[str, Any]:
    return {
        "id": CALL_ID.format(number),
        "type": "function",
        "function": {
            "name": "get_weather",
            "arguments": json.dumps({"location": city, "unit": "celsius"}),
        },
    }


SYSTEM = {"role": "system", "content": "You are a helpful assistant with access to weather tools."}
CONVERSATION: dict[str, Any] = {
    "messages": [
        SYSTEM,
        {"role": "user", "content": "What's the weather in Beijing?"},
        {"role": "assistant", "content": "", "tool_calls": [_call(0, "Beijing")]},
        {"role": "tool", "tool_call_id": CALL_ID.format(0), "content": "25°C, Sunny"},
        {"role": "assistant", "content": "It is 25 degrees Celsius and sunny in Beijing."},
        {"role": "user", "content": "Thanks! And tomorrow?"},
    ],
    "tools": [WEATHER_TOOL],
}
CITIES = ("Beijing", "Paris", "Lima", "Oslo", "Cairo", "Perth", "Quito", "Hanoi")


def long_conversation(rounds: int = 6) -> dict[str, Any]:
    """A system message, ``rounds`` rounds of a question, a call, its result and an answer,
    then a question: 2 + 4 * rounds messages (26 for six rounds)."""
    messages: list[dict[str, Any]] = [SYSTEM]
    for number in range(rounds):
        city = CITIES[number % len(CITIES)]
        messages += [
            {"role": "user", "content": f"What's the weather in {city}?"},
            {"role": "assistant", "content": "", "tool_calls": [_call(number, city)]},
            {"role": "tool", "tool_call_id": CALL_ID.format(number), "content": f"{20 + number}°C"},
            {"role": "assistant", "content": f"It is {20 + number} degrees in {city}."},
        ]
    messages.append({"role": "user", "content": "Thanks! And tomorrow?"})
    return {"messages": messages, "tools": CONVERSATION["tools"]}


def alternating_conversation(count: int) -> dict[str, Any]:
    """``count`` messages of questions and answers in turn, from a question, without tools."""
    messages = []
    for number in range(count):
        city = CITIES[number // 2 % len(CITIES)]
        if number % 2 == 0:
            messages.append({"role": "user", "content": f"What is {city} known for?"})
        else:
            messages.append({"role": "assistant", "content": f"{city} is known for its food."})
    return {"messages": messages}


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


def template_messages(
    messages: list[dict[str, Any]], *, empty_content: bool, text_arguments: bool
) -> list[dict[str, Any]]:
    """OpenAI messages as a caller of a real template converts them, doing no more than it
    must: what ``tests.support.template_compare.hugging_face_messages`` makes (call
    arguments parsed, ``None`` values dropped, Qwen3's empty content), a message copied only
    when something in it changes."""
    made = []
    for message in messages:
        calls = message.get("tool_calls")
        if (
            calls
            or None in message.values()
            or (empty_content and message["role"] == "assistant" and "content" not in message)
        ):
            message = hugging_face_messages(
                [message], empty_content=empty_content, text_arguments=text_arguments
            )[0]
        made.append(message)
    return made


def cycling(function: Callable[[Any], object], inputs: list[Any]) -> Callable[[], object]:
    """``function`` of each input in turn, one per call."""
    turn = iter(range(1 << 62))
    size = len(inputs)

    def call() -> object:
        return function(inputs[next(turn) % size])

    return call


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """transformers' ``tojson`` filter (its chat templates' keyword arguments)."""
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def minijinja_renderer(template: str, today: datetime.date, python_tojson: bool) -> Any:
    """``render(**variables)`` of ``template`` compiled once in minijinja, with
    transformers' Jinja settings (see the module)."""
    import minijinja

    environment = minijinja.Environment(pycompat=True)
    environment.trim_blocks = True
    environment.lstrip_blocks = True

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    moment = datetime.datetime.combine(today, datetime.time())
    environment.add_global("raise_exception", raise_exception)
    environment.add_global("strftime_now", moment.strftime)
    if python_tojson:
        environment.add_filter("tojson", _tojson)
    environment.add_template("chat", template)

    def render(**variables: Any) -> str:
        return str(environment.render_template("chat", **variables))

    return render


def family_cases() -> dict[str, Any]:
    """Each declared family's case (``tests/formats/families``): its own format's, else the
    first variant's."""
    from tests.formats.test_families import CASES

    found: dict[str, Any] = {}
    for case in CASES:
        family = case.format.split(":")[0]
        if family not in found or case.format == family:
            found[family] = case
    return found


def render_table(rounds: int = 7, only: tuple[str, ...] = ()) -> Any:
    """pawlette against the real templates in minijinja and transformers (see the module)."""
    from bench.peers import interleaved
    from bench.tables import Table, load_average, machine_facts, version_of
    from tests.formats.test_families import _reference

    table = Table(
        "Render: pawlette against the real template (minijinja, transformers)",
        [
            "format (template)",
            "messages",
            "pawlette µs",
            "minijinja µs",
            "pawlette/minijinja",
            "minijinja, converted µs",
            "pawlette/minijinja, converted",
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
    from transformers.utils.chat_template_utils import render_jinja_template

    for family, case in family_cases().items():
        if only and family not in only:
            continue
        fmt = pawlette.get_format(case.format)
        reference = _reference(case)
        variables = reference.template_variables()
        expresses_tools = case.switches.get("tools", True)
        conversations = (
            [("", [CONVERSATION]), ("", [long_conversation()])]
            if expresses_tools
            else [("", [alternating_conversation(6)]), ("", [alternating_conversation(26)])]
        )
        if family in FRESH:
            label = ", new arguments and tools each render"
            conversations.append((label, fresh_conversations(long_conversation())))
        for label, given in conversations:
            count = len(given[0]["messages"])

            def converted(
                conversation: dict[str, Any],
                reference: Any = reference,
                variables: dict[str, Any] = variables,
            ) -> tuple[list[dict[str, Any]], Any, dict[str, Any]]:
                """The peers' input: ``conversation`` as Hugging Face callers pass it."""
                tools = conversation.get("tools")
                extra = dict(variables)
                if reference.caller_variables is not None:
                    extra = {**reference.caller_variables(tools, reference.today), **extra}
                messages = template_messages(
                    conversation["messages"],
                    empty_content=reference.empty_content,
                    text_arguments=reference.text_arguments,
                )
                if reference.caller_messages is not None:  # (IFM's thinking field)
                    messages = reference.caller_messages(messages, reference.variables)
                return messages, tools, extra

            made_before = [converted(conversation) for conversation in given]
            ours = fmt.render(given[0], add_generation_prompt=True).text
            sides: dict[str, Callable[[], object]] = {
                "pawlette": cycling(
                    lambda conversation, fmt=fmt: fmt.render(
                        conversation, add_generation_prompt=True
                    ),
                    given,
                )
            }
            same = []
            minijinja_note = ""
            for python_tojson in (False, True):
                try:
                    compiled = minijinja_renderer(
                        reference.template, reference.today, python_tojson
                    )
                except Exception as error:  # the peer cannot compile this template: said so
                    minijinja_note = f"minijinja fails ({str(error).splitlines()[0]})"
                    break

                def mini(
                    arguments: tuple[list[dict[str, Any]], Any, dict[str, Any]],
                    compiled: Callable[..., str] = compiled,
                ) -> str:
                    messages, tools, extra = arguments
                    return compiled(
                        messages=messages, tools=tools, add_generation_prompt=True, **extra
                    )

                try:
                    text = mini(made_before[0])
                except Exception as error:  # the peer cannot run this template: said so
                    minijinja_note = f"minijinja fails ({str(error).splitlines()[0]})"
                    continue
                sides["minijinja"] = cycling(
                    lambda conversation, mini=mini: mini(converted(conversation)), given
                )
                sides["minijinja, converted"] = cycling(mini, made_before)
                tojson = " (tojson in Python)" if python_tojson else ""
                same.append(f"minijinja{tojson} {'yes' if text == ours else 'no'}")
                minijinja_note = ""
                break
            if minijinja_note:
                same.append(minijinja_note)

            def hugging(conversation: dict[str, Any], template: str = reference.template) -> str:
                messages, tools, extra = converted(conversation)
                rendered, _ = render_jinja_template(
                    conversations=[messages],
                    tools=tools,
                    chat_template=template,
                    add_generation_prompt=True,
                    **extra,
                )
                return str(rendered[0])

            # transformers' strftime_now reads the clock: its text is compared through the
            # test's reference, whose clock reads the fixed date.
            text = reference.render(
                given[0]["messages"], given[0].get("tools"), add_generation_prompt=True
            ).text
            sides["transformers"] = cycling(hugging, given)
            same.append(f"transformers {'yes' if text == ours else 'no'}")
            calls = max(20, 3000 // count)
            results = interleaved(sides, calls, rounds, clock=time.thread_time)
            best, median, _ = results["pawlette"]
            row = [
                f"{case.format} ({case.template})",
                f"{count}{label}",
                f"{best * 1e6:.1f} ({median * 1e6:.1f})",
            ]
            for peer in ("minijinja", "minijinja, converted", "transformers"):
                if peer in results:
                    peer_best, peer_median, _ = results[peer]
                    row += [
                        f"{peer_best * 1e6:.1f} ({peer_median * 1e6:.1f})",
                        f"**{best / peer_best:.2f}x** ({median / peer_median:.2f}x)",
                    ]
                else:
                    row += ["-", "-"]
            row.append(", ".join(same))
            table.rows.append(row)
            print(" | ".join(row), file=sys.stderr, flush=True)
    table.notes.append(
        "pawlette/peer below 1 is pawlette faster. Every side starts from the same OpenAI "
        "dicts (call arguments as JSON text): the peers' times include converting them into "
        "the form their templates read (arguments parsed into objects, as transformers "
        "leaves to its callers), pawlette's its reading and checking of the same dicts. "
        "`minijinja, converted` is minijinja given messages converted before timing: the "
        "template's work alone, the figure most favourable to the peer. A peer's text that is "
        "not pawlette's is said so (\"no\"): minijinja's `tojson` escapes differently from "
        "Jinja2's where a template pipes a tool through it without `safe` (Functionary v3.1)."
    )
    table.facts["load average at end"] = load_average()
    return table


def main() -> int:
    import argparse

    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rounds", type=int, default=7)
    options.add_argument("--only", default="", help="families, comma-separated")
    arguments = options.parse_args()
    only = tuple(name for name in arguments.only.split(",") if name)
    table = render_table(arguments.rounds, only)
    print(table.title)
    for name, value in table.facts.items():
        print(f"- {name}: {value}")
    print()
    print(table.markdown())
    return 0


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="render-real-templates",
        title="Render speed against the real templates",
        what=(
            "Every declared family whose real chat template is in llama.cpp's corpus, on a "
            "6- and a 26-message conversation with calls and their results (Gemma 2: "
            "questions and answers in turn, no tools), OpenAI dicts in, with the generation "
            "prompt: pawlette's render (validated, with segments) against the real template "
            "compiled once in minijinja (Rust) and in transformers, in thread CPU time per "
            "conversation, best and median of the rounds, the sides interleaved; each row "
            "says whether each peer wrote pawlette's text byte for byte. Each row renders the "
            "same conversation every time, as a server meets a conversation's earlier "
            "messages again in its next request: pawlette keeps the messages it has read and "
            "the turns it has written for them (a peer compiles its template once and keeps "
            "nothing else). The rows with new arguments and tools in each render (calls and "
            "tools not met before) are a first request's cost."
        ),
        peer=(
            "minijinja (`Environment.render_template`) and transformers "
            "(`render_jinja_template`) on the real templates, the `bench` extra's versions"
        ),
    )
    sys.exit(pages.run(main, PAGE))
