"""Registering a test's user-declared format for the duration of a block."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pawlette


@contextmanager
def registered(layout: Any) -> Iterator[pawlette.Format]:
    """The format registered for the duration (the registry is the process's)."""
    registry = importlib.import_module("pawlette.formats")
    fmt = pawlette.register_format(layout)
    try:
        yield fmt
    finally:
        registry._REGISTERED.pop(layout.name, None)
