"""Content parts: images and boxes inside messages, a concept of the declaration layer.

A layout with :class:`ContentParts` writes a message's content parts in order: text as
caller text, an image as a run of placeholder tokens (:class:`~.media.PlaceholderImages`),
boxes between two markers (:class:`~.media.Boxes`), each only in the roles the declaration
names.  MediaTek's Breeze 2 (MRPromptV3) writes images in user turns and boxes in user and
assistant turns::

    <|start_img|><|img|>...<|img|><|end_img|>\\nWhat is at <|start_bbox|>[[1, 2, 3, 4]]<|end_bbox|>?

The image's ``after`` layout text is read with its close marker (one lexer marker, as every
fence is), and the bare close marker is read too (text without the line break).

The interpreters, all here, each called from the shared one through one dispatch line:
:func:`write_content` (writer: images never trainable, boxes trainable in the assistant's
turn), :func:`table_rows` (parse table), :func:`jinja_macros` and :func:`jinja_content`
(Jinja: a ``parts_of`` macro in place of ``text_of``), :func:`grammar_content` (the
assistant's content in the turn grammar: text and boxes) and :func:`markers` (the special
tokens the parts add).  The image count rule is the format options' ``image_tokens`` when
they have one, else InternVL tiling (:func:`pawlette.blocks.images.default_image_tokens`).
"""

# ruff: noqa: E501  (Jinja source: one tag per line reads better than wrapped tags)

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..blocks.images import default_image_tokens
from ..errors import UnsupportedFeature
from ..export.grammar_ast import Node, Repeat, Rules, optional, seq
from ..export.templates._common import jinja_string
from ..export.text_language import text_terminal
from ..types import BoxPart, ImagePart, Message, Role, TextPart
from .layout import Layout
from .media import Boxes, PlaceholderImages

if TYPE_CHECKING:  # the interpreters hand themselves in; importing them here would cycle
    from .table import _Table
    from .write import _Render


@dataclass(frozen=True)
class ContentParts:
    """Images and boxes in messages (see the module docstring).

    ``image_roles``/``box_roles``: the roles whose messages may hold them (a part elsewhere
    is refused with its path).
    """

    images: PlaceholderImages | None = None
    boxes: Boxes | None = None
    image_roles: tuple[Role, ...] = ("user",)
    box_roles: tuple[Role, ...] = ("user", "assistant")

    def allowed(self, role: str) -> tuple[type, ...]:
        kinds: tuple[type, ...] = (TextPart,)
        if self.images is not None and role in self.image_roles:
            kinds += (ImagePart,)
        if self.boxes is not None and role in self.box_roles:
            kinds += (BoxPart,)
        return kinds


def markers(parts: ContentParts) -> tuple[str, ...]:
    """The special tokens the parts write (``markers_of`` adds them)."""
    found: list[str] = []
    if parts.images is not None:
        found += [parts.images.open, parts.images.token, parts.images.close]
    if parts.boxes is not None:
        found += [parts.boxes.open, parts.boxes.close]
    return tuple(found)


# ------------------------------------------------------------------ writer


def image_rule(layout: Layout) -> Callable[[ImagePart], int]:
    rule = getattr(layout.options, "image_tokens", None)
    return rule if callable(rule) else default_image_tokens


def write_content(render: _Render, message: Message, index: int, *, trainable: bool) -> None:
    """A message's content parts (names and metadata refused as :func:`.write.message_text`
    refuses them)."""
    content = message.content or ()
    if len(content) == 1 and message.name is None and not message.metadata:
        (part,) = content
        if type(part) is TextPart:  # the common case, checked inline
            render.writer.text(part.text, "content", trainable=trainable)
            return
    from .write import message_text  # (write imports this module's importers)

    layout = render.layout
    if all(type(part) is TextPart for part in content):  # text only: the plain writer's path
        render.writer.text(
            message_text(message, index, layout.name), "content", trainable=trainable
        )
        return
    parts = layout.parts
    assert parts is not None
    allowed = parts.allowed(message.role)
    if message.name is not None or message.metadata:
        message_text(message, index, layout.name)  # raises what the plain writer raises
    for number, part in enumerate(content):
        if isinstance(part, TextPart):
            render.writer.text(part.text, "content", trainable=trainable)
            continue
        path = f"messages[{index}].content[{number}]"
        if not isinstance(part, allowed):
            kinds = ", ".join(kind.__name__ for kind in allowed)
            raise UnsupportedFeature(path, f"a {type(part).__name__}", f"{kinds} here")
        if isinstance(part, BoxPart):
            assert parts.boxes is not None
            parts.boxes.write(render.writer, part, trainable=trainable)
        elif isinstance(part, ImagePart):
            assert parts.images is not None
            parts.images.write(render.writer, part, image_rule(layout), path)


# ------------------------------------------------------------------ parse table


def table_rows(table: _Table) -> None:
    """Rows from each body state of a role that holds parts into the part's state and back."""
    from ..engine.readers import ScaffoldReader
    from .media import PlaceholderRun

    parts = table.layout.parts
    assert parts is not None
    bodies: dict[Role, tuple[str, ...]] = {
        "user": ("user.body",),
        "assistant": ("assistant.head", "assistant.body"),
    }
    images = parts.images
    for role in parts.image_roles if images is not None else ():
        assert images is not None
        state, back = f"{role}.image", bodies[role][-1]
        table.builder.state(state, ScaffoldReader, role)
        for body in bodies[role]:
            table.on(body, images.open, state, PlaceholderRun.start)
        table.on(state, images.token, state, PlaceholderRun.count)
        if images.after:
            table.on(state, images.close + images.after, back, PlaceholderRun.end)
        table.on(state, images.close, back, PlaceholderRun.end)
    boxes = parts.boxes
    for role in parts.box_roles if boxes is not None else ():
        assert boxes is not None
        state, back = f"{role}.box", bodies[role][-1]
        table.builder.state(state, boxes.reader(), role)
        for body in bodies[role]:
            table.on(body, boxes.open, state)
        table.on(state, boxes.close, back)


# ------------------------------------------------------------------ Jinja

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


def jinja_macros(layout: Layout) -> str:
    """The macros a template of a layout with parts defines once (after the Python-literal
    macros boxes need: :func:`.python_tools.literal_macros`)."""
    parts = layout.parts
    assert parts is not None
    box = image = ""
    kinds = "text"
    if parts.boxes is not None:
        roles = "[" + ", ".join(jinja_string(role) for role in parts.box_roles) + "]"
        box = f"{{%- elif part.type == 'bbox' and role in {roles} -%}}\n{{{{- {parts.boxes.jinja('part.bbox.boxes', 'where')} -}}}}\n"
        kinds += f", or bbox in {'/'.join(parts.box_roles)}"
    if parts.images is not None:
        roles = "[" + ", ".join(jinja_string(role) for role in parts.image_roles) + "]"
        image = f"{{%- elif part.type == 'image_url' and role in {roles} -%}}\n{parts.images.jinja('part', 'where')}\n"
        kinds += f", or image_url in {'/'.join(parts.image_roles)}"
    macro = _PARTS_MACRO.replace("@BOX@", box).replace("@IMAGE@", image)
    macro = macro.replace("@KINDS@", kinds.replace("'", ""))
    macros = [macro.strip()]
    if parts.images is not None:
        macros.insert(0, parts.images.jinja_macro().strip())
    return "\n".join(macros)


def jinja_content(layout: Layout, message: str, index: str) -> str:
    """The Jinja statement writing a message's content parts (in place of ``text_of``)."""
    return f"{{{{- parts_of({message}, {index}, {jinja_string(layout.name)}) -}}}}"


# ------------------------------------------------------------------ grammar

TEXT_NE = text_terminal("TEXT", "NE")


def grammar_content(layout: Layout, rules: Rules, plain: Node) -> Node:
    """The assistant's content: text and boxes (``plain``: the text alone, without boxes)."""
    parts = layout.parts
    if parts is None or parts.boxes is None or "assistant" not in parts.box_roles:
        return plain
    block = parts.boxes.grammar(rules)
    return seq(Repeat(seq(optional(TEXT_NE), block)), optional(TEXT_NE))
