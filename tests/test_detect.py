"""pawlette detect: a model directory's chat template named by the declared family that
renders it, else an inferred declaration (verified) or a refusal saying why."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pawlette
from pawlette.detect import detect
from pawlette.export import export_jinja, jinja_formats

from .declared.reference import reference_template
from .support.template_corpus import corpus_template

registry = importlib.import_module("pawlette.formats")
detection_module = importlib.import_module("pawlette.detect")

REFERENCES = [
    ("Qwen-Qwen3-0.6B.jinja", None, "chatml", None),
    ("Qwen-Qwen2.5-7B-Instruct.jinja", None, "chatml:qwen2.5", "qwen2.5"),
    ("meta-llama-Llama-3.1-8B-Instruct.jinja", "<|begin_of_text|>", "llama3", None),
    ("meta-llama-Llama-3.2-3B-Instruct.jinja", "<|begin_of_text|>", "llama3:3.2", "3.2"),
    ("meta-llama-Llama-3.3-70B-Instruct.jinja", "<|begin_of_text|>", "llama3", None),
]


def model_directory(root: Path, template: str, bos: str | None = None) -> Path:
    config: dict[str, object] = {"chat_template": template}
    if bos is not None:
        config["bos_token"] = {"content": bos, "special": True}
    root.mkdir(parents=True, exist_ok=True)
    (root / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return root


@pytest.mark.parametrize(("file_name", "bos", "name", "variant"), REFERENCES)
def test_real_templates_are_named(
    tmp_path: Path, file_name: str, bos: str | None, name: str, variant: str | None
) -> None:
    detection = detect(model_directory(tmp_path, reference_template(file_name), bos))
    assert (detection.name, detection.variant) == (name, variant), detection.describe()
    assert detection.declared and len(detection.compared) >= 4


def test_a_template_that_requires_a_thinking_field_is_named_and_inferred(tmp_path: Path) -> None:
    """IFM-K2-Horizon's template refuses an assistant message without reasoning: given the
    empty reasoning its callers pass, it is named ``ifm``, and with the declared families
    skipped it is inferred (its turns and reasoning; its tools, Markdown, as the declared
    family writes them, and the calls behind them)."""
    template = corpus_template("IFM-K2-Horizon").text
    directory = model_directory(tmp_path, template)
    assert detect(directory).name == "ifm"
    result = run("detect", str(directory), "--no-declared")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "inferred and verified" in result.stdout
    assert "reasoning: derived" in result.stdout
    assert "tools: derived; system, Markdown (IFM)" in result.stdout
    assert "tool calls: derived" in result.stdout


@pytest.mark.parametrize("name", jinja_formats())
def test_every_exported_template_is_named_by_its_format(tmp_path: Path, name: str) -> None:
    (tmp_path / "chat_template.jinja").write_text(export_jinja(name), encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    assert detect(tmp_path).name == name


def test_an_unknown_template_gets_the_first_differing_probe(tmp_path: Path) -> None:
    template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    detection = detect(model_directory(tmp_path, template), infer=False)
    assert detection.format is None
    assert {m.candidate for m in detection.mismatches} >= set(pawlette.formats())
    assert all(m.probe == "user prompt" for m in detection.mismatches)
    assert "no declared family" in detection.describe()


def test_an_unknown_template_is_inferred_when_it_can_be(tmp_path: Path) -> None:
    template = (
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    detection = detect(model_directory(tmp_path / "model", template))
    assert detection.inferred, detection.describe()
    assert detection.name == "inferred-model"
    assert detection.inference is not None and detection.inference.verification is not None
    assert detection.inference.verification.passed
    fmt = detection.format
    assert fmt is not None
    rendered = fmt.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    assert rendered.text == "<|user|>Hi<|end|>\n<|assistant|>"
    assert fmt.parse("Hello!<|end|>").message["content"] == "Hello!"


def test_inference_refuses_what_it_cannot_verify(tmp_path: Path) -> None:
    # The system text is written after the user's: no turn concept writes that.
    template = (
        "{% for m in messages %}{% if m.role != 'system' %}<|{{ m.role }}|>{{ m.content }}"
        "{% if loop.index0 == 1 and messages[0].role == 'system' %} ({{ messages[0].content }})"
        "{% endif %}<|end|>{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>"
        "{% endif %}"
    )
    detection = detect(model_directory(tmp_path, template))
    assert detection.inference is not None
    assert "system messages: not derived" in detection.describe()


def test_no_template_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(pawlette.RequestError, match="no chat template"):
        detect(tmp_path)


def run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pawlette.cli", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_command(tmp_path: Path) -> None:
    known = model_directory(tmp_path / "qwen", reference_template(REFERENCES[1][0]))
    result = run("detect", str(known))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("chatml:qwen2.5: a declared family")
    unknown = model_directory(tmp_path / "other", "{{ messages[0].content }}")
    result = run("detect", str(unknown))
    assert result.returncode == 1
    assert "first differs on probe" in result.stdout
    assert "not inferred: the turns could not be derived" in result.stdout


def test_the_command_prints_an_inferred_declaration(tmp_path: Path) -> None:
    template = (
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    directory = model_directory(tmp_path / "tiny", template)
    result = run("detect", str(directory), "--declaration")
    assert result.returncode == 0, result.stderr
    namespace: dict[str, object] = {}
    exec(compile(result.stdout, "declaration", "exec"), namespace)  # the printed module runs
    fmt = namespace["FORMAT"]
    assert isinstance(fmt, pawlette.Format)
    assert fmt.name == "inferred-tiny"
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"messages": [{"role": "user", "content": "Hi"}]}))
    result = run("render", "-f", str(directory), str(request), "--generation-prompt")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "<|user|>Hi<|end|>\n<|assistant|>"


def test_format_auto_for_tokenize(tmp_path: Path) -> None:
    """``-f auto`` picks the format from the tokenizer's directory (Meta's tokenizer and
    Llama 3.1's template), and tokenizes with it."""
    from .support.llama3 import llama3_tokenizer

    directory = model_directory(
        tmp_path / "llama", reference_template(REFERENCES[2][0]), "<|begin_of_text|>"
    )
    llama3_tokenizer().save(str(directory / "tokenizer.json"))
    records = tmp_path / "in.jsonl"
    records.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "Hello!"},
                ]
            }
        )
        + "\n",
        encoding="utf-8",
    )
    output = tmp_path / "out.parquet"
    result = run(
        "tokenize",
        "-f",
        "auto",
        "--tokenizer",
        str(directory),
        str(records),
        "-o",
        str(output),
        "--workers",
        "0",
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    assert "-f auto: llama3" in result.stderr
    import pyarrow.parquet as parquet

    ids = parquet.read_table(output).column("input_ids").to_pylist()[0]
    expected = pawlette.tokenize("llama3", llama3_tokenizer(), json.loads(records.read_text()))
    assert ids == list(expected.input_ids)


def test_format_auto_needs_a_directory() -> None:
    result = run("serve", "-f", "auto", "--upstream", "http://127.0.0.1:9")
    assert result.returncode == 2
    assert "-f auto: needs --tokenizer" in result.stderr


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The formats a test's model directories register (``get_format(DIR)`` registers the
    inferred declaration in its process) gone after it: other tests list the formats."""
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    monkeypatch.setattr(registry, "_LOADED", dict(registry._LOADED))
    monkeypatch.setattr(detection_module, "_INFERRED", set(detection_module._INFERRED))


TINY = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
"""A template no declared family writes, and inference derives."""


def test_format_auto_for_an_inferred_format_names_its_directory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fresh_registry: None,
) -> None:
    """``-f auto`` with ``--tokenizer ./my-model`` (relative, as a user types it) whose
    template is inferred: the format is the directory, spelled as a path (a bare
    ``my-model`` is looked up as a format's name), and stderr says it was inferred and
    verified.  Run in this process, where the working directory can be the model's parent."""
    from pawlette import cli

    from .support.small_bpe import small_tokenizer

    directory = model_directory(tmp_path / "my-model", TINY)
    markers = pawlette.get_format(str(directory)).special_markers
    small_tokenizer(markers).save(str(directory / "tokenizer.json"))
    records = tmp_path / "data.jsonl"
    conversation = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    records.write_text(json.dumps({"messages": conversation}) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    arguments = ["--tokenizer", "./my-model", "data.jsonl", "-o", "out.parquet"]
    status = cli.main(["tokenize", "-f", "auto", *arguments, "--workers", "0", "--no-progress"])
    err = capsys.readouterr().err
    assert status == 0, err
    assert err.startswith("pawlette tokenize: -f auto: ./my-model: inferred and verified: "), err
    import pyarrow.parquet as parquet

    ids = parquet.read_table(tmp_path / "out.parquet").column("input_ids").to_pylist()[0]
    expected = pawlette.tokenize(
        pawlette.get_format(str(directory)), small_tokenizer(markers), {"messages": conversation}
    )
    assert ids == list(expected.input_ids)
    # The server resolves the same argument in each of its worker processes; the tokenizer
    # file itself names its directory too.
    for tokenizer in ("./my-model", "my-model", "my-model/tokenizer.json"):
        serve = ["serve", "-f", "auto", "--tokenizer", tokenizer, "--upstream", "http://x"]
        argument = cli._auto_format(cli.build_parser().parse_args(serve))
        assert argument == os.path.join(".", "my-model")
        assert pawlette.get_format(argument) is pawlette.get_format(str(directory))


def test_format_auto_with_a_missing_tokenizer_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "Qwen3-0.6B"
    result = run("tokenize", "-f", "auto", "--tokenizer", str(missing), "in.jsonl", "-o", "o")
    assert result.returncode == 2
    assert result.stderr == (
        f"pawlette tokenize: -f auto: --tokenizer {missing}: no such file or directory; "
        "expected a model directory with a chat template (or the tokenizer.json inside one)\n"
    )


def test_a_missing_directory_is_said_before_its_chat_template(tmp_path: Path) -> None:
    missing = tmp_path / "Qwen3-0.6B"
    result = run("detect", str(missing))
    assert result.returncode == 2
    assert result.stderr == (
        f"pawlette detect: {missing}: no such directory; expected a model or tokenizer "
        "directory (tokenizer_config.json, chat_template.jinja)\n"
    )
    file = tmp_path / "request.json"
    file.write_text("{}", encoding="utf-8")
    with pytest.raises(pawlette.RequestError, match=f"{file}: not a directory"):
        detect(file)
    template = tmp_path / "chat_template.jinja"
    template.write_text(TINY, encoding="utf-8")
    with pytest.raises(pawlette.RequestError, match=f"{missing}: no such directory"):
        detect(missing, template_file=template)


def test_a_directory_named_as_a_format_is_told_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    model_directory(tmp_path / "my-model", TINY)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(pawlette.RequestError) as raised:
        pawlette.get_format("my-model")
    assert str(raised.value).startswith(
        "format: found 'my-model', a directory read as a format's name; expected "
        f"{os.path.join('.', 'my-model')} for the model directory, or one of pcml, "
    )
    assert pawlette.get_format(registry.directory_argument("my-model")).name == "inferred-my-model"


def test_a_format_path_to_nothing_says_so(tmp_path: Path) -> None:
    """``-f ./Qwen3-0.6B`` where there is no such directory is not an unknown name."""
    missing = str(tmp_path / "Qwen3-0.6B")
    with pytest.raises(pawlette.RequestError) as raised:
        pawlette.get_format(missing)
    assert str(raised.value).startswith(
        f"format: found {missing!r}: no such directory; expected a model directory, a Python "
        "file that sets FORMAT, or one of pcml, "
    )
    with pytest.raises(pawlette.RequestError, match=r"found '.*my_format\.py': no such file;"):
        pawlette.get_format(str(tmp_path / "my_format.py"))
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    with pytest.raises(pawlette.RequestError, match=r"found '.*model\.safetensors': a file, not"):
        pawlette.get_format(str(weights))


def test_a_relative_directory_is_remembered_by_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    """``./model`` in two working directories names two models."""
    model_directory(tmp_path / "one" / "model", TINY)
    other = TINY.replace("<|end|>", "<|stop|>")
    model_directory(tmp_path / "two" / "model", other)
    request = [{"role": "user", "content": "Hi"}]
    monkeypatch.chdir(tmp_path / "one")
    assert pawlette.get_format("./model").render(request).text == "<|user|>Hi<|end|>\n"
    monkeypatch.chdir(tmp_path / "two")
    assert pawlette.get_format("./model").render(request).text == "<|user|>Hi<|stop|>\n"


def test_a_variant_is_a_format_name_every_process_resolves() -> None:
    qwen25 = pawlette.get_format("chatml:qwen2.5")
    text = qwen25.render([{"role": "user", "content": "Hi"}]).text
    assert text.startswith("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud.")
    assert pawlette.get_format("chatml:qwen2.5") is qwen25
    with pytest.raises(pawlette.RequestError, match=r"qwen2\.5"):
        pawlette.get_format("chatml:qwen9")


@pytest.mark.parametrize(
    ("files", "found"),
    [
        (
            {"tokenizer_config.json": b"[]"},
            "tokenizer_config.json: a JSON list; expected an object",
        ),
        ({"chat_template.jinja": b"\xff\xfe{{ x }}"}, "chat_template.jinja: unreadable"),
        ({"chat_template.jinja": b"{% if %}"}, "chat_template: not valid Jinja"),
    ],
)
def test_a_damaged_directory_is_a_request_error(
    tmp_path: Path, files: dict[str, bytes], found: str
) -> None:
    """The audit found these as AttributeError, UnicodeDecodeError and TemplateSyntaxError
    tracebacks of ``pawlette detect`` (and of ``-f auto``)."""
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    with pytest.raises(pawlette.RequestError, match=found):
        detect(tmp_path)


def test_a_declaration_whose_template_cannot_write_tools_is_compared_without_them() -> None:
    """llama.cpp's DeepSeek R1 template refuses the tools the format writes
    (``Layout.template_untested``): detection names it on the probes without tools."""
    from pawlette.detect import detect_template

    from .support.template_corpus import corpus_template

    template = corpus_template("llama-cpp-deepseek-r1")
    detection = detect_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token, infer=False
    )
    assert detection.name == "deepseek:r1-llamacpp", detection.describe()
    assert not {"tools and a call", "tools prompt"} & set(detection.compared)
    # The distills' and V3.1's declarations say nothing of the kind: compared with tools.
    for name, family in (
        ("deepseek-ai-DeepSeek-V3.1", "deepseek"),
        ("deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "deepseek:r1-llama"),
    ):
        other = corpus_template(name)
        detection = detect_template(
            other.text, bos_token=other.bos_token, eos_token=other.eos_token, infer=False
        )
        assert detection.name == family, detection.describe()
        assert {"tools and a call", "tools prompt"} <= set(detection.compared)


def test_a_declared_family_is_named_with_the_kinds_of_content_it_was_compared_on() -> None:
    """A family matched on probes without tools or calls (the DeepSeek R1 template's, which
    refuses tools) is not named as if it agreed on them: the answer says what its matching
    probes held, and what none did; Qwen2.5's matched on every kind, two calls in a turn
    included."""
    from pawlette.detect import detect_template

    from .support.template_corpus import corpus_template

    template = corpus_template("llama-cpp-deepseek-r1")
    detection = detect_template(
        template.text, bos_token=template.bos_token, eos_token=template.eos_token, infer=False
    )
    assert detection.probed == ("reasoning",)
    assert detection.describe() == (
        "deepseek:r1-llamacpp: a declared family; 4 probes rendered identically, with "
        "reasoning; none held tools, calls, two calls in a turn or results: not compared on "
        "those"
    )
    qwen = corpus_template("Qwen-Qwen2.5-7B-Instruct")
    detection = detect_template(qwen.text, eos_token=qwen.eos_token, infer=False)
    assert "two calls in a turn" in detection.compared
    assert detection.describe().endswith(
        "with tools, calls, two calls in a turn, results and reasoning"
    )


def test_the_closest_families_come_first_and_a_missing_bos_token_is_named(tmp_path: Path) -> None:
    """A Llama 3.1 directory whose tokenizer_config.json gives no bos_token: every family
    differs on the first probe, and the nearest, named first, differs only by the bos."""
    template = reference_template("meta-llama-Llama-3.1-8B-Instruct.jinja")
    detection = detect(model_directory(tmp_path, template), infer=False)
    assert detection.format is None
    closest = detection.describe().splitlines()[1]
    assert closest.startswith("  llama3"), detection.describe()
    assert "the same but for '<|begin_of_text|>', which the family writes first" in closest
    assert "bos_token" in closest


GEMMA_3 = json.loads(
    (Path(__file__).parent / "formats" / "families" / "data" / "gemma3_template.json").read_text(
        "utf-8"
    )
)


def test_a_family_refusing_what_the_template_writes_says_so(tmp_path: Path) -> None:
    """Gemma 3's template with one blank line less after the system text: no family writes
    its system probes, and Gemma 2's family, which refuses them, matches the rest.  It is
    named with what it refuses, never as a plain match."""
    template = GEMMA_3["template"].replace("+ '\n\n'", "+ '\n'")
    assert template != GEMMA_3["template"]
    detection = detect(model_directory(tmp_path, template, "<bos>"), infer=False)
    assert detection.name == "gemma" and detection.declared
    assert detection.refused and all("messages[0].role" in said for said in detection.refused)
    assert "it refuses 2 the template renders: system" in detection.describe()


def test_a_directory_inferred_before_is_no_candidate_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-f DIR`` registers DIR's inferred format; detecting another directory in the same
    process (here with the same template) infers that one's own, never takes the first's as
    a declared family (with another bos_token, say, it would refuse what the second's
    inference writes)."""
    # The formats this test registers are gone after it (other tests list every format).
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    monkeypatch.setattr(detection_module, "_INFERRED", set(detection_module._INFERRED))
    first = (
        "{% for m in messages %}<|turn|>{{ m.role }}\n{{ m.content }}<|done|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|turn|>assistant\n{% endif %}"
    )
    known = pawlette.detect.format_of_directory(model_directory(tmp_path / "one", first))
    found = detect(model_directory(tmp_path / "two", first))
    assert found.inferred and found.name != known.name, found.describe()
    assert found.format is not None and found.format.name == "inferred-two"


def test_a_differing_probe_is_shown_where_it_differs(tmp_path: Path) -> None:
    template = reference_template("Qwen-Qwen3-0.6B.jinja").replace(
        "<|im_start|>assistant\\n", "<|im_start|>assistant \\n"
    )
    detection = detect(model_directory(tmp_path, template), infer=False)
    chatml = next(m for m in detection.mismatches if m.candidate == "chatml")
    offset = chatml.expected.index("assistant \n")
    assert chatml.rendered[:offset] == chatml.expected[:offset]
    assert f"at offset {offset + len('assistant')}, " in chatml.where()
    assert "assistant \\n" in chatml.where()


def test_a_bos_token_the_directory_gives_is_not_asked_for(tmp_path: Path) -> None:
    """Qwen3's template with a literal ``<s>`` before it, the directory giving ``<s>`` as its
    bos_token: the family does not write it, and no token is missing."""
    template = "<s>" + reference_template("Qwen-Qwen3-0.6B.jinja")
    detection = detect(model_directory(tmp_path, template, "<s>"), infer=False)
    said = next(line for line in detection.describe().splitlines() if "  chatml:" in line)
    assert "the same but for '<s>', which the template writes first" in said
    assert "missing" not in said


TEMPLATES = Path(__file__).parent / "fixtures" / "templates"


def test_a_template_file_named_explicitly(tmp_path: Path) -> None:
    """``pawlette detect DIR -f FILE``: the template from FILE (here one the directory does
    not hold), the special tokens from DIR."""
    directory = tmp_path / "model"
    directory.mkdir()
    (directory / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": "<s>", "eos_token": "</s>"}), encoding="utf-8"
    )
    template = TEMPLATES / "internlm2_tool.jinja"
    detection = detect(directory, template_file=template)
    assert detection.inferred and detection.format is not None, detection.describe()
    rendered = detection.format.render([{"role": "user", "content": "Hi"}]).text
    assert rendered.startswith("<s><|im_start|>user\nHi")  # the directory's bos_token
    result = run("detect", str(directory), "-t", str(template))
    assert result.returncode == 0, result.stderr
    assert "inferred-model: inferred and verified" in result.stdout
    assert "tools: derived; after system" in result.stdout
    missing = run("detect", str(directory), "--template", str(tmp_path / "none.jinja"))
    assert missing.returncode != 0
    assert "none.jinja: no such file" in missing.stderr


def test_a_template_file_overrides_the_directory_s_own(tmp_path: Path) -> None:
    own = model_directory(tmp_path / "qwen", reference_template(REFERENCES[1][0]))
    (tmp_path / "other.jinja").write_text("{{ messages[0].content }}", encoding="utf-8")
    detection = detect(own, template_file=tmp_path / "other.jinja", infer=False)
    assert detection.format is None


def test_a_template_file_alone(tmp_path: Path) -> None:
    """``pawlette detect -t FILE``: no directory needed; the special tokens, when the template
    writes them, given as options (a directory and the options together are refused)."""
    template = tmp_path / "qwen.jinja"
    template.write_text(reference_template(REFERENCES[1][0]), encoding="utf-8")
    result = run("detect", "-t", str(template))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("chatml:qwen2.5: a declared family")
    internlm = TEMPLATES / "internlm2_tool.jinja"
    result = run("detect", "-t", str(internlm), "--bos-token", "<s>", "--declaration")
    assert result.returncode == 0, result.stderr
    namespace: dict[str, object] = {}
    exec(compile(result.stdout, "declaration", "exec"), namespace)
    fmt = namespace["FORMAT"]
    assert isinstance(fmt, pawlette.Format)
    assert fmt.render([{"role": "user", "content": "Hi"}]).text.startswith("<s><|im_start|>")
    nothing = run("detect")
    assert nothing.returncode == 2
    assert "template: none given; expected a model directory, -t FILE, or both" in nothing.stderr
    both = run("detect", str(tmp_path), "-t", str(template), "--bos-token", "<s>")
    assert both.returncode == 2
    assert "--bos-token/--eos-token: given with a directory" in both.stderr


def test_a_template_that_refuses_every_probe_is_said_to_instead_of_offsets() -> None:
    from pawlette.detect import detect_template

    # A template whose callers pass content as image parts: every probe, written with text
    # content (or, for a family whose callers shape it, text parts), is refused, so no
    # family's text was compared with it.
    template = (
        "{%- for message in messages -%}"
        "{%- if message.content is string or message.content[0].image is not defined -%}"
        "{{- raise_exception('content must be a list of parts') -}}{%- endif -%}"
        "{{- message.role + ': ' + message.content[0].image + '\\n' -}}{%- endfor -%}"
    )
    described = detect_template(template, infer=False).describe()
    first, *candidates = described.splitlines()
    assert first.startswith(
        "no declared family renders this chat template: the template refused every probe"
    )
    assert candidates and all(
        "the template refuses it (TemplateError: content must be a list of parts)" in line
        and "at offset" not in line
        for line in candidates
    )


def test_a_template_whose_callers_shape_messages_is_named_by_the_family_that_says_so(
    tmp_path: Path,
) -> None:
    """TranslateGemma's template refuses text content; ``gemma:translate`` says how its
    callers shape a user message (one part with the languages' codes), so detection gives
    the template those messages and names it."""
    template = corpus_template("google-translategemma-4b-it")
    directory = model_directory(tmp_path, template.text, template.bos_token)
    detection = detect(directory, infer=False)
    assert (detection.name, detection.variant) == ("gemma:translate", "translate"), (
        detection.describe()
    )


def test_a_token_the_template_never_reads_is_not_asked_for(tmp_path: Path) -> None:
    """vLLM's ChatML template leaves the last message open when no generation prompt
    follows and reads neither ``bos_token`` nor ``eos_token``: the families differ from it by
    the ``<|im_end|>\\n`` they write last, and an eos_token in the directory would change
    nothing, so none is asked for."""
    template = (TEMPLATES / "chatml_open_last.jinja").read_text("utf-8")
    detection = detect(model_directory(tmp_path, template), infer=False)
    assert detection.format is None
    said = next(line for line in detection.describe().splitlines() if "  chatml" in line)
    assert "the same but for '<|im_end|>\\n', which the family writes last" in said
    assert "missing" not in said and "eos_token" not in said, said


def test_a_template_reading_its_clock_is_told_from_a_family_that_writes_no_date(
    tmp_path: Path,
) -> None:
    """vLLM's Llama 3.1 JSON template writes the day ``strftime_now`` reads; Llama 3.1's
    family writes a fixed date and has no date option, so the template's clock reads a day no
    declaration writes.  The difference names that day for what it is, not as if the
    template had written it of its own."""
    template = (TEMPLATES / "llama3.1_json_tool.jinja").read_text("utf-8")
    detection = detect(model_directory(tmp_path, template, "<|begin_of_text|>"), infer=False)
    assert detection.format is None
    lines = detection.describe().splitlines()
    said = next(line for line in lines if line.startswith("  llama3: "))
    assert "Today Date: 31 Dec 1999" in said
    assert "the template reads its clock (strftime_now)" in said, said
    dated = next(line for line in lines if line.startswith("  llama3:3.2: "))
    assert "strftime_now" not in dated  # the variant writes a date: the clock reads it
