"""A generation prompt that stops short of the assistant's opener: the concept is
:class:`pawlette.declare.PromptRest` (declared formats use it too)."""

from __future__ import annotations

from ..declare.prompt_rest import PromptRest

__all__ = ["PromptRest"]
