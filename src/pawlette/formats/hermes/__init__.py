"""Hermes 2 Pro and Hermes 3 (Nous Research) as their ``tool_use`` chat template writes them:
ChatML turns, a generated function-calling system turn, Hermes JSON calls in
``<tool_call>``, results in ``tool`` turns.

The wire format (``<|begin_of_text|>``, ``<|im_start|>``, ``<|im_end|>``, ``<tool_call>``,
``</tool_call>``, ``<tool_response>``, ``</tool_response>`` are markers)::

    <|begin_of_text|><|im_start|>system
    You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. You may call one or more functions to assist with the user query. Don't make assumptions about what values to plug into functions. Here are the available tools: <tools> {"type": "function", "function": {"name": "get_weather", "description": "get_weather(city: str, days: int) - Get the weather.

        Args:
            city(str): The city.        days(int): ", "parameters": {"type": "object", ...}} </tools>Use the following pydantic model json schema for each tool call you will make: {"properties": {"name": {"title": "Name", "type": "string"}, "arguments": {"title": "Arguments", "type": "object"}}, "required": ["name", "arguments"], "title": "FunctionCall", "type": "object"}}
    For each function call return a json object with function name and arguments within <tool_call></tool_call> XML tags as follows:
    <tool_call>
    {"name": <function-name>, "arguments": <args-dict>}
    </tool_call><|im_end|>
    <|im_start|>system
    You are terse.<|im_end|>
    <|im_start|>user
    Weather in Paris?<|im_end|>
    <|im_start|>assistant
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call><|im_end|>
    <|im_start|>tool
    <tool_response>
    18°C
    </tool_response>
    <|im_end|><|im_start|>assistant
    It is 18°C.<|im_end|>

Decisions (reference: ``NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja`` and
``NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja`` in llama.cpp's ``models/templates``,
byte-identical; the models' tokenizers declare ``<|begin_of_text|>`` as ``bos_token``):

- **Its own module, on ChatML's frame**: the turns are ChatML's, but the tools turn, the
  calls, the results and the begin token all differ from Qwen's (:mod:`.chatml`), so the
  format is ``hermes`` rather than a ``chatml`` variant.
- **The function-calling turn** opens the conversation whenever the request has tools: a
  system turn of its own, before and apart from the caller's system messages (which are
  turns in place).  Each tool is written on one line as the template writes it: a
  JSON-like object whose description is a Python signature built from the schema, the
  tool's description, and an ``Args:`` list, pasted raw (not JSON-escaped: the line is no
  JSON).  The template's type names are kept as it writes them, quirks included (an array
  is ``list[Union[]]``, a schema without ``type`` is ``Union[]``).  A type name its macro
  recurses on forever, so that the template cannot render the tool at all, is written
  ``None`` (``"null"``, as in ``["number", "null"]``) or ``Any`` (another name).  A tool without
  properties is written with ``"parameters": {}`` (a recorded loss unless its schema is
  ``{"type": "object", "properties": {}}``, what it reads back as).  Reading gives each
  tool back with its description and parameters.
- **Without tools** the ``tool_use`` template cannot render (it iterates ``tools``);
  Hugging Face then uses the model's default template, plain ChatML after
  ``<|begin_of_text|>``, and so does pawlette: no function-calling turn.
- **Calls**: ``<tool_call>\\n{"name": NAME, "arguments": ARGS}\\n</tool_call>``, one per
  line; the turn's text is not written beside calls (the template drops it: a recorded
  loss).  Arguments as Jinja's ``tojson`` of the parsed object, names as JSON strings (the
  template pastes them raw: the same for every name without ``"`` or ``\\``).  No ids:
  results answer calls by position.
- **Results**: a run of tool messages is one ``tool`` turn of ``<tool_response>\\n...
  \\n</tool_response>`` items; ``<|im_end|>`` ends the run with no newline after it (the
  template's own layout: the next turn follows ``<|im_end|>`` at once).  The template
  writes a newline after each result *unless it is the conversation's last message*, so
  its prompt after results (no newline before ``<|im_end|>``) does not begin its training
  render of the same turn (a newline there).  pawlette's ``hermes`` writes every results
  turn as the template writes it before a generation prompt (a newline between results,
  none after the last): prompts after results are the template's byte for byte and always
  begin the training render; a results turn in the middle of a conversation lacks the
  template's newline before ``<|im_end|>`` (peers differ here too: Ollama's Hermes 3
  template writes none).  ``hermes:exact`` writes the
  template's layout byte for byte (``result_gap``), and detection names it for these
  templates.
- **Dropped fields** (recorded losses, never refusals): ``reasoning_content``, a message's
  ``name``, text beside calls.
- **Reading** what the models write, as vLLM's ``hermes`` parser and llama.cpp read it:
  the newlines inside ``<tool_call>`` are optional, several calls may follow one another
  with or without whitespace, text before the calls is content, and a last call whose
  ``</tool_call>`` never comes is a call when its object is whole (vLLM: an engine may cut
  the close as a stop string).  Stricter, each kept as content as written: arguments given
  as a JSON string rather than an object (vLLM passes them through), with a warning;
  several objects in one ``<tool_call>`` (SGLang reads them; vLLM does not), with a
  warning; and the loose spellings older llama.cpp accepted (``<function=NAME>``,
  ```` ```json ```` fences, a bare JSON object): the template teaches only ``<tool_call>``,
  and current llama.cpp reads only that too.

Remaining differences from the template: a tool without a description is written with an
empty one, and one without parameters as one without properties (the template raises on
both); the template writes a tool message that opens the
conversation without its ``tool`` opener (pawlette opens the turn).
"""

# ruff: noqa: E501  (the docstring shows the wire format as it is, long lines included)

from __future__ import annotations

from dataclasses import dataclass

from pawlette.declare import (
    Frame,
    Ignored,
    JsonCalls,
    Layout,
    Marker,
    Results,
    SystemPrompt,
    declare,
    fence,
)

from .tools import HermesTools

BEGIN = Marker("<|begin_of_text|>")
IM_START, IM_END = Marker("<|im_start|>"), Marker("<|im_end|>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")

TOOLS_INTRO = (
    "system\nYou are a function calling AI model. You are provided with function signatures "
    "within <tools></tools> XML tags. You may call one or more functions to assist with the "
    "user query. Don't make assumptions about what values to plug into functions. Here are "
    "the available tools: <tools> "
)
TOOLS_OUTRO = (
    " </tools>Use the following pydantic model json schema for each tool call you will make: "
    '{"properties": {"name": {"title": "Name", "type": "string"}, "arguments": {"title": '
    '"Arguments", "type": "object"}}, "required": ["name", "arguments"], "title": '
    '"FunctionCall", "type": "object"}}\nFor each function call return a json object with '
    "function name and arguments within "
)


@dataclass(frozen=True)
class HermesOptions:
    """``result_gap``: a newline after the last result of a results turn that another
    message follows, as the template writes it (the ``exact`` variant); off, none, as the
    template writes the results before a generation prompt, so a prompt render always
    begins the training render (the template's does not).  Results within a turn are
    separated by a newline either way."""

    result_gap: bool = False


EXACT = HermesOptions(result_gap=True)


def frame(role: str) -> Frame:
    return Frame(open=fence(IM_START, f"{role}\n"), end=fence(IM_END), after=fence("\n"))


def layout(options: HermesOptions) -> Layout:
    return Layout(
        name="hermes",
        summary="Hermes 2 Pro / Hermes 3 tool_use: ChatML, a function-calling turn, <tool_call> JSON",
        begin=fence(BEGIN),
        frames={
            **{role: frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(open=fence(IM_START, "tool\n"), end=fence(IM_END)),
        },
        concepts=(
            SystemPrompt(),
            HermesTools(
                place="own_turn",
                open=fence(IM_START, TOOLS_INTRO),
                close=fence(
                    TOOLS_OUTRO,
                    TOOL_CALL,
                    TOOL_CALL_END,
                    " XML tags as follows:\n",
                    TOOL_CALL,
                    '\n{"name": <function-name>, "arguments": <args-dict>}\n',
                    TOOL_CALL_END,
                    IM_END,
                    "\n",
                ),
            ),
            Ignored(("name", "reasoning")),
            JsonCalls(
                open=fence(TOOL_CALL, "\n"),
                close=fence("\n", TOOL_CALL_END),
                separator=fence("\n"),
                with_content=False,
                drops_content=True,
                close_optional=True,  # vLLM's hermes parser reads an unclosed call
            ),
            Results(
                grouped=True,
                item_open=fence(RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END),
                item_gap=fence("\n"),
                gap_ends_group=options.result_gap,
            ),
        ),
        options=options,
        from_options=layout,
        variants={"exact": EXACT},
    )


FORMAT = declare(layout(HermesOptions()))
