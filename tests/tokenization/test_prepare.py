"""pawlette tokenizer prepare: markers as special tokens, a directory transformers loads."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

import pawlette
import pawlette.export
from pawlette.cli import main
from pawlette.errors import RequestError, TokenizerMismatch, UnsupportedFeature
from pawlette.tokenization import (
    IGNORE_INDEX,
    add_markers,
    prepare_tokenizer,
    tokenize,
    write_tokenizer_directory,
)

from ..support.llama3 import llama3_tokenizer
from ..support.small_bpe import small_tokenizer
from .support import call_ids

BREEZE = pawlette.get_format("breeze")
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Hi, 你好!"},
    {"role": "assistant", "content": "Hello! How can I help?"},
    {"role": "user", "content": "Nothing."},
    {"role": "assistant", "content": "Bye."},
]


@pytest.fixture(scope="module")
def llama3_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("base") / "tokenizer.json"
    llama3_tokenizer().save(str(path))
    return path


def test_breeze_on_llama3_keeps_meta_ids_and_adds_the_rest(llama3_base: Path) -> None:
    tokenizer = prepare_tokenizer(BREEZE, llama3_base)
    assert tokenizer.token_to_id("<|eot_id|>") == 128009  # Llama 3's own
    assert tokenizer.token_to_id("<|use_tool|>") == 128256  # new, after the vocabulary
    added = tokenizer.get_added_tokens_decoder()
    assert all(added[tokenizer.token_to_id(m)].special for m in BREEZE.special_markers)
    assert llama3_tokenizer().token_to_id("<|use_tool|>") is None  # the base is unchanged


def test_the_directory_loads_offline_in_transformers(
    llama3_base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transformers

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    prepared = write_tokenizer_directory(BREEZE, llama3_base, tmp_path / "breeze")
    assert prepared.chat_template and prepared.note == ""
    assert prepared.stop_ids == (128009, 128008)
    loaded = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "breeze"))
    assert loaded.eos_token == "<|eot_id|>"
    assert len(loaded) == 128256 + len(prepared.added)
    generation = json.loads((tmp_path / "breeze" / "generation_config.json").read_text())
    assert generation == {
        "eos_token_id": [128009, 128008],
        "bos_token_id": 128000,
        "pad_token_id": 128004,
    }
    # Llama 3's own beginning of text and padding (3.1's fine-tuning pad), not the eos.
    assert (loaded.bos_token, loaded.pad_token) == (
        "<|begin_of_text|>",
        "<|finetune_right_pad_id|>",
    )
    assert (prepared.base_size, prepared.vocabulary_size) == (128256, len(loaded))

    ours = tokenize(BREEZE, tmp_path / "breeze", MESSAGES)
    text = BREEZE.render(MESSAGES).text
    assert loaded.apply_chat_template(MESSAGES, tokenize=False) == text
    assert loaded(text, add_special_tokens=False)["input_ids"] == ours.input_ids
    theirs = loaded.apply_chat_template(
        MESSAGES, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    assert theirs["input_ids"] == ours.input_ids
    assert theirs["assistant_masks"] == [int(label != IGNORE_INDEX) for label in ours.labels]


def test_omni_markers_get_ids_in_order_and_its_template(tmp_path: Path) -> None:
    omni = pawlette.get_format("omni")
    prepared = write_tokenizer_directory(omni, small_tokenizer(()), tmp_path / "omni")
    config = json.loads((tmp_path / "omni" / "tokenizer_config.json").read_text())
    assert config["eos_token"] == "<|ASSISTANT_END|>"
    assert prepared.chat_template == ("chat_template" in config)
    assert [marker for marker, _ in prepared.added] == list(omni.special_markers)
    first = prepared.added[0][1]
    assert [token_id for _, token_id in prepared.added] == list(
        range(first, first + len(omni.special_markers))
    )


def test_bos_and_pad_come_from_the_base_config_when_there_is_one(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    tokenizer = add_markers(small_tokenizer(()), ["<s>", "<unk>"], owner="the base")
    tokenizer.save(str(base / "tokenizer.json"))
    config = {"bos_token": {"content": "<s>"}, "pad_token": "<unk>"}
    (base / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    prepared = write_tokenizer_directory("pcml", base, tmp_path / "out")
    assert (prepared.bos_token, prepared.pad_token) == ("<s>", "<unk>")
    assert prepared.vocabulary_size - prepared.base_size == len(prepared.added)  # no new pad
    written = json.loads((tmp_path / "out" / "tokenizer_config.json").read_text())
    assert (written["bos_token"], written["pad_token"]) == ("<s>", "<unk>")
    (base / "tokenizer_config.json").unlink()
    again = write_tokenizer_directory("pcml", base, tmp_path / "again")
    assert (again.bos_token, again.pad_token) == ("<s>", "<|pad|>")  # <s> by its spelling


@pytest.mark.parametrize(
    ("single", "sequence", "bos"),
    [
        ("[CLS] $A", False, "[CLS]"),
        ("[CLS] $A", True, "[CLS]"),  # inside a Sequence of processors, as Llama 3's
        ("$A [CLS]", False, None),  # the text comes first: no beginning of sequence
    ],
)
def test_bos_comes_from_the_base_post_processor_without_a_config(
    tmp_path: Path, single: str, sequence: bool, bos: str | None
) -> None:
    from tokenizers import processors

    # A token no spelling rule knows, so only the post-processor can name it.
    tokenizer = add_markers(small_tokenizer(()), ["[CLS]"], owner="the base")
    template = processors.TemplateProcessing(
        single=single, special_tokens=[("[CLS]", tokenizer.token_to_id("[CLS]"))]
    )
    tokenizer.post_processor = (
        processors.Sequence([processors.ByteLevel(), template]) if sequence else template
    )
    prepared = write_tokenizer_directory("pcml", tokenizer, tmp_path / "out")
    assert prepared.bos_token == bos
    written = json.loads((tmp_path / "out" / "tokenizer_config.json").read_text())
    assert written.get("bos_token") == bos


@pytest.mark.parametrize(
    ("data", "found"), [(b"\xff\xfe", "unreadable JSON"), (b"[]", "a list"), (b"{", "unreadable")]
)
def test_a_damaged_base_config_is_an_error_not_a_guess(
    tmp_path: Path, data: bytes, found: str
) -> None:
    base = tmp_path / "base"
    base.mkdir()
    add_markers(small_tokenizer(()), ["<s>"], owner="the base").save(str(base / "tokenizer.json"))
    (base / "tokenizer_config.json").write_bytes(data)
    with pytest.raises(RequestError, match=f"tokenizer_config.json: {found}"):
        write_tokenizer_directory("pcml", base, tmp_path / "out")


def test_a_format_without_a_template_is_written_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_template(format_name: str) -> str:
        raise UnsupportedFeature("format", f"{format_name!r}", "a format with a template")

    monkeypatch.setattr(pawlette.export, "export_jinja", no_template)
    prepared = write_tokenizer_directory("pcml", small_tokenizer(()), tmp_path / "pcml")
    assert not prepared.chat_template and "no chat template" in prepared.note
    config = json.loads((tmp_path / "pcml" / "tokenizer_config.json").read_text())
    assert "chat_template" not in config


def test_a_marker_the_vocabulary_holds_is_refused() -> None:
    base = small_tokenizer(())
    word = next(t for t in ("the", "and", "is", "of") if base.token_to_id(t) is not None)
    with pytest.raises(TokenizerMismatch, match=f"'{word}' of the test is the ordinary token"):
        add_markers(base, ["<new>", word], owner="the test")


def test_prepare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "base.json"
    small_tokenizer(()).save(str(base))
    status = main(
        ["tokenizer", "prepare", "-f", "pcml", "--base", str(base), "-o", str(tmp_path / "d")]
    )
    assert status == 0
    out = capsys.readouterr().out
    assert "added special tokens: [SYS] 2000," in out and "chat template: included" in out
    assert "pad_token: <|pad|> (new: the base has no padding token)" in out
    assert "bos_token: none (the base has none)" in out
    grown = len(pawlette.get_format("pcml").special_markers) + 1
    assert f"the vocabulary grew by {grown} tokens, from 2,000 to {2000 + grown:,}:" in out
    assert f"model.resize_token_embeddings({2000 + grown})" in out
    assert (tmp_path / "d" / "tokenizer.json").is_file()
    missing = main(
        ["tokenizer", "prepare", "-f", "pcml", "--base", str(tmp_path / "nope.json"), "-o", "x"]
    )
    assert missing == 2
    assert "no such file" in capsys.readouterr().err


FILE_FORMAT = """
from pawlette.declare import Frame, Layout, Marker, declare, fence

FORMAT = declare(
    Layout(
        name="from-a-file",
        summary="a format declared in a file",
        frames={
            "user": Frame(open=fence(Marker("<u>")), end=fence(Marker("</u>"))),
            "assistant": Frame(open=fence(Marker("<a>")), end=fence(Marker("</a>"))),
        },
    )
)
"""


def test_prepare_command_takes_a_format_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base.json"
    small_tokenizer(()).save(str(base))
    declared = tmp_path / "my_format.py"
    declared.write_text(FILE_FORMAT)
    status = main(
        [
            "tokenizer",
            "prepare",
            "-f",
            str(declared),
            "--base",
            str(base),
            "-o",
            str(tmp_path / "d"),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0, capsys.readouterr().err
    assert "added special tokens: <u> 2000, </u> 2001, <a> 2002, </a> 2003" in out
    assert "chat template: included" in out
    config = json.loads((tmp_path / "d" / "tokenizer_config.json").read_text())
    assert "<u>" in config["chat_template"]


def test_a_tokenizer_without_the_markers_names_the_command_to_add_them(tmp_path: Path) -> None:
    declared = tmp_path / "my_format.py"
    declared.write_text(FILE_FORMAT)
    fmt = pawlette.get_format(str(declared))
    with pytest.raises(TokenizerMismatch, match=r"prepare -f YOUR_FORMAT\.py --base"):
        tokenize(fmt, small_tokenizer(()), [{"role": "user", "content": "hi"}])
    with pytest.raises(TokenizerMismatch, match=r"prepare -f pcml --base"):
        tokenize("pcml", small_tokenizer(()), [{"role": "user", "content": "hi"}])


# ------------------------------------------------------------------ every golden case


class PreparedDirectories:
    """Llama 3 prepared for a format, written as a directory when a test first asks for it
    (each test process writes only the formats it tests).  The base is the tokenizer already
    loaded, not its file: reading a 128k-token tokenizer.json again costs a second a format."""

    def __init__(self, base: Tokenizer, folder: Path) -> None:
        self.base, self.folder, self.written = base, folder, dict[str, Path]()

    def __getitem__(self, name: str) -> Path:
        if name not in self.written:
            target = self.folder / name
            self.written[name] = write_tokenizer_directory(name, self.base, target).directory
        return self.written[name]


@pytest.fixture(scope="module")
def prepared_directories(tmp_path_factory: pytest.TempPathFactory) -> PreparedDirectories:
    return PreparedDirectories(llama3_tokenizer(), tmp_path_factory.mktemp("prepared"))


# Golden cases where transformers' tokenized template and pawlette deliberately differ:
# - escapes: user text spells the format's markers; transformers encodes the rendered text
#   whole, so the spelled marker becomes the control token (an injection); pawlette keeps it
#   text;
# - omni calls_in_sequence: a tool result inside the assistant turn ends with "\n" where a
#   completion prompt ends; the model's own output starts with "\n" after it. pawlette encodes
#   the two apart ("\n" | "\n", what the model sees and produces at inference); transformers
#   encodes "\n\n" as one token the model never sees there.
# - deepseek_dsml chat, system_prompt, tools_then_answer: a past answer opens with "</think>",
#   the stand-in for the generation prompt's "<think></think>", where the model starts
#   writing.  pawlette encodes the answer apart from it ("</think>" | "Hello", what the model
#   sees and produces after that prompt); transformers encodes the text whole, and Llama 3's
#   pre-tokenizer joins the ">" to the answer (">Hello", ">\n\n"), a token the model never
#   writes there.
# - bielik tool_round, tools_then_answer: a turn of calls alone starts "\n<tool_call>" after
#   the opener's "assistant\n"; pawlette encodes the two "\n" apart (the prompt ends with the
#   first, the model writes the second), transformers encodes "\n\n" as one token.
# - minimax_m2 tool_round and tools_then_answer: a turn of calls without text begins with
#   "\n" after the turn's "]~b]ai\n"; pawlette encodes the opener apart (the model writes
#   from there), transformers encodes "\n\n" as one token.
# - apriel tool_round, tools_then_answer: a turn of calls alone starts "\n<tool_calls>" after
#   the opener's "<|assistant|>\n"; as bielik's.
# (chatglm3's ids are build_chat_input's, piece by piece: checked apart, see below.)
DIFFERENT = {
    ("pcml", "escapes"),
    ("omni", "escapes"),
    ("omni", "calls_in_sequence"),
    ("deepseek_dsml", "chat"),
    ("deepseek_dsml", "system_prompt"),
    ("deepseek_dsml", "tools_then_answer"),
    ("bielik", "tool_round"),
    ("bielik", "tools_then_answer"),
    ("minimax_m2", "tool_round"),
    ("minimax_m2", "tools_then_answer"),
    ("apriel", "tool_round"),
    ("apriel", "tools_then_answer"),
}


@pytest.mark.sampled
@pytest.mark.parametrize("name", pawlette.formats())
def test_prepared_directories_render_every_golden_case(
    name: str, prepared_directories: PreparedDirectories, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transformers

    from ..export.support import golden_cases, load_case, request_parts, template_messages

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    directory = prepared_directories[name]
    loaded = transformers.AutoTokenizer.from_pretrained(str(directory))
    fmt = pawlette.get_format(name)
    control = {loaded.convert_tokens_to_ids(marker) for marker in fmt.special_markers}
    checked = 0
    for case in golden_cases(name):
        data = load_case(case)
        prompt = bool(data.get("add_generation_prompt", False))
        messages, tools = request_parts(data)
        if not messages:
            continue  # apply_chat_template refuses an empty conversation
        inputs = template_messages(name, messages)
        text = loaded.apply_chat_template(
            inputs, tools=tools, add_generation_prompt=prompt, tokenize=False
        )
        assert text == (case / "rendered.txt").read_text(encoding="utf-8"), case.name
        theirs = loaded.apply_chat_template(
            inputs,
            tools=tools,
            add_generation_prompt=prompt,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        # The directory's tokenizer as transformers loaded it (the path itself is tested
        # above; loading the file again per format would only repeat that).
        ours = tokenize(fmt, loaded, data, add_generation_prompt=prompt)
        assert loaded.decode(ours.input_ids) == text, case.name
        mask = [int(label != IGNORE_INDEX) for label in ours.labels]
        same = theirs["input_ids"] == ours.input_ids and theirs["assistant_masks"] == mask
        if fmt.encode_cuts is not None:
            # ChatGLM3's build_chat_input encodes "{metadata}\n" and the content with calls of
            # their own (Format.encode_cuts), where transformers encodes the text whole.
            rendering = fmt.render(data, add_generation_prompt=prompt)
            expected = call_ids(fmt, loaded.backend_tokenizer, rendering)
            assert ours.input_ids == expected, case.name
        else:
            assert same == ((name, case.name) not in DIFFERENT), case.name
        if case.name == "escapes":
            injected = sum(token in control for token in theirs["input_ids"])
            assert injected > sum(token in control for token in ours.input_ids)
        if name == "deepseek_dsml" and (name, case.name) in DIFFERENT:
            # The same text; after the stand-in "</think>" theirs join its ">" to the
            # answer, which ours keep apart (the tools instructions' "</think>\n\n" is
            # encoded whole by both).
            def closes(ids: list[int]) -> Counter[str]:
                tokens = loaded.convert_ids_to_tokens(ids)
                return Counter(
                    tokens[i + 2]
                    for i in range(len(tokens) - 2)
                    if tokens[i : i + 2] == ["</", "think"]
                )

            assert ">" in closes(ours.input_ids)
            assert closes(theirs["input_ids"]) - closes(ours.input_ids)
        if case.name == "calls_in_sequence":
            newline = loaded.convert_tokens_to_ids("Ċ")
            two = loaded.convert_tokens_to_ids("ĊĊ")
            assert len(ours.input_ids) == len(theirs["input_ids"]) + 1
            assert theirs["input_ids"].count(two) == ours.input_ids.count(two) + 1
            assert ours.input_ids.count(newline) == theirs["input_ids"].count(newline) + 2
        checked += 1
    assert checked >= 5
