"""Nemotron Nano 2 (``pawlette.formats.nemotron_v2``) against NVIDIA's template.

A conversation that ends on an assistant message is left out: the template writes that turn
as a continuation of its generation prompt, which the declaration does not copy (its
docstring says why).  The template's own turns are not compared: its generation prompt opens
a reasoning block its turns never close, so what the model writes after that prompt is read
in ``tests/formats/test_nemotron_v2.py``, from llama.cpp's cases.
"""

from __future__ import annotations

from . import FamilyCase

CASES = [
    FamilyCase(
        "NVIDIA-Nemotron-Nano-v2",
        "nemotron_v2",
        switches={"endings": ("user", "tool")},
        own_turns=False,
    ),
]
