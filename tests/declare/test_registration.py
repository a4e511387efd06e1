"""A format declared outside the package works everywhere a format is named."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

import pawlette
from pawlette.declare import declare, layout_of
from pawlette.errors import UnsupportedFeature
from pawlette.export import export_grammar, export_grammar_bundle, export_jinja, jinja_formats
from pawlette.export.grammar import grammar_formats

from ..helpers import WITHOUT_CALLS
from . import user_format
from .conversations import TOOLS

CONVERSATION = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
SOURCE = Path(pawlette.__file__).parent.parent


def cli(path: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``pawlette ARGUMENTS`` in a new process whose ``PYTHONPATH`` is ``path``."""
    return subprocess.run(
        [sys.executable, "-m", "pawlette.cli", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PYTHONPATH": path},
    )


def test_registered_by_layout_or_format_and_listed() -> None:
    with user_format.registered() as fmt:
        assert pawlette.get_format("user-tiny") is fmt
        assert "user-tiny" in pawlette.formats()
        assert "user-tiny" in jinja_formats() and "user-tiny" in grammar_formats()
        assert layout_of(fmt) is user_format.LAYOUT
        with pytest.raises(pawlette.RequestError, match="registered already"):
            pawlette.register_format(user_format.LAYOUT)
        assert (
            pawlette.register_format(declare(user_format.LAYOUT), replace=True).name == "user-tiny"
        )
    assert "user-tiny" not in pawlette.formats()


def test_formats_are_hashable_and_variants_export_by_value() -> None:
    chatml = pawlette.get_format("chatml")
    variant = dataclasses.replace(chatml, summary="my variant")
    assert len({chatml, variant, pawlette.get_format("pcml")}) == 3
    assert export_jinja(variant) == export_jinja("chatml")
    bundle = export_grammar_bundle(variant, TOOLS, "required")
    assert bundle["forced_prefix"]["required"] == variant.forced_prefix("required", TOOLS)


def test_forced_prefix_of_every_declared_format_agrees_with_its_bundle() -> None:
    for name in pawlette.formats():
        fmt = pawlette.get_format(name)
        if layout_of(fmt) is None:
            continue
        if name in WITHOUT_CALLS:  # no calls: the bundle refuses, and no prefix forces one
            with pytest.raises(UnsupportedFeature, match=r"^tool_choice: .* has no tool calls"):
                export_grammar_bundle(name, TOOLS, "required", markers_as_text=True)
            assert not fmt.forced_prefix("required", TOOLS)
            continue
        bundle = export_grammar_bundle(name, TOOLS, "required", markers_as_text=True)
        found, expected = fmt.forced_prefix("required", TOOLS), bundle["forced_prefix"]["required"]
        assert found == expected, name


def test_tokenize_and_prompter_take_a_registered_format() -> None:
    from .tokens import tokenizer

    with user_format.registered():
        result = pawlette.tokenize("user-tiny", tokenizer("user-tiny"), CONVERSATION)
        assert len(result.input_ids) == len(result.labels) > 0
        prompter = pawlette.ChatPrompter(format="user-tiny")
        assert "<|user|>" in prompter.generate_prompt("Hi")


def test_an_entry_point_registers_a_format_for_the_command_line(tmp_path: Path) -> None:
    """A package declares its format under the ``pawlette.formats`` entry point group: the
    CLI (a new process) renders with it, exports its template and its grammar."""
    package = tmp_path / "site"
    package.mkdir()
    source = Path(user_format.__file__).read_text(encoding="utf-8")
    (package / "tiny_format.py").write_text(source, encoding="utf-8")
    info = package / "tiny_format-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-format\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pawlette.formats]\nuser-tiny = tiny_format:LAYOUT\n")
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    run = functools.partial(cli, f"{package}:{SOURCE}")

    listing = run("formats")
    assert "user-tiny\t" in listing.stdout, listing.stderr
    rendered = run("render", "-f", "user-tiny", str(conversation))
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.startswith("<|user|>Hi<|end|>\n<|assistant|>Hello!<|end|>")
    template = run("export", "jinja", "-f", "user-tiny")
    assert template.returncode == 0 and "generation" in template.stdout
    grammar = run("export", "grammar", "-f", "user-tiny")
    assert grammar.returncode == 0, grammar.stderr
    assert (
        export_grammar(declare(user_format.LAYOUT), [], "auto").splitlines()[-1] in grammar.stdout
    )


def test_a_python_file_that_sets_format_is_a_format_name(tmp_path: Path) -> None:
    """``-f my_format.py``: a declaration in a file, with no package or entry point, works in
    a new process (the CLI) as a name does; a file that sets no format says so."""
    source = Path(user_format.__file__).read_text(encoding="utf-8")
    declared = tmp_path / "my_format.py"
    # Options as the declaring guide writes them: a frozen dataclass in the file itself.
    options = (
        "\n\n@dataclasses.dataclass(frozen=True)\nclass Options:\n"
        "    kinds: ClassVar[tuple[str, ...]] = ('a',)\n    thinking: bool = False\n\n\n"
        "FORMAT = dataclasses.replace(LAYOUT, options=Options())\n"
    )
    header = "import dataclasses\nfrom typing import ClassVar\n"
    declared.write_text(
        source.replace("import importlib\n", header + "import importlib\n") + options,
        encoding="utf-8",
    )
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    run = functools.partial(cli, str(SOURCE))

    rendered = run("render", "-f", str(declared), str(conversation))
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.startswith("<|user|>Hi<|end|>\n<|assistant|>Hello!<|end|>")
    template = run("export", "jinja", "-f", str(declared))
    assert template.returncode == 0 and "generation" in template.stdout, template.stderr
    assert pawlette.get_format(str(declared)).name == "user-tiny"
    empty = tmp_path / "nothing.py"
    empty.write_text("LAYOUT = 3\n", encoding="utf-8")
    with pytest.raises(pawlette.RequestError, match=r"format: no FORMAT in .*nothing\.py"):
        pawlette.get_format(str(empty))
    wrong = tmp_path / "wrong.py"
    wrong.write_text("FORMAT = 3\n", encoding="utf-8")
    refused = run("render", "-f", str(wrong), str(conversation))
    assert refused.returncode != 0
    assert "FORMAT = int in" in refused.stderr and "expected FORMAT = a Format" in refused.stderr


@pytest.mark.parametrize("name", ["", "a b", "x\n", "auto", "chatml:qwen2.5", "-x"])
def test_a_name_no_command_line_can_reach_is_refused(name: str) -> None:
    variant = dataclasses.replace(pawlette.get_format("chatml"), name=name)
    with pytest.raises(pawlette.RequestError, match=r"format\.name"):
        pawlette.register_format(variant)
    assert name not in pawlette.formats()


def test_workers_refuse_a_format_only_this_process_registered() -> None:
    pytest.importorskip("uvicorn")
    from pawlette.serve.config import ServeConfig
    from pawlette.serve.workers import run_workers

    with user_format.registered():
        config = ServeConfig(format="user-tiny", upstream="http://127.0.0.1:9", workers=2)
        with pytest.raises(pawlette.PawletteError, match="entry point group"):
            run_workers(config)
