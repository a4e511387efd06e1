"""The building blocks every export is made of, below the declaration layer: grammar trees and
their Lark/GBNF writers, JSON Schema and Python-call argument grammars, the text language
that keeps markers out of free text, the Jinja pieces chat templates share, and the
normalised ``tool_choice``.  Concepts use them to emit their parts; :mod:`pawlette.export`
assembles whole artifacts from a declared format."""
