"""What :meth:`pawlette.Format.parse_conversation` says it could not give back, and where a
completion is read from after the prompt actually written (:meth:`pawlette.Format.parse`
with ``prompt=``)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import assume, given, settings

import pawlette
from bench.registered import every_format
from pawlette.declare import Reasoning
from pawlette.declare.pieces import text_of
from pawlette.demo import WEATHER_TOOL
from pawlette.engine.fold import fold, merge_assistant
from pawlette.formats import formats
from pawlette.openai import message_to_openai
from pawlette.tokenization import IdParser

from .support import sampling
from .support.small_bpe import small_tokenizer
from .support.template_compare import corpus_reference

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]


def _rendered(fmt: pawlette.Format, tools: list[dict[str, object]]) -> str | None:
    for messages in (MESSAGES, MESSAGES[1:]):  # (a format without a system role)
        try:
            return fmt.render(messages, tools).text
        except pawlette.RequestError:
            continue
    return None


def _writes_tools(name: str) -> bool:
    fmt = pawlette.get_format(name)
    with_tools = _rendered(fmt, [WEATHER_TOOL])
    return with_tools is not None and with_tools != _rendered(fmt, [])


FORMATS = formats()  # (at collection: other tests register formats of their own)
WRITING_TOOLS = [name for name in FORMATS if _writes_tools(name)]
"""The formats that write a tools block (not Gemma 2, Phi-3.5 or RWKV, nor DeepSeek V3.1 or
SmolLM3, whose templates ignore the tools: a loss the render records)."""


def test_the_formats_without_a_tools_block_are_the_known_ones() -> None:
    assert sorted(set(FORMATS) - set(WRITING_TOOLS)) == [
        "deepseek",
        "gemma",
        "phi3",
        "rwkv",
        "smollm3",
    ]


@pytest.mark.parametrize("name", WRITING_TOOLS)
def test_tools_come_back_or_the_parse_says_they_do_not(name: str) -> None:
    fmt = pawlette.get_format(name)
    with_tools = _rendered(fmt, [WEATHER_TOOL])
    assert with_tools is not None
    back = fmt.parse_conversation(with_tools)
    if back.tools == [WEATHER_TOOL]:
        assert back.losses == ()
        return
    assert back.tools == []
    assert len(back.losses) == 1
    assert back.losses[0].startswith("tools: written as ")
    # Given the request's tools again, the conversation renders as it was.
    assert fmt.render(back.messages, [WEATHER_TOOL]).text == with_tools


def test_a_loss_is_recorded_once() -> None:
    harmony = pawlette.get_format("harmony")
    turn = harmony.render([{"role": "user", "content": "Hi"}], [WEATHER_TOOL]).text
    back = harmony.parse_conversation(turn + turn)
    assert back.losses == ("tools: written as TypeScript types, not read back into JSON schemas",)


# ------------------------------------------------------------------ the prompt actually written

CALL = {
    "id": "a",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}
ASKED = [{"role": "user", "content": "Weather in Paris?"}]
ANSWERED = [*ASKED, {"role": "assistant", "content": None, "tool_calls": [CALL]}]
RESULTS = [*ANSWERED, {"role": "tool", "tool_call_id": "a", "content": "18"}]
GREETING = {"role": "assistant", "content": "Hello! How can I help?"}
CONVERSATIONS: dict[str, list[dict[str, Any]]] = {
    "a user message": ASKED,
    "results": RESULTS,
    "an answer": [*ASKED, GREETING],
    "results and an answer": [*RESULTS, GREETING],
    "a greeting": [GREETING],
    "a system message and a greeting": [{"role": "system", "content": "Be brief."}, GREETING],
    "a greeting and a user message": [GREETING, *ASKED],
    "a system message": [{"role": "system", "content": "Be brief."}],
}
"""Conversations whose generation prompt differs by their last message: an answer or a system
text after which some templates write no prompt, or leave the answer open."""

OPENING_PROMPTS = [
    name
    for name in every_format()
    if pawlette.get_format(name).grammar.completion_start == "assistant.reasoning"
]
"""Every registered format and variant whose usual prompt opens a reasoning block."""


def _reasoning(fmt: pawlette.Format) -> Reasoning:
    (reasoning,) = [
        concept for concept in fmt.declaration.concepts if isinstance(concept, Reasoning)
    ]
    return reasoning


def _opener(fmt: pawlette.Format) -> str:
    """The text of the format's reasoning open fence."""
    return text_of(_reasoning(fmt).open, fmt.options, fmt.name).strip()


def _streamed(fmt: pawlette.Format, completion: str, prompt: str) -> dict[str, Any]:
    """The completion fed a character at a time to a parser given the prompt."""
    parser = fmt.parser(prompt=prompt)
    events = [event for character in completion for event in parser.feed(character)]
    events += parser.finish()
    return message_to_openai(merge_assistant(fold(events, fmt.grammar.fields).messages))


def _from_ids(fmt: pawlette.Format, completion: str, prompt: str) -> dict[str, Any]:
    """The completion as token ids (its markers as special tokens), one id at a time."""
    tokenizer = small_tokenizer(fmt.special_markers)
    parser = IdParser(fmt, tokenizer, prompt=prompt)
    events = [
        event
        for token in tokenizer.encode(completion, add_special_tokens=False).ids
        for event in parser.feed_ids([token])
    ]
    events += parser.finish()
    return message_to_openai(merge_assistant(fold(events, fmt.grammar.fields).messages))


def _reading(message: dict[str, Any]) -> tuple[str, str]:
    return message.get("content") or "", message.get("reasoning_content") or ""


@pytest.mark.parametrize("name", OPENING_PROMPTS)
def test_a_completion_starts_inside_the_block_only_after_a_prompt_that_opened_it(
    name: str,
) -> None:
    # The format's usual prompt opens the block, but its template writes no prompt after
    # some turns, or leaves the last answer open: the model's text there is its answer.
    fmt = pawlette.get_format(name)
    opener = _opener(fmt)
    completion = "It is 18." + fmt.stop[0]
    seen = set()
    for kind, messages in CONVERSATIONS.items():
        try:
            prompt = fmt.render(messages, [WEATHER_TOOL], add_generation_prompt=True).text
        except pawlette.PawletteError:
            continue  # a conversation the template refuses
        opened = prompt.rstrip().endswith(opener)
        seen.add(opened)
        expected = ("", "It is 18.") if opened else ("It is 18.", "")
        whole = fmt.parse(completion, prompt=prompt).message
        assert _reading(whole) == expected, (kind, prompt[-60:])
        assert _streamed(fmt, completion, prompt) == whole, kind
    assert True in seen  # the usual prompt, at least, opens the block


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("deepseek_dsml:v3.2-thinking", "a system message"),
        ("deepseek:v3.1-thinking", "an answer"),
        ("deepseek:v3.1-thinking", "a greeting"),
        ("hy3:low", "an answer"),
        ("apriel:1.6", "results and an answer"),
    ],
)
def test_a_prompt_that_opened_no_block_is_read_so_in_every_form(name: str, kind: str) -> None:
    # No generation prompt (DeepSeek after the system text or an answer), or the last answer
    # left open (Hunyuan, Apriel): the answer is content, read whole, streamed or from ids.
    fmt = pawlette.get_format(name)
    prompt = fmt.render(CONVERSATIONS[kind], [WEATHER_TOOL], add_generation_prompt=True).text
    assert not prompt.rstrip().endswith(_opener(fmt))
    completion = " It is 18." + fmt.stop[0]
    whole = fmt.parse(completion, prompt=prompt).message
    assert _reading(whole) == (" It is 18.", "")
    assert _streamed(fmt, completion, prompt) == whole
    assert _from_ids(fmt, completion, prompt) == whole
    assert fmt.start_after(prompt) is not None  # the server starts its parser there too


def test_an_answer_prefilled_inside_the_block_goes_on_inside_it() -> None:
    # A prompt that ends inside a reasoning block the caller began (a prefill) is continued
    # there, in a format whose usual prompt opens none.
    qwen = pawlette.get_format("chatml")
    prompt = qwen.render(ASKED, add_generation_prompt=True).text + "<think>\nThe user"
    completion = " asks.\n</think>\n\nIt is 18.<|im_end|>"
    whole = qwen.parse(completion, prompt=prompt).message
    assert _reading(whole) == ("It is 18.", " asks.")
    assert _streamed(qwen, completion, prompt) == whole
    assert _from_ids(qwen, completion, prompt) == whole


def test_the_usual_prompt_changes_nothing() -> None:
    # A prompt that leaves the model where the usual one does reads as no prompt given.
    for name in ("deepseek_dsml:v3.2-thinking", "deepseek_dsml:v3.2", "omni", "chatml"):
        fmt = pawlette.get_format(name)
        prompt = fmt.render(ASKED, add_generation_prompt=True).text
        assert fmt.start_after(prompt) is None, name
        completion = "<think>A</think>B" + fmt.stop[0]
        assert fmt.parse(completion, prompt=prompt) == fmt.parse(completion), name


ON_OFF = (True, False)
REAL_TEMPLATES: list[tuple[str, str, str | None, tuple[object, ...]]] = [
    ("deepseek-ai-DeepSeek-V3.1", "deepseek:v3.1-thinking", "thinking", ON_OFF),
    ("deepseek-ai-DeepSeek-V3.2", "deepseek_dsml:v3.2-thinking", "thinking", ON_OFF),
    ("deepseek-ai-DeepSeek-V4", "deepseek_dsml:v4-thinking", "thinking", ON_OFF),
    ("GLM-4.7-Flash", "glm:4.7", "enable_thinking", ON_OFF),
    ("Qwen3.5-4B", "chatml:qwen3.5", "enable_thinking", ON_OFF),
    ("inclusionai-ling-3.0-flash", "bailing", "enable_thinking", ON_OFF),
    ("Cohere2MoE", "cohere:cohere2moe", "reasoning", ON_OFF),
    ("Kimi-K3", "kimi:k3", "thinking", ON_OFF),
    ("poolside-Laguna-S-2.1", "laguna:s-2.1", "enable_thinking", ON_OFF),
    ("poolside-Laguna-XS.2", "laguna:xs.2-thinking", "enable_thinking", ON_OFF),
    ("Spark2.5", "spark", "enable_thinking", ON_OFF),
    ("tencent-Hy3", "hy3:low", "reasoning_effort", ("low", "no_think")),
    ("Apriel-1.6-15b-Thinker-fixed", "apriel:1.6", None, ()),
    ("deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "deepseek:r1-llama", None, ()),
    ("MiniMax-M2", "minimax_m2", None, ()),
    ("NVIDIA-Nemotron-Nano-v2", "nemotron_v2", None, ()),
    ("StepFun3.5-Flash", "chatml:stepfun3.5", None, ()),
    ("IFM-K2-Horizon", "ifm", None, ()),
]
"""llama.cpp's real templates of the formats whose usual prompt opens the block, each with
the variable that switches thinking per request and its values on and off (None: the
template has none)."""


@pytest.mark.parametrize(("template", "name", "switch", "values"), REAL_TEMPLATES)
def test_a_real_templates_prompt_says_where_the_completion_starts(
    template: str, name: str, switch: str | None, values: tuple[object, ...]
) -> None:
    # The template's own prompts, thinking on and off: the completion is reasoning exactly
    # where the prompt left a block open (at its end, or Nemotron Nano 2's answer, which the
    # template writes inside an open block).
    fmt = pawlette.get_format(name)
    opener, closer = _opener(fmt), _reasoning(fmt).content_markers[1]
    completion = "It is 18." + fmt.stop[0]
    seen = set()
    for value in values if switch else (None,):
        reference = corpus_reference(template, variables={switch: value} if switch else {})
        for kind, messages in CONVERSATIONS.items():
            prompt = reference.render(messages, [WEATHER_TOOL], add_generation_prompt=True).text
            if prompt is None:
                continue  # a conversation the template refuses
            opened = prompt.rfind(opener) > prompt.rfind(closer)
            seen.add(opened)
            expected = ("", "It is 18.") if opened else ("It is 18.", "")
            whole = fmt.parse(completion, prompt=prompt).message
            assert _reading(whole) == expected, (value, kind, prompt[-60:])
            assert _streamed(fmt, completion, prompt) == whole, (value, kind)
    assert True in seen


# ------------------------------------------------------------------ a prompt read back

EVERY_FORMAT = every_format()
QUERIES = ("user", "tool")
"""The roles a generation prompt usually follows."""
ENDS_IN_A_QUERY = ["a user message", "results", "a greeting and a user message"]
"""The conversations of :data:`CONVERSATIONS` a generation prompt usually follows."""


def _renders(
    fmt: pawlette.Format, messages: list[dict[str, Any]]
) -> tuple[pawlette.Rendering, pawlette.Rendering] | None:
    """The render of ``messages`` without and with the generation prompt, or None where the
    format refuses the conversation (both refuse alike)."""
    try:
        plain = fmt.render(messages, [WEATHER_TOOL])
    except pawlette.RequestError:
        with pytest.raises(pawlette.RequestError):
            fmt.render(messages, [WEATHER_TOOL], add_generation_prompt=True)
        return None
    return plain, fmt.render(messages, [WEATHER_TOOL], add_generation_prompt=True)


def _written_again(fmt: pawlette.Format, back: pawlette.ParsedConversation) -> str:
    """The text the messages read back and the flag give, rendered with the request's tools
    (some formats give none back)."""
    prompt = back.add_generation_prompt
    return fmt.render(back.messages, [WEATHER_TOOL], add_generation_prompt=prompt).text


@pytest.mark.parametrize("name", EVERY_FORMAT)
def test_a_prompt_reads_back_as_the_messages_before_it_and_says_it_is_open(name: str) -> None:
    fmt = pawlette.get_format(name)
    checked: list[str] = []
    for kind in ENDS_IN_A_QUERY:
        renders = _renders(fmt, CONVERSATIONS[kind])
        if renders is None:
            continue
        plain, prompt = renders
        back = fmt.parse_conversation(prompt.text)
        unprompted = fmt.parse_conversation(plain.text)
        if unprompted.warnings or unprompted.messages[-1]["role"] == "assistant":
            # A conversation the format does not read back (DeepSeek R1's results), or whose
            # text ends with an answer (RWKV writes a turn of calls empty, and no results).
            continue
        checked.append(kind)
        assert back.add_generation_prompt, (kind, prompt.text)
        assert not back.continue_final_message, (kind, prompt.text)
        assert back.messages == unprompted.messages, kind
        # Without the prompt the text ends after the query, unless the prompt writes nothing
        # there (Mistral's answer has no opener; Firefunction writes the prompt every time).
        assert unprompted.add_generation_prompt == (plain.text == prompt.text), kind
        assert not unprompted.continue_final_message, kind
        # Where the format reads the conversation back whole, the messages and the flag
        # write the text again (DeepSeek R1 writes no results; Devstral no greeting).
        if _written_again(fmt, unprompted) == plain.text:
            assert _written_again(fmt, back) == prompt.text, kind
    assert "a user message" in checked


KNOWN_MISREADS: dict[str, str] = {}
"""Formats whose prompt after an answer or a system message alone is not read as one."""


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISREADS[name]))
        if name in KNOWN_MISREADS
        else name
        for name in EVERY_FORMAT
    ],
)
def test_a_conversation_ending_with_an_answer_or_a_system_text_says_where_it_ends(
    name: str,
) -> None:
    fmt = pawlette.get_format(name)
    for kind in sorted(set(CONVERSATIONS) - set(ENDS_IN_A_QUERY)):
        renders = _renders(fmt, CONVERSATIONS[kind])
        if renders is None:
            continue
        plain, prompt = renders
        unprompted = fmt.parse_conversation(plain.text)
        faithful = _written_again(fmt, unprompted) == plain.text
        if prompt.text == plain.text:
            # No prompt written after an answer or a system text alone (Reka Edge), or one
            # written after every conversation (Firefunction); or the prompt writes nothing
            # (Mistral's answer has no opener: after the system text the answer may begin).
            if plain.segments[-1].kind == "generation_prompt":
                assert unprompted.add_generation_prompt, (kind, plain.text)
            if faithful:
                assert _written_again(fmt, unprompted) == prompt.text, kind
            continue
        assert not unprompted.add_generation_prompt, (kind, plain.text)
        back = fmt.parse_conversation(prompt.text)
        assert back.add_generation_prompt, (kind, prompt.text)
        assert not back.continue_final_message, (kind, prompt.text)
        assert back.messages == unprompted.messages, (kind, prompt.text)
        if faithful:
            assert _written_again(fmt, back) == prompt.text, kind


@pytest.mark.parametrize("name", EVERY_FORMAT)
def test_a_prefilled_answer_reads_back_as_the_unfinished_last_message(name: str) -> None:
    fmt = pawlette.get_format(name)
    prompt = fmt.render(ASKED, add_generation_prompt=True).text
    back = fmt.parse_conversation(prompt + "Sure, the")
    assert back.continue_final_message and not back.add_generation_prompt
    assert back.messages[:-1] == fmt.parse_conversation(prompt).messages
    last = back.messages[-1]
    # After a prompt that opened a reasoning block the prefill is reasoning (Nemotron Nano 2
    # reads its template's block left open in a conversation as the turn's text).
    assert last["role"] == "assistant"
    assert "Sure, the" in (last.get("content") or "") + last.get("reasoning_content", "")


def test_a_prompt_opening_a_reasoning_block_is_left_out_and_what_follows_it_kept() -> None:
    nemotron = pawlette.get_format("nemotron_v2")
    prompt = nemotron.render(ASKED, add_generation_prompt=True).text
    assert prompt.endswith("<SPECIAL_11>Assistant\n<think>\n")
    back = nemotron.parse_conversation(prompt)
    assert back.messages == ASKED and back.add_generation_prompt
    qwen = pawlette.get_format("chatml:qwen3.5")
    prompt = qwen.render(ASKED, add_generation_prompt=True).text
    assert prompt.endswith("<|im_start|>assistant\n<think>\n")
    back = qwen.parse_conversation(prompt + "The user asks")
    assert back.messages == [
        *ASKED,
        {"role": "assistant", "content": "", "reasoning_content": "The user asks"},
    ]
    assert back.continue_final_message and not back.add_generation_prompt


def test_a_prompt_that_closes_an_empty_block_is_the_prompt_alone() -> None:
    deepseek = pawlette.get_format("deepseek")
    prompt = deepseek.render(ASKED, add_generation_prompt=True).text
    assert prompt.endswith("<｜Assistant｜><think></think>")
    back = deepseek.parse_conversation(prompt)
    assert back.messages == ASKED and back.add_generation_prompt
    assert not back.continue_final_message


def test_a_turn_with_no_opener_is_open_after_the_query_prompt_or_not() -> None:
    mistral = pawlette.get_format("mistral")
    text = mistral.render(ASKED).text
    assert text == mistral.render(ASKED, add_generation_prompt=True).text
    assert text.endswith("[/INST]")
    back = mistral.parse_conversation(text)
    assert back.messages == ASKED and back.add_generation_prompt
    answered = mistral.parse_conversation(text + "Sunny.</s>")
    assert answered.messages[-1] == {"role": "assistant", "content": "Sunny."}
    assert not answered.add_generation_prompt and not answered.continue_final_message


def test_a_last_answer_written_with_no_end_reads_as_one_to_continue() -> None:
    # GLM writes the last answer with no end: a finished answer and a prefill read alike.
    glm = pawlette.get_format("glm")
    text = glm.render([*ASKED, GREETING]).text
    back = glm.parse_conversation(text)
    assert back.messages[-1] == GREETING
    assert back.continue_final_message and not back.add_generation_prompt
    # Gemma 4 ends it: after the end another answer may begin with no opener, yet the text
    # holds no prompt.
    gemma4 = pawlette.get_format("gemma4")
    back = gemma4.parse_conversation(gemma4.render([*ASKED, GREETING]).text)
    assert back.messages[-1] == GREETING
    assert not back.continue_final_message and not back.add_generation_prompt


@pytest.mark.deep
@pytest.mark.parametrize("name", FORMATS)
def test_generated_conversations_read_back_from_their_prompt(name: str) -> None:
    fmt = pawlette.get_format(name)
    module = importlib.import_module(f"tests.strategies.{name}")  # (its conversations)

    @settings(max_examples=sampling.examples(name, FORMATS, 30))
    @given(module.conversations())
    def check(request: dict[str, Any]) -> None:
        # The conversation up to its last query: where a generation prompt is asked for.
        messages = request["messages"]
        queries = [at for at, message in enumerate(messages) if message["role"] in QUERIES]
        assume(queries)
        asked = {**request, "messages": messages[: queries[-1] + 1]}
        prompt = fmt.render(asked, add_generation_prompt=True).text
        plain = fmt.render(asked).text
        back = fmt.parse_conversation(prompt, strict=True)
        unprompted = fmt.parse_conversation(plain, strict=True)
        # The messages are those the text without the prompt reads back as (what that
        # reading gives is test_properties.py's round trip).
        assert back.to_request() == unprompted.to_request(), prompt
        assert back.add_generation_prompt and not back.continue_final_message, prompt
        assert unprompted.add_generation_prompt == (plain == prompt), plain
        assert not unprompted.continue_final_message, plain

    check()
