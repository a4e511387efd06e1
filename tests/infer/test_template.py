"""The template runner: transformers' environment, a clock that never reads the machine's."""

from __future__ import annotations

import datetime

import pytest

from pawlette.errors import RequestError
from pawlette.infer.template import TemplateRunner, hugging_face_messages


def test_the_clock_reads_the_given_day_and_says_it_was_read() -> None:
    runner = TemplateRunner("{{ strftime_now('%Y-%m-%d') }}", today=datetime.date(2023, 2, 14))
    assert not runner.read_clock
    assert runner.text([]) == "2023-02-14"
    assert runner.read_clock
    runner.today = datetime.date(2024, 1, 2)
    assert runner.text([]) == "2024-01-02"


def test_transformers_environment() -> None:
    template = (
        "{% generation %}{{ messages[0].content | tojson }}{% endgeneration %}"
        "{% for m in messages %}{% if loop.first %}{% continue %}{% endif %}{{ m.role }}"
        "{% endfor %}"
    )
    runner = TemplateRunner(template)
    messages = [{"role": "user", "content": "é<b>"}, {"role": "assistant", "content": "x"}]
    assert runner.text(messages) == '"é<b>"assistant'


def test_a_refusal_is_a_value_and_bad_jinja_a_request_error() -> None:
    runner = TemplateRunner("{{ raise_exception('no system') }}")
    rendered = runner.render([{"role": "user", "content": "x"}])
    assert rendered.text is None and "no system" in (rendered.refusal or "")
    with pytest.raises(RequestError, match="not valid Jinja"):
        TemplateRunner("{% if %}")
    private = TemplateRunner("{% set ns = namespace(_x=1) %}")
    assert private.render([]).text is None


def test_messages_as_hugging_face_callers_pass_them() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    messages = hugging_face_messages(
        [
            {"role": "assistant", "content": None, "tool_calls": [call], "reasoning_content": "r"},
        ],
        empty_content=True,
    )
    assert messages == [
        {
            "thinking": "r",
            "role": "assistant",
            "tool_calls": [{**call, "function": {"name": "f", "arguments": {"x": 1}}}],
            "reasoning_content": "r",
            "content": "",
        }
    ]


REQUIRES_THINKING = (
    "{% for m in messages %}{% if m.role == 'assistant' %}"
    "{% if m.reasoning_content is not defined %}{{ raise_exception('missing thinking') }}"
    "{% endif %}[{{ m.reasoning_content }}]{{ m.content }}"
    "{% else %}{{ m.content }}{% endif %}|{% endfor %}"
)


def test_a_refused_message_is_given_empty_reasoning_as_callers_give_it() -> None:
    runner = TemplateRunner(REQUIRES_THINKING)
    messages = [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]
    rendered = runner.render(messages)
    assert (rendered.text, rendered.shapes) == ("u|[]a|", ("empty reasoning",))
    assert runner.needed == {"empty reasoning"}
    given = runner.render([*messages[:1], {**messages[1], "reasoning_content": "r"}])
    assert (given.text, given.shapes) == ("u|[r]a|", ())
    unshaped = TemplateRunner(REQUIRES_THINKING, shaped=False).render(messages)
    assert unshaped.text is None and "missing thinking" in (unshaped.refusal or "")


def test_a_turn_of_calls_is_given_empty_content_then_both_shapes_together() -> None:
    template = (
        "{% for m in messages %}{{ m.content.strip() }}"
        "{% if m.role == 'assistant' %}[{{ m.reasoning_content.strip() }}]{% endif %}"
        "{% endfor %}"
    )
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    turn = {"role": "assistant", "content": None, "tool_calls": [call]}
    runner = TemplateRunner(template)
    rendered = runner.render([{"role": "user", "content": "u"}, turn])
    assert (rendered.text, rendered.shapes) == ("u[]", ("empty content", "empty reasoning"))
    with_reasoning = runner.render([{**turn, "reasoning_content": "r"}])
    assert (with_reasoning.text, with_reasoning.shapes) == ("[r]", ("empty content",))
