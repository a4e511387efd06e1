"""Argument codecs: how a format writes a tool call's name and arguments inside its markup.

Each codec is an incremental, sans-IO decoder (``feed(text)`` / ``finish()`` returning
events) plus the encoder that writes what the decoder reads.  Format declarations name a codec;
the parse engine drives it between the format's markers.

- :mod:`pawlette.codecs.python_calls`: Python call syntax, literals only (ChatGLM3's
  ``tool_call(...)``, Breeze / Llama 3.2's ``[f(...), g(...)]``).
- :mod:`pawlette.codecs.python_literals`: the encoder that writes what it reads (literals,
  calls, lists of calls).
"""
