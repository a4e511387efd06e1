"""IBM Granite 4.0 (ibm-granite/granite-4.0), declared from its chat template."""

from pawlette.declare import (
    Fence,
    Frame,
    Ignored,
    JsonCalls,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    ToolsBlock,
    declare,
    fence,
)

M = Marker


def role_open(role: str) -> Fence:
    return fence(M("<|start_of_role|>"), role, M("<|end_of_role|>"))


def turn(role: str) -> Frame:
    return Frame(open=role_open(role), end=fence(M("<|end_of_text|>")), after="\n")


TOOLS_OPEN = (
    "You are a helpful assistant with access to the following tools. You may call one or more"
    " tools to assist with the user query.\n\nYou are provided with function signatures within"
    " <tools></tools> XML tags:\n<tools>"
)
TOOLS_CLOSE = (
    "\n</tools>\n\nFor each tool call, return a json object with function name and arguments"
    ' within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>,'
    ' "arguments": <args-json-object>}\n</tool_call>. If a tool does not exist in the provided'
    " list of tools, notify the user that you do not have the ability to fulfill the request."
)

FORMAT = declare(
    Layout(
        name="outsider-granite-4.0",
        summary="IBM Granite 4.0, declared from its chat template",
        markers_in_text=True,  # its call tags are text: read from token ids by their spelling
        frames={
            "system": turn("system"),
            "user": turn("user"),
            "assistant": turn("assistant"),
            # Results are one user turn, each result inside <tool_response> tags.
            "tool": turn("user"),
        },
        concepts=(
            # The caller's first system text, else the default (without tools), then the tools.
            SystemPrompt(
                default="You are a helpful assistant. Please ensure responses are professional,"
                " accurate, and safe.",
                default_when="without_tools",
                empty_first="absent",
            ),
            ToolsBlock(
                place="system",
                open=fence(TOOLS_OPEN),
                item_open=fence("\n"),
                close=fence(TOOLS_CLOSE),
                separator=fence("\n\n"),
            ),
            Ignored(("reasoning", "name")),  # never written: recorded losses
            JsonCalls(
                open=fence("<tool_call>\n"), close=fence("\n</tool_call>"), separator=fence("\n")
            ),
            Results(
                grouped=True,
                item_open=fence("\n<tool_response>\n"),
                item_close=fence("\n</tool_response>"),
            ),
        ),
    )
)
