"""IFM-K2-Horizon's template (:mod:`pawlette.formats.ifm`), given the format's own variables
(``tool_presentation_format='json'``: the template's Markdown default is not declared).  Its
callers give an assistant message without reasoning the empty thinking field the template
requires (:data:`tests.support.template_corpus.CALLER_MESSAGES`); the model's ``bos_token``
is unknown, so the template is rendered without one, as the format writes none."""

from __future__ import annotations

from . import FamilyCase

CASES = [FamilyCase(template="IFM-K2-Horizon", format="ifm", count=32)]
