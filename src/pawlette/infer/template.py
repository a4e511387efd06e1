"""A chat template run as Hugging Face's ``apply_chat_template`` runs it, with a frozen clock.

The environment is set up the way transformers sets up its own: a sandboxed Jinja
environment with ``trim_blocks`` and ``lstrip_blocks``, the ``loopcontrols`` extension, the
``{% generation %}`` tag, a ``tojson`` filter that keeps non-ASCII text and takes ``indent``,
``separators`` and ``sort_keys``, ``raise_exception``, ``dict`` and a ``namespace`` that refuses
private names.  Messages are passed as Hugging Face callers pass them: keys whose value is
``None`` dropped, call arguments parsed into objects, reasoning under ``reasoning_content`` and
``thinking`` both (transformers copies one to the other).  ``strftime_now`` never reads the
machine's clock: it writes the :class:`TemplateRunner`'s ``today`` (at midnight), and the
runner notes that the template read it.

A template may refuse a message that lacks a field its callers always pass.  The runner
then renders the messages again the way those callers shape them (:data:`CALLER_SHAPES`,
tried in that order, then together), and notes which shapes a render needed:

- ``empty content``: ``"content": ""`` on an assistant message without content (Qwen 3's
  template reads ``message.content`` of every turn, a turn of calls too);
- ``empty reasoning``: ``"reasoning_content": ""`` on an assistant message without
  reasoning (IFM-K2-Horizon's template raises "missing a thinking field" otherwise).

A render the template gives for the messages as passed is never reshaped.

It needs ``jinja2`` (the ``transformers`` extra).
"""

from __future__ import annotations

import contextlib
import datetime
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import PawletteError, RequestError

__all__ = [
    "CALLER_SHAPES",
    "DEFAULT_TODAY",
    "Rendered",
    "TemplateRunner",
    "caller_shaped",
    "hugging_face_messages",
]

DEFAULT_TODAY = datetime.date(2024, 7, 26)
"""The date a template's clock reads unless told otherwise (Llama 3.1's own default)."""

_REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")

CALLER_SHAPES = ("empty content", "empty reasoning")
"""How callers shape an assistant message for a template that refuses it otherwise (see the
module docstring), in the order the runner tries them."""

_SHAPE_KEYS = {"empty content": ("content",), "empty reasoning": _REASONING_KEYS}
"""The keys a shape gives (the first of them, empty) to a message that has none of them."""


def caller_shaped(messages: Iterable[Mapping[str, Any]], shape: str) -> list[dict[str, Any]] | None:
    """The messages with ``shape`` (one of :data:`CALLER_SHAPES`) given to each assistant
    message that lacks it; None when none lacks it (the shape changes nothing).

    >>> caller_shaped([{"role": "assistant", "content": "Hi."}], "empty reasoning")
    [{'role': 'assistant', 'content': 'Hi.', 'reasoning_content': ''}]
    """
    if shape not in _SHAPE_KEYS:
        raise ValueError(f"no caller shape {shape!r}: expected one of {CALLER_SHAPES}")
    keys = _SHAPE_KEYS[shape]
    listed = [dict(message) for message in messages]
    changed = False
    for message in listed:
        if message.get("role") == "assistant" and all(message.get(key) is None for key in keys):
            message[keys[0]] = ""
            changed = True
    return listed if changed else None


def hugging_face_messages(
    messages: Iterable[Mapping[str, Any]], *, empty_content: bool = False
) -> list[dict[str, Any]]:
    """OpenAI messages as Hugging Face callers pass them to a chat template.

    ``empty_content``: an assistant message without content gets ``""`` (templates that read
    ``message.content`` of every message need it).

    >>> call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    >>> hugging_face_messages([{"role": "assistant", "content": None, "tool_calls": [call]}])
    [{'role': 'assistant', 'tool_calls': [{'id': 'a', 'type': 'function', \
'function': {'name': 'f', 'arguments': {'x': 1}}}]}]
    """
    result = []
    for message in messages:
        copy = {key: value for key, value in message.items() if value is not None}
        if empty_content and copy.get("role") == "assistant" and "content" not in copy:
            copy["content"] = ""
        calls = copy.get("tool_calls")
        if calls:
            converted = []
            for call in calls:
                function = dict(call.get("function") or {})
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    with contextlib.suppress(ValueError):  # text that is not JSON stays text
                        function["arguments"] = json.loads(arguments)
                converted.append({**call, "function": function})
            copy["tool_calls"] = converted
        reasoning = next((copy[key] for key in _REASONING_KEYS if copy.get(key) is not None), None)
        if reasoning is not None:  # what transformers does before rendering
            copy = {"thinking": reasoning, **copy, "reasoning_content": reasoning}
        result.append(copy)
    return result


@dataclass(frozen=True)
class Rendered:
    """A render: its ``text``, or the ``refusal`` (the template raised: its message for the
    messages as passed); ``shapes``: the :data:`CALLER_SHAPES` the messages were given for
    the template to render them."""

    text: str | None
    refusal: str | None = None
    shapes: tuple[str, ...] = ()


def _jinja() -> Any:
    try:
        import jinja2
    except ImportError as error:  # pragma: no cover - the extra is installed in the tests
        raise PawletteError(
            "reading a chat template needs jinja2: pip install -e '.[transformers]' in pawlette's"
            " repository"
        ) from error
    return jinja2


class _Clock:
    """What ``strftime_now`` reads: a date, never the machine's clock."""

    def __init__(self, today: datetime.date) -> None:
        self.today = today
        self.read = False

    def strftime_now(self, date_format: str) -> str:
        self.read = True
        return datetime.datetime.combine(self.today, datetime.time()).strftime(date_format)


def _environment(clock: _Clock) -> Any:
    jinja2 = _jinja()
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(Extension):
        """``{% generation %}...{% endgeneration %}``: its body, as written."""

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

    class PlainDict:
        def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict(*args, **kwargs)

        def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict.fromkeys(*args, **kwargs)

    class Namespace(jinja2.utils.Namespace):  # type: ignore[misc,name-defined]
        """A namespace that refuses private names, as transformers' does."""

        def __init__(*args: Any, **kwargs: Any) -> None:
            self, rest = args[0], args[1:]
            for name in dict(*rest, **kwargs):
                Namespace.check(name)
            jinja2.utils.Namespace.__init__(self, dict(*rest, **kwargs))

        def __setitem__(self, name: str, value: Any) -> None:
            Namespace.check(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def check(name: Any) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(f"a private namespace name {name!r}")

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, loopcontrols]
    )
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = clock.strftime_now
    environment.globals["dict"] = PlainDict()
    environment.globals["namespace"] = Namespace
    return environment


class TemplateRunner:
    """One chat template, compiled once, rendered as ``apply_chat_template`` renders it.

    ``variables``: what the template gets besides the messages (``bos_token``,
    ``eos_token``, ``enable_thinking``...); ``today``: what its clock reads;
    ``empty_content``: see :func:`hugging_face_messages`; ``shaped``: whether a refused
    render is tried again with the messages shaped as callers shape them (see the module).
    """

    def __init__(
        self,
        template: str,
        variables: Mapping[str, Any] | None = None,
        *,
        today: datetime.date = DEFAULT_TODAY,
        empty_content: bool = False,
        shaped: bool = True,
    ) -> None:
        jinja2 = _jinja()
        self.template = template
        self.variables = dict(variables or {})
        self.empty_content = empty_content
        self.shaped = shaped
        self.listed_tools = False
        """Whether ``tools`` is passed as a list, empty without tools (the callers of a
        template that iterates ``tools`` always pass one: see :mod:`.listed_tools`)."""
        self.needed: set[str] = set()
        """The :data:`CALLER_SHAPES` any render so far needed."""
        self._clock = _Clock(today)
        try:
            self._compiled = _environment(self._clock).from_string(template)
        except jinja2.TemplateSyntaxError as error:
            raise RequestError(
                "chat_template",
                f"not valid Jinja ({error.message}, line {error.lineno})",
                "a Jinja chat template",
            ) from error

    @property
    def today(self) -> datetime.date:
        return self._clock.today

    @today.setter
    def today(self, value: datetime.date) -> None:
        self._clock.today = value

    @property
    def environment(self) -> Any:
        """The Jinja environment the template is compiled in (to parse it again)."""
        return self._compiled.environment

    @property
    def read_clock(self) -> bool:
        """Whether any render so far called ``strftime_now``."""
        return self._clock.read

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        add_generation_prompt: bool = False,
        variables: Mapping[str, Any] | None = None,
    ) -> Rendered:
        """The template's text for ``messages`` (OpenAI JSON), or its refusal; a refused
        render is tried again with the messages shaped as callers shape them (``shaped``)."""
        given = {**self.variables, **(variables or {})}
        # A variable named ``tools`` is the tools as the template's callers pass them
        # (Command R+'s pass a list, empty without tools: ``Layout.tools_variables``).
        passed = [dict(tool) for tool in tools or ()]
        listed = given.pop("tools", passed if passed or self.listed_tools else None)
        found = self._render(messages, listed, add_generation_prompt, given)
        if found.text is not None or not self.shaped:
            return found
        for shapes in (*((shape,) for shape in CALLER_SHAPES), CALLER_SHAPES):
            reshaped: list[dict[str, Any]] | None = [dict(message) for message in messages]
            for shape in shapes:
                reshaped = caller_shaped(reshaped or (), shape)
                if reshaped is None:
                    break  # the shape changes nothing: tried already (or as passed)
            if reshaped is None:
                continue
            again = self._render(reshaped, listed, add_generation_prompt, given)
            if again.text is not None:
                self.needed.update(shapes)
                return Rendered(again.text, None, shapes)
        return found

    def _render(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Any,
        add_generation_prompt: bool,
        variables: Mapping[str, Any],
    ) -> Rendered:
        try:
            text = self._compiled.render(
                messages=hugging_face_messages(messages, empty_content=self.empty_content),
                tools=tools,
                documents=None,
                add_generation_prompt=add_generation_prompt,
                **variables,
            )
        except Exception as error:  # the template raised or failed: it cannot render this
            return Rendered(None, f"{type(error).__name__}: {error}")
        return Rendered(str(text))

    def text(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        add_generation_prompt: bool = False,
    ) -> str | None:
        """The template's text, or None when it refused."""
        return self.render(messages, tools, add_generation_prompt=add_generation_prompt).text
