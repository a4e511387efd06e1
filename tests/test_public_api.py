"""The public API is exactly what ``pawlette.__all__`` says, and each name exists."""

from __future__ import annotations

import pawlette


def test_all_is_pinned() -> None:
    expected = {
        "ActionPart", "AlpacaPrompter", "BoxPart", "ChatPrompter", "ChunkStream", "Completion",
        "ContentPart", "Event", "Format",
        "FormatError", "ImagePart", "ImageRequestPart", "Message", "MessageEnd", "MessageStart",
        "MetadataItem", "ParseError", "ParseWarning", "ParsedConversation", "PartAdded",
        "PawletteError", "ReasoningDelta", "ReasoningStepAdded", "Rendering", "RequestError",
        "Segment", "TextDelta", "TextPart", "ThinkStep", "TokenizerMismatch", "Tool", "ToolCall",
        "ToolCallDelta", "ToolCallEnd", "ToolCallStart", "ToolsDeclared", "UnsupportedFeature",
        "VoicePart", "formats", "get_format",
    }  # fmt: skip
    assert set(pawlette.__all__) == expected
    for name in pawlette.__all__:
        assert hasattr(pawlette, name), name


def test_error_hierarchy() -> None:
    assert issubclass(pawlette.UnsupportedFeature, pawlette.RequestError)
    for error in (
        pawlette.RequestError,
        pawlette.ParseError,
        pawlette.FormatError,
        pawlette.TokenizerMismatch,
    ):
        assert issubclass(error, pawlette.PawletteError)
