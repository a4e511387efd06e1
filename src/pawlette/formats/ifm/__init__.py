"""IFM-K2-Horizon: ``<|ifm|im_start|>ROLE\\n…<|ifm|im_end|>`` turns with nothing between
them, every assistant turn opening a reasoning block (empty when it has none), calls as one
tag pair per argument in an ``<ifm|tool_calls>`` block (or as one JSON object each:
``ifm:json-calls``, the template's ``tool_call_format='json'``), as the model's chat
template writes them; its tools presented as Markdown, the template's default, as XML
(``ifm:xml-tools``, the template's ``tool_presentation_format='xml'``) or as JSON
(``ifm:json-tools``, its ``tool_presentation_format='json'``).

The wire format (the markers are written as special tokens; whether IFM's tokenizer has them
as such could not be read offline; the call instructions are shortened here)::

    <|ifm|im_start|>system
    # Tools
    You may call one or more tools to assist with the user query.

    Available tools are:

    <ifm|tools>
    ## get_weather
    Get the weather.

    **Parameters**
    - `city` *(string, required)* - The city name.
    </ifm|tools>

    When calling tools, you MUST follow the tool-call format below:

    Wrap all tool calls in a single <ifm|tool_calls></ifm|tool_calls> block. ...

    You are terse.<|ifm|im_end|><|ifm|im_start|>user
    Weather in Zürich?<|ifm|im_end|><|ifm|im_start|>assistant
    <ifm|think>
    </ifm|think><ifm|tool_calls>
    <ifm|tool_call>get_weather
    <ifm|arg_key>city</ifm|arg_key>
    <ifm|arg_value>Zürich</ifm|arg_value>
    </ifm|tool_call>
    </ifm|tool_calls><|ifm|im_end|><|ifm|im_start|>tool
    {"temp_c": 3}<|ifm|im_end|><|ifm|im_start|>assistant
    <ifm|think>
    It is cold.</ifm|think>3 °C.<|ifm|im_end|><|ifm|im_start|>assistant
    <ifm|think>

Reference: ``IFM-K2-Horizon.jinja`` (llama.cpp's ``models/templates``).  Its first line writes
``bos_token``; the model's ``bos_token`` is not known here, so the template is rendered
without one, and this format writes nothing before the first turn.

Decisions, each the template's:

- **Tools**, in the first system turn (one is written when the conversation has none),
  between ``<ifm|tools>`` and ``</ifm|tools>``, then the instructions of the template's
  default call format (``xml``), then a blank line and the first system message's text when
  it is not empty.  The option ``tool_presentation`` picks how they are presented, as the
  template's ``tool_presentation_format`` does (the exported template reads that variable):

  - ``"markdown"`` (the default, the template's): each tool as a Markdown section, its
    parameters as a list (:mod:`pawlette.formats.ifm.markdown` says how each schema key is
    written).  Where a tool holds what that presentation does not write (a ``$ref`` outside
    the parameters' definitions, an ``enum`` that is no list, a key it does not know whose
    value nests objects...), every tool is written as JSON instead, as the template does.
    Where the template raises on a tool's schema (``required`` that is no list or names no
    property, ``properties`` that is no object), the render is refused, naming the field.
    Reading a render gives no tools back from the Markdown (a recorded loss: it is not the
    JSON schema it was written from), but its parameter lines still type the calls read
    from a whole conversation: a parameter whose line says ``string`` (or ``any`` with
    allowed values that are all text) reads its value as the text written, so ``"0"``
    stays ``"0"`` (:mod:`pawlette.formats.ifm.markdown_reading`); any other reads as JSON
    where its text is JSON.  Tools written as JSON in its place are read back.
  - ``"xml"`` (``ifm:xml-tools``): each tool as one line, ``<function name=NAME>`` with its
    description, its ``<parameters>`` as ``<param name=... type=... required=true>`` tags
    and its returns (:mod:`pawlette.formats.ifm.xml` says how each schema key is written).
    The fall-back to JSON is the Markdown presentation's (the template classifies the
    tools once for both), and so are the refusals, but for a function's description that
    is no text: the XML prints it as the template does.  Reading a render gives no tools
    back from the XML (a recorded loss), nor the types of their parameters: every call's
    value read from a whole conversation reads as JSON where its text is JSON (``"0"`` as
    the number 0); tools written as JSON in its place are read back.
  - ``"json"`` (``ifm:json-tools``): one ``tojson`` line per tool (the whole OpenAI tool
    object), read back into the tools.
- **System messages**: each is a turn of its own, in place (the first before everything).
- **Reasoning** is written on every assistant turn: ``<ifm|think>\\n``, the reasoning as
  given (not stripped), ``</ifm|think>``, then the turn's text.  A turn without reasoning (or
  with the empty text) writes the empty block ``<ifm|think>\\n</ifm|think>``, read back as no
  reasoning.  The template requires a thinking field on every assistant message (it raises
  "Assistant message is missing a thinking field"): its callers pass the empty text where a
  message has no reasoning, which renders as this format does.
- **Calls** follow the turn's text: ``<ifm|tool_calls>``, then per call ``\\n<ifm|tool_call>``
  NAME ``\\n`` and per argument ``<ifm|arg_key>KEY</ifm|arg_key>\\n<ifm|arg_value>VALUE
  </ifm|arg_value>\\n``, then ``</ifm|tool_call>``; ``\\n</ifm|tool_calls>`` after the last.
  A string value is written as it is, any other as JSON (``tojson``), so the string
  ``"0"`` and the number 0 are both written ``0``: reading types each value by the tool's
  schema (the request's tools for a completion; for a whole conversation, what its tools
  block says), and where no schema says the parameter is a string (no tools given, a
  schema without a ``type``, ``string or null``) text that is JSON reads as JSON, the
  string ``"0"`` as the number 0 (a loss the text cannot avoid).  No ids: results answer
  calls by position.  The option ``tool_call_format`` picks how calls are written, as the
  template's variable of that name does (the exported template reads it):

  - ``"xml"`` (the default, the template's): as above.
  - ``"json"`` (``ifm:json-calls``): per call ``\\n<ifm|tool_call>{"name": "NAME",
    "arguments": ARGUMENTS}</ifm|tool_call>`` (the arguments as ``tojson`` writes them), in
    the same ``<ifm|tool_calls>`` block, and the tools block's instructions for that format.
    A model's calls are read with or without the spaces after ``:`` and ``,`` and the
    newlines between the tags; the object must start right after ``<ifm|tool_call>`` and
    hold ``name`` first, then ``arguments``, as the instructions show (a call written
    otherwise stays text, with a warning).
- **Results**: each tool message is a ``tool`` turn of its own holding its text.
- **The generation prompt** opens the block, ``<|ifm|im_start|>assistant\\n<ifm|think>\\n``
  (the template's default ``reasoning_effort``, ``high``); a completion starts inside it.
- **End**: the model ends its turn with ``<|ifm|im_end|>``, the format's stop.
- A message's ``name`` is not written (a recorded loss).

Remaining differences from the template:

- The template's ``tool_call_format='xml_typed'`` (an ``<ifm|arg_type>`` tag per argument,
  its type read from the tool's schema, or from the value where the schema has variants) is
  not declared: the exported template refuses that value.
- The template raises on a tool without ``parameters``; this format writes it, as one
  without parameters (``- None`` in the Markdown, ``<parameters></parameters>`` in the
  XML), and with the JSON presentation as given.  With the JSON presentation, it also
  writes the schemas the pretty ones refuse (a wrong ``required``), which the template
  raises on in all three.
- The template's ``think_fast`` and ``think_faster`` fields (``<ifm|think_fast>`` and
  ``<ifm|think_faster>`` blocks, and the prompts of ``reasoning_effort`` ``medium`` and
  ``low``) are not declared: pawlette's messages carry one reasoning field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pawlette.declare import (
    Fence,
    Frame,
    Ignored,
    Layout,
    Marker,
    NamedCalls,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    XmlCalls,
    declare,
    fence,
)

from .tools import MarkdownTools, XmlTools

IM_START, IM_END = Marker("<|ifm|im_start|>"), Marker("<|ifm|im_end|>")
THINK, THINK_END = Marker("<ifm|think>"), Marker("</ifm|think>")
TOOLS, TOOLS_END = Marker("<ifm|tools>"), Marker("</ifm|tools>")
TOOL_CALLS, TOOL_CALLS_END = Marker("<ifm|tool_calls>"), Marker("</ifm|tool_calls>")
TOOL_CALL, TOOL_CALL_END = Marker("<ifm|tool_call>"), Marker("</ifm|tool_call>")
ARG_KEY, ARG_KEY_END = Marker("<ifm|arg_key>"), Marker("</ifm|arg_key>")
ARG_VALUE, ARG_VALUE_END = Marker("<ifm|arg_value>"), Marker("</ifm|arg_value>")

TOOLS_INTRO = (
    "# Tools\nYou may call one or more tools to assist with the user query.\n\n"
    "Available tools are:\n\n"
)


_INSTRUCTIONS_HEAD = "\n\nWhen calling tools, you MUST follow the tool-call format below:\n\n"


def _call_instructions(call_format: str) -> Fence:
    """The template's instructions for a call format, the tags in them written as the
    markers they are."""
    if call_format == "json":
        return fence(
            _INSTRUCTIONS_HEAD + "Wrap all tool calls in a single ",
            TOOL_CALLS,
            TOOL_CALLS_END,
            " block. For each call, emit one JSON object with the function name and arguments "
            "on the same line inside ",
            TOOL_CALL,
            TOOL_CALL_END,
            " tags:\n\n",
            TOOL_CALLS,
            "\n",
            TOOL_CALL,
            '{"name": <function-name>, "arguments": <args-json-object>}',
            TOOL_CALL_END,
            "\n",
            TOOL_CALLS_END,
        )
    return fence(
        _INSTRUCTIONS_HEAD + "Wrap all tool calls in a single ",
        TOOL_CALLS,
        TOOL_CALLS_END,
        " block. For each call, write the function name at the start of ",
        TOOL_CALL,
        ", followed by paired ",
        ARG_KEY,
        " and ",
        ARG_VALUE,
        " tags for each argument:\n\n",
        TOOL_CALLS,
        "\n",
        TOOL_CALL,
        "$FUNCTION_NAME\n",
        ARG_KEY,
        "$PARAMETER_NAME",
        ARG_KEY_END,
        "\n",
        ARG_VALUE,
        "$PARAMETER_VALUE",
        ARG_VALUE_END,
        "\n...\n",
        TOOL_CALL_END,
        "\n",
        TOOL_CALLS_END,
        "\n\nString and scalar parameters should be written as plain text. Array and object "
        "parameters should be written as JSON literals.",
    )


@dataclass(frozen=True)
class IfmOptions:
    """``tool_presentation``: how the tools are presented, as the template's
    ``tool_presentation_format``: ``"markdown"`` (its default), ``"xml"`` or ``"json"``.
    ``tool_call_format``: how calls are written, as the template's variable of that name:
    ``"xml"`` (its default: a tag pair per argument) or ``"json"`` (one JSON object per
    call)."""

    tool_presentation: Literal["markdown", "xml", "json"] = "markdown"
    tool_call_format: Literal["xml", "json"] = "xml"


def _variables(options: IfmOptions) -> Mapping[str, Any]:
    """The template's variables this format writes as."""
    return {
        "tool_presentation_format": options.tool_presentation,
        "tool_call_format": options.tool_call_format,
    }


def _frame(role: str) -> Frame:
    return Frame(open=fence(IM_START, f"{role}\n"), end=fence(IM_END))


def _tools(options: IfmOptions) -> ToolsBlock:
    kinds = {"markdown": MarkdownTools, "xml": XmlTools}
    kind = kinds.get(options.tool_presentation, ToolsBlock)
    return kind(
        place="system",
        first=True,
        separator=fence("\n\n"),
        separator_when="text",
        open=fence(TOOLS_INTRO, TOOLS),
        item_open=fence("\n"),  # (each tool's JSON line; Markdown and XML bring their own)
        close=fence("\n", TOOLS_END) + _call_instructions(options.tool_call_format),
    )


def _calls(options: IfmOptions) -> XmlCalls | NamedCalls:
    if options.tool_call_format == "json":
        return NamedCalls(
            section_open=fence(TOOL_CALLS),
            open=fence("\n", TOOL_CALL, '{"name": "'),
            arguments_open=fence('", "arguments": '),
            close=fence("}", TOOL_CALL_END),
            section_close=fence("\n", TOOL_CALLS_END),
        )
    return XmlCalls(
        section_open=fence(TOOL_CALLS),
        open=fence("\n", TOOL_CALL),
        name_close=fence("\n"),
        key_open=fence(ARG_KEY),
        key_close=fence(ARG_KEY_END, "\n", ARG_VALUE),
        value_close=fence(ARG_VALUE_END, "\n"),
        close=fence(TOOL_CALL_END),
        section_close=fence("\n", TOOL_CALLS_END),
    )


def layout(options: IfmOptions) -> Layout:
    return Layout(
        name="ifm",
        summary="IFM-K2-Horizon: <|ifm|im_start|>ROLE turns, <ifm|think> on every assistant turn",
        frames={role: _frame(role) for role in ("system", "user", "assistant", "tool")},
        concepts=(
            SystemPrompt(),
            Ignored(("name",)),  # the template writes no message's name
            _tools(options),
            Reasoning(
                open=fence(THINK, "\n"),
                close=fence(THINK_END),
                keep="all",
                absent=fence(THINK, "\n", THINK_END),
                prompt="open",
            ),
            _calls(options),
            Results(),
        ),
        options=options,
        from_options=layout,
        variants={
            "json-tools": IfmOptions(tool_presentation="json"),
            "xml-tools": IfmOptions(tool_presentation="xml"),
            "json-calls": IfmOptions(tool_call_format="json"),
        },
        template_variables=_variables,
        switches=(
            Switch(
                "tool_presentation", "tool_presentation_format", values=("markdown", "xml", "json")
            ),
            Switch("tool_call_format", "tool_call_format", values=("xml", "json")),
        ),
    )


FORMAT = declare(layout(IfmOptions()))
"""IFM-K2-Horizon's template (:mod:`pawlette.formats.ifm`), its tools as Markdown (its
default; ``ifm:xml-tools``: as XML, ``ifm:json-tools``: as JSON, its
``tool_presentation_format``).  Its callers
give an assistant message without reasoning the empty thinking field the template requires
(:data:`tests.support.template_corpus.CALLER_MESSAGES`); the model's ``bos_token`` is
unknown, so the template is rendered without one, as the format writes none."""
