"""Names (:mod:`pawlette.declare.names`): a message's name in its turn's opener, on a tiny
layout; its chat template writes the same."""

from __future__ import annotations

import pytest

import pawlette
from pawlette.declare import Frame, Layout, Marker, Names, declare, fence
from pawlette.errors import FormatError
from pawlette.export import export_jinja

FRAMES = {
    role: Frame(open=fence(Marker("<|open|>"), f'role="{role}"', Marker("<|sep|>")))
    for role in ("system", "user", "assistant")
}


def _format(names: Names, frames: dict[str, Frame] = FRAMES) -> pawlette.Format:
    return declare(Layout(name="tiny-names", summary="names", frames=frames, concepts=(names,)))


MESSAGES = [
    {"role": "system", "content": "Be brief.", "name": "ops"},
    {"role": "user", "content": "Hi", "name": "alice"},
    {"role": "assistant", "content": "Hello."},
]


@pytest.mark.parametrize(
    ("names", "written"),
    [
        (
            Names(at=2, lead=fence(' name="'), trail=fence('"')),
            '<|open|>role="system" name="ops"<|sep|>Be brief.<|open|>role="user" name="alice"'
            '<|sep|>Hi<|open|>role="assistant"<|sep|>Hello.',
        ),
        (
            Names(roles=("user",), at=1, replaces=1),
            '<|open|>role="system"<|sep|>Be brief.<|open|>alice<|sep|>Hi'
            '<|open|>role="assistant"<|sep|>Hello.',
        ),
    ],
)
def test_the_name_goes_in_the_opener_and_the_template_writes_the_same(
    names: Names, written: str
) -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    fmt = _format(names)
    rendering = fmt.render(MESSAGES)
    assert rendering.text == written
    lost = [str(loss) for loss in rendering.losses]
    assert lost == ([] if "ops" in written else ["messages[0].name: not written"])
    rendered, _ = render_jinja_template([MESSAGES], chat_template=export_jinja(fmt))
    assert rendered[0] == written


def test_a_frame_too_short_for_the_name_is_refused_naming_it() -> None:
    with pytest.raises(FormatError, match=r"tiny-names: Names: the 'system' frame"):
        _format(Names(at=3, replaces=1))
