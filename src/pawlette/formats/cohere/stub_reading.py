"""Reading Command R+'s tools listing back: each Python function stub (:mod:`.stubs`) as the
tool it says, so a conversation read back declares its tools.

A stub gives back what it writes: the tool's name and description, each parameter's name,
type, description and whether it is required (``Optional[T] = None`` is an optional one).
Types read as the schemas that write them: ``str``, ``float``, ``int``, ``bool`` as
``string``, ``number``, ``integer``, ``boolean``; ``List[Union[]]`` as ``array``;
``Dict[str, T]`` as ``object`` with ``T`` its ``additionalProperties`` (``Dict[str, Any]``:
none); ``Union[A,B]`` as the list of types ``A``, ``B``; ``Union[]`` as no type; ``Any``,
written for a type name the template does not know, as ``null``.

What a stub does not write cannot come back: ``items`` (every array is ``List[Union[]]``),
``enum``, ``properties`` of an object and every other keyword are gone; a type name the
template does not know reads as ``null``; a description that is empty or missing reads as
none, one that is not text as its text; a tool without ``parameters`` reads with no
properties.  Writing the tools read back gives the same stubs.

A stub is read by the lines the writer makes (the signature, the docstring with the
description, then ``Args:`` with one line per parameter of the signature, in its order), and
accepted only when writing what was read gives that very stub back; text that does not is
malformed, and the problem says where in the listing and what was found.  Names may hold the
signature's own punctuation (``(``, ``, ``, ``: ``: each reading is tried), descriptions any
text but the stub's own lines: a description holding a line such as ``\\n        days
(Optional[int]): `` for a parameter that follows it is not told apart from the stub's (the
stub is then reported malformed).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pawlette.codecs.python_stubs import Listing, StubProblem, read_signed_stub, signatures
from pawlette.codecs.python_stubs import read_listing as stubs_listing

from .stubs import BASIC, stub

HEAD = "```python\ndef "
END = '\n    """\n    pass\n```'
SEPARATOR = "\n\n"
_SIGNATURE_END = ') -> List[Dict]:\n    """'
_ARGUMENTS = "\n\n    Args:\n        "
_LINE = "\n        "
_ITEMS = ", "
_OPTIONAL, _OPTIONAL_END = "Optional[", "] = None"
_NAMES = {python: kind for kind, python in BASIC.items()}
_MOST_SEARCHED = 100  # ": " of a signature where names holding it are searched


def read_listing(text: str) -> Listing:
    """The tools of a listing's stubs (from the first ````python`` to the last stub's
    closing fence), where reading stopped and why it stopped short of the end (None: it
    did not); :func:`pawlette.codecs.python_stubs.read_listing` with Command R+'s stubs."""
    return stubs_listing(text, SEPARATOR, END, read_stub, "no closing ``` of its stub")


def read_stub(text: str) -> dict[str, Any]:
    """The function object one stub (from ````python`` to its closing fence) writes;
    :class:`~pawlette.codecs.python_stubs.StubProblem` when ``text`` is no stub
    :func:`~.stubs.stub` writes.  Where the signature reads in several ways (a name holding
    ``(``, ``, `` or ``: ``), each is tried, in order, until one is the stub's."""
    if not text.startswith(HEAD):
        raise StubProblem(0, f"no {HEAD!r} opening the stub")
    signature_end = text.find(_SIGNATURE_END)
    if signature_end < 0:
        raise StubProblem(len(HEAD), f"no {_SIGNATURE_END!r} after the signature")
    body_start = signature_end + len(_SIGNATURE_END)
    if not text.endswith(END) or len(text) - len(END) < body_start:
        raise StubProblem(len(text), "no closing ``` of its stub")
    body = text[body_start : len(text) - len(END)]
    return read_signed_stub(
        text,
        len(HEAD),
        signature_end,
        _readings,
        lambda opening, parameters: _definition(
            text[len(HEAD) : opening], parameters, body, body_start
        ),
        stub,
        # (the plain reading: no name holding ": ")
        _untyped_item,
    )


Parameter = tuple[str, bool]  # a parameter's type as written, and whether it is required


def _readings(signature: str) -> Iterator[list[tuple[str, Parameter]]]:
    """The ways to read a signature: each one where it has no more than
    :data:`_MOST_SEARCHED` ``: ``, else the one where no name holds ``: `` (read in a loop:
    the search goes as deep as the items)."""
    if signature.count(": ") <= _MOST_SEARCHED:
        yield from signatures(signature, _items, _ITEMS)
        return
    parameters: list[tuple[str, Parameter]] = []
    position = 0
    while position < len(signature):
        item = next(_first_items(signature, position), None)
        if item is None:
            return
        name_end, item_end, kind = item
        parameters.append((signature[position:name_end], kind))
        if item_end == len(signature):
            break
        if not signature.startswith(_ITEMS, item_end) or item_end + len(_ITEMS) == len(signature):
            return
        position = item_end + len(_ITEMS)
    yield parameters


def _untyped_item(signature: str, offset: int) -> StubProblem | None:
    """Where the plain reading of ``signature`` (no name holding ``: ``) finds no item."""
    position = 0
    while position < len(signature):
        item = next(_first_items(signature, position), None)
        after = None if item is None else item[1] + len(_ITEMS)
        if after is None or not (
            after - len(_ITEMS) == len(signature)
            or (signature.startswith(_ITEMS, after - len(_ITEMS)) and after < len(signature))
        ):
            return StubProblem(
                offset + position,
                f"signature text {signature[position:][:40]!r} is not NAME: TYPE "
                "(NAME: Optional[TYPE] = None where not required)",
            )
        position = after
    return None


def _items(text: str, position: int) -> Iterator[tuple[int, int, Parameter]]:
    """The items that may start at ``position``: ``NAME: TYPE`` (required) or ``NAME:
    Optional[TYPE] = None``, a name (not empty) ending at each ``: ``."""
    colon = text.find(": ", position + 1)
    while colon >= 0:
        item = _item(text, colon)
        if item is not None:
            yield colon, *item
        colon = text.find(": ", colon + 1)


def _first_items(text: str, position: int) -> Iterator[tuple[int, int, Parameter]]:
    """The item at ``position`` whose name holds no ``: ``, if it is one."""
    colon = text.find(": ", position + 1)
    item = _item(text, colon) if colon >= 0 else None
    if item is not None:
        yield colon, *item


def _item(text: str, colon: int) -> tuple[int, Parameter] | None:
    """Where the type after the name ending at ``colon`` ends, and what it is."""
    start = colon + 2
    if text.startswith(_OPTIONAL, start):
        inner = _type_end(text, start + len(_OPTIONAL))
        if inner is not None and text.startswith(_OPTIONAL_END, inner):
            return inner + len(_OPTIONAL_END), (text[start + len(_OPTIONAL) : inner], False)
    end = _type_end(text, start)
    return None if end is None else (end, (text[start:end], True))


def _type_end(text: str, position: int) -> int | None:
    """Where a type the template writes, starting at ``position``, ends (None: none
    starts there)."""
    for word in ("List[Union[]]", "Union[]", *_NAMES, "Any"):
        if text.startswith(word, position):
            return position + len(word)
    for opening in ("Dict[str, ", "Union["):
        if text.startswith(opening, position):
            end = _type_end(text, position + len(opening))
            while opening == "Union[" and end is not None and text.startswith(",", end):
                end = _type_end(text, end + 1)
            if end is not None and text.startswith("]", end):
                return end + 1
            return None
    return None


def _schema(written: str) -> dict[str, Any]:
    """The schema that writes the type ``written`` (a whole type :func:`_type_end` reads)."""
    if written in _NAMES:
        return {"type": _NAMES[written]}
    if written == "List[Union[]]":
        return {"type": "array"}
    if written == "Any":
        return {"type": "null"}  # (any name the template does not know writes it)
    if written == "Union[]":
        return {}
    if written.startswith("Dict[str, "):
        inner = written[len("Dict[str, ") : -1]
        return (
            {"type": "object"}
            if inner == "Any"
            else {"type": "object", "additionalProperties": _schema(inner)}
        )
    return {"type": [_union_item(item) for item in _union_items(written[len("Union[") : -1])]}


def _union_items(text: str) -> list[str]:
    """The types of a union's ``A,B`` (each a whole type)."""
    items = []
    position = 0
    while position < len(text):
        end = _type_end(text, position)
        assert end is not None  # (read whole by _type_end before)
        items.append(text[position:end])
        position = end + 1
    return items


def _union_item(written: str) -> Any:
    """The item of a list of types that writes ``written`` inside ``Union[...]``."""
    if written == "Union[]":
        return []
    schema = _schema(written)
    return schema.get("type")  # (a Dict other than Dict[str, Any] reads no item that writes it)


def _definition(
    name: str, parameters: list[tuple[str, Parameter]], body: str, start: int
) -> dict[str, Any]:
    """The function object named ``name`` with ``parameters`` (read from the signature) and
    the docstring ``body`` (``start``: where it begins in the stub, for problems)."""
    description = body
    properties: dict[str, Any] = {}
    required: list[str] = []
    if parameters:
        heads = [
            (_LINE if index else _ARGUMENTS)
            + f"{key} ({written if needed else f'{_OPTIONAL}{written}]'}): "
            for index, (key, (written, needed)) in enumerate(parameters)
        ]
        starts: list[int] = []  # where each parameter's line starts, in the body
        position = 0
        for (key, _), head in zip(parameters, heads, strict=True):
            at = body.find(head, position)
            if at < 0:  # (where it was looked for: after the line before it)
                raise StubProblem(start + position, f"no Args line for parameter {key!r}")
            starts.append(at)
            position = at + len(head)
        description = body[: starts[0]]
        ends = [*starts[1:], len(body)]
        for (key, (written, needed)), head, at, until in zip(
            parameters, heads, starts, ends, strict=True
        ):
            schema = _schema(written)
            about = body[at + len(head) : until]
            if about:
                schema["description"] = about
            properties[key] = schema
            if needed:
                required.append(key)
    definition: dict[str, Any] = {"name": name}
    if description:
        definition["description"] = description
    definition["parameters"] = {"type": "object", "properties": properties}
    if required:
        definition["parameters"]["required"] = required
    return definition
