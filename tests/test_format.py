"""What :meth:`pawlette.Format.parse_conversation` says it could not give back."""

from __future__ import annotations

import pytest

import pawlette
from pawlette.demo import WEATHER_TOOL
from pawlette.formats import formats

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]


def _rendered(fmt: pawlette.Format, tools: list[dict[str, object]]) -> str | None:
    for messages in (MESSAGES, MESSAGES[1:]):  # (a format without a system role)
        try:
            return fmt.render(messages, tools).text
        except pawlette.RequestError:
            continue
    return None


def _writes_tools(name: str) -> bool:
    fmt = pawlette.get_format(name)
    with_tools = _rendered(fmt, [WEATHER_TOOL])
    return with_tools is not None and with_tools != _rendered(fmt, [])


FORMATS = formats()  # (at collection: other tests register formats of their own)
WRITING_TOOLS = [name for name in FORMATS if _writes_tools(name)]
"""The formats that write a tools block (not Gemma 2, Phi-3.5 or RWKV, nor DeepSeek V3.1 or
SmolLM3, whose templates ignore the tools: a loss the render records)."""


def test_the_formats_without_a_tools_block_are_the_known_ones() -> None:
    assert sorted(set(FORMATS) - set(WRITING_TOOLS)) == [
        "deepseek",
        "gemma",
        "phi3",
        "rwkv",
        "smollm3",
    ]


@pytest.mark.parametrize("name", WRITING_TOOLS)
def test_tools_come_back_or_the_parse_says_they_do_not(name: str) -> None:
    fmt = pawlette.get_format(name)
    with_tools = _rendered(fmt, [WEATHER_TOOL])
    assert with_tools is not None
    back = fmt.parse_conversation(with_tools)
    if back.tools == [WEATHER_TOOL]:
        assert back.losses == ()
        return
    assert back.tools == []
    assert len(back.losses) == 1
    assert back.losses[0].startswith("tools: written as ")
    # Given the request's tools again, the conversation renders as it was.
    assert fmt.render(back.messages, [WEATHER_TOOL]).text == with_tools


def test_a_loss_is_recorded_once() -> None:
    harmony = pawlette.get_format("harmony")
    turn = harmony.render([{"role": "user", "content": "Hi"}], [WEATHER_TOOL]).text
    back = harmony.parse_conversation(turn + turn)
    assert back.losses == ("tools: written as TypeScript types, not read back into JSON schemas",)
