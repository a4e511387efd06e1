"""Muse Glimmer (``pawlette.formats.muse``) against its ATEM template.

Every kind of conversation is generated but text beside calls, which the template drops (a
documented loss); its own assistant turns parse back to the message.
"""

from __future__ import annotations

from . import FamilyCase

CASES = [FamilyCase("muse-glimmer", "muse", switches={"text_with_calls": False}, count=24)]
