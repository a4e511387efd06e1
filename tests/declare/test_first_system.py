"""FirstSystemText (:mod:`pawlette.declare.first_system`) and the empty first system message
that stands in for the default (``SystemPrompt(empty_first="none")``), on a tiny layout."""

from __future__ import annotations

from typing import Any

import pytest

import pawlette
from pawlette.declare import FirstSystemText, Frame, Layout, Marker, SystemPrompt, declare, fence
from pawlette.export import export_jinja

FRAMES = {
    role: Frame(open=fence(Marker(f"<{role}>"), "\n"), end=fence(Marker(f"</{role}>")))
    for role in ("system", "user", "assistant")
}


def _format(empty_first: Any = "kept") -> pawlette.Format:
    return declare(
        Layout(
            name="tiny-first",
            summary="a lead before the first system text",
            frames=FRAMES,
            concepts=(
                SystemPrompt(default="Default.", empty_first=empty_first),
                FirstSystemText(lead=fence("\n"), rstrip=True),
            ),
        )
    )


USER = {"role": "user", "content": "Hi"}


def test_the_lead_comes_before_the_first_text_and_the_default_only() -> None:
    fmt = _format()
    messages = [
        {"role": "system", "content": "First.  "},
        USER,
        {"role": "system", "content": "Later."},
    ]
    rendering = fmt.render(messages)
    assert rendering.text == (
        "<system>\n\nFirst.</system><user>\nHi</user><system>\nLater.</system>"
    )
    assert [str(loss).partition(":")[0] for loss in rendering.losses] == ["messages[0].content"]
    assert fmt.render([USER]).text == "<system>\n\nDefault.</system><user>\nHi</user>"
    parsed = fmt.parse_conversation(rendering.text, strict=True)
    assert [message["content"] for message in parsed.to_request()["messages"]] == [
        "First.",
        "Hi",
        "Later.",
    ]


@pytest.mark.parametrize(
    ("empty_first", "written"),
    [
        ("kept", "<system>\n</system><user>\nHi</user>"),
        ("none", "<user>\nHi</user>"),  # stands in for the default: no turn at all
        ("absent", "<system>\n\nDefault.</system><user>\nHi</user>"),
    ],
)
def test_an_empty_first_system_message(empty_first: str, written: str) -> None:
    fmt = _format(empty_first)
    messages = [{"role": "system", "content": ""}, USER]
    assert fmt.render(messages).text == written


@pytest.mark.parametrize("empty_first", ["kept", "none"])
def test_the_exported_template_writes_the_same(empty_first: str) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = _format(empty_first)
    template = export_jinja(fmt)
    for messages in (
        [USER],
        [{"role": "system", "content": "First. "}, USER],
        [{"role": "system", "content": ""}, USER],
    ):
        rendered, _ = render_jinja_template([messages], chat_template=template)
        assert rendered[0] == fmt.render(messages).text, messages


def _trailed() -> pawlette.Format:
    """The default line after a system message's text, as Ling 3.0 writes it."""
    return declare(
        Layout(
            name="tiny-trail",
            summary="the default line after the first system text",
            frames=FRAMES,
            concepts=(
                SystemPrompt(default="Think."),
                FirstSystemText(trail=fence("\nThink.")),
            ),
        )
    )


TRAILED = [
    ([USER], "<system>\nThink.</system><user>\nHi</user>"),
    ([{"role": "system", "content": "Be brief."}, USER], "<system>\nBe brief.\nThink.</system>"),
    ([{"role": "system", "content": ""}, USER], "<system>\n\nThink.</system><user>\nHi</user>"),
    (
        [{"role": "system", "content": "A"}, USER, {"role": "system", "content": "B"}],
        "<system>\nA\nThink.</system><user>\nHi</user><system>\nB</system>",
    ),
]


@pytest.mark.parametrize(("messages", "written"), TRAILED)
def test_the_trail_follows_the_first_text_and_reads_back(
    messages: list[dict[str, str]], written: str
) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = _trailed()
    text = fmt.render(messages).text
    assert text.startswith(written)
    parsed = fmt.parse_conversation(text, strict=True)
    assert parsed.to_request()["messages"] == messages
    rendered, _ = render_jinja_template([messages], chat_template=export_jinja(fmt))
    assert rendered[0] == text
