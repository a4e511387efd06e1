"""A streaming check of one JSON object's text: is it valid, and where does it end.

:class:`ObjectCheck` reads the text of a call's arguments as it streams, piece by piece,
without decoding it: it keeps only the open containers and, when a piece ends inside a token
that may still continue (a number, ``true``, an escape), that token's few characters.  So a
big call's arguments can be checked while only their text is kept, not their text and their
decoded value as well (a 4 MB string decodes to another 4 MB string).

What it accepts is what :func:`pawlette.engine.call_arguments.read_object` accepts as a
member's value that is an object: strict JSON (``json``'s own reading of it: no ``NaN`` or
``Infinity``, no number beyond a double's range such as ``1e400``, no control character
inside a string, any ``\\uXXXX`` escape), nested at most :data:`MAX_DEPTH` deep, no integer
longer than Python's limit on integer digits.  It may refuse more than that (an integer or
a word cut across pieces and longer than a few hundred characters): its caller then reads the
call the usual way, so a refusal costs memory, never a different result.  Runs of string
characters, whitespace and digits are read by ``re`` (C speed); Python runs once per token.
"""

from __future__ import annotations

import math
import re
import sys

from .call_arguments import MAX_NESTING

MAX_DEPTH = MAX_NESTING - 1
"""The deepest nesting accepted in a member's value (the call object around it is one more)."""
MAX_CARRY = 640
"""The longest number or word kept across pieces (CPython reads up to 640 digits at once)."""

_SPACE = re.compile(r"[ \t\n\r]*+")
# The body of a string up to its closing quote: plain characters and whole escapes.
_STRING_BODY = re.compile(r'(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+')
# An escape that the end of the piece cut short (it may still complete).
_ESCAPE_START = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?\Z")
_NUMBER_RUN = re.compile(r"[-+0-9.eE]++")
_WORD_RUN = re.compile(r"[a-zA-Z]*+")
_WORDS = ("true", "false", "null")

# What comes next: the object itself, a value, a value or "]", a key or "}", a key, a colon,
# "," or the close of the container; or the inside of a string (a value's or a key's).
OPEN, VALUE, FIRST_VALUE, FIRST_KEY, KEY, COLON, AFTER, STRING, KEY_STRING = range(9)


class ObjectCheck:
    """Follows one JSON object through the pieces of its text (see the module docstring).

    ``feed(text, start)`` reads ``text[start:]`` and returns where in ``text`` the object
    ended (the index after its closing ``}``), or None when it has not ended yet.  After an
    end or a refusal (:attr:`failed`) it reads nothing more.
    """

    __slots__ = ("_carry", "_stack", "_state", "ended", "failed")

    def __init__(self) -> None:
        self._state = OPEN
        self._stack: list[str] = []  # the open containers' closing characters
        self._carry = ""  # a token the last piece cut short
        self.failed = False
        self.ended = False

    def feed(self, text: str, start: int = 0) -> int | None:
        if self.failed or self.ended:
            return None
        work, origin = text, 0
        if self._carry:
            work = self._carry + text[start:]
            origin = start - len(self._carry)
            start = 0
            self._carry = ""
        end = self._read(work, start)
        if end is None:
            return None
        if end < 0:
            self.failed = True
            return None
        self.ended = True
        return end + origin

    def _read(self, text: str, position: int) -> int | None:
        """Read ``text`` from ``position``: the end of the object (an index of ``text``),
        None (read it all, the object goes on) or -1 (not valid)."""
        stack = self._stack
        state = self._state
        length = len(text)
        if state == OPEN and text[position : position + 1] not in ("{", ""):
            return -1  # the object's text begins at its brace
        while True:
            if state >= STRING:
                end = _STRING_BODY.match(text, position).end()  # type: ignore[union-attr]
                if end == length:
                    position = length
                    break
                character = text[end]
                if character == '"':
                    position = end + 1
                    state = COLON if state == KEY_STRING else AFTER
                    continue
                if _ESCAPE_START.match(text, end):
                    self._carry = text[end:]
                    position = length
                    break
                return -1  # a control character or a bad escape
            position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
            if position == length:
                break
            character = text[position]
            if state == AFTER:
                if character == ",":
                    state = KEY if stack[-1] == "}" else VALUE
                    position += 1
                    continue
                if character != stack[-1]:
                    return -1
                stack.pop()
                position += 1
                if not stack:
                    return position
                continue
            if state == COLON:
                if character != ":":
                    return -1
                state = VALUE
                position += 1
                continue
            if state in (KEY, FIRST_KEY):
                if character == '"':
                    state = KEY_STRING
                    position += 1
                    continue
                if character != "}" or state == KEY:
                    return -1
                stack.pop()
                position += 1
                if not stack:
                    return position
                state = AFTER
                continue
            # A value (the object itself first).
            if character == "{" or character == "[":
                if state == OPEN and character == "[":
                    return -1
                stack.append("}" if character == "{" else "]")
                if len(stack) > MAX_DEPTH:
                    return -1
                state = FIRST_KEY if character == "{" else FIRST_VALUE
                position += 1
                continue
            if state == OPEN:
                return -1
            if character == "]" and state == FIRST_VALUE:
                stack.pop()
                position += 1
                state = AFTER
                continue
            if character == '"':
                state = STRING
                position += 1
                continue
            if character == "-" or "0" <= character <= "9":
                end = _NUMBER_RUN.match(text, position).end()  # type: ignore[union-attr]
                if end == length:  # the number may go on in the next piece
                    if end - position > MAX_CARRY:
                        return -1
                    self._carry = text[position:]
                    position = length
                    break
                number = text[position:end]
                if not _is_number(number) or _too_many_digits(number) or _overflows(number):
                    return -1
                position = end
                state = AFTER
                continue
            end = _WORD_RUN.match(text, position).end()  # type: ignore[union-attr]
            word = text[position:end]
            if end == length and any(full.startswith(word) for full in _WORDS):
                self._carry = word
                position = length
                break
            if word not in _WORDS:
                return -1
            position = end
            state = AFTER
        self._state = state
        return None


def _is_number(text: str) -> bool:
    """Whether ``text`` (digits, signs, dots and exponent marks) is a JSON number: a minus
    sign or none; ``0`` or digits not starting with ``0``; optionally a dot and digits;
    optionally ``e`` or ``E``, a sign or none and digits.  String methods, not a regex: a
    regex with groups takes its backtracking stack from ``malloc`` on every match."""
    mantissa, mark, exponent = text.replace("E", "e").partition("e")
    if mark:
        if exponent[:1] in ("+", "-"):
            exponent = exponent[1:]
        if not exponent.isdigit():
            return False
    integer, dot, fraction = mantissa.partition(".")
    if dot and not fraction.isdigit():
        return False
    if integer[:1] == "-":
        integer = integer[1:]
    return integer.isdigit() and (integer[0] != "0" or integer == "0")


def _overflows(number: str) -> bool:
    """A number ``json`` reads as infinity (``1e400``: a fraction or exponent beyond a
    double's range; an integer has no such limit), which no JSON reader takes."""
    return any(mark in number for mark in ".eE") and math.isinf(float(number))


def _too_many_digits(number: str) -> bool:
    """An integer ``json`` refuses to read (longer than ``sys.get_int_max_str_digits()``;
    counted with its sign, which only refuses more)."""
    limit = sys.get_int_max_str_digits()
    return bool(limit) and len(number) > limit and not any(mark in number for mark in ".eE")
