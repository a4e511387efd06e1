"""Inference: a declaration derived from a chat template, verified before it is used."""

from __future__ import annotations

import dataclasses
import datetime
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..declare import Layout, declare
from ..declare.grammar import markers_of
from ..declare.pieces import text_of
from ..errors import FormatError
from ..format import Format
from .answer_edges import LEADING, PROMPTED
from .atoms import Tokens
from .consecutive_answers import NAME as CONSECUTIVE
from .conversations import Features, generate
from .culprits import find_culprit
from .draft import Capability, Draft
from .frames import derive_frames, plain_ends
from .probe import Probe, Underivable
from .system_turn import derive_system
from .template import CALLER_SHAPES, DEFAULT_TODAY, TemplateRunner
from .verify import Verification, verify

__all__ = ["Inference", "infer_template", "marker_texts"]

CONVERSATIONS = 24
"""Generated conversations an inferred format is verified on."""


@dataclass(frozen=True)
class Inference:
    """What :func:`infer_template` found.

    ``layout``: the inferred declaration (None: not even the turns could be derived);
    ``format``: the declared format, only when ``accepted`` (verification passed);
    ``capabilities``: what each kind of content does, and each switch the template reads
    (``switch enable_thinking``: :mod:`.switches`); ``verification``: the figures;
    ``refusal``: why the declaration is not accepted (None: accepted).
    """

    layout: Layout | None
    format: Format | None
    capabilities: tuple[Capability, ...]
    verification: Verification | None
    refusal: str | None
    seconds: float = 0.0
    shapes: tuple[str, ...] = ()
    """The caller shapes the template needed (:data:`~pawlette.infer.template.CALLER_SHAPES`:
    its probes and verification were rendered with them where it refused a message without)."""

    @property
    def accepted(self) -> bool:
        return self.format is not None

    @property
    def empty_content(self) -> bool:
        """Whether the template needs ``"content": ""`` on an assistant turn without text."""
        return "empty content" in self.shapes

    @property
    def needs(self) -> tuple[str, ...]:
        """The capabilities inference could not declare, with why (and the concept)."""
        return tuple(item.describe() for item in self.capabilities if item.status == "not derived")

    def source(self) -> str:
        """The inferred declaration as Python source (see :mod:`.source`)."""
        from .source import declaration_source

        if self.layout is None:
            raise ValueError("no declaration: the turns could not be derived")
        lines = [f"{self.layout.name}: a chat format inferred by pawlette from a chat template."]
        if self.verification is not None:
            state = "Verified" if self.accepted else "NOT verified"
            lines += ["", f"{state}: {self.verification.describe()}."]
        if not self.accepted and self.refusal:
            lines += ["", f"Refused: {self.refusal}"]
        listed = [item.describe() for item in self.capabilities]
        if listed:
            lines += ["", "What each kind of content does:", ""]
            lines += [f"- {line}" for line in listed]
        lines += [
            "",
            "Save it as a module, edit it, and register it:",
            "",
            "    import pawlette",
            "    from my_format import FORMAT",
            "    pawlette.register_format(FORMAT)",
        ]
        return declaration_source(self.layout, "\n".join(lines))

    def describe(self) -> str:
        lines = []
        if self.accepted:
            assert self.verification is not None
            lines.append(f"inferred and verified: {self.verification.describe()}")
        else:
            lines.append(f"not inferred: {self.refusal}")
        for item in self.capabilities:
            lines.append(f"  {item.describe()}")
        return "\n".join(lines)


def _features(draft: Draft) -> Features:
    def ok(name: str) -> bool:
        return draft.status(name) in ("derived", "dropped", "refused")

    return Features(
        system=ok("system messages"),
        later_system=ok("later system messages") and ok("system messages"),
        tools=ok("tools"),
        calls=ok("tool calls") and ok("tools"),
        parallel_calls=ok("parallel tool calls"),
        text_with_calls=ok("text with tool calls"),
        results=ok("tool results"),
        reasoning=ok("reasoning"),
        reasoning_with_calls=ok("reasoning"),
        edge_whitespace=frozenset(draft.edge_roles),
        edge_whitespace_with_calls=draft.edge_with_calls and "assistant" in draft.edge_roles,
        edge_whitespace_reasoning=draft.edge_reasoning,
        empty_roles=frozenset(draft.empty_roles),
        names=ok("names"),
        alternating=draft.status("consecutive user messages") in ("refused", "not derived"),
        consecutive_answers=draft.status(CONSECUTIVE) not in ("refused", "not derived"),
        leading_answer=draft.status(LEADING) not in ("refused", "not derived"),
        prompt_after_answer=draft.status(PROMPTED) not in ("refused", "not derived"),
        answer_avoid=plain_ends(draft),
        system_alone=draft.unprompted_system_alone,
    )


def marker_texts(layout: Layout) -> list[str]:
    """The texts no generated conversation may hold: the declaration's markers and the
    fixed texts of its fences (a message holding one would read back as layout)."""
    texts = set(markers_of(layout))

    def walk(value: Any) -> None:
        if isinstance(value, tuple) and value and all(hasattr(piece, "text") for piece in value):
            with_text = text_of(value, layout.options, layout.name).strip()
            if len(with_text) >= 2:
                texts.add(with_text)
        elif isinstance(value, (tuple, list)):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for item in dataclasses.fields(value):
                walk(getattr(value, item.name))

    walk(dict(layout.frames))
    walk(layout.concepts)
    return sorted(texts)


def infer_template(
    template: str,
    *,
    bos_token: str | None = None,
    eos_token: str | None = None,
    today: datetime.date | None = None,
    special_tokens: Iterable[str] | None = None,
    name: str = "inferred",
    conversations: int = CONVERSATIONS,
    variables: Mapping[str, Any] | None = None,
    switches: bool = True,
) -> Inference:
    """A declaration inferred from ``template`` and verified against it (see the package).

    ``bos_token``/``eos_token``: what the tokenizer gives the template; ``today``: the date
    its clock reads (a date it writes becomes the ``today`` option); ``special_tokens``: the
    tokenizer's added tokens (None: told by their shape); ``conversations``: how many
    generated conversations verify it; ``variables``: passed to every render (a switch's
    value); ``switches``: derive the template's switches as options (:mod:`.switches`).
    """
    began = time.perf_counter()
    given = dict(variables or {})
    given.update(
        (key, value)
        for key, value in (("bos_token", bos_token), ("eos_token", eos_token))
        if value is not None
    )
    runner = TemplateRunner(template, given, today=today or DEFAULT_TODAY)
    special = frozenset(special_tokens or ()) | {text for text in (bos_token, eos_token) if text}
    tokens = Tokens(special=special, by_shape=special_tokens is None)
    probe = Probe(runner, tokens)
    blocked: dict[str, str] = {}
    renders: dict[str, Any] = {}
    draft = Draft(tokens)
    layout: Layout | None = None
    verification: Verification | None = None
    for _ in range(ATTEMPTS):
        draft = Draft(tokens, blocked=dict(blocked))
        try:
            derive_frames(probe, draft)
        except Underivable as error:
            return _refused(draft, runner, f"the turns could not be derived: {error}", began)
        for stage in _stages():
            stage(probe, draft)
        draft.apply_blocked()
        _tools_need_calls(draft)
        try:
            layout = draft.layout(name, "inferred from a chat template")
            fmt = declare(layout)
        except FormatError as error:
            return _refused(
                draft, runner, f"the derived declaration is inconsistent: {error}", began
            )
        samples = generate(conversations, features=_features(draft), avoid=marker_texts(layout))
        verification = verify(fmt, runner, samples, renders)
        if verification.passed:
            inference = Inference(
                layout,
                fmt,
                tuple(draft.capabilities),
                verification,
                None,
                time.perf_counter() - began,
                _needed(runner),
            )
            if not switches:
                return inference
            from .switches import with_switches

            def again(switched: Mapping[str, Any]) -> Inference:
                return infer_template(
                    template,
                    bos_token=bos_token,
                    eos_token=eos_token,
                    today=today,
                    special_tokens=special_tokens,
                    name=name,
                    conversations=conversations,
                    variables={**(variables or {}), **switched},
                    switches=False,
                )

            result: Inference = with_switches(inference, runner, again)
            return result
        failure = verification.failure
        culprit = None
        if failure is not None and failure.sample is not None:
            culprit = find_culprit(
                fmt,
                runner,
                failure.sample,
                blocked,
                lambda fmt, runner, samples: verify(fmt, runner, samples, renders),
            )
        if failure is None or culprit is None:
            detail = failure.describe() if failure is not None else "renders differ"
            return _refused(
                draft,
                runner,
                f"verification failed ({verification.describe()}): {detail}",
                began,
                layout,
                verification,
            )
        blocked[culprit] = f"verification: {failure.describe()}"
    return _refused(
        draft, runner, "verification failed on every attempt", began, layout, verification
    )


def _tools_need_calls(draft: Draft) -> None:
    """Tools the declaration writes while it cannot read the calls a model writes with them
    are refused, saying why: a model given tools calls them, and a call in a syntax the
    format does not read would come back as text, with no warning."""
    calls = next((item for item in draft.capabilities if item.name == "tool calls"), None)
    if draft.status("tools") != "derived" or calls is None:
        return
    if calls.status == "not derived":
        why = f"the calls a model writes with them are not derived ({calls.detail})"
    elif calls.status == "dropped":
        why = "the template writes no calls, so the calls a model writes with them are unknown"
    else:
        return
    draft.capability("tools", "not derived", why + ": a model's calls would read back as text")


ATTEMPTS = 8
"""Verifications tried, each after giving up the capability the last one failed on."""


def _needed(runner: TemplateRunner) -> tuple[str, ...]:
    return tuple(shape for shape in CALLER_SHAPES if shape in runner.needed)


def _refused(
    draft: Draft,
    runner: TemplateRunner,
    reason: str,
    began: float,
    layout: Layout | None = None,
    verification: Verification | None = None,
) -> Inference:
    return Inference(
        layout,
        None,
        tuple(draft.capabilities),
        verification,
        reason,
        time.perf_counter() - began,
        _needed(runner),
    )


def _stages() -> list[Any]:
    from .answer_edges import derive_answer_edges
    from .calls import derive_calls
    from .consecutive_answers import derive_consecutive_answers
    from .dates import derive_date
    from .fields import (
        derive_alternation,
        derive_empty_texts,
        derive_names,
        derive_whitespace,
    )
    from .past_texts import derive_past_texts
    from .reasoning import derive_reasoning
    from .results import derive_results
    from .tools import derive_tools

    return [
        derive_system,
        derive_whitespace,
        derive_empty_texts,
        derive_alternation,
        derive_names,
        derive_reasoning,
        derive_past_texts,
        derive_tools,
        derive_calls,
        derive_results,
        derive_consecutive_answers,
        derive_answer_edges,
        derive_date,
    ]
