"""The errors pawlette raises.

```
PawletteError
  ├─ RequestError          the caller's messages/tools are invalid           (HTTP 400)
  │    └─ UnsupportedFeature  valid OpenAI, but this format cannot express it
  ├─ ParseError            model output does not fit the format (strict mode)
  ├─ FormatError           a format declaration is inconsistent (raised at import)
  └─ TokenizerMismatch     a marker is not a single special token in the given tokenizer
```

Every message reads ``<where>: <what was found>; <what was expected>[. hint]``.
"""

from __future__ import annotations


class PawletteError(Exception):
    """The base of every error pawlette raises on purpose."""


class RequestError(PawletteError, ValueError):
    """The caller's messages, tools or options are invalid.

    ``path`` is the JSON path of the offending value (``messages[3].content``), or ``""``.
    """

    def __init__(self, path: str, found: str, expected: str, hint: str = "") -> None:
        self.path = path
        self.found = found
        self.expected = expected
        self.hint = hint
        where = path or "request"
        message = f"{where}: {found}; expected {expected}"
        if hint:
            message += f". {hint}"
        super().__init__(message)


class UnsupportedFeature(RequestError):
    """Valid OpenAI input that the chosen format has no way to express."""


class ParseError(PawletteError, ValueError):
    """Model output or a rendered conversation does not fit the format (strict mode).

    ``offset`` is the character offset in the parsed text, ``context`` the text around it.
    """

    def __init__(self, offset: int, found: str, expected: str, context: str = "") -> None:
        self.offset = offset
        self.found = found
        self.expected = expected
        self.context = context
        message = f"offset {offset}: {found}; expected {expected}"
        if context:
            message += f" (near {context!r})"
        super().__init__(message)


class FormatError(PawletteError):
    """A format declaration is inconsistent; raised when the format is built."""


class TokenizerMismatch(PawletteError):
    """A marker of the format is not one special token of the given tokenizer."""
