"""Hunyuan 3's template (:mod:`pawlette.formats.hy3`): every kind of conversation.

The default generation prompt closes an empty block after its opener; a past turn with
reasoning holds that reasoning there instead, so its turn is cut after the opener alone."""

from __future__ import annotations

from . import FamilyCase

EMPTY_THINKING = "<think:opensource></think:opensource>"
"""What the default (``no_think``) generation prompt writes after its opener."""

CASES = [
    FamilyCase(template="tencent-Hy3", format="hy3", prompt_tail=EMPTY_THINKING),
]
