"""A format's parse machine as text: what ``pawlette table -f FMT`` prints.

The machine is data (:class:`pawlette.engine.machine.Grammar`): states, each with the reader
that consumes the text between markers, and rows ``(state, marker) -> target [actions]``.
This module prints it without knowing any format, so the table of a format declared tomorrow
prints the same way::

    format pcml: 11 states, 28 rows
    conversation starts in: outside
    completion starts in: assistant.head
    markers in text: escaped with a backslash
    ...

    states ((turn over): a completion read to this state has ended its assistant turn)
      state                role       reader
      outside              -          ScaffoldReader
      system.head          system     HeaderReader(separator='[SEP]')
      ...

    rows
      outside --[SYS]--> system.head  [_begin.action(role='system')]
      ...

Readers and actions are callables.  A reader factory that describes itself (a
:class:`~pawlette.declare.readers.Described`) is shown by its words, what it reads, and the
values it shows, so moving its code leaves the table alone; any other callable by its qualified
name, with the values a ``functools.partial`` or a closure fixes shown when they are plain
(strings, numbers, flags and sets of them) and by their type's name otherwise, so the text
never holds a memory address.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterable
from typing import Any

from .declare.readers import Described
from .engine.machine import Grammar
from .format import Format

_PLAIN = (str, int, float, bool, type(None))
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def show_marker(marker: str) -> str:
    """A marker as one line: backslash, newline, carriage return and tab escaped, other
    control characters as ``\\xNN``."""
    out = []
    for character in marker:
        if character in _CONTROL:
            out.append(_CONTROL[character])
        elif ord(character) < 0x20 or ord(character) == 0x7F:
            out.append(f"\\x{ord(character):02x}")
        else:
            out.append(character)
    return "".join(out)


def _qualified(value: Any) -> str:
    name = getattr(value, "__qualname__", None) or type(value).__qualname__
    return str(name).replace(".<locals>", "")


def _value(value: Any) -> str:
    """A value fixed in a reader or an action: plain values as Python writes them, tuples and
    sets item by item (sets sorted), classes and functions by name, anything else by its
    type's name, never by its ``repr`` (which may hold an address)."""
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, (frozenset, set)):
        return "{" + ", ".join(sorted(_value(item) for item in value)) + "}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_value(item) for item in value)
        return f"({inner}{',' if len(value) == 1 else ''})"
    described = (functools.partial, Described)
    if inspect.isclass(value) or inspect.isroutine(value) or isinstance(value, described):
        return describe_callable(value)
    return type(value).__qualname__


def _arguments(positional: Iterable[Any], keywords: Iterable[tuple[str, Any]]) -> str:
    parts = [_value(value) for value in positional]
    parts += [f"{name}={_value(value)}" for name, value in keywords]
    return "(" + ", ".join(parts) + ")" if parts else ""


def describe_callable(value: Any) -> str:
    """A reader factory or an action by name: ``HeaderReader(separator='[SEP]')``,
    ``_begin.action(role='system')`` (a closure's plain free variables), ``Run.start``, or
    a :class:`~pawlette.declare.readers.Described` factory's words: ``tool items (...)``."""
    if isinstance(value, Described):
        shown = _arguments((), value.shown)
        return value.described_as + (f" {shown}" if shown else "")
    if isinstance(value, functools.partial):
        return describe_callable(value.func) + _arguments(value.args, value.keywords.items())
    if inspect.ismethod(value):
        owner = value.__self__
        owner_name = owner.__qualname__ if inspect.isclass(owner) else type(owner).__qualname__
        return f"{owner_name}.{value.__func__.__name__}"
    name = _qualified(value)
    code = getattr(value, "__code__", None)
    cells = getattr(value, "__closure__", None)
    if code is None or not cells:
        return name
    fixed = [
        (variable, cell.cell_contents)
        for variable, cell in zip(code.co_freevars, cells, strict=True)
        if _has_contents(cell) and isinstance(cell.cell_contents, _PLAIN)
    ]
    return name + _arguments((), fixed)


def _has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises)
    except ValueError:
        return False
    return True


def grammar_text(grammar: Grammar, name: str) -> str:
    """The machine ``grammar`` of the format called ``name``, as text (the module docstring
    shows the layout).  States come in the order the declaration made them, each state's rows
    sorted by marker."""
    lines = [
        f"format {name}: {len(grammar.states)} states, {len(grammar.steps)} rows",
        f"conversation starts in: {grammar.conversation_start}",
        f"completion starts in: {grammar.completion_start}",
        "markers in text: "
        + ("escaped with a backslash" if grammar.escape else "not escaped (special tokens)"),
    ]
    for role, keys in sorted(grammar.fields.items()):
        fields = ", ".join(f"{key} -> {field}" for key, field in sorted(keys.items()))
        lines.append(f"header fields of {role}: {fields}")
    width = max([len("state"), *(len(state) for state in grammar.states)])
    lines += [
        "",
        "states ((turn over): a completion read to this state has ended its assistant turn)",
        f"  {'state':{width}}  {'role':10} reader",
    ]
    for entry in grammar.states.values():
        role_name = entry.role or "-"
        over = "  (turn over)" if entry.name in grammar.completion_over else ""
        lines.append(
            f"  {entry.name:{width}}  {role_name:10} {describe_callable(entry.reader)}{over}"
        )
    lines += ["", "rows"]
    order = {state: index for index, state in enumerate(grammar.states)}
    rows = sorted(grammar.steps.items(), key=lambda row: (order[row[0][0]], row[0][1]))
    for (state, marker), step in rows:
        actions = ", ".join(describe_callable(action) for action in step.actions)
        line = f"  {state} --{show_marker(marker)}--> {step.target}"
        lines.append(line + (f"  [{actions}]" if actions else ""))
    return "\n".join(lines) + "\n"


def table_text(fmt: Format) -> str:
    """``pawlette table -f FMT``: the parse machine of ``fmt`` as text.

    >>> import pawlette
    >>> table_text(pawlette.get_format("pcml")).startswith("format pcml: ")
    True
    """
    return grammar_text(fmt.grammar, fmt.name)
