"""Conversations to verify an inferred declaration with: generated, deterministic, varied.

:func:`generate` makes ``count`` OpenAI requests from a seed, holding only what the
declaration says it writes (:class:`Features`): system messages first and later, several user
queries (some in a row), answers (some in a row, some before any query), tools, calls
(parallel, with text, without arguments, nested arguments), results (text and JSON),
reasoning before and after the last query, and text of every kind (plain, non-ASCII,
Markdown, quotes and backslashes, edge whitespace, empty); and, where the declaration says the
template writes no generation prompt after it, a system message alone.  Each is rendered with the
generation prompt when it awaits the model, and without; a few that end with an answer are
rendered with the generation prompt too (:attr:`Sample.prompts`).  The same seed gives the
same conversations on every machine.
``avoid`` lists text no generated string may hold (the format's own markers).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TOOLS", "Features", "Sample", "generate"]

_PLAIN = (
    "What is the weather in Paris today?",
    "Thanks, that helps.",
    "Summarise the report in two sentences.",
    "The meeting moved to Thursday.",
    "It is 21 degrees and sunny.",
    "You are a helpful assistant.",
    "Answer briefly.",
    "Done.",
)
_NON_ASCII = (
    "北京今天天气怎么样？",
    "Ça coûte 20 € — d'accord ?",
    "Спасибо, всё понятно.",
    "Great, thanks! 🙂🚀",
    "naïve café in São Paulo",
)
_MARKDOWN = (
    "```python\nprint('hello')\n```",
    "- one\n- two\n- three",
    "| city | temp |\n|------|------|\n| Oslo | 3 |",
    "# Title\n\n**bold** and `code`",
)
_QUOTES = (
    'He said "hi" and left.',
    "C:\\Users\\me\\notes.txt",
    "braces {x} and {{y}} and %s",
    '{"looks": "like JSON"}',
)
_EDGES = ("  two leading spaces", "ends with a newline\n", "\nstarts with a newline", " both \n")
_PADDINGS = (("\n", ""), ("", " \n"), ("  ", "\n\n"), ("\n\n", " "), ("\t", "\t"))
"""Whitespace put at the start and end of a text beside calls or of a result: each side alone,
both, newlines and spaces apart (a template's ``.strip('\\n')`` and ``| trim`` differ there)."""

TOOLS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city's name."},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_flights",
            "description": "Search flights — départs et arrivées.",
            "parameters": {
                "type": "object",
                "properties": {
                    "origin": {"type": "string"},
                    "passengers": {"type": "integer"},
                    "max_price": {"type": "number"},
                    "direct": {"type": "boolean"},
                    "dates": {"type": "array", "items": {"type": "string"}},
                    "filters": {
                        "type": "object",
                        "properties": {"airline": {"type": "string"}},
                    },
                },
                "required": ["origin"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The current time.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
)

_ARGUMENTS: dict[str, tuple[dict[str, Any], ...]] = {
    "get_weather": (
        {"city": "Paris"},
        {"city": "São Paulo", "unit": "celsius"},
        {"city": "北京", "unit": "fahrenheit"},
        {"city": 'say "hi"'},
    ),
    "search_flights": (
        {"origin": "Lisbon", "passengers": 2, "direct": True},
        {"origin": "Oslo", "max_price": 199.5, "dates": ["2024-08-01", "2024-08-03"]},
        {"origin": "Zürich", "filters": {"airline": "Swiss"}, "direct": False},
    ),
    "get_time": ({},),
}
_RESULTS = (
    "18°C and cloudy",
    '{"temperature": 18, "unit": "celsius"}',
    "No flights found.",
    '[{"flight": "TP123", "price": 120.5}]',
    "12:30",
)


@dataclass(frozen=True)
class Features:
    """What the generated conversations may hold (each True: some do)."""

    system: bool = True
    later_system: bool = True
    tools: bool = True
    calls: bool = True
    parallel_calls: bool = True
    text_with_calls: bool = True
    results: bool = True
    reasoning: bool = True
    reasoning_with_calls: bool = True
    edge_whitespace: frozenset[str] = frozenset({"system", "user", "assistant", "tool"})
    """The roles whose text may start or end with whitespace (results: about one in four is
    padded)."""
    edge_whitespace_reasoning: bool = True
    """Reasoning texts may start or end with whitespace (about one in four is padded, from
    draws of their own: a template may trim reasoning, as Qwen3's ``strip('\\n')`` does)."""
    edge_whitespace_with_calls: bool = True
    """The text beside calls may start or end with whitespace (about half of them, and the
    first turn of calls of every twelfth conversation, counted from the third, has such a
    text: a template may trim this text alone, as Qwen3-Coder's does)."""
    empty_roles: frozenset[str] = frozenset({"system", "user", "assistant", "tool", "reasoning"})
    """The roles whose text may be empty."""
    names: bool = True
    """User messages may carry a ``name``."""
    alternating: bool = False
    """User and assistant messages strictly alternate (no user after a user)."""
    consecutive_answers: bool = True
    """Some conversations hold an assistant message right after another (every eighth,
    counted from the eighth: their number picks them, and the second answer's text is drawn
    apart, so every other message stays as it is without it)."""
    leading_answer: bool = True
    """Some conversations open with an assistant message, after their system messages
    (every eighth, counted from the fifth: their number picks them, and the answer's text is
    drawn apart, so every other message stays as it is without it)."""
    prompt_after_answer: bool = True
    """Some conversations that end with an assistant message are rendered with the
    generation prompt too (every seventh, counted from the second: their number picks them)."""
    answer_avoid: tuple[str, ...] = ()
    """Text an assistant's answer may not hold: the plain text that ends its turn."""
    system_alone: bool = False
    """One more conversation is a system message alone (rendered with the generation prompt
    and without): where the declaration says the template writes no prompt after it."""


@dataclass(frozen=True)
class Sample:
    """One generated conversation and the ``kinds`` it holds."""

    request: dict[str, Any]
    kinds: frozenset[str] = field(default_factory=frozenset)
    prompt_after_answer: bool = False
    """Rendered with the generation prompt too, though it ends with an assistant message."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.request["messages"]
        return messages

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        tools: list[dict[str, Any]] | None = self.request.get("tools")
        return tools

    @property
    def ends_with(self) -> str:
        return str(self.messages[-1]["role"])

    @property
    def prompts(self) -> tuple[bool, ...]:
        """The generation prompt settings to render it with: with the prompt (where it
        awaits the model, or ``prompt_after_answer``) and without."""
        if self.ends_with == "assistant" and not self.prompt_after_answer:
            return (False,)
        return (True, False)


class _Maker:
    def __init__(self, seed: int | str, features: Features, avoid: Iterable[str]) -> None:
        self.random = random.Random(seed)
        self.features = features
        self.avoid = tuple(text for text in avoid if text)
        self.kinds: set[str] = set()
        self.calls = 0
        # Draws of their own for the whitespace put around texts beside calls and results:
        # without either, the conversation is as with it, less the whitespace.
        self.paddings = {
            kind: random.Random(f"{kind} {seed}")
            for kind in (
                "edge-whitespace-with-calls",
                "edge-whitespace-results",
                "edge-whitespace-reasoning",
            )
        }
        self.padded_call_text = False
        """The next turn of calls has text, with whitespace at its ends."""

    def allowed(self, text: str, role: str = "") -> bool:
        avoid = self.avoid + self.features.answer_avoid if role == "assistant" else self.avoid
        return not any(marker in text for marker in avoid)

    def text(self, role: str) -> str:
        if role in self.features.empty_roles and self.random.random() < 0.08:
            self.kinds.add(f"empty-{role}")
            return ""
        pools: list[tuple[str, tuple[str, ...]]] = [
            ("plain", _PLAIN),
            ("non-ascii", _NON_ASCII),
            ("markdown", _MARKDOWN),
            ("quotes", _QUOTES),
        ]
        if role in self.features.edge_whitespace:
            pools.append(("edge-whitespace", _EDGES))
        for _ in range(20):
            kind, pool = self.random.choice(pools)
            text = self.random.choice(pool)
            if self.allowed(text, role):
                if kind != "plain":
                    self.kinds.add(kind)
                return text
        return "Hello."

    def padded(self, text: str, kind: str) -> str:
        """``text`` with whitespace at its start, its end or both (of :data:`_PADDINGS`)."""
        start, end = self.paddings[kind].choice(_PADDINGS)
        self.kinds.update(("edge-whitespace", kind))
        return start + text + end

    def call_text(self, drawn: bool) -> str:
        """A text beside calls: never empty (an empty text is no text there); with
        whitespace at its ends, where the features allow it, in about half of them.
        ``drawn``: the conversation's draws gave the turn a text (else it is drawn apart)."""
        if drawn:
            kinds = set(self.kinds)
            text = self.text("assistant").strip() or "Let me check."
            # The draw's own whitespace is stripped: the kinds say what the text holds.
            self.kinds -= {"edge-whitespace", "empty-assistant"} - kinds
        else:
            allowed = [item for item in _PLAIN if self.allowed(item, "assistant")] or ["Hello."]
            text = self.paddings["edge-whitespace-with-calls"].choice(allowed)
        if self.features.edge_whitespace_with_calls and (
            self.padded_call_text or self.paddings["edge-whitespace-with-calls"].random() < 0.5
        ):
            text = self.padded(text, "edge-whitespace-with-calls")
        self.padded_call_text = False
        return text

    def reasoning(self) -> str:
        """A reasoning text: with whitespace at its ends, where the features allow it, in
        about one in four (the padding drawn apart)."""
        text = self.text("reasoning")
        padding = self.paddings["edge-whitespace-reasoning"]
        if self.features.edge_whitespace_reasoning and text and padding.random() < 0.25:
            text = self.padded(text, "edge-whitespace-reasoning")
        return text

    def call(self, tools: list[dict[str, Any]]) -> dict[str, Any]:
        tool = self.random.choice(tools)
        name = tool["function"]["name"]
        arguments = self.random.choice(_ARGUMENTS[name])
        self.calls += 1
        identifier = "".join(
            self.random.choice("abcdefghijkmnpqrstuvwxyz0123456789") for _ in range(9)
        )
        if not arguments:
            self.kinds.add("empty-arguments")
        if any(isinstance(value, (dict, list)) for value in arguments.values()):
            self.kinds.add("nested-arguments")
        return {
            "id": identifier,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
        }


def _conversation(number: int, seed: int, features: Features, avoid: Iterable[str]) -> Sample:
    maker = _Maker(seed * 1000003 + number, features, avoid)
    maker.padded_call_text = features.edge_whitespace_with_calls and number % 12 == 2
    pick = maker.random
    messages: list[dict[str, Any]] = []
    request: dict[str, Any] = {}
    shape = number % 6
    with_tools = features.tools and shape in (2, 3, 4)
    with_calls = with_tools and features.calls and shape in (2, 3)
    if features.system and (number % 3 != 1):
        messages.append({"role": "system", "content": maker.text("system")})
        maker.kinds.add("system")
        if features.later_system and number % 7 == 3:
            messages.append({"role": "system", "content": maker.text("system")})
            maker.kinds.add("several-systems")
    if features.leading_answer and number % 8 == 4:
        # Drawn from draws of its own: the rest of the conversation is as without it.
        side = _Maker(f"leading answer {seed} {number}", features, avoid)
        side.kinds = maker.kinds
        messages.append(_answer(side, features))
        maker.kinds.add("leading-answer")
    if with_tools:
        count = 1 + number % len(TOOLS)
        tools = [TOOLS[(number + offset) % len(TOOLS)] for offset in range(count)]
        request["tools"] = tools
        maker.kinds.add("tools")
    rounds = 1 + (number // 2) % 3
    for turn in range(rounds):
        if features.system and features.later_system and turn == 1 and shape in (1, 5):
            messages.append({"role": "system", "content": maker.text("system")})
            maker.kinds.add("later-system")
        user: dict[str, Any] = {"role": "user", "content": maker.text("user")}
        if features.names and pick.random() < 0.15:
            user["name"] = pick.choice(("alice", "bob_2"))
            maker.kinds.add("named")
        messages.append(user)
        if turn and not features.alternating and pick.random() < 0.2:
            messages.append({"role": "user", "content": maker.text("user")})
            maker.kinds.add("consecutive-users")
        if with_calls and turn == rounds - 1:
            _call_rounds(maker, messages, request["tools"], features)
        elif turn < rounds - 1 or shape in (1, 3):
            messages.append(_answer(maker, features))
            if turn == 0 and features.consecutive_answers and number % 8 == 7:
                # Drawn from draws of its own: the rest of the conversation is as without it.
                side = _Maker(f"answer {seed} {number}", features, avoid)
                side.kinds = maker.kinds
                messages.append(_answer(side, features))
                maker.kinds.add("consecutive-answers")
    if rounds > 1:
        maker.kinds.add("multi-turn")
    request["messages"] = messages
    maker.kinds.add(f"ends-{messages[-1]['role']}")
    prompted = (
        features.prompt_after_answer and messages[-1]["role"] == "assistant" and number % 7 == 1
    )
    if prompted:
        maker.kinds.add("prompt-after-answer")
    return Sample(request, frozenset(maker.kinds), prompted)


def _answer(maker: _Maker, features: Features) -> dict[str, Any]:
    answer: dict[str, Any] = {"role": "assistant", "content": maker.text("assistant")}
    if features.reasoning and maker.random.random() < 0.5:
        answer["reasoning_content"] = maker.reasoning()
        maker.kinds.add("reasoning")
    return answer


def _call_rounds(
    maker: _Maker, messages: list[dict[str, Any]], tools: list[dict[str, Any]], features: Features
) -> None:
    pick = maker.random
    for round_number in range(1 + (pick.random() < 0.3)):
        count = 2 if features.parallel_calls and pick.random() < 0.4 else 1
        calls = [maker.call(tools) for _ in range(count)]
        turn: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
        maker.kinds.add("call" if count == 1 else "parallel-calls")
        drawn = features.text_with_calls and pick.random() < 0.3
        if features.text_with_calls and (drawn or maker.padded_call_text):
            turn["content"] = maker.call_text(drawn)
            maker.kinds.add("text-with-calls")
        if features.reasoning and features.reasoning_with_calls and pick.random() < 0.4:
            turn["reasoning_content"] = maker.reasoning()
            maker.kinds.add("reasoning-with-calls")
        messages.append(turn)
        if not features.results:
            return  # the calls end the conversation
        maker.kinds.add("results")
        for call in calls:
            result = maker.text("tool") if pick.random() < 0.1 else pick.choice(_RESULTS)
            padding = maker.paddings["edge-whitespace-results"]
            if "tool" in features.edge_whitespace and result and padding.random() < 0.25:
                result = maker.padded(result, "edge-whitespace-results")
            elif result != result.strip():
                maker.kinds.add("edge-whitespace-results")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        if round_number:
            maker.kinds.add("several-call-rounds")
    if pick.random() < 0.6:
        messages.append(_answer(maker, features))


def generate(
    count: int, *, seed: int = 0, features: Features = Features(), avoid: Iterable[str] = ()
) -> list[Sample]:
    """``count`` conversations (see the module docstring)."""
    avoid = tuple(avoid)
    samples = [_conversation(number, seed, features, avoid) for number in range(count)]
    if features.system_alone:
        maker = _Maker(f"system alone {seed}", features, avoid)
        maker.kinds.update(("system", "ends-system"))
        alone = [{"role": "system", "content": maker.text("system")}]
        samples.append(Sample({"messages": alone}, frozenset(maker.kinds)))
    return samples
