"""Reasoning: a block at the start of the assistant's turn, ``open`` + text + ``close``.

>>> from pawlette.declare import Marker, Reasoning, fence
>>> Reasoning(open=fence(Marker("<think>"), "\\n"), close=fence("\\n", Marker("</think>"))).keep
'all'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, Literal

from ..emit.grammar_ast import alt, seq
from ..emit.jinja_text import jinja_string
from ..engine.readers import ReasoningReader
from ..errors import FormatError, RequestError
from .concept import Concept
from .content_reasoning import Reading, jinja_read, read_messages
from .grammar import text_before
from .pieces import Fence, markers_in, text_of
from .readers import OptionalReasoningReader

if TYPE_CHECKING:
    from ..engine.writer import Writer
    from ..types import Message
    from .concept import Layout, Render, Table, Template, Turn


@dataclass(frozen=True)
class Reasoning(Concept):
    """The reasoning block.

    Fields:

    - ``open`` / ``close``: the fences around the reasoning text.
    - ``keep``: which assistant turns keep their reasoning when written: ``"all"``, only
      those ``"after_last_query"`` (after the last user message: Qwen3, DeepSeek-R1), only
      the turns with calls, ``"calls"`` (each writes a block, empty when it has no reasoning,
      read back as none: Cohere's Command R7B), or ``"none"``.  Reasoning a turn does not
      keep is dropped, and the rendering says so
      (:attr:`pawlette.types.Rendering.losses`).
    - ``no_query``: with ``keep="after_last_query"``, a conversation without a user message:
      ``"kept"`` (the default): every assistant turn comes after the last query and keeps
      its reasoning (GLM); ``"dropped"``: none does, and none writes a block, not even the
      empty ones of ``empty_on_last`` or ``empty_after_last_query`` (Qwen3, StepFun 3.5,
      MiniCPM: their templates take the last message as the last query); ``"refused"``: the
      request is refused with a :class:`~pawlette.errors.RequestError` (Qwen3.5's template
      raises "No user query found in messages.").
    - ``not_query``: with ``keep="after_last_query"``, a user message whose text begins with
      the first of these two strings and ends with the second is not a query: the last query
      is the last user message of another text (Qwen3's, Qwen3.5's, StepFun 3.5's, Ling
      3.0's and MiniCPM5's templates pass over ``<tool_response>...</tool_response>``, results
      a client sends as a user message).  Empty (the default): every user message is one.
      Only the reasoning's keeping reads this last query.
    - ``not_query_trimmed``: ``not_query`` tests the text without whitespace at its ends
      (Qwen3.5's template trims it first).
    - ``empty_on_last``: the final assistant turn, kept and without reasoning, gets an empty
      block (Qwen3).  An empty block then reads back as no reasoning.
    - ``empty_after_last_query``: with ``keep="after_last_query"``, every assistant turn
      after the last user message gets a block, empty when it has no reasoning (Qwen3.5).
      An empty block then reads back as no reasoning.
    - ``empty_given``: whether a turn that keeps its reasoning and whose reasoning is the
      empty text (given, not absent) gets an empty block: None (the default) as ``keep``
      has it (``"all"`` writes one, the others none); True: LFM2.5's template tests
      ``thinking is defined``; False: Command A MoE's tests the text.  An empty block then
      reads back as no reasoning.
    - ``prompt``: what the generation prompt adds: ``""`` nothing, ``"open"`` the open fence
      (the model continues inside the block and writes ``reasoning</think>answer``),
      ``"empty"`` an empty block (thinking switched off), or ``"opened"``: the assistant
      frame's prompt already ends with the open fence (``Frame.prompt_after``), so a
      completion starts inside the block; ``"closed"``: the frame's prompt already ends
      with the ``absent`` stand-in (Poolside Laguna's ``<assistant>\\n</think>``), so a
      completion starts after it, and a past turn's stand-in is the prompt's (not
      trainable; a forced call follows it directly).
    - ``loose``: reading also takes ``open`` and ``close`` without the whitespace they write
      around their markers (``<think>X</think>Y`` where the template writes
      ``<think>\\nX\\n</think>\\n\\n``), as the peers' reasoning parsers read them.
    - ``absent``: the fence a turn writes where it writes no block (it has no reasoning, or
      ``keep`` drops it): ``()``, nothing (the default); an empty block, the same fences as
      ``open`` and ``close`` joined (``absent=THINK_OPEN + THINK_CLOSE``: GLM-4.6, Kimi K2
      Thinking); or the close alone (``absent=THINK_CLOSE``: GLM-4.7, MiniMax-M3).  The last turn of
      ``empty_on_last`` gets its empty block instead.  Read back as no reasoning.  Where the
      generation prompt writes the same empty block (``prompt="empty"``), the stand-in is the
      prompt's, not trainable (the model's part of the turn begins after it).  With ``keep``
      ``"all"``, an empty reasoning text gets the stand-in too (GLM-4.7, Ling 3.0).
    - ``calls_end``: a call opening inside the block ends the reasoning and is read as a call
      (what vLLM's and SGLang's Qwen3, Kimi K2 and GLM parsers do); otherwise a call marker
      inside the block is reasoning text, with a warning.  The concept must come before the
      calls concept in the layout.
    - ``trim``: characters removed from both ends of the reasoning text, and from the start
      of the content that follows, on turns that write a block (Qwen3: ``"\\n"``, its
      template's ``strip('\\n')`` and ``lstrip('\\n')``).  A text that changes is a recorded
      loss; one it empties is written as an empty block, which reads back as no reasoning.
      Default ``""``: written as given.
    - ``after``: the roles of the turn before after which a turn writes its block (or its
      stand-in) and the generation prompt its fences; empty (the default): after any turn.
      DeepSeek V3.2's template writes the block only in a turn it opens, after a user message
      or results (``("user", "tool")``): an answer right after another answer, or first in
      the conversation, writes none, its reasoning a recorded loss.  The parse table reads
      such a turn, begun with no opener after an answer, without a block.
    - ``in_content``: which assistant messages have their reasoning taken out of their
      content (``<think>plan</think>answer``): ``""`` none (the default); ``"unset"``: those
      without ``reasoning_content`` (Qwen3, GLM); ``"empty"``: without or with an empty one
      (Ling 3.0); ``"always"``: every one, its own reasoning kept where it has some (Laguna).
      The reasoning is the text before the first close marker, after the last open marker
      in it, without newlines at its ends; the content the text after the last close marker.
      The turn is written (and read back) as one given both; text the split drops or trims is
      a recorded loss.  The markers: the ``Marker`` pieces of ``open`` and ``close`` (else
      their text without whitespace at its ends).
    - ``in_content_turns``: the turns split: ``"all"`` (the default), ``"before_last_query"``
      (up to the last user message: LFM2.5) or ``"past"`` (all but the last answer:
      LFM2.5-Instruct).  ``in_content_trim``: the characters taken off the split content's
      start and end (default ``("\\n", "")``; MiniMax-M2 ``("\\n", "\\n")``).

    Reading follows the prompt, as llama.cpp does: a completion whose prompt opened the block
    (``prompt`` ``"open"``/``"opened"``) starts inside it, so text without the close is all
    reasoning; otherwise text without the open fence is content.  A block never closed is
    reasoning (the output was cut while thinking).
    """

    open: Fence
    close: Fence
    keep: Literal["all", "after_last_query", "calls", "none"] = "all"
    no_query: Literal["kept", "dropped", "refused"] = "kept"
    not_query: tuple[str, str] | tuple[()] = ()
    not_query_trimmed: bool = False
    empty_on_last: bool = False
    empty_after_last_query: bool = False
    empty_given: bool | None = None
    prompt: Literal["", "open", "empty", "opened", "closed"] = ""
    loose: bool = True
    calls_end: bool = False
    absent: Fence = ()
    trim: str = ""
    after: tuple[str, ...] = ()
    in_content: Literal["", "unset", "empty", "always"] = ""
    in_content_turns: Literal["all", "before_last_query", "past"] = "all"
    in_content_trim: tuple[str, str] = ("\n", "")

    handles: ClassVar[frozenset[str]] = frozenset({"reasoning"})
    job: ClassVar[str | None] = "reasoning"

    def validate(self, layout: Layout) -> None:
        if not self.open or not self.close:
            raise FormatError(
                f"{layout.name}: Reasoning: an empty open or close fence; expected both"
            )
        split_fields = (self.in_content_turns, self.in_content_trim) != ("all", ("\n", ""))
        if split_fields and not self.in_content:
            raise FormatError(
                f"{layout.name}: Reasoning.in_content_turns or in_content_trim without "
                f"in_content; expected in_content to say which messages are split"
            )
        if self.in_content and not all(self.content_markers):
            raise FormatError(
                f"{layout.name}: Reasoning(in_content={self.in_content!r}) with open or close "
                f"of whitespace alone; expected both fences to hold the markers a content is "
                f"split at"
            )
        if self.no_query != "kept" and self.keep != "after_last_query":
            raise FormatError(
                f"{layout.name}: Reasoning(no_query={self.no_query!r}) with "
                f"keep={self.keep!r}; expected keep='after_last_query' (the only keep a "
                f"conversation's last user message decides)"
            )
        if self.not_query != () and (self.keep != "after_last_query" or not all(self.not_query)):
            raise FormatError(
                f"{layout.name}: Reasoning.not_query: {self.not_query!r} with "
                f"keep={self.keep!r}; expected two non-empty strings (a start and an end) and "
                f"keep='after_last_query'"
            )
        if self.not_query_trimmed and not self.not_query:
            raise FormatError(
                f"{layout.name}: Reasoning(not_query_trimmed=True) without not_query; "
                f"expected not_query's start and end"
            )
        roles = ("start", *layout.frames)
        if any(role not in roles for role in self.after):
            raise FormatError(
                f"{layout.name}: Reasoning.after: {self.after!r}; expected a tuple of the "
                f"roles after which a turn writes its block, each one of {', '.join(roles)}"
            )
        if self.calls_end:
            calls = [
                number
                for number, concept in enumerate(layout.concepts)
                if "calls" in getattr(concept, "handles", ())
            ]
            if calls and calls[0] < layout.concepts.index(self):
                raise FormatError(
                    f"{layout.name}: Reasoning(calls_end=True) is Layout.concepts"
                    f"[{layout.concepts.index(self)}], after the calls concept (Layout.concepts"
                    f"[{calls[0]}]); expected it before, so that a call ends the block"
                )

    @cached_property
    def absent_rest(self) -> Fence | None:
        """Where the generation prompt opens the block and the stand-in begins with that open
        fence (Ling 3.0's empty block after its ``\\n<think>`` prompt), the rest of the
        stand-in: the open fence is the prompt's, not trainable.  None: no such split.

        Made once: the writer keeps a fence's segments by the fence's identity, so a slice
        made anew in each render would be built anew in each render."""
        if self.prompt in ("open", "opened") and self.absent[: len(self.open)] == self.open:
            return self.absent[len(self.open) :]
        return None

    def prompt_writes_absent(self) -> bool:
        """The generation prompt writes the turn's stand-in for a block: the block closed
        (``prompt="closed"``), an empty block, the stand-in itself or another (DeepSeek V3.2's
        prompt ``<think></think>``, its past turns' ``</think>``): the model's part of the turn
        begins after it either way."""
        if self.prompt == "closed":
            return True
        return self.prompt == "empty" and bool(self.absent)

    def follows(self, previous: str | None) -> bool:
        """Whether a turn after a turn of role ``previous`` (None: none) may write its block
        or stand-in, and the generation prompt its fences (see ``after``)."""
        return not self.after or ("start" if previous is None else previous) in self.after

    def query_index(self, out: Render) -> int | None:
        """The last user message that is a query, where ``not_query`` passes over later ones
        (the render's ``out.query``)."""
        if not self.not_query:
            return None
        start, end = self.not_query
        for index in range(out.last_query, -1, -1):
            if out.messages[index].role != "user":
                continue
            text = out.message_text(index)
            if self.not_query_trimmed:
                text = text.strip()
            if not (text.startswith(start) and text.endswith(end)):
                return index
        return -1

    def written(self, out: Render, index: int) -> bool:
        """Whether the assistant message at ``index`` gets a block."""
        message = out.messages[index]
        if self.keep == "all":  # (an empty text gets the stand-in, where there is one)
            if self.absent or self.empty_given is False:
                return bool(message.reasoning)
            return message.reasoning is not None
        if self.keep == "calls":
            return bool(message.tool_calls)
        last_query = out.query
        if self.keep == "none" or index <= last_query:
            return False
        if last_query < 0 and self.no_query != "kept":
            return False  # (the template takes the last message as the last query)
        last = index == len(out.messages) - 1
        return (
            bool(message.reasoning)
            or (last and self.empty_on_last)
            or self.empty_after_last_query
            or (self.empty_given is True and message.reasoning is not None)
        )

    # ------------------------------------------------------------------ the writer

    acts_on: ClassVar[frozenset[str] | None] = frozenset({"assistant"})

    def hook_roles(self, hook: str) -> frozenset[str] | None:
        """This class's writer hooks where they may write: its content hook where it trims,
        its opening hook where a turn may get a block or its stand-in (a subclass's own
        hooks, and the template's, where the turn roles say)."""
        if hook == "write_content" and not self.trim and self.inherits(Reasoning, hook):
            return frozenset()
        unwritten = self.keep == "none" and not self.absent
        if hook == "write_opening" and unwritten and self.inherits(Reasoning, "written", hook):
            return frozenset()
        return self.turn_roles()

    def written_needs(self) -> str | None:
        """What :meth:`written` needs to be True (:meth:`Concept.hook_needs`; None: nothing
        the writer can test)."""
        if not self.inherits(Reasoning, "written"):
            return None
        if self.keep == "all" and (self.absent or self.empty_given is False):
            return "reasoning"
        if self.keep == "after_last_query":
            return "after_last_query"
        return "tool_calls" if self.keep == "calls" else None

    def hook_needs(self, hook: str, role: str) -> str | None:
        """The writer's own opening (without a stand-in for a block) and content hooks act
        only on a turn whose block is written."""
        if hook not in ("write_opening", "write_content") or not self.inherits(Reasoning, hook):
            return None
        return None if self.absent and hook == "write_opening" else self.written_needs()

    def hook_is_local(self, hook: str, role: str) -> bool:
        """A block kept in every turn is the message's own: the writer's hooks are local
        (unless ``after`` drops it after some turns, a loss the opening hook records)."""
        own = hook in ("write_opening", "write_content") and self.inherits(Reasoning, hook)
        return self.keep == "all" and own and not self.after and self.inherits(Reasoning, "written")

    def check_is_local(self) -> bool:
        return self.inherits(Reasoning, "check", "written")

    def check(self, out: Render) -> None:
        out.handled.add("reasoning")  # (out.handles without its call: every render asks)
        if self.keep == "after_last_query" and self.no_query == "refused" and out.query < 0:
            raise RequestError(
                "messages",
                "no user message",
                f"a user message ({out.layout.name} keeps reasoning after the last user query, "
                "and refuses a conversation without one: Reasoning.no_query)",
            )
        if "reasoning" not in out.present and not self.trim:
            return
        # (with trim, a block written empty trims the text after it too: checked without
        # reasoning in the request)
        # An answer at or before the last query gets no block with this class's ``written``
        # (keep "after_last_query"): without reasoning it has nothing to check, found here
        # without the call (most answers of a conversation are before its last query).
        unwritten = (
            out.query
            if self.keep == "after_last_query" and type(self).written is Reasoning.written
            else -1
        )
        messages = out.messages
        # (no message holds reasoning: the answers up to that bound are not looked at)
        start = unwritten + 1 if "reasoning" not in out.present and unwritten > 0 else 0
        for index in range(start, len(messages)):
            message = messages[index]
            if message.role != "assistant" or (index <= unwritten and not message.reasoning):
                continue
            if message.reasoning and not self.written(out, index):
                why = {
                    "none": "never written",
                    "calls": "written only in a turn with calls",
                }.get(self.keep, "before the last user message")
                if self.keep == "after_last_query" and out.query < 0:
                    why = "no user message before it"
                out.lose(f"messages[{index}].reasoning_content", f"dropped ({why})")
            elif self.trim and self.written(out, index):
                reasoning = message.reasoning or ""
                if reasoning != reasoning.strip(self.trim):
                    out.lose(f"messages[{index}].reasoning_content", "trimmed at its ends")
                text = out.message_text(index)
                if text != text.lstrip(self.trim):
                    out.lose(f"messages[{index}].content", "trimmed at its start")

    def write_opening(self, out: Render, index: int) -> None:
        if out.role != "assistant" or index < 0:
            return
        if not self.follows(out.previous):
            # (the check records the loss of reasoning the turn's place never keeps; this,
            # of reasoning it would keep: which turn came before is known as it is written)
            if out.messages[index].reasoning and self.written(out, index):
                out.lose(
                    f"messages[{index}].reasoning_content",
                    f"dropped (written only after {_roles(self.after)})",
                )
            return
        if not self.written(out, index):
            if not self.absent:
                return
            rest = self.absent_rest
            if rest is not None:
                out.fence(self.open, "reasoning")
                out.fence(rest, "reasoning", trainable=True)
                return
            out.fence(self.absent, "reasoning", trainable=not self.prompt_writes_absent())
            return
        # keep="calls" with prompt="empty": the turn's empty block is the prompt's, not trainable.
        if self.keep == "calls" and self.prompt == "empty" and not out.messages[index].reasoning:
            out.fence(self.open, "reasoning")
            out.fence(self.close, "reasoning")
            return
        # Where the generation prompt opens the block, its open fence is the prompt's: the
        # model's own part of the turn (trainable) begins after it.
        out.fence(self.open, "reasoning", trainable=self.prompt not in ("open", "opened"))
        reasoning = out.messages[index].reasoning or ""
        out.text(
            reasoning.strip(self.trim) if self.trim else reasoning, "reasoning", trainable=True
        )
        out.fence(self.close, "reasoning", trainable=True)

    def trims_content(self) -> bool:
        return bool(self.trim)

    def write_content(self, out: Render, index: int) -> bool:
        if not self.trim or out.role != "assistant" or index < 0 or not self.written(out, index):
            return False
        if not self.follows(out.previous):
            return False
        out.text(out.message_text(index).lstrip(self.trim), "content", trainable=True)
        return True

    @cached_property
    def prompt_fences(self) -> tuple[Fence, ...]:
        """What the generation prompt adds to the block (see ``prompt``)."""
        return {"open": (self.open,), "empty": (self.open, self.close)}.get(self.prompt, ())

    def prompt_is_local(self) -> bool:
        return self.inherits(Reasoning, "write_prompt")  # (the declared fences)

    def write_prompt(self, out: Render) -> None:
        if not self.follows(out.previous):
            return
        for pieces in self.prompt_fences:
            out.fence(pieces, "generation_prompt")

    # ------------------------------------------------------------------ the parse table

    def rows(self, table: Table) -> None:
        # Where the format writes empty blocks (an empty one on the last turn, every turn's
        # block emptied, a prompt that opens one, a stand-in for the block, a reasoning that
        # its trim empties), an empty block reads as no reasoning.
        empty_written = (
            self.empty_on_last
            or self.empty_after_last_query
            or self.keep in ("none", "calls")
            or self.prompt != ""
            or bool(self.absent)
            or bool(self.trim)
        )
        reader = OptionalReasoningReader if empty_written else ReasoningReader
        table.state("assistant.reasoning", reader, "assistant", ends=True)
        opens = table.spellings(self.loose, self.open)
        for spelling in opens:
            table.on("assistant.head", spelling, "assistant.reasoning")
        for spelling in table.spellings(self.loose, self.close):
            table.on("assistant.reasoning", spelling, "assistant.body")
        for spelling in table.spellings(self.loose, self.absent):  # a stand-in for a block
            if spelling not in opens:
                table.on("assistant.head", spelling, "assistant.body")
        for previous in table.layout.frames:
            if not self.follows(previous):  # begun there with no opener: no block, no stand-in
                table.begin_after("assistant", previous, like="assistant.body")
        if self.prompt in ("open", "opened"):
            # A prompt that opens no turn (none written after an answer) opens no block either.
            table.unopened_start = table.completion_start
            table.completion_start = "assistant.reasoning"
        if self.calls_end:
            table.call_states.append("assistant.reasoning")
        if self.prompt == "opened":  # a turn opened as the prompt opens it is inside the block
            frame = table.layout.frames["assistant"]
            for pieces in frame.prompt_after.values():
                step = table.steps.get(("outside", table.text(pieces)))
                if step is not None:
                    table.steps[("outside", table.text(pieces))] = ("assistant.reasoning", step[1])

    # ------------------------------------------------------------------ the Jinja template

    def _condition(self, out: Template) -> str:
        given = "message.reasoning_content is defined and message.reasoning_content is not none"
        if self.keep == "all":
            if self.absent or self.empty_given is False:
                return f"({given} and message.reasoning_content)"
            return given
        if self.keep == "none":
            return "false"
        if self.keep == "calls":
            calls = "(message.tool_calls is defined and message.tool_calls)"
            if self.prompt == "empty":  # an empty block is the prompt's (see jinja_lead)
                return f"{calls} and ({given} and message.reasoning_content)"
            return calls
        wanted = f"({given} and message.reasoning_content)"
        if self.empty_after_last_query:
            wanted = "true"
        elif self.empty_given is True:
            wanted = f"({given})"
        elif self.empty_on_last:
            wanted = f"({wanted} or loop.last)"
        last_query = self._jinja_last_query(out)
        if self.no_query == "dropped":  # (no user message: no turn keeps its block)
            return f"{last_query} >= 0 and index > {last_query} and {wanted}"
        return f"index > {last_query} and {wanted}"

    def _jinja_last_query(self, out: Template) -> str:
        """The Jinja expression of :meth:`last_query` (its loop: :meth:`jinja_setup`)."""
        return out.ns("reasoning_query", "-1") if self.not_query else out.needs_last_query()

    @cached_property
    def content_markers(self) -> tuple[str, str]:
        """The open and close markers a content is split at (``in_content``)."""
        markers = []
        for pieces, which in ((self.open, -1), (self.close, 0)):
            found = markers_in(pieces)
            markers.append(found[which] if found else text_of(pieces).strip())
        return markers[0], markers[1]

    @cached_property
    def content_reading(self) -> Reading:
        """How ``in_content`` reads the reasoning out of a content."""
        opening, closing = self.content_markers
        return Reading(
            self.in_content, self.in_content_turns, opening, closing, self.in_content_trim
        )

    def rewrite_messages(
        self,
    ) -> Callable[[tuple[Message, ...], Writer], tuple[Message, ...]] | None:
        return self.read_content if self.in_content else None

    def read_content(self, messages: tuple[Message, ...], writer: Writer) -> tuple[Message, ...]:
        """``messages`` with their reasoning taken out of their content, as ``in_content``
        says (what the split drops recorded in ``writer``'s losses)."""
        return read_messages(self.content_reading, messages, writer)

    def jinja_setup(self, out: Template) -> None:
        if self.in_content:
            jinja_read(out, self.content_reading)
        if self.keep == "after_last_query" and self.not_query:
            start, end = self.not_query
            query = self._jinja_last_query(out)
            text = f"text_of(message, loop.index0, {jinja_string(out.layout.name)})"
            if self.not_query_trimmed:
                text += " | trim"
            out.out("{%- for message in messages -%}")
            with out.when('message.role == "user"'):
                out.out(f"{{%- set query_text = {text} -%}}")
                with out.when(
                    f"not (query_text.startswith({jinja_string(start)}) and "
                    f"query_text.endswith({jinja_string(end)}))"
                ):
                    out.out(f"{{%- set {query} = loop.index0 -%}}")
            out.out("{%- endfor -%}")
        if self.keep == "after_last_query" and self.no_query == "refused":
            out.raise_if(
                f"{self._jinja_last_query(out)} < 0",
                f"messages: no user message; expected a user message ({out.layout.name} keeps "
                "reasoning after the last user query, and refuses a conversation without one: "
                "Reasoning.no_query)",
            )

    def _jinja_follows(self) -> str | None:
        """The Jinja condition of :meth:`follows` on ``ns.previous`` (None: always)."""
        if not self.after:
            return None
        tests = [
            "ns.previous is none" if role == "start" else f"ns.previous == {jinja_string(role)}"
            for role in self.after
        ]
        return "(" + " or ".join(tests) + ")"

    @contextmanager
    def _when_follows(self, out: Template) -> Iterator[None]:
        """What the body writes, where the turn before allows a block (see ``after``)."""
        condition = self._jinja_follows()
        if condition is None:
            yield
            return
        with out.when(condition):
            yield

    def jinja_opening(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        with self._when_follows(out):
            self._jinja_opening(out)

    def _jinja_opening(self, out: Template) -> None:
        with out.when(self._condition(out)):
            if self.prompt not in ("open", "opened"):
                out.fence(self.open)  # (else the prompt's, written by jinja_lead)
            with out.when("message.reasoning_content is defined"):
                text = "message.reasoning_content or ''"
                out.value(self._jinja_trimmed(out, f"({text})", right=True) if self.trim else text)
            out.fence(self.close)
            if self.absent and not self.prompt_writes_absent():
                out.out("{%- else -%}")
                rest = self.absent_rest
                out.fence(self.absent if rest is None else rest)

    def _jinja_trimmed(self, out: Template, text: str, *, right: bool) -> str:
        """``text`` without ``trim``'s characters at its start (``right``: and at its end),
        as an expression.  ASCII characters go by ``strip``/``lstrip``; llama.cpp's engine
        strips bytes, not characters, so a character of several bytes (``trim`` holding
        Python's whole whitespace) is taken off by a loop of ``startswith``/``endswith``
        and slices of its own length, which both engines count in the same unit."""
        method = "strip" if right else "lstrip"
        ascii_part = "".join(character for character in self.trim if character.isascii())
        wide = [character for character in self.trim if not character.isascii()]
        stripped = f"{text}.{method}({jinja_string(ascii_part)})" if ascii_part else text
        if not wide:
            return stripped
        out.out(f"{{%- set trimmed = namespace(text={stripped}, done=false) -%}}")
        out.out("{%- for _ in range(trimmed.text | length) -%}{%- if not trimmed.done -%}")
        out.out("{%- set trimmed.done = true -%}")
        out.out(f"{{%- for end in [{', '.join(jinja_string(c) for c in self.trim)}] -%}}")
        out.out(
            "{%- if trimmed.text.startswith(end) -%}"
            "{%- set trimmed.text = trimmed.text[(end | length):] -%}"
            "{%- set trimmed.done = false -%}{%- endif -%}"
        )
        if right:
            out.out(
                "{%- if trimmed.text.endswith(end) -%}"
                "{%- set trimmed.text = trimmed.text[:(trimmed.text | length) - (end | length)] -%}"
                "{%- set trimmed.done = false -%}{%- endif -%}"
            )
        out.out("{%- endfor -%}{%- endif -%}{%- endfor -%}")
        return "trimmed.text"

    def jinja_content(self, out: Template, role: str) -> bool:
        if not self.trim or role != "assistant":
            return False
        text = f"text_of(message, index, {jinja_string(out.layout.name)})"
        follows = self._jinja_follows()
        condition = self._condition(out)
        with out.when(condition if follows is None else f"{follows} and ({condition})"):
            out.value(self._jinja_trimmed(out, text, right=False))
            out.out("{%- else -%}")
            out.text()
        return True

    def jinja_lead(self, out: Template, role: str) -> None:
        if role != "assistant":
            return
        with self._when_follows(out):
            self._jinja_lead(out, role)

    def _jinja_lead(self, out: Template, role: str) -> None:
        # (What the generation prompt writes: not trainable.)
        if role == "assistant" and self.prompt in ("open", "opened"):
            if self.absent_rest is not None:  # the block or its stand-in opens alike
                out.fence(self.open)
                return
            out.fence_if(self._condition(out), self.open)
        if role == "assistant" and self.keep == "calls" and self.prompt == "empty":
            with out.when(
                "message.tool_calls is defined and message.tool_calls and not "
                "(message.reasoning_content is defined and message.reasoning_content)"
            ):
                out.fence(self.open)  # an empty block
                out.fence(self.close)
        if role == "assistant" and self.prompt_writes_absent():
            out.fence_if(f"not ({self._condition(out)})", self.absent)

    def jinja_prompt(self, out: Template) -> None:
        if not self.prompt_fences:
            return
        with self._when_follows(out):
            for pieces in self.prompt_fences:
                out.fence(pieces)

    # ------------------------------------------------------------------ the turn grammar

    def _prompt_as_given(self, turn: Turn) -> str:
        """What this turn's generation prompt did to the block: :attr:`prompt`, unless the
        prompt left the model elsewhere than usual (:attr:`Turn.start`): inside the block
        (opened), before it (a block may come), or past it (closed)."""
        if turn.start is None:
            return self.prompt
        if turn.start == "assistant.reasoning":
            return "opened"
        return "" if turn.start == "assistant.head" else "closed"

    def grammar(self, turn: Turn) -> None:
        prompt = self._prompt_as_given(turn)
        if prompt == "closed":  # the prompt closed the block: the model writes none
            return
        if prompt not in ("open", "opened") and turn.stops_in(self.close):
            # The block's close holds the turn's stop: the engine would end the turn there, a
            # reasoning with no answer after it (and llama.cpp takes no end-of-generation
            # token inside a grammar, so the block would run to max_tokens).  The constrained
            # turn writes none; unconstrained, the parser still reads one.
            return
        layout = turn.layout
        close = text_before(layout, self.close, empty=True)
        if prompt in ("open", "opened"):
            turn.head, turn.head_required = close, True
        elif prompt == "" or self.keep == "calls":
            # (keep="calls": a turn with calls writes its block after any prompt)
            turn.head = seq(*turn.nodes(self.open), close)
            if self.absent:  # a block or its stand-in, always one of them
                turn.head = alt(turn.head, seq(*turn.nodes(self.absent)))
                turn.head_required = True
        opened = text_of(self.open, layout.options, layout.name)
        closed = text_of(self.close, layout.options, layout.name)
        turn.reasoning = (opened, closed)
        if prompt in ("open", "opened"):
            turn.call_lead = closed  # the turn begins inside the block: a forced call closes it
        elif self.empty_on_last:
            turn.call_lead = opened + closed
        elif self.absent and prompt == "":  # a forced call follows the block's stand-in
            turn.call_lead = text_of(self.absent, layout.options, layout.name)


_ROLE_WORDS = {
    "start": "the conversation's start",
    "system": "a system message",
    "user": "a user message",
    "assistant": "an assistant message",
    "tool": "results",
}


def _roles(roles: tuple[str, ...]) -> str:
    """``("user", "tool")`` in words: ``a user message or results``."""
    words = [_ROLE_WORDS[role] for role in roles]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
