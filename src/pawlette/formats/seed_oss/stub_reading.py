"""Reading Seed-OSS's tools block back: each Python function stub (:mod:`.stubs`) as the
tool it says, so a conversation read back types its calls' values by those tools.

A stub gives back what it writes: the tool's name and description, each parameter's name,
Python type (``str``, ``int``, ``bool``, ``list`` read as the JSON schema types ``string``,
``integer``, ``boolean``, ``array``; ``Any`` as a parameter with no ``type``), description
and whether it is required, and a ``returns`` object's properties.  What a stub does not
write cannot come back: ``number`` (written ``int``) reads as ``integer``; an ``object``, a
list of types or no type (each written ``Any``) read as no type; ``enum``, ``items``, nested
``properties`` and every other keyword are gone; blank descriptions are none.  Writing the
tools read back gives the same stubs.

A stub is read by the lines the writer makes (the signature, then ``Args:`` with one line
per parameter of the signature, in its order, then ``Returns:``), and accepted only when
writing what was read gives that very stub back; text that does not is malformed, and the
problem says where in the block and what was found.  Names may hold the signature's own
punctuation (``(``, ``,``, ``: str``: each reading is tried) and descriptions any text but
the stub's own lines: a description holding a line such as ``- days (int) [选填]: `` for a
parameter that follows it is not told apart from the stub's (the stub is then reported
malformed).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pawlette.codecs.python_stubs import Listing, StubProblem, read_signed_stub, signatures
from pawlette.codecs.python_stubs import read_listing as stubs_listing

from .stubs import INDENT, OPTIONAL, REQUIRED, stub

SEPARATOR = "\n\nFunction:\ndef "
"""Between two stubs (the template's; the block's ``item_separator``)."""
_END = f'{INDENT}"""'
_SIGNATURE_END = f'):{INDENT}"""{INDENT}'
_ARGUMENTS = "\n\n    Args:"
_RETURNS = "\n    Returns:"
_SCHEMA_TYPES = {"str": "string", "int": "integer", "bool": "boolean", "list": "array"}
_TYPES = "str|int|bool|list|Any"
_TYPED = re.compile(rf": ({_TYPES})(?=,|\Z)")
_ITEM = re.compile(rf".+: ({_TYPES})", re.DOTALL)
_MOST_SEARCHED = 100  # commas of a signature searched for its readings
_RETURNED = re.compile(rf"\n    - (.+?) \(({_TYPES})\): ")


def read_listing(text: str, separator: str = SEPARATOR) -> Listing:
    """The tools of a block's stubs (``text``: from the first stub's name to the last one's
    closing quotes, ``separator`` between two), where reading stopped, and why it stopped
    short of the end (None: it did not); :func:`pawlette.codecs.python_stubs.read_listing`
    with Seed-OSS's stubs."""
    return stubs_listing(
        text, separator, _END, read_stub, f"no closing {_END.strip()} of its docstring"
    )


def read_stub(text: str) -> dict[str, Any]:
    """The function object one stub (from its name to its docstring's closing quotes)
    writes; :class:`StubProblem` when ``text`` is no stub :func:`~.stubs.stub` writes.

    Where the signature reads in several ways (a name holding ``(``, ``,`` or ``: str``),
    each is tried, in order, until one is the stub's."""
    signature_end = text.find(_SIGNATURE_END)
    if signature_end < 0:
        raise StubProblem(0, f"no {_SIGNATURE_END!r} after the signature")
    if not text.endswith(_END) or len(text) - len(_END) < signature_end + len(_SIGNATURE_END):
        raise StubProblem(len(text), f"no closing {_END.strip()} of the docstring")
    return read_signed_stub(
        text,
        0,
        signature_end,
        _readings,
        lambda opening, parameters: _read_from(text, opening, signature_end, parameters),
        stub,
        # (the plain reading: split at each ",")
        _untyped_item,
    )


def _untyped_item(signature: str, offset: int) -> StubProblem | None:
    """The first item of ``signature`` split at each ``,`` that is no ``NAME: TYPE``."""
    position = 0
    for item in signature.split(",") if signature else ():
        if not _ITEM.fullmatch(item):
            return StubProblem(
                offset + position,
                f"signature text {item[:40]!r} is not NAME: TYPE "
                f"(TYPE one of {_TYPES.replace('|', ', ')})",
            )
        position += len(item) + 1
    return None


def _readings(signature: str) -> Iterator[list[tuple[str, str]]]:
    """The ways to read a signature: each one
    (:func:`~pawlette.codecs.python_stubs.signatures`) where it has no more than
    :data:`_MOST_SEARCHED` commas, else the one split at each comma (the search goes as deep
    as the items)."""
    if signature.count(",") <= _MOST_SEARCHED:
        yield from signatures(signature, _items, ",")
    elif _untyped_item(signature, 0) is None:
        yield [_split_item(item) for item in signature.split(",")]


def _split_item(item: str) -> tuple[str, str]:
    name, _, kind = item.rpartition(": ")
    return name, kind


def _items(text: str, position: int) -> Iterator[tuple[int, int, str]]:
    """The ``NAME: TYPE`` items that may start at ``position`` (a name is not empty)."""
    for match in _TYPED.finditer(text, position + 1):
        yield match.start(), match.end(), match[1]


def _read_from(
    text: str, opening: int, signature_end: int, parameters: list[tuple[str, str]]
) -> dict[str, Any]:
    """The function object of ``text`` with the name before ``opening`` and ``parameters``
    (read from the signature)."""
    start = signature_end + len(_SIGNATURE_END)
    body = text[start : len(text) - len(_END)]
    if parameters:
        description, listed, returned = _with_arguments(body, parameters, start)
    else:
        description, listed, returned = _without_arguments(body, start)
    definition: dict[str, Any] = {"name": text[:opening]}
    if description:
        definition["description"] = description
    properties = {name: _schema(kind, about) for name, kind, about, _ in listed}
    definition["parameters"] = {"type": "object", "properties": properties}
    required = [name for name, _, _, needed in listed if needed]
    if required:
        definition["parameters"]["required"] = required
    if returned:
        properties = {name: _schema(kind, about) for name, kind, about in returned}
        definition["returns"] = {"type": "object", "properties": properties}
    return definition


def _without_arguments(body: str, start: int) -> tuple[str, list[Any], list[tuple[str, str, str]]]:
    """The description and returned values of a stub with no parameters (``start``: where
    ``body`` begins in the stub, for problems)."""
    returns = body.find("\n\n" + _RETURNS + "\n    - ")
    if returns >= 0:
        return body[:returns], [], _returned(body[returns + 3 :])
    if not body.endswith("\n\n\n"):
        raise StubProblem(start + len(body), "no blank lines ending a description without Args")
    return body[:-3], [], []


def _with_arguments(
    body: str, parameters: list[tuple[str, str]], start: int
) -> tuple[str, list[tuple[str, str, str, bool]], list[tuple[str, str, str]]]:
    """The description, the parameters' lines and the returned values of a stub with
    parameters (``start``: where ``body`` begins in the stub, for problems)."""
    listed: list[tuple[str, str, str, bool]] = []
    head = _ARGUMENTS
    position = 0
    description = ""
    previous: tuple[str, str, int, bool, int] | None = None  # name, type, after, needed, at
    for name, kind in parameters:
        line = f"{head}\n    - {name} ({kind})"
        found = _item(body, line, position)
        if found is None:  # where it was looked for: after the line before it
            where = start + (previous[4] if previous is not None else 0)
            raise StubProblem(where, f"no Args line for parameter {name!r} of type {kind}")
        at, needed, after = found
        if previous is None:
            description = body[:at]
        else:
            listed.append((previous[0], previous[1], body[previous[2] : at], previous[3]))
        previous = (name, kind, after, needed, at + len(head))
        head, position = "", after
    assert previous is not None  # (there are parameters)
    rest = body[previous[2] :]
    returns = rest.find(_RETURNS + "\n    - ")
    if returns >= 0:
        about, returned = rest[:returns], _returned(rest[returns + 1 :])
    elif rest.endswith("\n"):
        about, returned = rest[:-1], []
    else:
        raise StubProblem(start + len(body), "no newline ending the Args lines")
    listed.append((previous[0], previous[1], about, previous[3]))
    return description, listed, returned


def _item(body: str, line: str, position: int) -> tuple[int, bool, int] | None:
    """The first ``line`` at or after ``position`` followed by a required or optional
    mark and a colon: where it starts, whether it is required, where its description
    starts."""
    at = body.find(line, position)
    while at >= 0:
        after = at + len(line)
        for mark, needed in ((REQUIRED, True), (OPTIONAL, False)):
            if body.startswith(mark + ": ", after):
                return at, needed, after + len(mark) + 2
        at = body.find(line, at + 1)
    return None


def _returned(text: str) -> list[tuple[str, str, str]]:
    """The values listed after ``    Returns:`` (``text`` starts with that line)."""
    items = text[len(_RETURNS) - 1 :]
    heads = list(_RETURNED.finditer(items))
    return [
        (head[1], head[2], items[head.end() : next_head.start() if next_head else len(items)])
        for head, next_head in zip(heads, [*heads[1:], None], strict=True)
    ]


def _schema(kind: str, description: str) -> dict[str, Any]:
    """A parameter's schema from its Python type and description."""
    schema: dict[str, Any] = {}
    if kind in _SCHEMA_TYPES:
        schema["type"] = _SCHEMA_TYPES[kind]
    if description:
        schema["description"] = description
    return schema
