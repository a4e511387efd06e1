"""The model families, each checked against its real templates by one shared set of tests
(:mod:`tests.formats.test_families`).

A family's module here (``tests/formats/families/<family>.py``) defines ``CASES``: one
:class:`FamilyCase` per template of llama.cpp's corpus the family declares, saying which
format and variant writes it and which conversations it expresses exactly (the generator's
switches: :mod:`tests.support.conversations`).  What a family's declaration writes down as a
difference from its template is what its switches leave out; the full rates over every kind
are the matrix's (``python -m bench.matrix``), not a test's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Normalise = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class FamilyCase:
    """One template of the corpus and the format that writes it.

    - ``template``: the file stem in llama.cpp's ``models/templates``;
    - ``format``: the registered name, ``"family"`` or ``"family:variant"``;
    - ``switches``: the generator's switches (:class:`tests.support.conversations.Switches`
      fields) for the conversations the format writes exactly as the template does;
    - ``variables``: template variables beyond the format's own (``Layout.template_variables``);
    - ``empty_content``: give a calls-only turn ``"content": ""`` (templates that read it);
    - ``normalise``: how a turn the template writes parses back (trimmed text, dropped
      reasoning: what the declaration documents as lost);
    - ``count``: conversations compared in the test suite (the matrix compares more);
    - ``own_turns``: False when the template's generation prompt never begins its own past
      turns (DeepSeek R1's opens ``<think>`` and its past turns drop the reasoning), so no
      turn can be cut out of its renders; what the model writes after that prompt is then
      read in the family's own test module, from the peers' cases.
    - ``opener``: the assistant opener, for a template whose prompt render does not begin
      its training render (see :func:`tests.support.template_compare.own_turns`).
    - ``prompt_tail``: what the generation prompt writes after the opener that a turn may
      not hold (see :func:`tests.support.template_compare.own_turns`).
    - ``stand_in``: what past turns write in place of ``prompt_tail`` (same function).
    - ``undetectable``: why ``pawlette detect`` cannot name the format from the template (a
      refusal of the template that every probe meets); detection must then name nothing
      and say so.
    """

    template: str
    format: str
    switches: Mapping[str, Any] = field(default_factory=dict)
    variables: Mapping[str, Any] = field(default_factory=dict)
    empty_content: bool = False
    normalise: Normalise | None = None
    count: int = 16
    seed: int = 0
    own_turns: bool = True
    opener: str | None = None
    prompt_tail: str | None = None
    stand_in: str | None = None
    undetectable: str | None = None
