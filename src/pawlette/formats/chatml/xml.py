"""The ChatML variants whose calls are Qwen3-Coder's XML (see the package docstring)."""

# ruff: noqa: E501  (the instruction texts are the templates' own lines)

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pawlette.declare import (
    Frame,
    Ignored,
    Layout,
    Marker,
    Reasoning,
    Results,
    Switch,
    SystemPrompt,
    ToolsBlock,
    Trimmed,
    XmlCalls,
    fence,
)
from pawlette.declare.pieces import Fence
from pawlette.declare.table import Table
from pawlette.declare.write import Render

from .xml_tools import XmlToolsBlock

if TYPE_CHECKING:
    from pawlette.declare.jinja import Template

    from . import ChatmlOptions

IM_START, IM_END = Marker("<|im_start|>"), Marker("<|im_end|>")
TOOL_CALL, TOOL_CALL_END = Marker("<tool_call>"), Marker("</tool_call>")
RESPONSE, RESPONSE_END = Marker("<tool_response>"), Marker("</tool_response>")
THINK, THINK_END = Marker("<think>"), Marker("</think>")
THINKING = Switch("thinking", "enable_thinking")
# Results a client sends as a user message: Qwen's templates take no such message as the
# last query (Reasoning.not_query).
TOOL_RESPONSE_TEXT = ("<tool_response>", "</tool_response>")
"""The templates' ``enable_thinking`` (Qwen3's, QwQ's, Qwen3.5's, Nemotron 3 Nano's)."""

# What Jinja's ``trim`` removes (Python's ``str.strip()``), as Reasoning.trim spells it.
WHITESPACE = "".join(character for character in map(chr, range(0x3001)) if character.isspace())
CODER_SYSTEM = (
    "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks."
)

EXAMPLE_TWO = {
    # Qwen3-Coder's second example value; Qwen3.5's and Nemotron's span lines.
    "qwen3-coder": "value_2\n",
    "other": "This is the value for the second parameter\nthat can span\nmultiple lines\n",
}
REMINDER = {
    "qwen3-coder": "the tool calling block MUST begin with an opening <tool_call> tag and end with a closing </tool_call> tag.",
    "other": "an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags",
}


def instructions(dialect: str) -> tuple[object, ...]:
    """The fixed text after ``</tools>``: the call format and its reminder.  ``<tool_call>``
    is a token even inside this text: Qwen's tokenizer matches it there."""
    key = "qwen3-coder" if dialect == "qwen3-coder" else "other"
    noun = "tool" if dialect == "qwen3-coder" else "function"
    return (
        "\n</tools>\n\nIf you choose to call a "
        + noun
        + " ONLY reply in the following format with NO suffix:\n\n",
        TOOL_CALL,
        "\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
        "</parameter>\n<parameter=example_parameter_2>\n" + EXAMPLE_TWO[key] + "</parameter>\n"
        "</function>\n",
        TOOL_CALL_END,
        "\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: "
        + REMINDER[key]
        + "\n- Required parameters MUST be specified\n- You may provide optional reasoning for "
        "your function call in natural language BEFORE the function call, but NOT after\n- If "
        "there is no function call available, answer the question like normal with your "
        "current knowledge and do not tell the user about function calls\n</IMPORTANT>",
    )


def _frame(role: str) -> Frame:
    return Frame(open=fence(IM_START, f"{role}\n"), end=fence(IM_END), after=fence("\n"))


@dataclass(frozen=True)
class QwenXmlCalls(XmlCalls):
    """Qwen's XML calls: between text and the first call, ``separator`` also reads as
    ``text_separator`` (models write one newline where Qwen3.5's template writes a blank
    line; the lexer takes ``separator`` + ``open`` as one marker, which text would else
    keep)."""

    def after_text_spellings(self, table: Table, first: Fence) -> set[str]:
        spellings = super().after_text_spellings(table, first)
        if self.separator:
            spellings |= {*table.spellings(self.loose, self.separator, first)}
        return spellings


@dataclass(frozen=True)
class CallTextTrimmed(Trimmed):
    """Only the text of assistant turns that hold calls is trimmed (Qwen3-Coder trims the
    text before its calls and writes every other turn's text as given)."""

    def trims(self, out: Render, index: int) -> bool:
        message = out.messages[index]
        return (
            super().trims(out, index) and message.role == "assistant" and bool(message.tool_calls)
        )

    def jinja_content(self, out: Template, role: str) -> bool:
        if role != "assistant" or role not in self.roles:
            return False
        out.out("{%- if message.tool_calls is defined and message.tool_calls -%}")
        super().jinja_content(out, role)
        text = f"text_of(message, index, {out.layout.name!r})"
        out.out(f"{{%- else -%}}{{{{- {text} -}}}}{{%- endif -%}}")
        return True


def _calls(dialect: str) -> XmlCalls:
    """``<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>``,
    values as ``| string`` writes them (Python's ``True``/``None``)."""
    nemotron = dialect == "nemotron-3-nano"
    return (XmlCalls if nemotron else QwenXmlCalls)(
        open=fence(TOOL_CALL, "\n<function="),
        name_close=fence(">\n"),
        key_open=fence("<parameter="),
        key_close=fence(">\n"),
        value_close=fence("\n</parameter>\n"),
        # Nemotron writes a newline after every call, none between them.
        close=fence("</function>\n", TOOL_CALL_END, "\n")
        if nemotron
        else fence("</function>\n", TOOL_CALL_END),
        separator=() if nemotron else fence("\n"),
        text_separator=fence("\n") if nemotron else fence("\n\n"),
        values="python",
    )


def coder_layout(options: ChatmlOptions) -> Layout:
    """Qwen3-Coder: the system text, then the tools as XML; text before calls trimmed."""
    from . import VARIANTS, variant_layout

    return Layout(
        name="chatml",
        summary="ChatML (Qwen2.5/Qwen3): <|im_start|>role, <tool_call> JSON, <think>",
        frames={
            **{role: _frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(open=fence(IM_START, "user\n"), end=fence(IM_END), after=fence("\n")),
        },
        concepts=(
            SystemPrompt(default=CODER_SYSTEM, default_when="with_tools"),
            XmlToolsBlock(
                place="system",
                open=fence("\n\n# Tools\n\nYou have access to the following tools:\n\n<tools>"),
                close=fence(*instructions("qwen3-coder")),  # type: ignore[arg-type]
            ),
            Ignored(("name", "reasoning")),
            CallTextTrimmed(roles=("assistant",)),
            _calls("qwen3-coder"),
            Results(
                grouped=True,
                item_open=fence(RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END, "\n"),
            ),
        ),
        options=options,
        from_options=variant_layout,
        variants=VARIANTS,
        template_variables=lambda options: {"enable_thinking": options.thinking},
    )


def qwen35_layout(options: ChatmlOptions) -> Layout:
    """Qwen3.5: the tools (JSON lines) first in the system turn, every text trimmed, a
    reasoning block on every turn after the last query, the prompt opening ``<think>``."""
    from . import VARIANTS, variant_layout

    reasoning = Reasoning(
        open=fence(THINK, "\n"),
        close=fence("\n", THINK_END, "\n\n"),
        keep="after_last_query",
        empty_after_last_query=True,
        no_query="refused",
        not_query=TOOL_RESPONSE_TEXT,
        not_query_trimmed=True,
        prompt="open" if options.thinking else "empty",
        trim=WHITESPACE,
        # A call opening inside the block ends it (llama.cpp's, vLLM's and SGLang's reading).
        calls_end=True,
        in_content="unset",
    )
    return Layout(
        name="chatml",
        summary="ChatML (Qwen2.5/Qwen3): <|im_start|>role, <tool_call> JSON, <think>",
        frames={
            **{role: _frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(open=fence(IM_START, "user"), end=fence(IM_END), after=fence("\n")),
        },
        concepts=(
            SystemPrompt(placement="first_only"),
            ToolsBlock(
                place="system",
                first=True,
                open=fence(
                    "# Tools\n\nYou have access to the following functions:\n\n",
                    "<tools>",
                ),
                item_open=fence("\n"),
                close=fence(*instructions("qwen3.5")),  # type: ignore[arg-type]
                separator=fence("\n\n"),
            ),
            # Every text is trimmed: Trimmed writes the content (before Reasoning would).
            Trimmed(),
            reasoning,
            Ignored(("name",)),
            _calls("qwen3.5"),
            Results(
                grouped=True,
                item_open=fence("\n", RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END),
                trim=True,
            ),
        ),
        options=options,
        from_options=variant_layout,
        variants=VARIANTS,
        template_variables=lambda options: {"enable_thinking": options.thinking},
        switches=(THINKING,),
    )


def nemotron_layout(options: ChatmlOptions) -> Layout:
    """Nemotron 3 Nano: a system turn always, the tools as XML after its text, a block or
    ``<think></think>`` on every assistant turn (:mod:`.nemotron`), a newline after each call."""
    from . import VARIANTS, variant_layout
    from .nemotron import NemotronReasoning, NemotronText

    truncate = options.truncate_history_thinking
    return Layout(
        name="chatml",
        summary="ChatML (Qwen2.5/Qwen3): <|im_start|>role, <tool_call> JSON, <think>",
        frames={
            **{role: _frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(open=fence(IM_START, "user\n"), end=fence(IM_END), after=fence("\n")),
        },
        concepts=(
            SystemPrompt(always=True),
            XmlToolsBlock(
                place="system",
                enum=True,
                open=fence("# Tools\n\nYou have access to the following functions:\n\n<tools>"),
                close=fence(*instructions("nemotron-3-nano")),  # type: ignore[arg-type]
                separator=fence("\n\n"),
                separator_when="text",
            ),
            NemotronReasoning(
                open=fence(THINK, "\n"),
                close=fence("\n", THINK_END, "\n"),
                keep="after_last_query" if truncate else "all",
                absent=fence(THINK, THINK_END),
                prompt="open" if options.thinking else "empty",
                calls_end=True,
                truncate=truncate,
            ),
            NemotronText(truncate=truncate),
            Ignored(("name",)),
            _calls("nemotron-3-nano"),
            Results(
                grouped=True,
                item_open=fence(RESPONSE, "\n"),
                item_close=fence("\n", RESPONSE_END, "\n"),
            ),
        ),
        options=options,
        from_options=variant_layout,
        variants=VARIANTS,
        template_variables=lambda options: {
            "enable_thinking": options.thinking,
            "truncate_history_thinking": options.truncate_history_thinking,
        },
        switches=(THINKING, Switch("truncate_history_thinking", "truncate_history_thinking")),
    )


STEPFUN_INSTRUCTIONS = (
    "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with "
    "NO suffix:\n\n",
    TOOL_CALL,
    "\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
    "</parameter>\n<parameter=example_parameter_2>\n" + EXAMPLE_TWO["other"] + "</parameter>\n"
    "</function>\n",
    TOOL_CALL_END,
    "\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner "
    "<function=...>\n...\n</function> block must be nested within <tool_call>\n...\n"
    "</tool_call> XML tags\n- Required parameters MUST be specified\n</IMPORTANT>",
)


def stepfun_layout(options: ChatmlOptions) -> Layout:
    """Step 3.5 Flash: Qwen3.5's tools block after the system text, calls written right
    after the text and after each other, results in a ``tool_response`` turn, a reasoning
    block on every turn after the last query and the prompt opening ``<think>``."""
    from . import VARIANTS, variant_layout

    return Layout(
        name="chatml",
        summary="ChatML (Qwen2.5/Qwen3): <|im_start|>role, <tool_call> JSON, <think>",
        frames={
            **{role: _frame(role) for role in ("system", "user", "assistant")},
            "tool": Frame(
                open=fence(IM_START, "tool_response\n"), end=fence(IM_END), after=fence("\n")
            ),
        },
        concepts=(
            SystemPrompt(),
            ToolsBlock(
                place="system",
                open=fence(
                    "# Tools\n\nYou have access to the following functions in JSONSchema "
                    "format:\n\n",
                    "<tools>",
                ),
                item_open=fence("\n"),
                close=fence(*STEPFUN_INSTRUCTIONS),
                separator=fence("\n\n"),
            ),
            Reasoning(
                open=fence(THINK, "\n"),
                close=fence("\n", THINK_END, "\n"),
                keep="after_last_query",
                empty_after_last_query=True,
                no_query="dropped",
                not_query=TOOL_RESPONSE_TEXT,
                # The template has no switch: its prompt always opens the block.
                prompt="open",
                # A call opening inside the block ends it, as Qwen3.5's and Nemotron's do.
                calls_end=True,
                in_content="unset",
            ),
            Ignored(("name",)),
            XmlCalls(
                open=fence(TOOL_CALL, "\n<function="),
                name_close=fence(">\n"),
                key_open=fence("<parameter="),
                key_close=fence(">\n"),
                value_close=fence("\n</parameter>\n"),
                close=fence("</function>\n", TOOL_CALL_END),
                values="python",
            ),
            Results(grouped=True, item_open=fence(RESPONSE), item_close=fence(RESPONSE_END)),
        ),
        options=options,
        from_options=variant_layout,
        variants=VARIANTS,
    )


XML_LAYOUTS = {
    "qwen3-coder": coder_layout,
    "qwen3.5": qwen35_layout,
    "nemotron-3-nano": nemotron_layout,
    "stepfun3.5": stepfun_layout,
}
