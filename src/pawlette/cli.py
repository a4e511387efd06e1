"""The ``pawlette`` command line.

User errors print one line on stderr and exit with status 2; no tracebacks.  A request file
is checked like a request to the server: an unknown top-level key (``"tool"`` for ``"tools"``),
text with a lone surrogate, ``NaN``, an integer too long to print, JSON nested too deeply, are
each one line naming the JSON path (see :mod:`pawlette.json_values`).
"""

from __future__ import annotations

import argparse
import codecs
import functools
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from .errors import PawletteError, RequestError, UnsupportedFeature
from .format import Format
from .formats import formats, get_format
from .json_values import MAX_JSON_DEPTH
from .serve.chunks import ChunkStream

STREAM_PIECE_BYTES = 16  # small pieces, so --stream shows the parser working incrementally
OPTION_SPELLING = (
    "On the command line: true, false, numbers and lists as JSON, null for None, a date as "
    "YYYY-MM-DD, text as it is"
)
"""How ``--option`` values are spelled (:mod:`pawlette.option_text`), said with a refusal."""


class UserError(Exception):
    """A problem with the command line or its input: one line, exit status 2."""


def _open_binary(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as error:
        raise UserError(f"{path}: cannot open ({error.strerror})") from error


def _read_text(path: str) -> str:
    handle = _open_binary(path)
    try:
        return handle.read().decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"{path}: not UTF-8 ({error.reason} at byte {error.start})") from error
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def _read_json(path: str) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from error
    except ValueError as error:  # an integer beyond what Python reads (4,300 digits)
        raise UserError(f"{path}: not valid JSON (an integer too long to read)") from error
    except RecursionError as error:
        raise UserError(
            f"{path}: not valid JSON (nested too deeply); expected at most {MAX_JSON_DEPTH} levels"
        ) from error


def _pieces(path: str) -> Iterator[str]:
    """The input decoded incrementally, a few bytes at a time (UTF-8 splits are held)."""
    handle = _open_binary(path)
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        while True:
            data = (
                handle.read1(STREAM_PIECE_BYTES)
                if hasattr(handle, "read1")
                else handle.read(STREAM_PIECE_BYTES)
            )
            if not data:
                break
            text = decoder.decode(data)
            if text:
                yield text
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail
    except UnicodeDecodeError as error:
        raise UserError(f"{path}: not UTF-8 ({error.reason})") from error
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


# ------------------------------------------------------------------ commands


def command_formats(arguments: argparse.Namespace) -> int:
    for name in formats():
        sys.stdout.write(f"{name}\t{get_format(name).summary}\n")
    return 0


def _format(arguments: argparse.Namespace) -> Format:
    """The format ``-f`` names, with the options ``--option NAME=VALUE`` gives (each read
    as its declared type takes it: :mod:`pawlette.option_text`)."""
    fmt = get_format(arguments.format)
    given = getattr(arguments, "option", None)
    if not given:
        return fmt
    from .option_text import options_from_text, split_option

    texts: dict[str, str] = {}
    for argument in given:
        try:
            name, text = split_option(argument)
        except RequestError as error:
            raise UserError(str(error)) from error
        if name in texts:
            raise UserError(f"--option {name}: given twice; expected each option once")
        texts[name] = text
    try:
        return fmt.with_options(**options_from_text(fmt.options, texts))
    except RequestError as error:
        where = error.path.removeprefix("options.")
        raise UserError(
            f"--option {where}: {error.found}; expected {error.expected}. {OPTION_SPELLING}"
            if error.path.startswith("options.")
            else f"--option: {error.found}; expected {error.expected}"
        ) from error


def _format_or_name(arguments: argparse.Namespace) -> Format | str:
    """``-f`` as given when no ``--option`` is (the exports and ``verify`` name it so, a
    variant by its ``NAME:VARIANT``), else the format with the options."""
    return _format(arguments) if getattr(arguments, "option", None) else str(arguments.format)


def warn_losses(command: str, losses: Sequence[str]) -> None:
    """Each loss of a rendering (:attr:`pawlette.types.Rendering.losses`) as a warning line
    on stderr: its JSON path, what the format did with it, and why (the wording of
    ``pawlette tokenize``'s summary)."""
    from .tokenization.losses import LEFT_OUT

    for loss in losses:
        sys.stderr.write(f"pawlette {command}: warning: {loss} ({LEFT_OUT})\n")


def command_render(arguments: argparse.Namespace) -> int:
    fmt = _format(arguments)
    request = _read_json(arguments.file)
    # vLLM's request key says the same as --generation-prompt (either asks for it); it is
    # checked (a boolean) with the rest of the request.
    in_request = isinstance(request, dict) and request.get("add_generation_prompt") is True
    prompt = arguments.generation_prompt or in_request
    rendering = fmt.render(request, add_generation_prompt=prompt)
    warn_losses("render", rendering.losses)
    if arguments.json:
        _print_json(
            {
                "text": rendering.text,
                "segments": [
                    {
                        "text": segment.text,
                        "special": segment.special,
                        "role": segment.role,
                        "message_index": segment.message_index,
                        "kind": segment.kind,
                        "trainable": segment.trainable,
                    }
                    for segment in rendering.segments
                ],
                "stop": list(fmt.stop),
                "losses": list(rendering.losses),
            }
        )
    else:
        sys.stdout.write(rendering.text)
        if sys.stdout.isatty():
            sys.stdout.write("\n")
    return 0


def command_parse(arguments: argparse.Namespace) -> int:
    fmt = _format(arguments)
    prompt = None if arguments.prompt is None else _read_text(arguments.prompt)
    if arguments.conversation:
        if prompt is not None:
            raise UserError("--prompt: given with --conversation; expected a completion to read")
        parsed = fmt.parse_conversation(_read_text(arguments.file), strict=arguments.strict)
        result = parsed.to_request()
        if parsed.warnings:
            result["warnings"] = [warning.message for warning in parsed.warnings]
        if parsed.losses:
            result["losses"] = list(parsed.losses)
        # (vLLM's request fields of the same names: the output stays a request body)
        if parsed.add_generation_prompt:
            result["add_generation_prompt"] = True
        if parsed.continue_final_message:
            result["continue_final_message"] = True
        _print_json(result)
        return 0
    if arguments.stream:
        parser = fmt.parser(strict=arguments.strict, prompt=prompt)
        stream = ChunkStream(model=fmt.name)
        for piece in _pieces(arguments.file):
            for chunk in stream.chunks(parser.feed(piece)):
                sys.stdout.write(json.dumps(chunk, ensure_ascii=False) + "\n")
                sys.stdout.flush()
        for chunk in stream.chunks(parser.finish()):
            sys.stdout.write(json.dumps(chunk, ensure_ascii=False) + "\n")
        return 0
    completion = fmt.parse(_read_text(arguments.file), strict=arguments.strict, prompt=prompt)
    output: dict[str, Any] = {
        "message": completion.message,
        "finish_reason": completion.finish_reason,
    }
    if completion.warnings:
        output["warnings"] = [warning.message for warning in completion.warnings]
    _print_json(output)
    return 0


def command_table(arguments: argparse.Namespace) -> int:
    from .state_table import table_text

    sys.stdout.write(table_text(_format(arguments)))
    return 0


def command_serve(arguments: argparse.Namespace) -> int:
    from .serve.config import config_from_arguments, run_config

    return run_config(config_from_arguments(arguments))


def command_export_jinja(arguments: argparse.Namespace) -> int:
    from .export import export_jinja

    sys.stdout.write(export_jinja(_format_or_name(arguments), frozen=arguments.frozen))
    return 0


def command_export_grammar(arguments: argparse.Namespace) -> int:
    from .export import export_grammar, export_grammar_bundle

    tools = _read_json(arguments.tools) if arguments.tools else None
    if isinstance(tools, dict) and "tools" in tools:
        tools = tools["tools"]  # a whole request is fine too
    # As typed: a name that is neither a mode nor a tool is then told as a misspelt mode too.
    choice: str = arguments.tool_choice
    fmt = _format_or_name(arguments)
    request = (fmt, tools, choice, arguments.parallel, arguments.syntax)
    as_text = bool(arguments.markers_as_text)
    token_ids = _marker_ids(fmt, arguments.tokenizer) if arguments.tokenizer else None

    def export(as_text: bool) -> str:
        if arguments.bundle:
            bundle = export_grammar_bundle(*request, token_ids=token_ids, markers_as_text=as_text)
            return json.dumps(bundle, ensure_ascii=False, indent=2)
        return export_grammar(*request, token_ids=token_ids, markers_as_text=as_text)

    try:
        try:
            output = export(as_text)
        except UnsupportedFeature as error:
            if error.path != "markers" or as_text or token_ids is not None:
                raise
            # A marker that a grammar names as a special token by its id alone (Mistral's
            # [TOOL_CALLS]), and no tokenizer to give the ids: markers as text, said on stderr.
            sys.stderr.write(
                f"pawlette: {error.found}: the grammar spells the markers as text (as "
                "--markers-as-text does); give --tokenizer, the model's tokenizer, to name them "
                "as its special tokens\n"
            )
            output = export(True)
    except ValueError as error:  # a schema the grammar cannot write (its place and why)
        if isinstance(error, RequestError) and error.path.startswith("tool_choice"):
            said = str(error).removeprefix(f"{error.path}: ")  # named by its option instead
            raise UserError(f"--tool-choice: {said}") from error
        raise UserError(f"--tools: {error}") from error
    sys.stdout.write(output if output.endswith("\n") else output + "\n")
    return 0


def _marker_ids(fmt: Format | str, tokenizer: str) -> dict[str, int]:
    """Each marker of the format and its id in ``tokenizer`` (a tokenizer.json or a model or
    tokenizer directory), as ``pawlette serve --tokenizer`` finds them."""
    from .tokenization.backend import load_backend
    from .tokenization.encoder import ConversationEncoder

    backend = load_backend(tokenizer, source=f"--tokenizer {tokenizer}")
    return ConversationEncoder(fmt, backend).marker_ids


def command_demo(arguments: argparse.Namespace) -> int:
    from .demo import run

    colour = sys.stdout.isatty() if arguments.colour == "auto" else arguments.colour == "always"
    return run(sys.stdout, colour=colour)


def command_detect(arguments: argparse.Namespace) -> int:
    from .detect import detect, detect_template, read_template_file

    today = _date(arguments.today)
    tokens = {"bos_token": arguments.bos_token, "eos_token": arguments.eos_token}
    if arguments.directory is not None:
        if arguments.bos_token is not None or arguments.eos_token is not None:
            raise UserError(
                "--bos-token/--eos-token: given with a directory; expected one or the other "
                "(the directory's tokenizer gives the special tokens)"
            )
        detection = detect(
            arguments.directory,
            today=today,
            declared=not arguments.no_declared,
            template_file=arguments.template,
        )
    elif arguments.template is not None:
        detection = detect_template(
            read_template_file(arguments.template),
            **tokens,
            today=today,
            declared=not arguments.no_declared,
        )
    else:
        raise UserError("template: none given; expected a model directory, -t FILE, or both")
    if arguments.declaration:
        if detection.inference is not None and detection.inference.layout is None:
            where = arguments.directory or arguments.template
            raise UserError(f"{where}: {detection.inference.refusal}")
        sys.stdout.write(detection.declaration())
        if detection.format is None:
            sys.stderr.write(f"pawlette detect: not verified: {detection.describe()}\n")
        return 0 if detection.format is not None else 1
    sys.stdout.write(detection.describe() + "\n")
    return 0 if detection.format is not None else 1


def command_verify(arguments: argparse.Namespace) -> int:
    from .detect import (
        VERIFY_CONVERSATIONS,
        read_chat_template,
        read_template_file,
        read_token_variables,
        verify,
    )

    if arguments.template is None and arguments.directory is None:
        raise UserError("template: none given; expected -t FILE, a model directory, or both")
    tokens: dict[str, str] = {}
    if arguments.template is not None:
        template = read_template_file(arguments.template)
        if arguments.directory is not None:
            tokens = read_token_variables(arguments.directory)
    else:
        template, tokens = read_chat_template(arguments.directory)
    for key in ("bos_token", "eos_token"):
        given = getattr(arguments, key)
        if given is not None:
            tokens[key] = given
    conversations = (
        VERIFY_CONVERSATIONS if arguments.conversations is None else arguments.conversations
    )
    if conversations < 1:
        raise UserError(f"--conversations: {conversations}; expected at least 1")
    verification = verify(
        _format_or_name(arguments),
        template,
        bos_token=tokens.get("bos_token"),
        eos_token=tokens.get("eos_token"),
        today=_date(arguments.today),
        conversations=conversations,
    )
    sys.stdout.write(verification.describe() + "\n")
    return 0 if verification.passed else 1


def _date(text: str | None) -> Any:
    import datetime

    if not text:
        return None
    try:
        return datetime.date.fromisoformat(text)
    except ValueError as error:
        raise UserError(f"--today: {text!r}; expected a date, YYYY-MM-DD") from error


def _auto_format(arguments: argparse.Namespace) -> str:
    """``-f auto``: the format :func:`pawlette.detect.detect` finds for the tokenizer's
    directory: a declared family by its registered name (``name:variant``), else the
    directory itself, spelled as a path, which every process resolves to its inferred
    declaration."""
    from .detect import detect
    from .formats import directory_argument

    tokenizer = getattr(arguments, "tokenizer", None)
    if not tokenizer:
        raise UserError("-f auto: needs --tokenizer, a model directory with a chat template")
    path = Path(tokenizer)
    if not path.exists():
        raise UserError(
            f"-f auto: --tokenizer {tokenizer}: no such file or directory; expected a model "
            "directory with a chat template (or the tokenizer.json inside one)"
        )
    directory = path if path.is_dir() else path.parent
    detection = detect(directory)
    if detection.format is None or detection.name is None:
        raise UserError(f"-f auto: {directory}: {detection.describe()}")
    if detection.inference is None:  # a declared family: its registered name
        sys.stderr.write(f"pawlette {arguments.command}: -f auto: {detection.describe()}\n")
        return detection.name
    # The inferred declaration's name is known only in this process: the directory is
    # what names the format to the server's workers and to the user.
    argument = directory_argument(directory)
    verified = detection.inference.describe().splitlines()[0]
    sys.stderr.write(f"pawlette {arguments.command}: -f auto: {argument}: {verified}\n")
    return argument


FORMAT_HELP = (
    "the format: a name (pawlette formats lists them), NAME:VARIANT, a model directory's path "
    "or a Python file that sets FORMAT"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pawlette", description="Render, parse, serve and export LLM chat formats."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser("demo", help="show what pawlette does (no network, no model)")
    demo.add_argument(
        "--colour",
        choices=("auto", "always", "never"),
        default="auto",
        help="highlight the markers in colour (auto: when printing to a terminal)",
    )
    demo.set_defaults(handler=command_demo)

    listing = commands.add_parser("formats", help="list the registered formats")
    listing.set_defaults(handler=command_formats)

    render = commands.add_parser("render", help="render a request or message list")
    render.add_argument("-f", "--format", required=True, help=FORMAT_HELP)
    _add_option_argument(render)
    render.add_argument("file", nargs="?", default="-", help="JSON file, or - for stdin")
    render.add_argument(
        "--generation-prompt",
        action="store_true",
        help="end with the assistant's opening, where the model starts writing",
    )
    render.add_argument("--json", action="store_true", help="print the segments and flags")
    render.set_defaults(handler=command_render)

    parse = commands.add_parser("parse", help="parse a completion or a rendered conversation")
    parse.add_argument("-f", "--format", required=True, help=FORMAT_HELP)
    _add_option_argument(parse)
    parse.add_argument("file", nargs="?", default="-", help="text file, or - for stdin")
    mode = parse.add_mutually_exclusive_group()
    mode.add_argument("--stream", action="store_true", help="print OpenAI chunks as they come")
    mode.add_argument("--conversation", action="store_true", help="print request JSON")
    parse.add_argument("--strict", action="store_true", help="fail on malformed output")
    parse.add_argument(
        "--prompt",
        metavar="FILE",
        help="the prompt the completion follows, whole (its tail is enough when it ends with the "
        "generation prompt's marker): the completion is read from where it leaves the model "
        "(inside a reasoning block it opened, inside an answer it left open)",
    )
    parse.set_defaults(handler=command_parse)

    table = commands.add_parser(
        "table", help="print a format's parse machine: its states, readers and rows"
    )
    table.add_argument("-f", "--format", required=True, help=FORMAT_HELP)
    _add_option_argument(table)
    table.set_defaults(handler=command_table)

    from .serve.config import add_arguments as add_serve_arguments

    serve = commands.add_parser(
        "serve", help="an OpenAI-compatible server over a raw completion engine (serve extra)"
    )
    add_serve_arguments(serve)
    serve.set_defaults(handler=command_serve)

    from .tokenization.training import add_tokenize_arguments, add_tokenizer_arguments

    tokenize = commands.add_parser(
        "tokenize", help="chat-completions JSONL to Parquet ids and labels (tokenize extra)"
    )
    add_tokenize_arguments(tokenize)
    tokenizer = commands.add_parser(
        "tokenizer", help="prepare a tokenizer: a format's markers as special tokens"
    )
    add_tokenizer_arguments(tokenizer)
    from .tokenization.inspection import add_inspect_arguments

    inspect = commands.add_parser(
        "inspect", help="show which tokens are learned: a record, or a row of tokenize's Parquet"
    )
    add_inspect_arguments(inspect)

    detecting = commands.add_parser(
        "detect",
        help="name the format a model directory's chat template writes, or infer and verify one",
    )
    detecting.add_argument(
        "directory",
        nargs="?",
        help="a model or tokenizer directory (tokenizer_config.json, chat_template.jinja)",
    )
    detecting.add_argument(
        "-t",
        "--template",
        metavar="FILE",
        help="the chat template file to detect (default: the directory's own); the directory, "
        "if given, still gives the special tokens",
    )
    detecting.add_argument(
        "--bos-token", help="without a directory: the template's bos_token (default: none)"
    )
    detecting.add_argument(
        "--eos-token", help="without a directory: the template's eos_token (default: none)"
    )
    detecting.add_argument(
        "--declaration",
        action="store_true",
        help="print the format as Python source to save, edit and register",
    )
    detecting.add_argument(
        "--today", help="the date the template's clock reads, YYYY-MM-DD (default: 2024-07-26)"
    )
    detecting.add_argument(
        "--no-declared", action="store_true", help="skip the declared families: infer only"
    )
    detecting.set_defaults(handler=command_detect)

    verifying = commands.add_parser(
        "verify",
        help="check a declared format against a chat template: generated conversations, "
        "rendered by both, compared byte for byte, and the template's own assistant turns "
        "parsed back by the format",
    )
    verifying.add_argument(
        "-f", "--format", required=True, help="a registered name, or a Python file's FORMAT"
    )
    _add_option_argument(verifying)
    verifying.add_argument(
        "directory",
        nargs="?",
        help="a model or tokenizer directory: its chat template, its bos_token and eos_token",
    )
    verifying.add_argument(
        "-t",
        "--template",
        metavar="FILE",
        help="the chat template file (default: the directory's own); the directory, if given, "
        "still gives the special tokens",
    )
    verifying.add_argument("--bos-token", help="the template's bos_token (over the directory's)")
    verifying.add_argument("--eos-token", help="the template's eos_token (over the directory's)")
    verifying.add_argument(
        "--today",
        help="the date the template's clock reads, YYYY-MM-DD (default: the format's date "
        "option, else 2024-07-26)",
    )
    verifying.add_argument(
        "--conversations",
        type=int,
        help="generated conversations to compare (default: 24, about 40 renders)",
    )
    verifying.set_defaults(handler=command_verify)

    export = commands.add_parser("export", help="chat templates and grammars for other tools")
    exports = export.add_subparsers(dest="what", required=True, metavar="WHAT")
    jinja = exports.add_parser("jinja", help="a Hugging Face chat_template")
    jinja.add_argument("-f", "--format", required=True, help=FORMAT_HELP)
    _add_option_argument(jinja)
    jinja.add_argument(
        "--frozen",
        action="store_true",
        help="the format's options only: read no thinking variable (llama.cpp passes"
        " enable_thinking=true to every template)",
    )
    jinja.set_defaults(handler=command_export_jinja)
    grammar = exports.add_parser("grammar", help="a constrained-decoding grammar for one turn")
    grammar.add_argument("-f", "--format", required=True, help=FORMAT_HELP)
    _add_option_argument(grammar)
    grammar.add_argument("--tools", help="JSON file of OpenAI tools (or a request), - for stdin")
    grammar.add_argument(
        "--tool-choice", default="auto", help="auto, none, required, or a function name"
    )
    grammar.add_argument(
        "--parallel",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="allow several calls in the turn (OpenAI's parallel_tool_calls)",
    )
    grammar.add_argument(
        "--syntax",
        choices=("lark", "gbnf"),
        default="lark",
        help="the grammar's syntax: llguidance's Lark or llama.cpp's GBNF",
    )
    grammar.add_argument(
        "--bundle", action="store_true", help="print JSON with stops, trigger and forced prefixes"
    )
    grammar.add_argument(
        "--markers-as-text",
        action="store_true",
        help="spell markers as plain strings (engines without special-token references)",
    )
    grammar.add_argument(
        "--tokenizer",
        help="the model's tokenizer (tokenizer.json or its directory): markers named by its ids",
    )
    grammar.set_defaults(handler=command_export_grammar)
    return parser


def _add_option_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--option",
        action="append",
        metavar="NAME=VALUE",
        help="one of the format's options (repeatable; its page lists them): true, false, "
        "numbers and lists as JSON, null for None, a date as YYYY-MM-DD, text as it is",
    )


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return build_parser()  # built once per process (in-process callers run main many times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    arguments = parser.parse_args(argv)
    try:
        if getattr(arguments, "format", None) == "auto":
            arguments.format = _auto_format(arguments)
        status: int = arguments.handler(arguments)
        return status
    except (UserError, PawletteError) as error:
        sys.stderr.write(f"pawlette {arguments.command}: {error}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
