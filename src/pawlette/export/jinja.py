"""Hugging Face chat templates for pawlette's formats.

:func:`export_jinja` returns a Jinja ``chat_template`` that renders, under transformers'
``apply_chat_template``, byte for byte what :meth:`pawlette.Format.render` renders, with
``{% generation %}`` around the trainable segments (``return_assistant_tokens_mask=True``).

Each format's template is written by hand next to its declaration's constants
(``pawlette/export/templates/<format>.py``) and checked against the renderer by the tests in
``tests/export`` (golden cases and generated conversations).  A format without a template
raises :class:`~pawlette.errors.UnsupportedFeature` rather than getting a template that would
render differently.

What the templates rely on, so engines with their own Jinja (llama.cpp, transformers.js) can
load them: ``namespace``, macros, ``range``, string indexing and slicing, ``in``, ``~``, the
filters ``length``/``tojson`` (with ``separators``)/``items``/``trim``, the tests
``defined``/``none``/``string``/``mapping``, ``raise_exception`` and the ``generation`` tag
(a no-op outside transformers).  No Python string methods.
"""

from __future__ import annotations

import importlib

from ..errors import UnsupportedFeature
from ..formats import formats, get_format

# format name -> module under pawlette.export.templates that defines ``build() -> str``.
_TEMPLATES: dict[str, str] = {
    "pcml": "pcml",
}
_BUILT: dict[str, str] = {}


def jinja_formats() -> list[str]:
    """The registered formats that have a chat template."""
    return [name for name in formats() if name in _TEMPLATES]


def export_jinja(format_name: str) -> str:
    """The Hugging Face ``chat_template`` of a registered format.

    >>> template = export_jinja("pcml")
    >>> "{%- generation -%}" in template
    True
    """
    get_format(format_name)  # unknown names raise RequestError listing the formats
    built = _BUILT.get(format_name)
    if built is not None:
        return built
    module_name = _TEMPLATES.get(format_name)
    if module_name is None:
        raise UnsupportedFeature(
            "format",
            f"{format_name!r} has no chat template yet",
            "one of " + ", ".join(jinja_formats()),
        )
    module = importlib.import_module(f"{__package__}.templates.{module_name}")
    template: str = module.build()
    _BUILT[format_name] = template
    return template
