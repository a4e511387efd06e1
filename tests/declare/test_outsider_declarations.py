"""Four real chat templates, declared from the documentation alone.

Each declaration in ``tests/declare/outsider/`` was written from ``docs/declaring.md`` and the
``help()`` of the public declaration types, reading the model's chat template and nothing of
pawlette's own declarations: Mistral Small 3.2, DeepSeek V3.1 (both thinking modes), IBM
Granite 4.0 and Gemma 2 (the corpus has no Gemma 3 template).  Against the template, as
llama.cpp's corpus ships it and transformers renders it (clock frozen), each:

- renders ~200 generated conversations (a system message or not, tools or not, calls with
  ids, results, several rounds, reasoning, names, text beside calls, a ``</think>`` in an
  answer, whitespace at the ends, non-ASCII, empty texts) byte for byte as the template does:
  no difference at all, so none to explain; what the template drops the declaration records
  as losses (reasoning, names, Mistral's text beside calls, DeepSeek's tools and the text up
  to a ``</think>``, Gemma's tools and calls), and what the template refuses it refuses too;
- parses back every assistant turn the template writes (within its recorded losses), and
  every call turn it writes itself, calls equal (names, arguments, and ids where written).

The counts asserted are those measured; the conversations are generated here, from fixed
seeds, so they are the same on every run.
"""

from __future__ import annotations

import datetime
import json
import random
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pawlette.errors import RequestError
from pawlette.format import Format

from ..support.template_compare import Reference, compare_renders, corpus_reference, own_turns
from .outsider import deepseek_v3_1, gemma_2, granite_4_0, mistral_small_3_2

COUNT = 200

_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city (°C).",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The time in a zone.",
            "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
        },
    },
]
_QUESTIONS = [
    "Hi",
    "What's the weather in Paris?",
    "Ünïcödé — 日本語 text",
    "Line one\nLine two",
    "  padded text  ",
    "\nleading newline",
    "Markdown: **bold** and `code`",
    "Thanks!",
    "",
]
_ANSWERS = [
    "Hello! How can I help?",
    "It is 18°C in Paris.",
    "Sure.\n\n- one\n- two",
    " spaced answer ",
    "Done.",
    "plan</think>the answer",
    "",
]
_SYSTEMS = ["You are terse.", "Sois bref.\nRéponds en français.", ""]
_RESULTS = ["18°C", '{"temp": 18}', "12:00", " spaced "]
_ID_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _calls(chooser: random.Random, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    calls = []
    for _ in range(chooser.choice([1, 1, 2])):
        name = chooser.choice(tools)["function"]["name"]
        if name == "get_weather":
            arguments: dict[str, Any] = {"city": chooser.choice(["Paris", "Zürich"])}
            if chooser.random() < 0.3:
                arguments["days"] = 3
        else:
            arguments = {"zone": "UTC"}
        # Nine letters and digits: the ids Mistral's template takes (any other is refused).
        identifier = "".join(chooser.choice(_ID_CHARACTERS) for _ in range(9))
        calls.append(
            {
                "id": identifier,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
        )
    return calls


def conversation(
    seed: int, *, system: float = 0.4, tools: float = 0.5, later_system: float = 0.15
) -> dict[str, Any]:
    """One request: a system message (with the chance ``system``), tools (``tools``), one to
    three rounds of a question and its answer (calls and their results first, when there are
    tools), and sometimes a later system message (``later_system``), a user's name or
    reasoning; it may end awaiting the model, after a question or after results."""
    chooser = random.Random(seed)
    messages: list[dict[str, Any]] = []
    if chooser.random() < system:
        messages.append({"role": "system", "content": chooser.choice(_SYSTEMS)})
    given = _TOOLS[: chooser.choice([1, 2])] if chooser.random() < tools else None
    rounds = chooser.choice([1, 1, 2, 3])
    for index in range(rounds):
        if index and chooser.random() < later_system:
            messages.append({"role": "system", "content": "Now answer in English."})
        question: dict[str, Any] = {"role": "user", "content": chooser.choice(_QUESTIONS)}
        if chooser.random() < 0.1:
            question["name"] = "alice"
        messages.append(question)
        last = index == rounds - 1
        if last and chooser.random() < 0.3:
            break
        if given and chooser.random() < 0.6:
            calls = _calls(chooser, given)
            text = chooser.choice(["Let me check.", "Looking it up"])
            turn: dict[str, Any] = {
                "role": "assistant",
                "content": text if chooser.random() < 0.3 else None,
                "tool_calls": calls,
            }
            if chooser.random() < 0.3:
                turn["reasoning_content"] = "I should call the tool."
            messages.append(turn)
            for call in calls:
                result = chooser.choice(_RESULTS)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
            if last and chooser.random() < 0.3:
                break
        answer: dict[str, Any] = {"role": "assistant", "content": chooser.choice(_ANSWERS)}
        if chooser.random() < 0.3:
            answer["reasoning_content"] = "Think about it."
        messages.append(answer)
    return {"messages": messages, **({"tools": given} if given else {})}


CONVERSATIONS = [conversation(seed) for seed in range(COUNT)]
# Gemma 2's template has no system turn and no tools: mostly conversations it renders.
PLAIN = [conversation(seed, system=0.1, tools=0.1, later_system=0.05) for seed in range(COUNT)]


@dataclass(frozen=True)
class Case:
    """A declaration, the template it was declared from, and what was measured."""

    module: ModuleType
    template: str
    identical: int  # renders byte for byte alike (of about 270: a conversation ending on a
    # user or tool message is rendered with the generation prompt and without)
    both_refused: int  # the template raises, and the declaration refuses
    variables: tuple[tuple[str, Any], ...] = ()
    options: tuple[tuple[str, Any], ...] = ()
    own_turns: int = 0  # the template's assistant turns parsed back
    within_losses: int = 0  # of those, once the declaration's recorded losses are taken away
    template_refused_turns: int = 0  # turns of conversations the template refuses
    call_turns: int = 0  # the declaration's own call turns, every call parsed back
    plain: bool = False  # the conversations mostly without system messages and tools

    @property
    def conversations(self) -> list[dict[str, Any]]:
        return PLAIN if self.plain else CONVERSATIONS

    @property
    def format(self) -> Format:
        fmt: Format = self.module.FORMAT
        return fmt.with_options(**dict(self.options)) if self.options else fmt

    def reference(self) -> Reference:
        return corpus_reference(
            self.template, today=datetime.date(2025, 6, 20), variables=dict(self.variables)
        )

    def __str__(self) -> str:
        return f"{self.template}{'+' if self.options else ''}"


CASES = [
    Case(
        mistral_small_3_2,
        "Mistral-Small-3.2-24B-Instruct-2506",
        identical=232,
        both_refused=37,
        own_turns=339,
        within_losses=108,
        template_refused_turns=44,
        call_turns=77,
    ),
    Case(
        deepseek_v3_1,
        "deepseek-ai-DeepSeek-V3.1",
        identical=269,
        both_refused=0,
        own_turns=383,
        within_losses=126,
        call_turns=90,
    ),
    Case(
        deepseek_v3_1,
        "deepseek-ai-DeepSeek-V3.1",
        identical=269,
        both_refused=0,
        variables=(("thinking", True),),
        options=(("thinking", True),),
        own_turns=383,
        within_losses=126,
        call_turns=90,
    ),
    Case(
        granite_4_0,
        "ibm-granite-granite-4.0",
        identical=269,
        both_refused=0,
        own_turns=383,
        within_losses=110,
        call_turns=90,
    ),
    Case(
        gemma_2,
        "google-gemma-2-2b-it",
        identical=217,
        both_refused=53,
        own_turns=224,
        within_losses=102,
        template_refused_turns=49,
        plain=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_renders_as_the_template(case: Case) -> None:
    report = compare_renders(case.format, case.reference(), case.conversations)
    assert report.agrees, report.describe()
    assert (report.identical, report.both_refused) == (case.identical, case.both_refused), (
        report.summary()
    )


@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_templates_turns_parse_back(case: Case) -> None:
    report = own_turns(case.format, case.reference(), case.conversations, within_losses=True)
    assert not report.unread, report.describe()
    assert set(report.problem_kinds()) <= {"refused"}, report.describe()
    assert (report.parsed_back, report.within_losses, report.count("refused")) == (
        case.own_turns,
        case.within_losses,
        case.template_refused_turns,
    ), report.summary()


def _calls_of(message: dict[str, Any], ids: bool) -> list[tuple[Any, ...]]:
    return [
        (
            call["function"]["name"],
            json.loads(call["function"]["arguments"]),
            call.get("id") if ids else None,
        )
        for call in message.get("tool_calls") or []
    ]


@pytest.mark.parametrize("case", [case for case in CASES if case.call_turns], ids=str)
def test_its_own_call_turns_parse_back(case: Case) -> None:
    """Each assistant message with calls, rendered by the declaration after its prompt, is
    read back by ``Format.parse`` with the same calls (ids too where the format writes them)."""
    fmt = case.format
    ids = case.module is mistral_small_3_2
    parsed = []
    for request in case.conversations:
        messages, tools = request["messages"], request.get("tools")
        for index, message in enumerate(messages):
            if not message.get("tool_calls"):
                continue
            before = {**request, "messages": messages[:index]}
            through = {**request, "messages": messages[: index + 1]}
            try:
                prompt = fmt.render(before, add_generation_prompt=True).text
                whole = fmt.render(through).text
            except RequestError:  # the template raises on it too (see the renders)
                continue
            assert whole.startswith(prompt), (prompt, whole)
            completion = fmt.parse(whole[len(prompt) :], tools=tools, prompt=prompt)
            assert completion.finish_reason == "tool_calls", whole[len(prompt) :]
            assert _calls_of(completion.message, ids) == _calls_of(message, ids), whole
            parsed.append(index)
    assert len(parsed) == case.call_turns


@pytest.mark.parametrize("module", [mistral_small_3_2, deepseek_v3_1], ids=lambda m: m.__name__)
def test_declared_in_under_80_lines(module: ModuleType) -> None:
    """Mistral Small 3.2 (its 2.3 kB default system text included) and DeepSeek V3.1 each
    fit in a file of fewer than 80 lines."""
    assert module.__file__ is not None
    lines = Path(module.__file__).read_text(encoding="utf-8").splitlines()
    assert len(lines) < 80, len(lines)
