"""LastSystemPrompt (:mod:`pawlette.declare.system`): only the last system message is written,
at the start; ``empty_first="absent"`` writes an empty last one as none; nonsense settings
are refused when the layout is declared."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.declare import Frame, LastSystemPrompt, Layout, Marker, declare, fence
from pawlette.errors import FormatError
from pawlette.export import export_jinja

FRAMES = {
    role: Frame(open=fence(Marker(f"<{role}>"), "\n"), end=fence(Marker(f"</{role}>")))
    for role in ("system", "user", "assistant")
}
EMPTY_LAST = [
    {"role": "system", "content": "First."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello"},
    {"role": "system", "content": ""},
    {"role": "user", "content": "Bye"},
]


def _format(**system: Any) -> pawlette.Format:
    return declare(
        Layout(
            name="tiny-last-system",
            summary="only the last system message is written",
            frames=FRAMES,
            concepts=(LastSystemPrompt(**system),),
        )
    )


def test_an_empty_last_system_message_is_written_as_none_when_absent() -> None:
    rendering = _format(placement="gathered", empty_first="absent").render(EMPTY_LAST)
    assert rendering.text.startswith("<user>\nHi</user>"), rendering.text
    assert "<system>" not in rendering.text
    assert rendering.losses == (
        "messages[0]: a system message before the last, dropped",
        "messages[3]: a system message with empty text, written as none",
    )
    # Kept (the default), it is an empty system turn of its own.
    kept = _format(placement="gathered").render(EMPTY_LAST).text
    assert kept.startswith("<system>\n</system><user>\nHi</user>"), kept


def test_an_empty_last_system_message_falls_back_to_the_default_text() -> None:
    fmt = _format(placement="gathered", empty_first="absent", default="Plain.")
    assert fmt.render(EMPTY_LAST).text.startswith("<system>\nPlain.</system><user>\nHi")


@pytest.mark.parametrize("default", [None, "Plain."])
def test_the_exported_template_writes_the_same(default: str | None) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = _format(placement="gathered", empty_first="absent", default=default)
    template = export_jinja(fmt)
    conversations = [
        EMPTY_LAST,
        EMPTY_LAST[1:],
        [{**EMPTY_LAST[0], "content": ""}, *EMPTY_LAST[1:3]],
        [*EMPTY_LAST[:3], {**EMPTY_LAST[3], "content": "Last."}, EMPTY_LAST[4]],
    ]
    for messages in conversations:
        rendered, _ = render_jinja_template([messages], chat_template=template)
        assert rendered[0] == fmt.render(messages).text, messages


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"placement": "in_place"}, "placement"),
        ({"placement": "first_kept"}, "placement"),
        ({"placement": "gathered", "empty_first": "own_turn"}, "empty_first"),
        ({"placement": "gathered", "empty_first": "none"}, "empty_first"),
    ],
)
def test_settings_it_cannot_honour_are_refused(settings: dict[str, str], field: str) -> None:
    with pytest.raises(FormatError, match=f"tiny-last-system: LastSystemPrompt.{field}"):
        _format(**settings)
