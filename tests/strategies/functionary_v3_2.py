"""functionary_v3_2's conversations: drawn from its declaration (tests.declare.conversations)."""

from __future__ import annotations

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("functionary_v3_2")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results are matched by position
COMPLETION_HEADERS = ("all\n",)
"""What a completion may open with that says where the turn goes, not what it says: the
recipient line of a turn to the user (the generation prompt ends with its ">>>")."""
