"""Spark2.5 (:mod:`pawlette.formats.spark`) against its template.

The generation prompt opens ``<think>`` while a past turn without reasoning holds a lone
``</think>``, so only a turn with reasoning extends the prompt render: its conversations give
every assistant message some (the no-thinking variant, whose prompt closes the block, is
compared on turns without reasoning in ``tests/formats/test_spark.py``)."""

from __future__ import annotations

from . import FamilyCase

CASES = [FamilyCase(template="Spark2.5", format="spark", switches={"reasoning_always": True})]
