"""A forced tool choice turns reasoning off: its turn is the forced prefix, then the call.

Under ``required`` and a named function, the turn grammar of every format is the choice's
forced prefix followed by the grammar after it (:attr:`TurnGrammar.after_prefix`), on every
engine: a grammar engine gets the same turn a prefix-only engine does, so an answer never
depends on ``--engine``.  The turn then has no reasoning block (PCML's ``<think>``, omni's
thinking; Qwen3's turn opens with the empty block its own prompt writes when thinking is
disabled, which the prefix holds).

Why not keep the reasoning and force the call after it: no grammar can make a model close its
reasoning.  Measured on llama.cpp with the test models (README, "Serving"), 8 of 10 forced
omni answers spent the whole ``max_tokens`` inside the thinking block and never called; a
real model that loops in its reasoning does the same, and without ``max_tokens`` it runs to
the end of the context.  Bounding the block in the grammar (a counted repetition) would cut a
real model's thought mid-sentence and force a call it had not decided on, with a bound either
too short for real reasoning or too long to matter.  Reasoning before a call stays available
under ``auto``, where the model decides.
"""

from __future__ import annotations

import re

from ..emit.grammar_ast import Lit, Marker, Node, Rules, seq
from ..emit.tool_choice import ToolChoice
from ..emit.turn_grammar import TurnGrammar
from ..format import Format


def prefix_nodes(text: str, markers: tuple[str, ...]) -> list[Node]:
    """``text`` as grammar nodes: each of ``markers`` a special token, the rest literal."""
    if not text:
        return []
    ordered = sorted(set(markers), key=len, reverse=True)
    if not ordered:
        return [Lit(text)]
    pattern = re.compile("|".join(re.escape(marker) for marker in ordered))
    nodes: list[Node] = []
    position = 0
    for match in pattern.finditer(text):
        if match.start() > position:
            nodes.append(Lit(text[position : match.start()]))
        nodes.append(Marker(match.group()))
        position = match.end()
    if position < len(text):
        nodes.append(Lit(text[position:]))
    return nodes


def forced_turn(fmt: Format, turn: TurnGrammar, choice: ToolChoice) -> TurnGrammar:
    """``turn`` under the policy above: for a forced choice of a turn that may open with
    reasoning, the whole-turn grammar becomes the prefix then the grammar after it, and the
    turn reports no reasoning block (so a server writes the prefix itself)."""
    if choice.mode not in ("required", "function") or turn.reasoning is None:
        return turn
    prefix = turn.forced_prefixes.get(choice.key(), "")
    after = turn.after_prefix
    if not prefix or after is None:
        return turn  # nothing to open with: the builder's own whole-turn grammar stands
    markers = (*fmt.special_markers, *turn.markers)
    whole = Rules(
        rules={**after.rules, "start": seq(*prefix_nodes(prefix, markers), after.rules["start"])},
        gbnf_extra=dict(after.gbnf_extra),
        lark_extra=dict(after.lark_extra),
        notes=list(after.notes),
        syntax_notes={syntax: list(notes) for syntax, notes in after.syntax_notes.items()},
        markers=after.markers,
    )
    turn.rules = whole
    turn.reasoning = None
    return turn
