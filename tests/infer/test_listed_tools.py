"""Templates whose callers always pass tools as a list (Hermes 2 Pro's and Hermes 3's
``tool_use`` templates iterate ``tools`` unguarded): inferred with the list passed, empty
without tools, their tools block written for a request without tools as the template writes
it given an empty list, and checked by ``pawlette verify`` as the template's callers call it."""

from __future__ import annotations

import functools

import pytest

from pawlette.declare import Lit, Results
from pawlette.detect import verify
from pawlette.infer import Inference, infer_template
from pawlette.infer.listed_tools import listed_tools
from pawlette.infer.template import TemplateRunner

from ..support.template_corpus import corpus_template

HERMES = (
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use",
)


@functools.cache
def _infer(name: str) -> Inference:
    template = corpus_template(name)
    return infer_template(template.text, bos_token=template.bos_token, eos_token=template.eos_token)


@pytest.mark.parametrize("name", HERMES)
def test_a_template_for_requests_with_tools_is_inferred_with_its_tools_listed(name: str) -> None:
    inference = _infer(name)
    assert inference.accepted, inference.describe()
    statuses = {item.name: item for item in inference.capabilities}
    for capability in ("tools", "tool calls", "tool results", "requests without tools"):
        assert statuses[capability].status == "derived", inference.describe()
    assert "NoneType" in statuses["requests without tools"].detail
    assert inference.layout is not None
    assert inference.layout.tools_variables is listed_tools
    assert any("always pass tools as a list" in note for note in inference.layout.notes)
    # The newline the template writes after the last result once a message follows (none
    # when the results end the conversation) is the gap between results.
    results = inference.layout.concept(Results)
    assert results is not None and results.gap_ends_group
    assert results.item_gap == (Lit("\n"),) and results.item_open == (Lit("<tool_response>\n"),)


@pytest.mark.parametrize("name", HERMES)
def test_without_tools_the_declaration_writes_what_the_template_writes_for_an_empty_list(
    name: str,
) -> None:
    template = corpus_template(name)
    fmt = _infer(name).format
    assert fmt is not None
    runner = TemplateRunner(
        template.text, {"bos_token": template.bos_token, "eos_token": template.eos_token}
    )
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert runner.render(messages, add_generation_prompt=True).text is None  # tools=None
    written = runner.render(messages, add_generation_prompt=True, variables={"tools": []}).text
    assert written is not None and "<tools>  </tools>" in written
    assert fmt.render(messages, add_generation_prompt=True).text == written


@pytest.mark.parametrize("name", HERMES)
def test_verify_renders_the_template_with_the_list_and_finds_no_unexplained_difference(
    name: str,
) -> None:
    template = corpus_template(name)
    fmt = _infer(name).format
    assert fmt is not None
    found = verify(fmt, template.text, bos_token=template.bos_token, eos_token=template.eos_token)
    assert not found.unexplained, found.describe()
    assert not found.template_refused, found.describe()
    assert not found.refused, found.describe()
    assert found.identical > 0


def test_the_source_passes_the_list_too() -> None:
    inference = _infer(HERMES[0])
    source = inference.source()
    assert "from pawlette.infer.listed_tools import listed_tools" in source
    assert "tools_variables=listed_tools" in source
    namespace: dict[str, object] = {}
    exec(compile(source, "inferred.py", "exec"), namespace)
    layout = namespace["LAYOUT"]
    assert layout == inference.layout
    assert getattr(layout, "tools_variables", None) is listed_tools


def test_a_template_that_refuses_more_than_no_tools_says_what_else_it_needs() -> None:
    # Command R+'s tool_use template renders with an empty list, then ends every render with
    # an instruction turn no concept writes.
    inference = _infer("CohereForAI-c4ai-command-r-plus-tool_use")
    assert not inference.accepted
    assert inference.refusal is not None
    assert "without tools" not in inference.refusal
    assert "needs concept" in inference.refusal and "Action:" in inference.refusal
