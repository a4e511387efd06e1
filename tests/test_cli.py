"""The command line, run as a subprocess."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden" / "pcml" / "seed_weather"


def run(*arguments: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pawlette.cli", *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_formats_lists_pcml() -> None:
    result = run("formats")
    assert result.returncode == 0
    assert result.stdout.startswith("pcml\t")


def test_the_package_runs_as_the_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pawlette", "formats"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == run("formats").stdout


def test_render_file_matches_golden() -> None:
    result = run("render", "-f", "pcml", str(GOLDEN / "input.json"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / "rendered.txt").read_text(encoding="utf-8")


def test_render_json_shows_segments_from_stdin() -> None:
    request = {"messages": [{"role": "user", "content": "Hi [SYS]"}]}
    result = run("render", "-f", "pcml", "--json", "--generation-prompt", stdin=json.dumps(request))
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["text"] == "[USR]Hi \\[SYS][/USR]\n\n[AST]"
    assert output["stop"] == ["<end>"]
    first = output["segments"][0]
    assert first == {
        "text": "[USR]",
        "special": True,
        "role": "user",
        "message_index": 0,
        "kind": "header",
        "trainable": False,
    }


def test_render_warns_of_each_loss_on_stderr() -> None:
    # Gemma's template writes no names: the text is rendered, and the loss told on stderr.
    request = {"messages": [{"role": "user", "name": "Alice", "content": "Hi"}]}
    result = run("render", "-f", "gemma", stdin=json.dumps(request))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "<bos><start_of_turn>user\nHi<end_of_turn>\n"
    assert result.stderr == (
        "pawlette render: warning: messages[0].name: not written "
        "(left out by the format, as its model's template does)\n"
    )


def test_render_json_lists_the_losses() -> None:
    request = {
        "messages": [
            {"role": "system", "content": ""},
            {"role": "user", "name": "Alice", "content": "Hi"},
        ]
    }
    result = run("render", "-f", "llama3", "--json", stdin=json.dumps(request))
    assert result.returncode == 0, result.stderr
    losses = json.loads(result.stdout)["losses"]
    assert losses == [
        "messages[0]: a system message with empty text, read back as none "
        "(its turn reads as one without it)",
        "messages[1].name: not written",
    ]
    assert result.stderr.splitlines() == [
        f"pawlette render: warning: {loss} (left out by the format, as its model's template does)"
        for loss in losses
    ]


def test_render_without_losses_warns_of_none() -> None:
    request = {"messages": [{"role": "user", "content": "Hi"}]}
    result = run("render", "-f", "pcml", "--json", stdin=json.dumps(request))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["losses"] == []
    assert result.stderr == ""


def test_parse_conversation_round_trips_the_seed() -> None:
    result = run("parse", "-f", "pcml", "--conversation", str(GOLDEN / "source.txt"))
    assert result.returncode == 0, result.stderr
    expected = json.loads((GOLDEN / "input.json").read_text(encoding="utf-8"))
    parsed = json.loads(result.stdout)
    assert parsed["tools"] == expected["tools"]
    assert parsed["messages"][2]["tool_calls"][0]["id"] == "call_abc123"
    assert len(parsed["messages"]) == 5


def test_parse_conversation_says_the_text_ends_with_the_prompt_or_a_prefill() -> None:
    request = json.dumps({"messages": [{"role": "user", "content": "Hi"}]})
    prompt = run("render", "-f", "chatml", "--generation-prompt", "-", stdin=request)
    assert prompt.returncode == 0, prompt.stderr
    result = run("parse", "-f", "chatml", "--conversation", "-", stdin=prompt.stdout)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "messages": [{"role": "user", "content": "Hi"}],
        "add_generation_prompt": True,
    }
    result = run("parse", "-f", "chatml", "--conversation", "-", stdin=prompt.stdout + "Hel")
    assert json.loads(result.stdout) == {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hel"},
        ],
        "continue_final_message": True,
    }


def test_parse_stream_prints_one_chunk_per_line() -> None:
    completion = (GOLDEN / "completion.txt").read_text(encoding="utf-8")
    result = run("parse", "-f", "pcml", "--stream", stdin=completion)
    assert result.returncode == 0, result.stderr
    chunks = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(chunks) > 5  # read in small pieces: many deltas
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert deltas[0] == {"role": "assistant", "content": ""}
    reasoning = "".join(delta.get("reasoning_content", "") for delta in deltas)
    assert reasoning.startswith("User wants to know")
    calls = [delta["tool_calls"][0] for delta in deltas if "tool_calls" in delta]
    assert calls[0]["id"] == "call_abc123" and calls[0]["function"]["name"] == "get_weather"
    arguments = "".join(call["function"]["arguments"] for call in calls)
    assert json.loads(arguments) == {"location": "Beijing", "unit": "celsius"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_parse_whole_completion() -> None:
    result = run("parse", "-f", "pcml", stdin="Hello<end>")
    assert json.loads(result.stdout) == {
        "message": {"role": "assistant", "content": "Hello"},
        "finish_reason": "stop",
    }


@pytest.mark.parametrize("stream", [False, True])
def test_parse_reads_a_completion_from_where_its_prompt_leaves_the_model(
    tmp_path: Path, stream: bool
) -> None:
    # DeepSeek V3.1's thinking prompt opens <think> after a user message, nothing after results.
    after_user = tmp_path / "user.txt"
    after_user.write_text("<｜User｜>Hi<｜Assistant｜><think>", encoding="utf-8")
    after_results = tmp_path / "results.txt"
    after_results.write_text("<｜tool▁output▁begin｜>18<｜tool▁output▁end｜>", encoding="utf-8")
    mode = ("--stream",) if stream else ()

    def read(prompt: Path, completion: str) -> dict[str, str]:
        arguments = ("parse", "-f", "deepseek:v3.1-thinking", "--prompt", str(prompt), *mode)
        result = run(*arguments, stdin=completion)
        assert result.returncode == 0, result.stderr
        if not stream:
            return {k: v for k, v in json.loads(result.stdout)["message"].items() if v}
        deltas = [json.loads(line)["choices"][0]["delta"] for line in result.stdout.splitlines()]
        fields = ("content", "reasoning_content")
        joined = {field: "".join(delta.get(field) or "" for delta in deltas) for field in fields}
        return {"role": "assistant", **{k: v for k, v in joined.items() if v}}

    assert read(after_user, "Hm.</think>18 °C.") == {
        "role": "assistant",
        "reasoning_content": "Hm.",
        "content": "18 °C.",
    }
    assert read(after_results, "18 °C.") == {"role": "assistant", "content": "18 °C."}


@pytest.mark.parametrize(
    ("arguments", "stdin", "message"),
    [
        (("render", "-f", "nope"), "[]", "format: found 'nope'; expected one of"),
        (("render", "-f", "pcml"), "{not json", "-: not valid JSON"),
        (("render", "-f", "pcml", "/no/such/file.json"), "", "cannot open"),
        (
            ("render", "-f", "pcml"),
            '[{"role": "user", "content": 3}]',
            "messages[0].content: found a number; expected an array",
        ),
        (
            ("parse", "-f", "pcml", "--strict"),
            "text [USR] more",
            "offset 5: marker '[USR]' in state 'assistant.head'",
        ),
        # Hostile requests (issue 14): each one line naming the place, never a traceback.
        (
            ("render", "-f", "pcml"),
            '{"messages": [{"role": "user", "content": "hi"}], "tool": [{"type": "function"}]}',
            "tool: an unknown key; expected a key of a chat-completions request",
        ),
        (
            ("render", "-f", "chatglm3"),
            '{"messages": [{"role": "user"}]}',
            "messages[0].content: missing",
        ),
        (
            ("render", "-f", "omni"),
            '{"messages": [{"role": "user", "content": "\\ud800"}]}',
            "messages[0].content: text with a lone surrogate U+D800",
        ),
        (
            ("render", "-f", "breeze"),
            '{"messages": [], "stop": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "-: not valid JSON (nested too deeply)",
        ),
        (
            ("render", "-f", "pcml"),
            '{"messages": [], "seed": ' + "7" * 5000 + "}",
            "-: not valid JSON (an integer too long to read)",
        ),
        (
            ("render", "-f", "pcml"),
            '{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", '
            '"function": {"name": "f", "parameters": {"a": NaN}}}]}',
            "tools[0].function.parameters.a: the number nan",
        ),
        (
            ("render", "-f", "breeze"),
            '{"messages": [{"role": "assistant", "tool_calls": [{"id": "1", "type": "function", '
            '"function": {"name": "f", "arguments": "{\\"a\\": ' + "9" * 5000 + '}"}}]}]}',
            "messages[0].tool_calls[0].function.arguments: not valid JSON (an integer too long",
        ),
    ],
)
def test_user_errors_are_one_line_and_status_2(
    arguments: tuple[str, ...], stdin: str, message: str
) -> None:
    result = run(*arguments, stdin=stdin)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_demo_runs_offline_and_shows_every_format() -> None:
    result = run("demo")
    assert result.returncode == 0, result.stderr
    import pawlette

    for name in pawlette.formats():
        assert f"\n{name}: " in result.stdout
    assert '"finish_reason": "tool_calls"' not in result.stdout  # the chunk JSON is compact
    assert "finish_reason=tool_calls" in result.stdout
    assert "DIFFERENT" not in result.stdout
    assert "\x1b[" not in result.stdout  # no colour when not a terminal
    # A format that renders the conversation but drops parts of it says which (Phi-3.5
    # writes no tools, calls or results).
    phi3 = result.stdout.split("\nphi3: ", 1)[1].split("\n\n", 1)[0]
    assert "(rendered with losses: " in phi3
    assert "tools: not written" in phi3 and "tool_calls: not written" in phi3


def test_the_demos_closing_hint_runs_as_printed(tmp_path: Path) -> None:
    """The demo's last line is a shell command: run in an empty directory (no request file
    there), with ``pawlette`` this interpreter's, it prints the request back."""
    result = run("demo")
    last = result.stdout.rstrip("\n").splitlines()[-1]
    assert last.startswith("Next: "), last
    command = last.removeprefix("Next: ")
    local = f"{shlex.quote(sys.executable)} -m pawlette"
    shell = subprocess.run(
        command.replace("pawlette ", local + " "),
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert shell.returncode == 0, shell.stderr
    assert json.loads(shell.stdout)["messages"][0]["role"] == "user"
    assert not list(tmp_path.iterdir())


def test_export_jinja_prints_a_template() -> None:
    result = run("export", "jinja", "-f", "pcml")
    assert result.returncode == 0, result.stderr
    assert "{%- generation -%}" in result.stdout


def test_export_jinja_frozen_reads_no_thinking_variable() -> None:
    from pawlette.export import export_jinja

    switched = run("export", "jinja", "-f", "glm:4.6-no-thinking")
    frozen = run("export", "jinja", "-f", "glm:4.6-no-thinking", "--frozen")
    assert switched.returncode == frozen.returncode == 0, switched.stderr + frozen.stderr
    assert switched.stdout == export_jinja("glm:4.6-no-thinking")
    assert "enable_thinking" in switched.stdout
    assert frozen.stdout == export_jinja("glm:4.6-no-thinking", frozen=True)
    assert "enable_thinking" not in frozen.stdout


def test_export_grammar_bundle_from_a_request_file(tmp_path: Path) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"messages": [], "tools": tools}), encoding="utf-8")
    result = run("export", "grammar", "-f", "pcml", "--tools", str(path), "--bundle")
    assert result.returncode == 0, result.stderr
    bundle = json.loads(result.stdout)
    assert bundle["stop"] == ["<end>"]
    assert '\\"name\\": \\"f\\"' in bundle["grammar"]


def test_serve_with_an_unknown_format_is_a_user_error() -> None:
    result = run("serve", "-f", "nope", "--upstream", "http://127.0.0.1:9")
    assert result.returncode == 2
    assert "format: found 'nope'" in result.stderr


def test_render_honours_add_generation_prompt_in_the_request() -> None:
    request = {"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": True}
    result = run("render", "-f", "pcml", stdin=json.dumps(request))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[USR]hi[/USR]\n\n[AST]"


def test_verify_checks_a_format_against_a_template_file(tmp_path: Path) -> None:
    from .declared.reference import reference_template

    template = tmp_path / "chat_template.jinja"
    template.write_text(reference_template("Qwen-Qwen2.5-7B-Instruct.jinja"), encoding="utf-8")
    result = run("verify", "-f", "chatml:qwen2.5", "-t", str(template))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("chatml:qwen2.5: 44/44 renders identical; 0 unexplained")
    # A declaration with the wrong separator after each turn: the first differences shown,
    # where the texts part, and status 1.
    wrong = tmp_path / "wrong_format.py"
    wrong.write_text(
        "import dataclasses\n"
        "import pawlette\n"
        "from pawlette.declare import declare, fence\n"
        "layout = pawlette.get_format('chatml:qwen2.5').declaration\n"
        "frames = {role: dataclasses.replace(frame, after=fence('\\n\\n'))"
        " for role, frame in layout.frames.items()}\n"
        "FORMAT = declare(dataclasses.replace(layout, name='wrong', frames=frames))\n",
        encoding="utf-8",
    )
    result = run("verify", "-f", str(wrong), "-t", str(template), "--conversations", "4")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("wrong: 0/8 renders identical; 8 unexplained differences")
    assert lines[1].startswith("own turns: ")
    assert lines[2] == "unexplained differences:"
    assert "the declaration wrote '" in lines[3] and "<|im_end|>\\n\\n<|im_start|>" in lines[3]
    assert lines[-1] == "  ... and 5 more"


def test_verify_fails_where_the_format_does_not_read_back_the_templates_turns(
    tmp_path: Path,
) -> None:
    from .declared.reference import reference_template
    from .test_verify import _calls_written_otherwise

    template = tmp_path / "chat_template.jinja"
    original = reference_template("Qwen-Qwen2.5-7B-Instruct.jinja")
    template.write_text(_calls_written_otherwise(original), encoding="utf-8")
    result = run("verify", "-f", "chatml:qwen2.5", "-t", str(template), "--conversations", "8")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("own turns: ") and " not read back" in lines[1]
    listed = result.stdout[result.stdout.index("own turns not read back:\n") :]
    assert "the template wrote the turn '<function_call>" in listed
    assert "read back: {" in listed and 'expected:  {"tool_calls": [' in listed


def test_verify_needs_a_template() -> None:
    result = run("verify", "-f", "chatml")
    assert result.returncode == 2
    assert result.stderr == (
        "pawlette verify: template: none given; expected -t FILE, a model directory, or both\n"
    )


# ------------------------------------------------------------------ --option


def test_an_option_is_read_as_its_declared_type() -> None:
    hello = json.dumps([{"role": "user", "content": "Hi"}])
    dated = run("render", "-f", "llama3", "--option", "date=2025-03-05", stdin=hello)
    assert dated.returncode == 0, dated.stderr
    assert "Today Date: 05 Mar 2025\n" in dated.stdout
    texts = run("render", "-f", "llama3", "--option", "date_string=1 Jan 2025", stdin=hello)
    assert "Today Date: 1 Jan 2025\n" in texts.stdout
    function = {"name": "f", "parameters": {"type": "object", "properties": {}}}
    request = {
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": function}],
    }
    option = "tools_in_user_message=false"
    apart = run("render", "-f", "llama3", "--option", option, stdin=json.dumps(request))
    together = run("render", "-f", "llama3", stdin=json.dumps(request))
    assert apart.returncode == together.returncode == 0, apart.stderr + together.stderr
    # Tools in the system turn, not the user's: the first user turn is the bare query.
    query = "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
    assert query in apart.stdout
    assert query not in together.stdout


SPELLING = (
    "On the command line: true, false, numbers and lists as JSON, null for None, a date as "
    "YYYY-MM-DD, text as it is\n"
)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            "tools_in_user_message=yes",
            "pawlette render: --option tools_in_user_message: 'yes' (str); expected True or "
            "False. " + SPELLING,
        ),
        (
            "date=5 March",
            "pawlette render: --option date: '5 March' (str); expected a datetime.date or None "
            "(the date llama3 writes, such as datetime.date(2024, 7, 26)). " + SPELLING,
        ),
        ("date", "pawlette render: --option: 'date'; expected NAME=VALUE\n"),
    ],
)
def test_an_option_of_the_wrong_type_is_refused_naming_it(option: str, message: str) -> None:
    result = run("render", "-f", "llama3", "--option", option, stdin="[]")
    assert result.returncode == 2
    assert result.stderr == message


def test_an_option_given_twice_is_refused() -> None:
    result = run("table", "-f", "glm", "--option", "version=4.7", "--option", "version=4.6")
    assert result.returncode == 2
    assert result.stderr == (
        "pawlette table: --option version: given twice; expected each option once\n"
    )


def test_options_reach_parse_and_the_exports() -> None:
    """A Literal of text takes its text (``4.7``, not the number); the exported template and
    the parse are the option's."""
    glm47 = run("export", "jinja", "-f", "glm", "--option", "version=4.7")
    glm46 = run("export", "jinja", "-f", "glm")
    assert glm47.returncode == glm46.returncode == 0, glm47.stderr + glm46.stderr
    assert glm47.stdout != glm46.stdout
    completion = (
        "</ifm|think><ifm|tool_calls>\n"
        '<ifm|tool_call>{"name": "f", "arguments": {"a": 1}}</ifm|tool_call>\n'
        "</ifm|tool_calls><|ifm|im_end|>"
    )
    parsed = run("parse", "-f", "ifm", "--option", "tool_call_format=json", stdin=completion)
    assert parsed.returncode == 0, parsed.stderr
    (call,) = json.loads(parsed.stdout)["message"]["tool_calls"]
    assert call["function"] == {"name": "f", "arguments": '{"a": 1}'}
    refused = run("export", "grammar", "-f", "glm", "--option", "thinking=0")
    assert refused.returncode == 2
    assert refused.stderr.startswith("pawlette export: --option thinking: '0' (str); expected ")
