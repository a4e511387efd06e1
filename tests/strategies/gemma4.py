"""gemma4's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("gemma4")

CALL_IDS_ROUND_TRIP = False  # Gemma 4 writes no call ids: calls read back with new ones
