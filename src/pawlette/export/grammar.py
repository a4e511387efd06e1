"""Constrained-decoding grammars for what a model may write in its turn.

:func:`export_grammar` returns a grammar, in llguidance's Lark dialect or in llama.cpp's GBNF,
for one assistant turn of a format (what follows the generation prompt, through the end
marker) under a ``tool_choice`` (``auto``, ``none``, ``required`` or a function) and
``parallel_tool_calls``.  Each call's arguments are constrained by the tool's JSON schema;
markers are special-token references (``<call>``, or ``<[id]>`` given ``token_ids``); text
between markers is constrained to what the format's lexer reads back as text (see
:mod:`pawlette.emit.text_language`).

:func:`export_grammar_bundle` wraps it in the JSON document a server needs: stop markers, the
marker that starts a call (a trigger for engines that switch a grammar on lazily) with the
grammar from the trigger on, and the forced prefix of every tool choice with the grammar that
follows it.

Grammar engines are optional: nothing here imports one.

>>> tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
>>> print(export_grammar("pcml", tools, "required").splitlines()[0])
%llguidance {}
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from ..emit.grammar_ast import MarkerSpelling, Rules, Syntax, to_gbnf, to_lark
from ..emit.python_schema import KEYWORD_EXPECTED
from ..emit.schema_walk import closed_objects
from ..emit.tool_choice import ToolChoice
from ..emit.turn_grammar import TurnGrammar
from ..errors import RequestError, UnsupportedFeature
from ..format import Format
from ..formats import formats, get_format
from ..json_values import show
from ..openai import tools_from_openai
from ..types import Tool


def grammar_formats() -> list[str]:
    """The registered formats that have a grammar export."""
    return [
        name for name in formats() if getattr(get_format(name), "declaration", None) is not None
    ]


def _resolve(format_name: str | Format) -> Format:
    return format_name if isinstance(format_name, Format) else get_format(format_name)


def _tools(tools: object) -> tuple[Tool, ...]:
    if tools is None:
        return ()
    if isinstance(tools, (list, tuple)) and all(isinstance(tool, Tool) for tool in tools):
        return tuple(tools)
    return tools_from_openai(tools)


def build_turn(
    format_name: str | Format,
    tools: object,
    tool_choice: object = "auto",
    parallel: bool = True,
    *,
    strict: bool = True,
    prompt: str | None = None,
) -> TurnGrammar:
    """The syntax-free turn grammar (what the writers below print).

    ``prompt``: the prompt the turn follows (its tail is enough when it ends with the
    generation prompt's marker; one ending in text is read whole).  Where it leaves
    the model elsewhere than the format's usual prompt does (:meth:`Format.start_after`:
    DeepSeek's thinking prompt opens ``<think>`` after a user turn but not after tool
    results), the turn starts there, as a parser started there does.

    ``strict`` (the default): arguments may hold only the properties a tool's schema
    declares, unless the schema allows more (:func:`.schema_walk.closed_objects`), as
    OpenAI's strict function calling; False follows JSON Schema's default (undeclared
    properties allowed), except for a tool that says ``"strict": true`` itself."""
    fmt = _resolve(format_name)
    from ..declare import layout_of

    declaration = layout_of(fmt)
    if declaration is None:
        raise UnsupportedFeature(
            "format",
            f"{fmt.name!r} has no grammar export yet",
            "one of " + ", ".join(grammar_formats()),
        )
    choice = ToolChoice.read(tool_choice)
    tool_values = _tools(tools)
    names = [tool.name for tool in tool_values]
    if choice.mode == "required" and not tool_values:
        raise RequestError("tool_choice", "'required' without tools", "tools to call")
    if choice.mode == "function" and choice.name not in names:
        declared = ", ".join(show(name) for name in names)
        if isinstance(tool_choice, str):  # a bare name: perhaps a mode, misspelt
            raise RequestError(
                "tool_choice",
                f"found {show(tool_choice)}, neither a mode nor a declared tool",
                "'auto', 'none', 'required', or a declared tool's name"
                + (f": one of {declared}" if declared else " (no tools are declared)"),
            )
        raise RequestError(
            "tool_choice.function.name",
            f"{show(choice.name)} is not a declared tool",
            "one of " + (declared or "the request's tools"),
        )
    tool_values = _strict_tools(tool_values, strict)
    from ..declare.grammar import build_turn as build_layout
    from .forced import forced_turn  # a forced choice turns reasoning off (see there)

    with _nesting_refused():
        start = None if prompt is None else fmt.start_after(prompt)
        turn = build_layout(fmt, declaration, tool_values, choice, parallel, start)
        return forced_turn(fmt, turn, choice)


def _strict_tool(tool: Tool) -> Tool:
    """``tool`` with its parameters' objects closed (see :func:`build_turn`)."""
    parameters = tool.parameters
    if parameters is None:
        return tool  # no parameters: no arguments (already closed)
    closed = closed_objects(parameters)
    if closed == parameters:
        return tool
    return Tool(tool.name, {**tool.definition, "parameters": closed}, tool.kind)


def _strict_tools(tools: tuple[Tool, ...], strict: bool) -> tuple[Tool, ...]:
    """The tools a grammar is built for: all closed when ``strict``, else those that ask."""
    return tuple(
        _strict_tool(tool) if strict or tool.definition.get("strict") is True else tool
        for tool in tools
    )


@contextlib.contextmanager
def _nesting_refused() -> Iterator[None]:
    """Schemas whose grammar nests deeper than Python's stack (thousands of ``prefixItems``)
    are schemas the grammar cannot write: a ValueError, as for any other, never a
    RecursionError (the server's fallback and the CLI's one line read ValueError)."""
    try:
        yield
    except RecursionError as error:
        raise ValueError("the tools' schemas nest too deeply to write as a grammar") from error


def unwritable_tools(
    format_name: str | Format, tools: object, parallel: bool = True
) -> dict[int, RequestError]:
    """The tools (by index) a forced choice cannot call in this format, each with why: a name
    or an argument name a Python-call format cannot write.  The
    server leaves them out of a ``required`` grammar (:mod:`pawlette.serve.tool_choice`)."""
    fmt = _resolve(format_name)
    problems: dict[int, RequestError] = {}
    for number, tool in enumerate(_tools(tools)):
        try:
            build_turn(fmt, (tool,), "required", parallel)
        except RequestError as error:
            if error.expected != KEYWORD_EXPECTED:
                continue  # not a name (a schema the grammar cannot write): no grammar, as before
            path = error.path
            if path.startswith("tools[0]"):  # built alone: its index in the request's list
                path = f"tools[{number}]" + path[len("tools[0]") :]
            problems[number] = type(error)(path, error.found, error.expected, error.hint)
    return problems


def _header(
    fmt: Format,
    turn: TurnGrammar,
    choice: ToolChoice,
    parallel: bool,
    spelling: MarkerSpelling,
) -> list[str]:
    lines = [
        f"pawlette grammar: one assistant turn of {fmt.name!r} (after the generation prompt)",
        f"tool_choice={choice.key()!r} parallel_tool_calls={parallel}",
        "markers (special tokens): " + " ".join(turn.markers),
    ]
    as_text = [
        marker
        for marker in turn.markers
        if marker in spelling.text_markers and marker not in spelling.token_ids
    ]
    if as_text and not spelling.as_text:
        lines.append(
            "markers written as text (ordinary tokens to the engine): " + " ".join(as_text)
        )
    return lines


def _spelling(
    token_ids: Mapping[str, int] | None, markers_as_text: bool, text_markers: Collection[str]
) -> MarkerSpelling:
    return MarkerSpelling(dict(token_ids or {}), markers_as_text, frozenset(text_markers))


def _write(
    rules: Rules,
    syntax: Syntax,
    header: Sequence[str],
    spelling: MarkerSpelling,
) -> str:
    with _nesting_refused():
        if syntax == "lark":
            return to_lark(rules, header, spelling)
        if syntax == "gbnf":
            return to_gbnf(rules, header, spelling)
    raise RequestError("syntax", f"found {syntax!r}", "'lark' or 'gbnf'")


def export_grammar(
    format_name: str | Format,
    tools: object,
    tool_choice: object = "auto",
    parallel: bool = True,
    syntax: Syntax = "lark",
    *,
    token_ids: Mapping[str, int] | None = None,
    markers_as_text: bool = False,
    text_markers: Collection[str] = (),
    strict: bool = True,
    prompt: str | None = None,
) -> str:
    """A grammar for one assistant turn (Lark for llguidance, or GBNF for llama.cpp).

    ``tools`` are OpenAI tool dicts (or :class:`~pawlette.types.Tool` values);
    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"``, a function name or OpenAI's
    named form.  Markers are written as special tokens spelled by their text (``<call>``);
    ``token_ids`` spells them by id instead (needed for markers not shaped ``<...>``), and
    ``markers_as_text`` writes them as plain strings (engines without token references);
    ``text_markers`` writes just those markers (the ones without an id) as plain strings:
    those the engine's vocabulary holds as ordinary tokens (llama.cpp's ``<|channel|>``,
    :data:`pawlette.serve.engines.LLAMA_CPP_TEXT_MARKERS`).
    ``strict`` (the default) refuses properties a tool's schema does not declare unless it
    allows them; False follows JSON Schema's default (see :func:`build_turn`).  ``prompt``:
    the generation prompt the turn follows, where it matters (see :func:`build_turn`).
    """
    fmt = _resolve(format_name)
    choice = ToolChoice.read(tool_choice)
    turn = build_turn(fmt, tools, tool_choice, parallel, strict=strict, prompt=prompt)
    spelling = _spelling(token_ids, markers_as_text, text_markers)
    return _write(turn.rules, syntax, _header(fmt, turn, choice, parallel, spelling), spelling)


def export_grammar_bundle(
    format_name: str | Format,
    tools: object,
    tool_choice: object = "auto",
    parallel: bool = True,
    syntax: Syntax = "lark",
    *,
    token_ids: Mapping[str, int] | None = None,
    markers_as_text: bool = False,
    text_markers: Collection[str] = (),
    strict: bool = True,
    prompt: str | None = None,
) -> dict[str, Any]:
    """The grammar with what a server needs to use it, as one JSON-ready document.

    ``grammar``: the whole turn.  ``stop``: the markers that end generation.  ``trigger``:
    the marker that starts a call (``special``: whether the grammars spell it as a special
    token, false with ``markers_as_text`` or when ``text_markers`` has it), and
    ``lazy_grammar`` the grammar from it on (``auto`` with tools only; engines that enable a
    grammar when the trigger appears).
    ``forced_prefix``: per tool choice, the text every turn under it begins with; a server
    may write it itself, then constrain the rest with ``grammar_after_prefix`` (the requested
    choice's).  ``reasoning``: the block a turn under this choice may open with (None under a
    forced choice, which turns reasoning off: :mod:`pawlette.export.forced`).  ``notes``: what
    the grammar, in this ``syntax``, does not enforce.  ``strict``: as for
    :func:`export_grammar`.  ``prompt`` and ``text_markers``: as for :func:`export_grammar`.
    """
    fmt = _resolve(format_name)
    choice = ToolChoice.read(tool_choice)
    turn = build_turn(fmt, tools, tool_choice, parallel, strict=strict, prompt=prompt)
    spelling = _spelling(token_ids, markers_as_text, text_markers)
    header = _header(fmt, turn, choice, parallel, spelling)
    tool_choice_json: Any = (
        {"type": "function", "function": {"name": choice.name}}
        if choice.mode == "function"
        else choice.mode
    )
    functions = {
        key: value
        for key, value in turn.forced_prefixes.items()
        if key not in ("auto", "none", "required")
    }
    notes = turn.rules.notes_for(syntax)
    return {
        "format": fmt.name,
        "syntax": syntax,
        "tool_choice": tool_choice_json,
        "parallel_tool_calls": parallel,
        "grammar": _write(turn.rules, syntax, header, spelling),
        "stop": list(turn.stop),
        "special_tokens": list(turn.markers),
        "trigger": (
            None
            if turn.trigger is None
            else {
                "marker": turn.trigger,
                "special": not markers_as_text
                and (turn.trigger in spelling.token_ids or turn.trigger not in text_markers),
            }
        ),
        "lazy_grammar": (
            None
            if turn.lazy is None
            else _write(turn.lazy, syntax, [*header, "lazy: from the trigger on"], spelling)
        ),
        "reasoning": (
            None
            if turn.reasoning is None
            else {"open": turn.reasoning[0], "close": turn.reasoning[1]}
        ),
        "forced_prefix": {
            "auto": turn.forced_prefixes.get("auto", ""),
            "none": turn.forced_prefixes.get("none", ""),
            "required": turn.forced_prefixes.get("required", ""),
            "functions": functions,
        },
        "grammar_after_prefix": (
            None
            if turn.after_prefix is None
            else _write(turn.after_prefix, syntax, [*header, "after the forced prefix"], spelling)
        ),
        "notes": notes,
    }
