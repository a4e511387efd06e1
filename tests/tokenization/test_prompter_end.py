"""The Prompter without a format learns an end of answer: the template's eoa, else the EOS."""

from __future__ import annotations

from pathlib import Path

import pytest

from pawlette import AlpacaPrompter, ChatPrompter
from pawlette.errors import RequestError
from pawlette.prompter import ChatMarkers
from pawlette.tokenization import IGNORE_INDEX, write_tokenizer_directory

from ..support.llama3 import llama3_tokenizer
from ..support.small_bpe import small_tokenizer


def learned(ids: list[int], labels: list[int]) -> list[int]:
    return [token for token, label in zip(ids, labels, strict=True) if label != IGNORE_INDEX]


def test_llama3_ends_the_answer_with_its_end_of_text() -> None:
    tokenizer = llama3_tokenizer()
    for prompter in (ChatPrompter("Be brief."), AlpacaPrompter("Add {input}")):
        result = prompter.tokenize(
            tokenizer, "1+1" if isinstance(prompter, ChatPrompter) else {"input": "1+1"}, label="2"
        )
        assert result.input_ids[-1] == result.labels[-1] == 128001  # <|end_of_text|>
        assert result.kinds[-1] == "end"
        assert tokenizer.decode(learned(result.input_ids, result.labels)) == "2"


def test_a_prepared_directory_gives_its_configured_eos(tmp_path: Path) -> None:
    prepared = write_tokenizer_directory("breeze", llama3_tokenizer(), tmp_path / "breeze")
    directory = prepared.directory
    result = ChatPrompter("Be brief.").tokenize(directory, "hi", label="hello")
    assert result.input_ids[-1] == 128009  # <|eot_id|>, the config's eos_token
    chosen = ChatPrompter("Be brief.").tokenize(
        directory, "hi", label="hello", eos_token="<|eom_id|>"
    )
    assert chosen.input_ids[-1] == 128008


def test_a_template_eoa_is_the_end_and_no_eos_is_added() -> None:
    tokenizer = small_tokenizer(())
    prompter = ChatPrompter("Be brief.", markers=ChatMarkers(assistant_close="<|end|>"))
    result = prompter.tokenize(tokenizer, "hi", label="hello")
    assert tokenizer.decode(learned(result.input_ids, result.labels)) == "hello<|end|>"
    assert "end" not in result.kinds


def test_no_end_of_sequence_is_refused() -> None:
    tokenizer = small_tokenizer(())
    with pytest.raises(
        RequestError, match=r"tokenizer: no end-of-sequence token .*never learns to stop"
    ):
        ChatPrompter("x").tokenize(tokenizer, "hi", label="yo")
    with pytest.raises(RequestError, match=r"eos_token: '<nope>'; expected a special token"):
        ChatPrompter("x").tokenize(tokenizer, "hi", label="yo", eos_token="<nope>")
    prompt = ChatPrompter("x").tokenize(tokenizer, "hi")  # a prompt alone needs no end
    assert set(prompt.labels) == {IGNORE_INDEX}
