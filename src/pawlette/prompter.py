r"""LazyLLM-style prompters: an instruction with ``{slots}`` turned into a prompt (seed 003).

A prompter is built once from an *instruction* and then called with each request's input::

    >>> from pawlette.prompter import ChatPrompter
    >>> prompter = ChatPrompter("请完成加法运算")
    >>> print(prompter.generate_prompt("a+b"))
    <|start_system|>You are an AI-Agent developed by LazyLLM.请完成加法运算
    <BLANKLINE>
    <|end_system|>
    <BLANKLINE>
    <BLANKLINE>
    <|Human|>:
    a+b
    <|Assistant|>:
    <BLANKLINE>

Reference: **LazyLLM 0.1.2** (``lazyllm==0.1.2`` on PyPI).  Its answers are reproduced byte
for byte: ``tests/golden/prompter/lazyllm_0.1.2.json`` holds 600 generated calls with the
reference's answers (recorded by running it), and 522 of its 549 answers (95.1%) are
reproduced exactly; the other 27 are the two differences listed below, where the reference
loses information.  The seed's printed examples come from LazyLLM 0.1.1; where 0.1.2 answers
them differently (every Alpaca string, and the ``{user}``-only instruction), 0.1.2 is followed
(``tests/golden/prompter/seed_003.json`` records both answers).

The templates, in full words (``{system}`` is the system text, by default
``You are an AI-Agent developed by LazyLLM.``; ``{tools}`` is the tools block)::

    AlpacaPrompter   {system}\n{instruction}\n{tools}\n{user}### Response:\n
    ChatPrompter     {system_open}{system}{instruction}{tools}{system_close}\n\n{history}\n
                     {human_open}\n{user}{input}\n{human_close}{assistant_open}\n

    Alpaca {instruction}  Below is an instruction that describes a task, paired with extra
                          messages such as input that provides further context if possible.
                          Write a response that appropriately completes the request.\n\n
                           ### Instruction:\n{instruction text}\n\n{extra keys}
    Chat {instruction}    {instruction text}\n{extra keys}\n
    {extra keys}          Here are some extra messages you can referred to:\n\n
                          ### {key}:\n{value}\n\n      (per key, in order; empty without keys)
    {tools}               ### Function-call Tools. \n\n{json.dumps(tools)}\n\n   (or empty)
    Chat {history}        {human_open}{question}{human_close}{assistant_open}{answer}
                          {assistant_close}      (per past turn, no newlines, no separator)

    markers  system_open <|start_system|>   system_close <|end_system|>
             human_open  <|Human|>:         human_close  (empty)
             assistant_open <|Assistant|>:  assistant_close (empty)

With ``return_dict=True`` the same request becomes an OpenAI chat request for online models::

    {"messages": [{"role": "system", "content": "{system}\n{instruction}"},   # or "{system}"
                  *history, {"role": "user", "content": "{user}{input}"}],
     "tools": [...]}                                            # the key only with tools

(``{system}`` alone when ``{instruction}`` is empty; with ``system=None`` the system message
is the instruction alone, and absent without one).

LazyLLM 0.1.2's rules, reproduced (each is a golden case):

- **Instruction text.** A string instruction is the ``{instruction text}``; ``None`` (no
  instruction) is written as the text ``None``, as LazyLLM writes it; ``""`` is an empty line.
  A dict ``{"system": ..., "user": ...}`` puts the system part at ``{instruction text}`` and
  the user part at ``{user}``; LazyLLM then ends ``{instruction}`` at the system part (no
  ``\n\n`` after it, no extra keys: see the differences below).  ``AlpacaPrompter({"user":
  ...})`` thus writes ``### Instruction:\n`` with nothing after it and the text before
  ``### Response:``.
- **Slots** are ``{name}`` with ``name`` made of word characters (Chinese included), in the
  instruction, the user instruction and the extra keys (each extra key is a slot).  A string
  or int input fills the one slot with ``str.format`` (so ``{{``/``}}`` read as ``{``/``}``
  there); a dict input fills every slot by replacement, in one pass (braces stay as they
  are).  Any other brace is literal text: where ``str.format`` cannot read an instruction
  (``{a-b}``, JSON), LazyLLM fails and pawlette fills the slot and keeps the rest.
- **Input.** A string or an int (written with ``str()``) fills the one slot; with no slot it
  is ChatPrompter's user turn, and must be empty (``""`` or ``0``) for AlpacaPrompter, which
  has no user turn.  A dict gives every slot a value; one key more, whatever its name, is the
  user turn (``{"doc": ..., "query": "What is LazyLLM?"}`` with ``extro_keys="doc"``), again
  empty for AlpacaPrompter; two keys more is an error naming them (and a likely typo).  ``{}``
  with no slot is an empty user turn.
- **History** (ChatPrompter): ``[[question, answer], ...]``; with ``return_dict=True`` also
  message dicts, ``[question]`` (a user message alone) and ``[]`` (nothing).
- **Tools JSON** is ``json.dumps(tools)`` with its defaults: ``", "``/``": "`` separators and
  non-ASCII as ``\uXXXX`` (``"\u5929\u6c14"`` for ``天气``), as a model fine-tuned on LazyLLM's
  prompts saw it.  ``return_dict`` passes the tools as they are.
- **Past turns** are ``<|Human|>:你好<|Assistant|>:...``: no newline after the markers, unlike
  the current turn's ``<|Human|>:\n``; the system text and instruction are joined with nothing
  in the Chat string (``LazyLLM.请完成``) and with ``\n`` in every ``return_dict`` system
  message and in Alpaca's string.

Remaining differences from LazyLLM 0.1.2, each where the reference loses information or fails:

- **Extra keys with a dict instruction** are kept (Alpaca: ``\n\n{extra keys}`` after the system
  instruction; Chat: ``\n{extra keys}\n``); LazyLLM drops their block, values and all.
- **label with return_dict=True** is a final assistant message; LazyLLM drops it.
- **Unknown keys of a dict instruction** (``{"sys": ...}``) are refused; LazyLLM ignores them.
- **Where LazyLLM fails** pawlette answers or raises a ``RequestError`` saying where and what:
  braces ``str.format`` cannot read (answered: slot filled, braces kept), a user instruction
  with a newline (answered; LazyLLM's split cannot cross it), an int input with
  ``return_dict=True`` (answered as text), message dicts in the string form's history
  (answered, rendered like pairs when they are text), history tuples (answered), ``tools=[]``
  at call time beside constructed tools (answered: no tools given); refused: two unexpected
  keys, a missing slot, a non-empty Alpaca leftover, history for Alpaca, a string with two
  slots, ``[question]`` in the string form.
- **Where LazyLLM accepts anything** pawlette checks: history messages (OpenAI's shapes, no
  system message, content or tool calls present), tools (OpenAI's shape), strings where text
  goes (a bool input is refused, not written ``True``).
- **get_response** without ``input``: LazyLLM returns what follows the output's *last*
  ``### Response:`` (Chat: ``<|Assistant|>:``), which loses an answer that mentions it and keeps
  the prompt's ``\n``; pawlette cuts an echoed prompt at its first end (below).
- **Dict-input values with a ``{slot}`` in them** are filled in one pass here; LazyLLM's
  replacement order follows a set's order, so its answer varies from run to run.

Where an example's code and its printed output disagree, the printed output is reproduced
(each case's ``note`` in the golden file says how):

- **The opening comma.** The seed's code line for the opening instruction writes
  ``{input}, 现在`` (ASCII comma and a space), while its printed outputs (the opening example,
  walkthrough steps 5 and 6) show ``输入，现在`` with the full-width comma of the prompt design
  it starts from (``{问题}，现在``).  The tests build the instruction with that full-width
  comma and compare against the seed's printed text (0.1.2's answer where it differs).
- Walkthrough step 5 shows ``输入`` although step 2 gives ``input='问题'``; it is called with
  ``输入`` (the opening example's input); step 6 shows ``问题`` and is called with it.
- ``ChatPrompter('请完成加法运算')`` with ``'a+b'``: the seed's string stops at
  ``<|Assistant|>`` with no closing quote; the output is the seed's text followed by the
  template's ``:\n`` (the only example not reproduced whole, since the seed cut it off).
- ``AlpacaPrompter('请完成加法运算', extro_keys='input')`` shows no call; its output implies
  ``generate_prompt('a+b')``.

Rules beyond LazyLLM (pawlette's own; each is tested):

- **History messages** need their content (``""`` for an empty turn on purpose; an assistant
  message may have ``tool_calls`` instead): a missing or null content is refused at
  ``history[i].content``.  A system (or developer) message in the history is refused: the
  prompter writes the system turn itself.
- **system=** defaults to LazyLLM's ``You are an AI-Agent developed by LazyLLM.``, joined to
  the instruction as shown.  ``system=None`` means no system text: the system part is the
  instruction alone, and with no instruction (``None`` or ``""``) and no extra keys there is no
  system message at all, so ``ChatPrompter(format=..., system=None)`` renders exactly a
  model's own prompt.
- **get_response(output, input=None)** returns the model's answer: with ``input`` (the
  prompt), the output less the prompt when it starts with it, else the output unchanged (as
  LazyLLM's prompters do).  Without it, the output unchanged unless it is an echo of a prompt,
  that is it starts with the prompter's prompt opening (Alpaca's system text and preamble,
  Chat's ``system_open`` and system text, a format's leading markers); then the answer starts
  after the prompt's *first* end: Alpaca's ``### Response:\n``, Chat's
  ``\n{human_close}{assistant_open}\n`` (past turns have no newlines around the markers),
  or, with ``format=``, the format's end of a user turn and generation prompt (pcml's
  ``[/USR]\n\n[AST]``) after the echo's last user-turn opening (past turns carry the
  generation prompt too).  Markers that an answer mentions are never cut at; only input
  text that spells the end of a prompt (or, with a format, an answer that spells a user-turn
  opening) can mislead the search without ``input``, so pass ``input`` when you have it.

The seed's walkthrough steps 1 and 3 print an intermediate instruction (``{{context}}``, a space
after ``### Instruction:\n``, a stray ``}``) that no public call returns and that contradicts the
final output of step 6; they are illustrations, not tested outputs.

``format=`` (beyond the seed; both prompters take it, with the same meaning) renders the
``return_dict`` request through any registered pawlette format instead of the string
templates above, and ``parse_response`` parses a completion with that format.  LazyLLM 0.1.2
takes no ``format``: it gives an online model (whose server applies the model's chat
template) the ``return_dict`` request of either prompter, and its per-model markers
(``_set_model_configs``, shared by both classes) reach only ChatPrompter's string template,
since Alpaca's has none.  So ``AlpacaPrompter(..., format=f)`` is what a chat model served
with ``f`` gets from LazyLLM's AlpacaPrompter: a system message holding the whole Alpaca
instruction and a user message holding the user instruction (usually empty), rendered by
``f``; ``ChatPrompter(..., format=f)`` likewise with its history and user turn.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, overload

from .errors import RequestError
from .format import Format
from .formats import get_format
from .json_values import check_json_value, check_text
from .openai import message_from_openai, tools_from_openai
from .tokenization.backend import CONTINUATION, START, load_backend
from .tokenization.encoder import IGNORE_INDEX, MaskPolicy, Tokenized
from .tokenization.encoder import tokenize as tokenize_conversation
from .tokenization.prepare import end_of_answer_id
from .types import Message, TextPart

__all__ = [
    "ALPACA_PREAMBLE",
    "DEFAULT_SYSTEM",
    "AlpacaPrompter",
    "ChatMarkers",
    "ChatPrompter",
]

DEFAULT_SYSTEM = "You are an AI-Agent developed by LazyLLM."
"""The system text of every prompter unless ``system=`` says otherwise."""

ALPACA_PREAMBLE = (
    "Below is an instruction that describes a task, paired with extra messages such as input "
    "that provides further context if possible. Write a response that appropriately completes "
    "the request."
)
"""The standard Alpaca preamble that opens AlpacaPrompter's instruction."""

# The leading space of " ### Instruction:" is in every seed example; it is kept.
_ALPACA_INSTRUCTION_HEADER = "\n\n ### Instruction:\n"
_EXTRA_KEYS_HEADER = "Here are some extra messages you can referred to:\n\n"
_TOOLS_HEADER = "### Function-call Tools. \n\n"
_ALPACA_RESPONSE = "### Response:\n"

_SLOT = re.compile(r"\{(\w+)\}")
_BRACES = re.compile(r"\{[^{}\n]*\}")
_INSTRUCTION_KEYS = ("system", "user")


@dataclass(frozen=True, slots=True)
class ChatMarkers:
    """The markers ChatPrompter writes around each part (LazyLLM's ``sos``, ``eos``, ...).

    ``system_open``/``system_close`` wrap the system part (``sos``/``eos``), ``human_open``/
    ``human_close`` a user turn (``soh``/``eoh``), ``assistant_open``/``assistant_close`` an
    assistant turn (``soa``/``eoa``).  The defaults are LazyLLM's.
    """

    system_open: str = "<|start_system|>"
    system_close: str = "<|end_system|>"
    human_open: str = "<|Human|>:"
    human_close: str = ""
    assistant_open: str = "<|Assistant|>:"
    assistant_close: str = ""


# --------------------------------------------------------------------------- validation helpers


def _kind(value: object) -> str:
    """How a found value reads in an error message: ``a string``, ``an int``, ``None``."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a dict"
    name = type(value).__name__
    return ("an " if name[0] in "aeiou" else "a ") + name


def _slots_of(text: str) -> list[str]:
    """The slot names of ``text`` in order of first appearance."""
    return list(dict.fromkeys(_SLOT.findall(text)))


def _literal_braces(text: str) -> list[str]:
    """Braced text in ``text`` that is not a slot (``{a-b}``, ``{a:>3}``, ``{"k": 1}``)."""
    found = (match.group(0) for match in _BRACES.finditer(text))
    return list(dict.fromkeys(braced for braced in found if not _SLOT.fullmatch(braced)))


def _fill(text: str, values: Mapping[str, str]) -> str:
    # One pass: a value that happens to contain "{name}" is not filled again.
    return _SLOT.sub(lambda match: values[match.group(1)], text)


def _format_fill(parts: Sequence[str], slot: str, value: str | int) -> list[str] | None:
    """``str.format`` of each part with the one slot (``{{`` read as ``{``), as LazyLLM fills
    a string or int input; None when ``str.format`` cannot read a part (other braces)."""
    try:
        return [part.format(**{slot: value}) for part in parts]
    except (KeyError, ValueError, IndexError, AttributeError, TypeError):
        return None


def _read_extra_keys(extro_keys: object, extra_keys: object) -> tuple[str, ...]:
    if extro_keys is not None and extra_keys is not None:
        raise RequestError(
            "extra_keys",
            "both extro_keys and extra_keys",
            "one of them",
            "extro_keys is LazyLLM's spelling of extra_keys; pass either",
        )
    path = "extra_keys" if extra_keys is not None else "extro_keys"
    value = extra_keys if extra_keys is not None else extro_keys
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise RequestError(path, f"found {_kind(value)}", "a string or a list of strings")
    keys: list[str] = []
    for index, key in enumerate(value):
        if not isinstance(key, str) or not key:
            raise RequestError(f"{path}[{index}]", f"found {key!r}", "a non-empty string")
        if key in keys:
            raise RequestError(f"{path}[{index}]", f"{key!r} a second time", "distinct keys")
        keys.append(key)
    return tuple(keys)


def _read_tools(tools: object, path: str) -> list[dict[str, Any]]:
    """Validated deep copies of OpenAI tool dicts (so later edits by the caller cannot leak)."""
    if tools is None:
        return []
    tools_from_openai(tools, path)  # raises RequestError naming tools[i].function.name etc.
    # Validated above: a list or tuple of mappings.
    copied = [dict(copy.deepcopy(tool)) for tool in cast(Sequence[Mapping[str, Any]], tools)]
    try:
        json.dumps(copied, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise RequestError(path, f"a value JSON cannot hold ({error})", "JSON values") from error
    return copied


def _tools_block(tools: Sequence[Mapping[str, Any]]) -> str:
    if not tools:
        return ""
    # json.dumps' defaults, as LazyLLM writes it: non-ASCII text as \\uXXXX escapes.
    return _TOOLS_HEADER + json.dumps(tools) + "\n\n"


def _extra_keys_template(keys: Sequence[str]) -> str:
    """The extra keys' block with a ``{key}`` slot per key (filled like the instruction)."""
    if not keys:
        return ""
    return _EXTRA_KEYS_HEADER + "".join(f"### {key}:\n{{{key}}}\n\n" for key in keys)


# --------------------------------------------------------------------------- the shared machinery


@dataclass(frozen=True, slots=True)
class _Request:
    """One call's input, bound to the prompter: everything a template needs."""

    instruction: str
    """The whole ``{instruction}`` text: the filled system-level instruction in its section."""
    user: str
    """The filled user-level instruction, written before the input in the user turn."""
    user_input: str
    history: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    label: str | None


class _Prompter:
    """What AlpacaPrompter and ChatPrompter share: instruction, slots, tools and the dict form."""

    # Whether the input left over by the slots becomes the user turn (Chat) or must be empty.
    _has_user_turn = False

    def __init__(
        self,
        instruction: str | Mapping[str, str] | None = None,
        extro_keys: str | Sequence[str] | None = None,
        *,
        extra_keys: str | Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        system: str | None = DEFAULT_SYSTEM,
        format: str | Format | None = None,
    ) -> None:
        self._format = _read_format(format)
        self._echo_shape: _EchoShape | None = None  # the format's, read on first use
        if system is not None and not isinstance(system, str):
            raise RequestError(
                "system", f"found {_kind(system)}", "a string, or None for no system text"
            )
        self._system = None if system is None else check_text(system, "system")
        self._split = isinstance(instruction, Mapping)
        self._instruction, self._user = self._read_instruction(instruction)
        check_text(self._instruction + self._user, "instruction")
        self._extra_keys = _read_extra_keys(extro_keys, extra_keys)
        self._extras = _extra_keys_template(self._extra_keys)
        names = _slots_of(self._instruction) + _slots_of(self._user) + list(self._extra_keys)
        self._slots = tuple(dict.fromkeys(names))
        self._tools = _read_tools(tools, "tools")

    # ------------------------------------------------------------------ construction

    def _read_instruction(self, instruction: object) -> tuple[str, str]:
        """``(system-level instruction, user-level instruction)`` from the caller's value."""
        if instruction is None:
            # LazyLLM writes a missing instruction as the text "None" (an f-string of None);
            # reproduced, so its users get their prompts.  Without system text (system=None,
            # pawlette's) there is no instruction at all.
            return ("" if self._system is None else "None"), ""
        if isinstance(instruction, str):
            return instruction, ""
        if not isinstance(instruction, Mapping):
            raise RequestError("instruction", f"found {_kind(instruction)}", "a string or a dict")
        unknown = [key for key in instruction if key not in _INSTRUCTION_KEYS]
        if unknown:
            raise RequestError(
                "instruction",
                f"unknown keys {unknown!r}",
                "only 'system' and/or 'user'",
            )
        parts = []
        for key in _INSTRUCTION_KEYS:
            value = instruction.get(key, "")
            if not isinstance(value, str):
                raise RequestError(f"instruction[{key!r}]", f"found {_kind(value)}", "a string")
            parts.append(value)
        return parts[0], parts[1]

    # ------------------------------------------------------------------ public properties

    @property
    def system(self) -> str | None:
        """The system text (``You are an AI-Agent developed by LazyLLM.`` by default); None
        when the prompter was built with ``system=None`` (no system text)."""
        return self._system

    @property
    def slots(self) -> tuple[str, ...]:
        """The names a dict input must give: the instruction's slots, then the extra keys."""
        return self._slots

    @property
    def extra_keys(self) -> tuple[str, ...]:
        return self._extra_keys

    @property
    def tools(self) -> list[dict[str, Any]]:
        """A copy of the tools given at construction."""
        return copy.deepcopy(self._tools)

    @property
    def format(self) -> Format | None:
        """The pawlette format this prompter renders through, if any."""
        return self._format

    # ------------------------------------------------------------------ generate_prompt

    @overload
    def generate_prompt(
        self,
        input: str | int | Mapping[str, str | int],
        history: Sequence[Sequence[str] | Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        label: str | None = None,
        *,
        return_dict: Literal[False] = False,
    ) -> str: ...

    @overload
    def generate_prompt(
        self,
        input: str | int | Mapping[str, str | int],
        history: Sequence[Sequence[str] | Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        label: str | None = None,
        *,
        return_dict: Literal[True],
    ) -> dict[str, Any]: ...

    @overload
    def generate_prompt(
        self,
        input: str | int | Mapping[str, str | int],
        history: Sequence[Sequence[str] | Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        label: str | None = None,
        *,
        return_dict: bool,
    ) -> str | dict[str, Any]: ...

    def generate_prompt(
        self,
        input: str | int | Mapping[str, str | int],
        history: Sequence[Sequence[str] | Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        label: str | None = None,
        *,
        return_dict: bool = False,
    ) -> str | dict[str, Any]:
        """The prompt for one request: a string for local models, a dict for online ones.

        ``input`` is a string or an int (it fills the one slot, or becomes the user turn) or a
        dict of slot values (one more key is the user turn).  ``history`` is ``[[question,
        answer], ...]`` or OpenAI message dicts.  ``tools`` are OpenAI tool dicts, refused when
        the prompter was built with tools.  ``label`` is the expected answer, for fine-tuning:
        appended after the prompt (as an assistant message with ``return_dict=True``).
        """
        if not isinstance(return_dict, bool):
            raise RequestError("return_dict", f"found {_kind(return_dict)}", "True or False")
        # A format renders the dict form, so it takes the dict form's history ([question]).
        for_dict = return_dict or self._format is not None
        request = self._bind(input, history, tools, label, for_dict=for_dict)
        if return_dict:
            return self._to_dict(request)
        return self._to_text(request)

    def _bind(
        self,
        input: object,
        history: object,
        tools: object,
        label: object,
        *,
        for_dict: bool,
    ) -> _Request:
        # Text that is not Unicode (a lone surrogate) can be in no prompt (issue 14).
        # An int input is written with str(): one too long for that is refused here.
        if isinstance(input, str):
            check_text(input, "input")
        elif isinstance(input, int):
            check_json_value(input, "input")
        elif isinstance(input, Mapping):
            for key, value in input.items():
                if isinstance(value, str):
                    check_text(value, f"input[{key!r}]")
                elif isinstance(value, int):
                    check_json_value(value, f"input[{key!r}]")
        (instruction, user, extras), user_input = self._bind_input(input)
        if label is not None and not isinstance(label, str):
            raise RequestError("label", f"found {_kind(label)}", "a string or None")
        if label is not None:
            check_text(label, "label")
        return _Request(
            instruction=self._section(instruction, extras),
            user=user,
            user_input=user_input,
            history=self._read_history(history, for_dict=for_dict),
            tools=tuple(self._call_tools(tools)),
            label=label,
        )

    def _section(self, instruction: str, extras: str) -> str:
        """The ``{instruction}`` text from the filled instruction and extra keys' block."""
        raise NotImplementedError

    def _bind_input(self, input: object) -> tuple[list[str], str]:
        """``([instruction, user instruction, extra keys' block] filled, user turn text)``."""
        slots = self._slots
        parts = [self._instruction, self._user, self._extras]
        if isinstance(input, bool) or not isinstance(input, (str, int, Mapping)):
            raise RequestError(
                "input", f"found {_kind(input)}", "a string, an int or a dict of strings"
            )
        if not isinstance(input, Mapping):
            if len(slots) == 1:
                # LazyLLM fills a string with str.format ({{ reads as {}); where that cannot
                # read the instruction (other braces), every brace but the slot is text.
                filled = _format_fill(parts, slots[0], input)
                if filled is None:
                    filled = [_fill(part, {slots[0]: str(input)}) for part in parts]
                return filled, ""
            if slots:
                raise RequestError(
                    "input",
                    f"{_kind(input)}, but there are {len(slots)} slots ({', '.join(slots)})",
                    "a dict with a value for each",
                )
            return parts, self._leftover(input, "input")
        for key, value in input.items():
            if not isinstance(key, str):
                raise RequestError("input", f"a key {key!r}", "string keys")
            if key in slots and not isinstance(value, str):
                raise RequestError(
                    f"input[{key!r}]", f"found {_kind(value)}", "a string", "convert it with str()"
                )
        missing = [slot for slot in slots if slot not in input]
        if missing:
            raise RequestError(
                "input",
                f"no value for {', '.join(map(repr, missing))}",
                f"a value for every slot ({', '.join(slots)})",
            )
        # One key that is no slot is the user's input (LazyLLM's rule: {"doc": ..., "query":
        # "What is LazyLLM?"} with extro_keys="doc"); two or more cannot be told apart.
        leftover = [key for key in input if key not in slots]
        if len(leftover) > 1:
            raise self._unexpected_keys(leftover, slots)
        user_input = ""
        if leftover:
            key = leftover[0]
            value = input[key]
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise RequestError(f"input[{key!r}]", f"found {_kind(value)}", "a string")
            user_input = self._leftover(value, f"input[{key!r}]")
        values = {slot: cast(str, input[slot]) for slot in slots}
        return [_fill(part, values) for part in parts], user_input

    def _leftover(self, value: str | int, path: str) -> str:
        """The input no slot takes: the user turn (Chat) or nothing (Alpaca, where it must be
        empty, ``""`` or ``0``: LazyLLM's ``All keys should in instruction or extro-keys``)."""
        if self._has_user_turn:
            return str(value)
        if not value:
            return ""
        raise RequestError(
            path,
            f"{value!r}, but no {{slot}} or extra key is left to put it in"
            + self._literal_braces_note(),
            "every input in a slot of the instruction or an extra key",
            f"{type(self).__name__} has no user turn",
        )

    def _unexpected_keys(self, keys: Sequence[str], accepted: Sequence[str]) -> RequestError:
        listed = ", ".join(map(repr, keys))
        found = f"unexpected keys {listed}"
        expected = (
            f"the keys {', '.join(map(repr, accepted))} and at most one more (the user's input)"
            if accepted
            else "at most one key (the user's input)"
        )
        hints = []
        for key in keys:
            close = difflib.get_close_matches(key, accepted, n=1)
            if close:
                hints.append(f"{key!r} looks like a typo of {close[0]!r}")
            elif "{" + key + "}" in self._literal_braces():
                hints.append(f"{{{key}}} in the instruction is literal text, not a slot")
        return RequestError("input", found, expected, "; ".join(hints))

    def _literal_braces(self) -> list[str]:
        return _literal_braces(self._instruction + "\n" + self._user)

    def _literal_braces_note(self) -> str:
        """`` ({a-b} is literal text: a slot is ...; slots found: none)`` or ``""``."""
        braces = self._literal_braces()
        if not braces:
            return ""
        return (
            f" ({', '.join(braces)} {'is' if len(braces) == 1 else 'are'} literal text: a slot"
            f" is {{name}} with letters, digits and _ only; slots found: none)"
        )

    def _call_tools(self, tools: object) -> list[dict[str, Any]]:
        if tools is None or (isinstance(tools, (list, tuple)) and not tools):
            return copy.deepcopy(self._tools)
        if self._tools:
            raise RequestError(
                "tools",
                "tools at call time, but the prompter was built with tools",
                "tools=None",
                "give tools either to the prompter or to each call, not both",
            )
        return _read_tools(tools, "tools")

    def _read_history(self, history: object, *, for_dict: bool) -> tuple[dict[str, Any], ...]:
        """History as OpenAI message dicts (pairs become a user and an assistant message)."""
        if history is None:
            return ()
        if not isinstance(history, (list, tuple)):
            raise RequestError(
                "history", f"found {_kind(history)}", "a list of [question, answer] or messages"
            )
        messages: list[dict[str, Any]] = []
        for index, item in enumerate(history):
            path = f"history[{index}]"
            if isinstance(item, Mapping):
                messages.append(self._history_message(item, path, for_dict=for_dict))
            elif isinstance(item, (list, tuple)):
                # The dict form takes [question] (a turn without its answer) and [] too, as
                # LazyLLM does; the string form writes every turn with its answer.
                lengths = (0, 1, 2) if for_dict else (2,)
                if len(item) not in lengths:
                    raise RequestError(
                        path,
                        f"found {len(item)} items",
                        "[question, answer]" + (" or [question]" if for_dict else ""),
                    )
                for position, text in enumerate(item):
                    if not isinstance(text, str):
                        raise RequestError(
                            f"{path}[{position}]", f"found {_kind(text)}", "a string"
                        )
                    check_text(text, f"{path}[{position}]")
                for role, text in zip(("user", "assistant"), item, strict=False):
                    messages.append({"role": role, "content": text})
            else:
                raise RequestError(
                    path, f"found {_kind(item)}", "[question, answer] or a message dict"
                )
        return tuple(messages)

    def _history_message(
        self, item: Mapping[str, Any], path: str, *, for_dict: bool
    ) -> dict[str, Any]:
        core = message_from_openai(item, path)
        if core.role == "system":
            raise RequestError(
                f"{path}.role",
                f"a {item.get('role')} message in the history",
                "user, assistant or tool messages",
                "the prompter writes the system turn itself: give its text as "
                "instruction= or system=",
            )
        if item.get("content") is None and not core.tool_calls:
            raise RequestError(
                f"{path}.content",
                "missing" if "content" not in item else "found None",
                'the message\'s text ("" for an empty turn on purpose)'
                + (" or tool_calls" if core.role == "assistant" else ""),
            )
        if not for_dict and not self._text_history_can_hold(core):
            raise RequestError(
                path,
                f"a {core.role} message"
                + (" with tool calls" if core.tool_calls else "")
                + (" with reasoning" if core.reasoning is not None else ""),
                "user or assistant messages with text content in the string form",
                "use return_dict=True or a format= prompter for other messages",
            )
        check_json_value(item, path)  # copied into the dict form whole: JSON only
        return copy.deepcopy(dict(item))

    @staticmethod
    def _text_history_can_hold(core: Message) -> bool:
        return (
            core.role in ("user", "assistant")
            and not core.tool_calls
            and core.reasoning is None
            and core.reasoning_steps is None
            and all(isinstance(part, TextPart) for part in core.content or ())
        )

    # ------------------------------------------------------------------ the two outputs

    def _to_text(self, request: _Request) -> str:
        raise NotImplementedError

    def _format_text(self, fmt: Format, request: _Request) -> str:
        """The prompt through a format: the ``return_dict`` request rendered, with the
        generation prompt unless a label (a final assistant message) ends it."""
        messages = self._messages(request)
        tools = list(request.tools) or None
        answering = request.label is None
        return fmt.render(messages, tools, add_generation_prompt=answering).text

    def _messages(self, request: _Request) -> list[dict[str, Any]]:
        """The OpenAI messages of a request (the ``return_dict`` form)."""
        section = request.instruction
        # The seed joins system text and instruction with "\n" here (but not in ChatPrompter's
        # string form); both are reproduced as shown.
        messages: list[dict[str, Any]] = []
        if self._system is None:
            # No system text: the instruction alone, and no system message without one (so a
            # format= prompter can render exactly a model's own prompt).
            if section:
                messages.append({"role": "system", "content": section})
        else:
            system = self._system + "\n" + section if section else self._system
            messages.append({"role": "system", "content": system})
        messages.extend(copy.deepcopy(list(request.history)))
        # Always a user message, empty when every input went into slots (the seed shows it).
        messages.append({"role": "user", "content": request.user + request.user_input})
        if request.label is not None:
            # The fine-tuning answer in OpenAI's fine-tuning shape: a final assistant message.
            messages.append({"role": "assistant", "content": request.label})
        return messages

    def _to_dict(self, request: _Request) -> dict[str, Any]:
        result: dict[str, Any] = {"messages": self._messages(request)}
        if request.tools:
            result["tools"] = list(request.tools)
        return result

    # ------------------------------------------------------------------ token ids

    def tokenize(
        self,
        tokenizer: object,
        input: str | Mapping[str, str],
        history: Sequence[Sequence[str] | Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        label: str | None = None,
        *,
        mask: MaskPolicy | str | None = None,
        eos_token: str | None = None,
    ) -> Tokenized:
        """Token ids and labels (the loss mask) of :meth:`generate_prompt`'s prompt, and of
        ``label``, the answer to learn, when given.

        ``tokenizer`` is anything :func:`pawlette.tokenize` takes.  Labels are the id where
        the token is learned and -100 elsewhere.

        - **With ``format=``** this is :func:`pawlette.tokenize` of the ``return_dict``
          request, the label as its last assistant message: markers by id (the tokenizer must
          hold them), text never a control id, and only the label's turn learned (``mask``
          defaults to ``"last"``; ``"all"`` learns the assistant turns of ``history`` too),
          its end marker included.  Without a label the ids are the prompt's, with the
          generation prompt, and nothing is learned unless ``mask`` says otherwise.
        - **Without a format** the prompt string is text, markers such as ``<|Human|>:``
          included (the LazyLLM design writes them as text), encoded with no added token
          matched, so no input can produce a control id.  The answer (the label and, for
          ChatPrompter, ``markers.assistant_close``) is encoded apart from the prompt, as the
          model produces it after the prompt at inference, and is the only learned part.
          The answer ends with an end-of-answer marker, learned, so the model learns to stop:
          the template's ``eoa`` (``markers.assistant_close``) as text when it has one, else
          the tokenizer's end-of-sequence token by id (``eos_token``, or the one
          :func:`~pawlette.tokenization.prepare.end_of_sequence` finds; a tokenizer with none
          is refused).  ``mask`` does not apply.  Tokens are ``(-1, "prompt")``, ``(-1,
          "label")`` and ``(-1, "end")`` in the provenance.
        """
        if label is not None and not isinstance(label, str):
            raise RequestError("label", f"found {_kind(label)}", "a string or None")
        if self._format is not None:
            request = self._to_dict(self._bind(input, history, tools, label, for_dict=True))
            result = tokenize_conversation(
                self._format,
                tokenizer,
                request,
                add_generation_prompt=label is None,
                mask="last" if mask is None else mask,
            )
            if label is None and mask is None:  # a prompt: nothing to learn
                result = dataclasses.replace(result, labels=[IGNORE_INDEX] * len(result))
            return result
        if mask is not None:
            raise RequestError(
                "mask", f"found {mask!r}", "None", "mask policies apply to format= prompters"
            )
        bound = self._bind(input, history, tools, label, for_dict=False)
        prompt = self._to_text(dataclasses.replace(bound, label=None))
        answer = self._to_text(bound)[len(prompt) :] if label is not None else ""
        # The answer continues the prompt's text (SentencePiece-style tokenizers add no
        # prefix there, as they would at the start of a text).
        backend = load_backend(tokenizer)
        prompt_ids, answer_ids = backend.encode_texts([prompt, answer], [START, CONTINUATION])
        count = len(prompt_ids)
        markers = getattr(self, "markers", None)
        end = []  # no eoa in the template: the tokenizer's end of sequence ends the answer
        if label is not None and not (markers is not None and markers.assistant_close):
            end = [end_of_answer_id(tokenizer, backend, eos_token)]
        return Tokenized(
            input_ids=prompt_ids + answer_ids + end,
            labels=[IGNORE_INDEX] * count + answer_ids + end,
            message_indices=[-1] * (count + len(answer_ids) + len(end)),
            kinds=["prompt"] * count + ["label"] * len(answer_ids) + ["end"] * len(end),
        )

    # ------------------------------------------------------------------ responses

    def get_response(self, output: str, input: str | None = None) -> str:
        """The model's answer cut from its raw output: the output less an echoed prompt.

        - With ``input`` (the prompt): the output less the prompt when it starts with it,
          else the output unchanged.
        - Without it: the output unchanged, unless it is an echo of a prompt, that is it
          starts with this prompter's prompt opening (Alpaca's system text and preamble,
          Chat's ``system_open`` and system text, a format's leading markers); then the
          answer is what follows the *first* end of the prompt (``### Response:\\n`` for
          Alpaca, ``\\n<|Assistant|>:\\n`` for Chat; with ``format=``, the format's end of a
          user turn and generation prompt after the echo's last user-turn opening).  See the
          module docstring for why and for the limits.

        An answer is never searched for markers: one that mentions ``### Response:`` comes
        back whole.  Nothing else is stripped: a format's end marker (such as ``<end>``) stays
        in the text; :meth:`parse_response` is the structured reading.

        >>> AlpacaPrompter("{x}").get_response("Use the header ### Response:\\n then answer.")
        'Use the header ### Response:\\n then answer.'
        >>> prompter = ChatPrompter()
        >>> prompter.get_response(prompter.generate_prompt("hi") + "Hello!")
        'Hello!'
        """
        if not isinstance(output, str):
            raise RequestError("output", f"found {_kind(output)}", "a string")
        if input is not None:
            if not isinstance(input, str):
                raise RequestError("input", f"found {_kind(input)}", "the prompt string or None")
            return output[len(input) :] if output.startswith(input) else output
        if self._format is not None:
            openings = self._format_openings(self._format)
        else:
            openings = self._prompt_openings()
        if not any(output.startswith(opening) for opening in openings if opening):
            return output
        if self._format is not None:
            end = self._format_end_of_echoed_prompt(self._format, output)
        else:
            end = self._end_of_echoed_prompt(output)
        return output if end is None else output[end:]

    def _prompt_openings(self) -> list[str]:
        """The texts every prompt of this prompter starts with (one of them)."""
        raise NotImplementedError

    def _end_of_echoed_prompt(self, output: str) -> int | None:
        """Where the prompt echoed at the start of ``output`` ends, or None if it does not."""
        raise NotImplementedError

    def _format_echo_shape(self, fmt: Format) -> _EchoShape:
        if self._echo_shape is None:
            self._echo_shape = _read_echo_shape(fmt)
        return self._echo_shape

    def _format_openings(self, fmt: Format) -> list[str]:
        shape = self._format_echo_shape(fmt)
        # With system text there is always a system message; without, only with an
        # instruction.
        if self._system is not None:
            return [shape.system_opening]
        return [shape.system_opening, shape.user_opening]

    def _format_end_of_echoed_prompt(self, fmt: Format, output: str) -> int | None:
        shape = self._format_echo_shape(fmt)
        # The prompt ends with the last user turn: the first end of a user turn and
        # generation prompt after that turn's opening.  Past turns hold the generation
        # prompt too, and an answer may mention it, so neither the first nor the last
        # generation prompt of the output will do.
        start = output.rfind(shape.user_open)
        if start < 0:
            return None
        index = output.find(shape.end_of_prompt, start + len(shape.user_open))
        return None if index < 0 else index + len(shape.end_of_prompt)

    def parse_response(self, output: str, input: str | None = None) -> dict[str, Any]:
        """The model's answer as an OpenAI assistant message.

        With ``format=``, the completion (what follows the prompt: ``input`` is stripped when
        the output starts with it) is parsed by the format, so tool calls and reasoning come
        back as ``tool_calls`` and ``reasoning_content``, read from where ``input`` leaves
        the model (:meth:`pawlette.Format.start_after`).  Without a format this is
        ``{"role": "assistant", "content": get_response(...)}``: the default templates have
        no tool-call syntax to parse.
        """
        if self._format is not None:
            return self._format.parse(self.get_response(output, input), prompt=input).message
        return {"role": "assistant", "content": self.get_response(output, input)}


# --------------------------------------------------------------------------- the prompters


def _read_format(format: object) -> Format | None:
    if format is None or isinstance(format, Format):
        return format
    if isinstance(format, str):
        return get_format(format)
    raise RequestError("format", f"found {_kind(format)}", "a format name")


@dataclass(frozen=True, slots=True)
class _EchoShape:
    """How a format's prompt starts and ends, for finding a prompt echoed in an output."""

    system_opening: str
    """The render's leading markers when it starts with a system message."""
    user_opening: str
    """The render's leading markers when it starts with a user message."""
    user_open: str
    """The header that opens a user turn."""
    end_of_prompt: str
    """What follows the last user turn's text: the turn's end and the generation prompt."""


def _read_echo_shape(fmt: Format) -> _EchoShape:
    openings = []
    for messages in (
        [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        [{"role": "user", "content": "u"}],
    ):
        segments = fmt.render(messages, add_generation_prompt=True).segments
        leading = []
        for segment in segments:
            if not segment.special:
                break
            leading.append(segment.text)
        openings.append("".join(leading))
    # The last render is the user message alone (message 0).  Its header, role name included
    # (breeze's "<|start_header_id|>user<|end_header_id|>\n\n", not the marker alone that
    # every role shares), opens a user turn.
    own = [index for index, segment in enumerate(segments) if segment.message_index == 0]
    user_open = "".join(segments[index].text for index in own if segments[index].kind == "header")
    content = max(index for index in own if segments[index].kind == "content")
    end_of_prompt = "".join(segment.text for segment in segments[content + 1 :])
    return _EchoShape(openings[0], openings[1], user_open, end_of_prompt)


class AlpacaPrompter(_Prompter):
    r"""The Alpaca instruction format: one task, no conversation.

    ``instruction`` is a string with ``{slots}`` or a dict with ``system`` and/or ``user``;
    ``extro_keys`` (or ``extra_keys``) names extra inputs, listed after the instruction;
    ``tools`` are OpenAI tool dicts; ``system`` is the system text (``None`` for none).  Every
    input must go into a slot or an extra key: a string or int input needs exactly one of
    them (or, with none, must be empty), a dict input a value for each and at most one more
    key with an empty value (Alpaca has no user turn: LazyLLM 0.1.2's rules).

    >>> p = AlpacaPrompter("请完成加法运算, 输入为{instruction}")
    >>> p.generate_prompt("a+b").endswith("输入为a+b\n\n\n\n### Response:\n")
    True

    Decisions:

    - **Template.** ``{system}\n{instruction}\n{tools}\n{user}### Response:\n``, the seed's
      stated template and LazyLLM 0.1.2's (the seed's printed examples, from 0.1.1, have one
      ``\n`` fewer before ``### Response:``; see the module docstring).
    - **A dict instruction**: its system part fills the ``### Instruction:`` section (which then
      ends there, as in LazyLLM 0.1.2), its user part goes at ``{user}``, before
      ``### Response:`` (with only ``user``, the section is the header alone).
    - **No history**: any non-empty history is refused (the seed: Alpaca has no multi-turn).
    - **return_dict** puts the whole instruction in the system message; the user message holds
      only the user instruction, so it is usually empty (as the seed shows).
    - **label** is appended after ``### Response:\n`` as is.
    - **system=None** drops ``{system}\n``: the prompt starts with the Alpaca preamble.
    - **format=** as ChatPrompter's: the ``return_dict`` request rendered through the format
      (the label a final assistant message), ``tokenize`` and ``parse_response`` through it
      (see the module docstring for why Alpaca takes it too).
    """

    _has_user_turn = False

    def _read_history(self, history: object, *, for_dict: bool) -> tuple[dict[str, Any], ...]:
        if history is None or (isinstance(history, (list, tuple)) and not history):
            return ()
        raise RequestError(
            "history",
            f"found {len(history)} history items"
            if isinstance(history, (list, tuple))
            else f"found {_kind(history)}",
            "no history",
            "AlpacaPrompter is single-turn; use ChatPrompter for conversations",
        )

    def _section(self, instruction: str, extras: str) -> str:
        section = ALPACA_PREAMBLE + _ALPACA_INSTRUCTION_HEADER + instruction
        if self._split and not extras:
            # LazyLLM ends a {system, user} instruction at its system part.
            return section
        return section + "\n\n" + extras

    def _prompt_openings(self) -> list[str]:
        return [("" if self._system is None else self._system + "\n") + ALPACA_PREAMBLE]

    def _end_of_echoed_prompt(self, output: str) -> int | None:
        # The prompt's only "### Response:\n" is its end (unless the input itself holds one).
        index = output.find(_ALPACA_RESPONSE)
        return None if index < 0 else index + len(_ALPACA_RESPONSE)

    def _to_text(self, request: _Request) -> str:
        if self._format is not None:
            return self._format_text(self._format, request)
        return (
            ("" if self._system is None else self._system + "\n")
            + request.instruction
            + "\n"
            + _tools_block(request.tools)
            + "\n"
            + request.user
            + _ALPACA_RESPONSE
            + (request.label or "")
        )


class ChatPrompter(_Prompter):
    r"""A multi-turn chat prompt: system part, past turns, the user turn, the answer marker.

    ``instruction`` is a string (its ``{slots}``, if any, are filled in the system part) or a
    dict with ``system`` and/or ``user`` (the user instruction is written at the start of the
    user turn).  A string or int input fills the single slot if there is one, else it is the
    user turn; a dict input fills the slots, and its one key that is no slot, if any, is the
    user turn; two such keys are an error.  ``markers`` replaces the ``<|Human|>:``-style
    markers; ``format`` renders through a registered pawlette format instead; ``system=None``
    leaves out LazyLLM's system text.

    >>> p = ChatPrompter("你是一个对话机器人")
    >>> print(p.generate_prompt("我们聊会儿天吧", history=[["你好", "你好!"]]))
    <|start_system|>You are an AI-Agent developed by LazyLLM.你是一个对话机器人
    <BLANKLINE>
    <|end_system|>
    <BLANKLINE>
    <|Human|>:你好<|Assistant|>:你好!
    <|Human|>:
    我们聊会儿天吧
    <|Assistant|>:
    <BLANKLINE>

    Decisions:

    - **Slots go in the system part.** ``ChatPrompter('请完成加法运算，输入为{input}')`` with
      ``'a+b'`` fills the slot in the system part and leaves the user turn empty, as the seed's
      example shows, even though the template also has an ``{input}`` place.
    - **System text and instruction** are joined with nothing in the string form
      (``LazyLLM.请完成``) and with ``\n`` in the ``return_dict`` system message, as shown.
    - **Past turns** are ``{human_open}{question}{human_close}{assistant_open}{answer}
      {assistant_close}`` with no newlines and no separator (``<|Human|>:你好<|Assistant|>:...``),
      unlike the current turn; as the seed shows.
    - **Message-dict history in the string form**: the seed supports ``[dict, dict]`` history
      only with ``return_dict=True``.  Here it is also accepted in the string form when every
      message is a user or assistant message with text only, rendered exactly like the
      ``[question, answer]`` form; other messages (system, tool, tool calls, reasoning, images)
      are refused with a hint to use ``return_dict=True`` or ``format=``.
    - **label** is appended after ``<|Assistant|>:\n`` followed by ``assistant_close`` (empty by
      default, so the label as is).  With ``format=``, the label is a final assistant message
      rendered without a generation prompt (so the format's end marker follows it).
    - **format=** renders the ``return_dict`` request (``messages`` and ``tools``) with
      ``add_generation_prompt=True``; ``return_dict=True`` is unaffected by it.  With
      ``system=None`` and no instruction the request has no system message, so the prompt is
      exactly the format's own rendering of the conversation.
    - **Dict keys, history content, system=None, get_response**: see the module docstring.
    """

    _has_user_turn = True

    def __init__(
        self,
        instruction: str | Mapping[str, str] | None = None,
        extro_keys: str | Sequence[str] | None = None,
        *,
        extra_keys: str | Sequence[str] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        system: str | None = DEFAULT_SYSTEM,
        markers: ChatMarkers | None = None,
        format: str | Format | None = None,
    ) -> None:
        if markers is not None and format is not None:
            raise RequestError(
                "markers", "both markers and format", "one of them", "a format has its own markers"
            )
        if markers is not None and not isinstance(markers, ChatMarkers):
            raise RequestError("markers", f"found {_kind(markers)}", "a ChatMarkers")
        super().__init__(
            instruction,
            extro_keys,
            extra_keys=extra_keys,
            tools=tools,
            system=system,
            format=format,
        )
        self._markers = markers or ChatMarkers()

    def _prompt_openings(self) -> list[str]:
        return [self._markers.system_open + (self._system or "")]

    def _end_of_echoed_prompt(self, output: str) -> int | None:
        markers = self._markers
        # Only the current turn has newlines around the markers (past turns are written
        # "<|Human|>:q<|Assistant|>:a"), so the first one is the end of the prompt.
        end = "\n" + markers.human_close + markers.assistant_open + "\n"
        index = output.find(end)
        return None if index < 0 else index + len(end)

    @property
    def markers(self) -> ChatMarkers:
        return self._markers

    def _section(self, instruction: str, extras: str) -> str:
        if self._split and not extras:
            # LazyLLM ends a {system, user} instruction at its system part.
            return instruction
        if self._system is None and not instruction and not extras:
            return ""  # pawlette's system=None without instruction: no system part at all
        return instruction + "\n" + extras + "\n"

    def _history_text(self, request: _Request) -> str:
        markers = self._markers
        pieces = []
        for message in request.history:
            text = message_from_openai(message, "history").text
            if message["role"] == "user":
                pieces.append(markers.human_open + text + markers.human_close)
            else:
                pieces.append(markers.assistant_open + text + markers.assistant_close)
        return "".join(pieces)

    def _to_text(self, request: _Request) -> str:
        if self._format is not None:
            return self._format_text(self._format, request)
        markers = self._markers
        text = (
            markers.system_open
            + (self._system or "")
            + request.instruction
            + _tools_block(request.tools)
            + markers.system_close
            + "\n\n"
            + self._history_text(request)
            + "\n"
            + markers.human_open
            + "\n"
            + request.user
            + request.user_input
            + "\n"
            + markers.human_close
            + markers.assistant_open
            + "\n"
        )
        if request.label is not None:
            text += request.label + markers.assistant_close
        return text
