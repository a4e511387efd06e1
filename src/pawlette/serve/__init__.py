"""Serving: OpenAI chat-completion chunks from parser events, and (with the ``serve`` extra)
the HTTP server.  Importing this package needs no optional dependency."""

from .chunks import ChunkStream

__all__ = ["ChunkStream"]
