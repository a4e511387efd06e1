"""Compile a layout's writer skeleton into Python source, once per format.

The generated module holds one function per role that has a frame (the framed turn of
:meth:`pawlette.declare.write.Render.turn`, with that role's hooks called one after another
and only the branches the layout leaves open), the generation prompt, and the conversation
loop.  Concept hooks are called as they are: the compiler specialises the skeleton, never a
concept's own logic, so a concept needs nothing to be compiled.  Concepts that call back into
the skeleton (``out.turn(index)``, a system prompt concept writing the system turn) reach the
compiled turns through a subclass of the render context.

A turn that is a function of its message and index alone (no hook acts on it for that
message: see :func:`_wholly_kept`) is kept whole, by the message's identity (messages are
immutable, and the reader hands back the same one for an equal message it read before): a
conversation's earlier messages, met again at the same places in its next request, are
written in one step.

This layer sits below the declaration layer: the declaration hands its plan, its render
context class and its refusal check in (:func:`compiled_writer`), so nothing here imports it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from ..engine.writer import MAX_CACHED_INDEX, Writer, text_of
from ..openai import kept_tools
from ..types import ROLES, Message, Segment, TextPart, Tool

WriteConversation = Callable[[Writer, tuple[Message, ...], tuple[Tool, ...], bool], None]

_REFERENCES: weakref.WeakKeyDictionary[Callable[..., None], WriteConversation] = (
    weakref.WeakKeyDictionary()
)
"""The reference writer of each compiled one (an entry lives as long as its compiled writer:
formats made per request with other options leave nothing behind)."""


def is_compiled(write: object) -> bool:
    """Whether ``write`` (a :attr:`pawlette.Format.write`) is a compiled renderer."""
    return callable(write) and write in _REFERENCES


def reference_of(write: WriteConversation) -> WriteConversation:
    """The generic writer a compiled renderer was made from (``write`` itself if it is none)."""
    return _REFERENCES.get(write, write)


def wrapped_writer(
    write: WriteConversation,
    rewrite: Callable[[tuple[Message, ...], Writer], tuple[Message, ...]],
) -> WriteConversation:
    """``write`` given the messages ``rewrite`` makes of a request's (a declaration that
    rewrites a request before writing it).  Where ``write`` is compiled, so is the result: it
    is defined in the compiled module (whose names it shares), and its reference is the
    reference given the same messages."""

    def rewritten(inner: WriteConversation) -> WriteConversation:
        def write_rewritten(
            writer: Writer, messages: tuple[Message, ...], tools: tuple[Tool, ...], prompt: bool
        ) -> None:
            inner(writer, rewrite(messages, writer), tools, prompt)

        return write_rewritten

    reference = _REFERENCES.get(write)
    if reference is None:
        return rewritten(write)
    namespace = write.__globals__
    namespace["rewrite_messages"], namespace["compiled_write"] = rewrite, write
    exec(  # (one line of Python, in the compiled module)
        "def write_rewritten(writer, messages, tools, prompt):\n"
        "    compiled_write(writer, rewrite_messages(messages, writer), tools, prompt)\n",
        namespace,
    )
    outer: WriteConversation = namespace["write_rewritten"]
    _REFERENCES[outer] = rewritten(reference)
    return outer


class _Source:
    """Lines of Python source, indented as they are added."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self.names: dict[str, Any] = {}

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def bind(self, name: str, value: Any) -> str:
        """A global of the generated module holding ``value`` (a hook, a fence, ...)."""
        self.names[name] = value
        return name

    def by_previous(self, name: str, fence_after: Callable[[str | None], Any]) -> str:
        """A global mapping each role a turn may follow (None: none) to ``fence_after(role)``
        (a frame's opener or prompt: the frame is frozen, so found once here instead of by
        its method in every turn)."""
        return self.bind(name, {role: fence_after(role) for role in (None, *ROLES)})

    def calls(self, prefix: str, hooks: list[Any], arguments: str) -> list[str]:
        """One bound name per hook (the hooks of a list, in order)."""
        return [
            self.bind(f"{prefix}_{number}", hook) + f"({arguments})"
            for number, hook in enumerate(hooks)
        ]


def _enter(source: _Source, role: str) -> None:
    """Set the render and writer context to this turn (as ``Render.turn`` does)."""
    source.line(f"out.role = {role!r}")
    source.line("out.index = index")
    source.line(f"writer.role = {role!r}")
    source.line("writer.message_index = index")


def _replay(source: _Source, entry: str, segments: int, text: int) -> None:
    """Write again the segments a kept ``entry`` holds at ``segments``, with their text (at
    ``text``): the writer takes the text whole instead of out of each segment, once it holds
    the texts of the segments written before them (see :mod:`pawlette.engine.writer`)."""
    source.line("if writer._texted != len(writer._segments):")
    source.line('    writer._add_text("".join(map(text_of, writer._segments[writer._texted :])))')
    source.line(f"writer._add_text({entry}[{text}])")
    source.line(f"writer._extend({entry}[{segments}])")
    source.line("writer._texted = len(writer._segments)")


def _joined(segments: tuple[Segment, ...]) -> str:
    """The text of ``segments`` (kept beside them: :func:`_replay` writes it again)."""
    return "".join(map(text_of, segments))


def _extend(source: _Source, segments: str) -> None:
    """Write constant segments (``Writer.extend``'s common case without its call)."""
    source.line("if writer._unfinished is None:")
    source.line(f"    writer._extend({segments})")
    source.line("else:")
    source.line(f"    writer.extend({segments})")


def _first_fence(source: _Source, calls: list[str], target: str) -> None:
    """``target`` = the first hook result that is not None (None: none is)."""
    source.line(f"{target} = {calls[0]}")
    for call in calls[1:]:
        source.line(f"if {target} is None:")
        source.depth += 1
        source.line(f"{target} = {call}")
    source.depth -= len(calls) - 1


WHOLE_TURNS_KEPT = 4096
"""Whole turns a role's store keeps at most (then it starts over: the messages that recur come
back, as the store of messages read does)."""


def met_again(met: set[int], key: Any, limit: int) -> bool:
    """Whether ``key`` was met before (by its hash in ``met``, where it is put when it was
    not; ``met`` holds at most ``limit`` hashes, as many as the store it stands before holds
    entries: a key met again after more others than that would have left the store before it
    was found, so it starts over then).

    What is kept only on its second meeting (a turn or a check whose messages may be new in
    every request) costs a new one no entry: an entry holds objects the garbage collector
    walks again and again, a hash is an int it never walks.  Two keys of one hash (or a new
    message with the id of a freed one) make the second kept at once, which is all they
    change: a kept entry is found by its key and the identity of what it holds."""
    found = hash(key)
    if found in met:
        return True
    if len(met) >= limit:
        met.clear()
    met.add(found)
    return False


def _keep_turn(
    whole: dict[tuple[Any, ...], tuple[Any, ...]],
    message: Message,
    index: int,
    previous: str | None,
    writer: Writer,
    start: int,
    *after: Any,
    tools: tuple[Tool, ...] | None = None,
    around: tuple[str | None, str | None] | None = None,
) -> None:
    """Keep the segments a turn wrote (``writer``'s from ``start``) for ``message`` at
    ``index`` after a turn of ``previous``, with the caller text its last segment leaves
    pending (a backslash run the next marker settles: see :class:`Writer`), their text (the
    entry's fourth item: :func:`_replay`) and ``after`` (what else the turn's replay
    restores); given ``tools`` (the turn reads them: :meth:`Concept.hook_reads_tools`), for
    those tools too, when the reader keeps them (never changed) or there are none; given
    ``around`` (the roles of the messages before and after it:
    :meth:`Concept.hook_reads_neighbours`), for those roles too."""
    if index < MAX_CACHED_INDEX:
        if tools and not kept_tools(tools):
            return
        if len(whole) >= WHOLE_TURNS_KEPT:
            whole.clear()
        # (keyed by identity: the entry holds the message and the tools, so no other object
        # has their ids)
        segments = tuple(writer._segments[start:])
        text = _joined(segments)
        if around is not None:
            entry = (message, segments, writer._unfinished, text, *after)
            whole[index, id(message), previous, around] = entry
        elif tools is None:
            entry = (message, segments, writer._unfinished, text, *after)
            whole[index, id(message), previous] = entry
        else:
            entry = (message, segments, writer._unfinished, text, *after, tools)
            whole[index, id(message), previous, id(tools)] = entry


def _head_kept(hooks: Any, fields: tuple[str, ...] | None) -> bool:
    """Whether a turn kept whole by the tools' identity too (:func:`_wholly_kept`, its
    hooks before it local) keeps its part before the closing hooks apart, by its message,
    index and the role before it alone: the hooks that read the tools are closing hooks
    only (a tools block at the end of a system turn), so a request with new tools writes
    only those hooks and the turn's end.  Not for a turn kept only at or before the last
    query or only when met again (a turn of calls): those keep nothing more."""
    if not hooks.reads_tools or fields is None or _placed(fields):
        return False
    if "tool_calls" not in fields and any("tool_calls" in needs for needs in hooks.needs.values()):
        return False
    read = hooks.tools_read
    early = ("write_before", "turn_open", "write_opening", "write_content")
    return not any(any(read[hook]) for hook in early) and any(read["write_closing"])


def _write_claimed(
    write_message: Callable[[Any, int], None],
    whole: dict[tuple[Any, ...], tuple[Any, ...]],
    out: Any,
    index: int,
    message: Message,
    tools: tuple[Tool, ...] | None,
    around: tuple[str | None, str | None] | None = None,
) -> None:
    """``write_message(out, index)``, a claim whose turn is its message's own
    (:func:`_claim_kept`), keeping what it wrote: its segments, the pending caller text and
    the render's state after it (the previous turn's role, whether it holds content, and the
    role and message index written in); for ``tools`` too when given (it reads them), for
    ``around`` when given (the roles of the messages before and after it, which it reads)."""
    writer = out.writer
    previous = out.previous
    start = len(writer._segments) if writer._unfinished is None else -1
    write_message(out, index)
    if start >= 0 and (not tools or kept_tools(tools)):  # (else never kept: _keep_turn)
        state = (
            out.previous,
            out.has_content,
            out.role,
            out.index,
            writer.role,
            writer.message_index,
        )
        _keep_turn(
            whole, message, index, previous, writer, start, state, tools=tools, around=around
        )


def _claim_kept(plan: Any, role: str) -> bool:
    """Whether a message of ``role``, which a concept writes itself (:attr:`Concept.claims`),
    is written as a function of that message, its index and the role before it alone: the
    concept says so of its ``write_message`` and every turn hook of the role is local."""
    concept = plan.claims[role].__self__
    local = plan.turns[role].local
    return (
        concept.hook_is_local("write_message", role)
        or concept.hook_reads_tools("write_message", role)
        or concept.hook_reads_neighbours("write_message", role)
    ) and all(all(hooks) for hooks in local.values())


def _claim_reads_neighbours(plan: Any, role: str) -> bool:
    """Whether the kept claim of ``role`` (:func:`_claim_kept`) reads the roles of the
    messages around its own (and is kept by them)."""
    concept = plan.claims[role].__self__
    return not concept.hook_is_local("write_message", role) and concept.hook_reads_neighbours(
        "write_message", role
    )


def _claim_reads_tools(plan: Any, role: str) -> bool:
    """Whether the kept claim of ``role`` (:func:`_claim_kept`) reads the request's tools."""
    concept = plan.claims[role].__self__
    alone = concept.hook_is_local("write_message", role)
    return bool(
        plan.turns[role].reads_tools
        or (not alone and concept.hook_reads_tools("write_message", role))
    )


def _wholly_kept(hooks: Any) -> tuple[str, ...] | None:
    """Whether a turn of this role written for a message is a function of that message, its
    index and the role before it alone (the frame's opener may depend on that role), so its
    segments may be kept by them: each hook is local (:meth:`Concept.hook_is_local`), or
    writes only before the turn and changes nothing it reads (a hook before it:
    :meth:`Concept.hooks_outside_turn`, called all the same, its segments not the turn's), or
    (an opening, content or closing hook) acts only on a message holding a field
    (:meth:`Concept.hook_needs`), with a first content hook whose text the compiler writes
    (:meth:`Concept.content_text`, tested on the message's own fields), or only on a turn
    after the last query (``"after_last_query"``: a turn at or before it is kept, and looked
    for only there).  Those fields (a turn of a message holding none of them is kept), or
    None: never kept."""
    local = hooks.local
    before = zip(local["write_before"], hooks.outside["write_before"], strict=True)
    if not all(inside or outside for inside, outside in before):
        return None
    if not all(local["turn_open"] + local["turn_end"] + local["write_after"]):
        return None
    fields: list[str | None] = []
    for hook in ("write_opening", "write_closing"):
        fields += [
            need for need, alike in zip(hooks.needs[hook], local[hook], strict=True) if not alike
        ]
    contents = zip(hooks.needs["write_content"], local["write_content"], strict=True)
    if hooks.content_text is not None:
        if "after_last_query" in hooks.needs["write_content"][: hooks.content_after]:
            return None
    else:
        fields += [need for need, alike in contents if not alike]
    if None in fields:
        return None  # (a hook that acts on every turn: never kept)
    return tuple(dict.fromkeys(field for field in fields if field is not None))


def _placed(fields: tuple[str, ...] | None) -> bool:
    """Whether a turn of a role kept whole (:func:`_wholly_kept`) is kept and found only at
    or before the last query (a hook acts on a turn after it)."""
    return fields is not None and "after_last_query" in fields


def _whole_kept(
    source: _Source,
    tag: str,
    role: str,
    escapes: bool,
    tools: bool,
    placed: bool,
    missed: bool = False,
) -> None:
    """A turn found whole (its message met before at this index after a turn of the same
    role, no backslash of caller text pending before it; ``tools``: with the same tools;
    ``placed``: the test of its place, :func:`_placed`): its segments again; else
    ``start``, where the turn's segments begin (-1: none to keep).  ``missed``: looked for
    already (the conversation loop's look, :func:`_found_whole`), ``start`` alone."""
    source.line("previous = out.previous")
    place = " and index <= out.query" if placed else ""
    source.line(f"if message is not None and writer._unfinished is None{place}:")
    if missed:
        source.line("    start = len(writer._segments)")
        source.line("else:")
        source.line("    start = -1")
        return
    whole = source.bind(f"whole_{tag}", {})
    key = "index, id(message), previous" + (", id(out.tools)" if tools else "")
    source.line(f"    kept = {whole}.get(({key}))")
    source.line("    if kept is not None and kept[0] is message:")
    source.depth += 2
    _replay(source, "kept", 1, 3)
    source.depth -= 2
    if escapes:
        source.line("        writer._unfinished = kept[2]")
    source.line("        out.has_content = True")
    source.line(f"        out.previous = {role!r}")
    source.line("        return")
    source.line("    start = len(writer._segments)")
    source.line("else:")
    source.line("    start = -1")


def _looked_first(hooks: Any) -> bool:
    """Whether a turn of these hooks is looked for whole before any hook is called (each
    hook before it is local, :func:`_wholly_kept`): the conversation loop looks for it
    itself, and calls ``turn_ROLE_missed`` on a miss (:func:`_turn`'s ``missed``)."""
    return _wholly_kept(hooks) is not None and all(hooks.local["write_before"])


def _turn(source: _Source, role: str, hooks: Any, escapes: bool, missed: bool = False) -> None:
    """The framed turn of ``role`` (``Render.turn``, specialised): the function
    ``turn_ROLE(out, index, message)`` (``message`` None: a turn that holds no message);
    ``missed``: ``turn_ROLE_missed``, the same turn not looked for whole (the conversation
    loop looked for it: one look per turn, not two)."""
    tag = role
    frame = source.bind(f"frame_{tag}", hooks.frame)
    hooks_name = source.bind(f"hooks_{tag}", hooks)
    fields = _wholly_kept(hooks)
    whole = fields is not None
    source.line(f"def turn_{tag}{'_missed' if missed else ''}(out, index, message):")
    source.depth += 1
    source.line("writer = out.writer")
    _enter(source, role)
    # (hooks before the turn that are all local: their text is kept with it; else they are
    # called each time, and the turn after them is kept: Concept.hooks_outside_turn)
    kept_first = whole and all(hooks.local["write_before"])
    if kept_first:
        _whole_kept(source, tag, role, escapes, hooks.reads_tools, _placed(fields), missed)
    # (new tools, the message met before: its part before the tools' hooks again)
    head = source.bind(f"head_{tag}", {}) if kept_first and _head_kept(hooks, fields) else None
    if head is not None:
        source.line(f"head = {head}.get((index, id(message), previous)) if start >= 0 else None")
        source.line("if head is not None and head[0] is message:")
        source.depth += 1
        _replay(source, "head", 1, 3)
        source.depth -= 1
        if escapes:
            source.line("    writer._unfinished = head[2]")
        source.line("    out.has_content = True")
        source.line("else:")
        source.depth += 1
    if hooks.before:
        for call in source.calls(f"before_{tag}", hooks.before, "out, index"):
            source.line(call)
        _enter(source, role)
    if whole and not kept_first:  # (after the hooks before the turn: not the turn's text)
        _whole_kept(source, tag, role, escapes, hooks.reads_tools, _placed(fields))
    opener = bool(hooks.turn_open)
    if opener:
        openers = source.calls(f"turn_open_{tag}", hooks.turn_open, "out, index")
        _first_fence(source, openers, "opener")
    if hooks.opens:
        if opener:
            source.line("if opener is None:")
            source.depth += 1
        opened = source.bind(f"opened_{tag}", hooks.opened)
        source.line(f"segments = {opened}.get(index)")
        source.line("if segments is None:")
        source.line(f"    segments = out._frame_segments({hooks_name}, index, opening=True)")
        _extend(source, "segments")
        if opener:
            source.depth -= 1
            source.line("else:")
            source.line('    out.fence(opener, "header")')
    else:
        found = source.by_previous(f"openers_{tag}", hooks.frame.opener) + "[out.previous]"
        source.line(
            f'out.fence({found + " if opener is None else opener" if opener else found}, "header")'
        )
    _statements(source, hooks, "opening", "write_opening", tag)
    source.line("out.has_content = message is not None")
    declared = hooks.content_text is not None
    if declared:
        # The first content hook's text for a message of this role holding one text part
        # (and no field an earlier hook needs), without the hooks' calls
        # (Concept.content_text); any other message calls the hooks.
        transform = source.bind(f"content_text_{tag}", hooks.content_text)
        needed = hooks.needs["write_content"][: hooks.content_after]
        unneeded = "".join(f"not {_needed(field)} and " for field in needed)
        # A message of no content (a turn of calls a format drops) writes the function's
        # text of "" (Concept.content_text): found once here, and the turn kept whole.
        empty = source.bind(f"empty_text_{tag}", hooks.content_text(""))
        source.line(
            f"if message is not None and message.role == {role!r} and {unneeded}"
            "(not (content := message.content) or "
            "(len(content) == 1 and type(content[0]) is TextPart)):"
        )
        source.line(f"    text = {transform}(content[0].text) if content else {empty}")
        branch = "elif"
    else:
        branch = "if"
    if hooks.content:
        contents = [
            call if field is None else f"((message is None or {_needed(field)}) and {call})"
            for call, field in zip(
                source.calls(f"content_{tag}", hooks.content, "out, index"),
                hooks.needs["write_content"],
                strict=True,
            )
        ]
        source.line(f"{branch} not ({' or '.join(contents)}) and message is not None:")
    else:
        source.line(f"{branch} message is not None:")
    source.depth += 1
    # (a turn whose content hooks wrote is kept only when each of them is local: a function
    # of the message, as its calls dropped beside their text)
    hooks_kept = whole and all(hooks.local["write_content"])
    if whole and declared and not hooks_kept:
        source.line("start = -1  # (the hooks wrote: nothing kept)")
    # (Render.message_text's cases inlined: no content, as a turn of calls alone holds, and
    # one text part)
    source.line("content = message.content")
    source.line("if not content:")
    source.line('    text = ""')
    source.line("elif len(content) == 1 and type(content[0]) is TextPart:")
    source.line("    text = content[0].text")
    source.line("else:")
    source.line("    text = out.message_text(index)")
    if not declared:
        _write_text(source, hooks)
    source.depth -= 1
    if declared:
        source.line("else:")
        source.line('    text = ""  # (written by a hook, or no message: nothing more)')
        if whole and not hooks_kept:
            source.line("    start = -1")
        _write_text(source, hooks)
    if head is not None:
        keep = source.bind("keep_turn", _keep_turn)  # (its part before the tools alone)
        held = "".join(f" and not {_needed(field)}" for field in fields or ())
        source.line(f"if start >= 0{held}:")
        source.line(f"    {keep}({head}, message, index, previous, writer, start)")
        source.depth -= 1
    _statements(source, hooks, "closing", "write_closing", tag)
    ends = bool(hooks.turn_end)
    if ends:
        enders = source.calls(f"turn_end_{tag}", hooks.turn_end, "out, index")
        _first_fence(source, enders, "end")
    source.line(f"if writer.role != {role!r} or writer.message_index != index:")
    source.line(f"    writer.role = {role!r}")
    source.line("    writer.message_index = index")
    if not hooks.after:
        if ends:
            source.line("if end is None:")
            source.depth += 1
        ended = source.bind(f"ended_{tag}", hooks.ended)
        source.line(f"segments = {ended}.get(index)")
        source.line("if segments is None:")
        source.line(f"    segments = out._frame_segments({hooks_name}, index, opening=False)")
        _extend(source, "segments")
        if ends:
            source.depth -= 1
            source.line("else:")
            source.depth += 1
    if ends or hooks.after:
        # The frame's own end and after, written from the segments kept by index (the writer
        # is in this turn's context: set above for the end, checked for the after, which
        # follows hooks that may move it); an empty one is written by no line at all.
        concept_end = f"out.fence(end, {hooks.end_kind!r}, trainable={hooks.assistant!r})"
        if ends and not hooks.after:  # (in the branch above where a concept gave the end)
            source.line(concept_end)
        elif ends:
            source.line("if end is not None:")
            source.line(f"    {concept_end}")
            if hooks.frame.end:
                source.line("else:")
                source.depth += 1
                _kept(source, tag, hooks, "end", f"{frame}.end", hooks.end_kind)
                source.depth -= 1
        elif hooks.frame.end:
            _kept(source, tag, hooks, "end", f"{frame}.end", hooks.end_kind)
        for call in source.calls(f"after_{tag}", hooks.after, "out, index"):
            source.line(call)
        if hooks.frame.after:
            if hooks.after:
                source.line(f"if writer.role == {role!r} and writer.message_index == index:")
                source.depth += 1
            _kept(source, tag, hooks, "after", f"{frame}.after", "separator")
            if hooks.after:
                source.depth -= 1
                source.line("else:")
                source.line(f'    out.fence({frame}.after, "separator")')
        if ends and not hooks.after:
            source.depth -= 1
    if whole:
        keep = source.bind("keep_turn", _keep_turn)
        held = "".join(f" and not {_needed(field)}" for field in fields or ())
        tools = ", tools=out.tools" if hooks.reads_tools else ""
        kept = f"{keep}(whole_{tag}, message, index, previous, writer, start{tools})"
        # (a turn at or before the last query, where a hook acts after it: an answer met in
        # the next request; or a turn of calls a hook writes, a conversation's calls in its
        # next request: kept when met again, so a turn of new arguments in each request
        # makes no entry)
        placed = _placed(fields)
        calls = "tool_calls" not in (fields or ()) and any(
            "tool_calls" in needs for needs in hooks.needs.values()
        )
        source.line(f"if start >= 0{held}:  # (no hook acted but as a function of the message)")
        source.depth += 1
        if placed or calls:
            met = source.bind(f"met_{tag}", set())
            if calls and not placed:
                source.line("if not message.tool_calls:")
                source.line(f"    {kept}")
                source.line("else:")
                source.depth += 1
            _met_again(source, met, kept)
            if calls and not placed:
                source.depth -= 1
        else:
            source.line(kept)
        source.depth -= 1
    source.line(f"out.previous = {role!r}")
    source.depth -= 1
    source.line("")


def _met_again(source: _Source, met: str, kept: str) -> None:
    """``kept`` (a turn's keep) when its message was met before, as :func:`met_again` finds
    a key, without the function's call (a turn of new calls in every request asks).  The
    message's identity alone is looked for, not its place: a message met before at another
    place (or a new one with a freed one's id) is kept at once, which is all it changes (the
    entry is found by its place and the identity of the message it holds)."""
    source.line("found = id(message)")
    source.line(f"if found in {met}:")
    source.line(f"    {kept}")
    source.line("else:")
    source.line(f"    if len({met}) >= {WHOLE_TURNS_KEPT}:")
    source.line(f"        {met}.clear()")
    source.line(f"    {met}.add(found)")


def _needed(field: str) -> str:
    """The test of what a hook needs (Concept.hook_needs), ``message`` and ``index`` given."""
    if field == "after_last_query":
        return "index > out.query"
    if field == "first_two_messages":
        return "index <= 1"
    if not field.isidentifier():
        raise ValueError(f"a hook needs {field!r}; expected a message field's name")
    return f"message.{field}"


def _statements(source: _Source, hooks: Any, kind: str, method: str, tag: str) -> None:
    """Call the turn's ``kind`` hooks (``opening``, ``closing``), each one that needs a field
    of the message (Concept.hook_needs) only for a message that has it, or for no message."""
    calls = source.calls(f"{kind}_{tag}", getattr(hooks, kind), "out, index")
    for call, field in zip(calls, hooks.needs[method], strict=True):
        if field is None:
            source.line(call)
        else:
            source.line(f"if message is None or {_needed(field)}:")
            source.line(f"    {call}")


def _write_text(source: _Source, hooks: Any) -> None:
    """Write ``text`` as the turn's content (nothing when it is empty)."""
    # Writer.text inlined for a format that does not escape (most): one segment, in the
    # writer's context (a hook may have moved it).
    source.line("if writer._escape is None:")
    source.line("    if text:")
    source.line(
        "        writer._append(new_tuple(Segment, (text, False, writer.role, "
        f'writer.message_index, "content", {hooks.assistant!r})))'
    )
    source.line("else:")
    source.line(f'    writer.text(text, "content", trainable={hooks.assistant!r})')


def _kept(source: _Source, tag: str, hooks: Any, which: str, fence: str, kind: str) -> None:
    """Write the frame's ``which`` fence (``end`` or ``after``) from its segments kept by
    message index, as ``out.fence(fence, kind, ...)`` would in the turn's own context."""
    kept = source.bind(f"kept_{which}_{tag}", hooks.kept[which])
    trainable = hooks.assistant and which == "end"
    source.line(f"segments = {kept}.get(index)")
    source.line("if segments is None:")
    source.line(f"    segments = out._kept_fence({fence}, {kind!r}, {trainable!r}, {kept})")
    _extend(source, "segments")


def _prompt(source: _Source, plan: Any) -> None:
    """The generation prompt (``Render.generation_prompt``, specialised)."""
    hooks = plan.turns["assistant"]
    prompts = source.by_previous("prompts", plan.layout.frames["assistant"].prompt)
    source.line("def generation_prompt(out):")
    source.depth += 1
    source.line("index = len(out.messages)")
    source.line("writer = out.writer")
    if plan.prompt_local:
        # (the prompt found whole by its index and the role before it, as _keep_prompt keeps
        # it; no backslash of caller text pending before it)
        kept = source.bind("prompts_kept", {})
        source.line("previous = out.previous")
        source.line("if writer._unfinished is None:")
        source.line(f"    kept = {kept}.get((index, previous))")
        source.line("    if kept is not None:")
        source.depth += 2
        _replay(source, "kept", 0, 3)
        source.depth -= 2
        if plan.joined:
            source.line("        writer._unfinished = kept[1]")
        source.line(
            "        (out.previous, out.has_content, out.role, out.index, writer.role, "
            "writer.message_index) = kept[2]"
        )
        source.line("        return")
        source.line("    start = len(writer._segments)")
        source.line("else:")
        source.line("    start = -1")
    _enter(source, "assistant")
    if hooks.before:
        for call in source.calls("before_prompt", hooks.before, "out, index"):
            source.line(call)
        _enter(source, "assistant")
    if hooks.turn_open:
        openers = source.calls("turn_open_prompt", hooks.turn_open, "out, index")
        _first_fence(source, openers, "opener")
        source.line("if opener is None:")
        source.line(f"    opener = {prompts}[out.previous]")
    else:
        source.line(f"opener = {prompts}[out.previous]")
    source.line("if opener:")
    source.line('    out.fence(opener, "generation_prompt")')
    for call in source.calls("prompt", plan.prompt, "out"):
        source.line(call)
    if plan.prompt_local:
        keep = source.bind("keep_prompt", _keep_prompt)
        source.line("if start >= 0:")
        source.line(f"    {keep}({kept}, index, previous, out, start)")
    source.depth -= 1
    source.line("")


def _keep_prompt(
    kept: dict[tuple[int, str | None], tuple[Any, ...]],
    index: int,
    previous: str | None,
    out: Any,
    start: int,
) -> None:
    """Keep the segments the generation prompt wrote (``out.writer``'s from ``start``) at
    ``index`` after a turn of ``previous`` (:meth:`Concept.prompt_is_local`), with the caller
    text its last segment leaves pending, the render's state after it and their text."""
    if index < MAX_CACHED_INDEX:  # (at most one entry per index and role: a bound store)
        writer = out.writer
        state = (out.previous, out.has_content, out.role, out.index, writer.role)
        segments = tuple(writer._segments[start:])
        kept[index, previous] = (
            segments,
            writer._unfinished,
            (*state, writer.message_index),
            _joined(segments),
        )


_FREQUENT = {"assistant": 0, "user": 1, "tool": 2, "system": 3}
"""The roles, the most frequent in a conversation first."""


def _found_whole(
    source: _Source,
    whole: str,
    escapes: bool,
    tools: bool,
    placed: bool = False,
    around: bool = False,
) -> None:
    """The conversation loop's look for the message's turn in the store named ``whole``
    (with no backslash of caller text pending; ``tools``: kept by the tools too; ``placed``:
    the test of its place, :func:`_placed`; ``around``: kept by the roles of the messages
    around it too, in ``around``), opening the branch that writes it again."""
    key = "index, id(message), out.previous" + (", id(tools)" if tools else "")
    if around:
        key += ", around"
    unplaced = " or index > out.query" if placed else ""
    source.line(
        f"kept = None if writer._unfinished is not None{unplaced} else {whole}.get(({key}))"
    )
    source.line("if kept is not None and kept[0] is message:")
    source.depth += 1
    _replay(source, "kept", 1, 3)
    if escapes:
        source.line("writer._unfinished = kept[2]")


CHECKS_KEPT = 4096
"""Requests whose checks' outcome is kept at most (then the store starts over)."""


def _keep_checks(
    store: dict[tuple[Any, ...], tuple[Any, ...]],
    key: tuple[Any, ...],
    out: Any,
) -> None:
    """Keep what the checks of a render handled and the losses they recorded, under ``key``
    (the identities of its messages, and what its tools are to a check: :func:`tools_seen`;
    the entry holds the messages, so no other object has their ids while it is kept)."""
    if len(store) >= CHECKS_KEPT:
        store.clear()
    losses = out.writer.losses
    store[key] = (out.messages, frozenset(out.handled), tuple(losses or ()))


def tools_seen(tools: tuple[Tool, ...]) -> Any:
    """What a local check reads of the request's tools (:meth:`Concept.check_is_local`): how
    many there are and their kinds, as a key: the number when every one is a function (nearly
    every request), else the kinds.  A request's tools new to the reader (other definitions,
    the same kinds) replay the checks of its messages met before."""
    for tool in tools:
        if tool.kind != "function":
            return tuple(tool.kind for tool in tools)
    return len(tools)


def _checks_kept(source: _Source, plan: Any) -> None:
    """The checks (each local: :meth:`Concept.check_is_local`) and the refusal of what none
    handles, called for a request of messages not met before; for one met again with tools
    of the same number and kinds (:func:`tools_seen`), what they handled and the losses they
    recorded, from the store (filled by requests of tools the reader keeps, or none: a
    server's tools, met again in its next requests; of other tools, by a request met
    again: :func:`met_again`).  A writer that holds losses already is
    checked as usual (the store keeps a render's own)."""
    store = source.bind("checks_kept", {})
    source.bind("tools_seen", tools_seen)
    source.bind("kept_tools", kept_tools)
    keep = source.bind("keep_checks", _keep_checks)
    source.line("if writer.losses is None:")
    source.line("    key = (prompt, tools_seen(tools) if tools else 0, *map(id, messages))")
    source.line(f"    checked = {store}.get(key)")
    source.line("else:")
    source.line("    key = checked = None")
    source.line("if checked is None:")
    source.depth += 1
    for call in source.calls("check", plan.check, "out"):
        source.line(call)
    source.line("refuse_unhandled(out)")
    # (kept at once for tools the reader keeps, or none: a server's tools; for new tools
    # when the same key is met again, messages checked before with other tools of the same
    # number and kinds, such as a client that changes a tool's description: a request of
    # new tools and new messages, the most common first request, makes no entry)
    met = source.bind("checks_met", set())
    source.bind("met_again", met_again)
    source.line(
        "if key is not None and (not tools or kept_tools(tools) "
        f"or met_again({met}, key, {CHECKS_KEPT})):"
    )
    source.line(f"    {keep}({store}, key, out)")
    source.depth -= 1
    source.line("else:")
    source.line("    out.handled = set(checked[1])")
    source.line("    if checked[2]:")
    source.line("        writer.losses = list(checked[2])")


def _claim_limit(plan: Any, role: str) -> int | None:
    """The last index at which the concept claiming ``role`` writes its message itself
    (:meth:`Concept.claims_up_to`; None: at every index, or the role has no frame)."""
    if role not in plan.layout.frames:
        return None
    limit: int | None = plan.claims[role].__self__.claims_up_to(role)
    return limit


def _framed(source: _Source, plan: Any, role: str, kept: bool) -> None:
    """The branch (one level in) writing a message of ``role`` as its framed turn: found
    whole where the role's turns are kept (``kept``), as ``turn_ROLE`` finds it, without the
    function's call."""
    source.depth += 1
    if kept:
        hooks = plan.turns[role]
        placed = _placed(_wholly_kept(hooks))
        _found_whole(source, f"whole_{role}", plan.joined, hooks.reads_tools, placed)
        _enter(source, role)
        source.line("out.has_content = True")
        source.line(f"out.previous = {role!r}")
        source.depth -= 1
        source.line("else:")
        source.line(f"    turn_{role}_missed(out, index, message)")
    else:
        source.line(f"turn_{role}(out, index, message)")
    source.depth -= 1


def _conversation(source: _Source, plan: Any, claimed: dict[str, str]) -> None:
    """The conversation (``writer_of``'s ``write``, specialised)."""
    begin = source.bind("begin", plan.layout.begin)
    source.line("def write(writer, messages, tools, prompt):")
    source.depth += 1
    # (the class's __init__ called as a function: a call from Python code, which costs less
    # than the class's own call through its slot)
    source.line("out = new_object(Compiled)")
    source.line("initialise(out, plan, writer, messages, tools, prompt)")
    if plan.check and plan.checks_local:
        _checks_kept(source, plan)
    else:
        for call in source.calls("check", plan.check, "out"):
            source.line(call)
        source.line("refuse_unhandled(out)")
    source.line("writer.role = None")
    source.line("writer.message_index = -1")
    if plan.layout.begin:
        source.line(f'out.fence({begin}, "begin")')
    for call in source.calls("start", plan.start, "out"):
        source.line(call)
    # (a turn with hooks before it that are not all local is found whole by its function,
    # after them)
    kept_roles = [
        role
        for role in plan.layout.frames
        if f"whole_{role}" in source.names and all(plan.turns[role].local["write_before"])
    ]
    source.line("for index, message in enumerate(messages):")
    source.depth += 1
    source.line("role = message.role")
    branch = "if"
    # The roles' branches test distinct values: in the order of how many messages of each a
    # conversation holds (most are answers and questions), the common ones test least.
    written = [*claimed, *(role for role in plan.layout.frames if role not in claimed)]
    for role in sorted(written, key=lambda role: _FREQUENT.get(role, len(_FREQUENT))):
        source.line(f"{branch} role == {role!r}:")
        if role in claimed and _claim_kept(plan, role):
            # (the claim's turn found whole, as _write_claimed keeps it)
            whole = source.bind(f"whole_claim_{role}", {})
            write_claimed = source.bind("write_claimed", _write_claimed)
            tools = _claim_reads_tools(plan, role)
            around = not tools and _claim_reads_neighbours(plan, role)
            source.depth += 1
            if around:  # (the roles before and after it, as the claim reads them)
                source.line(
                    "around = (messages[index - 1].role if index else None, "
                    "messages[index + 1].role if index + 1 < len(messages) else None)"
                )
            _found_whole(source, whole, plan.joined, tools, around=around)
            source.line(
                "(out.previous, out.has_content, out.role, out.index, writer.role, "
                "writer.message_index) = kept[4]"
            )
            source.depth -= 1
            source.line("else:")
            source.line(
                f"    {write_claimed}({claimed[role]}, {whole}, out, index, message, "
                f"{'tools' if tools else 'None'}{', around' if around else ''})"
            )
            source.depth -= 1
        elif role in claimed and (limit := _claim_limit(plan, role)) is not None:
            # (the claim's own messages; after them, the framed turn the claim would write,
            # without the claim's call and the turn's dispatch)
            source.line(f"    if index <= {limit}:")
            source.line(f"        {claimed[role]}(out, index)")
            source.line("    else:")
            source.depth += 1
            _framed(source, plan, role, role in kept_roles)
            source.depth -= 1
        elif role in claimed:
            source.line(f"    {claimed[role]}(out, index)")
        else:
            _framed(source, plan, role, role in kept_roles)
        branch = "elif"
    if branch == "if":
        source.line("out.turn(index)")
    else:
        source.line("else:")
        source.line("    out.turn(index)")
    source.depth -= 1
    source.line("if out.prompt:")  # (asked for, and written after these messages)
    source.line("    generation_prompt(out)")
    for call in source.calls("finish", plan.finish, "out"):
        source.line(call)
    source.depth -= 1


def compiled_writer(
    plan: Any,
    render_class: type[Any],
    refuse_unhandled: Callable[[Any], None],
    reference: WriteConversation,
) -> WriteConversation:
    """A layout's renderer, compiled from its plan (:class:`pawlette.declare.write.Plan`).

    ``render_class`` is the render context the hooks get (compiled turns replace its
    ``turn`` and ``generation_prompt``), ``refuse_unhandled`` the check that refuses what no
    concept handles, ``reference`` the generic writer of the same plan (what
    :func:`reference_of` returns).  Every layout compiles: hooks are called as they are.
    """
    source = _Source()
    source.names.update(
        plan=plan,
        refuse_unhandled=refuse_unhandled,
        TextPart=TextPart,
        Segment=Segment,
        new_tuple=tuple.__new__,
        text_of=text_of,
        new_object=object.__new__,
        initialise=render_class.__init__,
    )
    claimed = {
        role: source.bind(f"claim_{role}", write_message)
        for role, write_message in plan.claims.items()
    }
    for role in plan.layout.frames:
        _turn(source, role, plan.turns[role], plan.joined)
        if _looked_first(plan.turns[role]):
            _turn(source, role, plan.turns[role], plan.joined, missed=True)
    _prompt(source, plan)
    _conversation(source, plan, claimed)
    text = "\n".join(source.lines) + "\n"
    namespace = dict(source.names)
    exec(compile(text, f"<compiled writer of {plan.layout.name}>", "exec"), namespace)
    compiled_turns = {role: namespace[f"turn_{role}"] for role in plan.layout.frames}
    generic_turn = render_class.turn
    prompt_function = namespace["generation_prompt"]

    def turn(out: Any, index: int, role: str | None = None) -> None:
        if index >= 0:
            message = out.messages[index]
            if role is None:
                role = message.role
        else:
            message = None
            if role is None:
                role = "system"
        found = compiled_turns.get(role)
        if found is None:  # a role without a frame: the reference says what is wrong
            generic_turn(out, index, role)
        else:
            found(out, index, message)

    def generation_prompt(out: Any) -> None:
        prompt_function(out)

    namespace["Compiled"] = type(
        f"Compiled{render_class.__name__}",
        (render_class,),
        {"__slots__": (), "turn": turn, "generation_prompt": generation_prompt},
    )
    write: WriteConversation = namespace["write"]
    write.__doc__ = f"The compiled renderer of {plan.layout.name}.\n\n{text}"
    _REFERENCES[write] = reference
    return write
