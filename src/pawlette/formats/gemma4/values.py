"""Gemma 4's value syntax: JSON values as its template writes them in calls and tools.

The template's ``format_argument`` writes a string between two ``<|"|>`` quote tokens, as is
(no escaping), ``true``/``false``, an object as ``{key:value,...}`` with its keys sorted as
Jinja's ``dictsort`` sorts them (case-insensitively) and, in calls, not quoted, an array as
``[value,...]``, and anything else as Python's ``str`` of it (``21.5``, ``1e-05``, ``None``
for JSON's null)::

    {city:<|"|>Paris<|"|>,days:3,nonstop:true,to:[<|"|>a@b.c<|"|>]}

Reading takes what the peers' Gemma 4 parsers take (vLLM's, SGLang's, llama.cpp's): keys bare
or quoted, blanks after the separators, ``true``/``false``, ``null``/``None`` (null), numbers
(an integer where the text is one), and another bare word as that text (a string).

What cannot come back exactly (the losses, written down in the format's docstring): a
string holding ``<|"|>`` (it ends the string), a key holding ``:`` ``,`` ``{`` ``}`` (keys are
not quoted), an object's key order (sorted), and a number's spelling (``1.50`` is written
``1.5``, as Python prints the parsed value).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Any

from ...engine.call_arguments import MAX_NESTING, nested_deeper

QUOTE = '<|"|>'
"""The quote token around strings."""

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")


def sorted_items(mapping: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A mapping's items in the order of Jinja's ``dictsort`` (keys compared lowercased,
    ties kept in their order)."""
    return sorted(mapping.items(), key=lambda item: item[0].lower())


def write_value(value: Any, *, quote_keys: bool) -> str:
    """``value`` as the template's ``format_argument`` writes it (``quote_keys``: its
    ``escape_keys``)."""
    if isinstance(value, str):
        return QUOTE + value + QUOTE
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "{" + write_members(value, quote_keys=quote_keys) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(write_value(item, quote_keys=quote_keys) for item in value) + "]"
    return str(value)


def write_members(mapping: Mapping[str, Any], *, quote_keys: bool = False) -> str:
    """An object's members, ``key:value`` joined by commas, without the braces."""
    return ",".join(
        (QUOTE + key + QUOTE if quote_keys else key)
        + ":"
        + write_value(item, quote_keys=quote_keys)
        for key, item in sorted_items(mapping)
    )


class ValueSyntaxError(ValueError):
    """Text that is not a value of Gemma 4's syntax (``offset``: where)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at offset {offset}")
        self.offset = offset


def read_members(text: str) -> dict[str, Any]:
    """The object whose members ``text`` spells (the text between a call's braces): nested
    at most ``MAX_NESTING`` deep, its numbers within a double's range, as JSON arguments are
    held everywhere (else :class:`ValueSyntaxError`)."""
    value, end = _object(text, 0, closed=False, depth=1)
    if text[end:].strip():
        raise ValueSyntaxError(f"{text[end : end + 20]!r} after the arguments", end)
    return value


def members_json(text: str) -> str:
    """The JSON of the object whose members ``text`` spells."""
    # The quick reading has a cost of its own (json reads the spelled text and the depth
    # is measured), more than the reference's on short members; and it escapes each string
    # for json to read back, where the reference only finds its end: long members with few
    # quote tokens (each has a '<', counted at C speed) are mostly string text.
    size = len(text)
    sample = min(size, 4096)  # (a longer text's quotes are counted on its first characters)
    cheaper = size >= _QUICK_FROM and (size <= 1024 or sample <= 64 * text.count("<", 0, sample))
    quick = quick_members(text) if cheaper else None
    if quick is not None:
        return _ENCODE(quick)
    return _ENCODE(read_members(text))


_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(value, ensure_ascii=False)``, its encoder made once (``dumps`` makes one per
call when given an option)."""


# The usual members (as the template writes them: strings quoted, bare words of name and
# number characters, blanks only between tokens) spelled as JSON text token by token, so
# json's C reader reads them.  Between the quote tokens (their strings taken apart, by
# ``str.split``): a key (a bare word before its ':'), a bare value, or any other character
# that is not structure or a blank (the quick reading declines).
_TOKEN = re.compile(
    r"(?P<key>[A-Za-z0-9_.+\-]+)(?=[ \t\r\n]*:)"
    r"|(?P<word>[A-Za-z0-9_.+\-]+)"
    r"|[^{}\[\],: \t\r\n\x00]"
)
_KEY = re.compile(r"([A-Za-z0-9_.+\-]+)(?=[ \t\r\n]*:)")
_JSON_WORDS = re.compile(r"[A-Za-z0-9_.+\-{}\[\],: \t\r\n\x00]*")
"""Text between strings of words, structure and blanks only (``_TOKEN`` declines the rest)."""
_EXPONENT = re.compile(r"[0-9][eE]")
"""A number with an exponent, maybe beyond a double (json reads it as infinity): the pass per
token checks it."""
_JOIN = "\x00"
"""What joins the pieces between strings for one pass of ``_TOKEN`` (a text holding it is
the reference's)."""
_WORDS = {"true": "true", "false": "false", "null": "null", "None": "null"}
_QUICK_NESTING = 100
_QUICK_FROM = 128
"""Shorter members are read by the reference (faster there)."""
"""Deeper members are left to :func:`read_members` (whose recursion has a limit of its own)."""


class _Decline(Exception):
    """The quick reading does not take the text."""


def _json_token(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "key":
        return '"' + match.group("key") + '"'
    if kind == "word":
        word = match.group("word")
        written = _WORDS.get(word)
        if written is not None:
            return written
        if not _NUMBER.fullmatch(word):
            return '"' + word + '"'
        if "e" in word.lower() and math.isinf(float(word)):
            raise _Decline  # (beyond a double: the reference says so)
        return word
    raise _Decline


def quick_members(text: str) -> dict[str, Any] | None:
    """What :func:`read_members` reads from ``text``, when the text is written the usual way
    (see ``_TOKEN``; its strings between pairs of quote tokens) and nested at most
    ``_QUICK_NESTING`` deep; None: read it so.  The blanks between tokens are JSON's, and
    each token becomes the JSON of the value the reference reads from it, so json's reader
    of the whole takes exactly the texts the reference takes (any other text is refused by
    one or the other: then None)."""
    pieces = text.split(QUOTE)
    if not len(pieces) % 2 or _JOIN in text:  # a quote token not closed; (no join left)
        return None
    between = _JOIN.join(pieces[::2])  # (the pieces between the strings, for one pass)
    pieces[1::2] = map(encode_basestring, pieces[1::2])
    found = None
    if _JSON_WORDS.fullmatch(between) and not _EXPONENT.search(between):
        # Only JSON's own words may be left bare: each key quoted (split at the keys, so
        # every boundary is a key's start or end), json's reader reads the rest, or refuses
        # a word of the reference's own (None, a bare string): then the pass per token.
        structure = '"'.join(_KEY.split(between))
        found = _loaded(structure, pieces, _JSON_WORDS_DECODE)
    if found is None:
        try:
            structure = _TOKEN.sub(_json_token, between)
        except _Decline:
            return None
        found = _loaded(structure, pieces, json.loads)
    return None if found is None else found[0]


def _loaded(
    structure: str, pieces: list[str], decode: Callable[[str], Any]
) -> tuple[dict[str, Any]] | None:
    """The object spelled by ``structure`` (the pieces between the strings, joined by
    ``_JOIN``) around ``pieces``' strings (escaped already), when json reads it and it is
    nested at most ``_QUICK_NESTING`` deep."""
    spelled_pieces = pieces[:]
    spelled_pieces[::2] = structure.split(_JOIN)
    spelled = "{" + "".join(spelled_pieces) + "}"
    try:
        found = decode(spelled)
    except (ValueError, RecursionError):  # (the reference says why, or reads it otherwise)
        return None
    if not isinstance(found, dict):
        return None
    # Every bracket that nests is in the structure (the strings' are text): few there, no
    # measure of the whole text.
    brackets = structure.count("{") + structure.count("[")
    if brackets >= _QUICK_NESTING and nested_deeper(spelled, _QUICK_NESTING):
        return None
    return (found,)


def _no_constant(word: str) -> Any:
    raise ValueError(f"{word} is a bare word")  # (NaN, Infinity: strings to the reference)


_JSON_WORDS_DECODE = json.JSONDecoder(parse_constant=_no_constant).decode
"""json's reader of JSON's words only (its NaN and Infinity are the reference's bare words)."""


def _quote_at(text: str, at: int) -> int:
    """``text.find(QUOTE, at)``, found by its ``<`` (memchr's speed, where a search for the
    five characters steps through a long string a few at a time)."""
    found = text.find("<", at)
    while found >= 0 and not text.startswith(QUOTE, found):
        found = text.find("<", found + 1)
    return found


def _blank(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _object(text: str, at: int, *, closed: bool, depth: int) -> tuple[dict[str, Any], int]:
    """Members from ``at`` up to ``}`` (``closed``: the brace must come, and is read) or the
    end of the text; ``depth``: the object's nesting (the arguments' own is 1)."""
    if depth > MAX_NESTING:
        raise ValueSyntaxError(f"arguments nested deeper than {MAX_NESTING}", at)
    found: dict[str, Any] = {}
    at = _blank(text, at)
    first = True
    while at < len(text) and text[at] != "}":
        if not first:
            if text[at] != ",":
                raise ValueSyntaxError(f"{text[at]!r} between members; expected ','", at)
            at = _blank(text, at + 1)
        first = False
        key, at = _key(text, at)
        value, at = _value(text, _blank(text, at), depth)
        found[key] = value
        at = _blank(text, at)
    if closed:
        if at >= len(text):
            raise ValueSyntaxError("an object not closed", at)
        at += 1
    return found, at


def _key(text: str, at: int) -> tuple[str, int]:
    if text.startswith(QUOTE, at):
        end = _quote_at(text, at + len(QUOTE))
        if end < 0:
            raise ValueSyntaxError("a key not closed", at)
        key, at = text[at + len(QUOTE) : end], end + len(QUOTE)
    else:
        end = at
        while end < len(text) and text[end] not in ":,{}[]":
            end += 1
        key, at = text[at:end].strip(), end
        if not key:
            raise ValueSyntaxError("no key", at)
    at = _blank(text, at)
    if at >= len(text) or text[at] != ":":
        raise ValueSyntaxError(f"no ':' after the key {key!r}", at)
    return key, at + 1


def _value(text: str, at: int, depth: int) -> tuple[Any, int]:
    if text.startswith(QUOTE, at):
        end = _quote_at(text, at + len(QUOTE))
        if end < 0:
            raise ValueSyntaxError("a string not closed", at)
        return text[at + len(QUOTE) : end], end + len(QUOTE)
    if at >= len(text):
        raise ValueSyntaxError("no value", at)
    if text[at] == "{":
        return _object(text, at + 1, closed=True, depth=depth + 1)
    if text[at] == "[":
        return _array(text, at + 1, depth + 1)
    end = at
    while end < len(text) and text[end] not in ",}]" and not text.startswith(QUOTE, end):
        end += 1
    word = text[at:end].strip()
    if not word:
        raise ValueSyntaxError(f"{text[at]!r} where a value belongs", at)
    value = _scalar(word)
    if isinstance(value, float) and math.isinf(value):
        raise ValueSyntaxError(f"the number {word!r} beyond a double's range", at)
    return value, end


def _array(text: str, at: int, depth: int) -> tuple[list[Any], int]:
    if depth > MAX_NESTING:
        raise ValueSyntaxError(f"arguments nested deeper than {MAX_NESTING}", at)
    items: list[Any] = []
    at = _blank(text, at)
    first = True
    while at < len(text) and text[at] != "]":
        if not first:
            if text[at] != ",":
                raise ValueSyntaxError(f"{text[at]!r} between items; expected ','", at)
            at = _blank(text, at + 1)
        first = False
        value, at = _value(text, at, depth)
        items.append(value)
        at = _blank(text, at)
    if at >= len(text):
        raise ValueSyntaxError("an array not closed", at)
    return items, at + 1


def _scalar(word: str) -> Any:
    if word == "true":
        return True
    if word == "false":
        return False
    if word in ("null", "None"):
        return None
    if _INTEGER.fullmatch(word):
        return int(word)
    if _NUMBER.fullmatch(word):
        return float(word)
    return word  # a bare word: its text, as the peers read it
