"""JSON text as the formats write it, exactly as :func:`json.dumps` would, in less time.

Renders write JSON on every call (tool definitions, call ids, prosody), so these are on the
serving path:

- :data:`json_string` and :data:`compact_json`: ``json.dumps(value, ensure_ascii=False)`` and
  the same with ``separators=(",", ":")``, from encoders built once (``json.dumps`` with
  options builds a new encoder per call, which costs more than encoding a short string).
- :func:`indented_json`: ``json.dumps(value, ensure_ascii=False, indent=4)``.  ``json`` writes
  indented text with its pure-Python encoder (its C encoder does not indent), about four times
  slower than the small writer here, which takes plain JSON values (``dict`` with ``str`` keys,
  ``list``, ``str``, ``int``, finite ``float``, ``bool``, ``None``) and leaves anything else to
  ``json.dumps`` itself: other types, NaN and infinities, non-string keys, and nesting deeper
  than :data:`MAX_DEPTH` (which is also how a circular value still gets ``json``'s error).
- :func:`kept_indented_json` and :func:`kept_json_string`: the same, kept by the value's
  content for values that come back with every request (tool definitions).
- :data:`acyclic_json_string`: :data:`json_string` through json's C encoder made once, for a
  value that holds no container twice on one path (what ``json.loads`` returns).
- :func:`checked_compact_json`: :data:`compact_json` of a plain value, checked in the same walk
  that writes it (a request's new tool definitions).
- :func:`written_as_is`: whether the JSON text a value was read from is already what
  :data:`json_string` writes of it (flat call arguments, as most clients send them), so
  nothing needs writing.
"""

from __future__ import annotations

import json
import json.encoder
import math
import re
from collections.abc import Callable
from typing import Any

from .kept import Kept, marshal_key

_encode_string = json.encoder.encode_basestring  # (json's C string encoder)
_int_text = int.__repr__
_float_text = float.__repr__
_isfinite = math.isfinite

json_string = json.JSONEncoder(ensure_ascii=False).encode
compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

MAX_DEPTH = 64
"""Containers nested deeper than this are written by ``json.dumps`` (see the docstring)."""

_INDENT = "    "


def indented_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=4)``, byte for byte.

    >>> print(indented_json({"name": "f", "tags": ["a"], "empty": {}}))
    {
        "name": "f",
        "tags": [
            "a"
        ],
        "empty": {}
    }
    """
    pieces: list[str] = []
    if _write(value, pieces, "\n", 0):
        return "".join(pieces)
    return json.dumps(value, ensure_ascii=False, indent=len(_INDENT))


_INDENTED: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Indented texts kept; a value whose key is longer than ``longest`` bytes is indented every
time (a bound on memory)."""


def kept_indented_json(value: Any) -> str:
    """:func:`indented_json` of ``value``, kept by its content
    (:func:`~pawlette.engine.kept.marshal_key`: one key is one value of the same types, so one
    text): tool definitions come with every request and are indented once.  A value with no
    such key (a subclass, a set, a value holding itself) is indented, or refused, each time
    by :func:`indented_json` itself."""
    return _INDENTED.get(marshal_key(value), lambda: indented_json(value))


PARSED_ARGUMENTS: Kept[Any] = Kept(limit=256, longest=1 << 14)
"""Call arguments the OpenAI reader has just parsed and checked, by their stripped text: each
new text is parsed once in a render, not once to check it and again to write it.  The
reader keeps the value of a text it parses (``json.loads`` of it: the text alone decides
it), the writer takes it out; a text the reader had seen before is not parsed again, and
the writer keeps what it wrote of it (:mod:`pawlette.declare.calls`).  Never changed: the
writer only writes it."""

_KEPT: Kept[str] = Kept(limit=256, longest=1 << 14)
"""Texts of :func:`kept_json_string`; the same bound on memory as :data:`_INDENTED`."""


def c_encoder(
    reference: Callable[[Any], str],
    separators: tuple[str, str],
    *,
    allow_nan: bool,
    default: Callable[[Any], Any] | None = None,
) -> Callable[[Any], str]:
    """``reference`` (a dump of JSON values with these ``(item, key)`` separators) through
    json's C encoder made once, for values that hold no container twice on one path (a value
    with a ``marshal`` key): ``JSONEncoder.encode`` makes a new C encoder (with a fresh set of
    containers seen, to refuse a circular value) per call, which costs more than encoding a
    tool definition.  ``reference`` itself where the C encoder is missing or writes a sample
    otherwise.  ``default`` is called for a value of no JSON type (None: the caller passes
    only JSON types)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return reference
    item_separator, key_separator = separators
    try:
        encode = make(
            None,
            default,
            json.encoder.encode_basestring,
            None,
            key_separator,
            item_separator,
            False,
            False,
            allow_nan,
        )
        sample = [{"a": [1, 2.5, None, True, "\u00e9\n"], "b": {}}, (1,)]
        if "".join(encode(sample, 0)) != reference(sample):
            return reference
    except Exception:
        return reference
    return lambda value: "".join(encode(value, 0))


# One member of a flat object as json_string writes it: a key and a string without a quote, a
# backslash or a control character (all that json_string escapes), an integer as int's repr
# writes it (no "-0", no leading zero), or a literal; ": " in each, ", " between them.
_MEMBER = r'"[^"\\\x00-\x1f]*": (?:"[^"\\\x00-\x1f]*"|0|-?[1-9][0-9]*|true|false|null)'
_FLAT_OBJECT = re.compile(rf"\{{(?:{_MEMBER}(?:, {_MEMBER})*)?\}}").fullmatch


def written_as_is(text: str, value: Any) -> bool:
    """Whether :data:`json_string` of ``value``, what ``json.loads(text)`` gives, is ``text``
    itself, known without writing it: ``text`` is a flat object of such members (strings,
    integers, literals) spelled as json_string spells them, and no key is written twice
    (``value`` holds as many members as ``text`` holds ``": "``: each key is followed by
    one, so a key written twice, or a string that starts with one, makes more).  False: not
    known (the value is written)."""
    return _FLAT_OBJECT(text) is not None and len(value) == text.count('": ')


acyclic_json_string = c_encoder(
    json_string,
    (", ", ": "),
    allow_nan=True,
    default=json.JSONEncoder(ensure_ascii=False).default,  # raises json's TypeError
)


def kept_json_string(value: Any) -> str:
    """:data:`json_string` of ``value``, kept by its content (as :func:`kept_indented_json`):
    tool definitions come with every request and are written once.  A value with no
    ``marshal`` key (a subclass, a value holding itself) is written, or refused, each time by
    :data:`json_string` itself."""
    key = marshal_key(value)
    if key is None:
        return json_string(value)
    return _KEPT.get(key, lambda: acyclic_json_string(value))


def _write(value: Any, pieces: list[str], newline: str, depth: int) -> bool:
    """Append ``value``'s text (``newline`` starts its lines); False: not a plain value."""
    kind = type(value)
    if kind is dict:
        return _write_object(value, pieces, newline, depth)
    if kind is list:
        return _write_array(value, pieces, newline, depth)
    leaf = _leaf_text(value, kind)
    if leaf is None:
        return False
    pieces.append(leaf)
    return True


def _leaf_text(value: Any, kind: type) -> str | None:
    """The text of a value that is no container, or None: not a plain value (json's C string
    encoder is what ``json.dumps(ensure_ascii=False)`` writes strings with)."""
    if kind is str:
        return _encode_string(value)
    if kind is int:
        return _int_text(value)
    if kind is float:
        return _float_text(value) if _isfinite(value) else None
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    return None


# (Render's hot path for a request's new tools: each item's text is appended in one piece,
# a container's through its own writer, with no call per leaf.)


def _write_object(value: dict[Any, Any], pieces: list[str], newline: str, depth: int) -> bool:
    if not value:
        pieces.append("{}")
        return True
    if depth >= MAX_DEPTH:
        return False
    append = pieces.append
    inner = newline + _INDENT
    separator = "{" + inner
    for key, item in value.items():
        if type(key) is not str:
            return False
        kind = type(item)
        if kind is str:
            append(f"{separator}{_encode_string(key)}: {_encode_string(item)}")
        elif kind is dict or kind is list:
            append(f"{separator}{_encode_string(key)}: ")
            writer = _write_object if kind is dict else _write_array
            if not writer(item, pieces, inner, depth + 1):
                return False
        else:
            leaf = _leaf_text(item, kind)
            if leaf is None:
                return False
            append(f"{separator}{_encode_string(key)}: {leaf}")
        separator = "," + inner
    append(newline + "}")
    return True


def _write_array(value: list[Any], pieces: list[str], newline: str, depth: int) -> bool:
    if not value:
        pieces.append("[]")
        return True
    if depth >= MAX_DEPTH:
        return False
    append = pieces.append
    inner = newline + _INDENT
    separator = "[" + inner
    for item in value:
        kind = type(item)
        if kind is dict or kind is list:
            append(separator)
            writer = _write_object if kind is dict else _write_array
            if not writer(item, pieces, inner, depth + 1):
                return False
        else:
            leaf = _leaf_text(item, kind)
            if leaf is None:
                return False
            append(separator + leaf)
        separator = "," + inner
    append(newline + "]")
    return True


def checked_compact_json(value: Any, depth: int, integer_bits: int) -> str | None:
    """:data:`compact_json` of ``value`` (``json.dumps(value, ensure_ascii=False,
    separators=(",", ":"))``) when it is a plain JSON value: exact ``dict`` with ``str`` keys,
    ``list``, ``str``, ``int`` of at most ``integer_bits`` bits, finite ``float``, ``bool``,
    ``None``, its containers nested at most ``depth`` deep (``value`` itself is at depth 1);
    else None (another type, a subclass, a tuple, a key of another type: json writes ``1`` as
    ``"1"``).  Strings are not checked for lone surrogates: the caller checks the text.

    The check is a walk in Python either way, and writing in that walk costs less than the
    walk and json's C encoder after it (which builds a list of ``(key, value)`` tuples per
    object).

    >>> checked_compact_json({"a": [1, 2.5, None, True, "x"], "b": {}}, 8, 64)
    '{"a":[1,2.5,null,true,"x"],"b":{}}'
    >>> checked_compact_json({1: "a"}, 8, 64) is None
    True
    """
    kind = type(value)
    if kind is str:
        return _encode_string(value)
    pieces: list[str] = []
    if not _compact_value(value, kind, depth, pieces.append, integer_bits):
        return None
    return "".join(pieces)


def compact_pieces(
    value: dict[Any, Any] | list[Any],
    depth: int,
    append: Callable[[str], None],
    integer_bits: int,
) -> bool:
    """Append the pieces of :func:`checked_compact_json`'s text of a dict or list (for a caller
    that writes around them); False: not plain, and the pieces appended are to be dropped."""
    if depth <= 0:
        return False
    if type(value) is dict:
        if not value:
            append("{}")
            return True
        separator = "{"
        for key, item in value.items():
            if type(key) is not str:
                return False
            kind = type(item)
            if kind is str:
                append(f"{separator}{_encode_string(key)}:{_encode_string(item)}")
            else:
                append(f"{separator}{_encode_string(key)}:")
                if not _compact_value(item, kind, depth - 1, append, integer_bits):
                    return False
            separator = ","
        append("}")
        return True
    if not value:
        append("[]")
        return True
    separator = "["
    for item in value:
        kind = type(item)
        if kind is str:
            append(separator + _encode_string(item))
        else:
            append(separator)
            if not _compact_value(item, kind, depth - 1, append, integer_bits):
                return False
        separator = ","
    append("]")
    return True


def _compact_value(
    item: Any, kind: type, depth: int, append: Callable[[str], None], integer_bits: int
) -> bool:
    """Append the text of a value that is not a string (a dict or list nested at most
    ``depth`` deep, or a leaf); False: not plain."""
    if kind is dict or kind is list:
        return compact_pieces(item, depth, append, integer_bits)
    if kind is int:
        if item.bit_length() > integer_bits:
            return False
        append(_int_text(item))
    elif kind is bool:
        append("true" if item else "false")
    elif item is None:
        append("null")
    elif kind is float:
        if not _isfinite(item):
            return False
        append(_float_text(item))
    else:
        return False
    return True
