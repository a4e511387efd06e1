"""A line-by-line reading of a code block's closing fence: the oracle ChatGLM3's
:class:`~pawlette.formats.chatglm3.readers.FenceTail` (which reads by offsets) must agree with.

The block ends with a ``\\n```\\n``-style closing fence: a newline, three backticks, then only
whitespace up to the end of the state.  :meth:`ClosingFence.feed` returns the body text that
can no longer be part of that fence; :meth:`ClosingFence.close` says whether the held tail is
the fence (and returns it).
"""

from __future__ import annotations

_SPACE = frozenset(" \t\r\n")


class ClosingFence:
    """The body of a code block, streamed; the closing fence is held back until the end.

    The block ends with ``\\n```\\n``-style closing fence: a newline, three backticks, then only
    whitespace up to the end of the state.  :meth:`feed` returns the body text that can no
    longer be part of that fence; :meth:`close` says whether the held tail is the fence (and
    returns it, to be dropped, or to be kept as body text when it is not a fence).
    """

    __slots__ = ("_held", "_phase", "_ticks")

    def __init__(self) -> None:
        self._held: list[str] = []
        self._phase: str | None = None  # None, "ticks" (after \n), "space" (after \n```)
        self._ticks = 0

    def feed(self, text: str) -> str:
        released: list[str] = []
        position, length = 0, len(text)
        while position < length:
            if self._phase is None:
                newline = text.find("\n", position)
                if newline < 0:
                    released.append(text[position:])
                    break
                released.append(text[position:newline])
                self._hold_newline()
                position = newline + 1
                continue
            character = text[position]
            if self._phase == "ticks":
                if character == "`":
                    self._held.append(character)
                    self._ticks += 1
                    if self._ticks == 3:
                        self._phase = "space"
                    position += 1
                elif character == "\n":
                    released.extend(self._held)
                    self._hold_newline()
                    position += 1
                else:
                    released.extend(self._held)
                    self._held = []
                    self._phase = None  # read the character again, outside any fence
            elif character in _SPACE:
                self._held.append(character)
                position += 1
            else:
                held = "".join(self._held)
                if held.endswith("\n"):  # a fresh line may still be the fence
                    released.append(held[:-1])
                    self._hold_newline()
                else:
                    released.append(held)
                    self._held = []
                    self._phase = None
        return "".join(released)

    def _hold_newline(self) -> None:
        self._held = ["\n"]
        self._phase = "ticks"
        self._ticks = 0

    def close(self) -> tuple[bool, str]:
        """``(True, fence)`` when the held tail is the closing fence, else ``(False, text)``."""
        return self._phase == "space", "".join(self._held)
