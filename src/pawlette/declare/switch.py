"""A template variable that switches one of a format's options (``Layout.switches``).

Qwen3's template reads ``enable_thinking``, DeepSeek V3.1's ``thinking``, Hy3's
``reasoning_effort``: a Hugging Face caller switches the model's thinking with
``apply_chat_template(..., enable_thinking=False)`` on one template.  A layout names such a
variable with a :class:`Switch`, and its exported chat template reads it (see
:mod:`pawlette.export.switched`): it renders what the format renders with the option set to the
variable's value, and with the option as the layout has it when the variable is not passed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import FormatError

_KINDS = (bool, str, type(None))


@dataclass(frozen=True)
class Switch:
    """The template variable ``variable`` sets the option ``option`` to one of ``values``.

    - ``values``: the option values the template renders; the variable's value is taken as
      it is (``True``/``False`` by truth for a boolean option; ``None`` among the values:
      the variable set to ``none``, as a template reading ``is true``/``is false`` leaves
      the option unset).  A string option refuses a value outside ``values``.
    - ``fallback``: variables read, in order, when ``variable`` is not passed (DeepSeek's
      templates read ``thinking``, else ``enable_thinking``).

    >>> Switch("thinking", "enable_thinking").values
    (True, False)
    """

    option: str
    variable: str
    values: tuple[Any, ...] = (True, False)
    fallback: tuple[str, ...] = ()

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable read, first the one that wins."""
        return (self.variable, *self.fallback)

    def check(self, where: str, options: Any) -> None:
        """Refuse a switch the options cannot take (``where``: the layout's name)."""
        fields = {item.name for item in dataclasses.fields(options)} if options else set()
        if self.option not in fields:
            names = ", ".join(sorted(fields)) or "none"
            raise _error(
                where, "", f"option {self.option!r}", f"one of the options' fields ({names})"
            )
        values = f"[{self.option!r}].values"
        if not self.values or any(type(value) not in _KINDS for value in self.values):
            raise _error(where, values, repr(self.values), "booleans, strings or None")
        if len(set(self.values)) != len(self.values):
            raise _error(where, values, f"{self.values!r} repeats a value", "each once")
        current = getattr(options, self.option)
        if current not in self.values:
            found = f"the option is {current!r}"
            raise _error(where, f"[{self.option!r}]", found, f"one of the values {self.values!r}")


def _error(where: str, field: str, found: str, expected: str) -> FormatError:
    """An error of ``Layout.switches`` (``field``: what of it, ``"[option].values"``)."""
    return FormatError(f"{where}: Layout.switches{field}: {found}; expected {expected}")


def check_switches(where: str, switches: Iterable[Switch], options: Any) -> None:
    seen: set[str] = set()
    for switch in switches:
        if not isinstance(switch, Switch):
            raise _error(where, "", f"a {type(switch).__name__}", "a Switch")
        if switch.option in seen:
            raise _error(where, "", f"option {switch.option!r} twice", "one switch per option")
        seen.add(switch.option)
        switch.check(where, options)
