"""Model output for every format, well formed or not, and the invariants every parse path holds.

:func:`completion` writes one completion from a :class:`random.Random` (hypothesis drives it
through ``st.randoms()``; ``bench/fuzz.py`` through a seeded one): content, reasoning, valid
calls, malformed calls of every kind the format can get wrong (not JSON, not closed, not an
object, nested too deep, ``NaN``, ``1e400``, an empty name, an over-long integer, a control
character in a key, a duplicated key; in the Python-call formats an expression, a nested
call, a positional argument, a bare name, an empty list, a missing fence), marker spellings
in every text slot, and endings (the stop, nothing, text after the stop, another role's turn).

Every run of text the generator writes carries a *sentinel*, ``Q<n>Z``, written once.  The
oracle (:func:`problems`) parses the completion every way pawlette can (whole; fed one
character at a time and in random pieces, folded; through :class:`~pawlette.ChunkStream`;
through the server's pipeline, non-streamed and streamed; with live argument streaming) and
reports what breaks a contract:

- a returned call whose arguments strict JSON (no ``NaN``, nothing read as infinity) does
  not turn into a JSON object, or whose name is empty;
- a sentinel the input holds whole that the output (content, reasoning, names, call
  arguments, content parts) holds other than exactly once: lost or duplicated text;
- two paths that disagree (message, finish reason, warnings with their offsets);
- a finish reason other than ``length`` when the engine said ``length``; ``tool_calls``
  without a call, or a call without ``tool_calls``;
- a chunk after the finish chunk, call indexes that are not 0, 1, 2, ... in order;
- any exception in lenient mode, anything but :class:`~pawlette.ParseError` in strict mode.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pawlette
from pawlette.engine.call_arguments import MAX_NESTING
from pawlette.engine.fold import fold, merge_assistant
from pawlette.openai import message_to_openai
from pawlette.serve.pipeline import ChunkPipeline
from pawlette.serve.pipeline import Completion as ServedCompletion
from pawlette.serve.tool_choice import ToolPlan
from pawlette.types import Event

SENTINEL = re.compile(r"Q\d+Z")
_FILLER = ["", " ", "\n", "a", "北京", "{", "}", '"', "'", "(", ")", "[", "]", ",", "=", ":", "`"]


class Writer:
    """Numbers sentinels; draws filler, marker spellings and sentinels into text."""

    def __init__(self, rng: random.Random, fmt: pawlette.Format, *, ids: bool = False) -> None:
        self.rng = rng
        # ``ids``: only markers token ids can spell (those holding a special token); a marker
        # of plain text (ChatML's tools preamble) is text when it comes as ordinary ids.
        special = tuple(fmt.special_markers)
        self.markers = sorted(
            marker
            for marker in fmt.grammar.markers
            if not ids or any(token in marker for token in special)
        )
        self._next = 0

    def sentinel(self) -> str:
        self._next += 1
        return f"Q{self._next}Z"

    def text(self, *, hostile: bool = True, newline: bool = True) -> str:
        """A run of text holding one sentinel; sometimes a marker's spelling too."""
        rng = self.rng
        filler = [f for f in _FILLER if newline or "\n" not in f]
        parts = [rng.choice(filler) for _ in range(rng.randint(0, 3))]
        parts.insert(rng.randint(0, len(parts)), " " + self.sentinel() + " ")
        if hostile and rng.random() < 0.25:
            parts.insert(rng.randint(0, len(parts)), rng.choice(self.markers))
        return "".join(parts)

    def word(self) -> str:
        """A sentinel alone (a value no layout can touch)."""
        return self.sentinel()


# --------------------------------------------------------------------------- JSON calls


def _json_arguments(w: Writer) -> str:
    """Valid arguments holding a sentinel."""
    return json.dumps({"k": w.word(), "n": [1, {"x": None}], "t": "é"}, ensure_ascii=False)


def _bad_json_arguments(w: Writer) -> str:
    """Arguments that are no JSON object, each way, holding a sentinel."""
    s = w.word()
    deep = "[" * MAX_NESTING + "]" * MAX_NESTING
    return w.rng.choice(
        [
            f'{{"k": tru, "s": "{s}"}}',  # not JSON
            f'{{"k": "{s}"',  # not closed
            f'["{s}"]',  # not an object
            f'{{"k": "{s}", "d": {deep}}}',  # nested too deep
            f'{{"k": "{s}", "x": NaN}}',  # not JSON, though Python reads it
            f'{{"k": "{s}", "x": [-1e400]}}',  # beyond a double: Python reads infinity
            f'{{"k": "{s}", "x": {"1" * 4400}}}',  # an integer json.loads refuses
            f'{{"\n{s}": 1}}',  # a control character in a key
            f'{{"k": "{s}{w.rng.choice(w.markers)}x"}}',  # a marker inside a string
        ]
    )


def _pcml_call(w: Writer, valid: bool) -> str:
    opening = w.rng.choice(["<call>", "\n<call>"])
    if valid:
        body = f'{{"id": "c{w.rng.randint(0, 9)}", "name": "f", "arguments": {_json_arguments(w)}}}'
        return opening + body + "</call>"
    s = w.word()
    body = w.rng.choice(
        [
            f'{{"id": "c", "name": "f", "arguments": {_bad_json_arguments(w)}}}',
            f'{{"name": "f", "arguments": {{"k": "{s}"}}, "arguments": {{"j": 1}}}}',
            f'{{"arguments": {{"k": "{s}"}}}}',  # no name
            f'{{"name": "", "arguments": {{"k": "{s}"}}}}',  # an empty name is none
            f'{{"name": "f", "arguments": {{"k": "{s}"}}, "oops": 1}}',  # unknown key
            f'{{"\n": "{s}"}}',
            f'{{"name": "f", "arguments": {{"k": "{s}"}}',  # the object is not closed
        ]
    )
    closing = w.rng.choice(["</call>", "</call>", ""])  # sometimes never closed
    return opening + body + closing


def _pcml(w: Writer) -> str:
    rng = w.rng
    out = []
    if rng.random() < 0.3:
        out.append(f"<think>{w.text(hostile=False)}</think>\n")
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.4:
            out.append(w.text())
        else:
            out.append(_pcml_call(w, valid=kind < 0.7))
    out.append(
        rng.choice(
            [
                "<end>",
                "<end>",
                "",
                "<end>[/AST]\n",
                f"<end>{w.text(hostile=False)}",
                f"[/AST]\n\n[USR]{w.word()}[/USR]\n\n[AST]{w.word()}",
            ]
        )
    )
    return "".join(out)


def _omni(w: Writer) -> str:
    rng = w.rng
    out = []
    if rng.random() < 0.2:
        out.append(f"<|THINK_START|>{w.text(hostile=False, newline=False)}<|THINK_END|>\n")
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.7:
            out.append(w.text())
        else:
            arguments = _json_arguments(w) if rng.random() < 0.5 else _bad_json_arguments(w)
            out.append(f"<|ACTION_START|>sing<|ACTION_ARGS|>{arguments}<|ACTION_END|>")
    ending = rng.random()
    if ending < 0.5:
        arguments = _json_arguments(w) if rng.random() < 0.5 else _bad_json_arguments(w)
        name = rng.choice(["f", "f", ""])
        close = rng.choice(["<|FUNCTION_RETURN|>", "", "<|ASSISTANT_END|>"])
        out.append(f"<|FUNCTION_START|>{name}<|FUNCTION_ARGS|>{arguments}{close}")
    else:
        out.append(rng.choice(["<|ASSISTANT_END|>", "", f"<|ASSISTANT_END|>{w.word()}"]))
    if rng.random() < 0.2:
        out.append(f"\n\n<|USER_START|>{w.word()}<|USER_END|>")
    return "".join(out)


# --------------------------------------------------------------------------- Python calls


def _python_value(w: Writer, quote: str) -> str:
    s = w.word()
    return w.rng.choice([f"{quote}{s}{quote}", f"[1, {{{quote}{s}{quote}: None}}]"])


def _python_call(w: Writer, callee: str, valid: bool) -> str:
    rng = w.rng
    quote = rng.choice(["'", '"'])
    if valid:
        return f"{callee}(k={_python_value(w, quote)}, n=2.5, b=True)"
    s = f"{quote}{w.word()}{quote}"
    deep = "[" * MAX_NESTING + "]" * MAX_NESTING
    return rng.choice(
        [
            f"{callee}(k={s}, b=g(2))",  # a nested call
            f"{callee}(1, 2, k={s})",  # a positional argument
            f"{callee}(k={s}, n=1+2)",  # an expression
            f"{callee}(k={w.word()})",  # a bare name
            f"{callee}(k={s}, d={deep})",  # nested too deep
            f"{callee}(k={quote}{w.word()}",  # the string never closes
            f"{callee}(k={s}",  # the call never closes
            f"{callee}(k={quote}{w.word()}{rng.choice(w.markers)}{quote})",  # a marker inside
        ]
    )


def _breeze(w: Writer) -> str:
    rng = w.rng
    kind = rng.random()
    if kind < 0.35:
        body = rng.choice(["", "<|answer|>"]) + w.text()
        end = "<|eot_id|>"
    else:
        calls = [_python_call(w, "f", rng.random() < 0.6) for _ in range(rng.randint(0, 3))]
        separator = rng.choice([", ", ","])
        body = rng.choice(["<|use_tool|>", "<|python_tag|>"]) + "[" + separator.join(calls)
        body += rng.choice(["]", "]", ""])
        end = rng.choice(["<|eot_id|>", "<|eom_id|>"])
    ending = rng.choice(
        [end, end, "", f"{end}{w.word()}", f"{end}<|start_header_id|>user<|end_header_id|>x"]
    )
    return body + ending


def _chatglm3(w: Writer) -> str:
    rng = w.rng
    turns = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.4:
            turns.append("\n" + w.text(newline=False))
        elif kind < 0.85:
            call = _python_call(w, "tool_call", rng.random() < 0.6)
            opening = rng.choice(["```python\n", "```python\n", "```py\n", ""])
            closing = rng.choice(["\n```", "\n```", ""])
            turns.append(f"get_{rng.choice('ab')}\n{opening}{call}{closing}")
        else:
            closing = rng.choice(["\n```", ""])
            turns.append(f"interpreter\n```python\nprint({w.word()!r}){closing}")
    ending = rng.choice(
        ["<|observation|>", "<|user|>", "", f"<|user|>\n{w.word()}", f"<|observation|>{w.word()}"]
    )
    return "<|assistant|>".join(turns) + ending


# --------------------------------------------------------------------------- declared formats


def _declared_call(w: Writer, arguments_key: str, valid: bool) -> str:
    """A JSON call ``{"name": ..., ARGUMENTS_KEY: ...}`` (ChatML's Hermes calls, Llama 3's)."""
    if valid:
        return f'{{"name": "f", "{arguments_key}": {_json_arguments(w)}}}'
    s = w.word()
    return w.rng.choice(
        [
            f'{{"name": "f", "{arguments_key}": {_bad_json_arguments(w)}}}',
            f'{{"name": "f", "{arguments_key}": {{"k": "{s}"}}, "{arguments_key}": {{"j": 1}}}}',
            f'{{"{arguments_key}": {{"k": "{s}"}}}}',  # no name
            f'{{"name": "", "{arguments_key}": {{"k": "{s}"}}}}',  # an empty name is none
            f'{{"name": "f", "{arguments_key}": {{"k": "{s}"}}',  # the object is not closed
            f'{{"name": "f", "{arguments_key}": {{"k": "{s}"}}}} {w.word()}',  # text after it
        ]
    )


def _chatml(w: Writer) -> str:
    rng = w.rng
    out = []
    if rng.random() < 0.3:
        out.append(f"<think>\n{w.text(hostile=False)}\n</think>\n\n")
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.4:
            out.append(w.text())
        else:
            call = _declared_call(w, "arguments", valid=kind < 0.7)
            opening = rng.choice(["<tool_call>\n", "\n<tool_call>\n"])
            closing = rng.choice(["\n</tool_call>", "\n</tool_call>", ""])  # sometimes open
            out.append(opening + call + closing)
    out.append(
        rng.choice(
            [
                "<|im_end|>",
                "<|im_end|>",
                "",
                "<|im_end|>\n",
                f"<|im_end|>{w.text(hostile=False)}",
                f"<|im_end|>\n<|im_start|>user\n{w.word()}<|im_end|>",
            ]
        )
    )
    return "".join(out)


def _llama3(w: Writer) -> str:
    rng = w.rng
    kind = rng.random()
    if kind < 0.35:
        body = w.text()
    elif kind < 0.7:
        body = rng.choice(["", " ", "\n"]) + _declared_call(w, "parameters", rng.random() < 0.6)
    else:
        body = w.text() + "<|python_tag|>" + _declared_call(w, "parameters", rng.random() < 0.6)
    end = rng.choice(["<|eot_id|>", "<|eom_id|>"])
    ending = rng.choice(
        [
            end,
            end,
            "",
            f"{end}{w.word()}",
            f"{end}<|start_header_id|>user<|end_header_id|>\n\n{w.word()}",
        ]
    )
    return body + ending


def _named_call(w: Writer, open_: str, separator: str, close: str, valid: bool) -> str:
    """A call with its name outside the arguments (Mistral's, DeepSeek's)."""
    name = "f" if valid or w.rng.random() < 0.5 else w.rng.choice(["", " "])
    arguments = _json_arguments(w) if valid else _bad_json_arguments(w)
    return open_ + name + separator + arguments + close


def _mistral(w: Writer) -> str:
    rng = w.rng
    out = [w.text()] if rng.random() < 0.5 else []
    for _ in range(rng.randint(0, 3)):
        call_id = rng.choice(["", "[CALL_ID]a1b2c3d4e"])
        out.append(_named_call(w, "[TOOL_CALLS]", call_id + "[ARGS]", "", rng.random() < 0.6))
    out.append(rng.choice(["</s>", "</s>", "", f"</s>{w.word()}", f"</s>[INST]{w.word()}[/INST]"]))
    return "".join(out)


def _deepseek(w: Writer) -> str:
    rng = w.rng
    out = [w.text()] if rng.random() < 0.5 else []
    if rng.random() < 0.5:
        calls = [
            _named_call(
                w,
                "<｜tool▁call▁begin｜>",
                "<｜tool▁sep｜>",
                "<｜tool▁call▁end｜>",
                rng.random() < 0.6,
            )
            for _ in range(rng.randint(1, 3))
        ]
        closing = rng.choice(["<｜tool▁calls▁end｜>", "<｜tool▁calls▁end｜>", ""])
        out.append("<｜tool▁calls▁begin｜>" + "".join(calls) + closing)
    end = "<｜end▁of▁sentence｜>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}", f"{end}<｜User｜>{w.word()}"]))
    return "".join(out)


def _tag_call(w: Writer, nl: str, valid: bool) -> str:
    """A GLM-style call: ``<tool_call>NAME`` and an ``<arg_key>``/``<arg_value>`` pair per
    argument (``nl``: GLM-4.6's newlines, or none as GLM-4.7 writes them)."""
    rng = w.rng
    name = "f" if valid or rng.random() < 0.5 else rng.choice(["", " "])
    keys = rng.sample(["k", "city", "n"], rng.randint(0, 3))
    pairs = []
    for key in keys:
        value = rng.choice([w.text(hostile=False, newline=False), "3", '{"a": 1}', "[1, 2]"])
        pairs.append(f"<arg_key>{key}</arg_key>{nl}<arg_value>{value}</arg_value>{nl}")
    if not valid and pairs:
        broken = rng.choice(["unclosed value", "twice", "text between"])
        if broken == "unclosed value":
            pairs[-1] = pairs[-1].replace("</arg_value>", "")
        elif broken == "twice":  # a key given twice (each value its own sentinel)
            again = f"<arg_key>{keys[0]}</arg_key>{nl}<arg_value>{w.word()}</arg_value>{nl}"
            pairs.append(again)
        else:
            pairs.insert(0, w.word())
    closing = rng.choice(["</tool_call>", "</tool_call>", ""]) if not valid else "</tool_call>"
    return f"<tool_call>{name}{nl}" + "".join(pairs) + closing


def _glm(w: Writer) -> str:
    rng = w.rng
    nl = rng.choice(["\n", ""])
    out = []
    if rng.random() < 0.4:
        out.append(f"{nl}<think>{w.text(hostile=False)}</think>{nl}")
    if rng.random() < 0.5:
        out.append(w.text())
    for _ in range(rng.randint(0, 3)):
        out.append(nl + _tag_call(w, nl, rng.random() < 0.6))
    stop = rng.choice(["<|user|>", "<|observation|>", "<|endoftext|>"])
    out.append(rng.choice([stop, stop, "", f"{stop}{w.word()}", f"<|user|>\n{w.word()}"]))
    return "".join(out)


def _spark(w: Writer) -> str:
    """Spark2.5: maybe a reasoning block, text, then calls in GLM-4.7's compact layout (some
    with GLM-4.6's newlines, some malformed), ended by ``<｜end▁of▁sentence｜>``."""
    rng = w.rng
    nl = rng.choice(["", "", "\n"])
    out = []
    if rng.random() < 0.4:
        out.append(f"<think>{w.text(hostile=False)}</think>")
    if rng.random() < 0.5:
        out.append(w.text())
    for _ in range(rng.randint(0, 3)):
        out.append(nl + _tag_call(w, nl, rng.random() < 0.6))
    end = "<｜end▁of▁sentence｜>"
    out.append(
        rng.choice([end, end, "", f"{end}{w.word()}", f"{end}<｜start▁of▁sentence｜><|User|>"])
    )
    return "".join(out)


def _laguna(w: Writer) -> str:
    """Laguna XS after its ``<assistant>\n</think>`` prompt: text, then calls in its layout
    with newlines (some compact, some malformed), ended by ``\n</assistant>``."""
    rng = w.rng
    nl = rng.choice(["\n", "\n", ""])
    out = []
    if rng.random() < 0.3:
        out.append(f"<think>\n{w.text(hostile=False)}\n</think>")
    if rng.random() < 0.5:
        out.append("\n" + w.text())
    for _ in range(rng.randint(0, 3)):
        out.append(nl + _tag_call(w, nl, rng.random() < 0.6))
    end = "\n</assistant>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}", f"{end}\n<user>\n{w.word()}"]))
    return "".join(out)


def _bailing(w: Writer) -> str:
    rng = w.rng
    out = []
    if rng.random() < 0.4:
        out.append(f"\n<think>{w.text(hostile=False)}</think>")
    if rng.random() < 0.5:
        out.append(w.text())
    for number in range(rng.randint(0, 3)):
        out.append(("\n" if out or number else "") + _tag_call(w, "\n", rng.random() < 0.6))
    end = "<|role_end|>"
    out.append(
        rng.choice([end, end, "", f"{end}{w.word()}", f"{end}<role>HUMAN</role>{w.word()}{end}"])
    )
    return "".join(out)


def _dsml_call(w: Writer, valid: bool) -> str:
    """A DeepSeek V3.2 call: ``invoke`` and a ``parameter`` per argument, each typed by its
    ``string`` attribute (text, or JSON), the tags' newlines sometimes left out."""
    rng = w.rng
    nl = rng.choice(["\n", "\n", ""])
    name = "f" if valid or rng.random() < 0.5 else rng.choice(["", " "])
    params = []
    for key in rng.sample(["k", "city", "n"], rng.randint(0, 3)):
        kind, value = rng.choice(
            [
                ("true", w.text(hostile=False, newline=False)),
                ("false", "3"),
                ("false", '{"a": [1, 2]}'),
                ("false", "true"),
            ]
        )
        params.append(
            f'<｜DSML｜parameter name="{key}" string="{kind}">{value}</｜DSML｜parameter>{nl}'
        )
    if not valid and params:
        broken = rng.choice(["unclosed value", "no kind"])
        if broken == "unclosed value":
            params[-1] = params[-1].replace("</｜DSML｜parameter>", "")
        else:
            params[0] = params[0].replace(' string="true">', ">").replace(' string="false">', ">")
    closing = rng.choice(["</｜DSML｜invoke>", ""]) if not valid else "</｜DSML｜invoke>"
    return f'<｜DSML｜invoke name="{name}">{nl}' + "".join(params) + closing + nl


def _deepseek_dsml(w: Writer) -> str:
    rng = w.rng
    out = []
    if rng.random() < 0.3:  # after the thinking prompt: reasoning, then its close
        out.append(f"{w.text(hostile=False)}</think>")
    if rng.random() < 0.5:
        out.append(w.text())
    if rng.random() < 0.5:
        calls = [_dsml_call(w, rng.random() < 0.6) for _ in range(rng.randint(1, 3))]
        closing = rng.choice(["</｜DSML｜function_calls>", "</｜DSML｜function_calls>", ""])
        out.append("\n\n<｜DSML｜function_calls>\n" + "".join(calls) + closing)
    end = "<｜end▁of▁sentence｜>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}", f"{end}<｜User｜>{w.word()}"]))
    return "".join(out)


def _harmony(w: Writer) -> str:
    """After ``<|start|>assistant``: maybe an analysis or a preamble, then an answer or a
    call (its recipient in the role header or in the channel's, on commentary or analysis)."""
    rng = w.rng
    out = []
    if rng.random() < 0.5:
        channel = rng.choice(["analysis", "analysis", "commentary"])
        follow = rng.choice(["<|end|><|start|>assistant", "<|start|>assistant"])
        out.append(f"<|channel|>{channel}<|message|>{w.text()}{follow}")
    if rng.random() < 0.5:
        out.append("<|channel|>final<|message|>" + w.text())
        end = "<|return|>"
        out.append(rng.choice([end, end, "", f"{end}{w.word()}", f"<|end|>{w.word()}"]))
        return "".join(out)
    valid = rng.random() < 0.6
    name = "f" if valid or rng.random() < 0.5 else ""
    out.append(
        rng.choice(
            [
                f" to=functions.{name}<|channel|>commentary json<|message|>",
                f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>",
                f"<|channel|>analysis to=functions.{name}<|message|>",
            ]
        )
    )
    out.append(_json_arguments(w) if valid else _bad_json_arguments(w))
    end = "<|call|>"
    ending = [end, end, "", f"{end}{w.word()}", f"{end}<|start|>user<|message|>{w.word()}"]
    out.append(rng.choice(ending))
    return "".join(out)


def _kimi(w: Writer) -> str:
    """Kimi K2's calls: an id holding the name (``functions.f:0``, also without the prefix),
    in a section or (as models also write them) without one, the call's close fence
    sometimes left out."""
    rng = w.rng
    out = [w.text()] if rng.random() < 0.5 else []
    if rng.random() < 0.5:
        calls = []
        for number in range(rng.randint(1, 3)):
            prefix = rng.choice(["functions.", "functions.", ""])
            close = rng.choice(["<|tool_call_end|>", "<|tool_call_end|>", ""])
            separator = f":{number}<|tool_call_argument_begin|>"
            open_ = "<|tool_call_begin|>" + prefix
            calls.append(_named_call(w, open_, separator, close, rng.random() < 0.6))
        if rng.random() < 0.8:
            closing = rng.choice(["<|tool_calls_section_end|>", "<|tool_calls_section_end|>", ""])
            out.append("<|tool_calls_section_begin|>" + "".join(calls) + closing)
        else:
            out.append("".join(calls))
    end = "<|im_end|>"
    endings = [end, end, "", f"{end}{w.word()}", f"{end}<|im_user|>user<|im_middle|>{w.word()}"]
    out.append(rng.choice(endings))
    return "".join(out)


def _gemma(w: Writer) -> str:
    """Gemma 2: text only (no calls), ended by <end_of_turn> or cut off."""
    ending = w.rng.choice(
        ["<end_of_turn>", "<end_of_turn>", "", f"<end_of_turn>\n<start_of_turn>user\n{w.word()}"]
    )
    return w.text() + ending


def _gemma4(w: Writer) -> str:
    """Gemma 4's calls: ``<|tool_call>call:f{k:v}<tool_call|>`` (members in its value syntax,
    or a bad body), an optional thought block first, ended by <turn|>, <|tool_response>, or
    cut off."""
    rng = w.rng
    quote = '<|"|>'
    out = ["<|channel>thought\n" + w.text() + "\n<channel|>"] if rng.random() < 0.2 else []
    if rng.random() < 0.5:
        out.append(w.text())
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.6:
            body = rng.choice(["", f"a:{quote}{w.word()}{quote}", "n:1,b:true", "x:[1,2],y:None"])
            out.append("<|tool_call>call:f{" + body + "}<tool_call|>")
        else:
            out.append("<|tool_call>" + rng.choice(["call:{}", "f{}", "call:f{a:", "call:f{:1}"]))
            out.append(rng.choice(["<tool_call|>", ""]))
    out.append(rng.choice(["<turn|>", "<|tool_response>", "", f"<turn|>{w.word()}"]))
    return "".join(out)


def _phi3(w: Writer) -> str:
    """Phi-3.5: text only (no calls), ended by <|end|> or <|endoftext|>, or cut off."""
    ending = w.rng.choice(
        ["<|end|>", "<|endoftext|>", "", f"<|end|>\n<|user|>\n{w.word()}", "<|end|>\n<|endoftext|>"]
    )
    return w.text() + ending


def _hermes_calls(w: Writer, end: str, *, open_newline: bool) -> str:
    """Hermes-style ``<tool_call>`` JSON calls after text (Granite 4, Hermes 2 Pro), then
    ``end`` or a cut."""
    rng = w.rng
    out = []
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.4:
            out.append(w.text())
        else:
            call = _declared_call(w, "arguments", valid=kind < 0.7)
            opening = rng.choice(["<tool_call>\n", "\n<tool_call>\n", "<tool_call>"])
            if open_newline:
                opening = rng.choice([opening, "\n<tool_call>\n"])
            closing = rng.choice(["\n</tool_call>", "</tool_call>", ""])  # sometimes open
            out.append(opening + call + closing)
    out.append(rng.choice([end, end, "", f"{end}\n", f"{end}{w.text(hostile=False)}"]))
    return "".join(out)


def _granite(w: Writer) -> str:
    return _hermes_calls(w, "<|end_of_text|>", open_newline=False)


def _hermes(w: Writer) -> str:
    return _hermes_calls(w, "<|im_end|>", open_newline=True)


def _smollm3(w: Writer) -> str:
    rng = w.rng
    out = []
    if rng.random() < 0.4:
        closing = rng.choice(["\n</think>\n", "</think>", ""])  # sometimes cut inside
        out.append(f"<think>\n{w.text(hostile=False)}{closing}")
    out.append(w.text())
    out.append(rng.choice(["<|im_end|>", "<|im_end|>", "", f"<|im_end|>{w.word()}"]))
    return "".join(out)


def _functionary(w: Writer) -> str:
    """Functionary v3.1: text, then ``<function=NAME>{json}</function>`` calls (some not
    closed, some malformed), ended by <|eot_id|> or <|eom_id|>, or cut off."""
    rng = w.rng
    out = [w.text()] if rng.random() < 0.5 else []
    for _ in range(rng.randint(0, 3)):
        close = rng.choice(["</function>", "</function>", ""])
        out.append(_named_call(w, "<function=", ">", close, rng.random() < 0.6))
    ending = ["<|eom_id|>", "<|eot_id|>", "", f"<|eot_id|>{w.word()}"]
    out.append(rng.choice(ending))
    return "".join(out)


def _firefunction(w: Writer) -> str:
    """Firefunction v2: text, then `` functools[`` and a JSON list of calls (some invalid,
    some cut off), ended by <|eot_id|>, or cut off, or followed by more."""
    rng = w.rng
    out = [w.text()] if rng.random() < 0.5 else []
    if rng.random() < 0.6:
        calls = [
            _declared_call(w, "arguments", rng.random() < 0.7) for _ in range(rng.randint(1, 3))
        ]
        closing = rng.choice(["]", "]", ""])
        out.append(rng.choice([" functools[", "functools["]) + ", ".join(calls) + closing)
    ending = ["<|eot_id|>", "<|eot_id|>", "", f"<|eot_id|>{w.word()}"]
    out.append(rng.choice(ending))
    return "".join(out)


def _solar(w: Writer) -> str:
    """Solar Open: an optional ``<|think|>`` message, then ``<|content|>`` text or
    ``<|tool_calls|>`` + id-first calls (some without an id, some malformed) + ``<|calls|>``,
    ended or cut off."""
    rng = w.rng
    out = []
    if rng.random() < 0.4:
        closing = rng.choice(["<|end|><|begin|>assistant", "<|end|><|begin|>assistant", ""])
        out.append("<|think|>" + w.text(hostile=False) + closing)
    if rng.random() < 0.5:
        calls = []
        for _ in range(rng.randint(1, 3)):
            call_id = rng.choice(["a1b2c3d4e5", "x9", ""])
            close = rng.choice(["<|tool_call:end|>", "<|tool_call:end|>", ""])
            open_ = "<|tool_call:begin|>" + call_id + "<|tool_call:name|>"
            calls.append(_named_call(w, open_, "<|tool_call:args|>", close, rng.random() < 0.6))
        out.append("<|tool_calls|>" + "".join(calls))
        out.append(rng.choice(["<|calls|>", "<|calls|>", "", f"<|calls|>{w.word()}"]))
    else:
        out.append("<|content|>" + w.text())
        out.append(rng.choice(["<|end|>", "<|end|>", "", f"<|end|>{w.word()}"]))
    return "".join(out)


def _functionary_v3_2(w: Writer) -> str:
    """Functionary v3.2, after its prompt's ``>>>``: segments of a recipient line and a body
    (``all`` + text, a name + JSON arguments, some malformed, a recipient cut before its
    newline, text without a recipient), ``>>>`` between them, ended by <|eot_id|> or cut."""
    rng = w.rng
    segments = []
    if rng.random() < 0.5:
        segments.append("all\n" + w.text())
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.2:
            segments.append("all\n" + w.text())
        segments.append(_named_call(w, "", "\n", "", rng.random() < 0.6))
    if not segments or rng.random() < 0.1:
        segments.append(rng.choice([w.text(), "al", "f"]))
    ending = ["<|eot_id|>", "<|eot_id|>", "", f"<|eot_id|>{w.word()}"]
    return ">>>".join(segments) + rng.choice(ending)


def _cohere_call(w: Writer, position: int, valid: bool) -> str:
    """A Command R7B action item: ``{"tool_call_id": "K", "tool_name": N, "parameters": A}``."""
    call_id = w.rng.choice([str(position), str(position), "x9"])
    if valid:
        return (
            f'{{"tool_call_id": "{call_id}", "tool_name": "f", "parameters": {_json_arguments(w)}}}'
        )
    s = w.word()
    bad = _bad_json_arguments(w)
    return w.rng.choice(
        [
            f'{{"tool_call_id": "{call_id}", "tool_name": "f", "parameters": {bad}}}',
            f'{{"tool_call_id": "{call_id}", "parameters": {{"k": "{s}"}}}}',  # no name
            f'{{"tool_call_id": "{call_id}", "tool_name": "", "parameters": {{"k": "{s}"}}}}',
            f'{{"tool_call_id": "{call_id}", "tool_name": "f", "parameters": {{"k": "{s}"}}',
            f'{{"tool_name": "f", "parameters": {{"k": "{s}"}}}}',  # no id
        ]
    )


def _cohere(w: Writer) -> str:
    """Command R7B, after its prompt's empty reasoning block: maybe a reasoning block, then
    a response or an action list of calls (some invalid, some cut off), ended by
    <|END_OF_TURN_TOKEN|>, or cut off, or followed by more."""
    rng = w.rng
    out = []
    if rng.random() < 0.3:
        closing = rng.choice(["<|END_THINKING|>", "<|END_THINKING|>", ""])
        out.append("<|START_THINKING|>" + w.text(hostile=False) + closing)
    if rng.random() < 0.5:
        calls = [_cohere_call(w, i, rng.random() < 0.7) for i in range(rng.randint(1, 3))]
        closing = rng.choice(["\n]<|END_ACTION|>", "\n]<|END_ACTION|>", "\n]", ""])
        out.append("<|START_ACTION|>[\n    " + ",\n    ".join(calls) + closing)
    else:
        closing = rng.choice(["<|END_RESPONSE|>", "<|END_RESPONSE|>", ""])
        out.append("<|START_RESPONSE|>" + w.text() + closing)
    end = "<|END_OF_TURN_TOKEN|>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _cohere_plus(w: Writer) -> str:
    """Command R+: text, or ``Action:`` and a JSON block of ``tool_name``/``parameters``
    objects (some invalid, some the ``directly-answer`` action, the block's close after the
    array or on a line of its own, or cut off), ended by <|END_OF_TURN_TOKEN|>, or cut off,
    or followed by more."""
    rng = w.rng
    out = [w.text()] if rng.random() < 0.6 else []
    if rng.random() < 0.6:
        items = []
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            if roll < 0.6:
                items.append(f'{{"tool_name": "f", "parameters": {_json_arguments(w)}}}')
            elif roll < 0.75:
                items.append('{"tool_name": "directly-answer", "parameters": {}}')
            else:
                bad = _bad_json_arguments(w)
                items.append(
                    rng.choice(
                        [f'{{"tool_name": "f", "parameters": {bad}}}', f'{{"parameters": {bad}}}']
                    )
                )
        opening = rng.choice(["\nAction:\n```json\n", "Action:\n```json\n", "Action: ```json\n"])
        closing = rng.choice(["\n]```\n", "]\n```", "\n]", ""])
        out.append(opening + "[\n    " + ",\n    ".join(items) + closing)
    end = "<|END_OF_TURN_TOKEN|>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _minimax(w: Writer) -> str:
    """MiniMax M1: maybe a reasoning block, text, then JSON lines of calls in
    ``<tool_calls>`` (some malformed, some cut off), ended by ``<end_of_sentence>``."""
    rng = w.rng
    out = []
    if rng.random() < 0.3:
        closing = rng.choice(["</think>\n", "</think>", ""])
        out.append(f"<think>\n{w.text(hostile=False)}{closing}")
    if rng.random() < 0.5:
        out.append(w.text())
    if rng.random() < 0.6:
        calls = [
            _declared_call(w, "arguments", valid=rng.random() < 0.7)
            for _ in range(rng.randint(1, 3))
        ]
        closing = rng.choice(["\n</tool_calls>", "\n</tool_calls>", "</tool_calls>", ""])
        out.append("<tool_calls>\n" + "\n".join(calls) + closing)
    end = "<end_of_sentence>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _gigachat(w: Writer) -> str:
    """GigaChat 3: text, then maybe a ``function call`` turn holding one JSON call
    (sometimes malformed), ended by ``<|message_sep|>`` (sometimes missing, sometimes ``</s>``
    in its place, as vLLM's cases allow)."""
    rng = w.rng
    out = []
    if rng.random() < 0.6:
        out.append(w.text())
    if rng.random() < 0.6:
        call = _declared_call(w, "arguments", valid=rng.random() < 0.7)
        out.append("<|message_sep|>\n\nfunction call<|role_sep|>\n" + call)
    end = "<|message_sep|>"
    out.append(rng.choice([end, end, "", "</s>", f"{end}{w.word()}"]))
    return "".join(out)


def _apriel(w: Writer) -> str:
    """Apriel 1.5: text (maybe with its ``[BEGIN FINAL RESPONSE]`` markers), then one JSON
    list of calls in ``<tool_calls>`` (some malformed, some cut off), ended by ``<|end|>``."""
    rng = w.rng
    out = []
    if rng.random() < 0.3:
        out.append(f"{w.text(hostile=False)}\n[BEGIN FINAL RESPONSE]\n")
    if rng.random() < 0.5:
        out.append(w.text())
    if rng.random() < 0.6:
        out.append(_apriel_calls(w))
    end = "\n<|end|>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _apriel_calls(w: Writer) -> str:
    """Apriel's one JSON list of calls in ``<tool_calls>`` (some malformed, some cut off)."""
    rng = w.rng
    calls = [
        _declared_call(w, "arguments", valid=rng.random() < 0.7) for _ in range(rng.randint(1, 3))
    ]
    closing = rng.choice(["]</tool_calls>", "]</tool_calls>", "]", ""])
    return rng.choice(["\n", ""]) + "<tool_calls>[" + ", ".join(calls) + closing


def _apriel16(w: Writer) -> str:
    """Apriel 1.6, after its prompt's ``Here are my reasoning steps:``: reasoning, then
    ``[BEGIN FINAL RESPONSE]`` (with or without its newlines, or never: cut while thinking),
    text, then one JSON list of calls in ``<tool_calls>`` (some malformed, some cut off),
    ended by ``<|end|>``."""
    rng = w.rng
    out = [w.text(hostile=False)]
    if rng.random() < 0.8:
        out.append(rng.choice(["\n[BEGIN FINAL RESPONSE]\n", "[BEGIN FINAL RESPONSE]"]))
        if rng.random() < 0.6:
            out.append(w.text())
        if rng.random() < 0.6:
            out.append(_apriel_calls(w))
    end = "\n<|end|>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _nemotron_v2(w: Writer) -> str:
    """Nemotron Nano 2, after its prompt's open ``<think>``: reasoning up to ``</think>``
    (or cut inside), text, then a JSON list of calls in ``<TOOLCALL>`` (some malformed,
    some cut off), ended by ``<SPECIAL_12>``."""
    rng = w.rng
    out = []
    if rng.random() < 0.7:
        out.append(w.text(hostile=False) + rng.choice(["\n</think>\n\n", "</think>"]))
    if rng.random() < 0.5:
        out.append(w.text())
    if rng.random() < 0.6:
        calls = [
            _declared_call(w, "arguments", valid=rng.random() < 0.7)
            for _ in range(rng.randint(1, 3))
        ]
        closing = rng.choice(["]</TOOLCALL>", "]</TOOLCALL>", "]", ""])
        out.append("<TOOLCALL>[" + ", ".join(calls) + closing)
    end = "<SPECIAL_12>"
    out.append(rng.choice([f"\n{end}", end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _lfm2(w: Writer) -> str:
    """LFM2: maybe a reasoning block, text, then one or two Python call lists between
    ``<|tool_call_start|>`` and ``<|tool_call_end|>`` (some malformed, some cut off), ended
    by ``<|im_end|>``."""
    rng = w.rng
    out = []
    if rng.random() < 0.3:
        closing = rng.choice(["</think>", "</think>", ""])
        out.append(f"<think>{w.text(hostile=False)}{closing}")
    if rng.random() < 0.5:
        out.append(w.text())
    if rng.random() < 0.6:
        for _ in range(rng.choice([1, 1, 2])):
            calls = [_python_call(w, "f", rng.random() < 0.7) for _ in range(rng.randint(0, 3))]
            body = "<|tool_call_start|>[" + rng.choice([", ", ","]).join(calls)
            out.append(body + rng.choice(["]<|tool_call_end|>", "]<|tool_call_end|>", "]", ""]))
    end = "<|im_end|>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}", f"{end}<|im_start|>user\nx"]))
    return "".join(out)


def _bielik(w: Writer) -> str:
    """Bielik 11B v3: maybe a reasoning block (some cut off), then text and Hermes-style
    ``<tool_call>`` JSON calls, ended by ``<|im_end|>`` or a cut."""
    rng = w.rng
    head = ""
    if rng.random() < 0.3:
        closing = rng.choice(["\n</think>\n", "</think>", "\n</think>\n\n"])
        head = f"<think>\n{w.text(hostile=False)}{closing}"
    return head + _hermes_calls(w, "<|im_end|>", open_newline=True)


def _invoke_call(w: Writer, nl: str, valid: bool) -> str:
    """A MiniMax-M2 call: ``<invoke name="NAME">`` and a ``<parameter name="KEY">`` tag per
    argument (``nl``: the template's newlines between the tags, or none as vLLM's cases)."""
    rng = w.rng
    name = "f" if valid or rng.random() < 0.5 else rng.choice(["", "g", "f' x"])
    keys = rng.sample(["k", "city", "n"], rng.randint(0, 3))
    tags = []
    for key in keys:
        value = rng.choice([w.text(hostile=False, newline=False), "3", '{"a": 1}', "[1, 2]"])
        tags.append(f'<parameter name="{key}">{value}</parameter>{nl}')
    if not valid and tags:
        broken = rng.choice(["unclosed value", "twice", "text between"])
        if broken == "unclosed value":
            tags[-1] = tags[-1].replace("</parameter>", "")
        elif broken == "twice":
            tags.append(f'<parameter name="{keys[0]}">{w.word()}</parameter>{nl}')
        else:
            tags.insert(0, w.word())
    closing = rng.choice(["</invoke>", "</invoke>", ""]) if not valid else "</invoke>"
    return f'<invoke name="{name}">{nl}' + "".join(tags) + closing + nl


def _minimax_m2(w: Writer) -> str:
    """MiniMax-M2, after the prompt's ``<think>\\n``: maybe reasoning and its close, text,
    then ``<invoke>`` calls in ``<minimax:tool_call>`` (some malformed, some cut off), ended by
    ``[e~[``."""
    rng = w.rng
    nl = rng.choice(["\n", ""])
    out = []
    if rng.random() < 0.6:
        closing = rng.choice(["\n</think>\n\n", "</think>", "</think>\n", ""])
        out.append(w.text(hostile=False) + closing)
    else:
        out.append(rng.choice(["\n</think>\n\n", "</think>"]))
    if rng.random() < 0.5:
        out.append(w.text())
    if rng.random() < 0.6:
        calls = [_invoke_call(w, nl, rng.random() < 0.7) for _ in range(rng.randint(1, 3))]
        closing = rng.choice(["</minimax:tool_call>", "</minimax:tool_call>", ""])
        out.append(f"{nl}<minimax:tool_call>{nl}" + "".join(calls) + closing)
    end = "[e~["
    out.append(rng.choice([end, end, "", f"{end}{w.word()}", f"{end}\n]~b]user\n{w.word()}"]))
    return "".join(out)


def _function_call(w: Writer, nl: str, valid: bool) -> str:
    """A ``<function=NAME>`` call with a ``<parameter=KEY>VALUE</parameter>`` per argument
    (Seed-OSS's; ``nl``: the template's newlines, or none), some malformed."""
    rng = w.rng
    name = "f" if valid or rng.random() < 0.5 else rng.choice(["", " "])
    keys = rng.sample(["k", "city", "n"], rng.randint(0, 3))
    pairs = []
    for key in keys:
        value = rng.choice(
            [w.text(hostile=False, newline=False), "3", '{"a": 1}', "[1, 2]", "{'a': True}"]
        )
        pairs.append(f"<parameter={key}>{value}</parameter>{nl}")
    if not valid and pairs:
        broken = rng.choice(["unclosed value", "twice", "text between"])
        if broken == "unclosed value":
            pairs[-1] = pairs[-1].replace("</parameter>", "")
        elif broken == "twice":  # a key given twice (each value its own sentinel)
            pairs.append(f"<parameter={keys[0]}>{w.word()}</parameter>{nl}")
        else:
            pairs.insert(0, w.word())
    closing = rng.choice(["</function>", "</function>", ""]) if not valid else "</function>"
    return f"<function={name}>{nl}" + "".join(pairs) + closing


def _seed_oss(w: Writer) -> str:
    """Seed-OSS: maybe a ``<seed:think>`` block, text, then ``<function=...>`` calls each in
    ``<seed:tool_call>`` (some malformed, some cut off), ended by ``<seed:eos>``."""
    rng = w.rng
    nl = rng.choice(["\n", ""])
    out = []
    if rng.random() < 0.4:
        closing = rng.choice(["</seed:think>\n", "</seed:think>", ""])
        out.append(f"<seed:think>{w.text(hostile=False)}{closing}")
    if rng.random() < 0.5:
        out.append(w.text())
    for _ in range(rng.randint(0, 3)):
        call = _function_call(w, nl, rng.random() < 0.6)
        closing = rng.choice([f"{nl}</seed:tool_call>", "</seed:tool_call>", ""])
        out.append(f"{nl}<seed:tool_call>{nl}{call}{closing}")
    end = "<seed:eos>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _reka(w: Writer) -> str:
    """Reka Edge: the space after the ``assistant:`` prompt (or none), then text and
    Hermes-style ``<tool_call>`` JSON calls, ended by ``\n\n<sep>``, ``<sep>`` or a cut."""
    space = w.rng.choice([" ", " ", ""])
    return space + _hermes_calls(w, w.rng.choice(["\n\n<sep>", "<sep>"]), open_newline=True)


def _apertus_call(w: Writer, valid: bool) -> str:
    """An Apertus call ``{"NAME": ARGUMENTS}`` (some malformed)."""
    if valid:
        return f'{{"f": {_json_arguments(w)}}}'
    s = w.word()
    return w.rng.choice(
        [
            f'{{"f": {_bad_json_arguments(w)}}}',
            f'{{"f": {{"k": "{s}"}}, "g": {{"j": 1}}}}',  # two keys: no call
            f'{{"f": {{"k": "{s}"}}, "f": {{"j": 1}}}}',  # a key written twice
            f'{{"": {{"k": "{s}"}}}}',  # an empty name is none
            f'{{"f": "{s}"}}',  # arguments that are no object
            f'{{"f": {{"k": "{s}"}}',  # the object is not closed
        ]
    )


def _apertus(w: Writer) -> str:
    """Apertus: maybe an ``<|inner_prefix|>`` reasoning block (or cut inside), text, then
    a JSON list of ``{NAME: ARGUMENTS}`` calls after ``<|tools_prefix|>`` (some malformed,
    some cut off), ended by ``<|tools_suffix|>``; or text ended by ``<|assistant_end|>``."""
    rng = w.rng
    out = []
    if rng.random() < 0.3:
        closing = rng.choice(["<|inner_suffix|>", "<|inner_suffix|>", ""])
        out.append(f"<|inner_prefix|>{w.text(hostile=False)}{closing}")
    if rng.random() < 0.5:
        out.append(w.text())
    if rng.random() < 0.6:
        calls = [_apertus_call(w, valid=rng.random() < 0.7) for _ in range(rng.randint(1, 3))]
        closing = rng.choice(["]<|tools_suffix|>", "]<|tools_suffix|>", "]", ""])
        out.append("<|tools_prefix|>[" + ", ".join(calls) + closing)
        return "".join(out)
    end = "<|assistant_end|>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _ifm(w: Writer) -> str:
    """IFM-K2-Horizon after its ``<|ifm|im_start|>assistant\n<ifm|think>\n`` prompt: maybe
    reasoning, ``</ifm|think>`` (sometimes missing), text, then maybe an
    ``<ifm|tool_calls>`` block of GLM-style calls with the ``ifm|`` tags (some malformed),
    ended by ``<|ifm|im_end|>``."""
    rng = w.rng
    out = []
    if rng.random() < 0.5:
        out.append(w.text(hostile=False))
    out.append(rng.choice(["</ifm|think>", "</ifm|think>", "</ifm|think>", ""]))
    if rng.random() < 0.5:
        out.append(w.text())
    if rng.random() < 0.5:
        calls = []
        for _ in range(rng.randint(1, 3)):
            call = _tag_call(w, "\n", rng.random() < 0.7)
            for tag in ("tool_call", "arg_key", "arg_value"):
                call = call.replace(f"<{tag}>", f"<ifm|{tag}>").replace(
                    f"</{tag}>", f"</ifm|{tag}>"
                )
            calls.append("\n" + call)
        closing = rng.choice(["\n</ifm|tool_calls>", "\n</ifm|tool_calls>", ""])
        out.append("<ifm|tool_calls>" + "".join(calls) + closing)
    end = "<|ifm|im_end|>"
    out.append(
        rng.choice([end, end, "", f"{end}{w.word()}", f"{end}<|ifm|im_start|>user\n{w.word()}"])
    )
    return "".join(out)


def _muse(w: Writer) -> str:
    """Muse Glimmer, after the prompt's ``<|start|>assistant``: maybe a reasoning message
    (`` to=self<|message|>``) and its ``<|eom|><|start|>assistant``, then an answer
    (`` to=user<|message|>``) or calls, each `` to=NAME<|message|>`` and an ATEM block
    (some malformed, some cut off), ended by ``<|eot|>``."""
    rng = w.rng
    next_message = "<|eom|><|start|>assistant"
    out = []
    if rng.random() < 0.4:
        out.append(" to=self<|message|>" + w.text(hostile=False))
        out.append(rng.choice([next_message, next_message, ""]))
    if rng.random() < 0.5:
        out.append(" to=user<|message|>" + w.text())
    else:
        calls = []
        for _ in range(rng.randint(1, 3)):
            valid = rng.random() < 0.7
            recipient = "f" if valid or rng.random() < 0.5 else rng.choice(["g", ""])
            invoke = (
                _invoke_call(w, "\n", valid).replace("<", "<atem:").replace("<atem:/", "</atem:")
            )
            calls.append(
                f" to={recipient}<|message|><atem:function_calls>\n{invoke}</atem:function_calls>"
            )
        out.append(next_message.join(calls))
    end = "<|eot|>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}"]))
    return "".join(out)


def _rwkv(w: Writer) -> str:
    """RWKV World: the space after the ``Assistant:`` prompt (or none), text only (no
    calls), ended by a blank line, a blank line and the next turn, or cut off."""
    space = w.rng.choice([" ", " ", ""])
    ending = w.rng.choice(["\n\n", "\n\n", "", f"\n\nUser: {w.word()}"])
    return space + w.text() + ending


def _hy3(w: Writer) -> str:
    """Hunyuan 3 after its ``<think:opensource></think:opensource>`` prompt: text, then calls
    in ``<tool_calls:opensource>`` (``<tool_call:opensource>NAME<tool_sep:opensource>`` and
    an argument tag pair per argument, with or without newlines, some malformed), ended by
    ``<｜hy_eos:opensource｜>`` or a cut."""
    rng = w.rng
    nl = rng.choice(["\n", "\n", ""])
    out = [w.text()] if rng.random() < 0.5 else []
    if rng.random() < 0.6:
        out.append(f"<tool_calls:opensource>{nl}")
        for _ in range(rng.randint(1, 3)):
            valid = rng.random() < 0.6
            name = "f" if valid or rng.random() < 0.5 else rng.choice(["", " "])
            sep = "<tool_sep:opensource>" if valid or rng.random() < 0.5 else ""
            out.append(f"<tool_call:opensource>{name}{sep}{nl}")
            for key in rng.sample(["k", "city", "n"], rng.randint(0, 3)):
                value = rng.choice([w.text(hostile=False, newline=False), "3", '{"a": 1}'])
                close = "</arg_value:opensource>" if valid or rng.random() < 0.5 else ""
                out.append(
                    f"<arg_key:opensource>{key}</arg_key:opensource>{nl}"
                    f"<arg_value:opensource>{value}{close}{nl}"
                )
            out.append(rng.choice(["</tool_call:opensource>", "</tool_call:opensource>", ""]) + nl)
        out.append(rng.choice(["</tool_calls:opensource>", "</tool_calls:opensource>", ""]))
    end = "<｜hy_eos:opensource｜>"
    out.append(rng.choice([end, end, "", f"{end}{w.word()}", f"{end}<｜hy_User:opensource｜>"]))
    return "".join(out)


def _param_call(w: Writer, valid: bool) -> str:
    """A MiniCPM 5 call: ``<function name="NAME">`` and a ``<param name="KEY">`` tag per
    argument, a value sometimes in a CDATA block (with a newline in it), some malformed."""
    rng = w.rng
    name = "f" if valid or rng.random() < 0.5 else rng.choice(["", "g", "f' x"])
    keys = rng.sample(["k", "city", "n"], rng.randint(0, 3))
    tags = []
    for key in keys:
        value = rng.choice(
            [
                w.text(hostile=False, newline=False),
                f"<![CDATA[{w.text(hostile=False)}\n<&]]>",
                "3",
                "{'a': True}",
                "[1, 2]",
            ]
        )
        tags.append(f'<param name="{key}">{value}</param>')
    if not valid and tags:
        broken = rng.choice(["unclosed value", "twice", "text between"])
        if broken == "unclosed value":
            tags[-1] = tags[-1].replace("</param>", "")
        elif broken == "twice":
            tags.append(f'<param name="{keys[0]}">{w.word()}</param>')
        else:
            tags.insert(0, w.word())
    closing = rng.choice(["</function>", "</function>", ""]) if not valid else "</function>"
    return f'<function name="{name}">' + "".join(tags) + closing


def _minicpm(w: Writer) -> str:
    """MiniCPM 5: maybe a ``<think>`` block, text, then ``<function name=...>`` calls one per
    line (some malformed, some cut off), ended by ``<|im_end|>`` or a cut."""
    rng = w.rng
    out = []
    if rng.random() < 0.3:
        out.append(f"<think>\n{w.text(hostile=False)}\n</think>\n\n")
    if rng.random() < 0.6:
        out.append(w.text())
    for number in range(rng.randint(0, 3)):
        separator = "\n" if number or out else ""
        out.append(separator + _param_call(w, rng.random() < 0.7))
    end = "<|im_end|>"
    out.append(rng.choice([end, end, "", f"{end}\n<|im_start|>user\n{w.word()}{end}"]))
    return "".join(out)


GENERATORS: dict[str, Callable[[Writer], str]] = {
    "pcml": _pcml,
    "omni": _omni,
    "breeze": _breeze,
    "chatglm3": _chatglm3,
    "chatml": _chatml,
    "llama3": _llama3,
    "mistral": _mistral,
    "deepseek": _deepseek,
    "glm": _glm,
    "bailing": _bailing,
    "harmony": _harmony,
    "kimi": _kimi,
    "gemma": _gemma,
    "gemma4": _gemma4,
    "phi3": _phi3,
    "granite": _granite,
    "hermes": _hermes,
    "smollm3": _smollm3,
    "functionary": _functionary,
    "firefunction": _firefunction,
    "solar": _solar,
    "functionary_v3_2": _functionary_v3_2,
    "cohere": _cohere,
    "cohere:command-r-plus": _cohere_plus,  # (a variant: its tests call it by this name)
    "deepseek_dsml": _deepseek_dsml,
    "gigachat": _gigachat,
    "minimax": _minimax,
    "nemotron_v2": _nemotron_v2,
    "lfm2": _lfm2,
    "bielik": _bielik,
    "minimax_m2": _minimax_m2,
    "seed_oss": _seed_oss,
    "spark": _spark,
    "laguna": _laguna,
    "reka": _reka,
    "apriel": _apriel,
    "apriel:1.6": _apriel16,
    "apertus": _apertus,
    "rwkv": _rwkv,
    "hy3": _hy3,
    "minicpm": _minicpm,
    "muse": _muse,
    "ifm": _ifm,
}


def completion(fmt: pawlette.Format, rng: random.Random, *, ids: bool = False) -> str:
    """One completion of ``fmt`` (see the module docstring); ``ids``: marker spellings only
    of markers that token ids can spell (see :class:`Writer`)."""
    return GENERATORS[fmt.name](Writer(rng, fmt, ids=ids))


# --------------------------------------------------------------------------- the oracle


def _ids() -> Callable[[], str]:
    counter = iter(range(10**9))
    return lambda: f"call_{next(counter)}"


def _pieces(text: str, sizes: list[int]) -> list[str]:
    out, position, turn = [], 0, 0
    while position < len(text):
        size = sizes[turn % len(sizes)]
        out.append(text[position : position + size])
        position += size
        turn += 1
    return out


def _parse_pieces(
    fmt: pawlette.Format, pieces: list[str], reason: str | None, **options: Any
) -> tuple[list[Event], Any]:
    parser = fmt.parser(id_factory=_ids(), **options)
    events: list[Event] = []
    for piece in pieces:
        events += parser.feed(piece)
    events += parser.finish(reason)
    folded = fold(events, fmt.grammar.fields)
    message = message_to_openai(merge_assistant(folded.messages))
    warnings = [(w.offset, w.message, w.text) for w in folded.warnings]
    return events, (message, folded.finish_reason, warnings)


def _from_chunks(chunks: list[dict[str, Any]]) -> tuple[dict[str, Any], str | None, list[str]]:
    """The message an OpenAI client builds from chunks, the finish reason, and faults."""
    faults: list[str] = []
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    finish: str | None = None
    for chunk in chunks:
        for choice in chunk["choices"]:
            if finish is not None:
                faults.append(f"a chunk after the finish chunk: {choice}")
            delta = choice["delta"]
            content.append(delta.get("content") or "")
            reasoning.append(delta.get("reasoning_content") or "")
            for call in delta.get("tool_calls", []):
                index = call["index"]
                if "id" in call:
                    if index in calls or index != len(calls):
                        faults.append(f"call index {index} after {sorted(calls)}")
                    calls[index] = {"id": call["id"], "name": call["function"]["name"], "a": []}
                    order.append(index)
                calls[index]["a"].append(call["function"].get("arguments", ""))
            finish = choice["finish_reason"] or finish
    message: dict[str, Any] = {
        "content": "".join(content),
        "reasoning": "".join(reasoning),
        "calls": [(calls[i]["id"], calls[i]["name"], "".join(calls[i]["a"])) for i in order],
    }
    return message, finish, faults


def _comparable(message: dict[str, Any]) -> dict[str, Any]:
    """The parts of a whole message that chunks carry (text content, reasoning, calls)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if part["type"] == "text")
    return {
        "content": content or "",
        "reasoning": message.get("reasoning_content") or "",
        "calls": [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls", [])
        ],
    }


def _chunks(fmt: pawlette.Format, pieces: list[str], reason: str | None) -> list[dict[str, Any]]:
    parser = fmt.parser(id_factory=_ids())
    stream = pawlette.ChunkStream(model="m", completion_id="x", created=0)
    chunks: list[dict[str, Any]] = []
    for piece in pieces:
        chunks += stream.chunks(parser.feed(piece))
    return chunks + stream.chunks(parser.finish(reason))


def _served(
    fmt: pawlette.Format, text: str, pieces: list[str], reason: str | None
) -> tuple[dict[str, Any], str, list[dict[str, Any]]]:
    completion = ServedCompletion(fmt, ToolPlan())
    completion.parser.new_call_id = _ids()
    message = completion.message(text, reason)
    pipeline = ChunkPipeline(fmt, ToolPlan(), model="m", completion_id="x")
    pipeline.completion.parser.new_call_id = _ids()
    chunks = pipeline.start()
    for piece in pieces:
        chunks += pipeline.feed(piece)
    chunks += pipeline.finish(reason)
    return message, completion.finish_reason, chunks


def _refuse(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:40]} is beyond a double")
    return value


def output_text(message: dict[str, Any]) -> str:
    """Everything the message returns, once (``reasoning_steps`` repeat the reasoning)."""
    return json.dumps({k: v for k, v in message.items() if k != "reasoning_steps"})


def problems(
    fmt: pawlette.Format,
    text: str,
    rng: random.Random,
    *,
    reason: str | None = None,
    paths: bool = True,
) -> list[str]:
    """What breaks a contract when ``text`` is parsed (see the module docstring); ``paths``
    False checks the whole parse only (the fuzz bench's cheap mode)."""
    found: list[str] = []
    try:
        whole = fmt.parse(text, finish_reason=reason, id_factory=_ids())
    except Exception as error:  # the contract: lenient parsing never raises
        return [f"crash: lenient parse raised {type(error).__name__}: {error}"]
    message = whole.message
    for call in message.get("tool_calls", []):
        if not call["function"]["name"]:
            found.append(f"invalid call: {call['function']} (an empty name)")
        try:  # strict JSON: no NaN or Infinity, nothing Python reads as infinity (1e400)
            arguments = json.loads(
                call["function"]["arguments"], parse_constant=_refuse, parse_float=_finite
            )
        except ValueError as error:
            found.append(f"invalid call: {call['function']} ({error})")
            continue
        if not isinstance(arguments, dict):
            found.append(f"invalid call: {call['function']} (not an object)")
        try:
            call["function"]["arguments"].encode()
        except UnicodeEncodeError:
            found.append(f"invalid call: {call['function']} (not UTF-8 text)")
    counts = Counter(SENTINEL.findall(output_text(message)))
    for sentinel in set(SENTINEL.findall(text)):
        if counts[sentinel] == 0:
            found.append(f"lost: {sentinel}")
        elif counts[sentinel] > 1:
            found.append(f"duplicated: {sentinel} x{counts[sentinel]}")
    if reason == "length" and whole.finish_reason != "length":
        found.append(f"finish_reason {whole.finish_reason!r} though the engine said length")
    if reason != "length" and (whole.finish_reason == "tool_calls") != bool(
        message.get("tool_calls")
    ):
        found.append(f"finish_reason {whole.finish_reason!r} with {message.get('tool_calls')}")
    try:
        fmt.parse(text, strict=True, finish_reason=reason)
    except pawlette.ParseError:
        pass
    except Exception as error:
        found.append(f"crash: strict parse raised {type(error).__name__}: {error}")
    if not paths:
        return found
    expected = (
        message,
        whole.finish_reason,
        [(w.offset, w.message, w.text) for w in whole.warnings],
    )
    sizes = [rng.choice([1, 1, 2, 3, 5, 8, 13, 40]) for _ in range(32)]
    for label, pieces in (
        ("one character at a time", list(text)),
        ("random pieces", _pieces(text, sizes)),
    ):
        _, result = _parse_pieces(fmt, pieces, reason)
        if result != expected:
            found.append(f"fed {label}: {result} != whole {expected}")
        _, live = _parse_pieces(fmt, pieces, reason, stream_arguments=True)
        if live != expected:
            found.append(f"fed {label} with live arguments: {live} != whole {expected}")
    pieces = _pieces(text, sizes)
    streamed, finish, faults = _from_chunks(_chunks(fmt, pieces, reason))
    found += [f"ChunkStream: {fault}" for fault in faults]
    if (streamed, finish) != (_comparable(message), whole.finish_reason):
        found.append(f"ChunkStream joined: {streamed, finish} != whole {_comparable(message)}")
    served, served_reason, chunks = _served(fmt, text, pieces, reason)
    if (served, served_reason) != (message, whole.finish_reason):
        found.append(f"server: {served, served_reason} != whole {message, whole.finish_reason}")
    streamed, finish, faults = _from_chunks(chunks)
    found += [f"server stream: {fault}" for fault in faults]
    if (streamed, finish) != (_comparable(message), whole.finish_reason):
        found.append(f"server stream joined: {streamed, finish} != whole {_comparable(message)}")
    return found
