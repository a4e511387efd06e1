"""Bielik's reasoning block: written only for reasoning that is not empty."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pawlette.declare import Reasoning

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.write import Render


class GivenReasoning(Reasoning):
    """A :class:`~pawlette.declare.Reasoning` kept on every turn whose reasoning is not empty
    (the template's ``{% if reasoning_content %}``): an empty ``reasoning_content`` writes
    no block, as none does.  Reasoning of whitespace alone is not empty there: it writes an
    empty block, which reads back as no reasoning."""

    def written(self, out: Render, index: int) -> bool:
        return bool(out.messages[index].reasoning)

    def written_needs(self) -> str | None:
        return "reasoning"

    def _condition(self, out: Template) -> str:
        return (
            "(message.reasoning_content is defined and message.reasoning_content is not none"
            " and message.reasoning_content)"
        )
