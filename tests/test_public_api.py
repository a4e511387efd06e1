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
        "VoicePart", "formats", "get_format", "MaskPolicy", "Tokenized", "tokenize",
        "register_format",
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


def test_tokenize_needs_no_tokenizers_import_until_called() -> None:
    """``pawlette.tokenize`` is importable without the tokenize extra: nothing imports the
    ``tokenizers`` package until a tokenizer is loaded."""
    import subprocess
    import sys

    code = "import sys, pawlette; print('tokenizers' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_formats_lists_and_holds_the_families() -> None:
    # pawlette.formats() lists the formats, and the same name is the package of the
    # families' modules, reachable by every import form (a fresh interpreter: the import
    # statement's own lookups are what is tested).
    import subprocess
    import sys

    code = (
        "import pawlette.formats.harmony as by_import\n"
        "import pawlette\n"
        "from pawlette.formats import harmony\n"
        "from pawlette.formats.harmony import HarmonyTurns\n"
        "assert by_import is harmony is pawlette.formats.harmony\n"
        "assert HarmonyTurns is harmony.HarmonyTurns\n"
        "assert 'harmony' in pawlette.formats() and pawlette.formats()[0] == 'pcml'\n"
        "assert pawlette.formats() == pawlette.formats.formats()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
