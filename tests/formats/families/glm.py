"""GLM's templates (:mod:`pawlette.formats.glm`): GLM-4.6 and GLM-4.7-Flash.

Both ``strip()`` an assistant turn's reasoning and text (a documented loss: ``strip_text``).
GLM-4.7's generation prompt opens ``<think>`` while a past turn without reasoning holds a lone
``</think>``, so only a turn with reasoning extends the prompt render: its conversations give
every assistant message some (the renders of turns without reasoning are compared in
``tests/formats/test_glm.py``, as are the no-thinking variants)."""

from __future__ import annotations

from ...support.template_compare import strip_text
from . import FamilyCase

CASES = [
    FamilyCase(template="GLM-4.6", format="glm", normalise=strip_text),
    FamilyCase(
        template="GLM-4.7-Flash",
        format="glm:4.7",
        switches={"reasoning_always": True},
        normalise=strip_text,
    ),
]
