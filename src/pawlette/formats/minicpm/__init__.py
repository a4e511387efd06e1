"""MiniCPM 5 (OpenBMB) as its chat template writes it: ChatML turns, Qwen3's reasoning,
tools as JSON lines, calls as ``<function name="NAME"><param name="KEY">VALUE</param>``
tags after the text.

DRAFT
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

from .calls import CdataXmlCalls

IM_START, IM_END = Marker("<|im_start|>"), Marker("<|im_end|>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")

TOOLS_OPEN = (
    "# Tools\n\nYou are provided with function signatures within <tools></tools> XML tags:\n"
    "<tools>"
)
TOOLS_CLOSE = (
    "\n</tools>\n\nTool usage guidelines:\n"
    "- You may call zero or more functions. If no function calls are needed, just answer "
    "normally and do not include any <function ... </function>.\n"
    "- When calling a function, return an XML object within <function ... </function> using:\n"
    '<function name="function-name"><param name="param-name">param-value</param></function>\n'
    "- param-value may be multi-line. If it contains <, & or newline characters, wrap it in a "
    'CDATA block: <param name="param-name"><![CDATA[...multi-line value...]]></param>'
)


@dataclass(frozen=True)
class MinicpmOptions:
    """``thinking``: the template's ``enable_thinking``: None (the default) leaves it
    unset, and the generation prompt is ``<|im_start|>assistant\\n`` alone; True opens a
    reasoning block after it (``<think>\\n``); False writes an empty one
    (``<think>\\n\\n</think>\\n\\n``)."""

    thinking: bool | None = None


def frame(role: str) -> Frame:
    return Frame(open=fence(IM_START, f"{role}\n"), end=fence(IM_END), after=fence("\n"))


def layout(options: MinicpmOptions) -> Layout:
    prompt = {None: "", True: "open", False: "empty"}[options.thinking]
    return Layout(
        name="minicpm",
        summary='MiniCPM 5: ChatML turns, <think>, <function name="..."><param ...> calls',
        frames={
            **{role: frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(open=fence(IM_START, "user"), end=fence(IM_END), after=fence("\n")),
        },
        concepts=(
            SystemPrompt(),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_OPEN),
                item_open=fence("\n"),
                close=fence(TOOLS_CLOSE),
                separator=fence("\n\n"),
            ),
            Reasoning(
                open=fence(THINK, "\n"),
                close=fence("\n", THINK_END, "\n\n"),
                keep="after_last_query",
                trim="\n",
                prompt=prompt,
            ),
            Ignored(("name",)),
            CdataXmlCalls(
                open=fence('<function name="'),
                name_close=fence('">'),
                key_open=fence('<param name="'),
                key_close=fence('">'),
                value_close=fence("</param>"),
                close=fence("</function>"),
                separator=fence("\n"),
                text_separator=fence("\n"),
                values="literal",
            ),
            Results(
                grouped=True,
                item_open=fence("\n", RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END),
            ),
        ),
        options=options,
        from_options=layout,
        template_variables=lambda options: (
            {} if options.thinking is None else {"enable_thinking": options.thinking}
        ),
    )


FORMAT = declare(layout(MinicpmOptions()))
