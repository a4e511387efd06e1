"""Hostile requests against every entry point: the Python API, the CLI, the server, the Prompter.

Each generated input is a valid request of the format (chat, tools and calls, results, images,
reasoning, names: what the format can carry) with one to three mutations drawn from a seeded
random source: a value replaced by a hostile one (a lone surrogate, ``NaN``, infinity, an
integer of 5,000 digits, nesting 100,000 deep, ``bytes``, a set, an arbitrary object, a
non-string key, a value that contains itself, another type), hostile text inserted into a
string (markers of every format, control characters, a lone surrogate), a key deleted, an
unknown key added (``tool``, ``temprature``), call arguments replaced by hostile JSON text; and
for the CLI and the server, one body in twenty broken as bytes (cut short, a byte that is not
UTF-8, a NUL).

Every input goes through:

- **python**: ``fmt.render(request)``: it must return a rendering whose text is UTF-8, or raise
  a :class:`pawlette.PawletteError` whose message is UTF-8; anything else is a crash;
- **cli**: ``pawlette render -f FORMAT --json -`` in process, the request as JSON on stdin (hostile
  values that JSON cannot hold are written as raw JSON text: ``NaN``, 5,000 digits, 100,000
  brackets, ``"\\ud800"``): exit 0 with UTF-8 output (and a warning line on stderr per
  render loss), or exit 2 with one line on stderr;
- **server**: ``POST /v1/chat/completions`` (streamed or not, at random) in process through
  httpx's ASGI transport, with a scripted upstream answering every completion: 200 with an
  answer (and no error event in a stream), or 400 with OpenAI's error body; a 500 or anything
  else counts;
- **prompter**: ``ChatPrompter(format=...)`` and ``AlpacaPrompter`` ``generate_prompt`` (string
  and dict forms) with the input's hostile text, history and tools: a prompt that is UTF-8, or
  a :class:`pawlette.PawletteError`.

Usage: python -m bench.fuzz_requests [--count 100000] [--seed 0] [--formats pcml omni ...]
                                     [--channels python cli server prompter] [--show 3]
                                     [--engine generic|llamacpp|vllm|...]

It prints a Markdown table, a row per format and channel: the inputs, the crashes (exceptions
other than pawlette's, and non-UTF-8 output), the 500s (server answers other than 200 and 400,
or an error event), the outcomes and the seconds spent; then the first few failing inputs.
The formats are every registered format and each variant of a declared one
(``chatml:qwen2.5``) unless ``--formats`` names others.  The suite runs the same generator on
a few hundred inputs per format (tests/test_json_values.py, tests/serve/test_errors.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import io
import json
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pawlette
from bench.registered import every_format
from pawlette.errors import PawletteError, RequestError

# --------------------------------------------------------------------------- hostile values


@dataclass(frozen=True)
class Hostile:
    """A hostile value, materialised per channel: a Python value, or raw JSON text."""

    kind: str

    def python(self) -> Any:
        return _PYTHON[self.kind]()

    def json_text(self) -> str:
        return _JSON_TEXT.get(self.kind, '"x"')  # what JSON cannot hold: a plain string


def _deep_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {"type": "object"}
    value["properties"] = value
    return value


_DEEP = _deep_list(100_000)
_BIG_DIGITS = "9" * 5000
_PYTHON: dict[str, Callable[[], Any]] = {
    "surrogate": lambda: "\ud800",
    "surrogate_text": lambda: "a\udfffb",
    "nan": lambda: float("nan"),
    "infinity": lambda: float("inf"),
    "big_integer": lambda: 10**5000 - 1,
    "deep": lambda: _DEEP,
    "deep_dict": lambda: {"a": _DEEP},
    "bytes": lambda: b"x",
    "set": lambda: {1, 2},
    "object": object,
    "integer_key": lambda: {1: "x"},
    "surrogate_key": lambda: {"\ud800": 1},
    "cycle": _cycle,
    "huge_tokens": lambda: 10**9,
}
_JSON_TEXT = {
    "surrogate": '"\\ud800"',
    "surrogate_text": '"a\\udfffb"',
    "nan": "NaN",
    "infinity": "-Infinity",
    "big_integer": _BIG_DIGITS,
    "deep": "[" * 100_000 + "]" * 100_000,
    "deep_dict": '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "integer_key": '{"1": "x"}',
    "surrogate_key": '{"\\ud800": 1}',
    "huge_tokens": "1000000000",
}
HOSTILE_KINDS = tuple(_PYTHON)

MARKERS = tuple(
    dict.fromkeys(
        marker
        for name in pawlette.formats()
        for marker in pawlette.get_format(name).special_markers
    )
)
HOSTILE_TEXTS = (
    "\ud800",
    "\udfff",
    "\x00",
    "\t",
    "\r\n",
    "\u2028",
    "\\",
    "\\\\",
    "{",
    "{x}",
    "}",
    '"',
    "'",
    "```",
    "\n\n",
    "<|IMAGE_1|>",
    "<|IMAGE_17|>",
    "\U0001f600",
)
HOSTILE_ARGUMENTS = (
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": 1e999}',
    '{"a": ' + _BIG_DIGITS + "}",
    '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
    '{"a": ' + "[" * 150 + "]" * 150 + "}",
    '{"a": "\\ud800"}',
    '{"\\udfff": 1}',
    '{"a": "\\u0000"}',
    "{",
    "[]",
    '"x"',
    "",
    " ",
    '{"a": 1} x',
    '{"a": 1, "a": 2}',
)
UNKNOWN_KEYS = ("tool", "temprature", "x", "", "messages ", "\ud800", "Tools")
PLAIN_VALUES: tuple[Any, ...] = (None, True, False, 0, -1, 1.5, "", "x", [], {}, [None], {"a": 1})


# --------------------------------------------------------------------------- base requests


def _tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "Look something up.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }


def _rich_tool(name: str) -> dict[str, Any]:
    """A tool whose schema uses every keyword the grammar export reads."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 40},
                    "mode": {"enum": ["fast", "exact", 3, None]},
                    "where": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/point"}]},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                    "pair": {"type": "array", "prefixItems": [{"type": "integer"}], "items": False},
                    "flag": {"type": ["boolean", "null"], "const": True},
                },
                "required": ["query"],
                "additionalProperties": False,
                "$defs": {
                    "point": {
                        "type": "object",
                        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                    }
                },
            },
        },
    }


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def base_requests(format_name: str) -> list[dict[str, Any]]:
    """Valid requests of the format: each renders (checked by the suite)."""
    chat = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "Sunny."},
            {"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]},
        ]
    }
    # (A call id of 9 letters and digits: Mistral's templates refuse others.)
    calls = {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call("c1a2b3c4d", "get_weather", {"city": "Paris", "days": 2})],
            },
            {"role": "tool", "tool_call_id": "c1a2b3c4d", "content": '{"temperature": 21}'},
            {"role": "assistant", "content": "21 degrees."},
        ],
        "tools": [_tool("get_weather")],
        "tool_choice": "auto",
        "temperature": 0.5,
        "max_tokens": 64,
        "stop": ["###"],
    }
    # A format whose template refuses system or tool messages (Gemma 2) starts from what it
    # renders: the chat without its system message, the tools beside a chat of its own.
    fmt = pawlette.get_format(format_name)
    try:
        fmt.render(chat)
    except RequestError:
        chat["messages"] = chat["messages"][1:]
    try:
        fmt.render(calls)
    except RequestError:
        calls["messages"] = copy.deepcopy(chat["messages"])
    # Forced calls and the sampling options (the grammar export and the request checks run
    # on what the mutations make of them: a schema keyword of another type, n 2, logprobs).
    forced = copy.deepcopy(calls)
    forced.update(
        tool_choice="required",
        parallel_tool_calls=False,
        stream_options={"include_usage": True},
        n=1,
        logprobs=False,
        seed=7,
        top_p=0.9,
    )
    named = copy.deepcopy(calls)
    named["tools"].append(_rich_tool("search"))
    named["tool_choice"] = {"type": "function", "function": {"name": "search"}}
    try:
        fmt.render(named)
    except RequestError:  # a schema its template cannot write (GigaChat's: items false)
        named["tools"][-1] = _tool("search")
    requests = [chat, calls, forced, named]
    # What else the format carries, each kept when the format renders it: reasoning on the
    # assistant's turn, a speaker's name, two images around text.
    reasoning = copy.deepcopy(chat)
    reasoning["messages"][-2]["reasoning_content"] = "Look outside."
    named_speaker = copy.deepcopy(chat)
    named_speaker["messages"][-3]["name"] = "Alice"
    image = {"type": "image_url", "image_url": {"url": "a.png", "width": 448, "height": 448}}
    if format_name.partition(":")[0] == "omni":
        image["image_url"]["tokens"] = 4
    pictured = copy.deepcopy(chat)
    pictured["messages"][-3]["content"] = [
        image,
        {"type": "text", "text": " and "},
        copy.deepcopy(image),
        {"type": "text", "text": " together?"},
    ]
    for extra in (reasoning, named_speaker, pictured):
        try:
            fmt.render(extra)
        except RequestError:
            continue
        requests.append(extra)
    return requests


# --------------------------------------------------------------------------- mutation


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (not the root)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index)
            yield from _places(item, (*path, index))


def _container(request: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        request = request[key]
    return request


def _hostile_value(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.45:
        return Hostile(rng.choice(HOSTILE_KINDS))
    if roll < 0.75:
        return copy.deepcopy(rng.choice(PLAIN_VALUES))  # a fresh one: later mutations edit it
    return rng.choice(HOSTILE_TEXTS) + rng.choice(MARKERS)


def mutate(request: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One to three mutations of a deep copy of ``request``."""
    mutated = copy.deepcopy(request)
    for _ in range(rng.randint(1, 3)):
        places = list(_places(mutated))
        operation = rng.random()
        path = rng.choice(places) if places else None
        if path is None or operation < 0.08:  # an unknown key, at the top or inside
            target = mutated if path is None or rng.random() < 0.5 else _container(mutated, path)
            if isinstance(target, dict):
                target[rng.choice(UNKNOWN_KEYS)] = copy.deepcopy(rng.choice(PLAIN_VALUES))
            continue
        container = _container(mutated, path)
        key = path[-1]
        current = container[key]
        if operation < 0.4:
            container[key] = _hostile_value(rng)
        elif operation < 0.7 and isinstance(current, str):
            hostile = rng.choice((*HOSTILE_TEXTS, *MARKERS))
            cut = rng.randint(0, len(current))
            container[key] = current[:cut] + hostile + current[cut:]
        elif operation < 0.8 and key == "arguments":
            container[key] = rng.choice(HOSTILE_ARGUMENTS)
        elif operation < 0.9:
            if isinstance(container, dict):
                del container[key]
            else:
                container.pop(key)
        elif isinstance(container, list):
            container.insert(key, copy.deepcopy(current))
        else:
            container[key] = _hostile_value(rng)
    return mutated


def generate(format_name: str, seed: int) -> Iterator[dict[str, Any]]:
    """An endless stream of hostile requests of the format (seeded: the same every run)."""
    rng = random.Random(f"{format_name}:{seed}")
    bases = base_requests(format_name)
    while True:
        yield mutate(rng.choice(bases), rng)


def to_python(value: Any) -> Any:
    """``value`` with each :class:`Hostile` as its Python value."""
    if isinstance(value, Hostile):
        return value.python()
    if isinstance(value, dict):
        return {key: to_python(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_python(item) for item in value]
    return value


def to_json_bytes(value: Any) -> bytes:
    """``value`` as a JSON body, each :class:`Hostile` as its raw JSON text (which may hold what
    JSON decoders refuse or choke on); lone surrogates are written as ``\\ud800`` escapes."""
    holes: list[str] = []

    def hole(item: Any) -> str:
        if isinstance(item, Hostile):
            holes.append(item.json_text())
            return f"@@HOLE{len(holes) - 1}@@"
        raise TypeError(type(item).__name__)

    text = json.dumps(value, default=hole, ensure_ascii=True)
    for index, raw in enumerate(holes):
        text = text.replace(f'"@@HOLE{index}@@"', raw, 1)
    return text.encode()


def corrupt(body: bytes, rng: random.Random) -> bytes:
    """The JSON body broken as bytes: cut short, or a byte that is no UTF-8 or a NUL inserted."""
    cut = rng.randint(0, len(body))
    kind = rng.random()
    if kind < 0.4:
        return body[:cut]
    return body[:cut] + (b"\xff" if kind < 0.7 else b"\x00") + body[cut:]


def describe(value: Any, limit: int = 300) -> str:
    text = to_json_bytes(value).decode()
    return text if len(text) <= limit else text[: limit - 20] + f"... ({len(text)} chars)"


# --------------------------------------------------------------------------- channels


@dataclass
class Tally:
    inputs: int = 0
    crashes: int = 0
    server_errors: int = 0
    seconds: float = 0.0
    answered: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def count(self, outcome: str) -> None:
        self.answered[outcome] = self.answered.get(outcome, 0) + 1

    def fail(self, kind: str, request: Any, detail: str, show: int) -> None:
        if kind == "500":
            self.server_errors += 1
        else:
            self.crashes += 1
        if len(self.examples) < show:
            self.examples.append(f"{kind}: {detail}\n    input: {describe(request)}")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_python(fmt: pawlette.Format, request: Any, tally: Tally, show: int) -> None:
    value = to_python(request)
    tally.inputs += 1
    try:
        rendering = fmt.render(value, add_generation_prompt=True)
    except PawletteError as error:
        if not _utf8(str(error)):
            tally.fail("crash", request, f"an error message that is not UTF-8: {error!r}", show)
        tally.count("refused")
        return
    except Exception as error:
        tally.fail("crash", request, _exception(error), show)
        return
    if not _utf8(rendering.text):
        tally.fail("crash", request, "a rendering that is not UTF-8", show)
    tally.count("rendered")


def _exception(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(error).__name__}: {str(error)[:200]}{where}"


class CliChannel:
    """``pawlette render -f FORMAT --json -`` in process: the request on stdin, stdout and
    stderr as strict UTF-8 streams."""

    def __init__(self) -> None:
        from pawlette.cli import main

        self.main = main

    def close(self) -> None:
        pass

    def check(self, format_name: str, request: Any, body: bytes, tally: Tally, show: int) -> None:
        tally.inputs += 1
        stdin = io.TextIOWrapper(io.BytesIO(body), encoding="utf-8")
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
        err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
        saved = sys.stdin
        sys.stdin = stdin
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = self.main(["render", "-f", format_name, "--json", "-"])
            out.flush()
            err.flush()
        except BaseException as error:  # SystemExit and all: the CLI must return a status
            tally.fail("crash", request, _exception(error), show)
            return
        finally:
            sys.stdin = saved
        message = err.buffer.getvalue().decode()  # type: ignore[attr-defined]
        if status == 2 and message.startswith("pawlette render: ") and message.count("\n") == 1:
            tally.count("exit 2")
        elif status == 0 and all(
            line.startswith("pawlette render: warning: ") for line in message.splitlines()
        ):
            tally.count("exit 0")  # (a warning line per render loss)
        else:
            tally.fail("crash", request, f"exit {status}: {message[:200]!r}", show)


COMPLETIONS = {
    "pcml": "Sunny.<end>",
    "omni": "Sunny.<|ASSISTANT_END|>",
    "chatglm3": "\nSunny.<|user|>",
    "breeze": "<|answer|>Sunny.<|eot_id|>",
}
"""What the scripted upstream answers every request with (the fuzz is of requests)."""


class ServerChannel:
    """The server in process (httpx's ASGI transport), its upstream scripted in process."""

    def __init__(self, format_name: str, engine: str = "generic") -> None:
        self.format_name = format_name
        self.engine = engine
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self._start())

    async def _start(self) -> None:
        import httpx

        from pawlette.serve.app import build_app
        from pawlette.serve.config import ServeConfig

        config = ServeConfig(
            format=self.format_name,
            upstream="http://upstream.invalid",
            model="m",
            engine=self.engine,
        )
        self.app = build_app(config)
        server = self.app.state.server
        # The lifespan holds a task group, which must be left by the task that entered it:
        # one task lives as long as the server, between the requests' run_until_complete.
        started, self._stopping = asyncio.Event(), asyncio.Event()

        async def live() -> None:
            async with server.lifespan(self.app):
                started.set()
                await self._stopping.wait()

        self._life = asyncio.ensure_future(live())
        await started.wait()
        text = COMPLETIONS.get(self.format_name, "Sunny.")
        server.upstreams.client = _ScriptedEngine(text)  # the engine client, in process
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url="http://localhost"
        )

    def close(self) -> None:
        async def stop() -> None:
            await self.client.aclose()
            self._stopping.set()
            await self._life

        self.loop.run_until_complete(stop())
        self.loop.close()

    def check(self, request: Any, body: bytes, tally: Tally, show: int, *, stream: bool) -> None:
        tally.inputs += 1
        try:
            status, body = self.loop.run_until_complete(self._post(body))
        except Exception as error:
            tally.fail("crash", request, _exception(error), show)
            return
        problem = _answer_problem(status, body, stream)
        if problem is None:
            tally.count(str(status))
        else:
            tally.fail("500", request, problem, show)

    async def _post(self, body: bytes) -> tuple[int, bytes]:
        response = await self.client.post(
            "/v1/chat/completions", content=body, headers={"content-type": "application/json"}
        )
        return response.status_code, response.content


class _ScriptedEngine:
    """In place of the server's engine client: every completion request is answered with
    ``text`` (streamed or not), in one piece."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def post(self, url: str, content: bytes, headers: Any, **options: Any) -> Any:
        from pawlette.serve.transport import Answer

        body = json.loads(content)
        if body.get("stream"):
            choice = {"index": 0, "text": self.text, "finish_reason": None}
            end = {"index": 0, "text": "", "finish_reason": "stop"}
            events = [{"choices": [choice]}, {"choices": [end]}]
            data = "".join(f"data: {json.dumps(event)}\n\n" for event in events)
            raw, kind = (data + "data: [DONE]\n\n").encode(), "text/event-stream"
        else:
            choice = {"index": 0, "text": self.text, "finish_reason": "stop"}
            raw, kind = json.dumps({"choices": [choice]}).encode(), "application/json"

        class Whole(Answer):
            status_code = 200

            def __init__(self) -> None:
                self.headers = {"content-type": kind}
                self.content = b""
                self.pieces = [raw]

            async def next_piece(self) -> bytes:
                return self.pieces.pop() if self.pieces else b""

            def at_end(self) -> bool:
                return not self.pieces

            async def aclose(self) -> None:
                self.pieces = []

        return Whole()

    def close(self) -> None:
        pass


def _answer_problem(status: int, body: bytes, stream: bool) -> str | None:
    """Why an answer is not a 200 with an answer or a 400 with OpenAI's error body (or None)."""
    text = body.decode("utf-8", errors="replace")
    if status == 400:
        try:
            error = json.loads(body)["error"]
        except (ValueError, KeyError, TypeError):
            return f"a 400 without OpenAI's error body: {text[:200]!r}"
        if set(error) != {"message", "type", "param", "code"} or not error["message"]:
            return f"a 400 with a malformed error: {text[:200]!r}"
        return None
    if status != 200:
        return f"HTTP {status}: {text[:200]!r}"
    if stream:
        if '"error"' in text or not text.endswith("data: [DONE]\n\n"):
            return f"a stream with an error or without [DONE]: {text[-300:]!r}"
        return None
    try:
        json.loads(body)["choices"][0]["message"]
    except (ValueError, KeyError, TypeError, IndexError):
        return f"a 200 that is not a completion: {text[:200]!r}"
    return None


def check_prompter(format_name: str, request: Any, tally: Tally, show: int) -> None:
    """The request's text, history and tools through ``generate_prompt``."""
    from pawlette.prompter import AlpacaPrompter, ChatPrompter

    value = to_python(request)
    messages = value.get("messages") if isinstance(value, dict) else None
    history: Any = messages[:-1] if isinstance(messages, list) else messages
    last = messages[-1] if isinstance(messages, list) and messages else None
    text: Any = last.get("content") if isinstance(last, dict) else last
    tools = value.get("tools") if isinstance(value, dict) else None
    attempts: list[Callable[[], Any]] = [
        lambda: ChatPrompter(format=format_name).generate_prompt(text, history, tools),
        lambda: ChatPrompter(format=format_name).generate_prompt(
            text, history, tools, return_dict=True
        ),
        lambda: ChatPrompter(text if isinstance(text, str) else None).generate_prompt(
            "hi", history
        ),
        lambda: AlpacaPrompter("Do {input}.").generate_prompt({"input": text}, label=text),
    ]
    for attempt in attempts:
        tally.inputs += 1
        try:
            prompt = attempt()
        except PawletteError as error:
            if not _utf8(str(error)):
                tally.fail("crash", request, f"an error message that is not UTF-8: {error!r}", show)
            tally.count("refused")
            continue
        except Exception as error:
            tally.fail("crash", request, _exception(error), show)
            continue
        rendered = prompt if isinstance(prompt, str) else json.dumps(prompt, ensure_ascii=False)
        if not _utf8(rendered):
            tally.fail("crash", request, "a prompt that is not UTF-8", show)
        tally.count("prompted")


# --------------------------------------------------------------------------- the run


CHANNELS = ("python", "cli", "server", "prompter")


@contextlib.contextmanager
def _timed(tally: Tally) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        tally.seconds += time.perf_counter() - started


def run_format(
    format_name: str,
    count: int,
    seed: int,
    channels: tuple[str, ...],
    show: int,
    engine: str = "generic",
) -> dict[str, Tally]:
    """Run ``count`` generated inputs of the format through each channel (the server's
    upstream spoken to as ``engine``: a grammar engine's plans export grammars)."""
    fmt = pawlette.get_format(format_name)
    tallies = {channel: Tally() for channel in channels}
    cli = CliChannel() if "cli" in channels else None
    server = ServerChannel(format_name, engine) if "server" in channels else None
    rng = random.Random(f"{format_name}:{seed}:bytes")
    try:
        for number, request in zip(range(count), generate(format_name, seed), strict=False):
            if "python" in channels:
                with _timed(tallies["python"]):
                    check_python(fmt, request, tallies["python"], show)
            stream = number % 2 == 1
            if stream and isinstance(request, dict):
                request = {**request, "stream": True}
            body = to_json_bytes(request)
            if rng.random() < 0.05:
                body = corrupt(body, rng)
            if cli is not None:
                with _timed(tallies["cli"]):
                    cli.check(format_name, request, body, tallies["cli"], show)
            if server is not None:
                with _timed(tallies["server"]):
                    server.check(request, body, tallies["server"], show, stream=stream)
            if "prompter" in channels:
                with _timed(tallies["prompter"]):
                    check_prompter(format_name, request, tallies["prompter"], show)
    finally:
        if cli is not None:
            cli.close()
        if server is not None:
            server.close()
    return tallies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="inputs per format")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--formats",
        nargs="*",
        default=every_format(),
        help="names as -f takes them (default: every registered format and variant)",
    )
    parser.add_argument("--channels", nargs="*", default=list(CHANNELS), choices=CHANNELS)
    parser.add_argument("--show", type=int, default=3, help="failing inputs shown per channel")
    parser.add_argument(
        "--engine", default="generic", help="the server's --engine (llamacpp, vllm: grammars)"
    )
    arguments = parser.parse_args(argv)
    import logging

    logging.getLogger("pawlette.serve").setLevel(logging.CRITICAL)  # the 500s are counted
    failures = 0
    examples: list[str] = []
    print("| format | channel | inputs | crashes | 500s | outcomes | seconds |")
    print("|---|---|---:|---:|---:|---|---:|")
    for format_name in arguments.formats:
        tallies = run_format(
            format_name,
            arguments.count,
            arguments.seed,
            tuple(arguments.channels),
            arguments.show,
            arguments.engine,
        )
        for channel, tally in tallies.items():
            outcomes = ", ".join(f"{k} {v:,}" for k, v in sorted(tally.answered.items()))
            print(
                f"| {format_name} | {channel} | {tally.inputs:,} | {tally.crashes} "
                f"| {tally.server_errors} | {outcomes} | {tally.seconds:.0f} |"
            )
            examples += [f"{format_name} {channel}: {example}" for example in tally.examples]
            failures += tally.crashes + tally.server_errors
        sys.stdout.flush()
    print()
    for example in examples:
        print(example)
    print("all zero" if not failures else f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="fuzz-requests",
        title="Fuzzing every entry point with hostile requests",
        what=(
            "For every registered format and each variant of a declared one, a valid "
            "request of the format with one to three mutations (lone surrogates, NaN, "
            "5,000-digit integers, deep nesting, bytes, sets, cycles, unknown keys, markers "
            "inserted into strings, broken JSON), sent through the Python API, `pawlette "
            "render`, the server (streamed and not) and the Prompter. A crash is any "
            "exception other than pawlette's, or output that is not UTF-8; the server must "
            "answer 200 or 400 with OpenAI's error body, never a 500."
        ),
        peer="none (the contract is absolute)",
        findings=True,
    )
    sys.exit(pages.run(main, PAGE))
