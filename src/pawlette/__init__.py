"""pawlette: render, parse, serve and export LLM chat formats.

>>> import pawlette
>>> pcml = pawlette.get_format("pcml")
>>> pcml.render([{"role": "user", "content": "Hi"}], add_generation_prompt=True).text
'[USR]Hi[/USR]\\n\\n[AST]'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import (
    FormatError,
    ParseError,
    PawletteError,
    RequestError,
    TokenizerMismatch,
    UnsupportedFeature,
)
from .format import Completion, Format, ParsedConversation
from .formats import get_format, register_format
from .prompter import AlpacaPrompter, ChatPrompter
from .serve.chunks import ChunkStream
from .tokenization.encoder import MaskPolicy, Tokenized, tokenize
from .types import (
    ActionPart,
    BoxPart,
    ContentPart,
    Event,
    ImagePart,
    ImageRequestPart,
    Message,
    MessageEnd,
    MessageStart,
    MetadataItem,
    ParseWarning,
    PartAdded,
    ReasoningDelta,
    ReasoningStepAdded,
    Rendering,
    Segment,
    TextDelta,
    TextPart,
    ThinkStep,
    Tool,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolsDeclared,
    VoicePart,
)
from .version import __version__ as __version__

if TYPE_CHECKING:
    from .formats import formats
else:  # the registry package itself, callable: pawlette.formats() lists the formats
    from . import formats

__all__ = [
    "ActionPart",
    "AlpacaPrompter",
    "BoxPart",
    "ChatPrompter",
    "ChunkStream",
    "Completion",
    "ContentPart",
    "Event",
    "Format",
    "FormatError",
    "ImagePart",
    "ImageRequestPart",
    "MaskPolicy",
    "Message",
    "MessageEnd",
    "MessageStart",
    "MetadataItem",
    "ParseError",
    "ParseWarning",
    "ParsedConversation",
    "PartAdded",
    "PawletteError",
    "ReasoningDelta",
    "ReasoningStepAdded",
    "Rendering",
    "RequestError",
    "Segment",
    "TextDelta",
    "TextPart",
    "ThinkStep",
    "Tokenized",
    "TokenizerMismatch",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolsDeclared",
    "UnsupportedFeature",
    "VoicePart",
    "formats",
    "get_format",
    "register_format",
    "tokenize",
]
