"""Infer a chat format's declaration from its template, and verify it before use."""

from .core import Inference, infer_template
from .draft import Capability, InferredOptions
from .prompted import PromptRest
from .underived import Underived

__all__ = [
    "Capability",
    "Inference",
    "InferredOptions",
    "PromptRest",
    "Underived",
    "infer_template",
]
