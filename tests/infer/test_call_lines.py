"""Calls written as JSON objects one after another inside one opener and close (MiniMax M1's
one a line): inferred as a :class:`~pawlette.declare.JsonCallList` without brackets."""

from __future__ import annotations

import json

from pawlette.declare import JsonCallList
from pawlette.declare.pieces import text_of
from pawlette.infer import infer_template

# A ChatML template with its tools in a turn of their own and a turn's calls one JSON object
# a line inside <tool_calls> (its text dropped), as MiniMax M1 writes them.
LINED = (
    "{%- if tools %}{{ '<|im_start|>system\\nTools:\\n' }}{% for tool in tools %}"
    "{{ tool | tojson }}{{ '\\n' }}{% endfor %}{{ '<|im_end|>\\n' }}{% endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'assistant' and message.tool_calls %}"
    "{{ '<|im_start|>assistant\\n<tool_calls>\\n' }}"
    "{%- for call in message.tool_calls %}"
    '{{ {"name": call.function.name, "arguments": call.function.arguments} | tojson }}'
    "{% if not loop.last %}{{ '\\n' }}{% endif %}{% endfor %}"
    "{{- '\\n</tool_calls><|im_end|>\\n' }}"
    "{%- else %}{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def test_calls_one_a_line_inside_one_fence_are_a_list_without_brackets() -> None:
    inference = infer_template(LINED, eos_token="<|im_end|>")
    assert inference.accepted, inference.describe()
    assert inference.verification is not None and inference.verification.passed
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["tool calls"] == statuses["parallel tool calls"] == "derived"
    assert inference.layout is not None
    (calls,) = [item for item in inference.layout.concepts if isinstance(item, JsonCallList)]
    assert (calls.list_open, calls.list_close, calls.item_separator) == ("", "", "\n")
    assert text_of(calls.open) == "<tool_calls>\n" and text_of(calls.close) == "\n</tool_calls>"
    assert calls.content == "dropped"
    assert inference.format is not None
    parsed = inference.format.parse(
        '<tool_calls>\n{"name": "f", "arguments": {"a": 1}}\n'
        '{"name": "g", "arguments": {}}\n</tool_calls><|im_end|>'
    )
    names = [item["function"]["name"] for item in parsed.message["tool_calls"]]
    assert names == ["f", "g"]
    assert json.loads(parsed.message["tool_calls"][0]["function"]["arguments"]) == {"a": 1}
