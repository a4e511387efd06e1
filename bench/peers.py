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


def harmony_turn(arguments: dict[str, Any] = ARGUMENTS) -> str:
    """The same contents in harmony, after ``<|start|>assistant`` (the parser's role)."""
    return (
        f"<|channel|>analysis<|message|>{REASONING}<|end|>"
        f"<|start|>assistant<|channel|>commentary<|message|>{CONTENT}<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather "
        f"<|constrain|>json<|message|>{json.dumps(arguments)}<|call|>"
    )


def expected() -> tuple[str, str, str, Any]:
    return REASONING.strip(), CONTENT.strip(), "get_weather", ARGUMENTS


def check(side: str, reasoning: str, content: str, name: str, arguments: Any) -> None:
    got = (reasoning.strip(), content.strip(), name, arguments)
    if got != expected():
        raise SystemExit(f"bench.parse: {side} parsed the turn differently: {got!r}")


# ---------------------------------------------------------------------- timing


def interleaved(
    sides: dict[str, Callable[[], object]], calls: int, rounds: int
) -> dict[str, tuple[float, float, float]]:
    """Per side: (best CPU s/call, median CPU s/call, best wall s/call); sides alternate."""
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    wall: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for number in range(rounds):
        order = names if number % 2 == 0 else names[::-1]
        for name in order:
            function = sides[name]
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            for _ in range(calls):
                function()
            cpu[name].append((time.process_time() - cpu_start) / calls)
            wall[name].append((time.perf_counter() - wall_start) / calls)
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


def pcml_o200k_tokenizer() -> Any:
    """o200k_base as a ``tokenizers.Tokenizer`` with PCML's markers as special tokens."""
    from tokenizers import Tokenizer

    from pawlette.tokenizers import tokenizer_from_tiktoken

    cached = cache_directory() / "harmony" / "o200k_pcml.json"
    if cached.is_file():
        return Tokenizer.from_file(str(cached))
    markers = pawlette.get_format("pcml").special_markers
    tokenizer = tokenizer_from_tiktoken(
        o200k_file(),
        pattern=O200K_PATTERN,
        special_tokens={marker: 201_000 + number for number, marker in enumerate(markers)},
    )
    tokenizer.save(str(cached))
    return tokenizer


def harmony_encoding() -> Any:
    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", str(o200k_file().parent))
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


# ---------------------------------------------------------------------- whole turn


def whole_turn(calls: int, rounds: int) -> None:
    prompt, turn = pcml_turn()
    fmt = pawlette.get_format("pcml")
    print(f"\nwhole-turn parse of a {len(turn.encode()):,}-byte PCML turn (reasoning, text, call)")
    sides: dict[str, Callable[[], object]] = {"pawlette Format.parse": lambda: fmt.parse(turn)}
    message = fmt.parse(turn).message
    call = message["tool_calls"][0]["function"]
    check(
        "pawlette",
        message["reasoning_content"],
        message["content"],
        call["name"],
        json.loads(call["arguments"]),
    )
    try:
        from transformers.utils.chat_parsing.response_parser import parse_response
    except ImportError:
        print("  (transformers 5 not installed: no peer)")
    else:
        theirs = parse_response(turn, TEMPLATE, prefix=prompt)
        function = theirs["tool_calls"][0]["function"]
        check(
            "transformers",
            theirs["reasoning_content"],
            theirs["content"],
            function["name"],
            function["arguments"],
        )
        sides["transformers parse_response"] = lambda: parse_response(turn, TEMPLATE, prefix=prompt)
    _table(interleaved(sides, calls, rounds), "call", 1)


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


def per_token(rounds: int) -> None:
    print("\nper-token parse of the same turn from token ids, one id at a time")
    try:
        tokenizer = pcml_o200k_tokenizer()
        encoding = harmony_encoding()
        from openai_harmony import Role, StreamableParser
    except (ImportError, OSError, subprocess.CalledProcessError) as error:
        print(f"  (openai-harmony or the o200k file unavailable: {error}; pip install .[bench])")
        return
    from pawlette.engine.fold import fold
    from pawlette.tokenization import IdParser

    fmt = pawlette.get_format("pcml")
    _, turn = pcml_turn()
    ours = tokenizer.encode(turn, add_special_tokens=False).ids
    theirs = encoding.encode(harmony_turn(), allowed_special="all")

    def run_ours() -> list[Any]:
        parser = IdParser(fmt, tokenizer)
        events = []
        for token in ours:
            events += parser.feed_ids((token,))
        return events + parser.finish()

    def run_theirs() -> Any:
        parser = StreamableParser(encoding, role=Role.ASSISTANT)
        deltas = []
        for token in theirs:
            parser.process(token)
            delta = parser.last_content_delta
            if delta:
                deltas.append(delta)
        return parser

    folded = fold(run_ours(), fmt.grammar.fields).messages[0]
    message = pawlette.openai.message_to_openai(folded)
    call = message["tool_calls"][0]["function"]
    check(
        "pawlette IdParser",
        message["reasoning_content"],
        message["content"],
        call["name"],
        json.loads(call["arguments"]),
    )
    analysis, preamble, tool = run_theirs().messages
    check(
        "harmony",
        analysis.content[0].text,
        preamble.content[0].text,
        (tool.recipient or "").removeprefix("functions."),
        json.loads(tool.content[0].text),
    )
    print(f"  tokens: pawlette {len(ours)} (o200k + PCML markers), harmony {len(theirs)}")
    sides = {"pawlette IdParser": run_ours, "harmony StreamableParser": run_theirs}
    results = interleaved(sides, 20, rounds)
    _rows(
        {
            "pawlette IdParser": (results["pawlette IdParser"], len(ours)),
            "harmony StreamableParser": (results["harmony StreamableParser"], len(theirs)),
        },
        "token",
    )


# ---------------------------------------------------------------------- peak memory


def peak_memory(megabytes: float) -> None:
    """Peak memory streaming one big call, per format and feed: see ``bench.stream_memory``."""
    from bench import stream_memory

    print()
    stream_memory.table(
        list(stream_memory.FORMATS), list(stream_memory.FEEDS), megabytes, harmony=True
    )
