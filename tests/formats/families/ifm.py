"""IFM-K2-Horizon's template (:mod:`pawlette.formats.ifm`) under its defaults: the tools
presented as Markdown (the XML and JSON presentations, ``ifm:xml-tools`` and
``ifm:json-tools``, are compared in :mod:`tests.formats.test_ifm`).  Its callers give an
assistant message without reasoning the empty thinking field the template requires
(:data:`tests.support.template_corpus.CALLER_MESSAGES`); the model's ``bos_token`` is
unknown, so the template is rendered without one, as the format writes none."""

from __future__ import annotations

from . import FamilyCase

CASES = [FamilyCase(template="IFM-K2-Horizon", format="ifm", count=32)]
