"""Empty messages over every registered format (its variants too): a system, user or
assistant message with empty text, rendered and read back as a whole conversation, comes
back as it was, or the rendering declares a loss at its path.  (A format that refuses such a
message says so by an error: nothing is then dropped.)  A system message with text is held
to the same: a format that writes it into another message's turn (Gemma 3, Mistral Nemo)
reads it back as part of that message, and declares the loss of its role."""

from __future__ import annotations

import re
from typing import Any

import pytest

import pawlette
from pawlette.demo import WEATHER_TOOL


def _names() -> list[str]:
    """Every registered format by name, and each declared variant as ``NAME:VARIANT``."""
    names = []
    for base in pawlette.formats():
        declaration = getattr(pawlette.get_format(base), "declaration", None)
        variants = getattr(declaration, "variants", None) or {}
        names += [base, *(f"{base}:{variant}" for variant in variants)]
    return names


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _system(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


# Each conversation and the index of its empty message.
CONVERSATIONS: dict[str, tuple[list[dict[str, Any]], int]] = {
    "first system": ([_system(""), _user("Hi")], 0),
    "later system": ([_user("Hi"), _answer("Hello"), _system(""), _user("Again")], 2),
    "first user": ([_user(""), _answer("Yes"), _user("Fine")], 0),
    "later user": ([_user("Hi"), _answer("Hello"), _user(""), _answer("Yes"), _user("Ok")], 2),
    "last user": ([_user("Hi"), _answer("Hello"), _user("")], 2),
    "answer": ([_user("Hi"), _answer(""), _user("Again")], 1),
    "last answer": ([_user("Hi"), _answer("")], 1),
    "system text": ([_system("Be brief."), _user("Hi")], 0),
    "system text, later question": (
        [_system("Be brief."), _user("Hi"), _answer("Hello"), _user("More")],
        0,
    ),
}
NAMES = _names()


def test_every_format_and_variant_is_checked() -> None:
    assert set(pawlette.formats()) <= set(NAMES)
    assert {"deepseek:v3.1", "granite:4.1", "mistral:nemo"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("tools", [None, [WEATHER_TOOL]], ids=["no tools", "tools"])
def test_an_empty_message_reads_back_or_is_a_declared_loss(
    name: str, tools: list[Any] | None
) -> None:
    fmt = pawlette.get_format(name)
    checked = 0
    for case, (messages, index) in CONVERSATIONS.items():
        try:
            rendering = fmt.render(messages, tools)
        except pawlette.RequestError:
            continue  # refused, with the reason: nothing silently dropped
        checked += 1
        back = fmt.parse_conversation(rendering.text)
        path = re.compile(rf"messages\[{index}\][:.]")
        if back.messages == messages:
            # (a loss declared for a message that comes back is a false report)
            assert not [loss for loss in rendering.losses if path.match(loss)], (
                f"{name}, {case}: read back as it was, yet declared lost: {rendering.losses}"
            )
            continue
        named = [loss for loss in rendering.losses if path.match(loss)]
        assert named, (
            f"{name}, {case}: read back as {back.messages}, and no loss names "
            f"messages[{index}] (losses: {rendering.losses})"
        )
    assert checked, f"{name}: every conversation refused"
