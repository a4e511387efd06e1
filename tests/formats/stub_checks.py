"""What the tests of the formats whose tools are Python function stubs (Seed-OSS, Command R+)
check alike: a request with given tools, and a malformed stub reported where it is."""

from __future__ import annotations

from typing import Any

import pytest

from pawlette import Format
from pawlette.errors import ParseError


def stub_request(definitions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A user's greeting with the tools ``definitions``."""
    tools = [{"type": "function", "function": definition} for definition in definitions]
    return {"messages": [{"role": "user", "content": "Hi"}], "tools": tools, **extra}


def check_reported_where(
    fmt: Format, text: str, edit: tuple[str, str], where: str, problem: str, kept: str
) -> None:
    """``text`` with ``edit`` made (its first text, once in it, replaced by its second): a
    strict read raises at ``where`` with ``problem``; a lenient one warns so and keeps the
    listing as text (holding ``kept``), its tools not read."""
    written, edited = edit
    assert text.count(written) == 1
    malformed = text.replace(written, edited)
    with pytest.raises(ParseError) as raised:
        fmt.parse_conversation(malformed, strict=True)
    assert raised.value.offset == malformed.index(where)
    assert problem in str(raised.value)
    lenient = fmt.parse_conversation(malformed)
    (warning,) = lenient.warnings
    assert warning.offset == malformed.index(where) and problem in warning.message
    assert "tools" not in lenient.to_request()  # the listing stays text
    assert kept in lenient.to_request()["messages"][0]["content"]
