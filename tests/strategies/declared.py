"""What the strategy modules of declared formats share: conversations drawn from the format's
declaration, and their normal forms (see :mod:`tests.declare.conversations`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

import pawlette
from pawlette.format import Format

from ..declare import conversations as declared
from ..helpers import canonical

Request = dict[str, Any]


def declared_strategies(
    name: str,
) -> tuple[
    Format,
    Callable[[], st.SearchStrategy[Request]],
    Callable[[Request], Request],
    Callable[[Request], Request],
]:
    """``(FORMAT, conversations, normalise, normalise_completion)`` of the format ``name``,
    as a strategy module names them."""
    fmt = pawlette.get_format(name)

    def conversations() -> st.SearchStrategy[Request]:
        return declared.conversations(fmt)

    def normalise(request: Request) -> Request:
        return canonical(declared.normalise(fmt, request))

    def normalise_completion(message: Request) -> Request:
        return declared.normalise_completion(fmt, message)

    return fmt, conversations, normalise, normalise_completion
