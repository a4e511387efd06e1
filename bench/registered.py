"""The names the fuzz scripts run on by default: every registered format and each named
option set (variant) its declaration lists, as ``-f`` takes them (``chatml:qwen2.5``)."""

from __future__ import annotations

import pawlette


def every_format() -> list[str]:
    """Each registered format, followed by its variants (``name:variant``)."""
    names: list[str] = []
    for name in pawlette.formats():
        names.append(name)
        declaration = getattr(pawlette.get_format(name), "declaration", None)
        names += [f"{name}:{variant}" for variant in getattr(declaration, "variants", None) or {}]
    return names
