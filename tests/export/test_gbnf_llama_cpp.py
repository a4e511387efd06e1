"""The GBNF grammars parse, accept and reject under llama.cpp's own grammar engine.

llama.cpp's GBNF parser and matcher (``src/llama-grammar.cpp``) are compiled alone from the
pinned llama-cpp-python sdist with our driver ``llama_cpp_grammar_driver.cpp`` (which stands in
for the few libllama symbols the engine refers to and that text never reaches) by
:mod:`tests.support.llama_cpp_build`: downloaded and built at first use, cached; a failed
download or build fails the tests, nothing is skipped.

The grammars are exported with ``markers_as_text=True``: without a model there is no
vocabulary, and a token reference (``<...>``, the default spelling of special markers) needs
one, so only the text spelling is run here; the token spelling is checked by our GBNF parser
and llguidance (``test_grammar.py``).  The cases are ``test_grammar.py``'s own, imported: its
checks run with the grammar exported as text, the turn as the text the model writes, and
llama.cpp's engine deciding (feeding the text code point by code point, as when it constrains
generation, and accepting when a parse is complete).
"""

from __future__ import annotations

import collections
import subprocess
from collections.abc import Iterator, Sequence
from functools import cache, partial
from pathlib import Path
from typing import Any

import pytest

import pawlette
from pawlette.export.grammar import export_grammar, export_grammar_bundle, grammar_formats
from pawlette.format import Format

from ..helpers import WITHOUT_CALLS, stop_texts
from ..support.llama_cpp_build import TIMEOUT, Engine, build_driver
from . import test_grammar

_SOURCES = ("src/llama-grammar.cpp",)
ENGINE = Engine(
    title="llama.cpp's grammar engine",
    prefix="grammar-driver",
    driver=Path(__file__).parent / "llama_cpp_grammar_driver.cpp",
    members=(
        *_SOURCES,
        "src/llama-grammar.h",
        "src/llama-impl.h",
        "src/llama-sampler.h",
        "src/llama-vocab.h",
        "include/llama.h",
        "ggml/include/",
        "LICENSE",
    ),
    sources=_SOURCES,
    includes=("src", "include", "ggml/include"),
    in_key=_SOURCES,
)


@cache
def llama_cpp_grammar_driver() -> Path:
    return build_driver(ENGINE)


def _field(text: str) -> bytes:
    data = text.encode("utf-8")
    return str(len(data)).encode() + b"\n" + data


def llama_cpp_accepts(grammar: str, texts: Sequence[str]) -> list[bool]:
    """Whether llama.cpp's engine accepts each text in full under the GBNF ``grammar``; a
    grammar it cannot parse fails the test with its parser's message."""
    result = subprocess.run(
        [str(llama_cpp_grammar_driver())],
        input=b"".join(_field(text) for text in [grammar, *texts]),
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    lines = result.stdout.decode().split()
    stderr = result.stderr.decode("utf-8", "replace")[-2000:]
    if lines == ["PARSE_FAILED"]:
        pytest.fail(f"llama.cpp cannot parse the grammar:\n{stderr}\n{grammar}", pytrace=False)
    if result.returncode != 0 or len(lines) != len(texts):
        pytest.fail(
            f"{ENGINE.title}: the driver exited {result.returncode} after"
            f" {len(lines)} of {len(texts)} cases:\n{stderr}",
            pytrace=False,
        )
    return [line == "ACCEPT" for line in lines]


def parses(grammar: str) -> bool:
    """Whether llama.cpp's parser takes the grammar (without failing the test)."""
    result = subprocess.run(
        [str(llama_cpp_grammar_driver())],
        input=_field(grammar),
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    return result.stdout.decode().split() != ["PARSE_FAILED"]


# ------------------------------------------------------------------ test_grammar's checks, here

CASES: collections.Counter[str] = collections.Counter()  # cases run per format


def completion_text(fmt: Format, request: dict[str, Any], index: int) -> str:
    """What ``test_grammar.completion_ids`` encodes, as text: the trainable segments of
    assistant message ``index`` and of the next message."""
    from ..declare.conversations import as_the_model_writes

    return "".join(
        segment.text
        for segment in as_the_model_writes(fmt).render(request).segments
        if segment.message_index in (index, index + 1) and segment.trainable
    )


def reasoning_close_text(fmt: Format) -> str:
    """What ``test_grammar.reasoning_close_ids`` encodes, as text."""
    return "".join(piece.text for piece in test_grammar.reasoning_close(fmt))


def accepts(name: str, grammar: str, syntax: str, text: str) -> bool:
    """As ``test_grammar.accepts``: a turn's own stop at its end is the engine's: its stop
    marker (the marker a stop of text and a marker ends with: the text before it is the
    grammar's), or a stop of text only (RWKV World's blank line)."""
    assert syntax == "gbnf"
    CASES[name] += 1
    fmt = pawlette.get_format(name)
    for end in (*fmt.stop_markers, *sorted(stop_texts(fmt), key=len, reverse=True)):
        if text.endswith(end):
            text = text[: -len(end)]
            break
    return llama_cpp_accepts(grammar, [text])[0]


@pytest.fixture
def under_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``test_grammar``'s checks with markers spelled as text and llama.cpp deciding (its
    grammars built once per test process, as there)."""
    monkeypatch.setattr(
        test_grammar, "export_grammar", partial(test_grammar.export_grammar, markers_as_text=True)
    )
    monkeypatch.setattr(
        test_grammar, "export_grammar_bundle", partial(export_grammar_bundle, markers_as_text=True)
    )
    monkeypatch.setattr(test_grammar, "turn_ids", lambda name, pieces: "".join(pieces))
    monkeypatch.setattr(test_grammar, "completion_ids", completion_text)
    monkeypatch.setattr(test_grammar, "reasoning_close_ids", reasoning_close_text)
    monkeypatch.setattr(test_grammar, "accepts", accepts)
    yield


@pytest.mark.sampled
@pytest.mark.usefixtures("under_llama_cpp")
@pytest.mark.parametrize("name", grammar_formats())
def test_every_rendered_turn_is_accepted(name: str) -> None:
    test_grammar.test_every_rendered_turn_is_accepted(name=name, syntax="gbnf")


@pytest.mark.usefixtures("under_llama_cpp")
@pytest.mark.parametrize("case", sorted(test_grammar.REJECTED))
def test_pcml_grammar_rejects(case: str) -> None:
    test_grammar.test_pcml_grammar_rejects("gbnf", case)


@pytest.mark.usefixtures("under_llama_cpp")
@pytest.mark.parametrize("case", sorted(test_grammar.ACCEPTED))
def test_pcml_grammar_accepts(case: str) -> None:
    test_grammar.test_pcml_grammar_accepts("gbnf", case)


@pytest.mark.usefixtures("under_llama_cpp")
@pytest.mark.parametrize(
    "check",
    [
        test_grammar.test_pcml_tool_choice_and_parallel,
        test_grammar.test_omni_grammar,
        test_grammar.test_python_call_grammars,
        test_grammar.test_a_tool_without_parameters_takes_no_arguments,
    ],
    ids=lambda check: check.__name__.removeprefix("test_"),
)
def test_hand_written_cases(check: Any) -> None:
    check("gbnf")


@pytest.mark.usefixtures("under_llama_cpp")
@pytest.mark.parametrize("name", grammar_formats())
def test_a_recursive_schema_under_every_tool_choice(name: str) -> None:
    test_grammar.test_a_recursive_schema_under_every_tool_choice(name, "gbnf")


# ------------------------------------------------------------------ parsing


def choices(name: str) -> list[Any]:
    """Every tool choice: a named one for each function (actions are no tool choice); a
    format without calls takes ``auto`` and ``none`` only (a forced call is refused there:
    ``test_grammar.test_a_recursive_schema_under_every_tool_choice``)."""
    if name in WITHOUT_CALLS:
        return ["auto", "none"]
    tools: list[dict[str, Any]] = test_grammar.TURNS[name][0]
    named = [tool["function"]["name"] for tool in tools if tool["type"] == "function"]
    return ["auto", "none", "required", *named]


@pytest.mark.parametrize("name", grammar_formats())
def test_every_grammar_and_bundle_parses(name: str) -> None:
    """Every tool choice the format's tools allow, with and without parallel calls, and the
    bundle's grammars (whole, lazy, after the forced prefix), markers spelled as text."""
    tools = test_grammar.TURNS[name][0]
    for choice in choices(name):
        for parallel in (True, False):
            grammar = export_grammar(name, tools, choice, parallel, "gbnf", markers_as_text=True)
            assert parses(grammar), (choice, parallel)
            bundle = export_grammar_bundle(
                name, tools, choice, parallel, "gbnf", markers_as_text=True
            )
            for key in ("grammar", "lazy_grammar", "grammar_after_prefix"):
                if bundle[key] is not None:
                    assert parses(bundle[key]), (choice, parallel, key)


def test_llama_cpp_fails_what_our_checker_fails() -> None:
    """The malformed grammars ``test_grammar``'s GBNF checker must reject, llama.cpp rejects
    too (a token reference fails there for want of a vocabulary)."""
    (mark,) = test_grammar.test_gbnf_checker_rejects_what_llama_cpp_rejects.pytestmark
    sources = [source for source, _ in mark.args[1]]
    assert sources
    for source in sources:
        assert not parses(source), source
    assert parses('root ::= "a" b\nb ::= [b-c]*')


def test_the_engine_decides() -> None:
    """The driver answers per case, and a rejection is llama.cpp's, not a crash."""
    grammar = 'root ::= "<call>" [^<]* "<end>"'
    texts = ["<call>x<end>", "<call>x", "<call>x<end>y", "<call>é🙂<end>", "", "<ca"]
    assert llama_cpp_accepts(grammar, texts) == [True, False, False, True, False, False]
