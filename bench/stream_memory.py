"""Peak memory while streaming one big tool call, per call format and feed size.  Not a test.

Each case runs in a fresh process (``python -m bench.stream_memory --case FORMAT FEED MB``):
the completion (one call whose arguments are about MB megabytes of JSON text with escapes),
its token ids, the tokenizer's tables and the parser's tables are built first and a small
copy of the call is parsed once (so one-time caches are not counted; from ids, the whole
stream is fed once too, which fills the tokenizer's table of decoded ids for every id of
it: ordinary text meets thousands the small copy does not); memory freed so far is
handed back to the system (``malloc_trim``) and the resident set's peak is reset
(``/proc/self/clear_refs``); then the call is streamed, its events handed on and dropped.
Printed per case, over the input's size (its UTF-8 bytes, which is also its ``str`` size:
the text is ASCII):

- RSS: the growth of the peak resident set (``VmHWM``) over the resident set before
  streaming (not ``getrusage``'s ``ru_maxrss``: Linux keeps in it the peak of the image
  before ``exec``, the forked copy of the parent, which ``clear_refs`` does not reset);
- traced: tracemalloc's peak over a second run of the same stream (Python's own account of
  the most memory the stream's objects held at once);
- CPU seconds of the first run.

Feeds: ``1``, ``16``, ``4096`` characters at a time, ``whole`` (one ``feed``), ``ids``
(``IdParser``, one token id at a time, o200k_base with the format's markers added as special
tokens: see ``bench/peers.py``), and ``live16``: 16 characters at a time with
``stream_arguments=True`` (the arguments handed on as they come).  The others hold each call
until it is known valid, as a parser does by default, so its arguments are handed on in one
string at its end.  ``harmony`` is openai-harmony's ``StreamableParser`` on the
same arguments, one token at a time (the ``bench`` extra; Rust, so not traced).

Usage: python -m bench.stream_memory [--megabytes 4]
    [--formats pcml,chatml,breeze,chatglm3,llama3,omni]
    [--feeds 1,16,4096,whole,ids,live16] [--no-harmony] [--text code|ordinary]
    [--ending close|stop]

``--ending stop``: the completion as an engine sends it, cut at the format's first stop string
(the stop string removed): omni's call then ends with the output, not with its close marker
(``<|FUNCTION_RETURN|>`` is a stop string), as it does when served.

``--text ordinary``: the call's text is random words and numbers instead of a repeated line
of code (which compresses to almost nothing: what a reader keeps compressed, chatglm3's block
with ``live16``, costs next to nothing on the code text).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import functools
import gc
import json
import random
import string
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pawlette

FORMATS = ("pcml", "chatml", "breeze", "chatglm3", "llama3", "omni")
FEEDS = ("1", "16", "4096", "whole", "ids", "live16")
LINE = 'def store(path):\n    """Keep the "lorem ipsum" text \\ as written."""\n    return 1\n'


def arguments_text(megabytes: float, kind: str = "code") -> str:
    """The call's arguments: one JSON object of about ``megabytes`` MB, with escapes.

    ``kind``: ``code`` (one line of code repeated: compresses to almost nothing) or
    ``ordinary`` (random words, numbers, quotes and newlines: what zlib keeps a good part of).
    """
    size = int(megabytes * 1e6)
    if kind == "ordinary":
        body = _ordinary_text(size * 4 // 5)
    else:
        body = (LINE * (size // len(LINE) + 1))[: size * 4 // 5]
    return json.dumps({"path": "notes/lorem.py", "text": body, "lines": list(range(50))})


def _ordinary_text(size: int) -> str:
    """``size`` characters of random words (random letters), numbers and punctuation, with
    quotes, backslashes and newlines (escapes): text that does not compress well."""
    chooser = random.Random(size)
    letters = string.ascii_lowercase
    words: list[str] = []
    length = 0
    while length < size:
        roll = chooser.random()
        if roll < 0.1:
            word = str(chooser.randrange(10**6))
        elif roll < 0.13:
            word = chooser.choice(('"quoted"', "back\\slash", "line.\n", "tab\t"))
        else:
            word = "".join(chooser.choices(letters, k=chooser.randint(2, 10)))
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


ENDING = "close"
"""``close``: the completion as rendered; ``stop``: cut at its first stop string (``--ending``)."""


def completion(fmt: pawlette.Format, arguments: str) -> str:
    """What the model writes: the assistant turn holding one call with ``arguments`` (cut at
    the format's first stop string, as an engine sends it, when :data:`ENDING` is ``stop``)."""
    call = {"id": "call_1", "type": "function", "function": {"name": "store", "arguments": ""}}
    call["function"]["arguments"] = arguments
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    question = [{"role": "user", "content": "go"}]
    prompt = fmt.render(question, add_generation_prompt=True).text
    text = fmt.render([*question, message]).text[len(prompt) :]
    if ENDING == "stop":
        cuts = [index for index in (text.find(stop) for stop in fmt.stop) if index >= 0]
        text = text[: min(cuts, default=len(text))]
    return text


@functools.cache
def o200k_tokenizer(fmt: pawlette.Format) -> Any:
    """o200k_base as a ``tokenizers.Tokenizer`` with ``fmt``'s markers as special tokens
    (one per process: an ``IdParser``'s tables are built once per tokenizer)."""
    from tokenizers import Tokenizer

    from bench.peers import O200K_PATTERN, cache_directory, o200k_file
    from pawlette.tokenization import tokenizer_from_tiktoken

    cached = cache_directory() / "harmony" / f"o200k_{fmt.name}.json"
    if cached.is_file():
        return Tokenizer.from_file(str(cached))
    tokenizer = tokenizer_from_tiktoken(
        o200k_file(),
        pattern=O200K_PATTERN,
        special_tokens={
            marker: 201_000 + number for number, marker in enumerate(fmt.special_markers)
        },
    )
    tokenizer.save(str(cached))
    return tokenizer


def _streamer(name: str, feed: str, text: str, arguments: str) -> Callable[[], None]:
    """A function streaming ``text`` (or its ids) through a fresh parser, events dropped."""
    if name == "harmony":
        from openai_harmony import Role, StreamableParser

        from bench.peers import harmony_encoding

        encoding = harmony_encoding()
        turn = (
            "<|channel|>commentary to=functions.store <|constrain|>json<|message|>"
            f"{arguments}<|call|>"
        )
        harmony_ids = encoding.encode(turn, allowed_special="all")

        def harmony() -> None:
            parser = StreamableParser(encoding, role=Role.ASSISTANT)
            for token in harmony_ids:
                parser.process(token)
                parser.last_content_delta  # noqa: B018  (what a server reads per token)

        return harmony
    fmt = pawlette.get_format(name)
    if feed == "ids":
        from pawlette.tokenization import IdParser

        tokenizer = o200k_tokenizer(fmt)
        ids = tokenizer.encode(text, add_special_tokens=False).ids

        def by_ids() -> None:
            parser = IdParser(fmt, tokenizer)
            for token in ids:
                parser.feed_ids((token,))
            parser.finish()

        return by_ids
    if feed == "whole":

        def whole() -> None:
            parser = fmt.parser()
            parser.feed(text)
            parser.finish()

        return whole
    live = feed.startswith("live")
    piece = int(feed.removeprefix("live"))

    def pieces() -> None:
        parser = fmt.parser(stream_arguments=live)
        for position in range(0, len(text), piece):
            parser.feed(text[position : position + piece])
        parser.finish()

    return pieces


def _status(field: str) -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise SystemExit(f"no {field} in /proc/self/status")


def _check(name: str, text: str, arguments: str) -> None:
    """The stream parses to the one call (so the numbers are of a real parse)."""
    if name == "harmony":
        return
    calls = pawlette.get_format(name).parse(text).message.get("tool_calls") or []
    if len(calls) != 1 or json.loads(calls[0]["function"]["arguments"]) != json.loads(arguments):
        raise SystemExit(f"bench.stream_memory: {name} did not parse the call back")


def measure(name: str, feed: str, megabytes: float, kind: str = "code") -> dict[str, float]:
    """One case, in this (fresh) process: see the module docstring."""
    small_arguments = arguments_text(0.05, kind)
    arguments = arguments_text(megabytes, kind)
    fmt = None if name == "harmony" else pawlette.get_format(name)
    small = "" if fmt is None else completion(fmt, small_arguments)
    text = "" if fmt is None else completion(fmt, arguments)
    _check(name, small, small_arguments)
    _streamer(name, feed, small, small_arguments)()  # tables and caches, built once
    stream = _streamer(name, feed, text, arguments)
    if feed == "ids" and fmt is not None:
        # The tokenizer's table of decoded ids (one per format and tokenizer, kept across
        # parsers, bounded by the vocabulary) fills as new ids come: a one-time cost, like
        # the other tables, which the small copy does not fill for every id of the big one.
        stream()
    size = len((text or arguments).encode())
    del small, small_arguments
    gc.collect()
    # Memory freed while building the input stays in malloc's heap, where the stream would
    # reuse it unseen: give it back first, so the resident set's growth is the stream's own.
    ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")  # resets VmHWM to the current resident set
    before = _status("VmRSS")
    started = time.process_time()
    stream()
    cpu = time.process_time() - started
    peak = _status("VmHWM")
    traced = -1
    if name != "harmony":
        tracemalloc.start()
        stream()
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {"size": size, "rss": peak - before, "traced": traced, "cpu": cpu}


def table(
    formats: list[str], feeds: list[str], megabytes: float, harmony: bool, kind: str = "code"
) -> None:
    """Each case in a fresh process; one row per case."""
    print(
        f"peak memory streaming one {megabytes:g} MB tool call ({kind} text, ending at its"
        f" {ENDING}; growth over the"
        " input already in memory; events handed on, not kept)"
    )
    print(
        f"  {'format':8}{'feed':>7}{'input MB':>10}{'RSS MB':>9}{'RSS/input':>11}"
        f"{'traced MB':>11}{'traced/input':>14}{'CPU s':>8}"
    )
    cases = [(name, feed) for name in formats for feed in feeds]
    if harmony:
        cases.append(("harmony", "ids"))
    for name, feed in cases:
        command = [sys.executable, "-m", "bench.stream_memory", "--case", name, feed]
        command += [str(megabytes), "--text", kind, "--ending", ENDING]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["failed"])[-1]
            print(f"  {name:8}{feed:>7}  ({reason})")
            continue
        result = json.loads(done.stdout)
        size, rss, traced = result["size"], result["rss"], result["traced"]
        traced_columns = (
            f"{'-':>11}{'':>14}" if traced < 0 else f"{traced / 1e6:>11.2f}{traced / size:>14.2f}"
        )
        print(
            f"  {name:8}{feed:>7}{size / 1e6:>10.2f}{rss / 1e6:>9.2f}{rss / size:>11.2f}"
            f"{traced_columns}{result['cpu']:>8.2f}",
            flush=True,
        )


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--megabytes", type=float, default=4.0)
    options.add_argument("--formats", default=",".join(FORMATS))
    options.add_argument("--feeds", default=",".join(FEEDS))
    options.add_argument("--no-harmony", dest="harmony", action="store_false")
    options.add_argument("--text", choices=("code", "ordinary"), default="code")
    options.add_argument("--ending", choices=("close", "stop"), default="close")
    options.add_argument("--case", nargs=3, metavar=("FORMAT", "FEED", "MB"))
    arguments = options.parse_args()
    global ENDING
    ENDING = arguments.ending
    if arguments.case:
        name, feed, megabytes = arguments.case
        print(json.dumps(measure(name, feed, float(megabytes), arguments.text)))
        return 0
    table(
        arguments.formats.split(","),
        arguments.feeds.split(","),
        arguments.megabytes,
        arguments.harmony,
        arguments.text,
    )
    return 0


if __name__ == "__main__":
    from bench import pages

    PAGE = pages.Page(
        measure="stream-memory",
        title="Peak memory streaming one big tool call",
        what=(
            "One call whose arguments are 3.7 MB of JSON text, streamed through each format's "
            "parser at several feed sizes (1, 16 and 4096 characters, the whole text, token "
            "ids one at a time, and 16 characters with live arguments), each case in a fresh "
            "process. RSS is the growth of the process's peak resident set over the input's "
            "UTF-8 size; traced is tracemalloc's peak (Python's allocator only)."
        ),
        peer="openai-harmony's `StreamableParser` on the same arguments, one token at a time",
    )
    sys.exit(pages.run(main, PAGE))
