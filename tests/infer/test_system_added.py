"""System text added to a template's default system turn, and consecutive user messages
joined into one turn, inferred from variants of real templates of llama.cpp's corpus (a
fine-tuner's changed default text and marker spellings): each is derived, verified (every
render identical, every own turn parsed back) and read back."""

from __future__ import annotations

from pawlette import Format
from pawlette.declare import FirstSystemText, Names, SystemInTurn, SystemPrompt
from pawlette.declare.pieces import text_of
from pawlette.infer import Inference, infer_template

from ..support.template_corpus import corpus_template


def _variant(name: str, *changes: tuple[str, str]) -> str:
    """The corpus template ``name`` with each ``(old, new)`` replaced (each must be there)."""
    text = corpus_template(name).text
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
    return text


def _verified(text: str, **tokens: str) -> tuple[Inference, Format]:
    inference = infer_template(text, **tokens)
    assert inference.accepted and inference.format is not None, inference.describe()
    verification = inference.verification
    assert verification is not None
    assert verification.identical == verification.compared > 0
    assert verification.parsed_back == verification.turns > 0
    return inference, inference.format


def _status(inference: Inference, name: str) -> str:
    return next(item.status for item in inference.capabilities if item.name == name)


def system_detail(inference: Inference) -> str:
    return next(item.detail for item in inference.capabilities if item.name == "system messages")


def _round_trip(fmt: Format, messages: list[dict[str, str]]) -> str:
    text = fmt.render({"messages": messages}).text
    assert fmt.parse_conversation(text).messages == messages
    return text


def test_system_text_after_the_default_text_is_derived() -> None:
    """Spark2.5's shape with another default text and system marker: the default text opens
    the first system turn, a system message's text follows it after a blank line, and later
    system messages are turns of their own."""
    text = _variant(
        "Spark2.5",
        ("you are a helpful assistant.", "You are Nimbus, a careful helper."),
        ("<|System|>", "<|Sys|>"),
    )
    inference, fmt = _verified(text)
    assert _status(inference, "system messages") == "derived"
    assert system_detail(inference).startswith("placement in_place, after the default text")
    layout = inference.layout
    assert layout is not None
    system = layout.concept(SystemPrompt)
    assert system is not None and system.always and system.default is None
    assert "You are Nimbus, a careful helper." in text_of(system.preamble)
    first = layout.concept(FirstSystemText)
    assert first is not None and text_of(first.lead) == "\n\n"
    written = _round_trip(
        fmt,
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "system", "content": "Now French."},
            {"role": "user", "content": "Bye"},
        ],
    )
    assert "<|Sys|>\nYou are Nimbus, a careful helper.\n\nBe brief.<" in written
    assert "<|Sys|>\nNow French.<" in written
    alone = _round_trip(fmt, [{"role": "user", "content": "Hi"}])
    assert "<|Sys|>\nYou are Nimbus, a careful helper.<" in alone


def test_system_text_after_the_default_text_and_a_heading_is_gathered() -> None:
    """Solar Open's shape with another heading: the system messages are gathered after the
    default text and the heading, written only when there are any."""
    text = _variant("upstage-Solar-Open-100B", ("## System Prompt", "## Operator Rules"))
    inference = infer_template(text)
    assert _status(inference, "system messages") == "derived", inference.describe()
    layout = inference.layout
    assert layout is not None
    system = layout.concept(SystemPrompt)
    assert system is not None and system.placement == "gathered"
    assert text_of(system.heading) == "\n\n## Operator Rules\n\n"


def test_system_text_before_the_default_text_is_derived() -> None:
    """Ling 3.0's shape with another default line: a system message's text comes first in
    the turn, then a newline and the default line; without a message the line is the
    turn's text."""
    text = _variant("inclusionai-ling-3.0-flash", ("'detailed thinking '", "'deep reasoning '"))
    inference, fmt = _verified(text)
    assert _status(inference, "system messages") == "derived"
    layout = inference.layout
    assert layout is not None
    system = layout.concept(SystemPrompt)
    first = layout.concept(FirstSystemText)
    assert system is not None and system.default == "deep reasoning on"
    assert first is not None and text_of(first.trail) == "\ndeep reasoning on"
    written = _round_trip(
        fmt, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    )
    assert "<role>SYSTEM</role>Be brief.\ndeep reasoning on<|role_end|>" in written
    empty = _round_trip(fmt, [{"role": "system", "content": ""}, {"role": "user", "content": "Hi"}])
    assert "<role>SYSTEM</role>\ndeep reasoning on<|role_end|>" in empty
    alone = _round_trip(fmt, [{"role": "user", "content": "Hi"}])
    assert alone.startswith("<role>SYSTEM</role>deep reasoning on<|role_end|>")


def test_consecutive_user_messages_joined_into_one_turn_are_derived() -> None:
    """DeepSeek V4's shape with another joint and user marker: two user messages in a row
    share one turn, their texts joined; the joint is the user's opener after a user turn."""
    text = _variant("deepseek-ai-DeepSeek-V4", ("'\\n\\n' -}}", "'\\n---\\n' -}}"))
    text = text.replace("<｜User｜>", "<｜Human｜>")
    template = corpus_template("deepseek-ai-DeepSeek-V4")
    inference, fmt = _verified(
        text, bos_token=template.bos_token or "", eos_token=template.eos_token or ""
    )
    assert _status(inference, "consecutive user messages") == "derived"
    layout = inference.layout
    assert layout is not None
    assert text_of(layout.frames["user"].open_after["user"]) == "\n---\n"
    written = fmt.render(
        {"messages": [{"role": "user", "content": "One"}, {"role": "user", "content": "Two"}]}
    ).text
    assert written.endswith("<｜Human｜>One\n---\nTwo")


def test_a_default_system_turn_with_a_newline_after_it_alone_is_derived() -> None:
    """Kimi K2 Instruct's shape with another default text and separator token: the default
    system turn (no system message) is followed by a newline, a system message's turn is
    not."""
    text = _variant(
        "Kimi-K2-Instruct",
        ("You are Kimi, an AI assistant created by Moonshot AI.", "You are Orca, a tuned helper."),
        ("<|im_middle|>", "<|im_sep|>"),
    )
    inference, fmt = _verified(text, bos_token="[BOS]", eos_token="[EOS]")
    assert system_detail(inference).endswith("; '\\n' after the default turn alone")
    layout = inference.layout
    assert layout is not None
    system = layout.concept(SystemPrompt)
    assert system is not None and system.default == "You are Orca, a tuned helper."
    alone = _round_trip(fmt, [{"role": "user", "content": "Hi"}])
    assert alone.startswith(
        "<|im_system|>system<|im_sep|>You are Orca, a tuned helper.<|im_end|>\n<|im_user|>"
    )
    given = _round_trip(
        fmt, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    )
    assert "Be brief.<|im_end|><|im_user|>" in given


LAGUNA_DEFAULT = (
    "You are a helpful, conversationally-fluent assistant made by Poolside. You are here to be "
    "helpful to users through natural language conversations."
)


def test_a_start_written_before_the_first_system_turn_is_the_begin_fence() -> None:
    """Poolside Laguna S 2.1's shape with another start token and default text: the token
    before the first system turn is written at every conversation's start, so later system
    messages are turns of their own."""
    text = _variant(
        "poolside-Laguna-S-2.1",
        ("〈|EOS|〉", "〈|START|〉"),
        (LAGUNA_DEFAULT, "You are Reef, a tuned assistant."),
    )
    inference, fmt = _verified(text)
    assert system_detail(inference) == "placement in_place"
    written = _round_trip(
        fmt,
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "system", "content": "Now French."},
            {"role": "user", "content": "Bye"},
        ],
    )
    assert written.startswith("〈|START|〉<system>Be brief.</system>")
    assert written.count("〈|START|〉") == 1 and "\n<system>Now French.</system>" in written


def test_an_empty_first_system_message_in_place_of_the_default_is_no_turn() -> None:
    """Poolside Laguna XS.2's shape with another default text: an empty first system message
    stands in for the default text, and the template writes no system turn at all."""
    text = _variant("poolside-Laguna-XS.2", (LAGUNA_DEFAULT, "You are Reef, a tuned assistant."))
    inference, fmt = _verified(text)
    assert _status(inference, "empty system text") == "dropped"
    layout = inference.layout
    assert layout is not None
    system = layout.concept(SystemPrompt)
    assert system is not None and system.empty_first == "none"
    written = fmt.render(
        {"messages": [{"role": "system", "content": ""}, {"role": "user", "content": "Hi"}]}
    ).text
    assert "<system>" not in written and "Reef" not in written


def test_a_newline_before_an_assistant_text_written_only_with_text_is_its_lead() -> None:
    """GLM-4.6's shape with another assistant marker: the newline before an assistant's text
    is written only when the text is not empty, so an empty answer ends at the reasoning
    stand-in."""
    template = corpus_template("GLM-4.6")
    text = _variant("GLM-4.6", ("<|assistant|>", "<|bot|>"))
    inference, fmt = _verified(text, eos_token=template.eos_token or "")
    assert _status(inference, "empty assistant text") == "derived"
    turns = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "Still there?"},
    ]
    assert "<|bot|>\n<think></think><|user|>" in fmt.render({"messages": turns}).text
    turns[1]["content"] = "Yes."
    assert "<|bot|>\n<think></think>\nYes.<|user|>" in _round_trip(fmt, turns)


def test_a_name_written_in_place_of_the_role_word_is_derived() -> None:
    """Kimi K2 Instruct's shape with another separator token: a message's name is written
    where the opener writes the role word."""
    text = _variant("Kimi-K2-Instruct", ("<|im_middle|>", "<|im_sep|>"))
    inference, fmt = _verified(text, bos_token="[BOS]", eos_token="[EOS]")
    assert _status(inference, "names") == "derived"
    layout = inference.layout
    assert layout is not None
    assert Names(at=1, replaces=1) in layout.concepts
    messages = [
        {"role": "user", "content": "Hi", "name": "alice"},
        {"role": "assistant", "content": "Hello.", "name": "bot"},
    ]
    written = fmt.render({"messages": messages}).text
    assert "<|im_user|>alice<|im_sep|>Hi<|im_end|><|im_assistant|>bot<|im_sep|>Hello." in written


def test_a_name_written_as_an_attribute_of_the_opener_is_derived() -> None:
    """Kimi K3's shape with another attribute and separator token: a message's name is an
    attribute added to its turn's tag."""
    text = _variant(
        "Kimi-K3", ("('name', message.name)", "('speaker', message.name)"), ("<|sep|>", "<|div|>")
    )
    inference, fmt = _verified(text)
    assert _status(inference, "names") == "derived"
    layout = inference.layout
    assert layout is not None
    names = layout.concept(Names)
    assert names is not None and text_of(names.lead) == ' speaker="'
    messages = [{"role": "user", "content": "Hi", "name": "alice"}]
    written = fmt.render({"messages": messages}).text
    assert '<|open|>message role="user" speaker="alice"<|div|>Hi' in written


def test_a_leading_system_text_that_opens_the_last_user_turn_is_derived() -> None:
    """Mistral Nemo's shape with another joint and user marker: a leading system message has
    no turn of its own; its text, then the joint, opens the last user message's text."""
    text = _variant(
        "mistralai-Mistral-Nemo-Instruct-2407",
        ('system_message + "\\n\\n" + message', 'system_message + "\\n---\\n" + message'),
        ("[INST]", "[USR]"),
    )
    inference, fmt = _verified(text, bos_token="<s>", eos_token="</s>")
    assert _status(inference, "system messages") == "derived"
    layout = inference.layout
    assert layout is not None
    assert SystemInTurn(host="last_user", joiner="\n---\n") in layout.concepts
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Bye"},
    ]
    written = fmt.render({"messages": messages}).text
    assert written.endswith("[USR]Hi[/INST]Hello.</s>[USR]Be brief.\n---\nBye[/INST]")


def test_a_developer_heading_after_the_default_preamble_is_derived() -> None:
    """Command R7B's shape with another heading, name and system token: a system message's
    text follows the default preamble after the heading; an empty one is an empty system
    turn of its own after the turn the template writes without a message."""
    text = _variant(
        "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
        ("# Developer Preamble", "# Operator Notes"),
        ("Your name is Command.", "Your name is Tern."),
        ("<|SYSTEM_TOKEN|>", "<|SYS_TOKEN|>"),
    )
    inference, fmt = _verified(text, bos_token="<BOS_TOKEN>", eos_token="<|END_OF_TURN_TOKEN|>")
    assert _status(inference, "system messages") == "derived"
    assert _status(inference, "empty system text") == "derived"
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    written = fmt.render({"messages": messages}).text
    assert "- Your name is Tern." in written and "\n\n# Operator Notes\n" in written
    assert "instructions.\nBe brief.<|END_OF_TURN_TOKEN|>" in written
    messages[0]["content"] = ""
    empty = fmt.render({"messages": messages}).text
    assert "<|START_OF_TURN_TOKEN|><|SYS_TOKEN|><|END_OF_TURN_TOKEN|>" in empty
    assert "# Operator Notes" not in empty


def test_a_later_system_message_that_changes_the_start_is_said_so() -> None:
    """unsloth-Apriel-1.5 writes its default system turn only when no system message is
    anywhere in the conversation: a later system message takes it away from the start, and
    the answer says what each writes there (before, only that the start changes or the
    message is moved)."""
    template = corpus_template("unsloth-Apriel-1.5")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    (later,) = [item for item in inference.capabilities if item.name == "later system messages"]
    assert later.status == "not derived"
    assert later.detail.startswith(
        "a system message after the first user message, with none before it, changes the start "
        "of the conversation: after '<s>' the template writes nothing where a conversation "
        "without it writes '<|system|>\\nYou are a thoughtful"
    ), later.detail
    assert later.detail.endswith("(needs concept: a start that depends on a later system message)")
