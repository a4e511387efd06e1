"""Hugging Face chat templates for pawlette's formats.

:func:`export_jinja` returns a Jinja ``chat_template`` that renders, under transformers'
``apply_chat_template``, byte for byte what :meth:`pawlette.Format.render` renders, with
``{% generation %}`` around the trainable segments (``return_assistant_tokens_mask=True``).

Every template is emitted from its format's declaration (:mod:`pawlette.declare.jinja`
and the concepts' Jinja hooks); a format registered as a hand-built
:class:`~pawlette.Format` without a declaration raises
:class:`~pawlette.errors.UnsupportedFeature` rather than getting a template that would render
differently.  Each is checked against the renderer by the tests in ``tests/export`` and
``tests/declare`` (golden cases and generated conversations).

Checked in the test suite under transformers' Jinja (text and ``{% generation %}`` masks) and
under llama.cpp's own C++ Jinja engine as vendored by llama-cpp-python 0.3.36 (text only: it
parses ``generation`` blocks as no-ops); by hand (``tests/export/check_jinja_js.py``) under
transformers.js.  What the templates use is listed in ``pawlette/export/README.md`` ("What the
templates rely on"); in short: no Python string methods, no ``//``, no ``\\x``/``\\u`` escapes in
literals, string slices but never ``text[i]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import UnsupportedFeature
from ..format import Format
from ..formats import formats, get_format

if TYPE_CHECKING:
    from ..declare import Layout


@dataclass(frozen=True)
class TemplateInputs:
    """What a format's template needs in its input beyond OpenAI's shapes.

    Jinja cannot parse JSON, so formats that rewrite JSON take it already parsed, as the
    Hugging Face convention passes it: the template renders the object as pawlette renders its
    ``json.dumps``, and raises on a string it would have to parse.
    """

    object_arguments: bool = False
    """Tool call ``arguments`` must be objects, not JSON strings."""
    parsed_tool_results: bool = False
    """A tool message whose content is JSON other than a string must give it parsed."""


def _declared(fmt: Format) -> Layout | None:
    """The layout a format was declared from (None: a hand-built format)."""
    from ..declare import layout_of

    return layout_of(fmt)


def template_inputs(format_name: str | Format) -> TemplateInputs:
    """What :func:`export_jinja`'s template for ``format_name`` needs (see
    :class:`TemplateInputs`)."""
    fmt = format_name if isinstance(format_name, Format) else get_format(format_name)
    declaration = _declared(fmt)
    if declaration is not None:
        from ..declare.jinja import Template

        template = Template(declaration)
        template.build()
        return TemplateInputs(
            object_arguments=template.object_arguments,
            parsed_tool_results=template.parsed_results,
        )
    return TemplateInputs()


def jinja_formats() -> list[str]:
    """The registered formats that have a chat template."""
    return [name for name in formats() if _declared(get_format(name)) is not None]


def export_jinja(format_name: str | Format, *, frozen: bool = False) -> str:
    """The Hugging Face ``chat_template`` of a format (a registered name or a value).

    Where the model's own template switches its thinking with a variable
    (``enable_thinking``, ``thinking``, ``reasoning_effort``...: the layout's ``switches``),
    this template reads it too, and renders what the format renders with the option set to
    the variable's value (the format's own value when the variable is not given).
    ``frozen``: the template of the format's options alone, reading no such variable (for
    engines that pass one the caller did not choose: llama.cpp passes
    ``enable_thinking=true`` to every template).

    >>> template = export_jinja("pcml")
    >>> "{%- generation -%}" in template
    True
    >>> "enable_thinking" in export_jinja("chatml"), "enable_thinking" in export_jinja(
    ...     "chatml", frozen=True
    ... )
    (True, False)
    """
    fmt = format_name if isinstance(format_name, Format) else get_format(format_name)
    declaration = _declared(fmt)
    if declaration is not None:
        from ..declare.jinja import chat_template

        if frozen or not declaration.switches:
            return chat_template(declaration)
        from .switched import switched_template

        return switched_template(declaration, chat_template)
    raise UnsupportedFeature(
        "format",
        f"{fmt.name!r} is not declared (a Format built by hand has no chat template)",
        "one of " + ", ".join(jinja_formats()),
    )
