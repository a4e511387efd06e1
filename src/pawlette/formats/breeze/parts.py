"""Content parts: images and boxes inside messages (Breeze 2).

A message's content parts are written in order: text as caller text, an image as a run of
placeholder tokens (:class:`~.media.PlaceholderImages`), boxes between two markers
(:class:`~.media.Boxes`), each only in the roles the declaration names.  MediaTek's Breeze 2
(MRPromptV3) writes images in user turns and boxes in user and assistant turns::

    <|start_img|><|img|>...<|img|><|end_img|>\\nWhat is at <|start_bbox|>[[1, 2, 3, 4]]<|end_bbox|>?

The image's ``after`` layout text is read with its close marker (one lexer marker, as every
fence is), and the bare close marker is read too (text without the line break).  Images are
never trainable, boxes are in the assistant's turn.  The image count rule is the format
options' ``image_tokens`` when they have one, else InternVL tiling
(:func:`pawlette.blocks.images.default_image_tokens`).
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ...blocks.images import default_image_tokens
from ...declare import Concept, Marker
from ...declare.python_calls import literal_macros
from ...emit.grammar_ast import Repeat, optional, seq
from ...emit.jinja_text import jinja_string
from ...emit.text_language import text_terminal
from ...engine.readers import ScaffoldReader
from ...errors import UnsupportedFeature
from ...types import BoxPart, ImagePart, TextPart
from .media import Boxes, PlaceholderImages, PlaceholderRun

if TYPE_CHECKING:
    from ...declare.grammar import Turn
    from ...declare.jinja import Template
    from ...declare.table import Table
    from ...declare.write import Render

TEXT_NE = text_terminal("TEXT", "NE")
BODIES = {"user": ("user.body",), "assistant": ("assistant.head", "assistant.body")}
"""The states a role's text is read in (a part's state returns to the last one)."""


@dataclass(frozen=True)
class ContentParts(Concept):
    """Images and boxes in messages (see the module docstring).

    Fields: ``images`` / ``boxes`` (None: the format has none); ``image_roles`` /
    ``box_roles``: the roles whose messages may hold them (a part elsewhere is refused with its
    path).
    """

    images: PlaceholderImages | None = None
    boxes: Boxes | None = None
    image_roles: tuple[str, ...] = ("user",)
    box_roles: tuple[str, ...] = ("user", "assistant")

    handles: ClassVar[frozenset[str]] = frozenset({"parts"})

    def markers(self) -> Iterator[Marker]:
        if self.images is not None:
            for text in (self.images.open, self.images.token, self.images.close):
                yield Marker(text)
        if self.boxes is not None:
            yield Marker(self.boxes.open)
            yield Marker(self.boxes.close)

    def allowed(self, role: str) -> tuple[type, ...]:
        kinds: tuple[type, ...] = (TextPart,)
        if self.images is not None and role in self.image_roles:
            kinds += (ImagePart,)
        if self.boxes is not None and role in self.box_roles:
            kinds += (BoxPart,)
        return kinds

    # ------------------------------------------------------------------ the writer

    def turn_roles(self) -> frozenset[str]:
        return frozenset({"system", "user", "assistant"})

    def check(self, out: Render) -> None:
        out.handles("parts")
        if "parts" not in out.present:
            return
        for index, message in enumerate(out.messages):
            if message.role == "tool" or all(
                type(part) is TextPart for part in message.content or ()
            ):
                continue  # results are checked where they are written
            if message.role == "system" and index == 0:
                where = f"messages[{index}]"
                for number, part in enumerate(message.content or ()):
                    if not isinstance(part, TextPart):  # the first system turn: text only
                        raise UnsupportedFeature(
                            f"{where}.content[{number}]",
                            f"a {type(part).__name__}",
                            f"text parts only: {out.layout.name} has no markup for other content",
                        )
                continue
            allowed = self.allowed(message.role)
            for number, part in enumerate(message.content or ()):
                if not isinstance(part, allowed):
                    kinds = ", ".join(kind.__name__ for kind in allowed)
                    path = f"messages[{index}].content[{number}]"
                    raise UnsupportedFeature(path, f"a {type(part).__name__}", f"{kinds} here")

    def write_content(self, out: Render, index: int) -> bool:
        if index < 0:
            return False
        content = out.messages[index].content
        if not content or (len(content) == 1 and type(content[0]) is TextPart):
            return False  # text alone: the writer's own path
        if all(type(part) is TextPart for part in content):
            return False
        trainable = out.role == "assistant"
        writer = out.writer
        rule = image_rule(out.options)
        for number, part in enumerate(content):
            if isinstance(part, TextPart):
                writer.text(part.text, "content", trainable=trainable)
            elif isinstance(part, BoxPart):
                assert self.boxes is not None
                self.boxes.write(writer, part, trainable=trainable)
            elif isinstance(part, ImagePart):
                assert self.images is not None
                self.images.write(writer, part, rule, f"messages[{index}].content[{number}]")
        return True

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        """Rows from each body state of a role that holds parts into the part's state and back."""
        images = self.images
        for role in self.image_roles if images is not None else ():
            assert images is not None
            state, back = f"{role}.image", BODIES[role][-1]
            table.state(state, ScaffoldReader, role)
            for body in BODIES[role]:
                table.on(body, images.open, state, PlaceholderRun.start)
            table.on(state, images.token, state, PlaceholderRun.count)
            if images.after:
                table.on(state, images.close + images.after, back, PlaceholderRun.end)
            table.on(state, images.close, back, PlaceholderRun.end)
        boxes = self.boxes
        for role in self.box_roles if boxes is not None else ():
            assert boxes is not None
            state, back = f"{role}.box", BODIES[role][-1]
            table.state(state, boxes.reader(), role)
            for body in BODIES[role]:
                table.on(body, boxes.open, state)
            table.on(state, boxes.close, back)

    # ------------------------------------------------------------------ the Jinja template

    def jinja_setup(self, out: Template) -> None:
        if self.boxes is not None:
            literal_macros(out)  # boxes are Python literals
        if self.images is not None:
            out.macro("image_tokens", self.images.jinja_macro())
        out.macro("parts_of", self.jinja_macro())

    def jinja_macro(self) -> str:
        """``parts_of(message, index, format_name)``: a message's parts (``text_of``'s place)."""
        box = image = ""
        kinds = "text"
        if self.boxes is not None:
            roles = "[" + ", ".join(jinja_string(role) for role in self.box_roles) + "]"
            box = f"{{%- elif part.type == 'bbox' and role in {roles} -%}}\n{{{{- {self.boxes.jinja('part.bbox.boxes', 'where')} -}}}}\n"
            kinds += f", or bbox in {'/'.join(self.box_roles)}"
        if self.images is not None:
            roles = "[" + ", ".join(jinja_string(role) for role in self.image_roles) + "]"
            image = f"{{%- elif part.type == 'image_url' and role in {roles} -%}}\n{self.images.jinja('part', 'where')}\n"
            kinds += f", or image_url in {'/'.join(self.image_roles)}"
        macro = _PARTS_MACRO.replace("@BOX@", box).replace("@IMAGE@", image)
        return macro.replace("@KINDS@", kinds.replace("'", "")).strip()

    def jinja_content(self, out: Template, role: str) -> bool:
        out.out(f"{{{{- parts_of(message, index, {jinja_string(out.layout.name)}) -}}}}")
        return True

    # ------------------------------------------------------------------ the turn grammar

    def grammar(self, turn: Turn) -> None:
        """The assistant's content: text and boxes."""
        if self.boxes is None or "assistant" not in self.box_roles:
            return
        block = self.boxes.grammar(turn.rules)
        turn.content = seq(Repeat(seq(optional(TEXT_NE), block)), optional(TEXT_NE))


def image_rule(options: object) -> Callable[[ImagePart], int]:
    """The format's image count rule (its ``image_tokens`` option), else InternVL tiling."""
    rule = getattr(options, "image_tokens", None)
    return rule if callable(rule) else default_image_tokens


_PARTS_MACRO = r"""{%- macro parts_of(message, index, format_name) -%}
{%- set role = message.role -%}
{%- if message.content is string -%}
{{- message.content -}}
{%- elif message.content is defined and message.content is not none -%}
{%- for part in message.content -%}
{%- set where = 'messages[' ~ index ~ '].content[' ~ loop.index0 ~ ']' -%}
{%- if part.type == 'text' -%}
{{- part.text -}}
@BOX@@IMAGE@{%- else -%}
{{- raise_exception(where ~ ': a ' ~ part.type ~ ' part; ' ~ format_name ~ ' writes @KINDS@') -}}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- endmacro -%}
"""
