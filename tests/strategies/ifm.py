"""ifm's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("ifm")

CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results answer calls by position
