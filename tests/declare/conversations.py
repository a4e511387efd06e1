"""Conversations generated from a declaration, and what parsing their render must give.

:func:`conversations` draws OpenAI requests that a layout can express exactly (derived from
the layout alone, so a format a user registers gets them too): tools when it has a tools
block, reasoning when it has a reasoning block, calls as its calls allow (parallel or not,
with text or not), results answering each round of calls in order.  Text never spells a
marker of the format's lexer (parsed from text, such text is read as the marker) and, in a
format whose calls are bare JSON, never starts with ``{`` (a call; ``[`` where the calls are
one bare array) or ``<`` (which that format's GBNF refuses there).

:func:`normalise` is the request as ``parse_conversation(render(request))`` gives it back:
call ids numbered in order (results name the call at their position) unless the layout
writes ids (containers with a ``call_id``: kept as written), arguments as the layout writes
them, reasoning as the layout keeps it, the default system text dropped.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from pawlette import declare
from pawlette.blocks.results import result_text
from pawlette.codecs.python_literals import raw_string_end
from pawlette.declare import PythonCalls
from pawlette.format import Format
from pawlette.formats.apertus.turns import CLOSE, BracketedResults
from pawlette.formats.apertus.typescript import DeveloperBlock
from pawlette.formats.apriel.calls import IdsBeforeLast
from pawlette.formats.breeze.python_results import PythonResults, written_value
from pawlette.formats.chatglm3.calls import FencedCalls
from pawlette.formats.chatglm3.tools import ToolsListing
from pawlette.formats.gemma4.concepts import GemmaReasoning, GemmaTools
from pawlette.formats.gigachat.typescript import TypeScriptTools
from pawlette.formats.harmony.turns import HarmonyTurns
from pawlette.formats.hy3.concepts import ToolsKeptReasoning
from pawlette.formats.ifm.tools import PresentedTools
from pawlette.formats.kimi.concepts import LabelledCalls
from pawlette.formats.kimi.k3 import BlankReasoning
from pawlette.formats.nemotron_v2.final_turn import FinalTurn
from pawlette.formats.omni.blocks import BlockTurns
from pawlette.formats.reka.calls import RunOnCalls
from pawlette.formats.solar.concepts import IdFirstCalls

ALPHABET = "abcxyz XYZ019.,:;!?'\"-_/\\()[]{}<>|#*=+\n\té中😀"
# A bare-call format reads text starting with "{" as a call; its GBNF refuses "<" there too.
_BARE_CALL = re.compile(r"\s*[{<]")
# One whose calls are one bare JSON array reads text starting with "[" as the calls.
_BARE_LIST = re.compile(r"\s*[\[<]")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {"name": "now", "parameters": {"type": "object", "properties": {}}},
    },
]


def layout_of(fmt: Format) -> Any:
    layout = fmt.declaration
    assert isinstance(layout, declare.Layout), fmt.name
    return layout


@dataclass(frozen=True)
class ReasoningRules:
    """How a layout keeps reasoning (whichever layer declares it)."""

    keep: str
    empty_on_last: bool
    open: str


def reasoning_rules(layout: Any) -> ReasoningRules | None:
    if isinstance(layout, declare.Layout):
        found = layout.concept(declare.Reasoning)
        if found is None:
            return None
        opening = "".join(piece.text for piece in found.open if hasattr(piece, "text"))
        return ReasoningRules(found.keep, found.empty_on_last, opening)
    return None


def prompt_opens_reasoning(layout: Any) -> bool:
    """The generation prompt opens the reasoning block while a turn without reasoning holds
    none of it (MiniMax-M2): only a turn with reasoning is what the model writes after that
    prompt, so every assistant message gets some.  Not Nemotron Nano 2's: its turn as the
    model writes it (:func:`as_the_model_writes`) closes the block itself."""
    if not isinstance(layout, declare.Layout) or layout.concept(FinalTurn) is not None:
        return False
    found = layout.concept(declare.Reasoning)
    return found is not None and found.prompt == "open" and not found.absent


def draws_reasoning(layout: Any) -> bool:
    """Whether conversations give assistant turns reasoning: a layout has a block, and its
    generation prompt does not close it (``Reasoning(prompt="closed")``, thinking off: the
    model writes no block after its prompt, and a past turn with one does not extend it)."""
    if reasoning_rules(layout) is None:
        return False
    return not (
        isinstance(layout, declare.Layout) and layout.concept(declare.Reasoning).prompt == "closed"
    )


def default_system(layout: Any) -> str:
    if isinstance(layout, declare.Layout):
        system = layout.concept(declare.SystemPrompt)
        return system.default if system is not None and isinstance(system.default, str) else ""
    return ""


@dataclass(frozen=True)
class CallRules:
    """What calls a layout writes, whichever concept declares them."""

    parallel: bool
    with_content: bool
    bare: bool
    """Calls are bare JSON objects (text may not start with ``{``)."""
    rewrites_arguments: bool
    """Arguments come back as ``json.dumps`` of their value, not as the caller spelled them."""
    ascii: bool = False
    """Rewritten arguments escape every non-ASCII character, as ``tojson(ensure_ascii=True)``
    writes them (Reka Edge's template), and are read back as written."""
    bare_list: bool = False
    """Calls are one bare JSON array (text may not start with ``[``)."""

    def starts_calls(self, text: str) -> bool:
        """Whether ``text`` starts as the layout's bare calls do (then it is no text)."""
        if self.bare_list:
            return _BARE_LIST.match(text) is not None
        return self.bare and _BARE_CALL.match(text) is not None

    def written(self, arguments: str) -> str:
        """``arguments`` as the layout writes (and parsing gives) them."""
        return json.dumps(json.loads(arguments), ensure_ascii=self.ascii)


def call_rules(layout: Any) -> CallRules | None:
    """The calls of a layout (None: it has none)."""
    if isinstance(layout, declare.Layout):
        found = layout.concept(declare.JsonCalls)
        if found is not None:
            tojson = found.arguments == "tojson"
            return CallRules(
                found.parallel, found.with_content, found.open is None, tojson, found.ascii
            )
        python = layout.concept(PythonCalls)  # arguments written from their value
        if python is not None and not getattr(python, "written", True):
            return None  # read from the model, never written (LFM2's templates drop them)
        if python is not None:
            return CallRules(python.parallel, python.with_content, False, True)
        for kind in (declare.NamedCalls, declare.XmlCalls, declare.JsonCallList):
            other = layout.concept(kind)
            if other is not None:
                with_content = getattr(other, "content", "written") == "written"
                listed = isinstance(other, declare.JsonCallList) and other.open is None
                return CallRules(other.parallel, with_content, False, True, bare_list=listed)
        if layout.concept(BlockTurns) is not None:  # one call per message, its result inside
            return CallRules(
                parallel=False, with_content=True, bare=False, rewrites_arguments=False
            )
        if layout.concept(FencedCalls) is not None:  # one turn per call, Python arguments
            return CallRules(parallel=True, with_content=True, bare=False, rewrites_arguments=True)
        if layout.concept(HarmonyTurns) is not None:  # one call, its text written as analysis
            return CallRules(
                parallel=False, with_content=False, bare=False, rewrites_arguments=True
            )
    return None


def has_tools(layout: Any) -> bool:
    """Whether the layout writes the request's tools (a tools block or a headed listing)."""
    if isinstance(layout, declare.Layout):
        kinds = (declare.ToolsBlock, BlockTurns, ToolsListing, HarmonyTurns)
        return any(layout.concept(kind) is not None for kind in kinds)
    return False


def alternates(layout: Any) -> bool:
    """Whether the layout refuses user and assistant messages that do not alternate (then
    every query gets an answer)."""
    return isinstance(layout, declare.Layout) and layout.concept(declare.Alternation) is not None


def checks_ids(layout: Any) -> bool:
    """Whether the layout refuses call ids outside a pattern (Mistral's 9 letters and digits)."""
    return call_id(layout, 0) != "id0"


def call_id(layout: Any, count: int) -> str:
    """The id of the ``count``-th call: 9 letters and digits where the layout checks ids
    (Mistral's templates), else ``id<count>``."""
    if isinstance(layout, declare.Layout):
        for kind in (declare.NamedCalls, declare.Results):
            found = layout.concept(kind)
            if found is not None and getattr(found, "id_pattern", None) is not None:
                return f"id{count:07d}"
    return f"id{count}"


def writes_call_ids(fmt: Format) -> bool:
    """Whether the layout writes the ids of a completion's calls (then they are read back as
    written); Apriel's writes them in every message but the last, the completion."""
    layout = layout_of(fmt)
    if isinstance(layout, declare.Layout) and isinstance(
        layout.concept(declare.JsonCallList), IdsBeforeLast
    ):
        return False
    if isinstance(layout, declare.Layout):
        calls = layout.concept(declare.JsonCalls)
        named = layout.concept(declare.NamedCalls)
        listed = layout.concept(declare.JsonCallList)
        return (
            (calls is not None and calls.id_key is not None)
            or (
                named is not None
                and (named.id_open is not None or isinstance(named, (LabelledCalls, IdFirstCalls)))
            )
            or (listed is not None and "id" in dict(listed.keys))
        )
    return False


def texts(fmt: Format, *, min_size: int = 1, strip: bool = False) -> st.SearchStrategy[str]:
    """Text the format's lexer reads back as text (``strip``: no edge whitespace, which the
    real templates of chatml and llama3 strip; always for a layout that trims its texts)."""
    layout = layout_of(fmt)
    declared = isinstance(layout, declare.Layout)
    strip = strip or (declared and layout.concept(declare.Trimmed) is not None)
    # (and one that right-strips the first system message's text: Poolside Laguna's)
    first = layout.concept(declare.FirstSystemText) if declared else None
    strip = strip or (first is not None and first.rstrip)
    markers = tuple(fmt.grammar.markers)
    calls = call_rules(layout_of(fmt))
    # A turn opened after another by whitespace alone (DeepSeek V4's blank line joining user
    # texts): a newline at a text's edge would run into it, and reading back could not tell
    # where one text ends (the template writes both alike; a documented loss).
    joined = declared and any(
        fence and all(isinstance(piece, declare.Lit) and not piece.text.strip() for piece in fence)
        for frame in layout.frames.values()
        for fence in frame.open_after.values()
    )

    def fine(text: str) -> bool:
        if any(marker in text for marker in markers):
            return False
        if joined and (text.startswith("\n") or text.endswith("\n")):
            return False
        if calls is not None and calls.starts_calls(text):
            return False
        return not strip or text == text.strip()

    return st.text(st.sampled_from(ALPHABET), min_size=min_size, max_size=12).filter(fine)


def result_texts(fmt: Format, text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Texts of results: where a group of results is joined by a gap and no fence closes a
    result (Nemotron Nano 2's ``, ``), none holds the gap, or reading could not tell the
    results apart (the format reads such a group as one result, with a warning)."""
    layout = layout_of(fmt)
    results = layout.concept(declare.Results) if isinstance(layout, declare.Layout) else None
    if results is None or not results.grouped or results.item_close or not results.item_gap:
        return text
    gap = "".join(piece.text for piece in results.item_gap if isinstance(piece, declare.Lit))
    if isinstance(results, BracketedResults):
        # Apertus' group ends with text, "]", and the answer follows it unframed: a result
        # holding "]" (not a whole JSON value) cannot be told from the group's end.
        return text.filter(lambda value: gap not in value and CLOSE not in value)
    return text.filter(lambda value: gap not in value)


def raw_strings(layout: Any) -> bool:
    """Whether string arguments are written raw between single quotes (LFM2.5's spelling),
    so a string in which a ``'`` could end it cannot be written (the writer refuses it)."""
    python = layout.concept(PythonCalls) if isinstance(layout, declare.Layout) else None
    return python is not None and python.spelling == "template"


@st.composite
def arguments(draw: st.DrawFn, name: str, fmt: Format) -> str:
    if name == "now":
        return "{}"
    city = texts(fmt, min_size=0)
    if raw_strings(layout_of(fmt)):
        city = city.filter(lambda text: raw_string_end(text) is None)
    value: dict[str, Any] = {"city": draw(city)}
    if draw(st.booleans()):
        value["days"] = draw(st.integers(0, 9))
    compact = draw(st.booleans())
    # \uXXXX escapes of non-control characters reach the text only where arguments are written
    # verbatim, and the Lark grammars refuse them there (LARK_JSON_NOTE: llguidance's JSON).
    rules = call_rules(layout_of(fmt))
    ascii_escapes = rules is not None and rules.rewrites_arguments and draw(st.booleans())
    return json.dumps(value, ensure_ascii=ascii_escapes, separators=(",", ":") if compact else None)


@st.composite
def conversations(draw: st.DrawFn, fmt: Format, *, strip: bool = False) -> dict[str, Any]:
    """A request the format expresses exactly (see the module docstring)."""
    layout = layout_of(fmt)
    text = texts(fmt, strip=strip)
    calls = call_rules(layout)
    tools = TOOLS if has_tools(layout) and calls is not None and draw(st.booleans()) else []
    messages: list[dict[str, Any]] = []
    declared = isinstance(layout, declare.Layout)
    if (not declared or "system" in layout.frames) and draw(st.booleans()):
        messages.append({"role": "system", "content": draw(text)})
    count = 0
    # A layout that checks alternation gets an answer after every query but the last.
    alternating = alternates(layout)
    thinking = prompt_opens_reasoning(layout)
    queries = draw(st.integers(1, 3))
    for query in range(queries):
        messages.append({"role": "user", "content": draw(text)})
        # Per query: maybe a turn of calls and their results, then maybe an answer.
        if tools and calls is not None and draw(st.booleans()):
            message: dict[str, Any] = {"role": "assistant"}
            if draws_reasoning(layout) and (thinking or draw(st.booleans())):
                message["reasoning_content"] = draw(text)
            with_text = calls.with_content and draw(st.booleans())
            message["content"] = draw(text) if with_text else None
            message["tool_calls"] = []
            for _ in range(draw(st.integers(1, 2 if calls.parallel else 1))):
                name = draw(st.sampled_from(["get_weather", "now"]))
                message["tool_calls"].append(
                    {
                        "id": call_id(layout, count),
                        "type": "function",
                        "function": {"name": name, "arguments": draw(arguments(name, fmt))},
                    }
                )
                count += 1
            messages.append(message)
            results = result_texts(fmt, text)
            for call in message["tool_calls"]:
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": draw(results)}
                )
        if (alternating and query < queries - 1) or draw(st.booleans()):
            answer: dict[str, Any] = {"role": "assistant", "content": draw(text)}
            if draws_reasoning(layout) and (thinking or draw(st.booleans())):
                answer["reasoning_content"] = draw(text)
            messages.append(answer)
    request: dict[str, Any] = {"messages": messages}
    if tools:
        request["tools"] = tools
    return request


def normalise(fmt: Format, request: dict[str, Any]) -> dict[str, Any]:
    """What parsing the request's render gives (see the module docstring)."""
    layout = layout_of(fmt)
    messages = copy.deepcopy(request["messages"])
    ids: dict[str, str] = {}
    number = 0
    last_query = last_query_index_of(messages)
    listed_calls = (
        layout.concept(declare.JsonCallList) if isinstance(layout, declare.Layout) else None
    )
    before_last = isinstance(listed_calls, IdsBeforeLast)  # ids in every message but the last
    keep_ids = writes_call_ids(fmt) or before_last
    named = layout.concept(declare.NamedCalls) if isinstance(layout, declare.Layout) else None
    label = named.label if isinstance(named, LabelledCalls) else None  # ids in the name's place
    listed = layout.concept(declare.JsonCallList) if isinstance(layout, declare.Layout) else None
    positional = listed is not None and listed.ids == "positional"  # renumbered by position
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            for turn_number, call in enumerate(message.get("tool_calls") or []):
                kept = keep_ids and not (before_last and index == len(messages) - 1)
                new = call["id"] if kept else f"call_{number}"
                if positional:
                    new = str(number)
                if label is not None:
                    counted = number if label.count == "conversation" else turn_number
                    new = label.text(call["function"]["name"], counted)
                ids[call["id"]] = new
                number += 1
                arguments = call["function"]["arguments"]
                rules = call_rules(layout)
                if rules is not None and rules.rewrites_arguments:
                    arguments = rules.written(arguments)
                call["function"] = {**call["function"], "arguments": arguments}
                call["id"] = new
            run_on = layout.concept(RunOnCalls) if isinstance(layout, declare.Layout) else None
            content = message.get("content")
            if run_on is not None and message.get("tool_calls") and isinstance(content, str):
                # The text's own trailing separator reads back as the calls' (Reka Edge's
                # recorded loss).
                separator = "".join(
                    piece.text for piece in run_on.separator if isinstance(piece, declare.Lit)
                )
                if separator and content.endswith(separator):
                    message["content"] = content[: -len(separator)] or None
            cut = layout.concept(declare.TextAfter) if isinstance(layout, declare.Layout) else None
            content = message.get("content")
            if (
                cut is not None
                and cut.strip
                and isinstance(content, str)
                and (cut.last or index < len(messages) - 1)
                and (cut.calls or not message.get("tool_calls"))
                and (cut.after_results or index == 0 or messages[index - 1]["role"] != "tool")
            ):
                # The start of the text trimmed (QwQ's lstrip of a past answer: a recorded loss).
                message["content"] = content.lstrip(cut.strip)
            reasoning = reasoning_rules(layout)
            if reasoning is not None and reasoning.keep == "none":
                message.pop("reasoning_content", None)  # never written (a recorded loss)
            # keep="calls": written only beside calls; an empty block reads back as none.
            beside_calls = message.get("tool_calls") and message.get("reasoning_content")
            if reasoning is not None and reasoning.keep == "calls" and not beside_calls:
                message.pop("reasoning_content", None)
            if reasoning is not None and reasoning.keep == "all":
                # Every turn writes its reasoning, trimmed as the layout trims (Ling 3.0).
                trim = layout.concept(declare.Reasoning).trim
                thought = message.get("reasoning_content")
                if trim and thought:
                    message["reasoning_content"] = thought.strip(trim)
                    if isinstance(message.get("content"), str):
                        message["content"] = message["content"].lstrip(trim)
                    if not message["reasoning_content"]:  # an empty block: no reasoning
                        message.pop("reasoning_content")
                blank = thought is not None and not thought.strip()
                if blank and isinstance(layout.concept(declare.Reasoning), BlankReasoning):
                    message.pop("reasoning_content", None)  # not written (a recorded loss)
            if reasoning is not None and reasoning.keep == "after_last_query":
                kept = index > last_query
                if isinstance(layout.concept(declare.Reasoning), GemmaReasoning):
                    kept = kept and bool(message.get("tool_calls"))  # only beside calls
                if isinstance(layout.concept(declare.Reasoning), ToolsKeptReasoning):
                    kept = kept or bool(request.get("tools"))  # with tools, every turn's
                # Kept when non-empty; an empty block (Qwen3 writes one on the last turn) reads
                # back as no reasoning.
                trim = layout.concept(declare.Reasoning).trim
                # (the last turn's empty block: Qwen3's empty_on_last)
                last = index == len(messages) - 1 and reasoning.empty_on_last
                if trim and kept and (message.get("reasoning_content") or last):
                    # Qwen3 trims the text around the block it writes (a documented loss).
                    thought = (message.get("reasoning_content") or "").strip(trim)
                    message["reasoning_content"] = thought
                    if isinstance(message.get("content"), str):
                        message["content"] = message["content"].lstrip(trim)
                if not (kept and message.get("reasoning_content")):
                    message.pop("reasoning_content", None)
        elif message["role"] == "tool":
            message["tool_call_id"] = ids[message["tool_call_id"]]
            if results_as_values(layout):  # a Python value
                message["content"] = result_text(written_value(message["content"]))
    if messages and messages[0]["role"] == "system":
        default = default_system(layout)
        if messages[0]["content"] == default:
            messages.pop(0)
    normalised = {**request, "messages": messages}
    if not reads_tools_back(layout):
        normalised.pop("tools", None)
    return normalised


def reads_tools_back(layout: Any) -> bool:
    """Whether parsing a render gives the request's tools back (harmony's TypeScript
    namespace, Gemma 4's declarations, GigaChat's and Apertus' TypeScript types and
    IFM-K2-Horizon's Markdown and XML are not the JSON schema they were written from;
    Seed-OSS's and Command R+'s stubs read back as :data:`TOOLS`, which they express whole)."""
    if not isinstance(layout, declare.Layout):
        return True
    return all(
        layout.concept(kind) is None
        for kind in (
            HarmonyTurns,
            GemmaTools,
            TypeScriptTools,
            DeveloperBlock,
            PresentedTools,
        )
    )


def results_as_values(layout: Any) -> bool:
    """Whether the layout writes results as Python values (read back as their JSON)."""
    if isinstance(layout, declare.Layout):
        return layout.concept(PythonResults) is not None
    return False


def last_query_index_of(messages: list[dict[str, Any]]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user":
            return index
    return -1


__all__ = [
    "TOOLS",
    "CallRules",
    "call_rules",
    "conversations",
    "has_tools",
    "last_query_index_of",
    "normalise",
    "texts",
    "writes_call_ids",
]


def _untyped(value: Any) -> Any:
    """A tag call's argument as a completion parsed without tools gives it back: no schema
    says a parameter is a string, so a string that is JSON text is read as that JSON."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def normalise_completion(
    fmt: Format, message: dict[str, Any], *, tools_known: bool = False
) -> dict[str, Any]:
    """An assistant message as parsing its completion (the turn the model wrote last in its
    conversation) gives it back; call ids aside.  ``tools_known``: the completion is parsed
    with the request's tools (their schemas type each tag call's parameters)."""
    layout = layout_of(fmt)
    message = copy.deepcopy(message)
    calls = call_rules(layout)
    tags = layout.concept(declare.XmlCalls) if isinstance(layout, declare.Layout) else None
    # (Tags whose close says the value's kind, DeepSeek V3.2's string="true", type it.)
    tagged = tags is not None and not tags.key_close_other
    for call in message.get("tool_calls") or []:
        if calls is not None and calls.rewrites_arguments:
            arguments = json.loads(call["function"]["arguments"])
            if tagged and not tools_known:  # untyped, text that is JSON reads as JSON
                arguments = {key: _untyped(value) for key, value in arguments.items()}
            call["function"]["arguments"] = json.dumps(arguments, ensure_ascii=calls.ascii)
    reasoning = reasoning_rules(layout)
    trim = layout.concept(declare.Reasoning).trim if reasoning is not None else ""
    # A block is written (and the text around it trimmed) for reasoning that is there, and
    # without it only where the last turn gets an empty block (Qwen3's empty_on_last; a
    # layout with a stand-in for an absent block writes the stand-in instead).
    concept = layout.concept(declare.Reasoning) if reasoning is not None else None
    absent = concept is not None and bool(concept.absent)
    empty_block = (
        concept is not None
        and (concept.empty_on_last or concept.empty_after_last_query)
        and not absent
    )
    written = empty_block or bool(message.get("reasoning_content"))
    if trim and reasoning is not None and reasoning.keep != "none" and written:
        # The last turn writes its block: Qwen3 trims the text around it (a documented loss).
        message["reasoning_content"] = (message.get("reasoning_content") or "").strip(trim)
        if isinstance(message.get("content"), str):
            message["content"] = message["content"].lstrip(trim)
            if not message["content"] and message.get("tool_calls"):
                message["content"] = None  # no text beside the calls (read back so)
    if reasoning is not None and reasoning.empty_on_last and not message.get("reasoning_content"):
        message.pop("reasoning_content", None)  # an empty block is no reasoning
    trimmed = reasoning is not None and reasoning.keep != "none" and bool(trim) and written
    if trimmed and not message.get("reasoning_content"):
        # Trimmed to nothing (Ling 3.0's "\n", MiniCPM's): an empty block, no reasoning.
        message.pop("reasoning_content", None)
    if reasoning is not None and reasoning.keep == "none":
        message.pop("reasoning_content", None)  # never written (a recorded loss)
    # keep="calls": written only beside calls; an empty block reads back as none.
    beside_calls = message.get("tool_calls") and message.get("reasoning_content")
    if reasoning is not None and reasoning.keep == "calls" and not beside_calls:
        message.pop("reasoning_content", None)
    gemma = isinstance(layout, declare.Layout) and isinstance(
        layout.concept(declare.Reasoning), GemmaReasoning
    )
    if gemma and not beside_calls:  # Gemma 4 writes it only beside calls
        message.pop("reasoning_content", None)
    ignored = layout.concept(declare.Ignored) if isinstance(layout, declare.Layout) else None
    if reasoning is None and ignored is not None and "reasoning" in ignored.fields:
        message.pop("reasoning_content", None)  # the template has no place for it
    if calls is None and ignored is not None and "calls" in ignored.fields:
        message.pop("tool_calls", None)  # nor for calls
    return as_completion(fmt, message)


def as_the_model_writes(fmt: Format) -> Format:
    """``fmt``, its training render's last turn written as the model writes its turn after
    the generation prompt (what a grammar for that turn accepts): Nemotron Nano 2's template
    writes it otherwise, its option ``last_turn="closed"`` so."""
    layout = layout_of(fmt)
    final = layout.concept(FinalTurn) if isinstance(layout, declare.Layout) else None
    if final is not None and not final.closed:
        return fmt.with_options(last_turn="closed")
    return fmt


def as_completion(fmt: Format, message: dict[str, Any]) -> dict[str, Any]:
    """The last turn of a conversation, as reading it as a completion (after the generation
    prompt) gives it back where that differs from reading the conversation: Nemotron Nano 2
    writes the last turn's text inside the block its prompt opens, read back from the
    completion as reasoning (a recorded loss), trimmed."""
    layout = layout_of(fmt)
    if not isinstance(layout, declare.Layout) or layout.concept(FinalTurn) is None:
        return message
    message = dict(message)
    message.pop("reasoning_content", None)
    text = message.get("content")
    if isinstance(text, str) and text.strip():
        message["reasoning_content"] = text.strip()
        # As the reader gives it back: no text beside calls, else an empty one.
        message["content"] = None if message.get("tool_calls") else ""
    return message


@st.composite
def assistant_turn(
    draw: st.DrawFn,
    fmt: Format,
    text: st.SearchStrategy[str],
    arguments_of: Any,
    names: list[str],
) -> dict[str, Any]:
    """One assistant turn the layout can write, calling ``names`` with ``arguments_of(name)``
    (for the shared grammar tests, which bring their own tools and texts)."""
    layout = layout_of(fmt)
    calls = call_rules(layout)
    if calls is not None and (calls.bare or calls.bare_list):
        text = text.filter(lambda value: not calls.starts_calls(value))
    message: dict[str, Any] = {"role": "assistant"}
    count = draw(st.integers(0, 0 if calls is None else 3 if calls.parallel else 1))
    if count:
        message["tool_calls"] = [
            {
                "id": call_id(layout, number) if checks_ids(layout) else f"call_{number}",
                "type": "function",
                "function": {"name": name, "arguments": draw(arguments_of(name))},
            }
            for number, name in enumerate(
                draw(st.lists(st.sampled_from(names), min_size=count, max_size=count))
            )
        ]
    with_text = not count or (calls is not None and calls.with_content and draw(st.booleans()))
    message["content"] = draw(text) if with_text else None
    if prompt_opens_reasoning(layout):  # only a turn with reasoning follows the prompt
        message["reasoning_content"] = draw(text.filter(bool))
    elif draws_reasoning(layout) and draw(st.booleans()):
        message["reasoning_content"] = draw(text)
    return message
