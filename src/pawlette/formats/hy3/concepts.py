"""Hunyuan 3's own concepts: reasoning kept on every turn when the request has tools, and a
conversation's last turn written without its end.

- :class:`ToolsKeptReasoning`: the template keeps a turn's reasoning only after the last user
  message, unless the request has tools (its ``preserved_thinking`` defaults to true then):
  with tools every turn keeps it.
- :class:`UnendedLastTurn`: the template writes ``<｜hy_eos:opensource｜>`` after every
  assistant turn but the conversation's last one when that turn has no calls (a turn of calls
  always ends with it).  Where a generation prompt follows that turn (the template writes
  none after an assistant message), pawlette ends it, so the prompt opens a turn of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import Concept, Reasoning

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template
    from pawlette.declare.pieces import Fence
    from pawlette.declare.write import Render

_GIVEN = (
    "(message.reasoning_content is defined and message.reasoning_content is not none"
    " and message.reasoning_content)"
)
_CALLS = "(message.tool_calls is defined and message.tool_calls)"
_LAST = "index == (messages | length) - 1 and not add_generation_prompt"


@dataclass(frozen=True)
class ToolsKeptReasoning(Reasoning):
    """:class:`Reasoning` with ``keep="after_last_query"`` when the request has no tools, and
    every turn keeping its reasoning when it has some (see the module)."""

    def written(self, out: Render, index: int) -> bool:
        if out.tools:
            return bool(out.messages[index].reasoning)
        return super().written(out, index)

    def _condition(self, out: Template) -> str:
        return f"(has_tools and {_GIVEN}) or (not has_tools and {super()._condition(out)})"


def _unended(out: Render, index: int) -> bool:
    """Whether the assistant message at ``index`` is the conversation's last, has no calls
    and no generation prompt follows it: its turn is written without an end."""
    last = index == len(out.messages) - 1 and index >= 0
    return last and not out.prompt and not out.messages[index].tool_calls


@dataclass(frozen=True)
class UnendedLastTurn(Concept):
    """The conversation's last assistant turn, when it has no calls, has no end (see the
    module); reading ends it where the text ends."""

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"assistant"})

    def turn_end(self, out: Render, index: int) -> Fence | None:
        return () if _unended(out, index) else None

    def check_is_local(self) -> bool:
        # (the messages, whether the prompt follows, and the layout's options)
        return self.inherits(UnendedLastTurn, "check")

    def check(self, out: Render) -> None:
        # Without thinking the prompt closes an empty block, as an empty last answer's turn
        # writes it: the same text (with thinking the prompt leaves the block open).
        last = out.empty_last_answer()
        if last >= 0 and out.options.reasoning_effort == "no_think":
            out.lose(
                f"messages[{last}]",
                "an empty last answer, written as the generation prompt: read back as that prompt",
            )

    def jinja_end(self, out: Template, role: str) -> bool:
        if role != "assistant":
            return False
        out.fence_if(f"not ({_LAST} and not {_CALLS})", out.layout.frames["assistant"].end)
        return True
