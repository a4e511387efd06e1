"""What a ``pawlette tokenize`` run did: counts, drops, lengths, packing, rejects by reason."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..errors import PawletteError
from .losses import LEFT_OUT, covered

__all__ = ["TokenizeFailed", "TokenizeSummary", "reason_group"]

_NUMBER = re.compile(r"(?<![\w-])\d+(?![\w-])")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
KEPT_REJECTIONS = 100
SHOWN_GROUPS = 10


def reason_group(reason: str) -> str:
    """The reason with its particulars blanked (numbers; quoted values before ``; expected``,
    where what was found is), so that rejects of one kind count together:
    ``messages[N].role: found '…'; expected ...``."""
    found, separator, expected = reason.partition("; expected")
    return (_NUMBER.sub("N", _QUOTED.sub("'…'", found)) + separator + expected)[:200]


@dataclass
class TokenizeSummary:
    """What a run did (``str()``: the summary ``pawlette tokenize`` prints)."""

    read: int = 0
    written: int = 0
    """Records written (packed or not)."""
    rejected: int = 0
    """Records that could not be tokenized."""
    tokens: int = 0
    learned: int = 0
    nothing_learned: int = 0
    """Records written with no learned token (no assistant turn, or every turn masked)."""
    seconds: float = 0.0
    rejections: list[tuple[int, str]] = field(default_factory=list, repr=False)
    """The first rejected lines and reasons (at most 100 kept)."""
    reasons: Counter[str] = field(default_factory=Counter)
    """Rejects (and length drops) by reason group (:func:`reason_group`)."""
    first_line: dict[str, int] = field(default_factory=dict, repr=False)
    """The first line of each reason group."""
    dropped_messages: Counter[str] = field(default_factory=Counter)
    """Feature -> messages it was dropped from (``--drop``; ``tools`` is no message's)."""
    dropped_records: Counter[str] = field(default_factory=Counter)
    """Feature -> records it was dropped from."""
    lost_places: Counter[str] = field(default_factory=Counter)
    """Loss field (``messages.name``, ``tools``: :mod:`.losses`) -> how often written records'
    renders left it out, as the format's template does."""
    lost_records: Counter[str] = field(default_factory=Counter)
    """Loss field -> written records whose render left it out."""
    expected_losses: frozenset[str] = frozenset()
    """The loss fields ``--drop`` makes expected, with those under them (said so beside
    their counts)."""
    too_long: int = 0
    """Records left out for their length (``--max-length``)."""
    truncated: int = 0
    """Records cut to ``--max-length`` at the end of an answer."""
    truncated_inside: int = 0
    """Records cut to ``--max-length`` inside their first answer."""
    packed_rows: int = 0
    pack_capacity: int = 0
    first_labels_forced: int = 0
    workers: int = 0
    worker_start_seconds: float = 0.0

    def reject(self, line: int, reason: str, *, too_long: bool = False) -> None:
        if too_long:
            self.too_long += 1
        else:
            self.rejected += 1
            if len(self.rejections) < KEPT_REJECTIONS:
                self.rejections.append((line, reason))
        group = reason_group(reason)
        self.reasons[group] += 1
        self.first_line.setdefault(group, line)

    def __str__(self) -> str:
        share = f" ({100 * self.learned / self.tokens:.1f}%)" if self.tokens else ""
        empty = (
            f"; {self.nothing_learned:,} records with nothing to learn"
            if self.nothing_learned
            else ""
        )
        lines = [
            f"read {self.read:,} records, wrote {self.written:,}, rejected {self.rejected:,};"
            f" {self.tokens:,} tokens, {self.learned:,} learned{share}{empty};"
            f" {self.seconds:.1f} s"
        ]
        for feature, records in sorted(self.dropped_records.items()):
            messages = self.dropped_messages[feature]
            lines.append(
                f"  dropped {feature} (--drop) from {messages:,} messages of {records:,} records"
                if messages
                else f"  dropped {feature} (--drop) from {records:,} records"
            )
        if self.lost_records:
            lines.append(
                f"  {LEFT_OUT} (not in the ids; --reject-losses FIELDS rejects such records):"
            )
            for name, records in sorted(self.lost_records.items()):
                expected = " (expected: --drop)" if covered(name, self.expected_losses) else ""
                lines.append(
                    f"    {name}: {self.lost_places[name]:,} times in {records:,} records{expected}"
                )
        if self.too_long or self.truncated or self.truncated_inside:
            lines.append(
                f"  lengths: {self.too_long:,} records left out as too long,"
                f" {self.truncated:,} truncated at the end of an answer,"
                f" {self.truncated_inside:,} truncated inside an answer"
            )
        if self.packed_rows:
            fill = self.tokens / (self.packed_rows * self.pack_capacity)
            forced = (
                f"; {self.first_labels_forced:,} first labels set to -100"
                if self.first_labels_forced
                else ""
            )
            lines.append(
                f"  packed {self.written:,} records into {self.packed_rows:,} rows of at most"
                f" {self.pack_capacity:,} tokens ({100 * fill:.1f}% full){forced}"
            )
        if self.reasons:
            lines.append("  left out, by reason (count, first line):")
            for group, count in self.reasons.most_common(SHOWN_GROUPS):
                lines.append(f"    {count:>8,}  line {self.first_line[group]:,}: {group}")
            rest = len(self.reasons) - SHOWN_GROUPS
            if rest > 0:
                lines.append(f"    ... and {rest:,} more reasons")
        return "\n".join(lines)


class TokenizeFailed(PawletteError):
    """A run that must not count as done: nothing written, or too many rejects.  Nothing is
    left at the output path; :attr:`summary` says what happened."""

    def __init__(self, message: str, summary: TokenizeSummary) -> None:
        super().__init__(message)
        self.summary = summary
