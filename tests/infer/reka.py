"""Reka Edge's template inferred once for the tests that read it."""

from __future__ import annotations

from functools import cache

from pawlette.infer import Inference, infer_template

from ..support.template_corpus import corpus_template


@cache
def reka() -> Inference:
    template = corpus_template("Reka-Edge")
    return infer_template(template.text, bos_token=template.bos_token, eos_token=template.eos_token)
