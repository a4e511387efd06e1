"""MiniMax-M2 (``pawlette.formats.minimax_m2``) against MiniMax's template.  Its generation
prompt opens ``<think>`` while a past turn without reasoning holds none, so only a turn with
reasoning extends the prompt render: its conversations give every assistant message some
(the renders of turns without reasoning are compared in ``tests/formats/test_minimax_m2.py``).
The template drops reasoning before the last user message and names (documented losses)."""

from __future__ import annotations

from . import FamilyCase

CASES = [
    FamilyCase(template="MiniMax-M2", format="minimax_m2", switches={"reasoning_always": True})
]
