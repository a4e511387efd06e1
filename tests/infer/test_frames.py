"""The turn frames inferred from real templates of llama.cpp's corpus."""

from __future__ import annotations

from pathlib import Path

from pawlette import Format
from pawlette.declare import ConversationEnd, Marker, PromptAlways
from pawlette.infer import Inference, infer_template
from pawlette.infer.conversations import Features, generate

from ..support.template_corpus import corpus_template


def test_an_answer_cannot_hold_the_plain_text_that_ends_its_turn() -> None:
    """RWKV World ends every turn with a blank line and no special token: an answer holding a
    blank line is cut there when read, so the inferred format says so and its answers are
    verified without one (user text with a blank line is still verified)."""
    template = corpus_template("llama-cpp-rwkv-world")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    verification = inference.verification
    assert verification is not None
    assert verification.parsed_back == verification.turns > 0
    layout = inference.layout
    assert layout is not None
    assert any("'\\n\\n'" in note and "cannot be read back" in note for note in layout.notes)
    # Read back, an answer with a blank line stops at it: the reason for the rule above.
    fmt = inference.format
    assert fmt is not None
    parsed = fmt.parse(" # Title\n\n**bold**\n\n").message
    assert parsed.get("content") != "# Title\n\n**bold**"


def test_generated_answers_avoid_what_ends_their_turn() -> None:
    features = Features(tools=False, reasoning=False, answer_avoid=("\n\n",))
    samples = generate(40, seed=2, features=features)
    answers = [m["content"] for s in samples for m in s.messages if m["role"] == "assistant"]
    others = [m["content"] for s in samples for m in s.messages if m["role"] != "assistant"]
    assert answers and not any("\n\n" in text for text in answers)
    assert any("\n\n" in text for text in others)


def test_system_text_with_no_fence_of_its_own_is_not_derived() -> None:
    """Apriel 1.6 writes a system message's text inside its default system block, with only
    a newline before it: nothing tells it from the text around it, so system messages are
    refused (said why), and a turn without reasoning opens as a turn with it does, so
    reasoning is too; the rest is verified."""
    template = corpus_template("Apriel-1.6-15b-Thinker-fixed")
    inference = infer_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token
    )
    assert inference.accepted, inference.describe()
    verification = inference.verification
    assert verification is not None
    assert verification.identical == verification.compared
    assert verification.parsed_back == verification.turns > 0
    statuses = {item.name: item.status for item in inference.capabilities}
    assert statuses["system messages"] == "not derived"
    assert statuses["reasoning"] == "not derived"
    fmt = inference.format
    assert fmt is not None
    request = {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Bye"},
        ]
    }
    text = fmt.render(request).text
    assert "Hello.\n<|end|>\n<|begin_user|>\nBye" in text
    assert fmt.parse_conversation(text).messages == request["messages"]


SMOLLM2 = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
"""SmolLM2-Instruct's template; its tokenizer's bos_token is ``<|im_start|>``, which the
template never names (every turn opens with that text)."""


def test_a_bos_token_the_template_never_names_is_not_its_begin() -> None:
    with_bos = infer_template(SMOLLM2, bos_token="<|im_start|>", eos_token="<|im_end|>")
    without = infer_template(SMOLLM2, eos_token="<|im_end|>")
    assert with_bos.accepted and without.accepted, with_bos.describe()
    assert [(c.name, c.status) for c in with_bos.capabilities] == [
        (c.name, c.status) for c in without.capabilities
    ]
    assert ("system messages", "derived") in [(c.name, c.status) for c in with_bos.capabilities]


def _verified(template: str) -> tuple[Inference, Format]:
    """The inference of ``template`` (bos and eos ``<|endoftext|>``), accepted on every
    render and own turn, with its format."""
    inference = infer_template(template, bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    assert inference.accepted and inference.format is not None, inference.describe()
    verification = inference.verification
    assert verification is not None
    assert verification.identical == verification.compared > 0
    assert verification.parsed_back == verification.turns > 0
    return inference, inference.format


PHI_4_MINI = (
    "{% for message in messages %}{% if message['role'] == 'system' and 'tools' in message and "
    "message['tools'] is not none %}{{ '<|' + message['role'] + '|>' + message['content'] + "
    "'<|tool|>' + message['tools'] + '<|/tool|>' + '<|end|>' }}{% else %}{{ '<|' + "
    "message['role'] + '|>' + message['content'] + '<|end|>' }}{% endif %}{% endfor %}{% if "
    "add_generation_prompt %}{{ '<|assistant|>' }}{% else %}{{ eos_token }}{% endif %}"
)
"""Phi-4-mini-instruct's template (its tokenizer_config.json on Hugging Face; bos and eos
``<|endoftext|>``): ``eos_token`` ends a conversation rendered without a generation prompt."""


def test_the_end_of_a_conversation_without_a_generation_prompt_is_derived() -> None:
    inference, fmt = _verified(PHI_4_MINI)
    layout = inference.layout
    assert layout is not None
    assert ConversationEnd(Marker("<|endoftext|>")) in layout.concepts
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]
    text = fmt.render(messages).text
    assert text == "<|user|>Hi<|end|><|assistant|>Hello.<|end|><|endoftext|>"
    assert fmt.render(messages, add_generation_prompt=True).text.endswith("<|end|><|assistant|>")
    assert fmt.parse_conversation(text).messages == messages
    # The saved declaration holds it too.
    namespace: dict[str, object] = {}
    exec(compile(inference.source(), "phi4.py", "exec"), namespace)
    assert namespace["LAYOUT"] == layout


OLMO_2 = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'system' %}{{ "
    "'<|system|>\\n' + message['content'] + '\\n' }}{% elif message['role'] == 'user' %}{{ "
    "'<|user|>\\n' + message['content'] + '\\n' }}{% elif message['role'] == 'assistant' %}"
    "{% if not loop.last %}{{ '<|assistant|>\\n'  + message['content'] + eos_token + '\\n' }}"
    "{% else %}{{ '<|assistant|>\\n'  + message['content'] + eos_token }}{% endif %}{% endif %}"
    "{% if loop.last and add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
    "{% endfor %}"
)
"""OLMo 2 Instruct's template (allenai/OLMo-2-1124-7B-SFT's tokenizer_config.json; bos and eos
``<|endoftext|>``), Tülu 3's without the ``bos_token``: an assistant turn ends with
``eos_token`` and, unless it is the last message, a newline."""


def test_a_newline_written_only_between_turns_opens_the_next_turn() -> None:
    _, fmt = _verified(OLMO_2)
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Bye."},
    ]
    text = fmt.render(messages).text
    assert text == (
        "<|endoftext|><|user|>\nHi\n<|assistant|>\nHello.<|endoftext|>\n<|user|>\nBye\n"
        "<|assistant|>\nBye.<|endoftext|>"
    )
    assert fmt.parse_conversation(text).messages == messages
    assert fmt.parse("Sure.<|endoftext|>").message == {"role": "assistant", "content": "Sure."}


TEMPLATES = Path(__file__).parent.parent / "fixtures" / "templates"


def test_a_generation_prompt_written_after_every_render_is_derived() -> None:
    """Phi-4-mini's tool template (vLLM's examples) ends every render with ``<|assistant|>``,
    asked for or not: the turns derive once that is taken for :class:`PromptAlways`."""
    template = (TEMPLATES / "phi4_mini_tool.jinja").read_text(encoding="utf-8")
    inference = infer_template(template, bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    assert inference.accepted, inference.describe()
    layout = inference.layout
    assert layout is not None
    assert PromptAlways() in layout.concepts
    fmt = inference.format
    assert fmt is not None
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]
    text = fmt.render(messages).text
    assert text.endswith("<|user|>Hi<|end|><|assistant|>Hello.<|end|><|assistant|>")
    assert fmt.render(messages, add_generation_prompt=True).text == text
    assert fmt.parse_conversation(text).messages == messages
    namespace: dict[str, object] = {}
    exec(compile(inference.source(), "phi4_mini_tool.py", "exec"), namespace)
    assert namespace["LAYOUT"] == layout


def test_a_template_that_honours_add_generation_prompt_gets_no_prompt_always() -> None:
    inference, _ = _verified(PHI_4_MINI)
    assert inference.layout is not None
    assert PromptAlways() not in inference.layout.concepts


def test_a_template_that_keeps_only_the_last_system_message_is_derived() -> None:
    """DeepSeek R1's distills and RWKV World write only the last system message, where the
    first goes: inferred as a gathered LastSystemPrompt (RWKV's also writes an empty last one
    as none), verified, the earlier ones recorded losses."""
    from pawlette.declare import LastSystemPrompt

    empty_first = {
        "deepseek-ai-DeepSeek-R1-Distill-Llama-8B": "kept",
        "llama-cpp-rwkv-world": "absent",
    }
    for name, expected in empty_first.items():
        template = corpus_template(name)
        inference = infer_template(
            template.text, bos_token=template.bos_token, eos_token=template.eos_token
        )
        assert inference.accepted, inference.describe()
        statuses = {item.name: item.status for item in inference.capabilities}
        assert statuses["later system messages"] == "dropped", name
        assert inference.layout is not None
        found = [c for c in inference.layout.concepts if isinstance(c, LastSystemPrompt)]
        assert [(c.placement, c.empty_first) for c in found] == [("gathered", expected)], name
        fmt = inference.format
        assert fmt is not None
        messages = [
            {"role": "system", "content": "One."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "system", "content": "Two."},
            {"role": "user", "content": "Bye"},
        ]
        rendering = fmt.render(messages)
        assert "One." not in rendering.text and "Two." in rendering.text, name
        assert rendering.losses[0].startswith("messages[0]: "), name


# DeepSeek-V2-Chat's template (as llama.cpp's tests/test-chat-template.cpp holds it): a system
# message's text written bare right after the BOS token, a blank line after it.
DEEPSEEK_V2 = (
    "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}"
    "{% endif %}{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ 'User: ' + message['content'] + '\\n\\n' }}{% elif message['role'] == 'assistant' %}"
    "{{ 'Assistant: ' + message['content'] + eos_token }}{% elif message['role'] == 'system' %}"
    "{{ message['content'] + '\\n\\n' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)


def test_bare_system_text_after_the_start_is_a_system_turn() -> None:
    """The start without a system message (the BOS token) is where a system message's text
    begins: bare system text, closed by its blank line, not text added to a default turn."""
    bos, eos = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
    inference = infer_template(DEEPSEEK_V2, bos_token=bos, eos_token=eos)
    assert inference.accepted, inference.describe()
    status = {item.name: item.status for item in inference.capabilities}
    assert status["system messages"] == "derived"
    fmt = inference.format
    assert fmt is not None
    request = {
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    }
    text = fmt.render(request, add_generation_prompt=True).text
    assert text == f"{bos}Be brief.\n\nUser: Hi\n\nAssistant:"
    assert fmt.parse_conversation(text).messages[0] == {"role": "system", "content": "Be brief."}
