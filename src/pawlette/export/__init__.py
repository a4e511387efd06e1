"""Export: Hugging Face chat templates and constrained-decoding grammars.

- :func:`export_jinja` — a format's ``chat_template`` (see :mod:`pawlette.export.jinja`).
"""

from __future__ import annotations

from .jinja import export_jinja, jinja_formats

__all__ = ["export_jinja", "jinja_formats"]
