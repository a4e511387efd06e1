"""placeholder"""

from __future__ import annotations
from typing import Any


def arguments_node(rules: Any, number: int, tool: Any) -> Any:
    raise NotImplementedError
