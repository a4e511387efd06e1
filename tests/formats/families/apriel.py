"""ServiceNow Apriel (``pawlette.formats.apriel``) against its templates: every kind of
conversation, system messages anywhere.  Apriel 1.5's template drops reasoning and names
(documented losses).  Apriel 1.6's (``apriel:1.6``) writes reasoning only in the
conversation's last message, and its generation prompt's ``Here are my reasoning steps:\\n``
is in no turn it writes (``prompt_tail``): a turn is read after the opener alone."""

from __future__ import annotations

from ...support.template_compare import without_reasoning
from . import FamilyCase

CASES = [
    FamilyCase("unsloth-Apriel-1.5", "apriel", normalise=without_reasoning),
    FamilyCase(
        "Apriel-1.6-15b-Thinker-fixed",
        "apriel:1.6",
        prompt_tail="Here are my reasoning steps:\n",
    ),
]
