"""placeholder"""

from __future__ import annotations
from typing import Any


def define(out: Any, *, interleaved: bool) -> None:
    pass


def define_values(out: Any) -> None:
    pass
