"""Gemma 2 (google/gemma-2-2b-it), declared from its chat template."""

from pawlette.declare import Alternation, Frame, Ignored, Layout, Marker, Trimmed, declare, fence

M = Marker


def turn(role: str) -> Frame:
    return Frame(
        open=fence(M("<start_of_turn>"), role + "\n"), end=fence(M("<end_of_turn>")), after="\n"
    )


FORMAT = declare(
    Layout(
        name="outsider-gemma-2",
        summary="Gemma 2 (2B instruct), declared from its chat template",
        begin=fence(M("<bos>")),
        # No system frame: the template raises on a first system message.
        frames={"user": turn("user"), "assistant": turn("model")},
        concepts=(
            Alternation(),  # the template raises on turns out of order
            Ignored(("reasoning", "name", "tools", "calls")),  # never written: recorded losses
            Trimmed(roles=("user", "assistant")),  # every text | trim
        ),
    )
)
