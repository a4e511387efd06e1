"""Fuzz pawlette with generated hostile input: ``python -m bench.fuzz``.

Each *target* makes one input from a seeded :class:`random.Random`, runs it through pawlette
and reports what broke a contract, as short strings whose first word is the kind of problem
(``crash``, ``invalid call``, ``lost``, ``duplicated``, anything else: two paths disagree).
The run prints, per target and format, the inputs tried and the count of each kind (all
must be zero; the exit status is 1 otherwise) and the first few failing inputs.

Targets are a list, :data:`TARGETS`; add one with :func:`register` (a request-validation,
Prompter or server target takes the same shape: ``check(format, rng) -> (input, problems)``).

    python -m bench.fuzz                         # 100,000 inputs per format and target
    python -m bench.fuzz --inputs 2000 --seed 7 --formats pcml omni --targets parsers
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
    parser.add_argument("--formats", nargs="*", default=pawlette.formats())
    parser.add_argument("--targets", nargs="*", default=[t.name for t in TARGETS])
    arguments = parser.parse_args(argv)
    chosen = [t for t in TARGETS if t.name in arguments.targets]
    tallies = run(chosen, arguments.formats, arguments.inputs, arguments.seed)
    print(report(tallies))
    failed = any(sum((t.counts or Counter()).values()) for t in tallies.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
