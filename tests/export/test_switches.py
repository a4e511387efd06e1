"""The exported chat template reads the variables that switch a format's options
(``Layout.switches``: Qwen3's ``enable_thinking``, DeepSeek V3.1's ``thinking``, Hy3's
``reasoning_effort``...), as the real templates do.

For every format and variant with a switch, on the conversations the export tests use: the
template rendered with each value of the variable (and without it) under transformers is
byte for byte, masks included, what pawlette renders with the option set to that value (its
own value when the variable is not passed).  Where the real template is in the corpus, it
renders with the same variable what the exported template renders, on every conversation
where pawlette's render of that option set is the real template's.
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.exceptions import TemplateError

import pawlette
from pawlette.declare import Switch, layout_of
from pawlette.declare.jinja import chat_template as frozen_template
from pawlette.errors import RequestError
from pawlette.export import export_jinja
from pawlette.export.jinja import template_inputs
from pawlette.format import Format

from ..declare.conversations import conversations
from ..declare.test_cross_artifacts import template_request
from ..formats import families
from ..formats.families import FamilyCase
from ..support.conversations import generate_conversations
from ..support.template_compare import Reference, corpus_reference
from .support import merged, trainable_spans

NAMES = sorted(
    name
    for family in pawlette.formats()
    if (layout := layout_of(pawlette.get_format(family))) is not None
    for name in [family, *(f"{family}:{variant}" for variant in layout.variants)]
    if (found := layout_of(pawlette.get_format(name))) is not None and found.switches
)
UNSET = object()


def switches(name: str | Format) -> tuple[Switch, ...]:
    fmt = pawlette.get_format(name) if isinstance(name, str) else name
    layout = layout_of(fmt)
    assert layout is not None
    return layout.switches


def settings_of(name: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Every combination of the switches' values, unset included: (template variables,
    option changes)."""
    found = switches(name)
    for values in itertools.product(*[[UNSET, *switch.values] for switch in found]):
        variables = {}
        changes = {}
        for switch, value in zip(found, values, strict=True):
            if value is not UNSET:
                variables[switch.variable] = value
                changes[switch.option] = value
        yield variables, changes


def test_the_thinking_families_read_their_variables() -> None:
    read = {name: {switch.variable for switch in switches(name)} for name in NAMES}
    assert read["chatml"] == {"enable_thinking"}
    assert read["deepseek"] == {"thinking"}
    assert read["glm:4.7"] == {"enable_thinking", "clear_thinking"}
    assert read["hy3"] == {"reasoning_effort"}
    assert "chatml:qwen2.5" not in read  # Qwen2.5's template has no switch
    assert "kimi" not in read  # nor Kimi K2's


def test_no_switched_format_needs_parsed_results() -> None:
    """(So the drawn requests need no rewriting the draws above do not do.)"""
    assert not any(template_inputs(name).parsed_tool_results for name in NAMES)


def test_a_switch_is_read_once_and_its_default_is_the_options() -> None:
    template = export_jinja("glm:4.7-no-thinking")
    assert template.startswith(
        "{%- set option_thinking = enable_thinking if enable_thinking is defined else false -%}"
    )
    assert "clear_thinking if clear_thinking is defined else true" in template
    deepseek = export_jinja("deepseek:v3.1-thinking")
    assert deepseek.startswith(
        "{%- set option_thinking = thinking if thinking is defined else (enable_thinking if"
        " enable_thinking is defined else true) -%}"
    )


def test_a_format_without_switches_exports_its_frozen_template() -> None:
    fmt = pawlette.get_format("kimi")
    layout = layout_of(fmt)
    assert layout is not None and not layout.switches
    assert export_jinja(fmt) == frozen_template(layout)


def render(fmt: Format, request: dict[str, Any], prompt: bool, **variables: Any) -> Any:
    """transformers' render of ``fmt``'s exported template: (text, generation spans)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, spans = render_jinja_template(
        [template_request(fmt, request)],
        tools=request.get("tools") or None,
        chat_template=export_jinja(fmt),
        add_generation_prompt=prompt,
        return_assistant_tokens_mask=True,
        **variables,
    )
    return rendered[0], [tuple(span) for span in spans[0]]


def draw(name: str, data: st.DataObject) -> dict[str, Any]:
    """A conversation as the export tests draw it: the registered format's strategy
    (``tests/strategies``), a variant's from its declaration."""
    fmt = pawlette.get_format(name)
    if ":" in name:
        request: dict[str, Any] = data.draw(conversations(fmt))
        return request
    strategy = importlib.import_module(f"tests.strategies.{name}")
    request = data.draw(strategy.conversations())
    return request


@pytest.mark.sampled
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=12)
@given(data=st.data(), prompt=st.booleans())
def test_each_value_renders_what_its_option_renders(
    name: str, data: st.DataObject, prompt: bool
) -> None:
    fmt = pawlette.get_format(name)
    request = draw(name, data)
    for variables, changes in settings_of(name):
        expected_format = fmt.with_options(**changes) if changes else fmt
        try:
            rendering = expected_format.render(request, add_generation_prompt=prompt)
        except RequestError:
            with pytest.raises(TemplateError):
                render(fmt, request, prompt, **variables)
            continue
        text, spans = render(fmt, request, prompt, **variables)
        assert text == rendering.text, (variables, changes)
        assert merged(spans) == trainable_spans(rendering), (variables, changes)


@pytest.mark.parametrize(
    ("name", "switch"),
    [
        (name, switch)
        for name in NAMES
        for switch in switches(name)
        if all(isinstance(value, str) for value in switch.values)
    ],
)
def test_a_string_switch_refuses_a_value_it_does_not_know(name: str, switch: Switch) -> None:
    fmt = pawlette.get_format(name)
    request = {"messages": [{"role": "user", "content": "Hi"}]}
    with pytest.raises(TemplateError, match=f"{switch.variable}: medium-rare; expected one of"):
        render(fmt, request, True, **{switch.variable: "medium-rare"})


# ------------------------------------------------------------------ the real templates


def _family_cases() -> list[FamilyCase]:
    import pkgutil

    found: list[FamilyCase] = []
    for module in pkgutil.iter_modules(families.__path__):
        found += importlib.import_module(f"{families.__name__}.{module.name}").CASES
    # Compared in their family's own tests (tests/formats/test_chatml.py, test_qwen_xml.py):
    # QwQ's own turns cannot be cut out of its renders, and Nemotron's are compared under
    # several option sets there.
    found += [
        FamilyCase(
            "Qwen-QwQ-32B",
            "chatml:qwq",
            # (Its template strips newlines at the start of a past turn, and cuts one at its
            # last </think>: differences its declaration records.)
            switches={"texts": ("plain", "non-ascii", "markdown", "quotes-backslashes")},
            empty_content=True,
        ),
        FamilyCase(
            "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
            "chatml:nemotron-3-nano",
            empty_content=True,
            count=12,
            seed=1,
        ),
    ]
    return [case for case in found if switches(case.format)]


REAL = _family_cases()


def _reference(template: str, name: str, case: FamilyCase, fmt: Format) -> Reference:
    """``template`` as the family's test renders the real one, with the variables of
    ``fmt``'s options."""
    layout = layout_of(fmt)
    assert layout is not None
    real = corpus_reference(case.template)
    today = getattr(fmt.options, layout.today, None) if layout.today else None
    settings: dict[str, Any] = {
        "variables": {**layout.reference_variables(), **case.variables},
        "empty_content": case.empty_content,
        "bos_token": real.bos_token,
        "eos_token": real.eos_token,
        "caller_variables": real.caller_variables,
        "text_arguments": real.text_arguments,
        "caller_messages": real.caller_messages,  # (IFM-K2-Horizon's thinking field)
    }
    if today is not None:
        settings["today"] = today
    return Reference(template, name, **settings)


def test_the_real_templates_cover_the_thinking_families() -> None:
    covered = {case.format.split(":")[0] for case in REAL}
    assert covered >= {"chatml", "deepseek", "deepseek_dsml", "glm", "hy3", "kimi", "laguna"}
    assert {"Qwen-Qwen3-0.6B", "deepseek-ai-DeepSeek-V3.1", "GLM-4.7-Flash"} <= {
        case.template for case in REAL
    }


@pytest.mark.sampled(parameter="case")
@pytest.mark.parametrize("case", REAL, ids=lambda case: case.template)
def test_the_real_template_with_the_same_variable_renders_the_same(case: FamilyCase) -> None:
    """With the variables each option set stands for (``Layout.template_variables``: every
    switch set, as a caller sets it), the real template, the exported one and pawlette's
    render of that option set write the same text (or pawlette and the real template both
    refuse)."""
    family = pawlette.get_format(case.format)
    exported = export_jinja(family)
    real_text = corpus_reference(case.template).template
    generator = {"avoid": family.special_markers, **case.switches}
    found = generate_conversations(case.count, seed=case.seed, **generator)
    compared = 0
    for values in itertools.product(*[switch.values for switch in switches(family)]):
        changes = {s.option: v for s, v in zip(switches(family), values, strict=True)}
        fmt = family.with_options(**changes)
        real = _reference(real_text, case.template, case, fmt)
        ours = _reference(exported, f"exported {case.format}", case, fmt)
        for conversation in found:
            request = conversation.request
            prompts = [False, True] if request["messages"][-1]["role"] != "assistant" else [False]
            for prompt in prompts:
                where = (changes, conversation.label, prompt)
                expected = real.render_request(request, add_generation_prompt=prompt)
                try:
                    text = fmt.render(request, add_generation_prompt=prompt).text
                except RequestError:
                    assert expected.text is None, where
                    continue
                assert expected.text == text, where
                assert ours.render_request(request, add_generation_prompt=prompt).text == text
                compared += 1
    assert compared >= len(found), f"only {compared} renders compared for {case.template}"


# ------------------------------------------------------------------ text options

TEXT_OPTIONS = [
    ("harmony", "reasoning_effort", ("low", "medium", "high")),
    ("muse", "reasoning_strength", ("low", "medium", "high")),
]


@pytest.mark.parametrize(("name", "variable", "values"), TEXT_OPTIONS)
@settings(max_examples=8)
@given(data=st.data(), prompt=st.booleans())
def test_a_text_option_is_read_from_its_variable(
    name: str, variable: str, values: tuple[str, ...], data: st.DataObject, prompt: bool
) -> None:
    """Harmony's ``reasoning_effort`` and Muse's ``reasoning_strength`` are text the
    template writes (an ``Option`` piece), read from the variable of the same name."""
    fmt = pawlette.get_format(name)
    request = draw(name, data)
    assert not switches(name)
    for value in values:
        rendering = fmt.with_options(**{variable: value}).render(
            request, add_generation_prompt=prompt
        )
        text, spans = render(fmt, request, prompt, **{variable: value})
        assert text == rendering.text, value
        assert merged(spans) == trainable_spans(rendering), value


@pytest.mark.parametrize("name", NAMES)
def test_the_frozen_template_reads_no_switch(name: str) -> None:
    """``frozen=True``: the option set's own template, whatever the caller passes."""
    fmt = pawlette.get_format(name)
    layout = layout_of(fmt)
    assert layout is not None
    frozen = export_jinja(fmt, frozen=True)
    assert frozen == frozen_template(layout)
    assert "option_" not in frozen
    from transformers.utils.chat_template_utils import render_jinja_template

    messages = [{"role": "user", "content": "Hi"}]
    expected = fmt.render(messages, add_generation_prompt=True).text
    for variables, _ in settings_of(name):
        rendered, _ = render_jinja_template(
            [messages], chat_template=frozen, add_generation_prompt=True, **variables
        )
        assert rendered[0] == expected, variables


# ------------------------------------------------------------------ llama.cpp's engine


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_float(item) for item in value)
    return False


@pytest.mark.sampled
@pytest.mark.parametrize("name", NAMES)
def test_each_value_renders_its_option_sets_template_under_llama_cpp(name: str) -> None:
    """Under llama.cpp's own Jinja engine (text only, see ``test_jinja_llama_cpp``), the
    switched template given each value (and none) renders what the frozen template of that
    option set renders, a refusal where it refuses, on generated conversations (floats set
    aside: they print the engine's way there)."""
    from ..support.llama_cpp_jinja import render_with_llama_cpp

    fmt = pawlette.get_format(name)
    found = [
        conversation.request
        for conversation in generate_conversations(8, seed=5, avoid=fmt.special_markers)
    ]
    switched: list[dict[str, Any]] = []
    compared = 0
    for variables, changes in settings_of(name):
        option_set = fmt.with_options(**changes) if changes else fmt
        frozen: list[dict[str, Any]] = []
        for request in found:
            inputs: dict[str, Any] = {
                "messages": template_request(fmt, request),
                "add_generation_prompt": True,
            }
            if request.get("tools"):
                inputs["tools"] = request["tools"]
            if not _has_float(inputs):
                frozen.append(inputs)
                switched.append({**inputs, **variables})
        expected = render_with_llama_cpp(export_jinja(option_set, frozen=True), frozen)
        found_here = render_with_llama_cpp(export_jinja(fmt), switched[-len(frozen) :])
        for inputs, wanted, result in zip(frozen, expected, found_here, strict=True):
            where = ({key: value for key, value in inputs.items() if key != "messages"}, variables)
            assert result.get("text") == wanted.get("text"), (where, result.get("error"))
            assert ("error" in result) == ("error" in wanted), where
            compared += "text" in result
    assert compared >= len(found), f"only {compared} renders without an error"
