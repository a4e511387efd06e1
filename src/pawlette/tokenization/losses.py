"""What a format's render left out (:attr:`pawlette.Rendering.losses`), by field.

A loss is one line, ``"messages[1].name: not written"``: a JSON path, ``": "``, what happened.
Its *field* is the path without its indexes (``messages.name``, ``tools``,
``tools.function.description``, ``messages.tool_calls.id``): what ``pawlette tokenize`` counts
and what ``pawlette serve`` reports and counts, and what ``--reject-losses`` (tokenize;
:class:`~pawlette.tokenization.RecordTokenizer`'s ``reject_losses``, with the same
:class:`RejectedLoss`) and ``--refuse-losses`` (serve) choose, as comma-separated fields where
a field also covers the fields under it (``tools`` covers ``tools.function.description``;
``messages`` every message field) and ``all`` covers every one.

``--drop`` (tokenize) makes the losses of the features it names expected (:data:`DROP_FIELDS`,
and every field under them): they are counted as such and never rejected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import RequestError
from .shapes import comma_words, parse_drop

__all__ = [
    "ALL",
    "DROP_FIELDS",
    "LEFT_OUT",
    "RejectedLoss",
    "covered",
    "expected_fields",
    "first_covered",
    "loss_field",
    "loss_outcome",
    "loss_path",
    "parse_loss_fields",
    "parse_reject_losses",
    "rejected_loss",
]

ALL = "all"
DROP_FIELDS: dict[str, tuple[str, ...]] = {
    "reasoning": ("messages.reasoning_content", "messages.reasoning_steps"),
    "name": ("messages.name",),
    "metadata": ("messages.metadata",),
    "tools": ("tools",),
}
"""Each ``--drop`` feature and the loss fields it makes expected."""
LEFT_OUT = "left out by the format, as its model's template does"
"""What the command line says of losses (``tokenize``'s summary, ``inspect``)."""

_INDEX = re.compile(r"\[\d+\]")
_FIELD = re.compile(r"(messages|tools)(\.[A-Za-z_]+)*")


def loss_path(loss: str) -> str:
    """The JSON path of a loss line (``messages[1].name``)."""
    return loss.partition(": ")[0]


def loss_outcome(loss: str) -> str:
    """What happened to the field, as a loss line says (``not written``)."""
    return loss.partition(": ")[2]


def loss_field(loss: str) -> str:
    """The field of a loss line: its path without indexes (``messages.name``)."""
    return _INDEX.sub("", loss_path(loss))


def parse_loss_fields(spec: str | Iterable[str] | None, option: str) -> frozenset[str]:
    """Fields from ``"tools,messages.name"`` (or an iterable of them, or ``"all"``);
    ``option`` names the setting in errors."""
    found = comma_words(spec, option, '"tools,messages.name" or "all"')
    for word in sorted(found):
        if word != ALL and _FIELD.fullmatch(word) is None:
            raise RequestError(
                option,
                f"found {word!r}",
                "'all' or loss fields: a path without indexes under messages or tools "
                "(tools, messages.name, messages.reasoning_content, messages)",
            )
    return found


def covered(field: str, chosen: frozenset[str]) -> bool:
    """Whether ``field`` is one of ``chosen`` or under one of them (``all``: every field)."""
    if not chosen:
        return False
    if ALL in chosen or field in chosen:
        return True
    return any(field.startswith(choice + ".") for choice in chosen)


def expected_fields(drop: frozenset[str]) -> frozenset[str]:
    """The loss fields the ``--drop`` features make expected."""
    return frozenset(field for feature in drop for field in DROP_FIELDS.get(feature, ()))


def first_covered(
    losses: Iterable[str], chosen: frozenset[str], expected: frozenset[str] = frozenset()
) -> str | None:
    """The first loss line whose field ``chosen`` covers and ``expected`` does not (what
    ``--refuse-losses`` and ``--reject-losses`` act on), or None."""
    for loss in losses:
        field = loss_field(loss)
        if covered(field, chosen) and not covered(field, expected):
            return loss
    return None


def parse_reject_losses(
    spec: str | Iterable[str] | None, drop: str | Iterable[str] | None
) -> frozenset[str]:
    """The fields of ``reject_losses`` (``--reject-losses``), checked against the ``drop``
    features (``--drop``): a field whose every loss the drop makes expected is named twice."""
    chosen = parse_loss_fields(spec, "reject-losses")
    drops = parse_drop(drop)
    expected = expected_fields(drops)
    clash = sorted(field for field in chosen if covered(field, expected))
    if clash:
        raise RequestError(
            "reject-losses",
            f"{', '.join(clash)}, a loss --drop {','.join(sorted(drops))} makes expected",
            "--drop or --reject-losses to name it, not both",
        )
    return chosen


class RejectedLoss(RequestError):
    """A record rejected for a loss ``reject_losses`` (``--reject-losses``) names: its
    ``path`` is the loss's, ``loss`` the loss line."""

    def __init__(self, loss: str, format_name: str) -> None:
        self.loss = loss
        super().__init__(
            loss_path(loss),
            f"{loss_outcome(loss)}, as format {format_name!r} leaves it out",
            f"no loss of {loss_field(loss)} (--reject-losses)",
        )


def rejected_loss(
    losses: tuple[str, ...], chosen: frozenset[str], drop: frozenset[str], format_name: str
) -> RejectedLoss | None:
    """Why a record whose render lost ``losses`` is rejected: its first loss ``chosen``
    covers and the ``drop`` features do not make expected; None to keep it."""
    if not chosen or not losses:
        return None
    loss = first_covered(losses, chosen, expected_fields(drop))
    return None if loss is None else RejectedLoss(loss, format_name)
