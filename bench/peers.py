"""The peers of ``python -m bench.parse``: transformers' ``parse_response`` on a whole turn,
openai-harmony's Rust ``StreamableParser`` per token, and peak memory streaming one 4 MB call
(measured by ``bench/stream_memory.py``, harmony included).

Times are CPU time of this process (``time.process_time``) and wall time, per call,
over rounds in which the sides take turns (so the machine's other load falls on both alike);
the best round is kept (other work only ever slows a round down), the median is printed too.

The turn (about 2.5 KB) is a reasoning block, some text and one tool call, the same contents
in each side's own format: PCML for pawlette and for transformers (with a response template
that reads PCML), harmony's channels for openai-harmony (an ``analysis`` message, a
``commentary`` message, and a ``commentary`` call to ``functions.get_weather``).  Before
timing, each side's result is checked against the others' (same reasoning, text, call name and
arguments).

Token ids: pawlette's ``IdParser`` reads ids of o200k_base (harmony's vocabulary) with PCML's
markers added as special tokens, so both sides see the same vocabulary.  Offline, the o200k
file comes from the ``litellm`` wheel (which ships it under tiktoken's cache name, the SHA-1
of its URL): ``pip download --no-deps litellm`` into the cache and the file is unzipped from
it once; harmony reads it through ``TIKTOKEN_ENCODINGS_BASE``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pawlette
from bench.tables import Table, load_average, machine_facts, version_of

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""tiktoken's ``o200k_base`` pattern (``tiktoken_ext/openai_public.py``)."""

REASONING = (
    "The user asks for the weather in Paris for the next three days, in Celsius. "
    "I have a get_weather tool that takes a city, a unit and a list of day offsets. "
) * 5
CONTENT = (
    "Let me look that up for you: I will ask the weather service for Paris, "
    "today and the two days after, in degrees Celsius. "
) * 5
ARGUMENTS = {
    "city": "Paris",
    "country": "FR",
    "unit": "celsius",
    "days": [0, 1, 2],
    "details": ["temperature", "precipitation", "wind", "humidity", "uv index"],
    "note": "Morning, afternoon and evening values, with the hourly extremes. " * 13,
}
TEMPLATE = {
    "start_anchor": "[AST]",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>\n"},
        "content": {"close_pattern": r"\n(?=<call>)|<end>"},
        "tool_calls": {
            "open": "<call>",
            "close": "</call>",
            "content": "json",
            "repeats": True,
            "transform": {
                "id": "{content.id}",
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
            },
        },
    },
}
"""A transformers response template that reads a PCML assistant turn."""


def cache_directory() -> Path:
    configured = os.environ.get("PAWLETTE_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "pawlette"


# ---------------------------------------------------------------------- the turn


def pcml_turn(arguments: dict[str, Any] = ARGUMENTS) -> tuple[str, str]:
    """(the generation prompt, the completion) for PCML: reasoning, text, one call, end."""
    fmt = pawlette.get_format("pcml")
    question = [{"role": "user", "content": "What's the weather in Paris this week?"}]
    message = {
        "role": "assistant",
        "reasoning_content": REASONING,
        "content": CONTENT,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps(arguments)},
            }
        ],
    }
    prompt = fmt.render(question, add_generation_prompt=True).text
    full = fmt.render([*question, message]).text
    completion = full[len(prompt) :]
    end = completion.index("<end>") + len("<end>")  # where the engine stops
    return prompt, completion[:end]


def expected() -> tuple[str, str, str, Any]:
    return REASONING.strip(), CONTENT.strip(), "get_weather", ARGUMENTS


def check(side: str, reasoning: str, content: str, name: str, arguments: Any) -> None:
    got = (reasoning.strip(), content.strip(), name, arguments)
    if got != expected():
        raise SystemExit(f"bench.parse: {side} parsed the turn differently: {got!r}")


# ---------------------------------------------------------------------- timing


def interleaved(
    sides: dict[str, Callable[[], object]],
    calls: int | dict[str, int],
    rounds: int,
    *,
    clock: Callable[[], float] = time.process_time,
) -> dict[str, tuple[float, float, float]]:
    """Per side: (best CPU s/call, median CPU s/call, best wall s/call); sides alternate.
    ``calls``: per round, for every side or per side (so a side 30 times slower than the
    other does not make the round 30 times longer).
    ``clock``: the CPU clock (the process's by default; ``time.thread_time`` for work done
    on the calling thread alone, which other threads' work cannot reach)."""
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    wall: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    counts = calls if isinstance(calls, dict) else dict.fromkeys(names, calls)
    for number in range(rounds):
        order = names if number % 2 == 0 else names[::-1]
        for name in order:
            function = sides[name]
            count = counts[name]
            cpu_start, wall_start = clock(), time.perf_counter()
            for _ in range(count):
                function()
            cpu[name].append((clock() - cpu_start) / count)
            wall[name].append((time.perf_counter() - wall_start) / count)
    return {name: (min(cpu[name]), statistics.median(cpu[name]), min(wall[name])) for name in names}


# ---------------------------------------------------------------------- vocabularies


def o200k_file() -> Path:
    """o200k_base's rank file, from the litellm wheel (downloaded once into the cache)."""
    folder = cache_directory() / "harmony"
    target = folder / "o200k_base.tiktoken"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    wheels = cache_directory() / "litellm"
    if not any(wheels.glob("litellm-*.whl")):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "litellm", "-d", str(wheels)],
            check=True,
        )
    cache_name = hashlib.sha1(O200K_URL.encode()).hexdigest()
    wheel = sorted(wheels.glob("litellm-*.whl"))[-1]
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(f"litellm/litellm_core_utils/tokenizers/{cache_name}")
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise SystemExit(f"bench.parse: {wheel} holds a different o200k_base file")
    target.write_bytes(data)
    return target


def harmony_encoding() -> Any:
    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", str(o200k_file().parent))
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


# ---------------------------------------------------------------------- whole turn

PCML_TEMPLATE = {
    "start_anchor": "[AST]",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {"close": "<end>"},
        "tool_calls": {
            "open": "<call>",
            "close": "</call>",
            "content": "json",
            "repeats": True,
            "transform": {
                "id": "{content.id}",
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
            },
        },
    },
}
"""A transformers response template that reads a PCML assistant turn, with literal markers
(faster in transformers than ``TEMPLATE``'s pattern for the content's end: the best of the
spellings tried; both read the same messages, stripped as transformers strips text)."""

SHAPE_NAMES = ("small", "prose", "turn", "parallel", "nested", "long string")
"""The whole-turn shapes, each the same message in every format (see :func:`shape_message`)."""


def _call(number: int, arguments: dict[str, Any], name: str = "get_weather") -> dict[str, Any]:
    return {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def shape_message(shape: str) -> dict[str, Any]:
    """The assistant message of a whole-turn shape: ``small`` (a sentence and one short
    call), ``prose`` (2.7 KB of text, no call), ``turn`` (the 2.5 KB reasoning, text and
    call of the per-token comparison), ``parallel`` (three short calls), ``nested``
    (arguments holding an array of 200 objects, 13.5 KB) and ``long string`` (one 80 KB
    string with quotes and backslashes)."""
    if shape == "small":
        return {"content": "Let me check.", "tool_calls": [_call(0, {"city": "Paris"})]}
    if shape == "prose":
        sentence = "The weather in Paris is mild this week, with some rain on Tuesday. "
        return {"content": (sentence * 40).strip()}
    if shape == "turn":
        return {
            "reasoning_content": REASONING,
            "content": CONTENT,
            "tool_calls": [_call(0, ARGUMENTS)],
        }
    if shape == "parallel":
        cities = ("Paris", "Lyon", "Nice")
        return {
            "content": None,
            "tool_calls": [_call(n, {"city": c, "unit": "celsius"}) for n, c in enumerate(cities)],
        }
    if shape == "nested":
        rows = [
            {"id": n, "name": f"item {n}", "tags": ["a", "b"], "price": n * 1.5} for n in range(200)
        ]
        return {"content": None, "tool_calls": [_call(0, {"rows": rows}, "store")]}
    if shape == "long string":
        text = 'lorem ipsum dolor sit amet, "quoted" \\ ' * 2000
        return {"content": None, "tool_calls": [_call(0, {"path": "a.txt", "text": text}, "store")]}
    raise ValueError(f"unknown shape {shape!r}")


def shape_prompt(name: str) -> str:
    """Format ``name``'s generation prompt before a shape's completion."""
    fmt = pawlette.get_format(name)
    return fmt.render(QUESTION, tools=TOOLS, add_generation_prompt=True).text


QUESTION = [{"role": "user", "content": "What's the weather in Paris this week?"}]
PROMPT_TAILS = {"gemma4": "<|channel>thought\n<channel|>"}
"""The end of a format's generation prompt that its turn as written in a conversation leaves
out (Gemma 4's prompt closes an empty thought): the completion is taken from before it, as
a model with thinking on writes its turn."""


def shape_completion(name: str, shape: str) -> str:
    """Format ``name``'s completion of a shape's message, up to and with its stop marker:
    the text after the generation prompt, less the tail of it a written turn leaves out
    (:data:`PROMPT_TAILS`), or after what both share (see below)."""
    fmt = pawlette.get_format(name)
    message = {"role": "assistant", **shape_message(shape)}
    prompt = shape_prompt(name)
    full = fmt.render([*QUESTION, message], tools=TOOLS).text
    shared = len(prompt) - len(PROMPT_TAILS.get(name, ""))
    if not full.startswith(prompt[:shared]):
        # A prompt that opens or closes reasoning the written turn spells otherwise (Qwen
        # 3.5's closed thought, MiniMax-M2's open one): the turn from after the last line
        # or marker both share.
        length = next(
            (at for at, pair in enumerate(zip(prompt, full, strict=False)) if pair[0] != pair[1]),
            min(len(prompt), len(full)),
        )
        common = full[:length]
        shared = max(common.rfind("\n"), common.rfind(">")) + 1
    completion = full[shared:]
    stop = STOP.get(name) or FAMILY_STOP.get(name)
    if stop is None or stop not in completion:  # a turn that ends with the text (GLM)
        return completion
    return completion[: completion.index(stop) + len(stop)]


FAMILY_FORMATS = ("llama3", "hermes", "glm", "chatml:qwen3.5", "gemma4", "seed_oss", "minimax_m2")
"""Declared families' formats whose whole turns are measured too (a shape a format cannot
write, such as Llama 3's parallel calls, is left out)."""
FAMILY_STOP = {"hermes": "<|im_end|>", "chatml:qwen3.5": "<|im_end|>", "gemma4": "<turn|>"}
"""Where a family's completion stops, when its turn has a stop marker STOP does not list."""
FAMILY_PEER_TEMPLATES = {"hermes": "chatml"}
"""A family whose completion transformers' response template of another format reads as
written (Hermes spells calls as Qwen does): that template is its peer."""
TRANSFORMERS_TEMPLATES = {
    "chatml": ("qwen3", "transformers' own, for qwen2/qwen3 models"),
    "chatml:qwen3.5": ("qwen3_5", "transformers' own, for qwen3_5 models"),
    "gemma4": ("gemma4", "transformers' own, for gemma4 models"),
}
"""Formats whose calls a response template transformers ships reads (its server's
fallbacks by model type); the other families have none in transformers, and their rows give
pawlette's time alone."""
PEER_PREFIX = frozenset({"chatml:qwen3.5"})
"""Formats whose transformers template reads the completion only after the generation
prompt (Qwen 3.5's prompt opens the reasoning the completion closes): transformers is given
the prompt as ``prefix``, as its server gives it."""
TEXT_PARAMETERS = frozenset({"chatml:qwen3.5"})
"""Formats whose transformers template keeps each tagged parameter as its text (its
``xml-inline`` reading, with no tool schemas), stripped: where pawlette types a parameter
(JSON where it reads as JSON), the two are compared on the decoded text."""


def peer_templates() -> dict[str, tuple[dict[str, Any], str]]:
    """Per format, the transformers response template its users would hold, and where it
    comes from: chatml's is transformers' own (the one its server uses for Qwen2/Qwen3
    models); PCML has none in transformers, so ``PCML_TEMPLATE``."""
    templates: dict[str, tuple[dict[str, Any], str]] = {
        "pcml": (PCML_TEMPLATE, "written for this benchmark (literal markers)")
    }
    try:
        from transformers.cli.serving.utils import _RESPONSE_TEMPLATE_FALLBACKS
    except ImportError:
        return templates
    for name, (model_type, source) in TRANSFORMERS_TEMPLATES.items():
        for model_types, template in _RESPONSE_TEMPLATE_FALLBACKS.items():
            if model_type in model_types:
                templates[name] = (template, source)
    return templates


def comparable(
    message: dict[str, Any], *, decoded: bool, text_parameters: bool = False
) -> tuple[Any, ...]:
    """What both sides must agree on: reasoning and content (stripped: transformers strips
    text), each call's name and arguments (decoded).  ``text_parameters``: each argument that
    is a string is stripped and read as JSON where it reads so (see TEXT_PARAMETERS)."""
    calls = tuple(
        (
            call["function"]["name"],
            call["function"]["arguments"] if decoded else json.loads(call["function"]["arguments"]),
        )
        for call in message.get("tool_calls") or ()
    )
    if text_parameters:
        calls = tuple((name, _as_text_parameters(arguments)) for name, arguments in calls)
    return (
        (message.get("reasoning_content") or "").strip(),
        (message.get("content") or "").strip(),
        json.dumps(calls, sort_keys=True),
    )


def _as_text_parameters(arguments: dict[str, Any]) -> dict[str, Any]:
    read = {}
    for key, value in arguments.items():
        if isinstance(value, str):
            value = value.strip()
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        read[key] = value
    return read


def whole_turns(
    formats: tuple[str, ...] = ("pcml", "chatml"),
    shapes: tuple[str, ...] = SHAPE_NAMES,
    rounds: int = 7,
    budget: float = 0.05,
) -> Table:
    """``Format.parse`` against transformers' ``parse_response`` with the format's response
    template loaded once (``load_response_template``, as a server holds it), on the
    completion alone (``prefix=""``: the turn's own text, no prompt to search), per format
    and shape; the sides interleaved in every round, thread CPU time and wall time, best and
    median.  Each side's message is checked against the other's first."""
    from transformers.utils.chat_parsing.response_templates import load_response_template

    table = Table(
        "Whole-turn parse: pawlette Format.parse against transformers' parse_response",
        [
            "format",
            "shape",
            "bytes",
            "pawlette µs CPU (median)",
            "transformers µs CPU (median)",
            "pawlette / transformers CPU",
            "wall µs: pawlette, transformers",
        ],
    )
    table.facts.update(machine_facts())
    table.facts["load average at start"] = load_average()
    table.facts["peer"] = (
        f"transformers {version_of('transformers')} parse_response(completion, template, "
        'prefix=""), the template loaded once with load_response_template'
    )
    templates = peer_templates()
    sources = []
    for name in formats:
        borrowed = FAMILY_PEER_TEMPLATES.get(name, name)
        compiled = None
        if borrowed in templates:
            template, source = templates[borrowed]
            if name in PEER_PREFIX:
                source += ", given the generation prompt as prefix"
            if name in TEXT_PARAMETERS:
                source += " (it keeps parameters as text; pawlette types them)"
            sources.append(f"{name}: {source}" + ("" if borrowed == name else f" ({borrowed}'s)"))
            compiled = load_response_template(template)
        elif name not in FAMILY_FORMATS:
            continue
        else:
            sources.append(f"{name}: none in transformers (pawlette alone)")
        for shape in shapes:
            row = _whole_turn_row(name, shape, compiled, rounds, budget)
            if row is not None:
                table.rows.append(row)
    table.facts["templates"] = "; ".join(sources)
    table.facts["timing"] = (
        f"best and median of {rounds} rounds, the sides taking turns (order reversed every "
        f"other round), each side about {budget * 1000:.0f} ms of calls a round (at least 5), "
        "thread CPU time per call (time.thread_time) and wall time"
    )
    table.facts["load average at end"] = load_average()
    table.notes.append(
        "pawlette returns the OpenAI message (arguments as JSON text, checked: strict JSON, "
        "nesting at most 100, numbers within a double) and a core Message; transformers "
        "returns a dict whose arguments are decoded."
    )
    return table


def _whole_turn_row(
    name: str, shape: str, compiled: Any, rounds: int, budget: float
) -> list[str] | None:
    """A row of :func:`whole_turns`; None when the format cannot write the shape."""
    from transformers.utils.chat_parsing.response_parser import parse_response

    fmt = pawlette.get_format(name)
    try:
        text = shape_completion(name, shape)
    except pawlette.RequestError:  # (Llama 3: no parallel calls)
        return None
    ours = fmt.parse(text).message
    if compiled is None:
        alone = interleaved(
            {"pawlette": lambda: fmt.parse(text)},
            max(5, int(budget / _once(lambda: fmt.parse(text)))),
            rounds,
            clock=time.thread_time,
        )
        cpu, median, wall = alone["pawlette"]
        return [
            name,
            shape,
            f"{len(text.encode()):,}",
            f"{cpu * 1e6:,.1f} ({median * 1e6:,.1f})",
            "no template",
            "",
            f"{wall * 1e6:,.1f}, -",
        ]
    prefix = shape_prompt(name) if name in PEER_PREFIX else ""
    theirs = parse_response(text, compiled, prefix=prefix)
    textual = name in TEXT_PARAMETERS
    if comparable(ours, decoded=False, text_parameters=textual) != comparable(
        theirs, decoded=True, text_parameters=textual
    ):
        raise SystemExit(f"bench.peers: {name} {shape}: the sides parse differently")

    def pawlette_side() -> object:
        return fmt.parse(text)

    def transformers_side() -> object:
        return parse_response(text, compiled, prefix=prefix)

    calls = {
        "pawlette": max(5, int(budget / _once(pawlette_side))),
        "transformers": max(5, int(budget / _once(transformers_side))),
    }
    results = interleaved(
        {"pawlette": pawlette_side, "transformers": transformers_side},
        calls,
        rounds,
        clock=time.thread_time,
    )
    ours_cpu, ours_median, ours_wall = results["pawlette"]
    peer_cpu, peer_median, peer_wall = results["transformers"]
    return [
        name,
        shape,
        f"{len(text.encode()):,}",
        f"{ours_cpu * 1e6:,.1f} ({ours_median * 1e6:,.1f})",
        f"{peer_cpu * 1e6:,.1f} ({peer_median * 1e6:,.1f})",
        f"**{ours_cpu / peer_cpu:.2f}x**",
        f"{ours_wall * 1e6:,.1f}, {peer_wall * 1e6:,.1f}",
    ]


def fixed_cost(rounds: int = 7, calls: int = 5000) -> Table:
    """The fixed cost of a completion: ``Format.parse`` of the shortest turn (its end
    marker alone), per format, and a parser made and finished with nothing fed."""
    table = Table(
        "The fixed cost of a completion",
        ["format", "completion", "µs CPU (median)"],
    )
    table.facts.update(machine_facts())
    table.facts["load average at start"] = load_average()
    for name in PER_TOKEN_FORMATS:
        fmt = pawlette.get_format(name)
        text = STOP[name] if name == "pcml" else ""
        results = interleaved(
            {
                "parse": lambda fmt=fmt, text=text: fmt.parse(text),  # type: ignore[misc]
            },
            calls,
            rounds,
            clock=time.thread_time,
        )
        best, median, _ = results["parse"]
        table.rows.append([name, repr(text), f"{best * 1e6:.2f} ({median * 1e6:.2f})"])
    table.facts["load average at end"] = load_average()
    return table


def _once(function: Callable[[], object]) -> float:
    """CPU seconds of one call, after one warm-up call."""
    function()
    start = time.thread_time()
    function()
    return max(time.thread_time() - start, 1e-6)


def whole_turn(calls: int, rounds: int) -> None:
    """The comparisons above, printed (``python -m bench.parse`` calls this)."""
    print()
    print(fixed_cost(rounds).text())
    print()
    print(whole_turns(formats=("pcml", "chatml", *FAMILY_FORMATS), rounds=rounds).text())


def _table(results: dict[str, tuple[float, float, float]], unit: str, per: int) -> None:
    _rows({name: (values, per) for name, values in results.items()}, unit)


def _rows(results: dict[str, tuple[tuple[float, float, float], int]], unit: str) -> None:
    """Per side: best and median CPU, best wall, per ``unit``; then pawlette over the peer."""
    print(f"  {'side':34}{'CPU us/' + unit:>14}{'(median)':>10}{'wall us/' + unit:>14}")
    each = {}
    for name, ((best, median, wall), count) in results.items():
        each[name] = best / count
        print(
            f"  {name:34}{best / count * 1e6:>14.2f}{median / count * 1e6:>10.2f}"
            f"{wall / count * 1e6:>14.2f}"
        )
    names = list(each)
    if len(names) == 2:
        ours, peer = names
        print(f"  {ours} / {peer}: {each[ours] / each[peer]:.2f}x the CPU time per {unit}")


# ---------------------------------------------------------------------- per token

PER_TOKEN_FORMATS = ("pcml", "chatml", "llama3", "breeze", "chatglm3", "omni")
TURN_PARTS: dict[str, tuple[str, ...]] = {
    "pcml": ("reasoning", "content", "call"),
    "chatml": ("reasoning", "content", "call"),
    "omni": ("reasoning", "content", "call"),
    "chatglm3": ("content", "call"),  # no reasoning block
    "llama3": ("call",),  # a turn is text or one call, no reasoning
    "breeze": ("call",),  # the same
}
"""What each format's turn holds: the bench's reasoning, text and call where it can write
them (the render refuses the rest: these are the most of the turn each format writes)."""
STOP = {
    "pcml": "<end>",
    "chatml": "<|im_end|>",
    "llama3": "<|eot_id|>",
    "breeze": "<|eot_id|>",
    "chatglm3": "<|observation|>",
    "omni": "<|FUNCTION_RETURN|>",
}
"""Where the engine stops each format's turn (its stop marker, included)."""
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


def format_turn(name: str, arguments: dict[str, Any] = ARGUMENTS) -> str:
    """The completion of ``name``'s turn holding ``TURN_PARTS[name]``, up to its stop."""
    if name == "pcml":
        return pcml_turn(arguments)[1]
    fmt = pawlette.get_format(name)
    parts = TURN_PARTS[name]
    question = [{"role": "user", "content": "What's the weather in Paris this week?"}]
    message: dict[str, Any] = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps(arguments)},
            }
        ],
    }
    if "reasoning" in parts:
        message["reasoning_content"] = REASONING
    if "content" in parts:
        message["content"] = CONTENT
    prompt = fmt.render(question, tools=TOOLS, add_generation_prompt=True).text
    full = fmt.render([*question, message], tools=TOOLS).text
    completion = full[len(prompt) :]
    end = completion.index(STOP[name]) + len(STOP[name])
    return completion[:end]


def harmony_parts_turn(parts: tuple[str, ...], arguments: dict[str, Any] = ARGUMENTS) -> str:
    """Harmony's turn with the same parts (after ``<|start|>assistant``)."""
    messages = []
    if "reasoning" in parts:
        messages.append(f"<|channel|>analysis<|message|>{REASONING}<|end|>")
    if "content" in parts:
        messages.append(f"<|channel|>commentary<|message|>{CONTENT}<|end|>")
    messages.append(
        "<|channel|>commentary to=functions.get_weather "
        f"<|constrain|>json<|message|>{json.dumps(arguments)}<|call|>"
    )
    return "<|start|>assistant".join(messages)


def check_parts(
    side: str, parts: tuple[str, ...], reasoning: str, content: str, name: str, arguments: Any
) -> None:
    want = (
        REASONING.strip() if "reasoning" in parts else "",
        CONTENT.strip() if "content" in parts else "",
        "get_weather",
        ARGUMENTS,
    )
    got = (reasoning.strip(), content.strip(), name, arguments)
    if got != want:
        raise SystemExit(f"bench.peers: {side} parsed the turn differently: {got!r}")


def o200k_tokenizer(name: str) -> Any:
    """o200k_base as a ``tokenizers.Tokenizer`` with ``name``'s markers as special tokens."""
    from tokenizers import Tokenizer

    from pawlette.tokenization import tokenizer_from_tiktoken

    cached = cache_directory() / "harmony" / f"o200k_{name}.json"
    if cached.is_file():
        return Tokenizer.from_file(str(cached))
    markers = pawlette.get_format(name).special_markers
    tokenizer = tokenizer_from_tiktoken(
        o200k_file(),
        pattern=O200K_PATTERN,
        special_tokens={marker: 201_000 + number for number, marker in enumerate(markers)},
    )
    tokenizer.save(str(cached))
    return tokenizer


def _pawlette_side(name: str) -> tuple[Callable[[], list[Any]], int]:
    """A run of ``IdParser`` over ``name``'s turn one id at a time (checked), and its ids."""
    from pawlette.engine.fold import fold
    from pawlette.tokenization import IdParser

    fmt = pawlette.get_format(name)
    tokenizer = o200k_tokenizer(name)
    ids = tokenizer.encode(format_turn(name), add_special_tokens=False).ids

    def run() -> list[Any]:
        parser = IdParser(fmt, tokenizer)
        events = []
        for token in ids:
            events += parser.feed_ids((token,))
        return events + parser.finish()

    message = pawlette.openai.message_to_openai(fold(run(), fmt.grammar.fields).messages[0])
    calls = message.get("tool_calls") or [{"function": {"name": "", "arguments": "null"}}]
    check_parts(
        f"pawlette IdParser ({name})",
        TURN_PARTS[name],
        message.get("reasoning_content") or "",
        message.get("content") or "",
        calls[0]["function"]["name"],
        json.loads(calls[0]["function"]["arguments"]),
    )
    return run, len(ids)


def _harmony_side(
    encoding: Any, parts: tuple[str, ...], *, wrapped: bool = False
) -> tuple[Callable[[], Any], int]:
    """A run of harmony's ``StreamableParser`` over its turn with ``parts`` (checked).

    The Rust parser is called directly (``process`` and ``last_content_delta`` of the object
    the Python class wraps, as that class itself calls them), so the per-token comparison is
    with the Rust engine, not with a Python method call around it; ``wrapped``: through the
    Python class, a variant that favours pawlette."""
    from openai_harmony import Role, StreamableParser

    ids = encoding.encode(harmony_parts_turn(parts), allowed_special="all")

    def run() -> Any:
        parser = StreamableParser(encoding, role=Role.ASSISTANT)
        deltas = []
        if wrapped:
            for token in ids:
                parser.process(token)
                delta = parser.last_content_delta
                if delta:
                    deltas.append(delta)
            return parser
        inner = parser._inner  # the Rust StreamableParser
        process = inner.process
        for token in ids:
            process(token)
            delta = inner.last_content_delta
            if delta:
                deltas.append(delta)
        return parser

    messages = list(run().messages)
    tool = messages.pop()
    reasoning = messages.pop(0).content[0].text if "reasoning" in parts else ""
    content = messages.pop(0).content[0].text if "content" in parts else ""
    check_parts(
        f"harmony ({'+'.join(parts)})",
        parts,
        reasoning,
        content,
        (tool.recipient or "").removeprefix("functions."),
        json.loads(tool.content[0].text),
    )
    return run, len(ids)


def per_token(rounds: int, formats: tuple[str, ...] = PER_TOKEN_FORMATS) -> dict[str, float]:
    """Per format: ``IdParser`` over o200k + the format's markers, one id at a time, on the
    format's turn, against harmony on a turn of the same parts; the sides interleaved.
    Returns the best CPU µs/token of each side."""
    print("\nper-token parse from token ids, one id at a time (each side checked first)")
    try:
        encoding = harmony_encoding()
        import openai_harmony  # noqa: F401
    except (ImportError, OSError, subprocess.CalledProcessError) as error:
        print(f"  (openai-harmony or the o200k file unavailable: {error}; pip install .[bench])")
        return {}
    sides: dict[str, Callable[[], object]] = {}
    tokens: dict[str, int] = {}
    for name in formats:
        sides[name], tokens[name] = _pawlette_side(name)
    compositions = sorted({TURN_PARTS[name] for name in formats}, key=len, reverse=True)
    for parts in compositions:
        label = "harmony " + "+".join(parts)
        sides[label], tokens[label] = _harmony_side(encoding, parts)
    wrapped = "harmony, Python wrapper, " + "+".join(compositions[0])
    sides[wrapped], tokens[wrapped] = _harmony_side(encoding, compositions[0], wrapped=True)
    results = interleaved(sides, 20, rounds, clock=time.thread_time)
    best = {side: results[side][0] / tokens[side] * 1e6 for side in sides}
    median = {side: results[side][1] / tokens[side] * 1e6 for side in sides}
    full = "harmony " + "+".join(compositions[0])
    print(
        f"  {'format':9}{'turn':25}{'tokens':>7}{'CPU us/token':>14}{'(median)':>10}"
        f"{'harmony same turn':>19}{'ratio':>7}{'vs largest turn':>17}"
    )
    for name in formats:
        parts = TURN_PARTS[name]
        peer = "harmony " + "+".join(parts)
        print(
            f"  {name:9}{'+'.join(parts):25}{tokens[name]:>7}{best[name]:>14.2f}"
            f"{median[name]:>10.2f}{best[peer]:>13.2f} ({tokens[peer]})"
            f"{best[name] / best[peer]:>6.2f}x{best[name] / best[full]:>16.2f}x"
        )
    for parts in compositions:
        label = "harmony " + "+".join(parts)
        print(f"  {label:34}{tokens[label]:>7}{best[label]:>14.2f}{median[label]:>10.2f}")
    print(
        f"  {wrapped:34}{tokens[wrapped]:>7}{best[wrapped]:>14.2f}{median[wrapped]:>10.2f}"
        "  (favours pawlette: a Python call around each Rust call)"
    )
    print(
        "  (ratio: pawlette's CPU per token over harmony's on a turn of the same parts; vs "
        f"largest turn: over {full}'s; the turns differ in tokens: o200k spells each "
        "format's syntax its own way)"
    )
    return best


# ---------------------------------------------------------------------- peak memory


def peak_memory(megabytes: float) -> None:
    """Peak memory streaming one big call, per format and feed: see ``bench.stream_memory``."""
    from bench import stream_memory

    print()
    stream_memory.table(
        list(stream_memory.FORMATS), list(stream_memory.FEEDS), megabytes, harmony=True
    )


def main() -> int:
    """``python -m bench.peers``: the per-token comparison alone, every format."""
    import argparse

    options = argparse.ArgumentParser(description="per-token parse against openai-harmony")
    options.add_argument("--rounds", type=int, default=7)
    options.add_argument("--formats", default=",".join(PER_TOKEN_FORMATS))
    arguments = options.parse_args()
    print("load average at start: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    print(f"pawlette {pawlette.__version__} from {Path(pawlette.__file__).parent}")
    per_token(arguments.rounds, tuple(arguments.formats.split(",")))
    print("load average at end: " + " ".join(f"{load:.2f}" for load in os.getloadavg()))
    return 0


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="parse-per-token",
        title="Parsing from token ids, per token, against openai-harmony",
        what=(
            "One assistant turn per format (reasoning, text and a call where the format "
            "writes them) rendered and fed to `IdParser` one token id at a time (o200k_base "
            "with the format's markers added), against openai-harmony's Rust "
            "`StreamableParser` on a harmony turn of the same parts; every side's result is "
            "checked before timing. CPU time per token, best of 7 rounds of 20 parses, making "
            "the parser included."
        ),
        peer="openai-harmony (`StreamableParser`, the version installed by the `bench` extra)",
    )
    sys.exit(pages.run(main, PAGE))
