"""Jinja building blocks the declared formats' template emitters share (``_common``)."""
