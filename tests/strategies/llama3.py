"""llama3's conversations: drawn from its declaration (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

import pawlette

from ..declare import conversations as declared
from ..helpers import canonical

FORMAT = pawlette.get_format("llama3")


def conversations() -> st.SearchStrategy[dict[str, Any]]:
    return declared.conversations(FORMAT)


def normalise(request: dict[str, Any]) -> dict[str, Any]:
    return canonical(declared.normalise(FORMAT, request))


CALL_IDS_ROUND_TRIP = False  # the format writes no call ids: results are matched by position


def normalise_completion(message: dict[str, Any]) -> dict[str, Any]:
    return declared.normalise_completion(FORMAT, message)
