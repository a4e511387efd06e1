"""Concepts that more than one format declaration uses, outside the parse engine.

- :mod:`pawlette.blocks.tool_choice`: generation-prompt suffixes that force a ``tool_choice``.
- :mod:`pawlette.blocks.role_order`: which roles may follow which, checked before rendering.
- :mod:`pawlette.blocks.images`: image placeholder token counts and bounding-box coordinates.
- :mod:`pawlette.blocks.results`: tool results written as one list, in call order.
"""
