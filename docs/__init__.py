"""The documentation site's own tooling (``python -m docs.gen``, the griffe extension).

mkdocs skips the Python files of this folder (``exclude_docs`` in ``mkdocs.yml``).
"""
