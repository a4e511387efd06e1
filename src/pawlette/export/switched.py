"""One chat template for every value of a layout's switched options (``Layout.switches``).

The template of each option set is emitted as usual (:mod:`pawlette.declare.jinja`); the
templates are then merged line by line: lines they share are written once, and where they
differ each side is written in a branch on the switch's value (``{%- if option_thinking -%}
... {%- else -%} ... {%- endif -%}``). A branch always holds whole blocks (an ``if`` with
its ``endif``, never an ``else`` of a block opened outside it), so each option set's
template is what runs for its value: its text, its masks and its refusals.

The value is set once, first: ``{%- set option_thinking = enable_thinking if enable_thinking
is defined else true -%}`` (the layout's own option value when the caller passes none).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..declare.switch import Switch
from ..emit.jinja_text import jinja_string

if TYPE_CHECKING:
    from ..declare.layout import Layout

_OPENERS = frozenset({"if", "for", "macro", "call", "filter", "generation", "raw"})
_CLOSERS = frozenset({"end" + name for name in _OPENERS})
_MIDDLES = frozenset({"elif", "else"})
_TAG = re.compile(r"\{([%{#])")
_CLOSE = {"%": "%}", "{": "}}", "#": "#}"}
_WORD = re.compile(r"-?\s*([A-Za-z_]+)")


def variable_name(switch: Switch) -> str:
    """The template's own variable holding the switch's value."""
    return f"option_{switch.option}"


def literal(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return jinja_string(str(value))


def condition(switch: Switch, value: Any) -> str:
    """The Jinja test that selects ``value`` (checked in the order of :func:`ordered`)."""
    name = variable_name(switch)
    if value is None:
        return f"{name} is none"
    if value is True:
        return name
    if value is False:
        return f"not {name}"
    return f"{name} == {literal(value)}"


def ordered(switch: Switch) -> list[Any]:
    """The values in the order their branches are tested: ``none`` first (false, as
    ``False`` is), then ``True`` (any true value), then the rest."""
    return sorted(switch.values, key=lambda value: 0 if value is None else 2 - (value is True))


def setting(switch: Switch, default: Any) -> list[str]:
    """The lines that set the switch's variable (and refuse a string outside its values)."""
    value = literal(default)
    for variable in reversed(switch.variables):
        value = f"{variable} if {variable} is defined else {value}"
        if variable != switch.variable:
            value = f"({value})"
    name = variable_name(switch)
    lines = [f"{{%- set {name} = {value} -%}}"]
    words = [item for item in switch.values if isinstance(item, str)]
    if words:
        expected = ", ".join(words + (["none"] if None in switch.values else []))
        listed = "[" + ", ".join(literal(item) for item in words) + "]"
        test = f"{name} not in {listed}"
        if None in switch.values:
            test = f"{name} is not none and {test}"
        lines += [
            f"{{%- if {test} -%}}",
            f"{{{{- raise_exception({jinja_string(switch.variable + ': ')} ~ {name} ~ "
            f"{jinja_string('; expected one of ' + expected)}) -}}}}",
            "{%- endif -%}",
        ]
    return lines


# ------------------------------------------------------------------ the merge


def units(template: str) -> list[str]:
    """The template cut at the newlines outside its tags (a line, unless a tag spans
    several)."""
    result: list[str] = []
    start = position = 0
    while True:
        found = _TAG.search(template, position)
        newline = template.find("\n", position)
        if newline != -1 and (found is None or newline < found.start()):
            result.append(template[start:newline])
            start = position = newline + 1
            continue
        if found is None:
            result.append(template[start:])
            return result
        position = _tag_end(template, found.end(), _CLOSE[found.group(1)])


def _tag_end(template: str, position: int, close: str) -> int:
    """The position after the tag's ``close``, string literals skipped."""
    while position < len(template):
        character = template[position]
        if template.startswith(close, position):
            return position + len(close)
        if character in "'\"":
            position += 1
            while position < len(template) and template[position] != character:
                position += 2 if template[position] == "\\" else 1
        position += 1
    raise ValueError(f"an unclosed tag at {position}: expected {close!r}")


def _keywords(unit: str) -> list[str]:
    """The statement keywords of a unit's ``{% %}`` tags, in order."""
    keywords = []
    position = 0
    while (found := _TAG.search(unit, position)) is not None:
        end = _tag_end(unit, found.end(), _CLOSE[found.group(1)])
        if found.group(1) == "%":
            word = _WORD.match(unit, found.end())
            if word is not None:
                keywords.append(word.group(1))
        position = end
    return keywords


def reach(lines: Sequence[str]) -> tuple[bool, bool]:
    """Whether ``lines`` reach out of themselves: back (an ``else`` or end of a block opened
    before them) and forward (a block left open)."""
    depth = 0
    back = False
    for line in lines:
        for keyword in _keywords(line):
            if keyword in _OPENERS:
                depth += 1
            elif keyword in _CLOSERS:
                if depth == 0:
                    back = True
                else:
                    depth -= 1
            elif keyword in _MIDDLES and depth == 0:
                back = True
    return back, depth > 0


def _hunks(first: list[str], second: list[str]) -> list[list[int]]:
    """The differing stretches ``[a0, a1, b0, b1]``, each widened until both sides hold
    whole blocks (the lines around a stretch are the same on both sides)."""
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    hunks = [[a0, a1, b0, b1] for tag, a0, a1, b0, b1 in matcher.get_opcodes() if tag != "equal"]
    changed = True
    while changed:
        changed = False
        for hunk in hunks:
            a0, a1, b0, b1 = hunk
            first_back, first_forward = reach(first[a0:a1])
            second_back, second_forward = reach(second[b0:b1])
            if (first_back or second_back) and a0 > 0 and b0 > 0:
                hunk[0], hunk[2] = a0 - 1, b0 - 1
                changed = True
            if (first_forward or second_forward) and a1 < len(first) and b1 < len(second):
                hunk[1], hunk[3] = a1 + 1, b1 + 1
                changed = True
        merged: list[list[int]] = []
        for hunk in hunks:  # widened stretches that meet become one
            if merged and hunk[0] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hunk[1])
                merged[-1][3] = max(merged[-1][3], hunk[3])
            else:
                merged.append(hunk)
        hunks = merged
    return hunks


def negation(test: str) -> str:
    if test.startswith("not "):
        return test[len("not ") :]
    return f"not {test}" if test.isidentifier() else f"not ({test})"


def merge(first: list[str], second: list[str], test: str) -> list[str]:
    """``first`` where ``test`` holds, else ``second``, their shared lines written once."""
    result: list[str] = []
    position = 0
    for a0, a1, b0, b1 in _hunks(first, second):
        result += first[position:a0]
        if a0 == a1:
            result += [f"{{%- if {negation(test)} -%}}", *second[b0:b1]]
        else:
            result += [f"{{%- if {test} -%}}", *first[a0:a1]]
            if b0 != b1:
                result += ["{%- else -%}", *second[b0:b1]]
        result.append("{%- endif -%}")
        position = a1
    return result + first[position:]


# ------------------------------------------------------------------ the template


def switched_template(layout: Layout, emit: Callable[[Layout], str]) -> str:
    """The chat template of ``layout`` reading its switches' variables (``emit``: the
    template of one option set)."""
    switches = list(layout.switches)
    used: set[str] = set()

    def build(options: Any, remaining: list[Switch]) -> list[str]:
        if not remaining:
            return units(emit(_layout_for(layout, options)))
        switch, rest = remaining[0], remaining[1:]
        values = ordered(switch)
        branches = [
            build(dataclasses.replace(options, **{switch.option: value}), rest) for value in values
        ]
        result = branches[-1]
        for value, branch in zip(reversed(values[:-1]), reversed(branches[:-1]), strict=True):
            merged = merge(branch, result, condition(switch, value))
            if merged != branch:
                used.add(switch.option)
            result = merged
        return result

    body = build(layout.options, switches)
    head = [
        line
        for switch in switches
        if switch.option in used
        for line in setting(switch, getattr(layout.options, switch.option))
    ]
    return "\n".join([*head, *body])


def _layout_for(layout: Layout, options: Any) -> Layout:
    if options == layout.options:
        return layout
    if layout.from_options is not None:
        return layout.from_options(options)
    return dataclasses.replace(layout, options=options)
