"""Two Breeze 2 answers pawlette reads differently from MediaTek's ``MRPromptV3``, served.

``MRPromptV3.parse_generated_str`` (``mtkresearch`` 0.3.2) strips one leading ``<|answer|>``,
then reads a call list wherever ``<|use_tool|>`` appears, and strips one trailing
``<|eot_id|>``, keeping any other marker in the content.  Its readings of the two answers
(run outside this repository, its image modules stubbed) are the ``REFERENCE`` values below.
pawlette reads them differently on purpose; docs/guides/serving.md ("Breeze 2 answers") says
why.  These tests keep what the guide says true, through the server, streamed and not.
"""

from __future__ import annotations

import json

import pytest

from .conftest import ServerFactory
from .scenarios import PROMPT, message_from_chunks, message_from_sdk
from .upstream import FakeUpstream, Script

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "description": "f",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    }
]
BOTH_DECISIONS = "<|answer|><|use_tool|>[f(a='b')]<|eot_id|>"
TEXT_AFTER_THE_END = "Hello<|eot_id|>World"
REFERENCE = {
    BOTH_DECISIONS: {"tool_calls": [("f", {"a": "b"})]},
    TEXT_AFTER_THE_END: {"content": "Hello<|eot_id|>World"},
}
"""``MRPromptV3().parse_generated_str(answer)``, call ids left out."""
SERVED = {
    # The model chose to answer: what follows is its answer's text, and the misplaced decision
    # is kept in it (nothing the model wrote is dropped, and nothing it declined is run).
    BOTH_DECISIONS: {"content": "<|use_tool|>[f(a='b')]"},
    # <|eot_id|> is a stop marker: the answer ends there, as an engine honouring ``stop`` ends
    # it; the marker is never content (it would read back as the end of a turn).
    TEXT_AFTER_THE_END: {"content": "Hello"},
}
"""What ``pawlette serve -f breeze`` answers, streamed and not."""


def _reading(message: dict[str, object]) -> dict[str, object]:
    calls = message.get("tool_calls") or []
    assert isinstance(calls, list)
    if calls:
        return {
            "tool_calls": [
                (call["function"]["name"], json.loads(call["function"]["arguments"]))
                for call in calls
            ]
        }
    return {"content": message.get("content")}


@pytest.mark.parametrize("answer", [BOTH_DECISIONS, TEXT_AFTER_THE_END])
@pytest.mark.parametrize("stream", [False, True])
def test_breeze_answers_read_as_the_guide_says(
    serve: ServerFactory, upstream: FakeUpstream, answer: str, stream: bool
) -> None:
    server = serve("breeze")
    upstream.push(Script(text=answer))
    client = server.client()
    if stream:
        chunks = client.chat.completions.create(
            model="m", messages=PROMPT, tools=TOOLS, stream=True
        )
        message = message_from_chunks(list(chunks))[0]
    else:
        done = client.chat.completions.create(model="m", messages=PROMPT, tools=TOOLS)
        message = message_from_sdk(done.choices[0].message)
    assert _reading(message) == SERVED[answer]


def test_breeze_answers_read_whole_by_the_library() -> None:
    """``Format.parse`` reads a completion passed whole: strictly, both are errors; leniently,
    each is read with a warning that says where, and text after the turn's end is kept."""
    from pawlette.errors import ParseError
    from pawlette.formats import get_format

    fmt = get_format("breeze")
    for answer, where, content in (
        (BOTH_DECISIONS, 10, "<|use_tool|>[f(a='b')]"),
        (TEXT_AFTER_THE_END, 15, "HelloWorld"),
    ):
        with pytest.raises(ParseError, match=f"offset {where}"):
            fmt.parse(answer, tools=TOOLS, strict=True)
        parsed = fmt.parse(answer, tools=TOOLS)
        assert parsed.message["content"] == content
        assert [warning.offset for warning in parsed.warnings] == [where]
