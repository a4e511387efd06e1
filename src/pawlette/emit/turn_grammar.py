"""What a format's grammar interpreter builds for one request: the turn's rules and what an
engine needs beside them (markers, stops, the lazy trigger, forced prefixes)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .grammar_ast import Rules


@dataclass
class TurnGrammar:
    """What a format's turn module builds for one request."""

    rules: Rules
    """The whole turn."""
    markers: tuple[str, ...]
    """The markers the grammar refers to (special tokens)."""
    stop: tuple[str, ...]
    trigger: str | None = None
    """The marker that starts a call, if calls are possible under this choice."""
    lazy: Rules | None = None
    """The grammar from the trigger on (``auto`` with tools): for lazy grammar engines."""
    forced_prefixes: dict[str, str] = field(default_factory=dict)
    """Per tool choice key (``auto``, ``none``, ``required``, each function's name): the text
    every turn under it begins with."""
    after_prefix: Rules | None = None
    """The grammar that follows this choice's forced prefix (None when it is empty)."""
    reasoning: tuple[str, str] | None = None
    """The reasoning block's opening and closing markers, when the turn may start with one."""
