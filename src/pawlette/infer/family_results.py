"""Results written as a declared family writes them, where no generic concept reads them.

Each candidate is a family's results concept made from the text a result opens with up to
the tool's name: declared with the tool frame that closes a result as the template does, it
must render the probe conversations (one result, two after a turn of two calls, each with
and without the generation prompt) exactly as the template does.  Kimi K3's results are one:
``<|open|>message role="tool" tool="NAME" index="K"<|sep|>`` + text, numbered per run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..declare import declare
from ..declare.concept import Concept
from ..declare.pieces import Fence
from ..errors import PawletteError
from ..formats.kimi.k3 import NamedResults
from .calls import ALPHA, BETA
from .draft import Draft, FrameText
from .probe import Probe, call, message
from .tools import PROBE_TOOLS

__all__ = ["derive_family_results"]

Make = Callable[[Fence], Concept]

CANDIDATES: tuple[tuple[str, Make], ...] = (
    ("named results (Kimi K3)", lambda head: NamedResults(head_open=head)),
)
"""The families' results concepts inference tries, by name, each made from the text a
result opens with up to the tool's name."""


def _conversations(probe: Probe) -> list[list[dict[str, Any]]]:
    user = message("user", probe.sentinel("u", 1))
    first = call("Zi1qabcde", "zq_alpha", ALPHA)
    second = call("Zi2qabcde", "zq_beta", BETA)
    return [
        [
            user,
            message("assistant", None, tool_calls=[first]),
            message("tool", "Zt1q", tool_call_id="Zi1qabcde"),
        ],
        [
            user,
            message("assistant", None, tool_calls=[first, second]),
            message("tool", "Zt1q", tool_call_id="Zi1qabcde"),
            message("tool", "Zt2q", tool_call_id="Zi2qabcde"),
        ],
    ]


def _renders_alike(probe: Probe, draft: Draft) -> bool:
    """Whether the draft, declared, renders the probe conversations as the template does."""
    try:
        fmt = declare(draft.layout("probe-results", "a family's results"))
    except PawletteError:
        return False
    for messages in _conversations(probe):
        for prompt in (False, True):
            expected = probe.render(messages, list(PROBE_TOOLS), prompt=prompt)
            try:
                written = fmt.render(
                    {"messages": messages, "tools": list(PROBE_TOOLS)},
                    add_generation_prompt=prompt,
                ).text
            except PawletteError:
                return False
            for closing in (probe.closing, probe.always_prompt):
                if not prompt and closing and written.endswith(closing):
                    written = written[: -len(closing)]
            if expected != written:
                return False
    return True


def derive_family_results(probe: Probe, draft: Draft, written: str) -> bool:
    """Declare the first candidate that renders the probes as the template does, given
    ``written``, what the template adds for one result; whether one was."""
    if written.count("zq_alpha") != 1 or written.count("Zt1q") != 1:
        return False
    name_at, text_at = written.find("zq_alpha"), written.find("Zt1q")
    if name_at > text_at:
        return False
    head = written[:name_at]
    tool = FrameText(open=head)
    tool.close(written[text_at + len("Zt1q") :])
    for name, make in CANDIDATES:
        trial = copy.deepcopy(draft)
        trial.frames["tool"] = tool
        trial.concepts.append(make(draft.fence(head)))
        if _renders_alike(probe, trial):
            draft.frames["tool"] = tool
            draft.concepts.append(make(draft.fence(head)))
            draft.capability("tool results", "derived", f"a turn each, {name}")
            return True
    return False
