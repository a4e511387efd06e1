"""Name the chat format a model directory's template writes: a declared family, or a
declaration inferred from the template and verified against it.

:func:`detect` reads a Hugging Face model or tokenizer directory: its ``chat_template``
(``chat_template.jinja``, or ``tokenizer_config.json``'s, the ``default`` one when it holds
several), its ``bos_token``/``eos_token``, and its added tokens (the special tokens an inferred
declaration writes as markers).  Then, in order:

1. **Declared families.**  The template renders a fixed set of probe conversations; every
   registered format and each named option set its declaration lists (``variants``, such as
   ``chatml:qwen2.5``) renders them too, the template given the variables and the date the
   candidate's options stand for (``Layout.template_variables``, ``Layout.today``).  The
   first candidate that renders every probe it can express identically is the answer, by
   its registered name (a declaration whose template cannot write tools as it does, such as
   DeepSeek R1's, or calls, such as Functionary v3.2's, says so in
   ``Layout.template_untested``: it is compared without them; one whose template reads the
   tools from a variable of its own, such as Firefunction v2's ``functions``, gives it with
   each probe: ``Layout.tools_variables``; one whose template's callers shape the messages,
   such as TranslateGemma's, which pass each user text as a content part holding the
   languages' codes, gives the template those: ``Layout.template_messages``).  A
   probe without tools that the template refuses, and renders once it is given tools, is
   skipped: such a ``tool_use`` template (Hermes 2 Pro's) is only used for requests with
   tools.
2. **Inference** (:mod:`pawlette.infer`), when no declared family matches: a declaration
   derived from the template by differential probing, accepted only when it renders a set of
   generated conversations exactly as the template does and parses the template's own
   assistant turns back.  What it could not derive is refused at use, saying why; a
   declaration that fails verification is never used (the answer then says where it failed).

The template runs in a Jinja environment set up as transformers sets up its own, with a clock
that never reads the machine's (:mod:`pawlette.infer.template`).  It needs ``jinja2`` (the
``transformers`` extra).

>>> from pawlette.detect import detect  # doctest: +SKIP
>>> detect("Qwen3-0.6B").name  # doctest: +SKIP
'chatml'
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .declare.content import trim_of_loss
from .errors import RequestError
from .format import Format
from .formats import formats, get_format
from .infer import Inference, infer_template
from .infer.own_turns import TurnDifference, TurnReport, own_turns
from .infer.switches import read_variables
from .infer.template import DEFAULT_TODAY, TemplateRunner

__all__ = [
    "EVIDENCE",
    "Detection",
    "Difference",
    "Mismatch",
    "Probe",
    "Refusal",
    "TemplateVerification",
    "detect",
    "detect_template",
    "format_of_directory",
    "probe_kinds",
    "read_chat_template",
    "read_special_tokens",
    "read_token_variables",
    "verify",
]

_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@dataclass(frozen=True)
class Probe:
    """One probe conversation (OpenAI JSON) and whether it ends with a generation prompt."""

    name: str
    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    add_generation_prompt: bool = False


def _call(name: str, arguments: str, identifier: str = "call00001") -> dict[str, Any]:
    return {
        "id": identifier,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


PROBES = (
    Probe("user prompt", ({"role": "user", "content": "Hello!"},), add_generation_prompt=True),
    Probe(
        "system, user, assistant",
        (
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": "4."},
        ),
    ),
    Probe(
        "two turns",
        (
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello! How can I help?"},
            {"role": "user", "content": "Tell me a joke."},
        ),
        add_generation_prompt=True,
    ),
    Probe(
        "tools and a call",
        (
            {"role": "system", "content": "You can check the weather."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [_call("get_weather", '{"city": "Paris"}')],
            },
        ),
        tools=(_WEATHER,),
    ),
    Probe(
        "two calls in a turn",
        (
            {"role": "user", "content": "Weather in Paris and Oslo?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    _call("get_weather", '{"city": "Paris"}'),
                    _call("get_weather", '{"city": "Oslo"}', "call00002"),
                ],
            },
        ),
        tools=(_WEATHER,),
    ),
    Probe(
        "tools prompt",
        ({"role": "user", "content": "Weather in Paris?"},),
        tools=(_WEATHER,),
        add_generation_prompt=True,
    ),
    Probe(
        "tools, a result and an answer",
        (
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [_call("get_weather", '{"city": "Paris"}')],
            },
            {"role": "tool", "tool_call_id": "call00001", "content": "18 degrees"},
            {"role": "assistant", "content": "It is 18 degrees."},
        ),
        tools=(_WEATHER,),
    ),
    Probe(
        "reasoning",
        (
            {"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": "4.", "reasoning_content": "Two and two."},
        ),
    ),
)


@dataclass(frozen=True)
class Mismatch:
    """The first probe where a declared candidate and the template differ."""

    candidate: str
    probe: str
    expected: str
    """What the template rendered."""
    rendered: str
    """What the candidate rendered."""
    agreed: int = 0
    """Probes the candidate rendered identically before this one."""
    template_refused: bool = False
    """The template refused the probe (``expected`` is ``<refused: its error>``)."""
    undated: datetime.date | None = None
    """The day the template's clock (``strftime_now``) read when the candidate writes no date
    of its own: a day no declaration writes (None: the template reads no clock, or the
    candidate gave its date)."""

    @property
    def likeness(self) -> float:
        """How alike the two renders of the differing probe are, 0 to 1 (difflib's ratio):
        among candidates that agreed on as many probes, the nearest family."""
        return difflib.SequenceMatcher(
            None, self.expected[:_COMPARED], self.rendered[:_COMPARED], autojunk=False
        ).ratio()

    def where(self) -> str:
        """Where the two renders first differ, with the text around it on each side."""
        expected, rendered = self.expected, self.rendered
        if self.template_refused:  # no text to compare offsets in: say so
            refusal = expected.removeprefix("<refused: ").removesuffix(">")
            return f"the template refuses it ({refusal[:100]}), the family writes " + repr(
                rendered[:70]
            )
        offset = next(
            (
                at
                for at, pair in enumerate(zip(expected, rendered, strict=False))
                if len(set(pair)) > 1
            ),
            min(len(expected), len(rendered)),
        )
        start = max(0, offset - 30)
        said = (
            f"at offset {offset}, template {self.expected[start : offset + 70]!r} "
            f"vs {self.rendered[start : offset + 70]!r}"
        )
        if self.undated is not None and str(self.undated.year) in expected[start : offset + 70]:
            # The date is the probe's, not the template's: say where it came from.
            said += (
                "; the template reads its clock (strftime_now) and the family has no date "
                f"option, so the clock read {self.undated.isoformat()}, a day no declaration "
                "writes"
            )
        return said

    def hint(self, given: Collection[str] = (), read: Collection[str] | None = None) -> str | None:
        """What the difference says when it is only text one side writes before or after the
        other; where the family writes it and the directory gives no ``bos_token`` (first) or
        ``eos_token`` (last) that the template reads, the template wrote that token as
        nothing: the question says so.  ``given``: the tokens the directory gives
        (``"bos_token"``, ``"eos_token"``); ``read``: those the template reads (None: not
        known, as if it read both)."""
        for longer, shorter, writer in (
            (self.rendered, self.expected, "the family"),
            (self.expected, self.rendered, "the template"),
        ):
            if len(longer) <= len(shorter) or not shorter:
                continue
            extra = len(longer) - len(shorter)
            if extra <= _EDGE and longer.endswith(shorter):
                text, end, token = longer[:extra], "first", "bos_token"
            elif extra <= _EDGE and longer.startswith(shorter):
                text, end, token = longer[-extra:], "last", "eos_token"
            else:
                continue
            said = f"the same but for {text!r}, which {writer} writes {end}"
            # A token the template never reads is no answer: giving it would change nothing.
            if writer == "the family" and token not in given and (read is None or token in read):
                article = "an" if token[0] in "aeiou" else "a"
                said += f" (is {article} {token} missing from the directory?)"
            return said
        return None


EVIDENCE = ("tools", "calls", "two calls in a turn", "results", "reasoning")
"""The kinds of content a probe may hold beyond plain text turns, as :meth:`Detection.describe`
names them: a declared family is named with those its matching probes held."""


def probe_kinds(probe: Probe) -> frozenset[str]:
    """The kinds of :data:`EVIDENCE` ``probe`` holds."""
    kinds = {"tools"} if probe.tools else set()
    for message in probe.messages:
        calls = message.get("tool_calls") or ()
        if calls:
            kinds.add("calls")
        if len(calls) > 1:
            kinds.add("two calls in a turn")
        if message.get("role") == "tool":
            kinds.add("results")
        if message.get("reasoning_content"):
            kinds.add("reasoning")
    return frozenset(kinds)


def _listed(items: list[str], joiner: str) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {joiner} " + items[-1]


_COMPARED = 2000
"""Characters of each render compared for likeness (a probe renders a few hundred)."""
_EDGE = 40
"""The longest text one render may add at its start or end for :meth:`Mismatch.hint`."""


@dataclass(frozen=True)
class Detection:
    """What :func:`detect` found.

    - ``format``: the format to use (None: none, see :meth:`describe`);
    - ``name``: its registered name (``"chatml:qwen2.5"``: a family and its variant), or the
      inferred declaration's name;
    - ``variant``: the declared family's named option set (None: its defaults, or inferred);
    - ``compared``: the probes a declared family rendered identically;
    - ``mismatches``: per declared candidate, the first probe that differed;
    - ``inference``: what inference found when no declared family matched (None: not tried);
    - ``refused``: probes the template renders and the declared family refuses, each with
      the family's reason (a family that writes every probe the template writes is chosen
      before one that does not);
    - ``given``: which of ``bos_token`` and ``eos_token`` the template was given.
    """

    format: Format | None
    name: str | None
    variant: str | None
    compared: tuple[str, ...]
    mismatches: tuple[Mismatch, ...]
    inference: Inference | None = None
    refused: tuple[str, ...] = ()
    given: frozenset[str] = frozenset()
    """The tokens the template was given (``"bos_token"``, ``"eos_token"``)."""
    read: frozenset[str] | None = None
    """The tokens the template reads (None: not known); a mismatch asks only for those."""
    probed: tuple[str, ...] = ()
    """The kinds of content (:data:`EVIDENCE`) the probes a declared family rendered
    identically held: a kind missing here was never compared."""

    @property
    def declared(self) -> bool:
        """A declared family writes the template."""
        return self.format is not None and self.inference is None

    @property
    def inferred(self) -> bool:
        """An inferred declaration, verified, writes the template."""
        return self.format is not None and self.inference is not None

    def describe(self) -> str:
        if self.declared:
            said = f"{self.name}: a declared family; {len(self.compared)} probes rendered"
            said += " identically"
            held = [kind for kind in EVIDENCE if kind in self.probed]
            missing = [kind for kind in EVIDENCE if kind not in self.probed]
            if held:
                said += ", with " + _listed(held, "and")
            if missing:
                said += f"; none held {_listed(missing, 'or')}: not compared on those"
            if self.refused:
                said += f"; it refuses {len(self.refused)} the template renders: " + "; ".join(
                    self.refused
                )
            return said
        lines = ["no declared family renders this chat template"]
        if self.mismatches and all(
            item.template_refused and not item.agreed for item in self.mismatches
        ):
            lines[0] += (
                ": the template refused every probe it was compared on, so no family was"
                " compared (does it take messages or variables of another shape?)"
            )
        closest = sorted(self.mismatches, key=lambda item: (-item.agreed, -item.likeness))[:3]
        for mismatch in closest:
            hint = mismatch.hint(self.given, self.read)
            lines.append(
                f"  {mismatch.candidate}: first differs on probe {mismatch.probe!r}: "
                + (hint if hint is not None else mismatch.where())
            )
        if self.inference is not None:
            if self.inferred:
                lines.append(f"{self.name}: {self.inference.describe()}")
            else:
                lines.append(self.inference.describe())
        return "\n".join(lines)

    def declaration(self) -> str:
        """Python source of the format: the inferred declaration (save, edit and register
        it), or the line that gets a declared family."""
        if self.declared:
            return (
                f'"""The declared family {self.name}."""\n\nimport pawlette\n\n'
                f"FORMAT = pawlette.get_format({json.dumps(self.name)})\n"
            )
        if self.inference is None or self.inference.layout is None:
            raise RequestError(
                "declaration", "none", "a template whose turns inference could derive"
            )
        return self.inference.source()


# ------------------------------------------------------------------ the directory


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _config(folder: Path) -> dict[str, Any]:
    if not folder.is_dir():
        # Said here, before "no chat template": a mistyped path is not a model without one.
        found = "not a directory" if folder.exists() else "no such directory"
        raise RequestError(
            str(folder),
            found,
            "a model or tokenizer directory (tokenizer_config.json, chat_template.jinja)",
        )
    config_path = folder / "tokenizer_config.json"
    if not config_path.is_file():
        return {}
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RequestError(str(config_path), f"unreadable ({error})", "JSON") from error
    if not isinstance(config, dict):
        raise RequestError(str(config_path), f"a JSON {type(config).__name__}", "an object")
    return config


def read_chat_template(directory: str | Path) -> tuple[str, dict[str, str]]:
    """The directory's chat template and its special-token variables (``bos_token``...)."""
    folder = Path(directory)
    config = _config(folder)
    variables = _variables(config)
    template_file = folder / "chat_template.jinja"
    if template_file.is_file():
        try:
            return template_file.read_text(encoding="utf-8"), variables
        except (OSError, ValueError) as error:
            raise RequestError(str(template_file), f"unreadable ({error})", "UTF-8 text") from error
    template = config.get("chat_template")
    if isinstance(template, list):
        named = {
            item.get("name"): item.get("template") for item in template if isinstance(item, dict)
        }
        template = named.get("default")
    if not isinstance(template, str):
        raise RequestError(
            str(folder),
            "no chat template",
            "chat_template.jinja or a chat_template in tokenizer_config.json",
        )
    return template, variables


def _variables(config: Mapping[str, Any]) -> dict[str, str]:
    """The special-token variables a tokenizer config gives its template."""
    return {
        key: text
        for key in ("bos_token", "eos_token", "unk_token", "pad_token")
        if (text := _token_text(config.get(key))) is not None
    }


def read_token_variables(directory: str | Path) -> dict[str, str]:
    """The special-token variables (``bos_token``...) a directory's tokenizer config gives
    its template (none: no ``tokenizer_config.json``)."""
    return _variables(_config(Path(directory)))


def read_template_file(path: str | Path) -> str:
    """A chat template named explicitly: a Jinja file's text."""
    file = Path(path)
    if not file.is_file():
        raise RequestError(str(file), "no such file", "a chat template file (Jinja)")
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, ValueError) as error:
        raise RequestError(str(file), f"unreadable ({error})", "a UTF-8 chat template") from error


def read_special_tokens(directory: str | Path) -> tuple[str, ...] | None:
    """The tokenizer's added tokens (``tokenizer_config.json``'s ``added_tokens_decoder``,
    else ``tokenizer.json``'s ``added_tokens``); None: the directory does not say."""
    folder = Path(directory)
    decoder = _config(folder).get("added_tokens_decoder")
    if isinstance(decoder, Mapping) and decoder:
        found = [_token_text(item) for item in decoder.values()]
        return tuple(text for text in found if text)
    tokenizer = folder / "tokenizer.json"
    if tokenizer.is_file():
        try:
            added = json.loads(tokenizer.read_text(encoding="utf-8")).get("added_tokens")
        except (OSError, ValueError, AttributeError):
            return None
        if isinstance(added, list) and added:
            return tuple(text for item in added if (text := _token_text(item)))
    return None


# ------------------------------------------------------------------ declared families


def _option_variables(fmt: Format) -> dict[str, Any]:
    """A declared format's text options by name (the Option pieces' template variables)."""
    options = fmt.options
    if options is None or not dataclasses.is_dataclass(options):
        return {}
    return {
        field.name: getattr(options, field.name)
        for field in dataclasses.fields(options)
        if isinstance(getattr(options, field.name), str)
    }


def _reference(fmt: Format) -> tuple[dict[str, Any], datetime.date | None]:
    """The template variables and the date a declared candidate stands for."""
    layout = getattr(fmt, "declaration", None)
    today = None
    reference = getattr(layout, "reference_variables", None)
    # A layout that maps its options to the template's variables says which it passes;
    # otherwise each text option is passed under its own name.
    declared = getattr(layout, "template_variables", None) is not None
    variables = {} if declared else _option_variables(fmt)
    if callable(reference):
        variables.update(reference())
        name = getattr(layout, "today", None)
        if name:
            value = getattr(fmt.options, name, None)
            if isinstance(value, datetime.date):
                today = value
    return variables, today


_UNDATED = datetime.date(1999, 12, 31)


def _tools_variables(fmt: Format, tools: tuple[Mapping[str, Any], ...]) -> dict[str, Any]:
    """The template variables a declared candidate passes ``tools`` in, beside ``tools``."""
    layout = getattr(fmt, "declaration", None)
    found = getattr(layout, "reference_tools_variables", None)
    return dict(found(list(tools))) if callable(found) else {}


def _caller_messages(fmt: Format, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as the callers of a declared candidate's template shape them
    (``Layout.template_messages``)."""
    layout = getattr(fmt, "declaration", None)
    found = getattr(layout, "reference_messages", None)
    return list(found(messages)) if callable(found) else [dict(item) for item in messages]


_INFERRED: set[str] = set()
"""Names :func:`format_of_directory` registered for an inferred declaration: a directory's
own inference, never a candidate for another directory."""


def _candidates() -> list[tuple[str, str | None, Format]]:
    result: list[tuple[str, str | None, Format]] = []
    for name in formats():
        if ":" in name or name in _INFERRED:
            continue
        fmt = get_format(name)
        result.append((name, None, fmt))
        layout = getattr(fmt, "declaration", None)
        for variant in getattr(layout, "variants", None) or {}:
            result.append((name, variant, get_format(f"{name}:{variant}")))
    return result


def _has_calls(probe: Probe) -> bool:
    return any(
        message.get("tool_calls") or message.get("role") == "tool" for message in probe.messages
    )


def _declared(
    runner: TemplateRunner, probes: list[Probe]
) -> tuple[Detection | None, list[Mismatch]]:
    default_today = runner.today
    cache: dict[str, Any] = {}
    mismatches: list[Mismatch] = []
    partial: Detection | None = None  # the first match that refuses probes the template writes
    for name, variant, fmt in _candidates():
        variables, today = _reference(fmt)
        # A candidate without a date option writes no clock: the template's clock then reads
        # a day no declaration writes as a fixed default, so a template that reads its clock
        # is never taken for one that writes a fixed date (Llama 3.2 for 3.1).
        runner.today = today or _UNDATED
        compared: list[str] = []
        probed: set[str] = set()
        refused: list[str] = []
        mismatch: Mismatch | None = None
        label = name if variant is None else f"{name}:{variant}"
        untested = getattr(getattr(fmt, "declaration", None), "template_untested", ())
        for probe in probes:
            probe_variables = {**variables, **_tools_variables(fmt, probe.tools)}
            if "tools" in untested and (probe.tools or _has_calls(probe)):
                continue  # the declaration says the template cannot write these as it does
            if "calls" in untested and _has_calls(probe):
                continue  # the template cannot render calls as Hugging Face passes them
            try:
                rendered: str | None = fmt.render(
                    list(probe.messages),
                    list(probe.tools) or None,
                    add_generation_prompt=probe.add_generation_prompt,
                ).text
            except RequestError as error:
                rendered, refusal = None, f"{probe.name} ({error})"
            messages = _caller_messages(fmt, probe.messages)
            key = json.dumps(
                [probe.name, messages, probe_variables, str(runner.today)],
                sort_keys=True,
                default=str,
            )
            expected = cache.get(key)
            if expected is None:
                expected = cache[key] = runner.render(
                    messages,
                    list(probe.tools) or None,
                    add_generation_prompt=probe.add_generation_prompt,
                    variables=probe_variables,
                )
            if rendered is None:
                if expected.text is not None:
                    refused.append(refusal)  # the template writes what the family refuses
                continue  # (both refuse: the candidate cannot express this probe)
            if expected.text is None and (expected.refusal or "").startswith("SecurityError"):
                # The sandbox refused the template's own code (Kimi K2's list.append): the
                # template gave no answer for this input to compare with.
                continue
            with_tools = {**variables, **_tools_variables(fmt, (_WEATHER,))}
            if expected.text is None and refuses_without_tools(
                runner, probe, with_tools, cache, messages
            ):
                continue  # a template that renders only with tools says nothing here
            if expected.text != rendered:
                shown = (
                    expected.text if expected.text is not None else f"<refused: {expected.refusal}>"
                )
                mismatch = Mismatch(
                    label,
                    probe.name,
                    shown,
                    rendered,
                    len(compared),
                    expected.text is None,
                    # (the clock's day shown only where it differs: :meth:`Mismatch.where`)
                    runner.today if runner.read_clock and runner.today == _UNDATED else None,
                )
                break
            compared.append(probe.name)
            probed |= probe_kinds(probe)
        runner.today = default_today
        if mismatch is None and len(compared) >= 3:
            found = Detection(
                fmt,
                label,
                variant,
                tuple(compared),
                tuple(mismatches),
                refused=tuple(refused),
                probed=tuple(kind for kind in EVIDENCE if kind in probed),
            )
            if not refused:
                return found, mismatches
            if partial is None or len(refused) < len(partial.refused):
                partial = found  # a family that writes all of them may come later
        if mismatch is not None:
            mismatches.append(mismatch)
    return partial, mismatches


def refuses_without_tools(
    runner: TemplateRunner,
    probe: Probe,
    variables: dict[str, Any],
    cache: dict[str, Any],
    messages: Sequence[Mapping[str, Any]] | None = None,
) -> bool:
    """Whether the template refused ``probe`` because it declares no tools, and renders it
    once it does (a ``tool_use`` template, such as Hermes 2 Pro's, iterates ``tools``;
    Hugging Face uses another template of the model for a request without them).
    ``messages``: the probe's messages as the template's callers shape them."""
    if probe.tools:
        return False
    given = probe.messages if messages is None else messages
    key = json.dumps(
        ["with tools", probe.name, given, variables, str(runner.today)], sort_keys=True
    )
    found = cache.get(key)
    if found is None:
        found = cache[key] = runner.render(
            given,
            [_WEATHER],
            add_generation_prompt=probe.add_generation_prompt,
            variables=variables,
        )
    return found.text is not None


# ------------------------------------------------------------------ detection


def detect_template(
    template: str,
    variables: Mapping[str, str] | None = None,
    *,
    bos_token: str | None = None,
    eos_token: str | None = None,
    today: datetime.date | None = None,
    special_tokens: Iterable[str] | None = None,
    declared: bool = True,
    infer: bool = True,
    name: str = "inferred",
    probes: Iterable[Probe] = PROBES,
) -> Detection:
    """:func:`detect` for a template given as text.

    ``bos_token``/``eos_token`` (or ``variables``, a mapping holding them): what the tokenizer
    gives the template; ``today``: the date its clock reads; ``special_tokens``: the
    tokenizer's added tokens (None: told by their shape); ``declared``/``infer``: try the
    declared families, inference; ``name``: the inferred declaration's name.
    """
    given = dict(variables or {})
    bos_token = bos_token if bos_token is not None else given.get("bos_token")
    eos_token = eos_token if eos_token is not None else given.get("eos_token")
    tokens = {
        key: value
        for key, value in (("bos_token", bos_token), ("eos_token", eos_token))
        if value is not None
    }
    runner = TemplateRunner(template, tokens, today=today or DEFAULT_TODAY)
    mismatches: list[Mismatch] = []
    supplied = frozenset(tokens)
    read = frozenset(read_variables(runner)) & {"bos_token", "eos_token"}
    if declared:
        found, mismatches = _declared(runner, list(probes))
        if found is not None:
            return dataclasses.replace(found, given=supplied, read=read)
    if not infer:
        return Detection(None, None, None, (), tuple(mismatches), given=supplied, read=read)
    inference = infer_template(
        template,
        bos_token=bos_token,
        eos_token=eos_token,
        today=today,
        special_tokens=special_tokens,
        name=name,
    )
    return Detection(
        inference.format,
        name if inference.format is not None else None,
        None,
        (),
        tuple(mismatches),
        inference,
        given=supplied,
        read=read,
    )


def _name_of(directory: Path) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", directory.resolve().name).strip("-.") or "model"
    return f"inferred-{slug}"[:100]


def detect(
    directory: str | Path,
    probes: Iterable[Probe] = PROBES,
    *,
    today: datetime.date | None = None,
    declared: bool = True,
    infer: bool = True,
    template_file: str | Path | None = None,
) -> Detection:
    """The format of a model or tokenizer directory's chat template (see the module).

    ``template_file``: the chat template, named explicitly (a model directory holding
    several, or none); the directory still gives the special tokens."""
    if template_file is None:
        template, variables = read_chat_template(directory)
    else:
        template = read_template_file(template_file)
        variables = read_token_variables(directory)
    return detect_template(
        template,
        bos_token=variables.get("bos_token"),
        eos_token=variables.get("eos_token"),
        today=today,
        special_tokens=read_special_tokens(directory),
        declared=declared,
        infer=infer,
        name=_name_of(Path(directory)),
        probes=probes,
    )


def format_of_directory(directory: str | Path) -> Format:
    """The format :func:`detect` finds for a directory (what ``-f DIR`` uses): a declared
    family, or the inferred declaration, registered under its name in this process.  A
    template neither can write is a :class:`~pawlette.errors.RequestError` saying why."""
    detection = detect(directory)
    if detection.format is None or detection.name is None:
        reason = detection.inference.refusal if detection.inference is not None else "none"
        raise RequestError(
            str(directory),
            f"no declared family writes its chat template, and inference was refused ({reason})",
            "a model directory whose chat template pawlette can declare or infer",
        )
    if detection.inferred:
        from .formats import register_format

        register_format(detection.format, replace=True)
        _INFERRED.add(detection.format.name)
    return detection.format


# ------------------------------------------------------------------ verification


VERIFY_CONVERSATIONS = 24
"""Generated conversations :func:`verify` compares by default (each with and without the
generation prompt when it awaits the model: about 40 renders)."""

_WINDOW = 48
"""Characters shown on each side of where two renders part."""
_SHOWN = 200
"""Characters of a conversation's messages (JSON) a report shows."""


@dataclass(frozen=True)
class Difference:
    """One render the declaration writes otherwise than the template.

    ``request``: the generated conversation (OpenAI JSON); ``add_generation_prompt``: whether
    it was rendered with the generation prompt; ``offset``: where the two texts part;
    ``template``/``declaration``: the two whole texts; ``losses``: what the declaration's
    rendering reports it did not write; ``explained``: the template, given the conversation
    less those losses, writes what the declaration wrote (the difference is what the
    declaration says it drops); an unexplained difference is a mistake in the declaration
    (or a loss it does not report).
    """

    request: Mapping[str, Any]
    add_generation_prompt: bool
    offset: int
    template: str
    declaration: str
    losses: tuple[str, ...] = ()
    explained: bool = False

    def describe(self) -> str:
        start = max(0, self.offset - _WINDOW)
        end = self.offset + _WINDOW
        said = (
            f"offset {self.offset} (generation prompt: {self.add_generation_prompt}): the "
            f"template wrote {self.template[start:end]!r}, the declaration wrote "
            f"{self.declaration[start:end]!r}"
        )
        if self.losses:
            state = "explained by" if self.explained else "not explained by"
            said += f"; {state} its losses: " + "; ".join(self.losses)
        return f"{said}; in {_conversation_of(self.request)}"


@dataclass(frozen=True)
class Refusal:
    """A conversation one side refuses and the other renders: ``reason`` is the refusing
    side's message (the declaration's :class:`~pawlette.errors.RequestError`, or what the
    template raised)."""

    request: Mapping[str, Any]
    add_generation_prompt: bool
    reason: str

    def describe(self) -> str:
        return (
            f"{self.reason} (generation prompt: {self.add_generation_prompt}); in "
            f"{_conversation_of(self.request)}"
        )


@dataclass(frozen=True)
class TemplateVerification:
    """What :func:`verify` found, render by render.

    - ``format``: the verified format's name; ``compared``: the renders compared (each
      generated conversation with the generation prompt when it awaits the model, and
      without);
    - ``identical``: renders both wrote byte for byte alike; ``both_refused``: renders both
      refused;
    - ``differences``: the renders that differ, in order (each says where, and whether the
      declaration's losses explain it);
    - ``refused``: renders the template writes and the declaration refuses (what it cannot
      express: not a mistake, but what a request to it cannot hold);
    - ``template_refused``: renders the declaration writes and the template refuses (it
      raised: the model never saw such a conversation);
    - ``untested``: what the declaration's ``Layout.template_untested`` kept out of the
      generated conversations.
    """

    format: str
    compared: int
    identical: int
    both_refused: int = 0
    differences: tuple[Difference, ...] = ()
    refused: tuple[Refusal, ...] = ()
    template_refused: tuple[Refusal, ...] = ()
    untested: tuple[str, ...] = ()
    turns: TurnReport | None = None

    @property
    def unread(self) -> tuple[TurnDifference, ...]:
        """The template's own assistant turns the declaration does not read back."""
        return () if self.turns is None else self.turns.unread

    @property
    def unexplained(self) -> tuple[Difference, ...]:
        """The differences the declaration's losses do not explain: its mistakes."""
        return tuple(item for item in self.differences if not item.explained)

    @property
    def explained(self) -> tuple[Difference, ...]:
        """The differences that are what the declaration says it does not write."""
        return tuple(item for item in self.differences if item.explained)

    @property
    def passed(self) -> bool:
        """No unexplained difference and every own turn the template writes read back
        (refusals on either side are listed, not failures)."""
        return not self.unexplained and not self.unread

    def describe(self, shown: int = 3) -> str:
        """A short report: the figures, then up to ``shown`` of each kind of disagreement."""
        lines = [
            f"{self.format}: {self.identical}/{self.compared} renders identical"
            + (f", {self.both_refused} refused by both" if self.both_refused else "")
            + f"; {len(self.unexplained)} unexplained differences, {len(self.explained)}"
            f" explained by losses; the declaration refuses {len(self.refused)}, the template"
            f" {len(self.template_refused)}"
        ]
        if self.turns is not None:
            lines.append(_turns_line(self.turns))
        if self.untested:
            lines.append(f"not compared (Layout.template_untested): {', '.join(self.untested)}")
        sections: tuple[tuple[str, tuple[Any, ...]], ...] = (
            ("unexplained differences", self.unexplained),
            ("explained by losses", self.explained),
            ("refused by the declaration", self.refused),
            ("refused by the template", self.template_refused),
        )
        for title, items in sections:
            if not items:
                continue
            lines.append(f"{title}:")
            lines += [f"  {item.describe()}" for item in items[:shown]]
            if len(items) > shown:
                lines.append(f"  ... and {len(items) - shown} more")
        if self.unread:
            lines.append("own turns not read back:")
            lines += [_indented(_turn_problem(item)) for item in self.unread[:shown]]
            if len(self.unread) > shown:
                lines.append(f"  ... and {len(self.unread) - shown} more")
        return "\n".join(lines)


def _turns_line(report: TurnReport) -> str:
    """The own turns' figures: read back of those the template writes, and why the rest
    were not read."""
    notes = []
    if report.within_losses:
        notes.append(f"{report.within_losses} within the declaration's losses")
    if report.unread:
        notes.append(f"{len(report.unread)} not read back")
    refused, uncut = report.count("refused"), report.count("not a prefix")
    if uncut:
        notes.append(f"{uncut} not cut out of the template's renders")
    if refused:
        notes.append(f"{refused} in conversations the template refuses")
    if report.count("format refused"):
        notes.append(f"{report.count('format refused')} in conversations the declaration refuses")
    said = f"own turns: {report.parsed_back}/{report.written} parsed back"
    return said + (f" ({'; '.join(notes)})" if notes else "")


def _turn_problem(item: TurnDifference) -> str:
    """One own turn not read back: the conversation, the turn's text, what the declaration
    read and what it was expected to read (the message less its declared losses)."""
    lines = [
        f"messages[{item.index}] of {_conversation_of(_request_of(item))}",
        f"the template wrote the turn {item.turn_text[:_SHOWN]!r}",
    ]
    if item.problem == "parse failed":
        lines.append(f"parsing it failed: {item.message}")
    else:
        lines.append(f"read back: {json.dumps(item.found, ensure_ascii=False)}")
        lines.append(f"expected:  {json.dumps(item.expected, ensure_ascii=False)}")
        lines.append(f"(first differing field: {item.field})")
    if item.losses:
        lines.append("declared losses of this message: " + "; ".join(item.losses))
    return "\n".join(lines)


def _request_of(item: TurnDifference) -> dict[str, Any]:
    return {"messages": item.conversation.messages, "tools": item.conversation.tools}


def _indented(text: str) -> str:
    """The first line indented as a listed item, the rest under it."""
    lines = text.splitlines()
    return "\n".join([f"  {lines[0]}", *(f"    {line}" for line in lines[1:])])


def _conversation_of(request: Mapping[str, Any]) -> str:
    messages = json.dumps(request.get("messages"), ensure_ascii=False)
    shown = messages if len(messages) <= _SHOWN else messages[:_SHOWN] + "…"
    tools = request.get("tools")
    return f"conversation {shown}" + (f" with {len(tools)} tool(s)" if tools else "")


def _first_difference(left: str, right: str) -> int:
    for offset, (one, other) in enumerate(zip(left, right, strict=False)):
        if one != other:
            return offset
    return min(len(left), len(right))


_LOSS = re.compile(r"messages\[(\d+)\](?:\.(\w+)(?:\[(\d+)\])?)?: (.*)")


def _without_losses(
    messages: list[dict[str, Any]], losses: Iterable[str]
) -> list[dict[str, Any]] | None:
    """The messages less what ``losses`` say the declaration did not write (a field, a call,
    a whole message, text trimmed at its ends); None: a loss this cannot take away."""
    result = [dict(message) for message in messages]
    dropped: set[int] = set()
    for loss in losses:
        found = _LOSS.fullmatch(loss)
        if found is None or int(found.group(1)) >= len(result):
            return None
        index, field, item, what = int(found.group(1)), found.group(2), found.group(3), found[4]
        message = result[index]
        if field is None:
            dropped.add(index)
        elif item is not None:
            listed = list(message.get(field) or ())
            if int(item) < len(listed):
                del listed[int(item)]
            message[field] = listed
        elif field == "content" and "trimmed" in what and isinstance(message.get(field), str):
            text = message[field]
            # A Trimmed loss says its side and characters; another ("trimmed at its start",
            # Reasoning's) its side alone: whitespace.
            said = trim_of_loss(what)
            words = re.findall(r"\w+", what)
            side = "start" if "start" in words else "end" if "end" in words else "both"
            side, characters = (side, None) if said is None else said
            strip = {"both": str.strip, "start": str.lstrip, "end": str.rstrip}[side]
            message[field] = strip(text, characters)
        else:
            message.pop(field, None)
    return [message for index, message in enumerate(result) if index not in dropped]


def verify(
    fmt: Format | str,
    template: str,
    *,
    bos_token: str | None = None,
    eos_token: str | None = None,
    today: datetime.date | None = None,
    variables: Mapping[str, Any] | None = None,
    conversations: int = VERIFY_CONVERSATIONS,
    seed: int = 0,
) -> TemplateVerification:
    """Check that ``fmt`` (a format, or a name :func:`~pawlette.get_format` knows) renders
    what the chat ``template`` (its Jinja text) renders, byte for byte.

    ``conversations`` generated conversations (deterministic for a ``seed``: system messages
    first and later, tools, single and parallel calls, results, reasoning, names, non-ASCII,
    Markdown, edge whitespace, empty texts; none holds the declaration's markers) are rendered
    by both, each with the generation prompt when it awaits the model and without.  The
    template runs as ``apply_chat_template`` runs it (:mod:`pawlette.infer.template`: it
    needs ``jinja2``, the ``transformers`` extra) with ``bos_token``/``eos_token``, the
    declaration's own template variables (``Layout.template_variables``, its text options),
    then ``variables`` (which win); its clock reads ``today``, else the declaration's date
    option, else 2024-07-26.

    A difference the declaration's rendering reports as losses is *explained* when the
    template, given the conversation less those losses, writes what the declaration wrote;
    the rest are unexplained (:attr:`TemplateVerification.passed` is False).  What one side
    refuses and the other renders is listed apart.

    >>> verify("chatml:qwen2.5", qwen25_template).passed  # doctest: +SKIP
    True
    """
    from .declare.layout import Layout
    from .infer.conversations import Features, generate
    from .infer.core import marker_texts

    given = fmt
    if isinstance(fmt, str):
        fmt = get_format(fmt)
    # A variant is named as given ("chatml:qwen2.5"); a file or a directory by its format.
    name = given if isinstance(given, str) and given.startswith(f"{fmt.name}:") else fmt.name
    layout = getattr(fmt, "declaration", None)
    declared, declared_today = _reference(fmt)
    tokens = {
        key: value
        for key, value in (("bos_token", bos_token), ("eos_token", eos_token))
        if value is not None
    }
    runner = TemplateRunner(
        template,
        {**tokens, **declared, **(variables or {})},
        today=today or declared_today or DEFAULT_TODAY,
    )
    untested = tuple(getattr(layout, "template_untested", ()))
    features = Features(tools="tools" not in untested, calls="calls" not in untested)
    avoid = marker_texts(layout) if isinstance(layout, Layout) else list(fmt.stop)
    identical = both_refused = 0
    differences: list[Difference] = []
    refused: list[Refusal] = []
    template_refused: list[Refusal] = []
    compared = 0
    renders: dict[str, Any] = {}

    def render(messages: Sequence[Mapping[str, Any]], tools: Any, prompt: bool) -> Any:
        """The template's render, each asked once (the own turns ask for many again)."""
        key = json.dumps([messages, tools, prompt], sort_keys=True, default=str)
        found = renders.get(key)
        if found is None:
            found = renders[key] = runner.render(
                _caller_messages(fmt, messages),
                tools,
                add_generation_prompt=prompt,
                variables=_tools_variables(fmt, tuple(tools or ())),
            )
        return found

    samples = list(generate(conversations, seed=seed, features=features, avoid=avoid))
    for sample in samples:
        tools_variables = _tools_variables(fmt, tuple(sample.tools or ()))
        for prompt in sample.prompts:
            compared += 1
            expected = render(sample.messages, sample.tools, prompt)
            try:
                rendering = fmt.render(sample.request, add_generation_prompt=prompt)
            except RequestError as error:
                if expected.text is None:
                    both_refused += 1
                else:
                    refused.append(Refusal(sample.request, prompt, str(error)))
                continue
            if expected.text is None:
                reason = expected.refusal or "the template raised"
                template_refused.append(Refusal(sample.request, prompt, reason))
            elif expected.text == rendering.text:
                identical += 1
            else:
                explained = False
                reduced = _without_losses(sample.messages, rendering.losses)
                if rendering.losses and reduced is not None:
                    again = runner.render(
                        _caller_messages(fmt, reduced),
                        sample.tools,
                        add_generation_prompt=prompt,
                        variables=tools_variables,
                    )
                    explained = again.text == rendering.text
                differences.append(
                    Difference(
                        sample.request,
                        prompt,
                        _first_difference(expected.text, rendering.text),
                        expected.text,
                        rendering.text,
                        tuple(rendering.losses),
                        explained,
                    )
                )
    # The template's own assistant turns, read back as the declaration says it reads them.
    turns = own_turns(fmt, render, samples, name=name, within_losses=True, declared=True)
    return TemplateVerification(
        name,
        compared,
        identical,
        both_refused,
        tuple(differences),
        tuple(refused),
        tuple(template_refused),
        tuple(item for item in untested if item in ("tools", "calls")),
        turns,
    )
