"""Grammar building blocks the declared formats' turn grammars share (``_common``)."""
