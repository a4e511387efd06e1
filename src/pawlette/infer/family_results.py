"""Results written as a declared family writes them, where no generic concept reads them.

Each candidate is a family's results concept made from the text a result opens with up to
the tool's name: declared with the tool frame that closes a result as the template does, it
must render the probe conversations (one result, two after a turn of two calls, each with
and without the generation prompt) exactly as the template does.  Kimi K3's results are one:
``<|open|>message role="tool" tool="NAME" index="K"<|sep|>`` + text, numbered per run.

Gemma 4's are written inside the model turn: its turn of calls ends with the results' opener
(``<|tool_response>``, a :class:`~pawlette.declare.CallTurnEnd`), each result is
``response:NAME{value:<|"|>TEXT<|"|>}<tool_response|>``, and the model's answer goes on in the
same turn, opened by nothing.  Tried where the turn of calls ends so: the tool frame opens
with that end (nothing right after the calls), the assistant's is opened by nothing after a
result, and the generation prompt there is nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..declare import CallTurnEnd, declare, fence
from ..declare.concept import Concept
from ..declare.pieces import Fence, text_of
from ..errors import PawletteError
from ..formats.gemma4.concepts import GemmaResults
from ..formats.gemma4.concepts import Q as QUOTE
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
    if _in_model_turn(probe, draft, head, written[text_at + len("Zt1q") :]):
        return True
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


def _in_model_turn(probe: Probe, draft: Draft, head: str, close: str) -> bool:
    """Whether the results are Gemma 4's, written inside the model turn after a turn of
    calls that ends with their opener (see the module), now declared; ``head``: what a
    result writes before the tool's name, ``close``: after its text."""
    ends = [item for item in draft.concepts if isinstance(item, CallTurnEnd)]
    if len(ends) != 1 or not text_of(ends[0].end):
        return False
    opener = text_of(ends[0].end)
    results = GemmaResults()
    value_close = text_of(fence(QUOTE, results.value_close))  # (the concept writes it)
    if head != results.head or not close.startswith(value_close):
        return False
    trial = copy.deepcopy(draft)
    tool = FrameText(open=opener, open_after={"assistant": ""})
    tool.close(close[len(value_close) :])
    trial.frames["tool"] = tool
    assistant = trial.frames["assistant"]
    assistant.open_after["tool"] = ""
    assistant.prompt_after["tool"] = ""
    trial.concepts.append(results)
    if not _renders_alike(probe, trial):
        return False
    draft.frames = trial.frames
    draft.concepts.append(results)
    draft.capability(
        "tool results",
        "derived",
        f"inside the model turn, each opened by {opener!r}, in Gemma 4's value syntax",
    )
    return True
