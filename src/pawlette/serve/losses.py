"""What the served format leaves out of a request's prompt, told to the client and counted.

A format may leave a field out as its model's template does (a user's ``name`` in most
formats, Gemma's ``tools``): the render records each such loss
(:attr:`pawlette.Rendering.losses`).  The server never drops one unseen:

- every answer to a request with losses carries them in the ``x-pawlette-losses`` header, a
  JSON array of the loss lines (``["messages[0].name: not written"]``), streamed or not (the
  header comes before the first event); OpenAI's body has no place for them;
- the log has them (info), and ``/metrics`` counts them by field
  (``render_losses_total{field}``, the path without indexes: ``messages.name``, ``tools``);
- ``--refuse-losses FIELDS`` turns a loss of those fields into a 400 naming its path;
- a ``tool_choice`` that forces a call (``required``, a named function) while the format
  leaves the tools out is a 400 naming ``tool_choice``: the model would be made to call a
  function it was never shown.
"""

from __future__ import annotations

import json

from ..emit.tool_choice import ToolChoice
from ..errors import RequestError
from ..tokenization.losses import first_covered, loss_field, loss_outcome, loss_path

HEADER = "x-pawlette-losses"
HEADER_BYTES = 4096
"""The most of the header's value: the loss lines that fit, then a line saying how many more
(the log has them all).  Proxies and clients refuse heads of a few kilobytes more."""
_NOTE_BYTES = 64
"""Room kept for that last line."""


def header_value(losses: tuple[str, ...]) -> str:
    """The ``x-pawlette-losses`` value: a JSON array of the lines (ASCII: JSON escapes the
    rest, so no line can end the header), cut to :data:`HEADER_BYTES`."""
    kept: list[str] = []
    size = 2
    for number, loss in enumerate(losses):
        piece = json.dumps(loss)
        rest = len(losses) - number
        # Room for this line and, should a later one not fit, the line that counts the rest.
        if size + len(piece) + 1 + _NOTE_BYTES > HEADER_BYTES:
            kept.append(json.dumps(f"... and {rest} more losses (see the server log)"))
            break
        kept.append(piece)
        size += len(piece) + 1
    return "[" + ",".join(kept) + "]"


def refused_loss(losses: tuple[str, ...], refused: frozenset[str], format_name: str) -> None:
    """Raise the 400 for the first loss of a field ``--refuse-losses`` names."""
    loss = first_covered(losses, refused)
    if loss is not None:
        raise RequestError(
            loss_path(loss),
            f"{loss_outcome(loss)}: format {format_name!r} leaves it out, as its "
            "model's template does",
            f"a request without it (the server refuses a loss of {loss_field(loss)}: "
            "--refuse-losses)",
        )


def forced_without_tools(losses: tuple[str, ...], choice: ToolChoice, format_name: str) -> None:
    """Raise the 400 for a forced call whose tools the format leaves out of the prompt."""
    if choice.mode not in ("required", "function"):
        return
    if not any(
        loss_path(loss) == "tools" and loss_outcome(loss).startswith("not written")
        for loss in losses
    ):
        return
    raise RequestError(
        "tool_choice",
        f"{choice.describe()}, which forces a call; format {format_name!r} leaves the tools "
        "out of the prompt, as its model's template does, so the model would call a function "
        "it was never shown",
        "'auto' or 'none' with this format",
    )
