"""The breeze declaration (``pawlette.declared.breeze``, not registered yet) under a name of
its own, for the generated cross-artifact checks (the hand-written format holds ``breeze``)."""

from __future__ import annotations

import dataclasses
from contextlib import AbstractContextManager

import pawlette
from pawlette.declared import breeze

from . import registering

LAYOUT = dataclasses.replace(breeze.LAYOUT, name="breeze-declared", from_options=None)


def registered() -> AbstractContextManager[pawlette.Format]:
    """The format registered for the duration of a block."""
    return registering.registered(LAYOUT)
