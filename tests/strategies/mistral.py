"""mistral's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("mistral")

CALL_IDS_ROUND_TRIP = True  # Small 3.2 writes each call's id ([CALL_ID]) and each result's
