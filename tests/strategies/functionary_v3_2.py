"""functionary_v3_2's conversations: drawn from its declaration (tests.declare.conversations)."""

from __future__ import annotations

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("functionary_v3_2")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results are matched by position
