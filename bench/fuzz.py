"""Fuzz pawlette with generated hostile input: ``python -m bench.fuzz``.

Each *target* makes one input from a seeded :class:`random.Random`, runs it through pawlette
and reports what broke a contract, as short strings whose first word is the kind of problem
(``crash``, ``invalid call``, ``lost``, ``duplicated``, anything else: two paths disagree).
The run prints, per target and format, the inputs tried and the count of each kind (all
must be zero; the exit status is 1 otherwise) and the first few failing inputs.

Targets are a list, :data:`TARGETS`; add one with :func:`register` (a request-validation,
Prompter or server target takes the same shape: ``check(format, rng) -> (input, problems)``).

    python -m bench.fuzz                         # 100,000 inputs per format and target
    python -m bench.fuzz --inputs 2000           # every format and variant, 2,000 each
    python -m bench.fuzz --inputs 2000 --seed 7 --formats pcml omni --targets parsers
    python -m bench.fuzz --inputs 20000 --targets upstream   # odd engine framing, server side
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pawlette
from bench.registered import every_format
from tests.strategies.completions import completion, problems

KINDS = ("crash", "invalid call", "lost", "duplicated", "disagreement")


@dataclass(frozen=True)
class Target:
    """What to fuzz: ``check(fmt, rng)`` makes one input and returns it and its problems."""

    name: str
    check: Callable[[pawlette.Format, random.Random], tuple[str, list[str]]]
    formats: tuple[str, ...] | None = None
    """The formats it runs on (None: every registered format)."""


TARGETS: list[Target] = []


def register(target: Target) -> Target:
    TARGETS.append(target)
    return target


def _parsers(fmt: pawlette.Format, rng: random.Random) -> tuple[str, list[str]]:
    """One completion (sometimes cut short, as by the length limit), through every parse
    path on one input in ten and through the whole parse (lenient and strict) on the rest."""
    text = completion(fmt, rng)
    reason = rng.choice([None, "stop", "length"])
    if reason == "length" and text and rng.random() < 0.5:
        text = text[: rng.randrange(len(text))]
    return text, problems(fmt, text, rng, reason=reason, paths=rng.random() < 0.1)


register(Target("parsers", _parsers))


def _upstream_framing(fmt: pawlette.Format, rng: random.Random) -> tuple[str, list[str]]:
    """One completion streamed by an engine with odd framing, read as the server reads it
    (serve/http1_response.py, then serve/sse.py): the text, event by event, must come back
    whole, nothing lost or duplicated.  The odd parts: the head's line ends (CRLF, LF, a mix),
    interim 1xx answers, chunk sizes in either case with leading zeros and extensions,
    trailers, gzip, content-length or read-until-close bodies; events in CRLF, LF or lone-CR
    lines, comments, other fields, a payload split over several ``data:`` lines, no blank line
    after the last event; the bytes cut into reads at random places (some one byte each)."""
    import gzip
    import json

    from pawlette.serve.http1_response import ResponseParser
    from pawlette.serve.sse import SSEDecoder

    text = completion(fmt, rng)
    pieces, position = [], 0
    while position < len(text):
        size = rng.choice([1, 2, 3, 7, 20])
        pieces.append(text[position : position + size])
        position += size
    end = rng.choice(["\n", "\r\n", "\r"])
    stream = ""
    for piece in pieces:
        payload = json.dumps(
            {"choices": [{"index": 0, "text": piece}]}, ensure_ascii=rng.random() < 0.5
        )
        if rng.random() < 0.1:
            stream += rng.choice([": keep-alive", "event: completion", "id: 7", "retry: 10"]) + end
        if rng.random() < 0.2 and ", " in payload:  # one payload over two data lines
            first, rest = payload.split(", ", 1)
            stream += f"data: {first},{end}data: {rest}{end}{end}"
        else:
            stream += f"data:{rng.choice([' ', ''])}{payload}{end}{end}"
    stream += "data: [DONE]" + (end + end if rng.random() < 0.8 else "")
    body = stream.encode()
    head_end = rng.choice([b"\r\n", b"\n"])
    lines = [b"HTTP/1.1 200 OK", b"content-type: text/event-stream"]
    if rng.random() < 0.3:
        body = gzip.compress(body)
        lines.append(b"content-encoding: gzip")
    framing = rng.choice(["chunked", "length", "close"])
    if framing == "chunked":
        lines.append(b"transfer-encoding: chunked")
        framed, start = b"", 0
        while start < len(body):
            part = body[start : start + rng.choice([1, 5, 64, 1000])]
            start += len(part)
            size = rng.choice([b"%x", b"%X", b"000%x", b"%x;ext=1"]) % len(part)
            framed += size + b"\r\n" + part + b"\r\n"
        body = framed + b"0\r\n" + rng.choice([b"", b"x-trailer: 1\r\n"]) + b"\r\n"
    elif framing == "length":
        lines.append(b"content-length: %d" % len(body))
    else:
        lines.append(b"connection: close")
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" if rng.random() < 0.1 else b""
    data = interim + b"".join(line + rng.choice([head_end, b"\r\n"]) for line in lines)
    data += head_end + body
    parser, decoder = ResponseParser(), SSEDecoder()
    payloads: list[str] = []
    position = 0
    try:
        while position < len(data):
            step = 1 if rng.random() < 0.3 else rng.randint(1, 200)
            payloads += decoder.feed(parser.feed(data[position : position + step]))
            position += step
        if not parser.done:
            payloads += decoder.feed(parser.close())
        payloads += decoder.finish()
    except Exception as error:  # any exception is the finding
        return text, [f"crash: {type(error).__name__}: {error}"]
    if not payloads or payloads[-1] != "[DONE]":
        return text, [f"lost: the stream's end ([DONE]) (payloads {payloads[-2:]!r})"]
    got = "".join(json.loads(payload)["choices"][0]["text"] for payload in payloads[:-1])
    if got == text:
        return text, []
    kind = "duplicated" if len(got) > len(text) else "lost"
    return text, [f"{kind}: read {got[:200]!r}, sent {text[:200]!r}"]


register(Target("upstream", _upstream_framing))


def kind_of(problem: str) -> str:
    for kind in KINDS[:-1]:
        if problem.startswith(kind):
            return kind
    return "disagreement"


@dataclass
class Tally:
    inputs: int = 0
    seconds: float = 0.0
    counts: Counter[str] | None = None
    examples: list[tuple[str, str]] | None = None


def run(
    targets: Sequence[Target], formats: Sequence[str], inputs: int, seed: int
) -> dict[tuple[str, str], Tally]:
    """Run every target on every format it takes; the tallies by ``(target, format)``."""
    tallies: dict[tuple[str, str], Tally] = {}
    for target in targets:
        for name in formats:
            if target.formats is not None and name not in target.formats:
                continue
            fmt = pawlette.get_format(name)
            tally = Tally(counts=Counter(), examples=[])
            assert tally.counts is not None and tally.examples is not None
            rng = random.Random(f"{seed}:{target.name}:{name}")
            started = time.perf_counter()
            for _ in range(inputs):
                text, found = target.check(fmt, rng)
                tally.inputs += 1
                for problem in found:
                    tally.counts[kind_of(problem)] += 1
                    if len(tally.examples) < 3:
                        tally.examples.append((text, problem))
            tally.seconds = time.perf_counter() - started
            tallies[(target.name, name)] = tally
    return tallies


def report(tallies: dict[tuple[str, str], Tally]) -> str:
    lines = [
        "| target | format | inputs | " + " | ".join(KINDS) + " | seconds |",
        "|---" * (len(KINDS) + 4) + "|",
    ]
    for (target, name), tally in tallies.items():
        counts = tally.counts or Counter()
        cells = " | ".join(str(counts[kind]) for kind in KINDS)
        lines.append(f"| {target} | {name} | {tally.inputs:,} | {cells} | {tally.seconds:.0f} |")
    for (target, name), tally in tallies.items():
        for text, problem in tally.examples or []:
            lines.append(f"\n{target}/{name}: {problem[:300]}\n  input: {text[:300]!r}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__)
    parser.add_argument("--inputs", type=int, default=100_000, help="per format and target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--formats",
        nargs="*",
        default=every_format(),
        help="names as -f takes them (default: every registered format and variant)",
    )
    parser.add_argument("--targets", nargs="*", default=[t.name for t in TARGETS])
    arguments = parser.parse_args(argv)
    chosen = [t for t in TARGETS if t.name in arguments.targets]
    print(
        f"{arguments.inputs:,} generated inputs per format and target, seed {arguments.seed}, "
        f"{len(arguments.formats)} formats and variants; targets: "
        + ", ".join(target.name for target in chosen)
        + "\n"
    )
    tallies = run(chosen, arguments.formats, arguments.inputs, arguments.seed)
    print(report(tallies))
    failed = any(sum((t.counts or Counter()).values()) for t in tallies.values())
    return 1 if failed else 0


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="fuzz-parsers",
        title="Fuzzing the parsers with generated model output",
        what=(
            "Generated model output for every registered format and each variant of a "
            "declared one (valid calls, malformed calls of every kind, marker spellings in "
            "every text slot, each ending). Target `parsers`: parsed whole (lenient and "
            "strict); one input in ten also a character at a time, in random pieces, with "
            "live arguments, as OpenAI chunks and through the server's pipeline, each of "
            "which must agree with the whole parse; a sentinel in every run of text tells "
            "lost or repeated text. Target `upstream`: the completion streamed by an engine "
            "with odd HTTP and SSE framing, read as the server reads it. Every column but the "
            "inputs and the seconds must be 0."
        ),
        peer="none (the contract is absolute)",
        findings=True,
    )
    sys.exit(pages.run(main, PAGE))
