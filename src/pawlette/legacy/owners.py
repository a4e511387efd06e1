"""Which concept module interprets a whole layout.

Three concepts own every turn of the layouts that use them: headed turns (ChatGLM3), block
turns (omni) and containers (PCML).  Each keeps its five interpreters under the shared
interpreters' names (``writer_of``, ``compile_table``, ``forced_prefixes``,
``chat_template``, ``build_turn``).  Where they live is this one table, kept as data (as
h11 keeps its state table), so the shared interpreters ask it rather than each keeping its
own chain of ``if layout.X is not None`` branches; and a layout naming two owners is refused
when declared, since otherwise one concept could write it and another read it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..errors import FormatError

if TYPE_CHECKING:
    from .layout import Layout

INTERPRETERS = ("writer_of", "compile_table", "forced_prefixes", "chat_template", "build_turn")

# layout field -> interpreter -> module under pawlette.legacy that defines it.
OWNERS: dict[str, dict[str, str]] = {
    "headed": {
        "writer_of": "headed.write",
        "compile_table": "headed.table",
        "forced_prefixes": "headed.table",
        "chat_template": "headed.jinja",
        "build_turn": "headed.grammar",
    },
    "blocks": {
        "writer_of": "blocks.write",
        "compile_table": "blocks.table",
        "forced_prefixes": "blocks",
        "chat_template": "blocks.jinja",
        "build_turn": "blocks.grammar",
    },
    "containers": dict.fromkeys(INTERPRETERS, "containers"),
}


def owner_field(layout: Layout) -> str | None:
    """The layout's owning concept (its field name), or None; two are refused."""
    named = [field for field in OWNERS if getattr(layout, field) is not None]
    if len(named) > 1:
        raise FormatError(f"{layout.name}: {' and '.join(named)} each own every turn; use one")
    return named[0] if named else None


def owner(layout: Layout, interpreter: str) -> Callable[..., Any] | None:
    """The owning concept's ``interpreter`` for ``layout``, or None (the shared one)."""
    field = owner_field(layout)
    if field is None:
        return None
    module = importlib.import_module(f"{__package__}.{OWNERS[field][interpreter]}")
    return cast("Callable[..., Any]", getattr(module, interpreter))
