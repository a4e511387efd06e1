"""Breeze behaviour beyond the golden cases: forced prefixes, image placeholder counts, box
conversion, the date header, decision tokens, result lists, role order, malformed output."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette import BoxPart, ImagePart, ParseError, RequestError, UnsupportedFeature
from pawlette.blocks.images import (
    box_part,
    internvl_grid,
    internvl_image_tokens,
    internvl_tile_count,
    normalise_box,
    pixel_box,
    pixel_boxes,
)
from pawlette.engine.fold import fold
from pawlette.formats.breeze import INFERENCE_SYSTEM, TRAINING_SYSTEM

from ..helpers import sequential_ids

BREEZE = pawlette.get_format("breeze")
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


def image(**fields: Any) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": "https://x/dog.png", **fields}}


def test_stops() -> None:
    assert BREEZE.stop == ("<|eot_id|>", "<|eom_id|>")


# ------------------------------------------------------------------ forced prefixes


@pytest.mark.parametrize(
    ("choice", "prefix"),
    [
        ("auto", None),
        (None, None),
        ("none", "<|answer|>"),
        ("required", "<|use_tool|>"),
        ({"type": "function", "function": {"name": "get_weather"}}, "<|use_tool|>[get_weather("),
    ],
)
def test_forced_prefixes(choice: object, prefix: str | None) -> None:
    assert BREEZE.forced_prefix(choice, [WEATHER]) == prefix
    assert BREEZE.forced_prefix(choice) == prefix  # tools unknown: assumed declared


def test_forced_prefix_needs_declared_tools() -> None:
    assert BREEZE.forced_prefix("required", []) is None  # no tools: no decision tokens
    with pytest.raises(RequestError) as caught:
        BREEZE.forced_prefix({"type": "function", "function": {"name": "other"}}, [WEATHER])
    assert caught.value.path == "tool_choice.function.name"
    with pytest.raises(UnsupportedFeature):
        BREEZE.forced_prefix({"type": "function", "function": {"name": "not a name"}})
    with pytest.raises(RequestError):
        BREEZE.forced_prefix("sometimes")


def test_forced_prefix_then_the_model_output_parse_as_one_turn() -> None:
    prefix = BREEZE.forced_prefix({"type": "function", "function": {"name": "get_weather"}})
    assert prefix is not None
    prompt = BREEZE.render(
        {"messages": [{"role": "user", "content": "SF?"}], "tools": [WEATHER]},
        add_generation_prompt=True,
    ).text
    assert prompt.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n")
    parser = BREEZE.parser(id_factory=sequential_ids())
    events = parser.feed(prefix) + parser.feed("city='SF')]<|eot_id|>") + parser.finish()
    message = fold(events, BREEZE.grammar.fields).messages[0]
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("get_weather", '{"city": "SF"}')
    ]


# ------------------------------------------------------------------ images and boxes


@pytest.mark.parametrize(
    ("width", "height", "grid", "tokens"),
    [
        (448, 448, (1, 1), 256),  # one tile: no thumbnail
        (896, 448, (2, 1), 768),  # 2 tiles + thumbnail
        (1000, 1000, (3, 3), 2560),  # ties go to bigger grids while the image is big enough
        (800, 600, (4, 3), 3328),  # exactly 4:3, 12 tiles
        (100, 1000, (1, 10), 2816),
        (10, 10, (1, 1), 256),
    ],
)
def test_internvl_image_token_counts(
    width: int, height: int, grid: tuple[int, int], tokens: int
) -> None:
    assert internvl_grid(width, height) == grid
    assert internvl_image_tokens(width, height) == tokens


def test_mrprompt_counts_a_thumbnail_for_one_tile_on_request() -> None:
    assert internvl_tile_count(448, 448, thumbnail_for_one_tile=True) == 2


def test_image_placeholders_from_the_image_size() -> None:
    text = BREEZE.render([{"role": "user", "content": [image(width=896, height=448)]}]).text
    assert text.count("<|img|>") == 768
    assert "<|start_img|><|img|>" in text and "<|img|><|end_img|>" in text


def test_image_tokens_given_override_the_rule() -> None:
    text = BREEZE.render([{"role": "user", "content": [image(width=896, height=448, tokens=2)]}])
    assert "<|start_img|><|img|><|img|><|end_img|>" in text.text


def test_image_without_size_names_the_part() -> None:
    with pytest.raises(RequestError) as caught:
        BREEZE.render([{"role": "user", "content": [{"type": "text", "text": "a"}, image()]}])
    assert caught.value.path == "messages[0].content[1].image_url"
    assert "with_options(image_tokens=...)" in str(caught.value)


def test_image_token_function_is_an_option() -> None:
    def five(part: ImagePart) -> int:
        return 5

    fmt = BREEZE.with_options(image_tokens=five)
    text = fmt.render([{"role": "user", "content": [image(), {"type": "text", "text": "Hi"}]}])
    assert "<|start_img|>" + "<|img|>" * 5 + "<|end_img|>\nHi" in text.text
    assert BREEZE.options.image_tokens is not five  # the registered format is unchanged


def test_parsed_images_carry_their_placeholder_count() -> None:
    header = "<|start_header_id|>user<|end_header_id|>\n\n"
    text = header + "<|start_img|><|img|><|img|><|end_img|>\nx<|eot_id|>"
    parsed = BREEZE.parse_conversation(text, strict=True)
    assert parsed.messages[0]["content"] == [
        {"type": "image_url", "image_url": {"url": "", "tokens": 2}},
        {"type": "text", "text": "x"},  # the line break after an image is the format's
    ]
    system = "<|start_header_id|>system<|end_header_id|>\n\n" + TRAINING_SYSTEM + "<|eot_id|>"
    assert BREEZE.render(parsed.messages).text == "<|begin_of_text|>" + system + text


def test_box_conversion_both_ways() -> None:
    assert normalise_box((64, 48, 640, 480), width=640, height=480) == (100, 100, 1000, 1000)
    assert pixel_box((100, 100, 1000, 1000), width=640, height=480) == (64, 48, 640, 480)
    assert normalise_box((-5, 0, 700, 10), width=640, height=480) == (0, 0, 1000, 21)
    part = box_part([(0, 0, 320, 240)], width=640, height=480)
    assert part == BoxPart(((0, 0, 500, 500),))
    assert pixel_boxes(part, width=1280, height=960) == [(0, 0, 640, 480)]
    with pytest.raises(RequestError):
        normalise_box((0, 0, 1, 1), width=0, height=10)


def test_boxes_render_as_the_seed_writes_them() -> None:
    content = [
        {"type": "text", "text": "in "},
        {"type": "bbox", "bbox": {"boxes": [[0, 0, 500, 500]]}},
    ]
    text = BREEZE.render([{"role": "user", "content": content}]).text
    assert "in <|start_bbox|>[[0, 0, 500, 500]]<|end_bbox|><|eot_id|>" in text


def test_malformed_boxes() -> None:
    completion = "At <|start_bbox|>[[0, 0, 5000, 1]]<|end_bbox|>.<|eot_id|>"
    with pytest.raises(ParseError, match="four-integer boxes"):
        BREEZE.parse(completion, strict=True)
    result = BREEZE.parse(completion)
    assert result.message["content"] == "At <|start_bbox|>[[0, 0, 5000, 1]]<|end_bbox|>."
    assert len(result.warnings) == 1


# ------------------------------------------------------------------ date header


def test_date_header_is_off_by_default_and_takes_the_date_given() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert "Today Date" not in BREEZE.render(messages).text
    dated = BREEZE.with_options(today=datetime.date(2024, 7, 26))
    text = dated.render(messages).text
    header = "Cutting Knowledge Date: Oct 2024\nToday Date: 26 Jul 2024\n\nBe brief.<|eot_id|>"
    assert "<|end_header_id|>\n\n" + header in text
    assert dated.parse_conversation(text, strict=True).messages == messages
    # Without the option, the header is the system text: nothing is dropped.
    assert BREEZE.parse_conversation(text).messages[0]["content"].startswith("Cutting")


def test_date_header_follows_the_tools_and_stands_alone_without_a_system_message() -> None:
    dated = BREEZE.with_options(today="1 Jan 2025", knowledge_cutoff="December 2023")
    request = {"messages": [{"role": "user", "content": "Hi"}], "tools": [WEATHER]}
    text = dated.render(request).text
    assert (
        "\n\n---\nCutting Knowledge Date: December 2023\nToday Date: 1 Jan 2025\n\n"
        + INFERENCE_SYSTEM
        + "<|eot_id|>"
    ) in text
    assert dated.parse_conversation(text, strict=True).to_request() == request
    alone = dated.render([{"role": "user", "content": "Hi"}]).text
    assert dated.parse_conversation(alone, strict=True).messages == [
        {"role": "user", "content": "Hi"}
    ]


# ------------------------------------------------------------------ turns


def test_decision_tokens_only_with_tools_and_only_on_the_last_turn() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d"},
    ]
    with_tools = BREEZE.render({"messages": messages, "tools": [WEATHER]}).text
    assert "\n\nb<|eot_id|>" in with_tools and "\n\n<|answer|>d<|eot_id|>" in with_tools
    assert "<|answer|>" not in BREEZE.render(messages).text
    calls = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [call("f", {}, "1")]},
    ]
    assert "<|python_tag|>[f()]<|eom_id|>" in BREEZE.render(calls).text  # no tools declared
    assert (
        "<|use_tool|>[f()]<|eot_id|>" in BREEZE.render({"messages": calls, "tools": [WEATHER]}).text
    )


def test_results_follow_call_order_and_missing_ones_are_none() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("f", {}, "a"), call("g", {}, "b"), call("h", {}, "c")],
        },
        {"role": "tool", "tool_call_id": "c", "content": '{"x": 3}'},
        {"role": "tool", "tool_call_id": "a", "content": "one"},
    ]
    text = BREEZE.render(messages).text
    assert "\n\n['one', None, {'x': 3}]<|eot_id|>" in text
    tools = [
        m for m in BREEZE.parse_conversation(text, strict=True).messages if m["role"] == "tool"
    ]
    assert tools == [
        {"role": "tool", "content": "one", "tool_call_id": "call_0"},
        {"role": "tool", "content": "null", "tool_call_id": "call_1"},
        {"role": "tool", "content": '{"x": 3}', "tool_call_id": "call_2"},
    ]


def test_calls_separated_by_a_bare_comma_parse() -> None:
    result = BREEZE.parse("<|use_tool|>[f(a=1),g(b='x')]<|eot_id|>", strict=True)
    assert [c["function"]["name"] for c in result.message["tool_calls"]] == ["f", "g"]


@pytest.mark.parametrize(
    ("message", "path"),
    [
        ({"role": "user", "name": "Ann", "content": "x"}, "messages[0].name"),
        (
            {"role": "assistant", "content": "x", "tool_calls": [call("f", {}, "1")]},
            "messages[0].content",
        ),
        ({"role": "system", "content": [image(tokens=1)]}, "messages[0].content[0]"),
        ({"role": "assistant", "content": [image(tokens=1)]}, "messages[0].content[0]"),
    ],
)
def test_refuses_what_it_cannot_write(message: dict[str, Any], path: str) -> None:
    with pytest.raises(UnsupportedFeature) as caught:
        BREEZE.render([message])
    assert caught.value.path == path


def test_role_order_of_mrprompt() -> None:
    checked = BREEZE.with_options(check_roles=True)
    calls = {"role": "assistant", "content": None, "tool_calls": [call("f", {}, "1")]}
    cases = [
        ([{"role": "user", "content": "a"}, {"role": "system", "content": "s"}], 1),
        ([{"role": "user", "content": "a"}, calls, {"role": "user", "content": "b"}], 2),
        (
            [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"},
                {"role": "assistant", "content": "c"},
            ],
            2,
        ),
    ]
    for messages, index in cases:
        with pytest.raises(RequestError) as caught:
            checked.render(messages)
        assert caught.value.path == f"messages[{index}].role"
        BREEZE.render(messages)


def test_strict_decision_token_after_text() -> None:
    with pytest.raises(ParseError, match="after text"):
        BREEZE.parse("Sure.<|use_tool|>[f()]<|eot_id|>", strict=True)


def test_strict_missing_blank_line_after_a_header() -> None:
    with pytest.raises(ParseError, match="after the header"):
        BREEZE.parse_conversation(
            "<|start_header_id|>user<|end_header_id|>Hi<|eot_id|>", strict=True
        )
    lenient = BREEZE.parse_conversation("<|start_header_id|>user<|end_header_id|>Hi<|eot_id|>")
    assert lenient.messages == [{"role": "user", "content": "Hi"}]


def test_unknown_role_is_kept_as_text() -> None:
    text = "<|start_header_id|>robot<|end_header_id|>\n\nbeep<|eot_id|>"
    with pytest.raises(ParseError, match="role 'robot'"):
        BREEZE.parse_conversation(text, strict=True)
    parsed = BREEZE.parse_conversation(text)
    assert parsed.messages[0]["content"] == "<|start_header_id|>robot<|end_header_id|>beep"


def test_base_model_prompts_are_not_conversations() -> None:
    # Seed 004's base-model prompts are raw text after <|begin_of_text|>: no turns to parse.
    text = "<|begin_of_text|>The color of the sky is blue but sometimes it can also be"
    with pytest.raises(ParseError):
        BREEZE.parse_conversation(text, strict=True)
    assert BREEZE.parse_conversation(text).warnings[0].text.startswith("The color")


def test_call_names_are_checked_against_the_tools_given() -> None:
    text = "<|use_tool|>[get_weather(), f()]<|eot_id|>"
    with pytest.raises(ParseError, match="no tool named 'f'"):
        BREEZE.parse(text, strict=True, tools=[WEATHER])
    lenient = BREEZE.parse(text, tools=[WEATHER])  # the call before it stands; it is text
    assert [call["function"]["name"] for call in lenient.message["tool_calls"]] == ["get_weather"]
    assert lenient.message["content"] == ", f()]"
    assert [warning.message for warning in lenient.warnings] == [
        "no tool named 'f'; expected a call to one of the request's tools ('get_weather')"
    ]
    assert BREEZE.parse("<|use_tool|>[get_weather()]<|eot_id|>", strict=True, tools=[WEATHER])


@pytest.mark.parametrize(
    "case",
    ["chat", "zero_shot_function_calling", "function_calling_e2e", "image", "image_and_bbox"],
)
def test_renders_the_seed_text(case: str) -> None:
    from ..test_golden import GOLDEN, load

    source = (GOLDEN / "breeze" / case / "source.txt").read_text(encoding="utf-8")
    if case == "function_calling_e2e":  # the seed's final answer lacks its decision token
        head, _, answer = source.rpartition("\n\n")
        source = head + "\n\n<|answer|>" + answer
    # Where the seed and MRPromptV3 (what Breeze 2 was trained with) differ, MRPromptV3:
    # calls are joined by "," (the seed writes ", "), and a line break follows every image
    # (the seed's box example leaves it out; its main example writes it "\n", which the
    # case's source.txt holds as the line break it stands for).
    source = source.replace("), get_weather(", "),get_weather(")
    source = source.replace("<|end_img|>W", "<|end_img|>\nW")
    assert BREEZE.render(load(GOLDEN / "breeze" / case)).text == source


def test_seed_conversations_keep_mrprompt_role_order() -> None:
    from ..test_golden import GOLDEN, load

    checked = BREEZE.with_options(check_roles=True)
    for case in sorted((GOLDEN / "breeze").iterdir()):
        if case.is_dir():
            checked.render(load(case))


# ------------------------------------------------------------------ MRPromptV3 (mtkresearch 0.3.2)

MRPROMPT = json.loads(
    (Path(__file__).parent.parent / "golden" / "breeze" / "mrpromptv3_0.3.2.json").read_text(
        encoding="utf-8"
    )
)


def _unfold(prompt: str) -> str:
    return re.sub(r"<\|img\|>×(\d+)", lambda match: "<|img|>" * int(match.group(1)), prompt)


def _openai_part(part: dict[str, Any]) -> dict[str, Any]:
    """An MRPromptV3 content item as an OpenAI content part."""
    if part["type"] == "text":
        return {"type": "text", "text": part["text"]}
    if part["type"] == "image":
        width, height = map(int, part["image_path"].removesuffix(".png").split("x"))
        return {"type": "image_url", "image_url": {"url": "", "width": width, "height": height}}
    size = {"width": part["width"], "height": part["height"]}
    boxes = [list(normalise_box(box, **size)) for box in part["coords"]]
    return {"type": "bbox", "bbox": {"boxes": boxes}}


def _mrprompt_render(case: dict[str, Any], **options: Any) -> str:
    """``MRPromptV3().get_prompt(conversations, functions, add_bos_token, training)`` as a
    pawlette render: functions become OpenAI tools, a conversation ending with the user or
    the results ends with the generation prompt (MRPromptV3 always writes it there)."""
    messages = []
    for message in case["conversations"]:
        message = dict(message)
        if isinstance(message.get("content"), list):
            message["content"] = [_openai_part(part) for part in message["content"]]
        messages.append(message)
    functions = case["functions"]
    tools = [{"type": "function", "function": f} for f in functions] if functions else None
    if not case["training"]:
        options["today"] = datetime.date(2024, 7, 26)
    fmt = BREEZE.with_options(begin_of_text=case["add_bos_token"], **options)
    prompt = messages[-1]["role"] in ("user", "tool")
    return fmt.render(messages, tools, add_generation_prompt=prompt).text


def test_mrprompt_v3_prompts_are_reproduced_byte_for_byte() -> None:
    cases = MRPROMPT["cases"]
    assert MRPROMPT["reference"]["version"] == "0.3.2" and len(cases) == 300
    modes = {(case["training"], case["add_bos_token"]) for case in cases}
    assert modes == {(True, True), (True, False), (False, True), (False, False)}
    for case in cases:
        assert case["reference"]["version"] == "0.3.2"
        assert _mrprompt_render(case) == _unfold(case["expected"]["prompt"]), case["name"]


def test_mrprompt_v3_checks_refuse_what_it_refuses_with_the_place() -> None:
    refused = 0
    for case in MRPROMPT["checks"]:
        if "prompt" in case["expected"]:
            rendered = _mrprompt_render(case, check_conversations=True)
            assert rendered == _unfold(case["expected"]["prompt"]), case["name"]
            continue
        with pytest.raises(RequestError) as caught:
            _mrprompt_render(case, check_conversations=True)
        assert caught.value.path.startswith(("messages[", "tools[")), case["name"]
        refused += 1
        # Without the option the same conversation renders (pawlette's checks are opt-in).
        if case["mutation"] in ("missing_required", "unexpected", "wrong_type", "enum"):
            assert _mrprompt_render(case)
    assert refused == 71


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"unit": "celsius"}, "missing required parameter 'location'"),
        ({"location": "Paris", "day": 1}, "unexpected parameter 'day'"),
        ({"location": 3}, "incorrect type for 'location': int, expected string"),
        ({"location": "Paris", "unit": "kelvin"}, "incorrect value for 'unit': 'kelvin', not one"),
    ],
)
def test_argument_checks_say_what_is_wrong_where(arguments: dict[str, Any], message: str) -> None:
    parameters = {
        "type": "object",
        "properties": {"location": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
        "required": ["location"],
    }
    tool = {"name": "get_weather", "description": "Weather", "parameters": parameters}
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": "get_weather", "arguments": json.dumps(arguments)}
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "tool_calls": [call]}]
    checked = BREEZE.with_options(check_conversations=True)
    with pytest.raises(RequestError) as caught:
        checked.render(messages, [{"type": "function", "function": tool}])
    assert caught.value.path == "messages[1].tool_calls[0].function.arguments"
    assert message in str(caught.value)
    assert "expected arguments that fit tools[0]'s parameters" in str(caught.value)


def test_training_mode_is_the_default_and_inference_mode_takes_a_date() -> None:
    messages = [{"role": "user", "content": "Hi"}]
    head = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
    assert BREEZE.render(messages).text.startswith(head + "You are a helpful AI assistant.<|eot")
    dated = BREEZE.with_options(today=datetime.date(2025, 1, 5)).render(messages).text
    date = "Cutting Knowledge Date: Oct 2024\nToday Date: 05 Jan 2025\n\n"
    assert dated.startswith(head + date + INFERENCE_SYSTEM + "<|eot_id|>")
    own = BREEZE.with_options(default_system="Be brief.", begin_of_text=False)
    assert own.render(messages).text.startswith("<|start_header_id|>system<|end_header_id|>\n\nBe")
    # The default system turn reads back as no system message.
    assert BREEZE.parse_conversation(BREEZE.render(messages).text, strict=True).messages == messages
