"""Where a template writes no generation prompt though one is asked for (NoPromptAfter)."""

from __future__ import annotations

import pytest

from pawlette.declare import Frame, Layout, Marker, NoPromptAfter, declare, fence
from pawlette.declare.jinja import chat_template
from pawlette.errors import FormatError

from ..support.template_compare import Reference


def _layout(*concepts: NoPromptAfter) -> Layout:
    frames = {
        role: Frame(open=fence(Marker(f"<|{role}|>")), end=fence(Marker("<|end|>")), after="\n")
        for role in ("system", "user", "assistant")
    }
    return Layout(name="tiny", summary="<|role|> turns", frames=frames, concepts=concepts)


CONVERSATIONS = [
    [{"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
    [{"role": "system", "content": "S"}],
    [{"role": "system", "content": "S"}, {"role": "system", "content": "T"}],
]


@pytest.mark.parametrize(
    ("concept", "prompted"),
    [
        (NoPromptAfter(), [True, False, True, True]),
        (NoPromptAfter(roles=(), system_alone=True), [True, True, False, True]),
        (NoPromptAfter(system_alone=True), [True, False, False, True]),
    ],
)
def test_a_render_asked_for_the_prompt_where_none_is_written_is_the_render_without_it(
    concept: NoPromptAfter, prompted: list[bool]
) -> None:
    layout = _layout(concept)
    fmt = declare(layout)
    exported = Reference(chat_template(layout))
    for messages, writes in zip(CONVERSATIONS, prompted, strict=True):
        plain = fmt.render(messages).text
        asked = fmt.render(messages, add_generation_prompt=True).text
        assert asked == (plain + "<|assistant|>" if writes else plain), messages
        assert exported.render(messages, add_generation_prompt=True).text == asked, messages
        assert exported.render(messages, add_generation_prompt=False).text == plain, messages


def test_after_the_system_message_alone_a_completion_may_begin_with_the_opener() -> None:
    fmt = declare(_layout(NoPromptAfter(roles=(), system_alone=True)))
    assert fmt.parse("<|assistant|>Hello<|end|>").message["content"] == "Hello"
    # Without system_alone the opener a model writes is no layout: it is kept as text.
    plain = declare(_layout(NoPromptAfter()))
    assert plain.parse("<|assistant|>Hello<|end|>").message["content"] != "Hello"


def test_a_role_no_frame_knows_is_refused_naming_the_field() -> None:
    with pytest.raises(FormatError, match=r"NoPromptAfter.roles: 'model'; expected roles among"):
        _layout(NoPromptAfter(roles=("model",)))
