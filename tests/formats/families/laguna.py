"""Poolside Laguna's templates (:mod:`pawlette.formats.laguna`): Laguna-XS.2, Laguna-XS-2.1
and Laguna-S-2.1.

Laguna XS ``strip()``s an assistant turn's reasoning and text (a documented loss:
``strip_text``).  Its generation prompt (thinking off, the templates' default) closes the
block, ``<assistant>\\n</think>``, while a turn with reasoning opens one, so only a turn
without reasoning extends the prompt render: its conversations give none (the thinking
variants, and the renders of turns with reasoning, are compared in
``tests/formats/test_laguna.py``).  Laguna S writes every turn as given."""

from __future__ import annotations

from ...support.template_compare import strip_text
from . import FamilyCase

CASES = [
    FamilyCase(
        template="poolside-Laguna-XS.2",
        format="laguna",
        switches={"reasoning": False},
        normalise=strip_text,
    ),
    FamilyCase(
        template="poolside-Laguna-XS-2.1",
        format="laguna:xs-2.1",
        switches={"reasoning": False},
        normalise=strip_text,
    ),
    FamilyCase(template="poolside-Laguna-S-2.1", format="laguna:s-2.1"),
]
