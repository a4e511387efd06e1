"""ifm's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from .declared import declared_strategies

FORMAT, conversations, normalise, normalise_completion = declared_strategies("ifm")
