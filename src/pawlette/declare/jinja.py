"""The Jinja interpreter: a :class:`~.layout.Layout` emitted as a Hugging Face chat template.

The template mirrors :mod:`.write` hook for hook, with ``{% generation %}`` around what the
writer marks trainable, so ``apply_chat_template`` renders byte for byte what
:meth:`pawlette.Format.render` renders (checked by the generated cross-artifact tests).  It
follows the rules of :mod:`pawlette.emit.jinja_text`: every tag strips the
whitespace around it, literal text is written as ``{{- "..." -}}``, no Python string
methods, so it renders the same under transformers, llama.cpp's Jinja engine and
transformers.js.

Inputs, as Hugging Face callers pass them: tool call ``arguments`` as objects (a string is
written as it is), message content as a string or text parts, an :class:`~.pieces.Option`
as the template variable of the same name when it is passed, else the option's value.

In the message loop, ``message``, ``index`` (its position) and ``role`` (``developer`` read
as ``system``) are in scope; ``ns`` is the template's namespace (``ns.previous``: the role of
the last turn written).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..emit.jinja_text import TEXT_MACRO, escape_macro, fill, jinja_string
from .concept import Concept, overrides
from .layout import Frame, Layout
from .pieces import Fence, Option, piece_text


class Template:
    """A chat template being emitted: what every Jinja hook of a concept gets."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.lines: list[str] = []
        self.macros: dict[str, str] = {}
        self.namespace: dict[str, str] = {"previous": "none"}
        self.last_query = False
        concepts = layout.concepts
        self._hooks = {  # the concepts that implement each Jinja hook, in order
            method: [c for c in concepts if overrides(c, method)]
            for method in vars(Concept)
            if method.startswith("jinja_")
        }
        self.prompt = False
        """Whether the open fence being written is the generation prompt's (for
        ``jinja_open``)."""
        self.handled: set[str] = set()
        self.escaping = any(concept.escapes_markers() for concept in concepts)
        """Whether caller text goes through the ``escape`` macro (see :meth:`value`)."""
        self.object_arguments = False
        """Whether the template needs call arguments as objects (it writes them as JSON)."""
        self.parsed_results = False
        """Whether a tool result that is JSON must come parsed (it writes it as a value)."""

    # ------------------------------------------------------------------ what concepts use

    def out(self, line: str) -> None:
        self.lines.append(line)

    def literal(self, text: str) -> None:
        if text:
            self.out(f"{{{{- {jinja_string(text)} -}}}}")

    def fence(self, pieces: Fence) -> None:
        run: list[str] = []  # adjacent literal text written as one literal
        for piece in pieces:
            if isinstance(piece, Option):
                self.literal("".join(run))
                run = []
                default = jinja_string(piece_text(piece, self.layout.options, self.layout.name))
                self.out(f"{{%- if {piece.name} is defined -%}}{{{{- {piece.name} -}}}}")
                self.out(f"{{%- else -%}}{{{{- {default} -}}}}{{%- endif -%}}")
            else:
                run.append(piece.text)
        self.literal("".join(run))

    def value(self, expression: str) -> None:
        """Write caller text (a Jinja expression): escaped where the format escapes markers
        in text (:meth:`.concept.Concept.escapes_markers`; a marker always follows caller
        text in such a format, so a trailing run of backslashes is doubled)."""
        if self.escaping:
            self.out(f"{{{{- escape({expression}, true) -}}}}")
        else:
            self.out(f"{{{{- {expression} -}}}}")

    def arguments(self) -> None:
        """``call``'s arguments as the renderer writes them: a JSON text trimmed, an object
        as its JSON."""
        self.out("{%- if call.function.arguments is string -%}")
        self.out("{{- call.function.arguments | trim -}}")
        self.out("{%- else -%}")
        self.out("{{- call.function.arguments | tojson -}}")
        self.out("{%- endif -%}")

    def text(self, message: str = "message", index: str = "index") -> None:
        """A message's text (its string, or its text parts)."""
        self.value(f"text_of({message}, {index}, {jinja_string(self.layout.name)})")

    def later_content(self, concept: Concept, role: str) -> None:
        """A message's text as the concepts after ``concept`` write it (the first of them
        whose ``jinja_content`` does), else as it is: what the writer writes when
        ``concept``'s content hook passes."""
        later = self.layout.concepts[self.layout.concepts.index(concept) + 1 :]
        for other in self.acting("jinja_content", role):
            if other in later and other.jinja_content(self, role):
                return
        self.text()

    @contextmanager
    def when(self, condition: str) -> Iterator[None]:
        """What the body writes, where the Jinja ``condition`` holds."""
        self.out(f"{{%- if {condition} -%}}")
        yield
        self.out("{%- endif -%}")

    def fence_if(self, condition: str, pieces: Fence, otherwise: Fence | None = None) -> None:
        """``pieces`` where the Jinja ``condition`` holds, else ``otherwise`` (when given)."""
        with self.when(condition):
            self.fence(pieces)
            if otherwise is not None:
                self.out("{%- else -%}")
                self.fence(otherwise)

    def raise_if(self, condition: str, message: str) -> None:
        with self.when(condition):
            self.out(f"{{{{- raise_exception({jinja_string(message)}) -}}}}")

    def macro(self, name: str, source: str) -> None:
        """Define a macro once (concepts that share one name it alike)."""
        self.macros.setdefault(name, source.strip())

    def ns(self, name: str, initial: str) -> str:
        """A namespace variable (``ns.<name>``) with its initial Jinja value."""
        self.namespace.setdefault(name, initial)
        return f"ns.{name}"

    def has_content(self) -> str:
        """``ns.content``: whether the turn being written has content (see
        :attr:`pawlette.declare.write.Render.has_content`)."""
        return self.ns("content", "false")

    def needs_last_query(self) -> str:
        """``ns.last_query``: the index of the last user message (-1: none)."""
        self.last_query = True
        return self.ns("last_query", "-1")

    def branches(self, choices: dict[str, Fence], default: Fence, variable: str) -> None:
        """Write ``choices[value of variable]``, else ``default``."""
        if not choices:
            self.fence(default)
            return
        keyword = "if"
        for value, pieces in choices.items():
            self.out(f"{{%- {keyword} {variable} == {jinja_string(value)} -%}}")
            self.fence(pieces)
            keyword = "elif"
        self.out("{%- else -%}")
        self.fence(default)
        self.out("{%- endif -%}")

    # ------------------------------------------------------------------ the skeleton

    def open_fence(self, role: str, *, prompt: bool = False) -> None:
        self.prompt = prompt
        try:
            if self._first("jinja_open", role):
                return
        finally:
            self.prompt = False
        self.opener(self.layout.frames[role], prompt=prompt)

    def opener(self, frame: Frame, *, prompt: bool = False) -> None:
        """The frame's open fence after the turn ``ns.previous`` names, as
        :meth:`.layout.Frame.opener` (``prompt``: :meth:`.layout.Frame.prompt`) chooses it."""
        after = {**frame.open_after, **(frame.prompt_after if prompt else {})}
        start = after.pop("start", None)
        if start is not None:
            self.out("{%- if ns.previous is none -%}")
            self.fence(start)
            self.out("{%- else -%}")
        self.branches(after, frame.open, "ns.previous")
        if start is not None:
            self.out("{%- endif -%}")

    def acting(self, hook: str, role: str) -> list[Concept]:
        """The concepts whose ``hook`` acts on ``role``'s turns (see ``hook_roles``)."""
        return [
            concept
            for concept in self._hooks[hook]
            if (roles := concept.hook_roles(hook)) is None or role in roles
        ]

    def each(self, hook: str, role: str | None = None) -> None:
        """Every concept's ``hook`` that acts on ``role``'s turns (None: a hook of the whole
        conversation, such as ``jinja_setup``), in order."""
        if role is None:
            for concept in self._hooks[hook]:
                getattr(concept, hook)(self)
        else:
            for concept in self.acting(hook, role):
                getattr(concept, hook)(self, role)

    def _first(self, hook: str, role: str) -> bool:
        """Whether a concept's ``hook`` wrote (the first that does: the rest are not asked)."""
        return any(getattr(concept, hook)(self, role) for concept in self.acting(hook, role))

    def generation_prompt(self) -> None:
        """The generation prompt, as the writer writes it: what comes before an assistant
        turn, the assistant's prompt, then every concept's ``jinja_prompt`` (``index``: the
        number of messages)."""
        self.each("jinja_before", "assistant")
        self.open_fence("assistant", prompt=True)
        self.each("jinja_prompt")

    def turn(self, role: str, *, message: bool = True) -> None:
        """A framed turn of ``role`` (``message``: a ``message`` is in scope; else a turn the
        format writes with no message, ``message`` and ``index`` none and -1)."""
        frame = self.layout.frames[role]
        assistant = role == "assistant"
        self.each("jinja_before", role)
        self.open_fence(role)
        self.each("jinja_lead", role)
        if assistant:
            self.out("{%- generation -%}")
        self.each("jinja_opening", role)
        if "content" in self.namespace:
            self.out(f"{{%- set ns.content = {'message is not none' if message else 'false'} -%}}")
        if not self._first("jinja_content", role) and message:
            self.text()
        self.each("jinja_closing", role)
        if not self._first("jinja_end", role):
            self.fence(frame.end)
        if assistant:
            self.out("{%- endgeneration -%}")
        self.each("jinja_after", role)
        self.fence(frame.after)
        self.out(f"{{%- set ns.previous = {jinja_string(role)} -%}}")

    def _refusals(self) -> None:
        """What the writer refuses when no concept handles it (see :mod:`.write`)."""
        name = self.layout.name
        handled = self.handled
        named = "message.name is defined and message.name is not none"
        checks = {
            # A tool message's name is the tool's (what Results may write, or note as a loss),
            # another message's is its author's: the writer tells them apart, and so does this.
            "name": (f'{named} and message.role != "tool"', "a message name"),
            "tool_name": (f'{named} and message.role == "tool"', "a tool message name"),
            "reasoning": (
                "message.reasoning_content is defined and message.reasoning_content is not none",
                "reasoning_content",
            ),
            "calls": ("message.tool_calls is defined and message.tool_calls", "tool_calls"),
        }
        for key, (condition, what) in checks.items():
            if key not in handled:
                self.raise_if(condition, f"{what}: {name} has no place for it")
        if "steps" not in handled:
            self.raise_if(
                "message.reasoning_steps is defined and message.reasoning_steps is not none",
                f"reasoning_steps: structured thinking; {name} writes reasoning_content",
            )
        self.out(fill("@CHECK_CALLS_ON_ASSISTANT@", {}))

    def build(self) -> str:
        layout = self.layout
        for concept in layout.concepts:
            self.handled |= getattr(concept, "handles", frozenset())
        self.each("jinja_setup")
        if "tools" not in self.handled:
            self.raise_if("tools is defined and tools", f"tools: {layout.name} has no tools block")
        self.fence(layout.begin)
        self.each("jinja_start")
        self.out("{%- for message in messages -%}")
        self.out("{%- set index = loop.index0 -%}")
        self.out('{%- set role = "system" if message.role == "developer" else message.role -%}')
        self._refusals()
        keyword = "if"
        claimed = {role: concept for concept in layout.concepts for role in concept.claims}
        written: list[str] = []
        for role in ("system", "user", "assistant", "tool"):
            claimer = claimed.get(role)
            if claimer is None and role not in layout.frames:
                continue
            written.append(role)
            self.out(f"{{%- {keyword} role == {jinja_string(role)} -%}}")
            keyword = "elif"
            if claimer is not None:
                claimer.jinja_message(self, role)
            else:
                self.turn(role)
        self.out("{%- else -%}")
        # As the writer refuses it (pawlette.declare.write.roles_written): the role as Python
        # quotes it, and the roles the template writes, so that a user knows what to send.
        expected = f"; expected a role {layout.name} writes ({', '.join(written)})"
        self.out(
            "{{- raise_exception('messages[' ~ index ~ '].role: ' ~ \"'\" ~ message.role ~ \"'\""
            f" ~ {jinja_string(expected)}) -}}}}"
        )
        self.out("{%- endif -%}")
        self.out("{%- endfor -%}")
        # (the loop's index is gone after it: the prompt's turn is the one after the last)
        self.out("{%- set index = messages | length -%}")
        with self.when("add_generation_prompt"):
            self.generation_prompt()
        self.each("jinja_finish")
        head = [TEXT_MACRO.strip(), *self.macros.values()]
        if self.escaping:
            from .table import compile_table

            head.insert(0, escape_macro(compile_table(layout).markers).strip())
        head.append("{%- set has_tools = tools is defined and tools is not none and tools -%}")
        gates = [
            concept.jinja_writes_prompt()
            for concept in layout.concepts
            if overrides(concept, "jinja_writes_prompt")
        ]
        if gates:
            # Where the template writes no generation prompt, asked for or not (after an
            # answer, Reka Edge's), the render is the one without it: every branch reads so.
            tests = " and ".join(f"({test})" for test in gates)
            head.append(
                "{%- set add_generation_prompt = add_generation_prompt is defined"
                f" and add_generation_prompt and {tests} -%}}"
            )
        namespace = ", ".join(f"{key}={value}" for key, value in self.namespace.items())
        head.append(f"{{%- set ns = namespace({namespace}) -%}}")
        if self.last_query:
            head += [
                "{%- set ns.last_query = -1 -%}",
                "{%- for message in messages -%}",
                '{%- if message.role == "user" -%}{%- set ns.last_query = loop.index0 -%}',
                "{%- endif -%}",
                "{%- endfor -%}",
            ]
        return "\n".join([*head, *self.lines])


def chat_template(layout: Layout) -> str:
    """The chat template of a layout's own options (see the module docstring; the exported
    template also reads its switches' variables: :mod:`pawlette.export.switched`)."""
    return Template(layout).build()
