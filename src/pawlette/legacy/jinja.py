"""The Jinja interpreter: a :class:`~.layout.Layout` emitted as a Hugging Face chat template.

The template mirrors :mod:`.write` branch for branch, with ``{% generation %}`` around what
the writer marks trainable, so ``apply_chat_template`` renders byte for byte what
:meth:`pawlette.Format.render` renders (checked by the generated cross-artifact tests).
Decisions a layout makes statically (is there a default system text, is reasoning kept only
after the last query, ...) are taken here in Python: the template holds only the branches the
layout needs.  It follows the rules of the hand-written templates (see
:mod:`pawlette.export.templates._common`): every tag strips the whitespace around it, literal
text is written as ``{{- "..." -}}``, no Python string methods.

Inputs, as Hugging Face callers pass them: tool call ``arguments`` as objects (a string is
written as it is, as Qwen3's template does), message content as a string or text parts, and
an :class:`~.layout.Option` as the template variable of the same name when it is passed
(Llama 3's ``date_string``), else the option's value baked in.
"""

from __future__ import annotations

import json
from typing import cast

from ..export.templates._common import TEXT_MACRO, jinja_string
from . import decision, python_calls, python_results, python_tools
from .layout import Fence, JsonCalls, Layout, Lit, Marker
from .owners import owner
from .write import option_text


class _Emitter:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.lines: list[str] = []

    def out(self, line: str) -> None:
        self.lines.append(line)

    def fence(self, pieces: Fence) -> None:
        for piece in pieces:
            if isinstance(piece, (Marker, Lit)):
                if piece.text:
                    self.out(f"{{{{- {jinja_string(piece.text)} -}}}}")
            else:
                default = jinja_string(option_text(self.layout, piece))
                self.out(f"{{%- if {piece.name} is defined -%}}{{{{- {piece.name} -}}}}")
                self.out(f"{{%- else -%}}{{{{- {default} -}}}}{{%- endif -%}}")

    def text(self, message: str, index: str) -> None:
        if self.layout.parts is not None:  # a concept of its own module
            from .parts import jinja_content

            return self.out(jinja_content(self.layout, message, index))
        self.out(f"{{{{- text_of({message}, {index}, {jinja_string(self.layout.name)}) -}}}}")

    def raise_if(self, condition: str, message: str) -> None:
        self.out(f"{{%- if {condition} -%}}")
        self.out(f"{{{{- raise_exception({jinja_string(message)}) -}}}}")
        self.out("{%- endif -%}")

    # ------------------------------------------------------------------ concepts

    def tools_block(self) -> None:
        block = self.layout.tools
        assert block is not None
        if isinstance(block, python_tools.PythonToolsBlock):  # a concept of its own module
            return python_tools.jinja_listing(self)
        self.fence(block.open)
        self.out("{%- for tool in tools -%}")
        self.fence(block.item_open)
        value = "tool" if block.wrap == "openai" else "tool.function"
        indent = "" if block.indent is None else f"(indent={block.indent})"
        self.out(f"{{{{- {value} | tojson{indent} -}}}}")
        self.fence(block.item_close)
        self.out("{%- endfor -%}")
        self.fence(block.close)

    def host_body(self, message: str | None, index: str, default: str | None) -> None:
        """Text and tools block (``message``: a Jinja expression, or None for no message)."""
        block = self.layout.tools
        assert block is not None
        if block.first:
            self.tools_block()
            if message is not None:
                self.text(message, index)
            elif default:
                self.out(f"{{{{- {jinja_string(default)} -}}}}")
            return
        if message is not None:
            self.text(message, index)
            self.fence(block.separator)
        elif default is not None:
            self.out(f"{{{{- {jinja_string(default)} -}}}}")
            self.fence(block.separator)
        self.tools_block()

    def system(self) -> None:
        layout = self.layout
        system = layout.system
        frame = layout.frames["system"]
        block = layout.tools
        host_system = block is not None and block.host == "system"
        conditions = ["has_system"]
        if system.default is not None or system.always:
            conditions = ["true"]
        elif host_system:
            conditions.append("has_tools")
        self.out(f"{{%- if {' or '.join(conditions)} -%}}")
        self.fence(frame.open)
        if system.preamble_with_tools:
            self.out("{%- if has_tools -%}")
            self.fence(system.preamble_with_tools)
            self.out("{%- endif -%}")
        if system.preamble_without_tools:
            self.out("{%- if not has_tools -%}")
            self.fence(system.preamble_without_tools)
            self.out("{%- endif -%}")
        self.fence(system.preamble)
        if host_system:
            self.out("{%- if has_tools -%}")
            self.out("{%- if has_system -%}")
            self.host_body("messages[0]", "0", None)
            self.out("{%- else -%}")
            self.host_body(None, "0", system.default)
            self.out("{%- endif -%}")
            self.out("{%- else -%}")
        self.out("{%- if has_system -%}")
        self.text("messages[0]", "0")
        if system.default:
            self.out("{%- else -%}")
            self.out(f"{{{{- {jinja_string(system.default)} -}}}}")
        self.out("{%- endif -%}")
        if host_system:
            self.out("{%- endif -%}")
        self.fence(frame.end)
        self.fence(frame.after)
        self.out("{%- endif -%}")

    def plain(self) -> None:
        layout = self.layout
        block = layout.tools
        for role in ("user", "system"):
            roles = '["system", "developer"]' if role == "system" else jinja_string(role)
            self.out(f"{{%- elif message.role in {roles} -%}}")
            frame = layout.frames["user" if role == "user" else "system"]
            self.fence(frame.open)
            if role == "user" and block is not None and block.host == "first_user":
                self.out("{%- if has_tools and loop.index0 == first -%}")
                self.host_body("message", "loop.index0", None)
                self.out("{%- else -%}")
                self.text("message", "loop.index0")
                self.out("{%- endif -%}")
            else:
                self.text("message", "loop.index0")
            self.fence(frame.end)
            self.fence(frame.after)

    def reasoning_condition(self) -> str | None:
        reasoning = self.layout.reasoning
        if reasoning is None:
            return None
        given = "message.reasoning_content is defined and message.reasoning_content is not none"
        if reasoning.keep == "all":
            return given
        wanted = f"({given} and message.reasoning_content)"
        if reasoning.always_on_last:
            wanted = f"({wanted} or loop.last)"
        return f"loop.index0 > ns.last_query and {wanted}"

    def assistant(self) -> None:
        layout = self.layout
        frame = layout.frames["assistant"]
        self.out('{%- elif message.role == "assistant" -%}')
        self.fence(frame.open)
        if layout.reasoning is None:
            self.raise_if(
                "message.reasoning_content is defined and message.reasoning_content is not none",
                f"reasoning_content: {layout.name} has no reasoning block",
            )
        self.out("{%- generation -%}")
        condition = self.reasoning_condition()
        if condition is not None and layout.reasoning is not None:
            self.out(f"{{%- if {condition} -%}}")
            self.fence(layout.reasoning.open)
            self.out("{%- if message.reasoning_content is defined -%}")
            self.out("{{- message.reasoning_content or '' -}}")
            self.out("{%- endif -%}")
            self.fence(layout.reasoning.close)
            self.out("{%- endif -%}")
        self.text("message", "loop.index0")
        self.calls()
        self.fence(frame.end)
        self.out("{%- endgeneration -%}")
        self.fence(frame.after)

    def calls(self) -> None:
        calls = self.layout.calls
        present = "message.tool_calls is defined and message.tool_calls"
        if calls is None:
            self.raise_if(present, f"tool_calls: {self.layout.name} has no calls")
            return
        if not isinstance(calls, JsonCalls):  # a concept of its own module
            python_calls.jinja_calls(self)
            return
        self.out(f"{{%- if {present} -%}}")
        has_text = "(message.content is defined and message.content)"
        if not calls.with_content:
            self.raise_if(has_text, f"content alongside tool calls: {self.layout.name}")
        if not calls.parallel:
            self.raise_if(
                "message.tool_calls | length > 1", f"one call per turn: {self.layout.name}"
            )
        self.out("{%- for call in message.tool_calls -%}")
        self.out(f"{{%- if not loop.first or {has_text} -%}}")
        self.fence(calls.separator)
        self.out("{%- endif -%}")
        self.fence(calls.open or ())
        head = f"{{{json.dumps(calls.name_key)}: "
        middle = f", {json.dumps(calls.arguments_key)}: "
        self.out(f"{{{{- {jinja_string(head)} -}}}}")
        self.out("{{- call.function.name | tojson -}}")
        self.out(f"{{{{- {jinja_string(middle)} -}}}}")
        self.out("{%- if call.function.arguments is string -%}")
        self.out("{{- call.function.arguments | trim -}}")
        self.out("{%- else -%}")
        self.out("{{- call.function.arguments | tojson -}}")
        self.out("{%- endif -%}")
        self.out('{{- "}" -}}')
        self.fence(calls.close)
        self.out("{%- endfor -%}")
        self.out("{%- endif -%}")

    def results(self) -> None:
        results = self.layout.results
        if isinstance(results, python_results.PythonResults):  # a concept of its own module
            return python_results.jinja_results(self)
        self.out('{%- elif message.role == "tool" -%}')
        if results is None:
            self.out(
                f"{{{{- raise_exception({jinja_string(f'{self.layout.name} has no results')}) -}}}}"
            )
            return
        frame = results.frame
        if results.grouped:
            self.out('{%- if loop.index0 == first or messages[loop.index0 - 1].role != "tool" -%}')
            self.fence(frame.open)
            self.out("{%- endif -%}")
        else:
            self.fence(frame.open)
        self.fence(results.item_open)
        self.text("message", "loop.index0")
        self.fence(results.item_close)
        if results.grouped:
            self.out('{%- if loop.last or messages[loop.index0 + 1].role != "tool" -%}')
        self.fence(frame.end)
        self.fence(frame.after)
        if results.grouped:
            self.out("{%- endif -%}")

    def build(self) -> str:
        layout = self.layout
        self.out(TEXT_MACRO.strip())
        if python_calls.is_python(layout.calls):
            self.out(python_calls.JINJA_MACROS.strip())
        if python_tools.literal_macros(layout):  # for the concepts writing Python literals
            self.out(python_tools.literal_macros(layout))
        if layout.parts is not None:  # a concept of its own module
            from .parts import jinja_macros

            self.out(jinja_macros(layout))
        if python_results.is_python(layout.results):  # a concept of its own module
            self.out(python_results.jinja_macros(layout))
        self.out("{%- set has_tools = tools is defined and tools is not none and tools -%}")
        # OpenAI's ``developer`` role is the system role (pawlette.openai reads it so).
        self.out(
            "{%- set has_system = messages | length > 0"
            ' and messages[0].role in ["system", "developer"] -%}'
        )
        self.out("{%- set first = 1 if has_system else 0 -%}")
        self.out("{%- set ns = namespace(last_query=-1) -%}")
        reasoning = layout.reasoning
        if reasoning is not None and reasoning.keep == "after_last_query":
            self.out("{%- for message in messages -%}")
            self.out('{%- if message.role == "user" -%}{%- set ns.last_query = loop.index0 -%}')
            self.out("{%- endif -%}")
            self.out("{%- endfor -%}")
        block = layout.tools
        if block is not None and block.host == "first_user":
            self.raise_if(
                'has_tools and (messages | length <= first or messages[first].role != "user")',
                f"{layout.name} writes the tools into the first user message: none found",
            )
        self.fence(layout.begin)
        self.system()
        self.out("{%- for message in messages -%}")
        named = "message.name is defined and message.name is not none"
        if python_results.is_python(layout.results):  # its tool messages may carry names
            named += ' and message.role != "tool"'
        self.raise_if(
            named,
            f"a message name: {layout.name} has no place for it",
        )
        self.out("{%- if loop.index0 < first -%}")
        self.plain()
        if layout.decision is not None:  # a concept of its own module
            decision.jinja_assistant(self)
        else:
            self.assistant()
        self.results()
        self.out("{%- else -%}")
        self.out(
            "{{- raise_exception('messages[' ~ loop.index0 ~ '].role: ' ~ message.role"
            " ~ '; expected system, user, assistant or tool') -}}"
        )
        self.out("{%- endif -%}")
        self.out("{%- endfor -%}")
        self.out("{%- if add_generation_prompt -%}")
        self.fence(layout.generation_prompt)
        self.out("{%- endif -%}")
        return "\n".join(self.lines)


def chat_template(layout: Layout) -> str:
    """The chat template of a layout (see the module docstring)."""
    concept = owner(layout, "chat_template")
    if concept is not None:
        return cast(str, concept(layout))
    return _Emitter(layout).build()
