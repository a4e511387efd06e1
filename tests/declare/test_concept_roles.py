"""Concepts, the declaration layer's and the formats' own, say which roles their turn hooks
act on (``turn_roles``, ``hook_roles``) only where an interpreter reads the answer: the
render plan, the Jinja writer and the layout's checks ask ``hook_roles`` of a concept for a
turn hook it overrides, and ``hook_roles`` asks ``turn_roles`` unless a concept answers hook
by hook itself."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from pawlette.declare import Reasoning, Trimmed, fence
from pawlette.declare.concept import Concept
from pawlette.declare.write import Render

TURN_HOOKS = [
    name
    for name in vars(Concept)
    if name.startswith(("write_", "jinja_", "turn_"))
    and name not in ("write_start", "write_message", "write_prompt", "write_finish")
    and name not in ("jinja_setup", "jinja_start", "jinja_message", "jinja_prompt")
    and name not in ("jinja_finish", "jinja_wants_system_turn", "turn_roles")
]


def _concepts() -> list[type[Concept]]:
    package = importlib.import_module("pawlette.formats")
    for module in pkgutil.walk_packages(package.__path__, "pawlette.formats."):
        importlib.import_module(module.name)
    return [kind for kind in _family(Concept) if kind.__module__.startswith("pawlette.")]


def _family(kind: type) -> list[type]:
    return [kind, *(member for sub in kind.__subclasses__() for member in _family(sub))]


def _hooks(kind: type) -> list[str]:
    """The turn hooks ``kind`` or a subclass of it overrides."""
    return [
        hook
        for member in _family(kind)
        for hook in TURN_HOOKS
        if getattr(member, hook) is not getattr(Concept, hook)
    ]


def _asks_turn_roles(kind: type) -> bool:
    """Whether ``kind``'s ``hook_roles`` (its own or inherited) asks ``turn_roles``."""
    found = kind.hook_roles  # type: ignore[attr-defined]
    return found is Concept.hook_roles or "self.turn_roles()" in inspect.getsource(found)


def test_the_turn_hooks_are_those_of_a_turn() -> None:
    assert "write_before" in TURN_HOOKS and "jinja_after" in TURN_HOOKS
    assert "write_message" not in TURN_HOOKS and "turn_roles" not in TURN_HOOKS


def test_every_concept_that_answers_for_roles_is_asked() -> None:
    concepts = _concepts()
    assert {"StubTools", "HarmonyTurns", "MarkdownTools", "Trimmed"} <= {
        kind.__name__ for kind in concepts
    }
    unread = [
        f"{kind.__module__}.{kind.__name__}.{member}"
        for kind in concepts
        for member in ("turn_roles", "hook_roles", "acts_on")
        if member in vars(kind)
        and (
            not _hooks(kind)
            or (member != "hook_roles" and not any(_asks_turn_roles(k) for k in _family(kind)))
        )
    ]
    assert unread == []


def test_acts_on_is_what_turn_roles_answers() -> None:
    assert Concept().turn_roles() is None
    assert Reasoning(open=fence("<t>"), close=fence("</t>")).turn_roles() == {"assistant"}
    assert Trimmed(roles=("user",)).turn_roles() == {"user"}  # (computed from a field)


def test_inherits_tells_whether_a_subclass_overrides_a_method() -> None:
    class OwnWritten(Reasoning):
        def written(self, out: Render, index: int) -> bool:
            return True

    base = Reasoning(open=fence("<t>"), close=fence("</t>"))
    own = OwnWritten(open=fence("<t>"), close=fence("</t>"))
    assert base.inherits(Reasoning, "written", "check")
    assert own.inherits(Reasoning, "check") and not own.inherits(Reasoning, "check", "written")
    # (a subclass's own written: the writer's hooks are no longer the message's own)
    assert base.hook_is_local("write_opening", "assistant")
    assert not own.hook_is_local("write_opening", "assistant")
