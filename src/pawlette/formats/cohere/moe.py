"""Cohere's Command A MoE template (``Cohere2MoE``): the variant ``cohere:cohere2moe``.

The wire format (every ``<|…|>`` is a special token), shown on several lines (the format
writes no newline between turns)::

    <BOS_TOKEN><|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|><|START_TEXT|>These instructions are always to be followed ...
    - You are a large language model built by Cohere.

    # Available Tools
    ```json
    [
        {"name": "get_weather", "description": "Weather.", "parameters": {...}, "responses": null}
    ]
    ```<|END_TEXT|><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|><|START_TEXT|>You are terse.<|END_TEXT|><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|USER_TOKEN|><|START_TEXT|>Weather in Zürich?<|END_TEXT|><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|>I need the weather.<|END_THINKING|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Zürich"}}
    ]<|END_ACTION|><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|><|START_TOOL_RESULT|>[
        {
            "tool_call_id": "0",
            "results": {
                "0": {"content": "3 °C"}
            },
            "is_error": null
        }
    ]<|END_TOOL_RESULT|><|END_OF_TURN_TOKEN|>
    <|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|>

Shared with Command R7B (:mod:`pawlette.formats.cohere`): the turn tokens, the tools listing
(one item a line), the calls (an action list numbered by position, the turn's text
dropped) and the results (one JSON list per group, ids by position).  Its own:

- **First turn**: always the fixed platform instructions and the tools listing (an empty
  list without tools), a turn of its own; every system message is a turn of its own after
  it, its text between ``<|START_TEXT|>`` and ``<|END_TEXT|>``, as every user message's.
- **Answers**: ``<|START_TEXT|>`` + text + ``<|END_TEXT|>``.
- **Reasoning**: every assistant turn with reasoning writes ``<|START_THINKING|>`` +
  reasoning + ``<|END_THINKING|>`` first (answers and calls alike; an empty text writes
  none, as the template tests the text).  The template's
  ``reasoning`` variable (on by default; the format's ``thinking``) opens the block in the
  generation prompt, so a completion starts inside it; off, the prompt writes an empty
  block.
- **Results**: each result's text is ``{"content": TEXT}`` as JSON.

Remaining differences from the template: ``documents``, ``grounding``,
``platform_instruction_override``, ``developer_instruction``, ``response_format`` and
``skip_thinking`` are not options (the template's defaults are what the format writes).
"""

# ruff: noqa: E501  (the docstring shows the wire format)

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Switch,
    SystemPrompt,
    fence,
)

from .concepts import CohereTools, Response

if TYPE_CHECKING:
    from . import CohereOptions

START_TEXT, END_TEXT = Marker("<|START_TEXT|>"), Marker("<|END_TEXT|>")
PLATFORM = (
    "These instructions are always to be followed and cannot be overridden by subsequent "
    "system or user turns:\n- You will answer requests for educational, informative, or "
    "creative content related to safety categories. You will not provide content that is "
    "harmful or could be used to cause harm.\n\nThese instructions serve as your defaults, "
    "but they can be overridden in subsequent system or user turns:\n- Your name is North "
    "Mini Code.\n- You are a large language model built by Cohere."
)
TOOLS_OPEN = PLATFORM + "\n\n# Available Tools\n```json\n[\n"
RESULT_ID_CLOSE = '",\n        "results": {\n            "0": {"content": '
RESULT_CLOSE = '}\n        },\n        "is_error": null\n    }'


def moe_layout(options: CohereOptions, variants: dict[str, Any], variables: Any) -> Layout:
    from . import (
        BEGIN,
        CALLS,
        CHATBOT,
        END,
        RESULT,
        RESULT_END,
        RESULT_OPEN,
        START,
        SYSTEM,
        THINKING,
        THINKING_END,
        USER,
        command_results,
        layout,
    )

    def turn(role: Marker) -> Frame:
        return Frame(open=fence(START, role, START_TEXT), end=fence(END_TEXT, END))

    return Layout(
        name="cohere",
        summary="Cohere Command A MoE: text and action markers, calls numbered by position",
        begin=fence(BEGIN),
        frames={
            "system": turn(SYSTEM),
            "user": turn(USER),
            # An answer's close and the turn's end are read as one, as the lexer reads the
            # user and system turns' (the longest spelling wins).
            "assistant": Frame(
                open=fence(START, CHATBOT), end=fence(END), also_end=(fence(END_TEXT, END),)
            ),
            "tool": Frame(
                open=fence(START, SYSTEM, RESULT, RESULT_OPEN),
                end=fence("\n]", RESULT_END, END),
            ),
        },
        concepts=(
            CohereTools(
                place="own_turn",
                always=True,
                open=fence(START, SYSTEM, START_TEXT, TOOLS_OPEN),
                close=fence("\n]\n```", END_TEXT, END),
            ),
            SystemPrompt(),
            Reasoning(
                open=fence(THINKING),
                close=fence(THINKING_END),
                prompt="open" if options.thinking else "empty",
                empty_given=False,
            ),
            Response(open=fence(START_TEXT), close=fence(END_TEXT)),
            CALLS,
            command_results(RESULT_ID_CLOSE, RESULT_CLOSE),
            Ignored(("name",)),
        ),
        options=options,
        from_options=layout,
        variants=variants,
        template_variables=variables,
        switches=(Switch("thinking", "reasoning"),),
    )
