"""The LazyLLM-style prompters: every worked example of seed 003, then the rules around them.

The seed's examples live in ``tests/golden/prompter/seed_003.json`` with their text copied
verbatim from the seed; each case is decoded here (so the expected value provably comes from
the seed, plus the documented fixes) and must be reproduced byte for byte.
"""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.errors import RequestError
from pawlette.prompter import (
    ALPACA_PREAMBLE,
    DEFAULT_SYSTEM,
    AlpacaPrompter,
    ChatMarkers,
    ChatPrompter,
)

SEED = json.loads(
    (Path(__file__).parent / "golden" / "prompter" / "seed_003.json").read_text(encoding="utf-8")
)
CASES: list[dict[str, Any]] = SEED["cases"]
PROMPTERS: dict[str, type[AlpacaPrompter] | type[ChatPrompter]] = {
    "alpaca": AlpacaPrompter,
    "chat": ChatPrompter,
}
TOOLS = [{"type": "function", "function": {"name": "example"}}]
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "查询天气",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
ALPACA_HEAD = f"{DEFAULT_SYSTEM}\n{ALPACA_PREAMBLE}\n\n ### Instruction:\n"


def decode_seed(case: dict[str, Any]) -> Any:
    """The value the seed's text stands for, after the case's documented fixes."""
    text: str = case["seed"]
    for old, new in case["fixes"]:
        assert text.count(old) == 1, f"fix {old!r} must match exactly once"
        text = text.replace(old, new)
    mode = case["decode"]
    if mode == "doubled":  # written inside a docstring: every backslash doubled
        text = text.replace("\\\\", "\\")
    elif mode == "quoted-repr":  # a dict repr inside a double-quoted string
        assert text[0] == text[-1] == '"'
        text = text[1:-1]
    else:
        assert mode == "repr", mode
    return ast.literal_eval(text)


def run_case(case: dict[str, Any]) -> Any:
    prompter = PROMPTERS[case["prompter"]](**case["init"])
    call = dict(case["call"])
    return prompter.generate_prompt(call.pop("input"), **call)


# --------------------------------------------------------------------------- the seed's examples


def test_every_worked_example_is_a_case() -> None:
    # 4 in the opening and walkthrough, 4 string-input examples, 5 tools examples, 3 history.
    assert len(CASES) == 16
    assert len({case["name"] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_seed_example_decodes_to_its_expected_value(case: dict[str, Any]) -> None:
    assert decode_seed(case) == case["expected"]
    # A fix is only ever made with a note that says why.
    assert bool(case["fixes"]) <= bool(case["note"])


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_seed_example_reproduces_lazyllm_0_1_2_byte_for_byte(case: dict[str, Any]) -> None:
    # The seed's printed text (LazyLLM 0.1.1) where LazyLLM 0.1.2 agrees, else 0.1.2's answer.
    assert run_case(case) == case.get("lazyllm_0.1.2", case["expected"])


def _filled_user_instruction(case: dict[str, Any]) -> str:
    user: str = case["init"]["instruction"]["user"]
    for key, value in case["call"]["input"].items():
        user = user.replace("{" + key + "}", value)
    return user


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_seed_examples_differ_from_lazyllm_0_1_2_only_as_documented(case: dict[str, Any]) -> None:
    seed = case["expected"]
    if "lazyllm_0.1.2" not in case:
        # Every Chat example and every Alpaca dict agrees; every Alpaca string differs.
        assert case["prompter"] == "chat" or isinstance(seed, dict)
        return
    newer = case["lazyllm_0.1.2"]
    if not isinstance(case["init"]["instruction"], dict):
        # The Alpaca template: one "\n" more before ### Response: (the seed's stated template).
        assert newer == seed.replace("\n### Response:\n", "\n\n### Response:\n")
        return
    # A {user}-only instruction: 0.1.2 writes it at {user}, not in the instruction section.
    user = _filled_user_instruction(case)
    if isinstance(seed, dict):
        system = seed["messages"][0]["content"]
        assert system.endswith("### Instruction:\n" + user + "\n\n")
        assert newer == {
            "messages": [
                {"role": "system", "content": system[: -len(user + "\n\n")]},
                {"role": "user", "content": user},
            ]
        }
    else:
        old = "### Instruction:\n" + user + "\n\n\n### Response:\n"
        assert seed.count(old) == 1
        assert newer == seed.replace(old, "### Instruction:\n\n\n" + user + "### Response:\n")


def test_seed_fixes_are_only_the_documented_ones() -> None:
    fixed = {case["name"]: case["fixes"] for case in CASES if case["fixes"]}
    # The one example the seed cuts off mid-string; every other expected value is the seed's
    # printed text, decoded, with nothing changed.
    assert fixed == {
        "chat_string_input_becomes_the_user_turn": [["<|Assistant|>", "<|Assistant|>:\\n'"]],
    }


COMMA_CASES = ["intro_string", "intro_return_dict", "walkthrough_step5_return_dict"]
COMMA_CASES.append("walkthrough_step6_string")


@pytest.mark.parametrize("name", COMMA_CASES)
def test_the_opening_instruction_takes_the_printed_outputs_comma(name: str) -> None:
    # The seed's code (line 20) writes "{input}, 现在"; its printed outputs (lines 30, 33, 106,
    # 111) show "输入，现在", the full-width comma of its prompt design (line 11).  The printed
    # output is what is reproduced, so the instruction is line 20's with line 11's comma.
    design, code = SEED["instruction_lines"]["11"], SEED["instruction_lines"]["20"]
    assert "{问题}，现在" in design
    assert code.startswith("instruction = '") and code.endswith("'")
    code_instruction = code[len("instruction = '") : -1]
    assert code_instruction.count("{input}, 现在") == 1
    case = next(c for c in CASES if c["name"] == name)
    assert case["init"]["instruction"]["user"] == code_instruction.replace(
        "{input}, 现在", "{input}，现在"
    )
    value = case["call"]["input"]["input"]
    assert f"{value}，现在" in case["seed"] and not case["fixes"]
    # With line 20's comma the output would differ from the seed's printed text.
    as_coded = PROMPTERS[case["prompter"]]({"user": code_instruction})
    call = dict(case["call"])
    assert as_coded.generate_prompt(call.pop("input"), **call) != case["expected"]


def test_truncated_seed_example_is_a_prefix_of_the_output() -> None:
    case = next(c for c in CASES if c["name"] == "chat_string_input_becomes_the_user_turn")
    seed_text = case["seed"] + "'"  # the seed forgot the rest of the string
    output = run_case(case)
    assert output.startswith(ast.literal_eval(seed_text))
    assert output.endswith("<|Assistant|>:\n")


def test_a_user_only_dict_instruction_goes_before_the_response_in_alpaca() -> None:
    # LazyLLM 0.1.2: the user part of a dict instruction is written at {user}; the instruction
    # section keeps only its (empty) system part.
    instruction = "上下文信息是{context}，用户的问题是{input}"
    values = {"context": "背景", "input": "输入"}
    user_only = AlpacaPrompter({"user": instruction})
    assert user_only.generate_prompt(values) == (
        ALPACA_HEAD + "\n\n上下文信息是背景，用户的问题是输入### Response:\n"
    )
    assert user_only.generate_prompt(values, return_dict=True)["messages"] == [
        {"role": "system", "content": ALPACA_HEAD},
        {"role": "user", "content": "上下文信息是背景，用户的问题是输入"},
    ]


# --------------------------------------------------------------------------- LazyLLM 0.1.2

GENERATED = json.loads(
    (Path(__file__).parent / "golden" / "prompter" / "lazyllm_0.1.2.json").read_text(
        encoding="utf-8"
    )
)


def _generated_call(case: dict[str, Any]) -> Any:
    init, call = copy.deepcopy(case["init"]), copy.deepcopy(case["call"])
    prompter = PROMPTERS[case["prompter"]](
        init["instruction"], init["extro_keys"], tools=init.get("tools")
    )
    return prompter.generate_prompt(
        call["input"],
        call.get("history"),
        call.get("tools"),
        call.get("label"),
        return_dict=call["return_dict"],
    )


def _extra_keys_block(case: dict[str, Any]) -> str:
    """The block LazyLLM 0.1.2 drops with a {system, user} instruction, as pawlette keeps it."""
    keys = case["init"]["extro_keys"]
    keys = [keys] if isinstance(keys, str) else keys
    given = case["call"]["input"]
    values = given if isinstance(given, dict) else {keys[0]: str(given)}
    block = "Here are some extra messages you can referred to:\n\n" + "".join(
        f"### {key}:\n{values[key]}\n\n" for key in keys
    )
    return ("\n\n" + block) if case["prompter"] == "alpaca" else ("\n" + block + "\n")


def _documented_difference(case: dict[str, Any], output: Any) -> str | None:
    """Which documented difference ``output`` shows against the reference, if it is one."""
    expected = case["expected"]["output"]
    init, call = case["init"], case["call"]
    if isinstance(init["instruction"], dict) and init["extro_keys"]:
        # LazyLLM drops the extra keys' block after a {system, user} instruction; kept here.
        block = _extra_keys_block(case)
        if call["return_dict"]:
            output = copy.deepcopy(output)
            system = output["messages"][0]
            assert system["content"].count(block) == 1
            system["content"] = system["content"].replace(block, "")
            if system["content"] == expected["messages"][0]["content"] + "\n":
                # An empty system instruction: without the block, no "\n" joins it either.
                system["content"] = system["content"][:-1]
        else:
            assert output.count(block) == 1
            output = output.replace(block, "")
        if output == expected:
            return "extra keys kept"
    if call["return_dict"] and call.get("label") is not None:
        # LazyLLM drops the label in the dict form; here it is the final assistant message.
        label = {"role": "assistant", "content": call["label"]}
        if output["messages"] == [*expected["messages"], label]:
            return "label kept"
    return None


def test_lazyllm_0_1_2_answers_are_reproduced_byte_for_byte() -> None:
    assert GENERATED["reference"] == {"package": "lazyllm", "version": "0.1.2"}
    answered = [case for case in GENERATED["cases"] if "output" in case["expected"]]
    same, documented = 0, {"extra keys kept": 0, "label kept": 0}
    for case in answered:
        assert case["reference"] == GENERATED["reference"]
        output = _generated_call(case)
        if output == case["expected"]["output"]:
            same += 1
            continue
        difference = _documented_difference(case, output)
        assert difference is not None, (case["name"], output, case["expected"]["output"])
        documented[difference] += 1
    # Measured: 522 of 549 answers (95.1%); the 27 others are the two documented differences.
    assert len(answered) == 549
    assert documented == {"extra keys kept": 17, "label kept": 10}
    assert same / len(answered) >= 0.95


def test_where_lazyllm_0_1_2_fails_pawlette_answers_or_refuses_clearly() -> None:
    failed = [case for case in GENERATED["cases"] if "error" in case["expected"]]
    assert len(failed) == 51
    refused = 0
    for case in failed:
        try:
            _generated_call(case)
        except RequestError:
            refused += 1
    # Two extra keys, a non-empty Alpaca leftover, Alpaca history, string with two slots...
    assert refused >= 30


# --------------------------------------------------------------------------- templates


def test_alpaca_with_system_and_user_instructions() -> None:
    prompter = AlpacaPrompter({"system": "Add {numbers}.", "user": "Be brief. "})
    assert prompter.generate_prompt("1 and 2") == (
        ALPACA_HEAD + "Add 1 and 2.\n\nBe brief. ### Response:\n"
    )
    system = f"{DEFAULT_SYSTEM}\n{ALPACA_PREAMBLE}\n\n ### Instruction:\nAdd 1 and 2."
    assert prompter.generate_prompt("1 and 2", return_dict=True)["messages"] == [
        {"role": "system", "content": system},
        {"role": "user", "content": "Be brief. "},
    ]


def test_alpaca_extra_keys_in_order_after_the_slots() -> None:
    prompter = AlpacaPrompter("Answer {question}", extra_keys=["context", "style"])
    assert prompter.slots == ("question", "context", "style")
    text = prompter.generate_prompt({"style": "short", "question": "why?", "context": "sky"})
    assert text == (
        ALPACA_HEAD + "Answer why?\n\nHere are some extra messages you can referred to:\n\n"
        "### context:\nsky\n\n### style:\nshort\n\n\n\n### Response:\n"
    )


def test_chat_with_system_and_user_instructions_and_extra_keys() -> None:
    prompter = ChatPrompter({"system": "Use {source}.", "user": "Q: "}, extro_keys="notes")
    text = prompter.generate_prompt({"source": "the wiki", "notes": "n1", "input": "why?"})
    assert text == (
        f"<|start_system|>{DEFAULT_SYSTEM}Use the wiki.\n"
        "Here are some extra messages you can referred to:\n\n### notes:\nn1\n\n\n"
        "<|end_system|>\n\n\n<|Human|>:\nQ: why?\n<|Assistant|>:\n"
    )
    assert prompter.generate_prompt(
        {"source": "the wiki", "notes": "n1", "input": "why?"}, return_dict=True
    )["messages"][-1] == {"role": "user", "content": "Q: why?"}


def test_chat_without_instruction_writes_lazyllms_none() -> None:
    # LazyLLM 0.1.2 writes a missing instruction as the text "None"; reproduced.
    prompter = ChatPrompter()
    assert prompter.generate_prompt("hi") == (
        f"<|start_system|>{DEFAULT_SYSTEM}None\n\n<|end_system|>\n\n\n<|Human|>:\nhi\n"
        "<|Assistant|>:\n"
    )
    assert prompter.generate_prompt("hi", return_dict=True) == {
        "messages": [
            {"role": "system", "content": f"{DEFAULT_SYSTEM}\nNone\n\n"},
            {"role": "user", "content": "hi"},
        ]
    }
    # An empty instruction is an empty line: LazyLLM's "{instruction}\n{extra keys}\n".
    assert (
        ChatPrompter("")
        .generate_prompt("hi")
        .startswith(f"<|start_system|>{DEFAULT_SYSTEM}\n\n<|end_system|>")
    )
    # Without system text (system=None, pawlette's) no instruction means no system part.
    assert ChatPrompter(system=None).generate_prompt("hi", return_dict=True) == {
        "messages": [{"role": "user", "content": "hi"}]
    }


def test_chat_history_turns_are_joined_without_separators() -> None:
    prompter = ChatPrompter("Chat.")
    text = prompter.generate_prompt("q3", history=[["q1", "a1"], ("q2", "a2")])
    assert "<|end_system|>\n\n<|Human|>:q1<|Assistant|>:a1<|Human|>:q2<|Assistant|>:a2\n" in text
    assert text.endswith("\n<|Human|>:\nq3\n<|Assistant|>:\n")


def test_message_history_in_the_string_form_renders_like_pairs() -> None:
    prompter = ChatPrompter("Chat.")
    pairs = [["你好", "你好!"], ["q2", "a2"]]
    messages = [
        {"role": "user", "content": "你好"},
        {"role": "assistant", "content": [{"type": "text", "text": "你好!"}]},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "a2"},
    ]
    mixed = [["你好", "你好!"], *messages[2:]]
    expected = prompter.generate_prompt("q3", history=pairs)
    assert prompter.generate_prompt("q3", history=messages) == expected
    assert prompter.generate_prompt("q3", history=mixed) == expected


def test_return_dict_history_keeps_the_callers_messages() -> None:
    history = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    result = ChatPrompter().generate_prompt("thanks", history=history, return_dict=True)
    assert result["messages"][1:4] == history
    result["messages"][1]["content"] = "changed"
    assert history[0]["content"] == "weather?"  # the result is a copy


def test_custom_markers_and_system() -> None:
    markers = ChatMarkers(
        system_open="<s>",
        system_close="</s>",
        human_open="[H]",
        human_close="[/H]",
        assistant_open="[A]",
        assistant_close="[/A]",
    )
    prompter = ChatPrompter("Be kind.", markers=markers, system="You are Paw.")
    assert prompter.generate_prompt("q2", history=[["q1", "a1"]], label="a2") == (
        "<s>You are Paw.Be kind.\n\n</s>\n\n[H]q1[/H][A]a1[/A]\n[H]\nq2\n[/H][A]\na2[/A]"
    )


# --------------------------------------------------------------------------- slots and input


def test_slots_are_filled_in_one_pass() -> None:
    prompter = ChatPrompter("{a} then {b}")
    assert "x{b} then y\n" in prompter.generate_prompt({"a": "x{b}", "b": "y"})


def test_other_braces_are_literal_text() -> None:
    prompter = AlpacaPrompter('Reply as {"answer": ...} about {topic}')
    assert prompter.slots == ("topic",)
    assert 'Reply as {"answer": ...} about cats\n' in prompter.generate_prompt("cats")


def test_chinese_slot_names() -> None:
    prompter = AlpacaPrompter("上下文信息是{上下文}，用户的问题是{问题}")
    text = prompter.generate_prompt({"上下文": "背景", "问题": "输入"})
    assert "上下文信息是背景，用户的问题是输入\n" in text


def test_a_repeated_slot_is_one_slot() -> None:
    prompter = AlpacaPrompter("{x} and {x}")
    assert prompter.slots == ("x",)
    assert "1 and 1" in prompter.generate_prompt("1")


def test_one_key_that_is_no_slot_is_the_chat_user_turn() -> None:
    prompter = ChatPrompter("Answer from the context.", extra_keys=["doc"])
    for key in ("input", "query"):
        result = prompter.generate_prompt({"doc": "sky", key: "why?"}, return_dict=True)
        assert result["messages"][-1] == {"role": "user", "content": "why?"}
        assert "### doc:\nsky" in result["messages"][0]["content"]
    # Two such keys cannot be told apart.
    with pytest.raises(RequestError, match="unexpected keys 'query', 'input'"):
        prompter.generate_prompt({"query": "why?", "doc": "sky", "input": "x"})


def test_a_slot_named_input_is_a_slot_not_the_user_turn() -> None:
    prompter = ChatPrompter("Q: {input}")
    assert prompter.generate_prompt({"input": "why?"}, return_dict=True)["messages"] == [
        {"role": "system", "content": f"{DEFAULT_SYSTEM}\nQ: why?\n\n"},
        {"role": "user", "content": ""},
    ]


def test_a_dict_that_fills_every_slot_leaves_the_chat_user_turn_empty() -> None:
    # As the seed's ChatPrompter('请完成加法运算，输入为{input}') example shows for a string.
    text = ChatPrompter("Add {x}").generate_prompt({"x": "1+1"})
    assert text.endswith("<|Human|>:\n\n<|Assistant|>:\n")
    empty = ChatPrompter("hi").generate_prompt({"input": ""})
    assert empty.endswith("<|Human|>:\n\n<|Assistant|>:\n")


def test_extro_keys_and_extra_keys_are_the_same() -> None:
    one = AlpacaPrompter("Add", extro_keys="input").generate_prompt("a+b")
    assert one == AlpacaPrompter("Add", extra_keys="input").generate_prompt("a+b")
    assert one == AlpacaPrompter("Add", ["input"]).generate_prompt("a+b")


def test_inputs_are_not_mutated() -> None:
    values = {"context": "c", "input": "q"}
    history = [["a", "b"]]
    tools = copy.deepcopy(WEATHER)
    ChatPrompter("{context}").generate_prompt(values, history, tools, return_dict=True)
    assert values == {"context": "c", "input": "q"}
    assert history == [["a", "b"]]
    assert tools == WEATHER


# --------------------------------------------------------------------------- tools


def test_return_dict_has_tools_only_when_there_are_tools() -> None:
    prompter = ChatPrompter("x")
    assert "tools" not in prompter.generate_prompt("q", return_dict=True)
    assert prompter.generate_prompt("q", tools=TOOLS, return_dict=True)["tools"] == TOOLS


def test_tools_json_escapes_non_ascii_as_lazyllm_does() -> None:
    text = ChatPrompter("x").generate_prompt("q", tools=WEATHER)
    assert '"description": "\\u67e5\\u8be2\\u5929\\u6c14"' in text
    # The dict form keeps the tools as they are.
    result = ChatPrompter("x").generate_prompt("q", tools=WEATHER, return_dict=True)
    assert result["tools"] == WEATHER


def test_constructed_tools_are_copied() -> None:
    tools = copy.deepcopy(TOOLS)
    prompter = ChatPrompter("x", tools=tools)
    tools[0]["function"]["name"] = "changed"
    assert prompter.tools == TOOLS
    returned = prompter.generate_prompt("q", return_dict=True)["tools"]
    returned[0]["function"]["name"] = "changed again"
    assert prompter.tools == TOOLS


def test_no_tools_at_call_time_is_not_a_second_set() -> None:
    prompter = ChatPrompter("x", tools=TOOLS)
    assert prompter.generate_prompt("q", tools=[]) == prompter.generate_prompt("q")


# --------------------------------------------------------------------------- label


def test_label_is_appended_after_the_prompt() -> None:
    alpaca = AlpacaPrompter("Add {x}")
    assert alpaca.generate_prompt("1+1", label="2") == alpaca.generate_prompt("1+1") + "2"
    chat = ChatPrompter("Add")
    assert chat.generate_prompt("1+1", label="2") == chat.generate_prompt("1+1") + "2"


def test_label_in_the_dict_form_is_a_final_assistant_message() -> None:
    result = ChatPrompter("Add").generate_prompt("1+1", label="2", return_dict=True)
    assert result["messages"][-2:] == [
        {"role": "user", "content": "1+1"},
        {"role": "assistant", "content": "2"},
    ]


# --------------------------------------------------------------------------- responses


MENTIONS = [
    (lambda: AlpacaPrompter("{x}"), "Use the header ### Response:\n then answer."),
    (lambda: AlpacaPrompter("{x}"), "### Response:\n42"),
    (lambda: ChatPrompter(), "In LazyLLM the marker <|Assistant|>: starts a turn."),
    (lambda: ChatPrompter(), "<|Assistant|>:\nhello"),
    (lambda: ChatPrompter(), "a\n<|Assistant|>:\nb"),
    (lambda: ChatPrompter(format="pcml"), "I print [AST] literally<end>"),
    # This prompter's prompts open with a system turn ([SYS]): no echo of its prompt.
    (lambda: ChatPrompter(format="pcml"), "[USR]q[/USR]\n\n[AST]a"),
    (lambda: ChatPrompter(format="chatglm3"), "I print <|assistant|> literally"),
]


@pytest.mark.parametrize(("make", "output"), MENTIONS)
def test_get_response_returns_an_answer_that_is_no_echo_unchanged(
    make: Callable[[], AlpacaPrompter | ChatPrompter], output: str
) -> None:
    assert make().get_response(output) == output


ECHOES = [
    (lambda: AlpacaPrompter("{x}"), {}),
    (lambda: AlpacaPrompter("Add", extra_keys="input", tools=TOOLS), {}),
    (lambda: AlpacaPrompter("{x}", system=None), {}),
    (lambda: ChatPrompter("Chat."), {"history": [["a", "b"]]}),
    (lambda: ChatPrompter(system=None), {"history": [["a", "b"]], "tools": TOOLS}),
    (lambda: ChatPrompter("Chat.", format="pcml"), {"history": [["a", "b"]], "tools": WEATHER}),
    (lambda: ChatPrompter(format="pcml", system=None), {"history": [["a", "b"]]}),
    (lambda: ChatPrompter("Chat.", format="chatglm3"), {"history": [["a", "b"]]}),
    (lambda: ChatPrompter(format="chatglm3", system=None), {"history": [["a", "b"]]}),
    # Every role's header starts with <|start_header_id|>: the user's is told by its name.
    (lambda: ChatPrompter("Chat.", format="breeze"), {"history": [["a", "b"]]}),
    (lambda: ChatPrompter(format="omni", system=None), {"history": [["a", "b"]]}),
]
ANSWERS = [
    "Use the header ### Response:\n then answer.",
    "In LazyLLM the marker <|Assistant|>: starts a turn.\n<|Assistant|>:\nagain",
    "I print [AST] literally, and [/USR]\n\n[AST] too<end>",
    "I print <|assistant|> literally",
]


@pytest.mark.parametrize(("make", "arguments"), ECHOES)
@pytest.mark.parametrize("answer", ANSWERS)
def test_get_response_cuts_an_echoed_prompt_at_its_first_end(
    make: Callable[[], AlpacaPrompter | ChatPrompter], arguments: dict[str, Any], answer: str
) -> None:
    prompter = make()
    prompt = prompter.generate_prompt("q", **arguments)
    assert prompter.get_response(prompt + answer) == answer
    assert prompter.get_response(prompt + answer, prompt) == answer
    assert prompter.get_response(prompt) == ""


def test_get_response_with_the_prompt_strips_only_that_prompt() -> None:
    prompter = ChatPrompter("Chat.")
    prompt = prompter.generate_prompt("q", history=[["a", "b"]])
    assert prompter.get_response(prompt + "answer", prompt) == "answer"
    # Given the prompt, an output that does not start with it is the answer as it is.
    other = ChatPrompter("Chat.").generate_prompt("other") + "answer"
    assert prompter.get_response(other, prompt) == other
    assert prompter.get_response("unrelated", prompt) == "unrelated"


def test_get_response_leaves_an_echo_without_an_end_unchanged() -> None:
    prompter = ChatPrompter("Chat.")
    cut = prompter.generate_prompt("q")[:-3]
    assert prompter.get_response(cut) == cut


def test_parse_response_without_a_format() -> None:
    prompter = AlpacaPrompter("{x}")
    echo = prompter.generate_prompt("q") + "42"
    assert prompter.parse_response(echo) == {"role": "assistant", "content": "42"}
    assert prompter.parse_response("### Response:\n42") == {
        "role": "assistant",
        "content": "### Response:\n42",
    }


# --------------------------------------------------------------------------- format=


def test_format_renders_the_dict_form_with_a_generation_prompt() -> None:
    prompter = ChatPrompter("You answer weather questions.", format="pcml", tools=WEATHER)
    history = [["你好", "你好!"]]
    request = prompter.generate_prompt("北京天气?", history, return_dict=True)
    pcml = pawlette.get_format("pcml")
    expected = pcml.render(request["messages"], request["tools"], add_generation_prompt=True)
    text = prompter.generate_prompt("北京天气?", history)
    assert text == expected.text
    assert text.startswith(f"[SYS]{DEFAULT_SYSTEM}\nYou answer weather questions.")
    assert text.endswith("[USR]北京天气?[/USR]\n\n[AST]")
    assert prompter.format is pcml


def test_format_accepts_a_format_value() -> None:
    pcml = pawlette.get_format("pcml")
    by_value = ChatPrompter("x", format=pcml).generate_prompt("q")
    assert by_value == ChatPrompter("x", format="pcml").generate_prompt("q")


def test_format_with_a_label_renders_a_finished_assistant_turn() -> None:
    prompter = ChatPrompter("x", format="pcml")
    assert prompter.generate_prompt("q", label="a").endswith("[AST]a<end>[/AST]")


def test_format_parse_response_reads_tool_calls() -> None:
    prompter = ChatPrompter("x", format="pcml", tools=WEATHER)
    completion = '<call>{"id": "c1", "name": "get_weather", "arguments": {"city": "北京"}}</call>'
    message = prompter.parse_response(completion + "<end>")
    assert message["content"] is None
    assert message["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "北京"}',
    }
    prompt = prompter.generate_prompt("q")
    assert prompter.parse_response(prompt + "Hi<end>", prompt) == {
        "role": "assistant",
        "content": "Hi",
    }


@pytest.mark.parametrize("name", ["pcml", "chatglm3"])
def test_format_with_system_none_renders_exactly_the_models_own_prompt(name: str) -> None:
    fmt = pawlette.get_format(name)
    prompter = ChatPrompter(format=name, system=None)
    history = [["你好", "你好!"]]
    messages = [
        {"role": "user", "content": "你好"},
        {"role": "assistant", "content": "你好!"},
        {"role": "user", "content": "q"},
    ]
    assert prompter.system is None
    assert prompter.generate_prompt("q", history, return_dict=True) == {"messages": messages}
    own = fmt.render(messages, add_generation_prompt=True).text
    assert prompter.generate_prompt("q", history) == own
    # A system text of one's own, with no instruction, takes LazyLLM's "None" instruction.
    system = [{"role": "system", "content": "Be brief.\nNone\n\n"}, *messages]
    own_system = fmt.render(system, add_generation_prompt=True).text
    assert ChatPrompter(format=name, system="Be brief.").generate_prompt("q", history) == own_system
    # With an instruction and no system text, the instruction alone is the system message.
    instructed = ChatPrompter("Be {tone}.", format=name, system=None)
    result = instructed.generate_prompt({"tone": "brief", "input": "q"}, return_dict=True)
    assert result["messages"][0] == {"role": "system", "content": "Be brief.\n\n"}


def test_system_given_keeps_lazyllms_default_and_none_drops_it() -> None:
    default = ChatPrompter("x", format="pcml").generate_prompt("q")
    assert default.startswith(f"[SYS]{DEFAULT_SYSTEM}\nx\n\n[/SYS]")
    assert (
        ChatPrompter("x", format="pcml", system=None)
        .generate_prompt("q")
        .startswith("[SYS]x\n\n[/SYS]")
    )
    assert (
        ChatPrompter("x", system=None)
        .generate_prompt("q")
        .startswith("<|start_system|>x\n\n<|end_system|>")
    )
    assert AlpacaPrompter("{x}", system=None).generate_prompt("q").startswith(ALPACA_PREAMBLE)
    assert (
        AlpacaPrompter("{x}", system=None)
        .generate_prompt("q", return_dict=True)["messages"][0]["content"]
        .startswith(ALPACA_PREAMBLE)
    )


def test_format_get_response_cuts_at_the_formats_generation_prompt() -> None:
    prompter = ChatPrompter("x", format="pcml")
    prompt = prompter.generate_prompt("q", history=[["a", "b"]])
    # Raw text: the format's end marker stays (parse_response is the structured reading).
    assert prompter.get_response(prompt + "Hi<end>") == "Hi<end>"


# --------------------------------------------------------------------------- errors


def _history_tool_message() -> None:
    ChatPrompter().generate_prompt(
        "q", history=[{"role": "tool", "tool_call_id": "c1", "content": "r"}]
    )


ERRORS = [
    pytest.param(
        lambda: AlpacaPrompter("{x}").generate_prompt(None), "input", "found None", id="input type"
    ),
    pytest.param(
        lambda: ChatPrompter("x").generate_prompt(True), "input", "found a bool", id="input bool"
    ),
    pytest.param(
        lambda: AlpacaPrompter("{x}").generate_prompt({"x": 1}),
        "input['x']",
        "found an int",
        id="input value type",
    ),
    pytest.param(
        lambda: AlpacaPrompter("{x}{y}").generate_prompt({"x": "1"}),
        "input",
        "no value for 'y'",
        id="missing slot",
    ),
    pytest.param(
        lambda: AlpacaPrompter("{x}").generate_prompt({"x": "1", "y": "2"}),
        "input['y']",
        "'2', but no {slot} or extra key is left to put it in; expected every input in a slot of "
        "the instruction or an extra key. AlpacaPrompter has no user turn",
        id="unexpected key in alpaca",
    ),
    pytest.param(
        lambda: ChatPrompter("hi {name}").generate_prompt({"name": "a", "nmae": "b", "x": "c"}),
        "input",
        "unexpected keys 'nmae', 'x'; expected the keys 'name' and at most one more (the user's "
        "input). 'nmae' looks like a typo of 'name'",
        id="typo of a slot in chat",
    ),
    pytest.param(
        lambda: AlpacaPrompter("Format as {a-b} or {a:>3}").generate_prompt("x"),
        "input",
        "({a-b}, {a:>3} are literal text: a slot is {name} with letters, digits and _ only; "
        "slots found: none)",
        id="literal braces in alpaca",
    ),
    pytest.param(
        lambda: ChatPrompter("{a-b} {c}").generate_prompt({"c": "1", "a-b": "2", "d": "3"}),
        "input",
        "{a-b} in the instruction is literal text, not a slot",
        id="literal braces as a key",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt("q", [{"role": "user"}]),
        "history[0].content",
        "missing",
        id="history message without content",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt(
            "q", [{"role": "user", "content": None}], return_dict=True
        ),
        "history[0].content",
        "null",  # the OpenAI edge refuses it first (issue 14)
        id="history message with null content",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt("q", [{"role": "assistant"}], return_dict=True),
        "history[0].content",
        "or tool_calls",
        id="history assistant message without content",
    ),
    pytest.param(
        lambda: ChatPrompter(format="pcml").generate_prompt(
            "q", [{"role": "system", "content": "x"}]
        ),
        "history[0].role",
        "a system message in the history",
        id="history system message",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt(
            "q", [{"role": "developer", "content": "x"}], return_dict=True
        ),
        "history[0].role",
        "a developer message in the history",
        id="history developer message",
    ),
    pytest.param(lambda: ChatPrompter(system=3), "system", "found an int", id="system type"),
    pytest.param(
        lambda: ChatPrompter("{x}").generate_prompt({"x": "1", "y": "2", "z": "3"}),
        "input",
        "unexpected keys 'y', 'z'",
        id="two unexpected keys in chat",
    ),
    pytest.param(
        lambda: AlpacaPrompter("Add").generate_prompt("a"),
        "input",
        "no {slot}",
        id="string without slot in alpaca",
    ),
    pytest.param(
        lambda: ChatPrompter("{a}{b}").generate_prompt("a"),
        "input",
        "2 slots (a, b)",
        id="string with two slots",
    ),
    pytest.param(
        lambda: AlpacaPrompter("{x}").generate_prompt("1", [["q", "a"]]),
        "history",
        "found 1 history items",
        id="history in alpaca",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt("q", "hi"),
        "history",
        "found a string",
        id="history not a list",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt("q", [["q"]]),
        "history[0]",
        "found 1 items",
        id="history pair length",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt("q", [["q", 2]]),
        "history[0][1]",
        "found an int",
        id="history pair type",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt(
            "q", [{"role": "boss", "content": ""}], return_dict=True
        ),
        "history[0].role",
        "'boss'",
        id="history message",
    ),
    pytest.param(
        _history_tool_message,
        "history[0]",
        "a tool message",
        id="history tool message in string form",
    ),
    pytest.param(
        lambda: ChatPrompter(tools=TOOLS).generate_prompt("q", tools=TOOLS),
        "tools",
        "built with tools",
        id="tools twice",
    ),
    pytest.param(
        lambda: ChatPrompter(tools=[{"type": "function", "function": {}}]),
        "tools[0].function.name",
        "found null",
        id="tool without name",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt(
            "q", tools=[{"type": "function", "function": {"name": "f", "x": {1}}}]
        ),
        "tools[0].function.x",  # named by the OpenAI edge (issue 14)
        "JSON value",
        id="tools not JSON",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt("q", label=3),
        "label",
        "found an int",
        id="label type",
    ),
    pytest.param(
        lambda: ChatPrompter().generate_prompt("q", return_dict=1),
        "return_dict",
        "found an int",
        id="return_dict type",
    ),
    pytest.param(lambda: ChatPrompter(3), "instruction", "found an int", id="instruction type"),
    pytest.param(
        lambda: ChatPrompter({"sys": "x"}),
        "instruction",
        "unknown keys ['sys']",
        id="instruction keys",
    ),
    pytest.param(
        lambda: ChatPrompter({"user": 1}),
        "instruction['user']",
        "found an int",
        id="instruction value",
    ),
    pytest.param(
        lambda: ChatPrompter("x", extro_keys="a", extra_keys="b"),
        "extra_keys",
        "both",
        id="both key spellings",
    ),
    pytest.param(
        lambda: ChatPrompter("x", extra_keys=3), "extra_keys", "found an int", id="extra keys type"
    ),
    pytest.param(
        lambda: ChatPrompter("x", extra_keys=["a", "a"]),
        "extra_keys[1]",
        "a second time",
        id="duplicate extra key",
    ),
    pytest.param(lambda: ChatPrompter("x", format="nope"), "format", "'nope'", id="unknown format"),
    pytest.param(
        lambda: ChatPrompter("x", markers=ChatMarkers(), format="pcml"),
        "markers",
        "both",
        id="markers and format",
    ),
    pytest.param(
        lambda: ChatPrompter().get_response(None), "output", "found None", id="output type"
    ),
]


@pytest.mark.parametrize(("call", "path", "fragment"), ERRORS)
def test_bad_input_raises_a_request_error(
    call: Callable[[], object], path: str, fragment: str
) -> None:
    with pytest.raises(RequestError) as caught:
        call()
    assert caught.value.path == path
    assert fragment in str(caught.value)
    assert isinstance(caught.value, ValueError)  # RequestError is a ValueError too


# ------------------------------------------------------------------ token ids and a mask


def _learned(tokenizer: Any, result: pawlette.Tokenized) -> str:
    return str(
        tokenizer.decode(
            [label for label in result.labels if label != -100], skip_special_tokens=False
        )
    )


def test_tokenize_through_a_format_learns_the_label_turn_only() -> None:
    from .support.small_bpe import small_tokenizer

    pcml = pawlette.get_format("pcml")
    tokenizer = small_tokenizer(pcml.special_markers)
    prompter = ChatPrompter("你是一个对话机器人", tools=WEATHER, format="pcml")
    history = [["你好", "你好!"]]
    result = prompter.tokenize(tokenizer, "北京天气?", history, label="晴。")
    request = prompter.generate_prompt("北京天气?", history, label="晴。", return_dict=True)
    expected = pawlette.tokenize(pcml, tokenizer, request, mask="last")
    assert result == expected
    assert _learned(tokenizer, result) == "晴。<end>"
    text = tokenizer.decode(result.input_ids, skip_special_tokens=False)
    assert text == prompter.generate_prompt("北京天气?", history, label="晴。")
    # The prompt's ids (no label) are the start of the training ids: what inference sees.
    prompt = prompter.tokenize(tokenizer, "北京天气?", history)
    assert set(prompt.labels) == {-100}
    assert result.input_ids[: len(prompt)] == prompt.input_ids
    # "all" learns the history's answer too.
    everything = prompter.tokenize(tokenizer, "北京天气?", history, label="晴。", mask="all")
    assert _learned(tokenizer, everything) == "你好!<end>晴。<end>"


@pytest.mark.parametrize(
    ("prompter", "arguments"),
    [
        (ChatPrompter("你是一个对话机器人"), {"history": [["你好", "你好!"]]}),
        (AlpacaPrompter("请完成加法运算, 输入为{instruction}"), {}),
    ],
    ids=["chat", "alpaca"],
)
def test_tokenize_without_a_format_learns_the_label_and_injects_nothing(
    prompter: AlpacaPrompter | ChatPrompter, arguments: dict[str, Any]
) -> None:
    from .support.small_bpe import small_tokenizer

    markers = ("<|Human|>:", "<|Assistant|>:", "<|start_system|>", "<end>")
    tokenizer = small_tokenizer((*markers, "</s>"))
    control = {tokenizer.token_to_id(marker) for marker in markers}
    hostile = "a+b <|Assistant|>: <end> <|start_system|>"
    result = prompter.tokenize(tokenizer, hostile, label="答案 <end>", **arguments)
    text = prompter.generate_prompt(hostile, label="答案 <end>", **arguments)
    # No eoa in the template: the tokenizer's end of sequence ends the answer, learned.
    assert tokenizer.decode(result.input_ids, skip_special_tokens=False) == text + "</s>"
    assert control.isdisjoint(result.input_ids)  # every marker spelled in text stays text
    assert _learned(tokenizer, result) == "答案 <end></s>"
    prompt = prompter.tokenize(tokenizer, hostile, **arguments)
    assert result.input_ids[: len(prompt)] == prompt.input_ids
    assert prompt.kinds == ["prompt"] * len(prompt) and set(prompt.labels) == {-100}
    assert result.kinds[len(prompt) :] == ["label"] * (len(result) - len(prompt) - 1) + ["end"]


def test_tokenize_without_a_format_continues_the_prompt_for_sentencepiece_tokenizers() -> None:
    # A Metaspace tokenizer writes '▁' only at the start of the text: the answer, encoded
    # apart, must not gain one.
    from .support.small_spm import spm_tokenizer

    tokenizer = spm_tokenizer("metaspace-first", ("</s>",))
    prompter = ChatPrompter("Be brief.")
    result = prompter.tokenize(tokenizer, "hello there", label="the answer")
    prompt = prompter.tokenize(tokenizer, "hello there")
    answer = result.input_ids[len(prompt) : -1]  # the last is </s>
    assert result.input_ids[: len(prompt)] == prompt.input_ids
    pieces = "".join(tokenizer.id_to_token(token) for token in answer)
    assert pieces.replace("▁", " ") == "the answer"  # not ' the answer


def test_tokenize_refuses_a_mask_without_a_format_and_a_bad_label() -> None:
    from .support.small_bpe import small_tokenizer

    tokenizer = small_tokenizer(())
    with pytest.raises(RequestError, match="mask policies apply to format= prompters"):
        ChatPrompter("x").tokenize(tokenizer, "hi", label="yo", mask="last")
    with pytest.raises(RequestError, match="label"):
        ChatPrompter("x").tokenize(tokenizer, "hi", label=3)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- format= for both


def _reference_requests() -> list[dict[str, Any]]:
    """The reference's own ``return_dict`` answers that pawlette reproduces exactly: what
    LazyLLM 0.1.2 hands an online chat model, for both prompters."""
    cases = []
    for case in GENERATED["cases"]:
        expected = case["expected"].get("output")
        reproduced = expected is not None and _generated_call(case) == expected
        if case["call"]["return_dict"] and reproduced:
            cases.append(case)
    return cases


REFERENCE_REQUESTS = _reference_requests()


@pytest.mark.parametrize("name", ["chatml", "llama3", "pcml"])
def test_both_prompters_with_a_format_render_what_lazyllm_hands_a_chat_model(name: str) -> None:
    """``format=f`` is LazyLLM 0.1.2's ``return_dict`` request rendered by ``f`` (what a chat
    model served with ``f`` gets from LazyLLM), for Alpaca as for Chat."""
    fmt = pawlette.get_format(name)
    seen = {"alpaca": 0, "chat": 0}
    for case in REFERENCE_REQUESTS:
        init, call = copy.deepcopy(case["init"]), copy.deepcopy(case["call"])
        reference = case["expected"]["output"]
        prompter = PROMPTERS[case["prompter"]](
            init["instruction"], init["extro_keys"], tools=init.get("tools"), format=name
        )
        try:
            expected: Any = fmt.render(
                reference["messages"], reference.get("tools"), add_generation_prompt=True
            ).text
        except RequestError as error:  # the format cannot hold it: the prompter says so too
            expected = type(error)
        try:
            output: Any = prompter.generate_prompt(
                call["input"], call.get("history"), call.get("tools")
            )
        except RequestError as error:
            output = type(error)
        assert output == expected, case["name"]
        assert prompter.format is fmt
        seen[case["prompter"]] += expected is not RequestError
    assert min(seen.values()) >= 20, seen  # both prompters, many real requests each


def test_alpaca_with_a_format_parses_tokenizes_and_cuts_its_echo() -> None:
    from .support.small_bpe import small_tokenizer

    prompter = AlpacaPrompter("请完成加法运算, 输入为{instruction}", format="chatml", tools=WEATHER)
    chatml = pawlette.get_format("chatml")
    prompt = prompter.generate_prompt("a+b")
    assert prompt.startswith(f"<|im_start|>system\n{DEFAULT_SYSTEM}\n{ALPACA_PREAMBLE}")
    assert prompt.endswith("<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n")
    # A label is the final assistant turn, its end marker written.
    assert prompter.generate_prompt("a+b", label="c").endswith("\nc<|im_end|>\n")
    # The answer is parsed by the format: calls come back as tool_calls.
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "北京"}}</tool_call>'
    message = prompter.parse_response(prompt + call, prompt)
    assert message["tool_calls"][0]["function"]["name"] == "get_weather"
    assert prompter.get_response(prompt + "c<|im_end|>") == "c<|im_end|>"
    # Token ids through the format: only the label's turn is learned.
    tokenizer = small_tokenizer(chatml.special_markers)
    result = prompter.tokenize(tokenizer, "a+b", label="c")
    request = prompter.generate_prompt("a+b", label="c", return_dict=True)
    assert result == pawlette.tokenize(chatml, tokenizer, request, mask="last")
    assert _learned(tokenizer, result) == "<think>\n\n</think>\n\nc<|im_end|>"


def test_alpaca_refuses_a_format_that_is_no_format() -> None:
    with pytest.raises(RequestError, match="format"):
        AlpacaPrompter("x", format=3)  # type: ignore[arg-type]
    with pytest.raises(RequestError, match="nope"):
        AlpacaPrompter("x", format="nope")
