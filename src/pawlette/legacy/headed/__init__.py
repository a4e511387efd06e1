"""Headed turns: ``<|role|>{metadata}\\n{body}``, each turn ended by the next role marker.

A concept of the declaration layer (:mod:`pawlette.legacy.layout`) for layouts in ChatGLM3's
family, with all of its interpreters in this package: the writer (:mod:`.write`), the parse
table (:mod:`.table`) and its readers (:mod:`.readers`), the Jinja chat template
(:mod:`.jinja`) and the turn grammar (:mod:`.grammar`).  A :class:`~pawlette.legacy.Layout`
whose ``headed`` is a :class:`HeadedTurns` is interpreted by them; its other fields still say
what they say elsewhere:

- ``frames[role].open``: the role marker that heads a system, user or assistant turn (no
  ``end``: a turn ends where the next one's marker begins);
- ``frames["assistant"].end`` and ``also_end``: the stop set, the markers the model writes to
  end its turn (``<|user|>`` after text, ``<|observation|>`` after calls);
- ``results.frame.open``: the marker heading a result turn (ChatGLM3's ``<|observation|>``),
  which is also what the model writes to end a turn of calls;
- ``begin``: written once at the start (ChatGLM3's ``[gMASK]sop``, read as one marker).

What the concept adds, beyond those fences:

- **The metadata line**: the first line of every turn.  A system or user message's ``name``
  is written there (and read back from it); an assistant turn's metadata names its call.
- **Calls as turns of their own**: ``<|assistant|>NAME\\n```python\\ntool_call(k=v)\\n```\\ ``,
  keyword arguments as Python literals (:func:`pawlette.codecs.python_literals.encode_call`),
  one turn per call; an OpenAI message with text and calls is a text turn and then its call
  turns, joined again when parsed.
- **The code interpreter**: a turn whose metadata is ``code_metadata`` holds a fenced
  program, a call to the built-in tool ``code_tool`` with the one argument ``code_argument``;
  its result is the next result turn, verbatim.
- **The tools listing**: a newline and the function objects as one JSON list (indent 4,
  non-ASCII kept), after the first system message's text (an empty system turn holds it when
  there is none); parsing takes the list from the first line that is ``[`` alone.
- **The final stop**: a training render that ends with an assistant message ends with the
  marker the model writes there at inference, learned (see :mod:`.write`).
- ``role_order``: rules checked before rendering (:mod:`pawlette.blocks.role_order`);
  ``encode_cuts``: how the format's reference cuts text into tokenizer calls
  (:attr:`pawlette.Format.encode_cuts`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...blocks.role_order import RoleOrder
from ...codecs.python_literals import Quote
from ...types import Role
from ..layout import Fence, Layout, Lit, Marker


@dataclass(frozen=True)
class HeadedTurns:
    """The headed-turns concept (see the module docstring)."""

    language: str = "python"
    """The fence around a call's body and a program: ```` ```python ````."""
    callee: str = "tool_call"
    """The function a call's body calls: ``tool_call(k=v, ...)``."""
    quote: Quote = '"'
    """The quote of Python string literals in calls."""
    code_metadata: str = "interpreter"
    """The metadata of a code-interpreter turn."""
    code_tool: str = "code_interpreter"
    """The built-in tool a program is a call to; its one argument is ``code_argument``."""
    code_argument: str = "code"
    role_order: RoleOrder | None = None
    """Role-order rules refused before rendering (None: any order)."""
    encode_cuts: frozenset[str] | None = frozenset({"metadata"})
    """The reference encodes ``{metadata}\\n`` and the content with separate tokenizer calls."""

    @property
    def opening(self) -> str:
        return f"```{self.language}\n"

    closing = "\n```"

    def head(self, name: str) -> str:
        """What a call turn writes after its role marker, up to its arguments."""
        return name + "\n" + self.opening + self.callee + "("


TOOLS_OPEN = "\n"
"""Written before the tools' JSON list (:func:`.readers.split_tools_block` finds it)."""


def headed_of(layout: Layout) -> HeadedTurns:
    headed = layout.headed
    assert isinstance(headed, HeadedTurns), layout.name
    return headed


def title(layout: Layout) -> str:
    """The format's name in messages: its summary up to the first colon (``ChatGLM3``)."""
    return layout.summary.partition(":")[0]


def text_of(pieces: Fence) -> str:
    return "".join(piece.text for piece in pieces if isinstance(piece, (Marker, Lit)))


def role_markers(layout: Layout) -> dict[Role, str]:
    """The marker that heads each role's turn (``tool``: the result turn's)."""
    if layout.results is None:
        raise ValueError(f"{layout.name}: headed turns need results (the observation turn)")
    markers: dict[Role, str] = {
        role: text_of(layout.frames[role].open) for role in ("system", "user", "assistant")
    }
    markers["tool"] = text_of(layout.results.frame.open)
    return markers


__all__ = ["TOOLS_OPEN", "HeadedTurns", "headed_of", "role_markers", "text_of", "title"]
