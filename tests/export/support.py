"""What the export tests share: transformers' renderer over the small offline tokenizer
(:mod:`tests.support.small_bpe`), and an optional run of the templates through
transformers.js (``@huggingface/jinja``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pawlette
from pawlette.format import Format
from pawlette.types import Rendering

from ..support.small_bpe import small_tokenizer

GOLDEN = Path(__file__).parent.parent / "golden"
NOT_FORMATS = {"prompter"}


def golden_cases(format_name: str) -> list[Path]:
    """The golden cases of format ``format_name`` (a case of a variant names it in its
    input.json's ``format``, and belongs to that variant)."""
    folder = GOLDEN / format_name
    return sorted(
        case
        for case in folder.glob("*")
        if (case / "input.json").exists()
        and json.loads((case / "input.json").read_text(encoding="utf-8")).get("format", format_name)
        == format_name
    )


def load_case(case: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((case / "input.json").read_text(encoding="utf-8"))
    data.pop("format", None)
    return data


# ------------------------------------------------------------------ transformers


@cache
def hf_tokenizer(format_name: str) -> Any:
    """A transformers fast tokenizer over :func:`small_tokenizer`, with the chat template
    (transformers works on its own copy of the shared tokenizer)."""
    from transformers import PreTrainedTokenizerFast

    from pawlette.export import export_jinja

    fmt = pawlette.get_format(format_name)
    # 1000 tokens: runs of newlines stay one token each.  omni resumes a turn after a tool
    # result with a trainable "\n" right after an untrained one, so a tokenizer that merges
    # "\n\n" makes a token no assistant mask can mark exactly.
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=small_tokenizer(tuple(fmt.special_markers), vocab_size=1000),
        eos_token=fmt.stop[0] if fmt.stop else None,
    )
    tokenizer.chat_template = export_jinja(format_name)
    return tokenizer


def request_parts(request: dict[str, Any]) -> tuple[list[dict[str, Any]], Any]:
    return list(request.get("messages", [])), request.get("tools") or None


def _result_value(content: Any) -> Any:
    """A tool result's text as the JSON object or array it holds, else the text (the
    template reads numbers, ``true``, ``false`` and ``null`` from the text itself)."""
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content)
    if not isinstance(content, str):
        return content
    try:
        value = json.loads(content)
        json.dumps(value, allow_nan=False)
    except ValueError:
        return content
    return value if isinstance(value, (dict, list)) else content


def template_messages(format_name: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI messages in the shape the format's template takes (``None`` values dropped;
    see :class:`pawlette.export.jinja.TemplateInputs`)."""
    from pawlette.export.jinja import template_inputs

    inputs = template_inputs(format_name)
    result = []
    for message in messages:
        message = {key: value for key, value in message.items() if value is not None}
        if inputs.object_arguments and message.get("tool_calls"):
            message["tool_calls"] = [
                {
                    **call,
                    "function": {
                        **call["function"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    },
                }
                for call in message["tool_calls"]
            ]
        if inputs.parsed_tool_results and message.get("role") == "tool":
            message["content"] = _result_value(message.get("content"))
        result.append(message)
    return result


def hf_render(
    format_name: str, request: dict[str, Any], add_generation_prompt: bool
) -> tuple[str, list[tuple[int, int]]]:
    """transformers' rendering of the exported template, and its generation spans.

    ``apply_chat_template`` refuses an empty conversation; those go through
    ``render_jinja_template``, the function it calls.
    """
    from transformers.utils.chat_template_utils import render_jinja_template

    from pawlette.export import export_jinja

    messages, tools = request_parts(request)
    messages = template_messages(format_name, messages)
    if messages:
        tokenizer = hf_tokenizer(format_name)
        text = tokenizer.apply_chat_template(
            messages, tools=tools, add_generation_prompt=add_generation_prompt, tokenize=False
        )
    else:
        rendered, _ = render_jinja_template(
            [messages],
            tools=tools,
            chat_template=export_jinja(format_name),
            add_generation_prompt=add_generation_prompt,
        )
        text = rendered[0]
    rendered, spans = render_jinja_template(
        [messages],
        tools=tools,
        chat_template=export_jinja(format_name),
        add_generation_prompt=add_generation_prompt,
        return_assistant_tokens_mask=True,
    )
    assert rendered[0] == text
    return text, [tuple(span) for span in spans[0]]


def trainable_spans(rendering: Rendering) -> list[tuple[int, int]]:
    """Character spans of the runs of trainable segments (empty segments ignored)."""
    spans: list[tuple[int, int]] = []
    position = 0
    for segment in rendering.segments:
        end = position + len(segment.text)
        if segment.trainable and segment.text:
            if spans and spans[-1][1] == position:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((position, end))
        position = end
    return spans


def merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    result: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if start == end:
            continue
        if result and result[-1][1] >= start:
            result[-1] = (result[-1][0], max(end, result[-1][1]))
        else:
            result.append((start, end))
    return result


def render_both(
    fmt: Format, request: dict[str, Any], add_generation_prompt: bool
) -> tuple[Rendering, str, list[tuple[int, int]]]:
    rendering = fmt.render(request, add_generation_prompt=add_generation_prompt)
    text, spans = hf_render(fmt.name, request, add_generation_prompt)
    return rendering, text, spans


# ------------------------------------------------------------------ transformers.js

_JS_RUNNER = """
import { Template } from "@huggingface/jinja";
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { template, cases } = JSON.parse(input);
  const compiled = new Template(template);
  for (const c of cases) {
    try {
      process.stdout.write(JSON.stringify({ text: compiled.render(c) }) + "\\n");
    } catch (e) {
      process.stdout.write(JSON.stringify({ error: String(e.message || e) }) + "\\n");
    }
  }
});
"""


def jinja_js_directory() -> Path | None:
    """Where ``node_modules/@huggingface/jinja`` is (``PAWLETTE_JINJA_JS``), if anywhere."""
    configured = os.environ.get("PAWLETTE_JINJA_JS")
    if not configured or shutil.which("node") is None:
        return None
    directory = Path(configured)
    if not (directory / "node_modules" / "@huggingface" / "jinja").is_dir():
        return None
    return directory


def render_with_jinja_js(
    directory: Path, template: str, cases: list[dict[str, Any]]
) -> list[dict[str, str]]:
    runner = directory / "pawlette_render.mjs"
    if not runner.exists() or runner.read_text() != _JS_RUNNER:
        runner.write_text(_JS_RUNNER)
    result = subprocess.run(
        ["node", str(runner)],
        input=json.dumps({"template": template, "cases": cases}),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return [json.loads(line) for line in result.stdout.split("\n") if line]
