"""MiniMax-M2 and MiniMax-M3 (``pawlette.formats.minimax_m2``, ``minimax_m2:m3``) against
MiniMax's templates.  M2's generation prompt opens ``<think>`` while a past turn without
reasoning holds none, so only a turn with reasoning extends the prompt render: its
conversations give every assistant message some (the renders of turns without reasoning are
compared in ``tests/formats/test_minimax_m2.py``).  M2 drops reasoning before the last user
message, both drop names (documented losses); M3 keeps every turn's reasoning and its prompt
opens nothing, so its conversations are of every kind."""

from __future__ import annotations

from . import FamilyCase

CASES = [
    FamilyCase(template="MiniMax-M2", format="minimax_m2", switches={"reasoning_always": True}),
    FamilyCase(template="MiniMax-M3", format="minimax_m2:m3"),
]
