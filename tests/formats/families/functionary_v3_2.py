"""Functionary v3.2 (``pawlette.formats.functionary_v3_2``) against MeetKai's template.

Every kind of conversation is generated, calls with their arguments as text (the template
joins them to its text: :data:`tests.support.template_corpus.TEXT_ARGUMENTS`): the template
drops reasoning and names (documented losses); its own assistant turns parse back to the
message as it keeps it.  Texts are never empty: the template writes an empty assistant turn
without a segment, which its generation prompt's ``>>>`` does not begin, so no such turn can
be cut out of its renders (the matrix counts them as such; the renders are compared there).
"""

from __future__ import annotations

from tests.support.conversations import TEXT_STYLES
from tests.support.template_compare import without_reasoning

from . import FamilyCase

CASES = [
    FamilyCase(
        "meetkai-functionary-medium-v3.2",
        "functionary_v3_2",
        switches={"texts": tuple(style for style in TEXT_STYLES if style != "empty-text")},
        normalise=without_reasoning,
        count=12,
    ),
]
