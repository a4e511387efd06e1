"""OpenAI chat-completions requests of every kind a chat template can express, generated.

One generator, two ways to drive it:

- :func:`generate_conversations` (``count``, ``seed``): a deterministic list, the same on every
  run and machine (conversation ``i`` depends only on the seed, the switches and ``i``).  The
  first times the list makes each featured choice (tools or none, system placement, ending,
  call style, user text style, tool result style) it takes every allowed value in turn, so a
  short list already holds every kind the switches allow.
- :func:`conversation_strategy`: a hypothesis strategy over the same space (the same code draws
  its choices from hypothesis, which can then shrink a failing conversation).

Each :class:`Conversation` carries its request and the ``kinds`` it holds (:data:`KINDS`), so a
report can say which kinds differ.  :class:`Switches` selects the kinds: a family's test
declares what its template expresses (``tools=False`` for a template without tools,
``alternating=True`` for one that requires user and assistant to alternate,
``system_positions=("none", "first")``, ``reasoning=False``, ``names=False``, ...), and
``avoid`` lists text no generated string may contain (the format's own markers).

Tools come from a pool of realistic JSON schemas (strings, numbers, integers, booleans, enums,
arrays, nested objects, optional parameters, a tool without parameters); arguments follow the
chosen tool's schema.  Call ids are 9 letters and digits (Mistral's templates require that)
unless ``call_ids`` says otherwise.  Every call is answered by one tool message, in order, with
its ``tool_call_id`` and (``tool_names``) the tool's ``name``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import strategies as st

__all__ = [
    "KINDS",
    "TEXT_STYLES",
    "TOOL_POOL",
    "Conversation",
    "Switches",
    "conversation_strategy",
    "generate_conversations",
]

T = TypeVar("T")

# ------------------------------------------------------------------ kinds

KINDS: dict[str, str] = {
    "system": "a system message first",
    "several-systems": "two or three system messages at the start",
    "later-system": "a system message after the first user message",
    "multi-turn": "more than one user query",
    "consecutive-users": "two user messages in a row (roles do not alternate)",
    "named": "a user message with a name",
    "tools": "the request declares tools",
    "call": "an assistant turn with one call",
    "parallel-calls": "an assistant turn with several calls",
    "text-before-call": "an assistant turn with text and calls",
    "empty-arguments": "a call to a tool without parameters",
    "nested-arguments": "a call whose arguments hold arrays or objects",
    "several-call-rounds": "calls, results, then calls again before the answer",
    "result-json": "a tool result that is JSON text",
    "result-text": "a tool result that is plain text",
    "reasoning": "an assistant turn with reasoning_content",
    "reasoning-before-last-query": "reasoning on a turn before the last user message",
    "reasoning-after-last-query": "reasoning on a turn after the last user message",
    "reasoning-with-call": "reasoning on a turn with calls",
    "ends-assistant": "the conversation ends on an assistant message",
    "ends-user": "the conversation ends on a user message",
    "ends-tool": "the conversation ends on a tool message",
    "non-ascii": "text with CJK, Cyrillic, accents or emoji",
    "markdown": "text with code fences, lists, tables or headings",
    "edge-whitespace": "text with leading or trailing whitespace or newlines",
    "empty-text": "an empty string as a message's text",
    "quotes-backslashes": "text with quotes, backslashes or JSON-looking text",
    "foreign-markers": "text that spells another format's markers",
}
"""Every kind label a conversation may carry, with what it means."""

# ------------------------------------------------------------------ texts

_PLAIN = (
    "What is the weather in Paris today?",
    "Thanks, that helps.",
    "Summarise the report in two sentences.",
    "Can you book a table for four at eight?",
    "The meeting moved to Thursday.",
    "I need a flight from Lisbon to Oslo next week.",
    "Here is what I found.",
    "It is 21 degrees and sunny.",
    "You are a helpful assistant.",
    "Answer briefly and cite your sources.",
    "Let me check that for you.",
    "Done.",
)
_NON_ASCII = (
    "北京今天天气怎么样？",
    "Ça coûte 20 € — d'accord ?",
    "Спасибо, всё понятно.",
    "Great, thanks! 🙂🚀",
    "naïve café in São Paulo, Zürich and Kraków",
    "日本語のテキストと한국어 텍스트",
    "مرحبا بالعالم",
    "Family: 👨‍👩‍👧‍👦, flag: 🇫🇷, thumbs: 👍🏽",
)
_MARKDOWN = (
    "```python\nprint('hello')\n```",
    "- one\n- two\n- three",
    "| city | temp |\n|------|------|\n| Oslo | 3 |\n| Rome | 19 |",
    "# Title\n\n**bold** and _italic_ and `code`",
    "1. first\n2. second\n\n> a quote",
    "Use `git status`, then:\n\n```bash\ngit commit -m 'x'\n```\nDone.",
)
_WHITESPACE = (
    "  two leading spaces",
    "two trailing spaces  ",
    "\nstarts with a newline",
    "ends with a newline\n",
    "  both ends \n",
    "line one\n\nline three",
    "\ttab first",
    "\n\nblank lines around\n\n",
)
_EMPTY = ("",)
_QUOTES = (
    'He said "hi" and left.',
    "C:\\Users\\me\\notes.txt",
    "a literal \\n and \\t in text",
    "it's 'single' and \"double\"",
    '{"looks": "like JSON", "n": 1}',
    "braces {x} and {{y}} and %s and $HOME",
    "back\\\\slashes\\",
)
_FOREIGN_MARKERS = (
    "<|im_start|>",
    "<|im_end|>",
    "[INST]",
    "[/INST]",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<|channel|>",
    "<|message|>",
    "[TOOL_CALLS]",
    "<｜Assistant｜>",
    "<|user|>",
    "<|assistant|>",
    "<s>",
    "</s>",
    "<|endoftext|>",
    "<|END_OF_TURN_TOKEN|>",
)

TEXT_STYLES: dict[str, tuple[str, ...]] = {
    "plain": _PLAIN,
    "non-ascii": _NON_ASCII,
    "markdown": _MARKDOWN,
    "edge-whitespace": _WHITESPACE,
    "empty-text": _EMPTY,
    "quotes-backslashes": _QUOTES,
    "foreign-markers": tuple(f"Type {marker} to begin." for marker in _FOREIGN_MARKERS)
    + tuple(_FOREIGN_MARKERS),
}
"""Text styles by kind label (``plain`` has no label); each a pool of sample texts."""

_STRING_VALUES = (
    "Paris",
    "São Paulo",
    "北京",
    "New York",
    "Zürich",
    "O'Hare",
    "2024-07-26",
    "team@example.com",
    'say "hi"',
    "C:\\temp",
    "",
    "two words",
    "Kraków 🚆",
)
_NUMBERS = (21.5, 0.0, -3.25, 0.001, 100.0, 3.14159, 1e-05, 12345.678)

# ------------------------------------------------------------------ tools


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _object(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


TOOL_POOL: tuple[dict[str, Any], ...] = (
    _function(
        "get_weather",
        "Get the current weather for a city.",
        _object(
            {
                "city": {"type": "string", "description": "The city name."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "description": "Days of forecast.", "minimum": 1},
            },
            ["city"],
        ),
    ),
    _function(
        "search_flights",
        "Search flights between two airports.",
        _object(
            {
                "origin": {"type": "string", "description": "IATA code of the origin."},
                "destination": {"type": "string", "description": "IATA code of the destination."},
                "date": {"type": "string", "format": "date"},
                "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
                "nonstop": {"type": "boolean"},
                "max_price": {"type": "number", "description": "In euros."},
            },
            ["origin", "destination", "date"],
        ),
    ),
    _function(
        "create_event",
        "Create a calendar event.",
        _object(
            {
                "title": {"type": "string"},
                "start": {"type": "string", "description": "ISO 8601 date and time."},
                "duration_minutes": {"type": "integer"},
                "attendees": {"type": "array", "items": {"type": "string"}},
                "location": _object(
                    {
                        "name": {"type": "string"},
                        "address": _object(
                            {"street": {"type": "string"}, "city": {"type": "string"}},
                            ["city"],
                        ),
                    },
                    ["name"],
                ),
                "reminders": {
                    "type": "array",
                    "items": _object(
                        {
                            "minutes": {"type": "integer"},
                            "method": {"type": "string", "enum": ["email", "popup"]},
                        },
                        ["minutes"],
                    ),
                },
            },
            ["title", "start"],
        ),
    ),
    _function(
        "calculate",
        "Evaluate an arithmetic expression.",
        _object(
            {
                "expression": {"type": "string"},
                "precision": {"type": "integer", "description": "Decimal places."},
            },
            ["expression"],
        ),
    ),
    _function(
        "send_email",
        "Send an email.",
        _object(
            {
                "to": {"type": "array", "items": {"type": "string"}},
                "subject": {"type": "string"},
                "body": {"type": "string"},
                "priority": {"type": "string", "enum": ["low", "normal", "high"]},
                "attach_signature": {"type": "boolean"},
            },
            ["to", "subject", "body"],
        ),
    ),
    _function("get_time", "The current time in UTC.", _object({})),
    _function(
        "set_thermostat",
        "Set the thermostat.",
        _object(
            {
                "temperature": {"type": "number"},
                "mode": {"type": "string", "enum": ["heat", "cool", "auto"]},
                "room": {"type": "string"},
            },
            ["temperature"],
        ),
    ),
)
"""The tools conversations declare (1 to 3 of them, distinct), as OpenAI tool objects."""

# ------------------------------------------------------------------ switches

SYSTEM_POSITIONS = ("none", "first", "several", "later")
ENDINGS = ("assistant", "user", "tool")
CALL_STYLES = ("one", "parallel", "text-before-call")
RESULT_STYLES = ("json", "text")
CALL_ID_STYLES = ("alphanumeric", "openai", "numbered")


@dataclass(frozen=True)
class Switches:
    """What kinds of conversation to generate (every kind by default).

    ``system_positions``: any of ``"none"``, ``"first"``, ``"several"`` (two or three system
    messages first), ``"later"`` (one after the first user message).  ``endings``: the roles a
    conversation may end on.  ``texts``: the text styles of :data:`TEXT_STYLES` to use.
    ``avoid``: strings no generated text, argument or result contains.  ``call_ids``:
    ``"alphanumeric"`` (9 letters and digits), ``"openai"`` (``call_`` and 24), or
    ``"numbered"`` (``call_0``, ``call_1``...).  ``tools_always``: every conversation
    declares tools (a template that cannot render without them).  ``reasoning_always``: every
    assistant message has reasoning that is not blank (a template whose generation prompt
    opens a block that a past turn without reasoning does not hold: GLM-4.7).
    ``object_arguments`` False: a call's argument whose value is an object is empty (``{}``,
    the same in every syntax: LFM2.5's template writes such a value as JSON and the others
    as Python literals).
    """

    tools: bool = True
    tools_always: bool = False
    parallel_calls: bool = True
    text_with_calls: bool = True
    empty_arguments: bool = True
    call_rounds: int = 2
    results: tuple[str, ...] = RESULT_STYLES
    tool_names: bool = True
    reasoning: bool = True
    reasoning_with_calls: bool = True
    system_positions: tuple[str, ...] = SYSTEM_POSITIONS
    alternating: bool = False
    names: bool = True
    endings: tuple[str, ...] = ENDINGS
    texts: tuple[str, ...] = tuple(TEXT_STYLES)
    avoid: tuple[str, ...] = ()
    max_queries: int = 3
    call_ids: str = "alphanumeric"
    reasoning_always: bool = False
    object_arguments: bool = True

    def __post_init__(self) -> None:
        _check_subset("system_positions", self.system_positions, SYSTEM_POSITIONS)
        _check_subset("endings", self.endings, ENDINGS)
        _check_subset("texts", self.texts, tuple(TEXT_STYLES))
        _check_subset("results", self.results, RESULT_STYLES)
        if self.call_ids not in CALL_ID_STYLES:
            raise ValueError(f"call_ids: {self.call_ids!r}; expected one of {CALL_ID_STYLES}")
        if not self.system_positions or not self.texts or self.max_queries < 1:
            raise ValueError("system_positions and texts need a value each, max_queries >= 1")
        if not self.tools and self.endings == ("tool",):
            raise ValueError("endings=('tool',) needs tools=True")
        if self.tools and not self.results:
            raise ValueError("results: none given; expected 'json', 'text' or both")
        if not self._texts():
            raise ValueError(f"avoid={self.avoid!r} leaves no text in styles {self.texts}")
        blank = all(not text.strip() for pool in self._texts().values() for text in pool)
        if self.reasoning_always and blank:
            raise ValueError(f"reasoning_always: styles {self.texts} hold only blank text")

    def _texts(self) -> dict[str, tuple[str, ...]]:
        """The pools of the allowed styles, without texts holding an avoided string."""
        pools = {}
        for style in self.texts:
            pool = tuple(text for text in TEXT_STYLES[style] if self.allowed(text))
            if pool:
                pools[style] = pool
        return pools

    def allowed(self, text: str) -> bool:
        return not any(avoided in text for avoided in self.avoid)

    def endings_allowed(self) -> tuple[str, ...]:
        return tuple(ending for ending in self.endings if self.tools or ending != "tool")

    def call_styles(self) -> tuple[str, ...]:
        styles = ["one"]
        if self.parallel_calls:
            styles.append("parallel")
        if self.text_with_calls:
            styles.append("text-before-call")
        return tuple(styles)


def _check_subset(name: str, given: Iterable[str], known: tuple[str, ...]) -> None:
    unknown = [value for value in given if value not in known]
    if unknown:
        raise ValueError(f"{name}: {unknown} unknown; expected values from {known}")


# ------------------------------------------------------------------ the conversation


@dataclass(frozen=True)
class Conversation:
    """A generated request (``{"messages": [...], "tools": [...]}``, tools only when there
    are any) and the kinds it holds."""

    request: dict[str, Any]
    kinds: frozenset[str]
    label: str = ""
    """How to make it again: ``seed 0 #17`` (see :func:`generate_conversations`)."""

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
        """The role of the last message."""
        role: str = self.messages[-1]["role"]
        return role

    def describe(self) -> str:
        """The label, the kinds, each message as one line of JSON, and the tools' names
        (for failure messages; :attr:`request` has the tools' schemas)."""
        lines = [f"conversation {self.label or '(unlabelled)'}, kinds {sorted(self.kinds)}:"]
        for index, message in enumerate(self.messages):
            lines.append(f"  [{index}] {json.dumps(message, ensure_ascii=False)}")
        if self.tools:
            names = [tool.get("function", {}).get("name") for tool in self.tools]
            lines.append(f"  tools: {names}")
        return "\n".join(lines)


# ------------------------------------------------------------------ choosers


class _Chooser:
    """Where the generator's choices come from (a seeded ``random.Random`` or hypothesis)."""

    def pick(self, options: Sequence[T]) -> T:
        raise NotImplementedError

    def featured(self, name: str, options: Sequence[T]) -> T:
        """A choice whose every option the first conversations of a list must show."""
        return self.pick(options)

    def number(self, low: int, high: int) -> int:
        raise NotImplementedError

    def chance(self, percent: int) -> bool:
        return self.number(0, 99) < percent


class _RandomChooser(_Chooser):
    """Seeded choices; a featured choice shows each of its options once, in order, the first
    times the list asks it (``asked`` is shared by the conversations of one list)."""

    def __init__(self, seed: int, index: int, asked: dict[str, int]) -> None:
        self.random = random.Random(f"{seed}:{index}")
        self.asked = asked

    def pick(self, options: Sequence[T]) -> T:
        return options[self.random.randrange(len(options))]

    def featured(self, name: str, options: Sequence[T]) -> T:
        count = self.asked.get(name, 0)
        self.asked[name] = count + 1
        if count < len(options):
            return options[count]
        return self.pick(options)

    def number(self, low: int, high: int) -> int:
        return self.random.randint(low, high)


class _DrawChooser(_Chooser):
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(list(options)))

    def number(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))


# ------------------------------------------------------------------ the generator


@dataclass
class _Builder:
    switches: Switches
    chooser: _Chooser
    kinds: set[str] = field(default_factory=set)
    messages: list[dict[str, Any]] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    calls_made: int = 0

    # -- text

    def text(self, *, featured: bool = False) -> str:
        pools = self.switches._texts()
        styles = tuple(pools)
        style = self.chooser.featured("text", styles) if featured else self.chooser.pick(styles)
        text = self.chooser.pick(pools[style])
        if style != "plain":
            self.kinds.add(style)
            if style != "empty-text" and "plain" in pools and self.chooser.chance(25):
                text = self.chooser.pick(pools["plain"]) + " " + text
        return text

    def string_value(self) -> str:
        values = [value for value in _STRING_VALUES if self.switches.allowed(value)]
        return self.chooser.pick(values or ["x"])

    # -- arguments

    def value(self, schema: dict[str, Any], depth: int = 0) -> Any:
        if "enum" in schema:
            return self.chooser.pick(schema["enum"])
        kind = schema.get("type")
        if kind == "object":
            result: dict[str, Any] = {}
            if depth == 1 and not self.switches.object_arguments:
                return result  # (the same in every syntax: "{}")
            required = set(schema.get("required", ()))
            for name, child in schema.get("properties", {}).items():
                if name in required or self.chooser.chance(50):
                    result[name] = self.value(child, depth + 1)
            if depth:
                self.kinds.add("nested-arguments")
            return result
        if kind == "array":
            self.kinds.add("nested-arguments")
            return [
                self.value(schema.get("items", {}), depth + 1)
                for _ in range(self.chooser.number(0, 3))
            ]
        if kind == "integer":
            return self.chooser.number(-5, 500)
        if kind == "number":
            return self.chooser.pick(_NUMBERS)
        if kind == "boolean":
            return self.chooser.chance(50)
        return self.string_value()

    def call_id(self) -> str:
        style = self.switches.call_ids
        while True:
            if style == "numbered":
                identifier = f"call_{self.calls_made}"
            else:
                alphabet = string.ascii_letters + string.digits
                length = 9 if style == "alphanumeric" else 24
                identifier = "".join(self.chooser.pick(alphabet) for _ in range(length))
                if style == "openai":
                    identifier = "call_" + identifier
            self.calls_made += 1
            if identifier not in self.ids:
                self.ids.add(identifier)
                return identifier

    # -- turns

    def call_turn(self, tools: list[dict[str, Any]], style: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if style == "text-before-call":
            message["content"] = self.text()
            self.kinds.add("text-before-call")
        if self.switches.reasoning_always or (
            self.switches.reasoning
            and self.switches.reasoning_with_calls
            and self.chooser.chance(40)
        ):
            message["reasoning_content"] = self.thought()
            self.kinds.add("reasoning-with-call")
        count = self.chooser.number(2, 3) if style == "parallel" else 1
        if style == "text-before-call" and self.switches.parallel_calls:
            count = self.chooser.number(1, 2)
        self.kinds.add("parallel-calls" if count > 1 else "call")
        calls = []
        for number in range(count):
            # The conversation's first call is to its first tool (see the tool sets in build).
            first = number == 0 and self.calls_made == 0
            tool = (tools[0] if first else self.chooser.pick(tools))["function"]
            arguments = self.value(tool["parameters"])
            if not arguments:
                self.kinds.add("empty-arguments")
            calls.append(
                {
                    "id": self.call_id(),
                    "type": "function",
                    "function": {
                        "name": tool["name"],
                        "arguments": json.dumps(arguments, ensure_ascii=False),
                    },
                }
            )
        message["tool_calls"] = calls
        return message

    def results(self, turn: dict[str, Any]) -> list[dict[str, Any]]:
        messages = []
        for call in turn["tool_calls"]:
            style = self.chooser.featured("result", self.switches.results)
            if style == "json":
                self.kinds.add("result-json")
                content = json.dumps(
                    {
                        "status": "ok",
                        "value": self.string_value(),
                        "count": self.chooser.number(0, 40),
                        "score": self.chooser.pick(_NUMBERS),
                    },
                    ensure_ascii=False,
                )
            else:
                self.kinds.add("result-text")
                content = self.text()
            message: dict[str, Any] = {"role": "tool", "tool_call_id": call["id"]}
            if self.switches.tool_names:
                message["name"] = call["function"]["name"]
            message["content"] = content
            messages.append(message)
        return messages

    def answer(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.text()}
        if self.switches.reasoning_always or (self.switches.reasoning and self.chooser.chance(45)):
            message["reasoning_content"] = self.thought()
        return message

    def thought(self) -> str:
        """Reasoning text (not blank with ``reasoning_always``)."""
        text = self.text()
        while self.switches.reasoning_always and not text.strip():
            text = self.text()
        return text

    def user(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "user", "content": self.text(featured=True)}
        if self.switches.names and self.chooser.chance(20):
            message["name"] = self.chooser.pick(["Alice", "bob_42", "Zoë"])
            self.kinds.add("named")
        return message

    def system(self) -> dict[str, Any]:
        return {"role": "system", "content": self.text()}

    # -- the whole conversation

    def build(self) -> dict[str, Any]:
        switches, chooser = self.switches, self.chooser
        tools: list[dict[str, Any]] = []
        with_tools = (True,) if switches.tools_always else (True, False)
        if switches.tools and chooser.featured("tools", with_tools):
            pool = [
                tool
                for tool in TOOL_POOL
                if switches.empty_arguments or tool["function"]["parameters"]["properties"]
            ]
            # The first tool conversations of a list take these sets in turn (every tool of
            # the pool; the one without parameters, second to last, first in one of them),
            # then None: any 1 to 3 tools.
            final = len(pool) - 1
            sets = [
                (0,),
                (final - 1, 1),
                (2, 3),
                (4, final, 0),
                (1,),
                (3, 0),
                (final,),
                (2, 4, 1),
                None,
            ]
            chosen = chooser.featured("tool set", sets)
            if chosen is None:
                chosen = tuple(_distinct(chooser, len(pool), chooser.number(1, 3)))
            tools = [pool[index] for index in chosen]
            self.kinds.add("tools")
        endings = tuple(e for e in switches.endings_allowed() if tools or e != "tool")
        if not endings:  # only "tool" endings were allowed, and this conversation has no tools
            endings = ("user",)
        ending = chooser.featured("ending", endings)
        position = chooser.featured("system", switches.system_positions)
        if position in ("first", "several"):
            self.messages.append(self.system())
            self.kinds.add("system")
            if position == "several":
                for _ in range(chooser.number(1, 2)):
                    self.messages.append(self.system())
                self.kinds.add("several-systems")
        queries = chooser.number(1, switches.max_queries)
        if position == "later":
            queries = max(queries, 2)
            self.kinds.add("later-system")
        if queries > 1:
            self.kinds.add("multi-turn")
        featured_style_used = False
        for query in range(queries):
            last = query == queries - 1
            if position == "later" and query == 1:
                self.messages.append(self.system())
            self.messages.append(self.user())
            if not switches.alternating and chooser.chance(12):
                self.messages.append(self.user())
                self.kinds.add("consecutive-users")
            if last and ending == "user":
                break
            calls_here = bool(tools) and (
                (last and ending == "tool") or chooser.chance(80 if query == 0 else 50)
            )
            if calls_here:
                rounds = chooser.number(1, max(1, switches.call_rounds))
                for _ in range(rounds):
                    if featured_style_used:
                        style = chooser.pick(switches.call_styles())
                    else:
                        style = chooser.featured("calls", switches.call_styles())
                        featured_style_used = True
                    turn = self.call_turn(tools, style)
                    self.messages.append(turn)
                    self.messages.extend(self.results(turn))
                if rounds > 1:
                    self.kinds.add("several-call-rounds")
                if last and ending == "tool":
                    break
            self.messages.append(self.answer())
        self.label_endings_and_reasoning()
        request: dict[str, Any] = {"messages": self.messages}
        if tools:
            request["tools"] = tools
        return request

    def label_endings_and_reasoning(self) -> None:
        self.kinds.add(f"ends-{self.messages[-1]['role']}")
        users = [i for i, message in enumerate(self.messages) if message["role"] == "user"]
        last_query = users[-1] if users else -1
        for index, message in enumerate(self.messages):
            if message.get("reasoning_content") is not None:
                self.kinds.add("reasoning")
                after = index > last_query
                self.kinds.add(f"reasoning-{'after' if after else 'before'}-last-query")


def _distinct(chooser: _Chooser, size: int, count: int) -> list[int]:
    """``count`` distinct indexes below ``size``, in the order drawn."""
    remaining = list(range(size))
    chosen = []
    for _ in range(min(count, size)):
        chosen.append(remaining.pop(chooser.number(0, len(remaining) - 1)))
    return chosen


def _switches(switches: Switches | None, changes: dict[str, Any]) -> Switches:
    base = switches or Switches()
    return dataclasses.replace(base, **changes) if changes else base


def generate_conversations(
    count: int, *, seed: int = 0, switches: Switches | None = None, **changes: Any
) -> list[Conversation]:
    """``count`` conversations, the same for the same ``seed`` and switches (``switches``, or
    :class:`Switches` fields as keywords: ``generate_conversations(50, tools=False)``)."""
    chosen = _switches(switches, changes)
    conversations = []
    asked: dict[str, int] = {}
    for index in range(count):
        builder = _Builder(chosen, _RandomChooser(seed, index, asked))
        request = builder.build()
        conversations.append(
            Conversation(request, frozenset(builder.kinds), f"seed {seed} #{index}")
        )
    return conversations


def conversation_strategy(
    switches: Switches | None = None, **changes: Any
) -> st.SearchStrategy[Conversation]:
    """A hypothesis strategy over the conversations :func:`generate_conversations` makes."""
    chosen = _switches(switches, changes)

    @st.composite
    def draw_conversation(draw: st.DrawFn) -> Conversation:
        builder = _Builder(chosen, _DrawChooser(draw))
        request = builder.build()
        return Conversation(request, frozenset(builder.kinds), "hypothesis")

    return draw_conversation()


def conversations_with(
    conversations: Iterable[Conversation], predicate: Callable[[Conversation], bool]
) -> list[Conversation]:
    """The conversations for which ``predicate`` holds (e.g. ``lambda c: "tools" in c.kinds``)."""
    return [conversation for conversation in conversations if predicate(conversation)]
