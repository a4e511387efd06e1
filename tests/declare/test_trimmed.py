"""Trimmed (:mod:`pawlette.declare.content`): which side of a text it trims and which
characters, on a tiny layout: the writer and its losses, reading back, the exported template
under transformers (and minijinja, where the bench extra is installed), and the errors of a
declaration that cannot work."""

from __future__ import annotations

from typing import Any

import minijinja
import pytest

import pawlette
from pawlette.declare import Frame, Layout, Marker, Trimmed, declare, fence
from pawlette.errors import FormatError
from pawlette.export import export_jinja

FRAMES = {
    role: Frame(open=fence(Marker(f"<{role}>")), end=fence(Marker(f"</{role}>")))
    for role in ("system", "user", "assistant")
}

MESSAGES = [
    {"role": "system", "content": " \nRules.\n "},
    {"role": "user", "content": "\n  Hi \n"},
    {"role": "assistant", "content": " \nOk\n\n"},
]


def _format(**fields: Any) -> pawlette.Format:
    side = fields.get("side", "both")
    return declare(
        Layout(
            name=f"tiny-trim-{side}",
            summary="user and assistant text trimmed",
            frames=FRAMES,
            concepts=(Trimmed(roles=("user", "assistant"), **fields),),
        )
    )


# (fields, the user's and the assistant's text as written, what the losses say was trimmed)
CASES = [
    ({}, "Hi", "Ok", ("whitespace at its ends", "whitespace at its ends")),
    ({"side": "start"}, "Hi \n", "Ok\n\n", ("whitespace at its start",) * 2),
    ({"side": "end"}, "\n  Hi", " \nOk", ("whitespace at its end",) * 2),
    ({"characters": "\n"}, "  Hi ", " \nOk", ("newlines at its ends",) * 2),
    # The assistant's text begins with a space: a trim of newlines at the start keeps it.
    ({"side": "start", "characters": "\n"}, "  Hi \n", " \nOk\n\n", ("newlines at its start",)),
    ({"side": "end", "characters": "\n"}, "\n  Hi ", " \nOk", ("newlines at its end",) * 2),
    ({"side": "end", "characters": " "}, "\n  Hi \n", " \nOk\n\n", ()),
    ({"characters": " \n"}, "Hi", "Ok", ("the characters ' \\n' at its ends",) * 2),
]


@pytest.mark.parametrize(("fields", "user", "assistant", "trimmed"), CASES)
def test_the_writer_trims_the_side_and_characters_declared(
    fields: dict[str, Any], user: str, assistant: str, trimmed: tuple[str, ...]
) -> None:
    rendering = _format(**fields).render(MESSAGES)
    # The system role is not declared: its text is written as given.
    assert rendering.text == (
        f"<system> \nRules.\n </system><user>{user}</user><assistant>{assistant}</assistant>"
    )
    changed = [
        index for index in (1, 2) if (user, assistant)[index - 1] != MESSAGES[index]["content"]
    ]
    assert rendering.losses == tuple(
        f"messages[{index}].content: {what} trimmed"
        for index, what in zip(changed, trimmed, strict=True)
    )


@pytest.mark.parametrize(("fields", "user", "assistant", "trimmed"), CASES)
def test_the_trimmed_texts_read_back_as_written(
    fields: dict[str, Any], user: str, assistant: str, trimmed: tuple[str, ...]
) -> None:
    del trimmed
    fmt = _format(**fields)
    parsed = fmt.parse_conversation(fmt.render(MESSAGES).text, strict=True)
    texts = [message["content"] for message in parsed.to_request()["messages"]]
    assert texts == [MESSAGES[0]["content"], user, assistant]


def _conversations() -> list[list[dict[str, Any]]]:
    return [
        MESSAGES,
        [{"role": "user", "content": "\n\n"}, {"role": "assistant", "content": "\t x \t"}],
        [{"role": "user", "content": "plain"}],
    ]


@pytest.mark.parametrize(("fields", "user", "assistant", "trimmed"), CASES)
def test_the_exported_template_trims_alike_under_transformers(
    fields: dict[str, Any], user: str, assistant: str, trimmed: tuple[str, ...]
) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    del user, assistant, trimmed
    fmt = _format(**fields)
    template = export_jinja(fmt)
    for messages in _conversations():
        rendered, _ = render_jinja_template([messages], chat_template=template)
        assert rendered[0] == fmt.render(messages).text, messages


@pytest.mark.parametrize(("fields", "user", "assistant", "trimmed"), CASES)
def test_the_exported_template_trims_alike_under_minijinja(
    fields: dict[str, Any], user: str, assistant: str, trimmed: tuple[str, ...]
) -> None:
    del user, assistant, trimmed
    fmt = _format(**fields)
    # minijinja has no {% generation %} block (transformers' extension): its tags go.
    template = (
        export_jinja(fmt).replace("{%- generation -%}", "").replace("{%- endgeneration -%}", "")
    )
    environment = minijinja.Environment()
    environment.trim_blocks = True
    environment.lstrip_blocks = True
    environment.add_template("chat", template)
    for messages in _conversations():
        rendered = environment.render_template(
            "chat", messages=messages, add_generation_prompt=False
        )
        assert rendered == fmt.render(messages).text, messages


def test_the_default_is_trim_and_a_given_trim_a_string_method() -> None:
    assert "text_of(message, index, 'tiny-trim-both') | trim" in export_jinja(_format())
    template = export_jinja(_format(side="start", characters="\n"))
    assert "(text_of(message, index, 'tiny-trim-start')).lstrip(\"\\n\")" in template


def test_a_lead_comes_before_a_text_trimmed_at_one_side() -> None:
    fmt = declare(
        Layout(
            name="tiny-trim-lead",
            summary="a lead before the assistant's text",
            frames=FRAMES,
            concepts=(Trimmed(roles=("assistant",), lead=fence("\n"), side="end"),),
        )
    )
    rendering = fmt.render(MESSAGES[1:])
    assert rendering.text == "<user>\n  Hi \n</user><assistant>\n \nOk</assistant>"
    empty = [MESSAGES[1], {"role": "assistant", "content": "\n"}]
    assert fmt.render(empty).text == "<user>\n  Hi \n</user><assistant></assistant>"
    parsed = fmt.parse_conversation(rendering.text, strict=True)
    assert parsed.to_request()["messages"][1]["content"] == " \nOk"


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (
            {"side": "left"},
            "tiny-trim-left: Trimmed.side: 'left'; expected 'both', 'start' or 'end'",
        ),
        (
            {"characters": ""},
            "Trimmed.characters: ''; expected None (all whitespace) or a non-empty string of "
            "the characters to trim",
        ),
        (
            {"characters": ["\n"]},
            "Trimmed.characters: ['\\n'], a list; expected a str or None",
        ),
        (
            {"space_first": True, "side": "end"},
            "Trimmed.space_first: True with side='end' and characters=None; expected a trim "
            "of all whitespace at the start",
        ),
        (
            {"space_first": True, "characters": "\n"},
            "Trimmed.space_first: True with side='both' and characters='\\n'; expected",
        ),
    ],
)
def test_a_trim_that_cannot_work_is_refused_with_its_field(
    fields: dict[str, Any], says: str
) -> None:
    with pytest.raises(FormatError) as raised:
        _format(**fields)
    assert says in str(raised.value)


def test_a_message_met_again_among_others_is_checked_again_unless_found_untrimmed() -> None:
    """Messages found untrimmed are not trimmed again in a later request; one that loses
    whitespace records its loss in every request that holds it, among other messages."""
    fmt = _format()
    clean = {"role": "user", "content": "Hi"}
    spaced = {"role": "user", "content": " Hi "}
    answer = {"role": "assistant", "content": "Ok"}
    first = fmt.render([clean, answer, spaced])
    assert first.losses == ("messages[2].content: whitespace at its ends trimmed",)
    later = fmt.render([clean, answer, spaced, answer, clean])
    assert later.losses == ("messages[2].content: whitespace at its ends trimmed",)
    moved = fmt.render([spaced, answer, clean])
    assert moved.losses == ("messages[0].content: whitespace at its ends trimmed",)
    twice = fmt.render([spaced, answer, clean, answer, spaced])  # (one message read twice)
    assert twice.losses == (
        "messages[0].content: whitespace at its ends trimmed",
        "messages[4].content: whitespace at its ends trimmed",
    )
