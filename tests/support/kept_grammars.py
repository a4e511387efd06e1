"""Grammars built once per test process.

The generated turns of the grammar and cross-artifact checks ask for the same few grammars
dozens of times each; building one is the costly part of those tests.
"""

from __future__ import annotations

import json
from typing import Any

from pawlette.export import export_grammar
from pawlette.format import Format

__all__ = ["kept_grammar"]

# The format is kept with its grammar, so its id names no other object later.
_kept: dict[tuple[int, str], tuple[Format, str]] = {}


def kept_grammar(fmt: Format, *arguments: Any, **settings: Any) -> str:
    """``export_grammar(fmt, *arguments, **settings)``, built once per format object and
    arguments (tools given as objects, which JSON cannot key, are built every time)."""
    try:
        key = (id(fmt), json.dumps([arguments, settings]))  # key order kept: it is the schema's
    except TypeError:
        return export_grammar(fmt, *arguments, **settings)
    kept = _kept.get(key)
    if kept is None:
        kept = _kept[key] = (fmt, export_grammar(fmt, *arguments, **settings))
    return kept[1]
