"""Token ids, labels and per-token provenance of a rendered conversation.

A rendering is a tuple of segments (:class:`~pawlette.types.Segment`).  Tokenizing it:

- **Markers by id.**  A special segment that is a marker of the format becomes that marker's
  id, looked up, never encoded.  A special segment that is a marker plus layout (PCML's
  ``\\n<call>`` and ``</think>\\n``) is split into the marker and its text.
- **Text as plain text.**  Every text segment is encoded with no added token matched (see
  :mod:`pawlette.tokenization.backend`), so user, tool or system text spelling a marker stays
  text: no text ever produces a control id.

**Boundaries.**  A byte-pair merge (and before it the pre-tokenizer) can join characters on
both sides of a boundary between two text segments: ``name=`` and ``"Alice"`` in a PCML header
(``="`` is one token), a separator and the content after it (``\\n\\n`` and ``\\nHi`` make
``\\n\\n\\n`` in Llama 3), content and the newline of PCML's ``\\n<call>``, a tool listing's
``\\n`` and its JSON in omni.  Encoding segment by segment would give ids the model never sees
at inference, where a template's text is encoded whole between special tokens.  So text is
encoded in *runs*, not segments:

    a run is a maximal stretch of adjacent text (between markers) whose segments have the
    same ``trainable`` flag in the format's rendering; each run is encoded as one piece.

Inside a run the ids are those of the text encoded whole, exactly as ``tokenizer.encode`` gives
them between special tokens.  A run ends where trainability changes because that is where the
prompt ends at inference: the completion render (``add_generation_prompt=True``) stops right
there (breeze's ``<|end_header_id|>\\n\\n``, omni's ``\\n`` after a tool result), the prompt is
encoded on its own and the model's tokens begin after it.  Merging across it would make the
training ids of a turn differ from the ids the model saw and produced (``\\n\\n`` + ``\\nHi``
must stay ``\\n\\n`` | ``\\n`` ``Hi``).  The cut uses the rendering's own ``trainable`` flags,
not the mask policy, so ids never depend on the policy: only labels do.

**A token that straddles two segments** of one run: it is learned when any of its characters
is learned (the model must produce the token to produce them), and its provenance is the
segment holding its last character.  With the default policy every segment of a run has the
same label, so this only matters for policies that differ inside a run (``reasoning=False``
when a reasoning block's trailing newline merges with the content after it).

**Mask policies** (:class:`MaskPolicy`) derive labels from the rendering's ``trainable`` flags
(which hold the default: every assistant turn, its end marker included) and each segment's
message index and kind:

- ``turns="all"`` (default) or ``"last"``: every assistant message, or the last one only;
- ``weights=True`` (default): a message's ``weight`` (0 or 1, as fine-tuning datasets write
  it) overrides ``turns`` for that message;
- ``reasoning=False``: reasoning segments are not learned;
- tool results are never learned, whatever the rendering says (omni writes them inside the
  assistant turn, with kind ``tool_result``).

A trainable segment belongs to the assistant message it is in, or, when it sits in another
message (ChatGLM3 learns the ``<|user|>`` that ends an assistant turn), to the assistant
message before it.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, overload

from ..engine.lexer import marker_pattern
from ..errors import FormatError, PawletteError, RequestError
from ..format import Format, coerce_conversation
from ..formats import get_format
from ..types import Message, Rendering, Segment
from .backend import (
    AFTER_MARKER,
    CONTINUATION,
    START,
    TokenizerBackend,
    file_key,
    load_backend,
)

__all__ = ["IGNORE_INDEX", "ConversationEncoder", "MaskPolicy", "Tokenized", "tokenize"]

IGNORE_INDEX = -100
"""The label of a token nothing is learned on (PyTorch's ``CrossEntropyLoss`` default)."""


@dataclass(frozen=True)
class MaskPolicy:
    """Which tokens are learned (see the module docstring).

    >>> MaskPolicy.parse("last,no-reasoning")
    MaskPolicy(turns='last', reasoning=False, weights=True)
    """

    turns: Literal["all", "last"] = "all"
    """``"all"`` assistant messages, or the ``"last"`` one only."""
    reasoning: bool = True
    """Whether reasoning is learned."""
    weights: bool = True
    """Whether a message's ``weight`` (0 or 1) decides for that message."""

    def __post_init__(self) -> None:
        if self.turns not in ("all", "last"):
            raise RequestError("mask.turns", f"found {self.turns!r}", "'all' or 'last'")

    @classmethod
    def parse(cls, spec: str) -> MaskPolicy:
        """A policy from comma-separated words: ``all`` or ``last``, ``reasoning`` or
        ``no-reasoning``, ``weights`` or ``no-weights`` (the command line's ``--mask``)."""
        changes: dict[str, object] = {}
        words = {
            "all": ("turns", "all"),
            "last": ("turns", "last"),
            "reasoning": ("reasoning", True),
            "no-reasoning": ("reasoning", False),
            "weights": ("weights", True),
            "no-weights": ("weights", False),
        }
        for word in (part.strip() for part in spec.split(",")):
            if not word:
                continue
            if word not in words:
                raise RequestError(
                    "mask", f"found {word!r}", "comma-separated words among " + ", ".join(words)
                )
            name, value = words[word]
            changes[name] = value
        return dataclasses.replace(cls(), **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Tokenized:
    """A tokenized conversation: one entry per token in each list.

    ``labels`` is the id where the token is learned, :data:`IGNORE_INDEX` (-100) elsewhere;
    ``message_indices`` the index of the message the token belongs to (-1 outside any
    message; ``len(messages)`` for the generation prompt); ``kinds`` the kind of its segment
    (``header``, ``content``, ``reasoning``, ``tool_call``, ``tool_result``, ``end``, ...).
    """

    input_ids: list[int]
    labels: list[int]
    message_indices: list[int]
    kinds: list[str]
    losses: tuple[str, ...] = ()
    """What the format's render left out, as its model's template does (the render's
    :attr:`~pawlette.Rendering.losses`): not in the ids."""

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def learned(self) -> int:
        """How many tokens are learned."""
        return len(self.labels) - self.labels.count(IGNORE_INDEX)

    @property
    def provenance(self) -> list[tuple[int, str]]:
        """``(message index, kind)`` of each token."""
        return list(zip(self.message_indices, self.kinds, strict=True))


# An item of a plan: (marker id, or -1 - run number), learned (None: mixed run), message, kind.
_Item = tuple[int, "bool | None", int, str]
# A piece of a run: text, learned, message index, kind.
_Piece = tuple[str, bool, int, str]


class ConversationEncoder:
    """Tokenizes conversations in one format with one tokenizer and one mask policy.

    ``tokenizer``: a ``tokenizers.Tokenizer``, a ``tokenizer.json`` path (or a directory holding
    one), a transformers fast tokenizer, or a :class:`TokenizerBackend`.  Raises
    :class:`~pawlette.errors.TokenizerMismatch` when a marker of the format is not one special
    token of it.  Build one and reuse it: it caches marker ids and encoded text.
    """

    def __init__(
        self, fmt: Format | str, tokenizer: object, *, mask: MaskPolicy | str | None = None
    ) -> None:
        self.format = get_format(fmt) if isinstance(fmt, str) else fmt
        self.backend: TokenizerBackend = load_backend(tokenizer)
        self.mask = coerce_mask(mask)
        self._marker_ids = self.backend.marker_ids(self.format.special_markers, self.format.name)
        self._marker_split = marker_pattern(self.format.special_markers)
        self._composites: dict[str, tuple[tuple[int | None, str], ...]] = {}

    # ------------------------------------------------------------------ public

    def encode(
        self, messages: object, tools: object = None, *, add_generation_prompt: bool = False
    ) -> Tokenized:
        """Tokenize one conversation (OpenAI messages or a request dict, or core values)."""
        (result,) = self._encode_many([(messages, tools)], add_generation_prompt, keep_errors=False)
        if isinstance(result, PawletteError):  # pragma: no cover - raised, not returned
            raise result
        return result

    @overload
    def encode_batch(
        self,
        conversations: Iterable[object],
        *,
        add_generation_prompt: bool = ...,
        errors: Literal["raise"] = ...,
    ) -> list[Tokenized]: ...

    @overload
    def encode_batch(
        self,
        conversations: Iterable[object],
        *,
        add_generation_prompt: bool = ...,
        errors: Literal["return"],
    ) -> list[Tokenized | PawletteError]: ...

    def encode_batch(
        self,
        conversations: Iterable[object],
        *,
        add_generation_prompt: bool = False,
        errors: Literal["raise", "return"] = "raise",
    ) -> list[Tokenized] | list[Tokenized | PawletteError]:
        """Tokenize many conversations at once (their text is encoded in one batch).

        Each conversation is a request dict (``{"messages": [...], "tools": [...]}``), a list
        of messages, or a ``(messages, tools)`` pair.  ``errors="return"`` puts the error of a
        conversation that cannot be tokenized in its place instead of raising it.
        """
        if errors not in ("raise", "return"):
            raise RequestError("errors", f"found {errors!r}", "'raise' or 'return'")
        # One request dict or a string would be iterated as keys or characters: a list is meant.
        if isinstance(conversations, (str, bytes, Mapping)) or not isinstance(
            conversations, Iterable
        ):
            raise RequestError(
                "conversations", f"a {type(conversations).__name__}", "a list of conversations"
            )
        pairs = [_pair(conversation) for conversation in conversations]
        return self._encode_many(pairs, add_generation_prompt, keep_errors=errors == "return")

    @property
    def marker_ids(self) -> dict[str, int]:
        """Each marker of the format and its token id."""
        return dict(self._marker_ids)

    def prompt_ids(self, rendering: Rendering, prefix: str = "") -> list[int]:
        """The ids of a completion prompt (a rendering with the generation prompt), then of
        ``prefix``, text the model's turn is forced to begin with (a server's tool choice).

        Text is cut into runs exactly as in training (:meth:`encode`), so the ids are those
        the model was trained on.  ``prefix`` is model output: its text is a run of its own
        (markers in it by id), never merged into the prompt's last text.
        """
        runs: list[str] = []
        contexts: list[int] = []
        mixed: dict[int, tuple[_Piece, ...]] = {}
        segments: list[Segment] = list(rendering.segments)
        if prefix:
            segments.append(Segment(prefix, False, "assistant", -1, "prefix", True))
        segments = _split_markers(segments, self._marker_split)
        items = self._plan_segments(segments, None, runs, contexts, mixed)
        run_ids = self.backend.encode_texts(runs, contexts)
        return self._assemble(items, run_ids, contexts, mixed).input_ids

    # ------------------------------------------------------------------ internals

    def _encode_many(
        self, conversations: Sequence[tuple[object, object]], prompt: bool, *, keep_errors: bool
    ) -> list[Tokenized | PawletteError]:
        if not isinstance(prompt, bool):  # "no" would be true
            raise RequestError("add_generation_prompt", f"found {prompt!r}", "true or false")
        runs: list[str] = []
        contexts: list[int] = []  # run number -> where the run stands (backend.START, ...)
        owners: list[int] = []  # run number -> conversation number
        mixed: dict[int, tuple[_Piece, ...]] = {}
        plans: list[list[_Item] | PawletteError] = []
        losses: list[tuple[str, ...]] = []
        for number, conversation in enumerate(conversations):
            start = len(runs)
            losses.append(())
            try:
                plans.append(self._plan(conversation, prompt, runs, contexts, mixed, losses))
            except Exception as error:
                if not keep_errors:
                    raise
                del runs[start:]
                del contexts[start:]
                for run in [run for run in mixed if run >= start]:
                    del mixed[run]
                plans.append(record_error(error))
            owners.extend([number] * (len(runs) - start))
        run_ids = self._encode_runs_keeping_errors(runs, contexts, owners, plans, conversations)
        results: list[Tokenized | PawletteError] = []
        for plan, lost in zip(plans, losses, strict=True):
            if isinstance(plan, PawletteError):
                if not keep_errors:
                    raise plan
                results.append(plan)
            else:
                results.append(self._assemble(plan, run_ids, contexts, mixed, lost))
        return results

    def _encode_runs_keeping_errors(
        self,
        runs: list[str],
        contexts: list[int],
        owners: list[int],
        plans: list[list[_Item] | PawletteError],
        conversations: Sequence[tuple[object, object]],
    ) -> list[list[int]]:
        """The ids of every run; a run that cannot be encoded (text reaching a control id,
        a lone surrogate the tokenizer refuses) makes its conversation's plan an error, and
        the other conversations keep their ids."""
        try:
            return self.backend.encode_texts(runs, contexts)
        except Exception:  # found again below, one run at a time
            pass
        run_ids: list[list[int]] = []
        for text, context, owner in zip(runs, contexts, owners, strict=True):
            ids: list[int] = []
            if not isinstance(plans[owner], PawletteError):
                try:
                    (ids,) = self.backend.encode_texts([text], [context])
                except PawletteError as error:
                    plans[owner] = error
                except Exception as error:
                    plans[owner] = _text_error(text, conversations[owner], error)
            run_ids.append(ids)
        return run_ids

    def _plan(
        self,
        conversation: tuple[object, object],
        prompt: bool,
        runs: list[str],
        contexts: list[int],
        mixed: dict[int, tuple[_Piece, ...]],
        losses: list[tuple[str, ...]],
    ) -> list[_Item]:
        """The plan of one conversation; its render's losses replace the last of ``losses``."""
        messages, tools = coerce_conversation(*conversation)
        rendering = self.format.render(messages, tools, add_generation_prompt=prompt)
        losses[-1] = rendering.losses
        chosen = self._chosen(messages)
        return self._plan_segments(rendering.segments, chosen, runs, contexts, mixed)

    def _plan_segments(
        self,
        segments: Iterable[Segment],
        chosen: list[bool] | None,
        runs: list[str],
        contexts: list[int],
        mixed: dict[int, tuple[_Piece, ...]],
    ) -> list[_Item]:
        """Markers and text runs of ``segments``; ``chosen`` (see :meth:`_chosen`) says which
        messages are learned, None: nothing is (a prompt).  Each run's context (``contexts``)
        is :data:`START` when nothing precedes it, :data:`AFTER_MARKER` after a marker and
        :data:`CONTINUATION` after another run (a cut where trainability changes); with the
        format's ``encode_cuts``, a run after a marker or a declared cut is :data:`START` (a
        call of its own)."""
        reasoning = self.mask.reasoning
        marker_ids = self._marker_ids
        items: list[_Item] = []
        pieces: list[_Piece] = []
        run_trainable = False
        owner = -1
        # A format whose reference encodes piece by piece (Format.encode_cuts): each piece
        # after a marker or a declared cut is a call of its own, as at the start of a text.
        cuts = self.format.encode_cuts
        run_kind = ""
        after_cut = False  # the run being gathered begins at a declared cut

        def flush() -> None:
            code = -1 - len(runs)
            if not items or after_cut:
                contexts.append(START)
            elif items[-1][0] >= 0:
                contexts.append(AFTER_MARKER if cuts is None else START)
            else:
                contexts.append(CONTINUATION)
            first = pieces[0]
            if len(pieces) == 1:
                runs.append(first[0])
                items.append((code, first[1], first[2], first[3]))
            else:
                runs.append("".join(piece[0] for piece in pieces))
                tail = first[1:]
                if all(piece[1:] == tail for piece in pieces):
                    items.append((code, first[1], first[2], first[3]))
                else:
                    mixed[-1 - code] = tuple(pieces)
                    items.append((code, None, first[2], first[3]))
            pieces.clear()

        for text, special, role, index, kind, trainable in segments:
            if role == "assistant":
                owner = index
            learned = (
                trainable
                and chosen is not None
                and chosen[owner]
                and kind != "tool_result"
                and (reasoning or kind != "reasoning")
            )
            if special:
                marker = marker_ids.get(text)
                if marker is not None:
                    if pieces:
                        flush()
                    items.append((marker, learned, index, kind))
                    continue
                for composite_marker, piece in self._composite(text):
                    if composite_marker is not None:
                        if pieces:
                            flush()
                        items.append((composite_marker, learned, index, kind))
                    else:
                        if pieces and run_trainable != trainable:
                            flush()
                        if not pieces:
                            after_cut = False
                        pieces.append((piece, learned, index, kind))
                        run_trainable, run_kind = trainable, kind
                continue
            if pieces and cuts is not None and run_kind in cuts and kind != run_kind:
                flush()
                after_cut = True
            elif pieces and run_trainable != trainable:
                flush()
                after_cut = False
            elif not pieces:
                after_cut = False
            pieces.append((text, learned, index, kind))
            run_trainable, run_kind = trainable, kind
        if pieces:
            flush()
        return items

    def _chosen(self, messages: tuple[Message, ...]) -> list[bool]:
        """Whether each message's trainable segments may be learned; index ``len`` is the
        generation prompt and index -1 (the last) text before any assistant message."""
        policy = self.mask
        last = -1
        for index, message in enumerate(messages):
            if message.role == "assistant":
                last = index
        chosen = []
        for index, message in enumerate(messages):
            if policy.weights and message.weight is not None:
                chosen.append(message.weight == 1)
            else:
                chosen.append(policy.turns == "all" or index == last)
        chosen.append(True)  # the generation prompt (never trainable)
        chosen.append(policy.turns == "all")  # before any assistant message
        return chosen

    def _composite(self, text: str) -> tuple[tuple[int | None, str], ...]:
        """A special segment that is not one marker: its markers (by id) and its text."""
        found = self._composites.get(text)
        if found is not None:
            return found
        parts: list[tuple[int | None, str]] = []
        position = 0
        for match in self._marker_split.finditer(text):
            if match.start() > position:
                parts.append((None, text[position : match.start()]))
            parts.append((self._marker_ids[match.group()], match.group()))
            position = match.end()
        if position == 0:
            raise FormatError(
                f"{self.format.name}: the special segment {text!r} holds no marker of"
                " special_markers; expected every special segment to be or hold one"
            )
        if position < len(text):
            parts.append((None, text[position:]))
        result = tuple(parts)
        self._composites[text] = result
        return result

    def _assemble(
        self,
        items: list[_Item],
        run_ids: list[list[int]],
        contexts: list[int],
        mixed: dict[int, tuple[_Piece, ...]],
        losses: tuple[str, ...] = (),
    ) -> Tokenized:
        ids: list[int] = []
        labels: list[int] = []
        indices: list[int] = []
        kinds: list[str] = []
        for code, learned, index, kind in items:
            if code >= 0:
                ids.append(code)
                labels.append(code if learned else IGNORE_INDEX)
                indices.append(index)
                kinds.append(kind)
                continue
            tokens = run_ids[-1 - code]
            ids += tokens
            if learned is None:
                context = contexts[-1 - code]
                self._assign_mixed(mixed[-1 - code], tokens, context, labels, indices, kinds)
                continue
            count = len(tokens)
            labels += tokens if learned else [IGNORE_INDEX] * count
            indices += [index] * count
            kinds += [kind] * count
        return Tokenized(ids, labels, indices, kinds, losses)

    def _assign_mixed(
        self,
        pieces: tuple[_Piece, ...],
        tokens: list[int],
        context: int,
        labels: list[int],
        indices: list[int],
        kinds: list[str],
    ) -> None:
        """Labels and provenance of a run whose pieces differ: each token takes the piece of
        its last character, and is learned when any piece it touches is."""
        starts, ends = self.backend.token_ends([piece[0] for piece in pieces], tokens, context)
        last = len(pieces) - 1
        previous = 0
        # A run whose pieces differ only in provenance (the usual: a header and its content,
        # none learned) needs no look back for a token that a learned piece began.
        some_learned = any(piece[1] for piece in pieces)
        for number, (_, learned, index, kind) in enumerate(pieces):
            stop = len(tokens) if number == last else bisect_right(ends, starts[number + 1])
            count = stop - previous
            if not count:
                continue
            chunk = tokens[previous:stop]
            labels += chunk if learned else [IGNORE_INDEX] * count
            if not learned and number and some_learned:
                # The first token may begin in earlier pieces; any learned one makes it learned.
                begin = ends[previous - 1] if previous else 0
                first = bisect_right(starts, begin) - 1
                if any(pieces[k][1] for k in range(first, number)):
                    labels[-count] = chunk[0]
            indices += [index] * count
            kinds += [kind] * count
            previous = stop


def record_error(error: Exception) -> PawletteError:
    """A conversation's error as a :class:`PawletteError` (malformed input deep in a record
    can raise Python's own errors while it is read or rendered)."""
    if isinstance(error, PawletteError):
        return error
    if isinstance(error, RecursionError):
        return RequestError(
            "record", "values nested too deeply to read", "at most a few hundred levels"
        )
    return PawletteError(f"record: {type(error).__name__}: {error}")


def _text_error(text: str, conversation: tuple[object, object], error: Exception) -> PawletteError:
    """Why the tokenizer refused ``text``: a lone surrogate is named with its JSON path."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        found = _lone_surrogate(
            {"messages": conversation[0], "tools": conversation[1]}, "", skip_top=True
        )
        if found is not None:
            path, position, character = found
            return RequestError(
                path,
                f"text with a lone surrogate U+{ord(character):04X} at character {position}",
                "valid Unicode text (a \\ud800-\\udbff escape followed by a \\udc00-\\udfff one)",
            )
        return RequestError("record", "text with a lone surrogate", "valid Unicode text")
    return PawletteError(f"record: the tokenizer cannot encode {text[:80]!r} ({error})")


def _lone_surrogate(
    value: object, path: str, *, skip_top: bool = False
) -> tuple[str, int, str] | None:
    """The JSON path, character index and character of the first lone surrogate in ``value``."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            return path, error.start, value[error.start]
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = str(key) if skip_top or not path else f"{path}.{key}"
            found = _lone_surrogate(key, where + " (a key)") or _lone_surrogate(item, where)
            if found is not None:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            found = _lone_surrogate(getattr(value, field.name), f"{path}.{field.name}")
            if found is not None:
                return found
    return None


def _split_markers(segments: list[Segment], pattern: re.Pattern[str]) -> list[Segment]:
    """The last segment (a forced prefix, written as text) with its markers as special
    segments of their own; the others as they are."""
    if not segments or segments[-1].kind != "prefix":
        return segments
    *head, prefix = segments
    position = 0
    for match in pattern.finditer(prefix.text):
        if match.start() > position:
            head.append(prefix._replace(text=prefix.text[position : match.start()]))
        head.append(prefix._replace(text=match.group(), special=True))
        position = match.end()
    if position < len(prefix.text):
        head.append(prefix._replace(text=prefix.text[position:]))
    return head


def _pair(conversation: object) -> tuple[object, object]:
    """``(messages, tools)`` from a request dict, a message list or such a pair."""
    if (
        isinstance(conversation, tuple)
        and len(conversation) == 2
        and not isinstance(conversation[0], (Message, Mapping))
    ):
        return conversation[0], conversation[1]
    return conversation, None


def coerce_mask(mask: MaskPolicy | str | None) -> MaskPolicy:
    if mask is None:
        return MaskPolicy()
    if isinstance(mask, str):
        return MaskPolicy.parse(mask)
    if isinstance(mask, MaskPolicy):
        return mask
    raise RequestError("mask", f"a {type(mask).__name__}", "a MaskPolicy or a string")


_ENCODERS: collections.OrderedDict[tuple[object, ...], tuple[object, ConversationEncoder]]
_ENCODERS = collections.OrderedDict()
_ENCODER_CACHE_SIZE = 8


def _encoder_for(fmt: Format | str, tokenizer: object, mask: MaskPolicy) -> ConversationEncoder:
    resolved = get_format(fmt) if isinstance(fmt, str) else fmt
    tokenizer_key: object = (
        file_key(tokenizer) if isinstance(tokenizer, (str, os.PathLike)) else id(tokenizer)
    )
    key = (id(resolved), tokenizer_key, mask)
    found = _ENCODERS.get(key)
    if found is not None:
        _ENCODERS.move_to_end(key)
        return found[1]
    encoder = ConversationEncoder(resolved, tokenizer, mask=mask)
    # Keep the format and tokenizer alive while cached, so their ids are not reused.
    _ENCODERS[key] = ((resolved, tokenizer), encoder)
    while len(_ENCODERS) > _ENCODER_CACHE_SIZE:
        _ENCODERS.popitem(last=False)
    return encoder


def tokenize(
    fmt: Format | str,
    tokenizer: object,
    messages: object,
    tools: object = None,
    *,
    add_generation_prompt: bool = False,
    mask: MaskPolicy | str | None = None,
) -> Tokenized:
    """Token ids, labels and per-token provenance of a conversation.

    ``fmt`` is a :class:`~pawlette.Format` or a format name; ``tokenizer`` a
    ``tokenizers.Tokenizer``, a ``tokenizer.json`` path (or a directory holding one) or a
    transformers fast tokenizer whose special tokens include every marker of the format
    (``pawlette tokenizer prepare`` makes one); ``messages``/``tools`` are OpenAI JSON (or a
    request dict).  ``mask`` is a :class:`MaskPolicy` or its spelling (``"last,no-reasoning"``).
    The encoder behind it is cached per format, tokenizer and policy; for many conversations,
    :class:`ConversationEncoder`'s ``encode_batch`` is faster.

    Example (``tokenizer`` holds PCML's markers as special tokens)::

        result = pawlette.tokenize("pcml", tokenizer, [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"},
        ])
        tokenizer.decode([t for t in result.labels if t != -100], skip_special_tokens=False)
        # 'Hello!<end>'
    """
    return _encoder_for(fmt, tokenizer, coerce_mask(mask)).encode(
        messages, tools, add_generation_prompt=add_generation_prompt
    )
