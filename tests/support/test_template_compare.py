"""The comparison harness: reference renders as transformers makes them, differences found at
the right offset, the template's own turns cut out and parsed back.

The two formats declared today, chatml and llama3, must come out identical to Qwen3's and
Llama 3.1's templates on the kinds they express, with the differences their docstrings
document (Llama 3's templates trim text)."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

import pawlette
from pawlette.types import Rendering

from .conversations import Conversation, generate_conversations
from .template_compare import (
    Reference,
    canonical_message,
    compare_renders,
    corpus_reference,
    first_difference,
    hugging_face_messages,
    own_turns,
    strip_text,
)

CHATML = pawlette.get_format("chatml")
LLAMA3 = pawlette.get_format("llama3")
# Text styles the two formats write as their templates do (edge whitespace: see below).
TEXTS = ("plain", "non-ascii", "markdown", "quotes-backslashes", "empty-text", "foreign-markers")


def qwen3() -> Reference:
    # Qwen3's template reads message.content even on a turn of calls alone.
    return corpus_reference("Qwen-Qwen3-0.6B", empty_content=True)


def llama31() -> Reference:
    return corpus_reference(
        "meta-llama-Llama-3.1-8B-Instruct", variables={"date_string": "26 Jul 2024"}
    )


def qwen3_conversations(count: int, **switches: Any) -> list[Conversation]:
    # chatml writes no names, and text spelling its own markers reads back as markers.
    options: dict[str, Any] = {
        "names": False,
        "tool_names": False,
        "texts": TEXTS,
        "avoid": CHATML.special_markers,
    }
    return generate_conversations(count, seed=1, **{**options, **switches})


def llama3_conversations(count: int, **switches: Any) -> list[Conversation]:
    # Meta's templates refuse several calls per turn and drop text beside a call; pawlette's
    # llama3 needs a user message right after the system message when there are tools.
    options: dict[str, Any] = {
        "names": False,
        "tool_names": False,
        "parallel_calls": False,
        "text_with_calls": False,
        "reasoning": False,
        "system_positions": ("none", "first", "later"),
        "texts": TEXTS,
        "avoid": LLAMA3.special_markers,
    }
    return generate_conversations(count, seed=2, **{**options, **switches})


# ------------------------------------------------------------------ the reference render


def test_hugging_face_messages_parse_arguments_and_keep_ids_names_and_reasoning() -> None:
    messages = [
        {"role": "user", "name": "Zoë", "content": "Hi"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "r",
            "tool_calls": [
                {
                    "id": "a1b2c3d4e",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"x": [1]}'},
                },
                {"id": "z", "type": "function", "function": {"name": "g", "arguments": "not json"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a1b2c3d4e", "name": "f", "content": "ok"},
    ]
    converted = hugging_face_messages(messages)
    assert converted[0] == messages[0]
    assert "content" not in converted[1] and converted[1]["reasoning_content"] == "r"
    calls = converted[1]["tool_calls"]
    assert calls[0] == {
        "id": "a1b2c3d4e",
        "type": "function",
        "function": {"name": "f", "arguments": {"x": [1]}},
    }
    assert calls[1]["function"]["arguments"] == "not json"
    assert converted[2] == messages[2]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"x": [1]}'  # untouched
    assert hugging_face_messages(messages, empty_content=True)[1]["content"] == ""


CLOCK = "{{ bos_token }}{{ strftime_now('%d %b %Y') }}{% if add_generation_prompt %}>{% endif %}"


def test_the_clock_a_template_reads_is_the_date_given() -> None:
    reference = Reference(CLOCK, bos_token="<s>", today=datetime.date(2001, 2, 3))
    rendered = reference.render([{"role": "user", "content": "x"}], add_generation_prompt=True)
    assert (rendered.text, rendered.read_clock) == ("<s>03 Feb 2001>", True)
    plain = Reference("{{ messages[0].content }}").render(
        [{"role": "user", "content": "x"}], add_generation_prompt=False
    )
    assert plain.text == "x" and not plain.read_clock
    # Outside the comparison, transformers' own renders still read the real clock.
    from transformers.utils.chat_template_utils import render_jinja_template

    outside, _ = render_jinja_template([[{"role": "user", "content": "x"}]], chat_template=CLOCK)
    assert outside[0] != "03 Feb 2001" and outside[0].endswith(str(datetime.date.today().year))


def test_a_template_that_raises_refuses_with_its_message() -> None:
    refusing = Reference(
        "{% if messages[0].role != 'system' %}{{ raise_exception('System first!') }}{% endif %}ok"
    )
    rendered = refusing.render([{"role": "user", "content": "x"}], add_generation_prompt=False)
    assert (rendered.text, rendered.refusal) == (None, "System first!")
    assert (
        refusing.render([{"role": "system", "content": "x"}], add_generation_prompt=False).text
        == "ok"
    )
    failing = Reference("{{ messages[0].content.startswith('a') }}")  # no content: Undefined
    rendered = failing.render([{"role": "assistant", "content": None}], add_generation_prompt=False)
    assert (
        rendered.text is None
        and rendered.refusal
        and rendered.refusal.startswith("UndefinedError: ")
    )


def test_first_difference() -> None:
    assert first_difference("abc", "abc") == -1
    assert first_difference("abc", "abd") == 2
    assert first_difference("ab", "abc") == 2
    assert first_difference("", "x") == 0


# ------------------------------------------------------------------ the declared formats


def test_chatml_renders_as_qwen3s_template() -> None:
    report = compare_renders(CHATML, qwen3(), qwen3_conversations(40))
    assert report.agrees, report.describe()
    assert report.compared > 40 and report.identical == report.compared
    kinds = {kind for conversation in qwen3_conversations(40) for kind in conversation.kinds}
    assert {
        "parallel-calls",
        "reasoning-before-last-query",
        "ends-tool",
        "foreign-markers",
    } <= kinds


def test_qwen3s_edge_whitespace_is_trimmed_as_its_template_trims_it() -> None:
    """Qwen3's template strips newlines around reasoning; chatml declares it
    (``Reasoning.trim``), so texts with edge whitespace render as the template does."""
    conversations = qwen3_conversations(40, texts=("plain", "edge-whitespace"))
    assert any("edge-whitespace" in c.kinds for c in conversations)
    report = compare_renders(CHATML, qwen3(), conversations)
    assert report.agrees, report.describe()


def test_llama3_renders_as_meta_templates_results_quoted_too() -> None:
    conversations = llama3_conversations(40)
    with_results = [c for c in conversations if any(m["role"] == "tool" for m in c.messages)]
    report = compare_renders(LLAMA3, llama31(), conversations)
    assert with_results and report.agrees, report.describe()


def test_llama32_reads_the_clock_the_comparison_gives() -> None:
    reference = corpus_reference(
        "meta-llama-Llama-3.2-3B-Instruct", today=datetime.date(2025, 1, 1)
    )
    dated = LLAMA3.with_options(date_string="01 Jan 2025")
    report = compare_renders(dated, reference, llama3_conversations(10, tools=False))
    assert report.agrees and report.read_clock, report.describe()


def test_what_the_template_refuses_and_the_format_too_is_counted_apart() -> None:
    calls = llama3_conversations(20, parallel_calls=True)
    report = compare_renders(LLAMA3, llama31(), calls)
    parallel = [r for r in report.reference_refused if "parallel-calls" in r.conversation.kinds]
    assert parallel and all(r.pawlette is not None and "one call" in r.pawlette for r in parallel)
    assert all("single tool-calls" in (r.reference or "") for r in parallel)
    assert report.both_refused == len(report.reference_refused) and report.agrees


# ------------------------------------------------------------------ a wrong format is caught


@dataclasses.dataclass(frozen=True)
class Inserting:
    """A format that renders as ``fmt`` with ``extra`` written after the first ``after``."""

    fmt: pawlette.Format
    after: str
    extra: str
    name: str = "inserting"

    def render(
        self, messages: object, tools: object = None, *, add_generation_prompt: bool = False
    ) -> Rendering:
        rendering = self.fmt.render(messages, tools, add_generation_prompt=add_generation_prompt)
        text = rendering.text.replace(self.after, self.after + self.extra, 1)
        return dataclasses.replace(rendering, text=text)


def test_a_wrong_render_is_reported_at_its_first_differing_offset() -> None:
    conversations = qwen3_conversations(12, tools=False)
    wrong = Inserting(CHATML, "<|im_end|>", "!")
    report = compare_renders(wrong, qwen3(), conversations)  # type: ignore[arg-type]
    assert not report.agrees and report.identical == 0 and len(report.differing) == report.compared
    for difference in report.differing:
        position = difference.expected.index("<|im_end|>") + len("<|im_end|>")
        assert difference.offset == position
        start = max(0, position - 40)
        assert difference.found_window == difference.found[start : position + 40]
        assert difference.found_window.startswith(difference.expected[start:position] + "!")
        assert difference.expected_window == difference.expected[start : position + 40]
    described = report.describe(limit=1)
    assert f"first difference at offset {report.differing[0].offset}" in described
    assert report.differing[0].conversation.label in described
    assert "--- template render ---" in described and "--- format render ---" in described


def test_a_wrong_declaration_is_caught_where_it_first_writes() -> None:
    """A default system prompt (a declared option of chatml: Qwen2.5's) against Qwen3's
    template: a conversation without a system message differs right after the first
    ``<|im_start|>``; one with a system message does not (without tools, and ending on a user
    message, where Qwen3 writes no empty think block)."""
    qwen25 = CHATML.with_options(default_system="You are Qwen.")
    conversations = qwen3_conversations(
        20, tools=False, system_positions=("none", "first"), endings=("user",)
    )
    report = compare_renders(qwen25, qwen3(), conversations)
    for difference in report.differing:
        assert difference.conversation.messages[0]["role"] != "system"
        assert difference.offset == len("<|im_start|>")
    without_system = [c for c in conversations if c.messages[0]["role"] != "system"]
    assert len({d.conversation.label for d in report.differing}) == len(without_system) > 0


# ------------------------------------------------------------------ own turns


def test_qwen3s_own_turns_parse_back_with_chatml() -> None:
    report = own_turns(CHATML, qwen3(), qwen3_conversations(30))
    assert report.agrees, report.describe()
    assert report.total > 30


def test_llama3s_own_turns_parse_back_once_trimmed() -> None:
    conversations = llama3_conversations(30, texts=("plain", "edge-whitespace", "non-ascii"))
    assert own_turns(LLAMA3, llama31(), conversations).count("differs") > 0
    report = own_turns(LLAMA3, llama31(), conversations, normalise=strip_text)
    assert report.agrees, report.describe()


def test_a_turn_is_the_text_between_the_prompt_and_the_turn_render() -> None:
    template = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    turns: list[str] = []

    @dataclasses.dataclass(frozen=True)
    class Recording:
        name: str = "recording"

        def parse(self, text: str, **_: Any) -> Any:
            turns.append(text)
            return CHATML.parse(text.removesuffix("</assistant>") + "<|im_end|>")

    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    report = own_turns(Recording(), Reference(template), [{"messages": messages}])  # type: ignore[arg-type]
    assert turns == ["b</assistant>"] and report.agrees


def test_a_prompt_that_does_not_begin_the_turn_is_reported() -> None:
    # The generation prompt opens a think block the rendered turn does not have.
    template = (
        "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}[assistant]<think>{% endif %}"
    )
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    report = own_turns(CHATML, Reference(template), [{"messages": messages}])
    (problem,) = report.problems
    assert problem.problem == "not a prefix" and problem.offset == len("[user]a[assistant]")
    assert "not a prefix at offset 18" in problem.describe() and not report.agrees


def test_a_turn_parsed_wrong_is_reported_with_the_field() -> None:
    @dataclasses.dataclass(frozen=True)
    class Forgetful:
        """chatml, but its parse loses the reasoning."""

        name: str = "forgetful"

        def parse(self, text: str, **options: Any) -> Any:
            completion = CHATML.parse(text, **options)
            message = {k: v for k, v in completion.message.items() if k != "reasoning_content"}
            return dataclasses.replace(completion, message=message)

    conversations = [c for c in qwen3_conversations(30) if "reasoning-after-last-query" in c.kinds]
    report = own_turns(Forgetful(), qwen3(), conversations)  # type: ignore[arg-type]
    assert report.count("differs") > 0
    assert {p.field for p in report.problems} == {"reasoning_content"}
    assert "reasoning_content" in report.problems[0].describe()


def test_call_ids_are_compared_where_the_turn_writes_them() -> None:
    call = {
        "id": "AbC123xyZ",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a": 1}'},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    parsed = {
        **message,
        "tool_calls": [{**call, "id": "call_0", "function": {"name": "f", "arguments": '{"a":1}'}}],
    }
    assert canonical_message(message) == canonical_message(parsed)
    assert canonical_message(message, ids=True) != canonical_message(parsed, ids=True)
    assert canonical_message({"role": "assistant", "content": ""}) == canonical_message(
        {"role": "assistant", "content": None}
    )
