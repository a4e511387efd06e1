"""Harmony's declaration types are public: an outside user declares a variant with what the
guide shows (``pawlette.declare`` and ``pawlette.formats.harmony``), and a field of the wrong
kind is refused by name, with what was given and what is allowed."""

from __future__ import annotations

import dataclasses
import datetime
import json
import pydoc
from typing import Any

import pytest

from pawlette.declare import Layout, Marker, Option, declare
from pawlette.errors import FormatError
from pawlette.formats import harmony

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}


def _call(identifier: str, city: str) -> dict[str, Any]:
    arguments = json.dumps({"city": city})
    return {
        "id": identifier,
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }


def _layout(turns: Any, **options: Any) -> Layout:
    return Layout(
        name="outsider-harmony",
        summary="a harmony variant declared from the guide",
        frames=harmony.frames(turns),
        concepts=(turns,),
        options=harmony.HarmonyOptions(**options),
        today="date",
    )


def test_the_declaration_types_are_the_modules_public_names() -> None:
    for name in ("HarmonyTurns", "HarmonyOptions", "frames", "layout", "START", "RETURN"):
        assert name in harmony.__all__


def test_help_documents_every_field() -> None:
    for kind in (harmony.HarmonyTurns, harmony.HarmonyOptions):
        text = pydoc.render_doc(kind, renderer=pydoc.plaintext)
        for field in dataclasses.fields(kind):
            assert f"``{field.name}``" in text, (kind.__name__, field.name)


def test_an_outside_variant_renders_tools_calls_and_reasoning_and_reads_its_call_turn_back() -> (
    None
):
    turns = harmony.HarmonyTurns(every_call=True, constrained=True, results_by_position=True)
    fmt = declare(
        _layout(
            turns,
            model_identity="You are Ada, a model trained by Example Labs.",
            knowledge_cutoff="2025-03",
            date=datetime.date(2026, 1, 2),
            reasoning_effort="high",
        )
    )
    question = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Paris and Oslo?"},
    ]
    answer = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Two lookups.",
        "tool_calls": [_call("a", "Paris"), _call("b", "Oslo")],
    }
    prompt = fmt.render(question, [WEATHER], add_generation_prompt=True)
    whole = fmt.render([*question, answer], [WEATHER])
    assert prompt.text.startswith(
        "<|start|>system<|message|>You are Ada, a model trained by Example Labs.\n"
        "Knowledge cutoff: 2025-03\nCurrent date: 2026-01-02\n\nReasoning: high\n\n"
    )
    assert "type get_weather = (_: {\ncity: string,\ndays?: number,\n}) => any;" in prompt.text
    assert whole.text.startswith(prompt.text) and whole.losses == ()
    completion = whole.text[len(prompt.text) :]
    header = " to=functions.get_weather<|channel|>commentary <|constrain|> json<|message|>"
    assert completion == (
        "<|channel|>analysis<|message|>Two lookups.<|end|>"
        f'<|start|>assistant{header}{{"city": "Paris"}}<|end|>'
        f'<|start|>assistant{header}{{"city": "Oslo"}}<|call|>'
    )
    reply = fmt.parse(completion, tools=[WEATHER])
    assert reply.message["reasoning_content"] == "Two lookups."
    assert [call["function"] for call in reply.message["tool_calls"]] == [
        call["function"] for call in answer["tool_calls"]
    ]
    # The results are named after the calls in order, then the model answers.
    results = [
        {"role": "tool", "tool_call_id": "a", "content": "18"},
        {"role": "tool", "tool_call_id": "b", "content": "9"},
    ]
    after = fmt.render([*question, answer, *results], [WEATHER], add_generation_prompt=True)
    assert after.text.endswith(
        '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"9"<|end|>'
        "<|start|>assistant"
    )
    final = fmt.parse("<|channel|>final<|message|>18 and 9.<|return|>").message
    assert final["content"] == "18 and 9."


def test_the_options_of_an_outside_variant_change_at_run_time() -> None:
    fmt = declare(_layout(harmony.HarmonyTurns()))
    later = fmt.with_options(knowledge_cutoff="2027-01", reasoning_effort="low")
    text = later.render([{"role": "user", "content": "Hi"}]).text
    assert "\nKnowledge cutoff: 2027-01\n" in text and "\nReasoning: low\n" in text


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("every_call", "yes", "HarmonyTurns.every_call: 'yes', a str; expected True or False"),
        ("defaults_json", 1, "HarmonyTurns.defaults_json: 1, an int; expected True or False"),
        (
            "analysis",
            "always",
            "HarmonyTurns.analysis: 'always'; expected 'until_final' or 'last'",
        ),
        (
            "start",
            "<|start|>",
            "HarmonyTurns.start: '<|start|>'; expected one Marker, a special token, not a "
            "fence or a string (Marker('<|start|>'))",
        ),
        (
            "cutoff",
            "2025-03",
            "HarmonyTurns.cutoff: '2025-03'; expected an Option naming a field of "
            "Layout.options (Option(name='knowledge_cutoff', date_format=None))",
        ),
    ],
)
def test_a_field_of_the_wrong_kind_is_refused_by_name(
    field: str, value: Any, expected: str
) -> None:
    turns = dataclasses.replace(harmony.HarmonyTurns(), **{field: value})
    with pytest.raises(FormatError) as refused:
        _layout(turns)
    assert str(refused.value) == f"outsider-harmony: {expected}"


def test_an_option_the_options_lack_is_refused_by_name() -> None:
    turns = harmony.HarmonyTurns(cutoff=Option("training_cutoff"))
    with pytest.raises(
        FormatError, match=r"Option\('training_cutoff'\): no option 'training_cutoff'"
    ):
        _layout(turns)
    with pytest.raises(FormatError, match=r"Option\('date'\): options.date is datetime.date"):
        _layout(harmony.HarmonyTurns(date=Option("date")))


def test_frames_follow_the_markers_of_the_turns() -> None:
    turns = harmony.HarmonyTurns(start=Marker("<|begin|>"))
    frames = harmony.frames(turns)
    assert frames["user"].open[0] == Marker("<|begin|>")
    assert harmony.frames() == harmony.frames(harmony.HarmonyTurns())
