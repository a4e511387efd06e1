"""A template whose callers always pass ``tools`` as a list (an empty one without tools).

A ``tool_use`` template (Hermes 2 Pro's and Hermes 3's) iterates ``tools`` unguarded: given
none it fails, and its callers, who pick it for requests with tools, pass a list.  Inference
then renders every probe with a list, empty when the probe has no tools, and the template
writes its tools block around nothing; the tools stage finds that block written always
(``always`` of the presentation).  The declaration's ``tools_variables`` passes the list too,
so ``pawlette verify`` and detection render the template as its callers do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .draft import Draft
from .probe import Probe, message

__all__ = ["derive_listed_tools", "listed_tools"]


def listed_tools(options: Any, tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The template's ``tools`` as its callers pass them: a list, empty without tools
    (``Layout.tools_variables`` of a declaration inferred from such a template)."""
    del options  # the list is the same whatever the options
    return {"tools": [dict(tool) for tool in tools]}


def derive_listed_tools(probe: Probe, draft: Draft) -> None:
    """Where the template refuses a conversation of one user message without tools and
    renders it given an empty list, render every probe with a list from now on (the
    runner's ``listed_tools``) and record it in ``draft``."""
    runner = probe.runner
    if not runner.listed_tools:
        user = message("user", probe.sentinel("u", 1))
        if probe.render([user]) is not None:
            return
        refusal = probe.refusal([user])
        runner.listed_tools = True
        probe.clear()
        if probe.render([user]) is None:
            # Not what an empty list mends: the turns' stage reports the refusal.
            runner.listed_tools = False
            probe.clear()
            return
        probe.listed_tools_refusal = refusal
    draft.listed_tools = True
    draft.capability(
        "requests without tools",
        "derived",
        "the template refuses them (" + probe.listed_tools_refusal[:80] + "); written as it "
        "writes them given an empty list of tools, as its callers pass",
    )
    draft.notes.append(
        "The template refuses a request without tools ("
        + probe.listed_tools_refusal[:120]
        + "): its callers always pass tools as a list, empty without tools, and so does "
        "the declaration (tools_variables); what the template writes for an empty list (its "
        "tools block around no tool) it writes for a request without tools."
    )
