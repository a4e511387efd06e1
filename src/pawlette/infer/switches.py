"""A template's switches, inferred as options of its format (``Layout.switches``).

Many chat templates read a variable their callers pass beside the messages to switch the
model's thinking: Qwen3's ``enable_thinking``, DeepSeek V3.1's ``thinking``, GLM's
``clear_thinking``.  Inference finds the variables a template reads that no caller passes by
default (:func:`read_variables`), and tries each whose name speaks of thinking or reasoning
(:func:`candidates`) with ``true`` and ``false`` on a few conversations.  A variable whose
renders change, and whose absence renders as one of the two values (the template's default),
is a switch: the declaration is inferred again with the variable set to the other value.
When that one verifies too, the inferred format gets an option named as the variable (its
default: the template's own, the variable absent); setting it selects the other declaration,
and the format's exported chat template reads the variable
(:class:`~pawlette.declare.switch.Switch`).  A variable whose absence renders unlike both
values is a three-way switch: the option takes ``None`` too, its default (the variable
unset), and the declaration is inferred for ``true`` and for ``false``.  A variable the
template reads only when another one is not passed (DeepSeek's ``enable_thinking``, read
when ``thinking`` is not) is that switch's fallback, not an option of its own.  A switch
whose other values cannot be inferred is reported as not derived, with why, and the format
renders the template's default.

The cost is bounded: at most :data:`CANDIDATES` variables are tried, and at most
:data:`SWITCHES` are derived (the second needs an inference for each value of the first).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..declare import Layout, declare
from ..declare.switch import Switch
from ..errors import RequestError
from .draft import Capability, InferredOptions
from .probe import message
from .template import TemplateRunner

__all__ = [
    "CANDIDATES",
    "SWITCHES",
    "candidates",
    "read_variables",
    "switch_layouts",
    "switched_layout",
    "with_switches",
]

CANDIDATES = 3
"""Variables tried as switches, at most (each costs a few renders)."""

SWITCHES = 2
"""Switches derived, at most (each costs an inference per value of those before it)."""

PASSED = frozenset(
    {
        "messages",
        "tools",
        "documents",
        "add_generation_prompt",
        "bos_token",
        "eos_token",
        "pad_token",
        "unk_token",
        "raise_exception",
        "strftime_now",
        "namespace",
        "dict",
        "range",
        "loop",
        "tools_in_user_message",
        "custom_tools",
        "builtin_tools",
        "date_string",
        "today",
        # Fields of a message, read where a template's loop scoping leaves them top-level.
        "content",
        "reasoning_content",
        "reasoning",
        "role",
        "name",
        "tool_calls",
        "message",
    }
)
"""Names a template reads that are not switches: what callers pass with every render, the
runner's globals, and a message's own fields."""

_SWITCH_NAME = re.compile(r"think|reason", re.IGNORECASE)
_NOT_BOOLEAN = re.compile(r"effort|budget|level|mode|format", re.IGNORECASE)

Renders = tuple[str | None, ...]
Value = bool | None
"""A switch's value: true, false, or None (the variable unset, of a three-way switch)."""


def read_variables(runner: TemplateRunner) -> list[str]:
    """The variables the template reads that it does not set (sorted)."""
    from jinja2 import meta

    parsed = runner.environment.parse(runner.template)
    return sorted(meta.find_undeclared_variables(parsed))


def candidates(variables: Sequence[str]) -> list[str]:
    """The variables tried as boolean switches: names of thinking or reasoning, not of an
    effort or a budget, ``enable_thinking`` and ``thinking`` first."""
    found = [
        name
        for name in variables
        if name not in PASSED
        and name.isidentifier()
        and _SWITCH_NAME.search(name)
        and not _NOT_BOOLEAN.search(name)
    ]
    first = ("enable_thinking", "thinking")
    return sorted(found, key=lambda name: (first.index(name) if name in first else 2, name))


def _conversations() -> list[tuple[list[dict[str, Any]], bool]]:
    """The conversations a switch is tried on: a prompt after one question, after a turn
    with reasoning, and that turn as the last one."""
    question = message("user", "What is the capital of France?")
    answer = message(
        "assistant", "Paris.", reasoning_content="The user asks about France's capital city."
    )
    again = message("user", "And of Italy?")
    return [([question], True), ([question, answer, again], True), ([question, answer], False)]


def _renders(runner: TemplateRunner, variables: Mapping[str, Any]) -> Renders:
    return tuple(
        runner.render(messages, add_generation_prompt=prompt, variables=variables).text
        for messages, prompt in _conversations()
    )


@dataclasses.dataclass(frozen=True)
class _Found:
    """A variable whose value changes the renders: its default (None: the template renders
    the variable unset unlike either value) and the other values."""

    variable: str
    default: Value
    others: tuple[bool, ...]
    fallback: tuple[str, ...] = ()

    @property
    def values(self) -> tuple[Value, ...]:
        return (self.default, *self.others)


def _found(runner: TemplateRunner, variable: str, given: Mapping[str, Any]) -> _Found | None:
    """The switch ``variable`` is (None: it changes nothing, or it is not a boolean)."""
    absent = _renders(runner, given)
    on = _renders(runner, {**given, variable: True})
    off = _renders(runner, {**given, variable: False})
    if on == off or None in absent:
        return None  # it changes nothing, or the template refuses the conversations themselves
    if None in on or None in off:
        return None  # a value the template refuses is not one it takes: not a boolean
    if absent == on:
        return _Found(variable, True, (False,))
    if absent == off:
        return _Found(variable, False, (True,))
    return _Found(variable, None, (True, False))  # three-way: unset is a value of its own


@functools.cache
def _options_type(defaults: tuple[tuple[str, Value], ...]) -> type:
    """The options of a switched inferred format: ``today`` and a field per switch (one
    class per set of switches, so layouts built twice compare equal); a three-way switch's
    field takes None, its default."""
    fields = [
        (name, bool if value is not None else bool | None, dataclasses.field(default=value))
        for name, value in defaults
    ]
    made: type = dataclasses.make_dataclass(
        "SwitchedOptions",
        fields,
        bases=(InferredOptions,),
        frozen=True,
        namespace={"__doc__": "The options of an inferred format: its date and its switches."},
    )
    return made


def switched_layout(
    defaults: Mapping[str, Value],
    layouts: Mapping[tuple[Value, ...], Layout],
    fallbacks: Mapping[str, tuple[str, ...]] | None = None,
) -> Layout:
    """The layout of the switches' defaults, its options holding the switches.

    ``defaults``: each switch's variable (the option's name too) and the template's value
    without it (None: a three-way switch, the variable unset); ``layouts``: the layout
    inferred for each set of the switches' values, in the order of ``defaults`` (the date
    option, when there is one, is the same in each).  A switch takes the values its place
    in the keys of ``layouts`` holds; other values of the options select the layout
    inferred for them.  ``fallbacks``: the variables a switch's template reads, in order,
    when its own is not passed (DeepSeek V3.1's ``thinking``, else ``enable_thinking``)."""
    names = tuple(defaults)
    options_type = _options_type(tuple(defaults.items()))
    switches = tuple(
        Switch(
            name,
            name,
            values=_values({key[place] for key in layouts}),
            fallback=(fallbacks or {}).get(name, ()),
        )
        for place, name in enumerate(names)
    )
    base = layouts[tuple(defaults[name] for name in names)]
    today = getattr(base.options, "today", None)

    def template_variables(options: Any) -> dict[str, Any]:
        # The template as it runs for these options: a variable at its default is not passed.
        return {
            name: getattr(options, name)
            for name in names
            if getattr(options, name) != defaults[name]
        }

    def layout_for(options: Any) -> Layout:
        key: list[Value] = []
        for name, switch in zip(names, switches, strict=True):
            value = getattr(options, name)
            if not (isinstance(value, bool) or value is None) or value not in switch.values:
                expected = "true or false" if None not in switch.values else "true, false or None"
                raise RequestError(
                    f"options.{name}", repr(value), f"{expected} (the template's switch)"
                )
            key.append(value)
        return dataclasses.replace(
            layouts[tuple(key)],
            options=options,
            from_options=layout_for,
            template_variables=template_variables,
            switches=switches,
        )

    return layout_for(options_type(today=today, **defaults))


def _values(taken: set[Value]) -> tuple[Value, ...]:
    """A switch's values in the order its option lists them: unset, true, false."""
    return tuple(value for value in (None, True, False) if value in taken)


def switch_layouts(layout: Layout) -> dict[tuple[Value, ...], Layout]:
    """The layouts a :func:`switched_layout` selects from, as they were inferred, by the
    switches' values (``layout.switches`` order)."""
    names = [switch.option for switch in layout.switches]
    assert layout.from_options is not None
    found = {}
    today = getattr(layout.options, "today", None)
    for key in itertools.product(*(switch.values for switch in layout.switches)):
        options = dataclasses.replace(layout.options, **dict(zip(names, key, strict=True)))
        chosen = layout.from_options(options)
        found[key] = dataclasses.replace(
            chosen,
            options=InferredOptions(today=today) if chosen.today else None,
            from_options=None,
            template_variables=None,
            switches=(),
        )
    return found


def with_switches(
    inference: Any,
    runner: TemplateRunner,
    again: Callable[[Mapping[str, Any]], Any],
) -> Any:
    """``inference`` (an accepted :class:`~pawlette.infer.Inference`) with the template's
    switches as options of its format, and a capability per switch tried.

    ``runner``: the template as inference ran it; ``again``: inference with variables set."""
    began = time.perf_counter()
    read = [name for name in read_variables(runner) if name not in runner.variables]
    tried = candidates(read)[:CANDIDATES]
    switches = [item for item in (_found(runner, name, {}) for name in tried) if item is not None]
    switches, read_instead = _with_fallbacks(runner, switches)
    found: list[_Found] = []
    reports: list[Capability] = []
    layouts: dict[tuple[Value, ...], Layout] = {(): inference.layout}
    for switch in switches:
        what = f"switch {switch.variable}"
        if len(found) == SWITCHES:
            reports.append(
                Capability(what, "not derived", f"at most {SWITCHES} switches are derived")
            )
            continue
        grown, said = _grow(layouts, found, switch, again, _not_derived(inference))
        if grown is None:
            reports.append(Capability(what, "not derived", said))
            continue
        layouts = grown
        found.append(switch)
        reports.append(Capability(what, "derived", said))
    for variable, winner in read_instead.items():
        derived = any(item.variable == winner for item in found)
        said = f"read as the {winner} option when {winner} is not passed"
        if not derived:
            said += f" (the {winner} switch is not derived)"
        reports.append(
            Capability(f"switch {variable}", "derived" if derived else "not derived", said)
        )
    if not reports:
        return inference
    changes: dict[str, Any] = {
        "capabilities": (*inference.capabilities, *reports),
        "seconds": inference.seconds + time.perf_counter() - began,
    }
    if found:
        fallbacks = {item.variable: item.fallback for item in found if item.fallback}
        defaults = {item.variable: item.default for item in found}
        layout = switched_layout(defaults, layouts, fallbacks)
        changes.update(layout=layout, format=declare(layout))
    return dataclasses.replace(inference, **changes)


def _word(value: Value) -> str:
    return "unset" if value is None else "true" if value else "false"


def _with_fallbacks(
    runner: TemplateRunner, switches: list[_Found]
) -> tuple[list[_Found], dict[str, str]]:
    """``switches`` with each that another one stands in for (read only when that other one
    is not passed: DeepSeek V3.1 reads ``thinking``, else ``enable_thinking``) named as its
    fallback, and those read instead (their variable: the switch's)."""
    read_instead: dict[str, str] = {}
    result = []
    for switch in switches:
        fallback = tuple(
            other.variable
            for other in switches
            if other is not switch
            and other.variable not in read_instead
            and switch.variable not in read_instead
            and _stands_in(runner, switch.variable, other.variable)
        )
        read_instead.update(dict.fromkeys(fallback, switch.variable))
        result.append(dataclasses.replace(switch, fallback=fallback))
    return [item for item in result if item.variable not in read_instead], read_instead


def _stands_in(runner: TemplateRunner, variable: str, fallback: str) -> bool:
    """Whether the template reads ``fallback`` as ``variable`` when ``variable`` is not
    passed, and ignores it when it is."""
    values = (True, False)
    if any(
        _renders(runner, {fallback: value}) != _renders(runner, {variable: value})
        for value in values
    ):
        return False
    return all(
        _renders(runner, {fallback: other, variable: value}) == _renders(runner, {variable: value})
        for value in values
        for other in values
    )


def _not_derived(inference: Any) -> set[str]:
    """The names of the capabilities ``inference`` did not derive."""
    return {item.name for item in inference.capabilities if item.status == "not derived"}


def _grow(
    layouts: Mapping[tuple[Value, ...], Layout],
    found: Sequence[_Found],
    switch: _Found,
    again: Callable[[Mapping[str, Any]], Any],
    missing: set[str],
) -> tuple[dict[tuple[Value, ...], Layout] | None, str]:
    """The layouts for every value of the switches ``found`` and ``switch`` (None, and why,
    when one cannot be inferred), and what was verified: the figures, and what an inference
    with a switch set did not derive beyond what the template's default lacks (``missing``:
    its names)."""
    grown = {(*key, switch.default): layout for key, layout in layouts.items()}
    figures = []
    for key in itertools.product(*(item.values for item in found)):
        for other in switch.others:
            variables = {
                item.variable: value
                for item, value in zip(found, key, strict=True)
                if value != item.default
            }
            variables[switch.variable] = other
            setting = ", ".join(f"{name}={_word(value)}" for name, value in variables.items())
            inferred = again(variables)
            if not inferred.accepted:
                return None, f"with {setting} the declaration is not inferred: {inferred.refusal}"
            flipped = (*key, other)
            grown[flipped] = inferred.layout
            figure = f"with {setting}: {inferred.verification.describe()}"
            lacking = sorted(_not_derived(inferred) - missing)
            if lacking:
                figure += f" (not derived with it: {', '.join(lacking)})"
            figures.append(figure)
    default = f"the {switch.variable} option (default {_word(switch.default)}, the template's "
    default += "own without the variable); " + "; ".join(figures)
    return grown, default
