"""Renderers compiled from declarations.

The declaration layer's generic writer (:func:`pawlette.declare.write.writer_of`) walks a
layout's skeleton on every render: for each turn it loops over each hook's concepts, tests
which parts of the frame apply, and looks fences up.  Everything it decides from the layout
alone is the same in every render.  :func:`compiled_writer` decides it once: it writes Python
source for the layout's skeleton (one function per role, each concept's hooks called in
order without loops, the branches the layout rules out left out), compiles it once per
format, and renders with it.

The generic writer stays the reference: ``tests/compile`` renders every registered format's
cases and generated conversations through both and requires the same text, segments, losses
and errors.  Whatever the compiler cannot specialise is rendered by the reference (see
:func:`compiled_writer`'s ``reason``), and :func:`is_compiled` says which a format uses.
"""

from __future__ import annotations

from .writer import compiled_writer, is_compiled, reference_of, wrapped_writer

__all__ = ["compiled_writer", "is_compiled", "reference_of", "wrapped_writer"]
