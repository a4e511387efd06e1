"""How the server honours ``tool_choice`` and ``parallel_tool_calls``, or refuses them.

Everything comes from one place: the format's grammar bundle
(:func:`pawlette.export.export_grammar_bundle`, what ``pawlette export grammar --bundle``
prints), which holds per request the forced prefix of every tool choice, the whole-turn
grammar, the grammar after the chosen prefix, the call trigger with its lazy grammar, and the
stop markers.  A format without a grammar export falls back to its declaration's
:meth:`pawlette.Format.forced_prefix`.  Three means, as the engine allows:

1. **A forced prefix** (``<call>`` for PCML under ``required``, ``\\n<|FUNCTION_START|>`` for
   omni, ``<|use_tool|>`` / ``<|answer|>`` for breeze, a named function's head in ChatGLM3).
   It is appended to the prompt and fed to the parser before the model's output, so the
   answer is the message the model would have written had it written the prefix itself.
2. **A grammar** in the engine's structured-output field (see :mod:`pawlette.serve.engines`):
   the grammar after the prefix when a prefix is used, else the whole turn's.  llama.cpp, the
   one engine here that takes lazy grammars, gets the call trigger and the grammar from it on
   under ``auto`` (``parallel_tool_calls: false``).
3. **A cut**: the completion is ended where it breaks the rule (the upstream request is
   cancelled), so a rule is never broken in the answer even when the model tries to.

Prefix or grammar, and what a prefix costs:

- A forced prefix is written right after the generation prompt, so a turn forced by one has
  **no reasoning block** (PCML's ``<think>``, omni's thinking) and no content before the
  call.  The latter is what ``required`` and a named choice mean anyway; the former is the
  policy on every engine (:mod:`pawlette.export.forced`: a forced choice turns reasoning off,
  since no grammar can make a model close its reasoning in time).  So an engine that takes
  grammars gets the prefix and the grammar that follows it, for every format; a bundle whose
  turn may still open with reasoning (its ``reasoning``) gets the whole-turn grammar instead.
- On an engine without grammars (``generic``, ``tgi``) the prefix is all there is: the turn
  loses its reasoning block.  Where the bundle's prefix stops short of the function's name
  (PCML's calls begin with a model-written ``"id"``: ``<call>{"id": "``), a call to another
  function is cut (the answer ends before it, ``finish_reason: "stop"``).  ChatGLM3's calls
  begin with the function's name, so ``required`` has a prefix only when one function can be
  called; with several it is refused there (no prefix can say "any of these names").
- A tool a Python-call format cannot write (breeze: a name that is not an identifier,
  ``mark-er``; breeze and ChatGLM3: an argument name that is not one, ``城市 "q"``) is left
  out of a forced grammar; when none remains, or the named function is one, the request is a
  **400** naming the tool's field (``tools[0].function.name``), never a prefix no call can
  follow (which answered 200 with no call).
- A format without call syntax (Gemma 2) drops the tools as its template does (a recorded
  loss) under ``auto`` and ``none``; ``required`` or a named function is a **400** naming
  ``tool_choice`` (no turn of the format holds a call).  A format with calls that leaves the
  tools out (DeepSeek V3.1) refuses a forced call too (:mod:`pawlette.serve.losses`).

=========================  ================================================================
request                    honoured by
=========================  ================================================================
``auto`` (the default)     nothing to do
``none``                   prefix (breeze's ``<|answer|>``) or grammar when available;
                           always a cut before the first call (the answer ends there with
                           ``finish_reason: "stop"``)
``required``               prefix and/or grammar as above; **400** when neither exists (a
                           cut cannot make a model call a tool)
a named function           prefix and/or grammar as above, plus a cut before a call to any
                           other function; **400** when neither exists
``parallel_tool_calls:     grammar when available (llama.cpp: the lazy grammar); always a
false``                    cut before the second call
=========================  ================================================================
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..emit.tool_choice import ToolChoice
from ..errors import PawletteError, RequestError, UnsupportedFeature
from ..format import Format
from ..types import Tool
from .engines import Engine


@dataclass(frozen=True)
class ToolPlan:
    """What one request needs: a prompt suffix, an optional grammar, and where to cut."""

    prefix: str = ""
    grammar: str | None = None
    trigger: str | None = None
    """The marker that switches ``grammar`` on (a lazy grammar); None: from the start."""
    stop: tuple[str, ...] = ()
    """The bundle's stop markers (empty: the format's)."""
    max_calls: int | None = None
    """At most this many calls (0 for ``none``, 1 without parallel calls); None: any."""
    only_function: str | None = None
    """Calls to any other function are cut (a named ``tool_choice``)."""
    start: str | None = None
    """Where the prompt leaves the model, if not where the format's usual prompt does
    (:meth:`Format.start_after`); the parser and the grammar start there."""


Bundle = Mapping[str, Any]
BundleSource = Callable[
    [Format, tuple[Tool, ...], ToolChoice, bool, Engine, Mapping[str, int]], "Bundle | None"
]


def openai_tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    """The choice in OpenAI's JSON shape."""
    if choice.mode == "function":
        return {"type": "function", "function": {"name": choice.name}}
    return choice.mode


def format_prefix(fmt: Format, choice: ToolChoice, tools: tuple[Tool, ...]) -> str | None:
    """The declaration's forced prefix (formats without a grammar export), or None."""
    method: Any = getattr(fmt, "forced_prefix", None)
    if method is None or not callable(method):
        return None
    value = method(openai_tool_choice(choice), tools)
    return value if isinstance(value, str) and value else None


def grammar_bundle(
    fmt: Format,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
    engine: Engine,
    token_ids: Mapping[str, int],
    *,
    strict: bool = True,
    prompt: str | None = None,
) -> Bundle | None:
    """The format's grammar bundle, its grammars in the engine's syntax; None when the format
    has no grammar export.  ``strict``: undeclared properties refused (``--schema-default``).

    For an engine that takes no grammar only the prefixes and stops are used (its grammars are
    written with markers as text, which never fails).  Raises
    :class:`~pawlette.errors.PawletteError` when a marker cannot be spelled in the engine's
    syntax.
    """
    from ..export.grammar import export_grammar_bundle, grammar_formats

    if fmt.name not in grammar_formats():
        return None
    syntax = engine.syntax_for(lazy=choice.mode == "auto")
    return export_grammar_bundle(
        fmt,
        tools,
        openai_tool_choice(choice),
        parallel,
        syntax or "gbnf",
        token_ids=dict(token_ids) or None,
        markers_as_text=syntax is None or engine.grammar_markers == "text",
        text_markers=engine.lark_text_markers if syntax == "lark" else (),
        strict=strict,
        prompt=prompt,
    )


def bundle_prefix(bundle: Bundle, choice: ToolChoice) -> str:
    """The bundle's forced prefix for ``choice`` (empty: none)."""
    prefixes = bundle["forced_prefix"]
    if choice.mode == "function":
        value = prefixes["functions"].get(choice.name, "")
    else:
        value = prefixes.get(choice.mode, "")
    return value if isinstance(value, str) else ""


def plan_tool_choice(
    fmt: Format,
    engine: Engine,
    tools: tuple[Tool, ...],
    choice: ToolChoice,
    parallel: bool,
    *,
    token_ids: Mapping[str, int] | None = None,
    bundle_source: BundleSource | None = None,
    strict: bool = True,
    prompt: str | None = None,
) -> ToolPlan:
    """The plan for one request, or :class:`UnsupportedFeature` (a 400) naming the field.

    ``token_ids`` (marker -> id, with ``--tokenizer``) lets grammars name markers by id.
    ``bundle_source`` defaults to :func:`grammar_bundle` (``strict``: its schemas closed).
    ``prompt``: the generation prompt; where it leaves the model elsewhere than the
    format's usual prompt does, the plan starts there (:attr:`ToolPlan.start`).
    """
    start = None if prompt is None else fmt.start_after(prompt)
    if not tools or (choice.mode == "auto" and parallel):
        return ToolPlan(start=start)  # nothing to force (without tools no call can be parsed)
    source = bundle_source or functools.partial(grammar_bundle, strict=strict, prompt=prompt)
    max_calls = 0 if choice.mode == "none" else (None if parallel else 1)
    only = choice.name if choice.mode == "function" else None
    takes_grammar = engine.grammar_syntax is not None
    problem = f"upstream engine {engine.name!r} takes no grammar"
    bundle: Bundle | None = None
    try:
        try:
            bundle = source(fmt, tools, choice, parallel, engine, token_ids or {})
        except RequestError as error:
            from ..emit.python_schema import KEYWORD_EXPECTED

            if choice.mode not in ("required", "function") or error.expected != KEYWORD_EXPECTED:
                raise
            # A tool the format cannot write: force the others, or refuse (never a silent
            # no-call).  Worked out only here, so a request without one pays nothing.
            tools = _forcible(fmt, tools, choice)
            bundle = source(fmt, tools, choice, parallel, engine, token_ids or {})
    except NoForcibleTool:
        raise  # from _forcible: the 400
    except (PawletteError, ValueError) as error:  # a marker or a schema it cannot write
        if isinstance(error, UnsupportedFeature) and error.path == "tool_choice":
            raise  # the choice itself (a forced call in a format without calls): the 400
        problem = f"no grammar for it ({error})"
        if takes_grammar:
            # The prefixes do not depend on how markers are spelled: ask again, grammar unused.
            with contextlib.suppress(PawletteError, ValueError):
                bundle = source(fmt, tools, choice, parallel, _NO_GRAMMAR, {})
        takes_grammar = False
    if bundle is None:  # no grammar export (or none for these tools): the declaration's prefix
        prefix = format_prefix(fmt, choice, tools) or ""
        if takes_grammar:
            problem = f"format {fmt.name!r} has no grammar export"
        plan = ToolPlan(prefix=prefix, max_calls=max_calls, only_function=only)
    else:
        plan = _from_bundle(bundle, engine, choice, takes_grammar, max_calls, only)
    if choice.mode in ("required", "function") and not plan.prefix and plan.grammar is None:
        raise UnsupportedFeature(
            "tool_choice",
            f"{choice.describe()}, which format {fmt.name!r} cannot force: it has no forced "
            f"prefix for it and {problem}",
            "'auto' or 'none'",
        )
    return plan if start is None else replace(plan, start=start)


class NoForcibleTool(UnsupportedFeature):
    """A forced ``tool_choice`` whose tools the format can call none of (a 400)."""


def _forcible(fmt: Format, tools: tuple[Tool, ...], choice: ToolChoice) -> tuple[Tool, ...]:
    """The tools a forced choice may call: those the format's grammar can write (a
    Python-call format cannot write ``mark-er(`` or ``城市 "q"=``).  The others are left out of
    the forced grammar; when none remains (or the named one is left out) the request is
    refused naming the tool's field, rather than forcing a prefix no call can follow (which
    answered with no call at all)."""
    from ..export.grammar import grammar_formats, unwritable_tools

    if fmt.name not in grammar_formats():
        return tools
    problems = unwritable_tools(fmt, tools)
    if not problems:
        return tools
    if choice.mode == "function":
        for number, tool in enumerate(tools):
            if tool.name == choice.name and number in problems:
                problem = problems[number]
                raise NoForcibleTool(problem.path, problem.found, problem.expected, problem.hint)
    kept = tuple(tool for number, tool in enumerate(tools) if number not in problems)
    if not kept:
        first = problems[min(problems)]
        others = len(problems) - 1
        raise NoForcibleTool(
            first.path,
            first.found + (f" (and every other tool: {others} more)" if others else ""),
            first.expected,
            f"tool_choice {choice.describe()} needs a tool format {fmt.name!r} can call. "
            + first.hint,
        )
    return kept


def _from_bundle(
    bundle: Bundle,
    engine: Engine,
    choice: ToolChoice,
    takes_grammar: bool,
    max_calls: int | None,
    only: str | None,
) -> ToolPlan:
    prefix = bundle_prefix(bundle, choice)
    stop = tuple(bundle["stop"])
    grammar: str | None = None
    trigger: str | None = None
    if takes_grammar:
        lazy = bundle.get("lazy_grammar")
        after = bundle.get("grammar_after_prefix")
        if choice.mode == "auto" and engine.lazy_grammars and bundle.get("trigger") and lazy:
            grammar, trigger = lazy, bundle["trigger"]["marker"]
        elif prefix and bundle.get("reasoning") is None:
            grammar = after  # the prefix, then its grammar
        else:
            # The whole turn: a reasoning block may come first, which a prefix would rule out.
            prefix, grammar = "", bundle["grammar"]
    return ToolPlan(
        prefix=prefix,
        grammar=grammar,
        trigger=trigger,
        stop=stop,
        max_calls=max_calls,
        only_function=only,
    )


_NO_GRAMMAR = Engine("no grammar", token_ids=False)
