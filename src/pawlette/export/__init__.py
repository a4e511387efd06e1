"""Export: Hugging Face chat templates and constrained-decoding grammars.

- :func:`export_jinja`: a format's ``chat_template`` (see :mod:`pawlette.export.jinja`).
- :func:`export_grammar`: a Lark (llguidance) or GBNF (llama.cpp) grammar for one assistant
  turn under a ``tool_choice`` (see :mod:`pawlette.export.grammar`).
- :func:`export_grammar_bundle`: that grammar with the stop markers, the call trigger and
  the forced prefixes a server needs, as one JSON-ready document.

What each format's export can and cannot express is written in ``README.md`` next to this
file and at the top of every exported template and grammar.
"""

from __future__ import annotations

from ..emit.tool_choice import ToolChoice
from .grammar import export_grammar, export_grammar_bundle, grammar_formats
from .jinja import export_jinja, jinja_formats

__all__ = [
    "ToolChoice",
    "export_grammar",
    "export_grammar_bundle",
    "export_jinja",
    "grammar_formats",
    "jinja_formats",
]
