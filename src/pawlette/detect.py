"""Name the pawlette format a model directory's chat template writes.

:func:`detect` reads a Hugging Face model or tokenizer directory's ``chat_template``
(``chat_template.jinja``, or ``tokenizer_config.json``'s ``chat_template``, the ``default``
one when it holds several), renders a fixed set of probe conversations with it, and compares
each with what every registered format renders (for declared formats, also each named option
set the declaration lists in ``variants``, such as chatml's ``qwen2.5``).  The first format
that renders every probe it can express identically is the answer; when none does, the
answer says so and gives, for each format, the first probe that differed.

The template runs in a Jinja environment set up as transformers sets up its own
(``ImmutableSandboxedEnvironment`` with ``trim_blocks``/``lstrip_blocks``, ``loopcontrols``,
a ``tojson`` that keeps non-ASCII text, ``raise_exception``, the ``generation`` tag), with the
directory's ``bos_token``/``eos_token`` and the candidate's options (Llama 3's
``date_string``: the date is never read from a clock).  It needs ``jinja2`` (the
``transformers`` extra).

>>> from pawlette.detect import detect  # doctest: +SKIP
>>> detect("Qwen3-0.6B").name  # doctest: +SKIP
'chatml'
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import PawletteError, RequestError
from .format import Format
from .formats import formats, get_format

__all__ = ["Detection", "Probe", "detect", "detect_template", "read_chat_template"]

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


def _call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "call_0", "type": "function", "function": {"name": name, "arguments": arguments}}


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
        "tools prompt",
        ({"role": "user", "content": "Weather in Paris?"},),
        tools=(_WEATHER,),
        add_generation_prompt=True,
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
    """The first probe where a candidate and the directory's template differ."""

    candidate: str
    probe: str
    expected: str
    """What the directory's template rendered."""
    rendered: str
    """What the candidate rendered."""


@dataclass(frozen=True)
class Detection:
    """The answer of :func:`detect`: ``format`` (None: no registered format matches),
    the registered ``name`` and the ``variant`` (a declaration's named options, or None),
    the probes compared, and per other candidate the first probe that differed."""

    format: Format | None
    name: str | None
    variant: str | None
    compared: tuple[str, ...]
    mismatches: tuple[Mismatch, ...]

    def describe(self) -> str:
        if self.format is not None:
            variant = f" (variant {self.variant})" if self.variant else ""
            return f"{self.name}{variant}: {len(self.compared)} probes rendered identically"
        lines = ["no registered format renders this chat template"]
        for mismatch in self.mismatches:
            lines.append(
                f"  {mismatch.candidate}: first differs on probe {mismatch.probe!r}: "
                f"template {mismatch.expected[:120]!r} vs {mismatch.rendered[:120]!r}"
            )
        return "\n".join(lines)


# ------------------------------------------------------------------ the directory


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def read_chat_template(directory: str | Path) -> tuple[str, dict[str, str]]:
    """The directory's chat template and its special-token variables (``bos_token``...)."""
    folder = Path(directory)
    config_path = folder / "tokenizer_config.json"
    config: dict[str, Any] = {}
    if config_path.is_file():
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RequestError(str(config_path), f"unreadable ({error})", "JSON") from error
        if not isinstance(config, dict):
            raise RequestError(str(config_path), f"a JSON {type(config).__name__}", "an object")
    variables = {
        key: text
        for key in ("bos_token", "eos_token", "unk_token", "pad_token")
        if (text := _token_text(config.get(key))) is not None
    }
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


# ------------------------------------------------------------------ Jinja as transformers runs it


def _environment() -> Any:
    try:
        import jinja2
        from jinja2.ext import Extension, loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as error:  # pragma: no cover - the extra is installed in the tests
        raise PawletteError("detect needs jinja2: pip install 'pawlette[transformers]'") from error

    class Generation(Extension):
        """``{% generation %}...{% endgeneration %}``: renders its body (the mask is not
        needed here)."""

        tags = {"generation"}  # noqa: RUF012 (jinja2 declares it so)

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.Scope(body, lineno=lineno)

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: Any = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            value,
            ensure_ascii=ensure_ascii,
            indent=indent,
            separators=separators,
            sort_keys=sort_keys,
        )

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, loopcontrols]
    )
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    return environment


def _hugging_face(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI messages as Hugging Face callers pass them: arguments parsed, no None."""
    result = []
    for message in messages:
        copy = {key: value for key, value in message.items() if value is not None}
        if copy.get("tool_calls"):
            copy["tool_calls"] = [
                {
                    **call,
                    "function": {
                        **call["function"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    },
                }
                for call in copy["tool_calls"]
            ]
        result.append(copy)
    return result


def _option_variables(fmt: Format) -> dict[str, Any]:
    """A declared format's options by name (the Option pieces' template variables)."""
    options = fmt.options
    if options is None or not dataclasses.is_dataclass(options):
        return {}
    return {
        field.name: getattr(options, field.name)
        for field in dataclasses.fields(options)
        if isinstance(getattr(options, field.name), str)
    }


# ------------------------------------------------------------------ candidates


def _candidates() -> list[tuple[str, str | None, Format]]:
    result: list[tuple[str, str | None, Format]] = []
    for name in formats():
        fmt = get_format(name)
        result.append((name, None, fmt))
        layout = getattr(fmt, "declaration", None)
        for variant, options in (getattr(layout, "variants", None) or {}).items():
            result.append((name, variant, fmt.with_options(**dataclasses.asdict(options))))
    return result


def detect_template(
    template: str, variables: Mapping[str, str] | None = None, probes: Iterable[Probe] = PROBES
) -> Detection:
    """:func:`detect` for a template given as text."""
    environment = _environment()
    import jinja2

    try:
        compiled = environment.from_string(template)
    except jinja2.TemplateSyntaxError as error:
        raise RequestError(
            "chat_template", f"not valid Jinja ({error.message}, line {error.lineno})", "a template"
        ) from error
    probe_list = list(probes)
    mismatches: list[Mismatch] = []
    for name, variant, fmt in _candidates():
        compared: list[str] = []
        mismatch: Mismatch | None = None
        for probe in probe_list:
            try:
                rendered = fmt.render(
                    list(probe.messages),
                    list(probe.tools) or None,
                    add_generation_prompt=probe.add_generation_prompt,
                ).text
            except RequestError:
                continue  # the candidate cannot express this probe
            try:
                expected = compiled.render(
                    messages=_hugging_face(probe.messages),
                    tools=[dict(tool) for tool in probe.tools] or None,
                    add_generation_prompt=probe.add_generation_prompt,
                    **{**_option_variables(fmt), **(variables or {})},
                )
            except Exception as error:  # the directory's template refuses the probe
                mismatch = Mismatch(name, probe.name, f"<error: {error}>", rendered)
                break
            if expected != rendered:
                mismatch = Mismatch(name, probe.name, expected, rendered)
                break
            compared.append(probe.name)
        label = name if variant is None else f"{name} ({variant})"
        if mismatch is None and len(compared) >= 3:
            return Detection(fmt, name, variant, tuple(compared), tuple(mismatches))
        if mismatch is not None:
            mismatches.append(dataclasses.replace(mismatch, candidate=label))
    return Detection(None, None, None, (), tuple(mismatches))


def detect(directory: str | Path, probes: Iterable[Probe] = PROBES) -> Detection:
    """The registered format whose render equals the directory's chat template on the probe
    conversations (see the module docstring)."""
    template, variables = read_chat_template(directory)
    return detect_template(template, variables, probes)
