"""Solar Open (``pawlette.formats.solar``) against Upstage's template.

Every kind of conversation is generated: the template drops the reasoning of OpenAI-style
messages (it reads only ``reasoning``) and the text beside calls, documented losses; its own
assistant turns parse back to the message as it keeps it.
"""

from __future__ import annotations

from tests.support.template_compare import without_reasoning

from . import FamilyCase

CASES = [
    FamilyCase(
        "upstage-Solar-Open-100B",
        "solar",
        switches={"text_with_calls": False},
        normalise=without_reasoning,
        count=12,
    ),
]
