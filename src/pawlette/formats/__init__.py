"""The format registry: one declaration module per format, loaded on first use."""

from __future__ import annotations

import importlib

from ..errors import RequestError
from ..format import Format

# name -> module under pawlette.formats that defines ``FORMAT``.
_MODULES: dict[str, str] = {
    "pcml": "pcml",
    "chatglm3": "chatglm3",
    "breeze": "breeze",
    "omni": "omni",
}
_LOADED: dict[str, Format] = {}


def formats() -> list[str]:
    """The names of every registered format."""
    return list(_MODULES)


def get_format(name: str) -> Format:
    """The registered format called ``name``.

    >>> get_format("pcml").name
    'pcml'
    """
    loaded = _LOADED.get(name)
    if loaded is not None:
        return loaded
    module_name = _MODULES.get(name)
    if module_name is None:
        raise RequestError("format", f"found {name!r}", "one of " + ", ".join(_MODULES))
    module = importlib.import_module(f"{__name__}.{module_name}")
    declared = module.FORMAT
    if not isinstance(declared, Format):
        raise TypeError(f"pawlette.formats.{module_name}.FORMAT is not a Format")
    _LOADED[name] = declared
    return declared
