"""How the server honours ``tool_choice`` and ``parallel_tool_calls``, or refuses them.

Three means, strongest first:

1. **A forced prefix** from the format (:meth:`pawlette.Format.forced_prefix`: breeze's
   decision tokens, ``<|use_tool|>`` for ``required``, ``<|answer|>`` for ``none``,
   ``<|use_tool|>[name(`` for a named function).  It is appended to the prompt and fed to the
   parser before the model's output, so the client sees the whole turn.
2. **A grammar** for the whole turn (:func:`pawlette.export.export_grammar`) in the upstream
   engine's structured-output field (see :mod:`pawlette.serve.engines`), when the format has
   no prefix for the choice, has a grammar export, and the engine takes grammars.
3. **A cut**: the completion is ended where it breaks the rule (the upstream request is
   cancelled), so a rule is never broken in the answer even when the model tries to.

=========================  ================================================================
request                    honoured by
=========================  ================================================================
``auto`` (the default)     nothing to do
``none``                   prefix, else grammar when available; always a cut before the
                           first call (the answer ends there with ``finish_reason: "stop"``)
``required``               prefix, else grammar; **400** when neither exists (a cut cannot
                           make a model call a tool)
a named function           prefix, else grammar, plus a cut before a call to any other
                           function; **400** when neither exists
``parallel_tool_calls:     grammar when available and no prefix is used; always a cut before
false``                    the second call
=========================  ================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import PawletteError, UnsupportedFeature
from ..format import Format
from ..types import Tool
from .engines import Engine
from .request import ToolChoice


@dataclass(frozen=True)
class ToolPlan:
    """What one request needs: a prompt suffix, an optional grammar, and where to cut."""

    prefix: str = ""
    grammar: str | None = None
    max_calls: int | None = None
    """At most this many calls (0 for ``none``, 1 without parallel calls); None: any."""
    only_function: str | None = None
    """Calls to any other function are cut (a named ``tool_choice``)."""


PrefixSource = Callable[[Format, ToolChoice, tuple[Tool, ...]], "str | None"]
GrammarSource = Callable[
    [Format, tuple[Tool, ...], ToolChoice, bool, Engine, Mapping[str, int]], "str | None"
]


def openai_tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    """The choice in OpenAI's JSON shape."""
    if choice.mode == "function":
        return {"type": "function", "function": {"name": choice.name}}
    return choice.mode


def format_prefix(fmt: Format, choice: ToolChoice, tools: tuple[Tool, ...]) -> str | None:
    """The format's forced prefix for this choice, or None when it has none."""
    method: Any = getattr(fmt, "forced_prefix", None)
    if method is None or not callable(method):
        return None
    value = method(openai_tool_choice(choice), tools)
    return value if isinstance(value, str) and value else None


def export_grammar(
    fmt: Format,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
    engine: Engine,
    token_ids: Mapping[str, int],
) -> str | None:
    """The whole-turn grammar in the engine's syntax, or None when the engine takes none.

    Raises :class:`~pawlette.errors.PawletteError` when the format has no grammar export or a
    marker cannot be spelled in the engine's syntax.
    """
    if engine.grammar_syntax is None:
        return None
    from ..export.grammar import export_grammar as export

    return export(
        fmt,
        tools,
        openai_tool_choice(choice),
        parallel,
        engine.grammar_syntax,
        token_ids=dict(token_ids) or None,
        markers_as_text=engine.grammar_markers == "text",
    )


def plan_tool_choice(
    fmt: Format,
    engine: Engine,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
    *,
    token_ids: Mapping[str, int] | None = None,
    prefix_source: PrefixSource | None = None,
    grammar_source: GrammarSource | None = None,
) -> ToolPlan:
    """The plan for one request, or :class:`UnsupportedFeature` (a 400) naming the field.

    ``token_ids`` (marker -> id, with ``--tokenizer``) lets grammars name markers by id.
    ``prefix_source`` and ``grammar_source`` default to :func:`format_prefix` and
    :func:`export_grammar`.
    """
    if not tools or (choice.mode == "auto" and parallel):
        return ToolPlan()  # nothing to force (without tools no call can be parsed)
    prefix_source = prefix_source or format_prefix
    grammar_source = grammar_source or export_grammar
    max_calls = 0 if choice.mode == "none" else (None if parallel else 1)
    only = choice.name if choice.mode == "function" else None
    prefix = prefix_source(fmt, choice, tools) or ""
    grammar: str | None = None
    problem = f"upstream engine {engine.name!r} takes no grammar"
    if not prefix and engine.grammar_syntax is not None:
        try:
            grammar = grammar_source(fmt, tools, choice, parallel, engine, token_ids or {})
        except PawletteError as error:
            problem = f"no grammar for it ({error})"
    if choice.mode in ("required", "function") and not prefix and grammar is None:
        raise UnsupportedFeature(
            "tool_choice",
            f"{choice.describe()}, which format {fmt.name!r} cannot force: it has no forced "
            f"prefix for it and {problem}",
            "'auto' or 'none'",
        )
    return ToolPlan(prefix=prefix, grammar=grammar, max_calls=max_calls, only_function=only)
