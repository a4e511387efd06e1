"""DeepSeek V3.1 (deepseek-ai/DeepSeek-V3.1), declared from its chat template."""

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    NamedCalls,
    NoPromptAfter,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    TextAfter,
    declare,
    fence,
)

M = Marker


@dataclass(frozen=True)
class Options:
    thinking: bool = False


def layout(options: Options) -> Layout:
    return Layout(
        name="outsider-deepseek-v3.1",
        summary="DeepSeek V3.1, declared from its chat template",
        begin=fence(M("<｜begin▁of▁sentence｜>")),
        frames={
            "system": Frame(),  # bare text after the BOS
            "user": Frame(open=fence(M("<｜User｜>"))),
            "assistant": Frame(
                end=fence(M("<｜end▁of▁sentence｜>")),
                open_after={"user": fence(M("<｜Assistant｜>"))},
            ),
            "tool": Frame(
                open=fence(M("<｜tool▁output▁begin｜>")), end=fence(M("<｜tool▁output▁end｜>"))
            ),
        },
        concepts=(
            SystemPrompt(placement="gathered", joiner="\n\n"),
            # Past turns write an empty block after a user message, never the reasoning; the
            # generation prompt opens the block when thinking, else writes it empty.
            Reasoning(
                open=fence(M("<think>")),
                close=fence(M("</think>")),
                keep="none",
                absent=fence(M("<think>"), M("</think>")),
                after=("user",),
                prompt="open" if options.thinking else "empty",
            ),
            Ignored(("name", "tools")),  # the template writes neither: recorded losses
            # An answer keeps its text after the first </think>, but right after results.
            TextAfter(separator="</think>", occurrence="first", calls=False, after_results=False),
            NamedCalls(
                open=fence(M("<｜tool▁call▁begin｜>")),
                arguments_open=fence(M("<｜tool▁sep｜>")),
                close=fence(M("<｜tool▁call▁end｜>")),
                section_open=fence(M("<｜tool▁calls▁begin｜>")),
                section_close=fence(M("<｜tool▁calls▁end｜>")),
            ),
            Results(),  # no ids: results answer the calls by position
            NoPromptAfter(
                roles=("assistant", "tool", "system")
            ),  # prompted after a user message alone
        ),
        options=options,
        from_options=layout,
        template_variables=lambda options: {"thinking": options.thinking},
        switches=(Switch("thinking", "thinking", fallback=("enable_thinking",)),),
    )


FORMAT = declare(layout(Options()))
