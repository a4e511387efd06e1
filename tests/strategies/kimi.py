"""kimi's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("kimi")

# The format writes its own ids (functions.NAME:N, in the name's place), not the caller's:
# a completion's calls read back with those.
CALL_IDS_ROUND_TRIP = False
