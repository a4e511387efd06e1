"""Tools written as code or markup: the presentations the declared families write.

A template that writes its tools otherwise than as their JSON often writes them as a declared
family does (a fine-tune keeps its base model's tools and changes its turns or its default
text).  Each :class:`Presentation` holds one such family's tools block, its fences left
empty: what it writes for the probe tools is the text inference looks for in the template's
render, and the block it declares is that concept with the fences and the place found
around the text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..declare import ToolsBlock
from ..declare.pieces import Fence, text_of
from ..errors import PawletteError
from ..formats.apertus.typescript import DeveloperBlock
from ..formats.bielik.tools import LinedToolArray
from ..formats.breeze.python_tools import PythonTools
from ..formats.chatml.xml_tools import XmlToolsBlock
from ..formats.cohere.concepts import CohereTools
from ..formats.cohere.stubs import PlusTools
from ..formats.gemma4.concepts import GemmaTools
from ..formats.gigachat.typescript import TypeScriptTools
from ..formats.hermes.tools import HermesTools
from ..formats.ifm.tools import MarkdownTools, XmlTools
from ..formats.kimi.k3 import SortedToolsBlock
from ..formats.seed_oss.concepts import StubTools
from ..types import Tool
from .described_tools import DescribedTools
from .literal_tools import LiteralTools
from .namespace_tools import NamespaceTypes

__all__ = ["PRESENTATIONS", "Presentation"]


class _Written:
    """The part of a render a tools block writes to: its texts, in order."""

    def __init__(self, tools: Sequence[dict[str, Any]]) -> None:
        self.tools = tuple(Tool(item["function"]["name"], item["function"]) for item in tools)
        self.parts: list[str] = []
        self.handled: set[str] = set()

    def fence(self, pieces: Fence, kind: str, **_: Any) -> None:
        self.parts.append(text_of(pieces))

    def text(self, text: str, kind: str, **_: Any) -> None:
        self.parts.append(text)

    raw = text


@dataclass(frozen=True)
class Presentation:
    """A declared family's way of writing tools: ``concept`` with empty fences; ``items``:
    it writes each tool between ``item_open`` and ``item_close`` (found between two tools, as
    for JSON items), else the tools as one text; ``always``: the concept writes its block
    without tools too, its text without them (:meth:`empty`) where the tools go."""

    name: str
    concept: ToolsBlock
    items: bool = False
    always: bool = False

    def text(self, tools: Sequence[dict[str, Any]]) -> str | None:
        """What the block writes for ``tools`` (OpenAI tools) between its fences; None: it
        cannot write them."""
        written = _Written(tools)
        try:
            self.concept.check(written)  # type: ignore[arg-type]
            self.concept.block(written)  # type: ignore[arg-type]
        except (PawletteError, AttributeError, TypeError, ValueError, LookupError):
            return None  # (the block refuses the probe tools: not this presentation)
        return "".join(written.parts)

    def empty(self) -> str:
        """What the block writes in place of the tools when there are none ("" unless
        ``always``)."""
        return (self.text(()) or "") if self.always else ""

    def declare(self, **fields: Any) -> ToolsBlock:
        return dataclasses.replace(self.concept, **fields)


PRESENTATIONS: tuple[Presentation, ...] = (
    Presentation("XML tags (Qwen3-Coder)", XmlToolsBlock()),
    Presentation("XML tags (Nemotron 3)", XmlToolsBlock(enum=True)),
    Presentation("TypeScript namespace (GigaChat)", TypeScriptTools()),
    Presentation("declarations (Gemma 4)", GemmaTools(), items=True),
    Presentation("declarations (Gemma 4, interleaved)", GemmaTools(interleaved=True), items=True),
    Presentation("Python stubs (Seed-OSS)", StubTools()),
    Presentation("tool lines (Command R7B)", CohereTools()),
    Presentation("Python stubs (Command R+)", PlusTools()),
    Presentation("TypeScript types (Apertus)", DeveloperBlock(), always=True),
    Presentation("Markdown (IFM)", MarkdownTools()),
    Presentation("XML (IFM)", XmlTools()),
    Presentation("Python signatures (Breeze)", PythonTools()),
    Presentation("JSON with signature descriptions (Hermes)", HermesTools()),
    Presentation("Python literals (Apriel)", LiteralTools(), items=True),
    Presentation("described JSON, HTML-escaped (Functionary v3.1)", DescribedTools(), True),
    Presentation("described JSON (Functionary v3.1)", DescribedTools(escaped=False), True),
    Presentation("TypeScript types in a namespace (Functionary v3.2)", NamespaceTypes(), True),
    Presentation("JSON array on lines (Bielik)", LinedToolArray()),
    Presentation("JSON array of functions on lines (Bielik)", LinedToolArray(wrap="function")),
    Presentation("sorted JSON (Kimi K3)", SortedToolsBlock(), items=True),
    Presentation("sorted JSON array (Kimi K3)", SortedToolsBlock(array=True)),
    Presentation("sorted JSON functions (Kimi K3)", SortedToolsBlock(wrap="function"), True),
    Presentation(
        "sorted JSON array of functions (Kimi K3)", SortedToolsBlock(wrap="function", array=True)
    ),
)
"""The presentations inference tries, in order, when a template's tools are not their JSON."""
