"""JSON Schema to grammar rules for values written as Python literals (chatglm3, breeze).

Python-call formats write a call's arguments as keyword arguments, each value as
:func:`pawlette.codecs.python_literals.python_literal` writes it: strings in one quote style (or
with ``quote="repr"``, breeze's, in single quotes or, holding a ``'`` and no ``"``, double ones)
with ``\\\\``, the quote, ``\\n`` ``\\r`` ``\\t``, ``\\xhh`` and ``\\uhhhh`` escapes; ``True``,
``False``, ``None``; numbers as Python prints them; ``[a, b]`` and ``{'k': v}`` with ``, ``
and ``: ``.  The rules built here accept exactly that layout for values valid under the
schema (the subset :mod:`pawlette.emit.schema_walk` walks for both grammars; keys in the
declared order), except that ``repr`` strings may take either quote around any text, as the
parser reads them (see :class:`PythonValues`).  They are syntax-free
:class:`~pawlette.emit.grammar_ast.Node` trees, so both the Lark and the GBNF writer print
them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from ..codecs.python_calls import is_plain_identifier
from ..codecs.python_literals import python_literal, raw_string_end
from ..errors import UnsupportedFeature
from .grammar_ast import Lit, Node, Ref, Repeat, Rules, Terminal, alt, gbnf_char, optional, seq
from .schema_walk import NodeSchemaWalker, bounds
from .text_language import (
    TextLanguage,
    gbnf_bounded_string_rules,
    gbnf_string_rules,
    lark_without_markers,
)

KEYWORD_EXPECTED = "a Python identifier that is not a keyword"
KEYWORD_HINT = "Python-call formats write arguments as keyword arguments"


def check_keyword_names(schema: Any, where: str) -> None:
    """Refuse an arguments schema whose property names cannot be keyword arguments: a grammar
    that wrote them (``城市 "q"=``, ``<|eot_id|>x=``) would force calls the parser refuses, or
    spell a marker; the writer refuses the same names (``encode_call``)."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return
    for name in properties:
        if not (isinstance(name, str) and is_plain_identifier(name)):
            raise UnsupportedFeature(
                f"{where}.properties",
                f"the argument name {name!r}",
                KEYWORD_EXPECTED,
                KEYWORD_HINT,
            )


# Numbers as the parser reads them back to JSON (codecs/python_calls): an integer is
# converted by ``int`` and a float by ``float``, which refuses what a double cannot hold (JSON
# has no infinity), so the grammar allows only numbers that stay finite: at most
# INTEGER_DIGITS digits before the point and an exponent of at most EXPONENT_DIGITS digits
# (below 10**(200 + 99), far inside a double's range); a fraction may be of any length (it
# can only round, or underflow to 0).  An unbounded exponent let a sampled ``1e0111000``
# through, which the parser refuses.
INTEGER_DIGITS = 200
EXPONENT_DIGITS = 2
INTEGER_REGEX = f"-?(0|[1-9][0-9]{{0,{INTEGER_DIGITS - 1}}})"
NUMBER_REGEX = f"{INTEGER_REGEX}(\\.[0-9]+)?(e[+-]?[0-9]{{1,{EXPONENT_DIGITS}}})?"


def _string_char(quote: str, *, json_escapes: bool = False) -> tuple[str, str, str]:
    """(regex, GBNF, GBNF of one escape sequence) for one character of a string in
    ``quote``; ``json_escapes``: a JSON string as ``json.dumps`` writes it (``\\b``, ``\\f``,
    ``\\u00hh`` below U+0020, other characters raw), which the Python reader reads alike."""
    if json_escapes:
        regex = '([^"\\\\\\x00-\\x1F]|\\\\(["\\\\nrtbf]|u00[01][0-9a-f]))'
        escape = '"\\\\" (["\\\\nrtbf] | "u00" [01] [0-9a-f])'
        return regex, f'[^"\\\\\\x00-\\x1F] | {escape}', escape
    plain = f"[^{quote}\\\\\\x00-\\x1F\\x7F-\\x9F]"
    escaped = f"\\\\([{quote}\\\\nrt]|x[0-9a-f]{{2}}|u[0-9a-f]{{4}})"
    regex = f"({plain}|{escaped})"
    gbnf_quote = '\\"' if quote == '"' else quote
    escape = f'"\\\\" ([{gbnf_quote}\\\\nrt] | "x" [0-9a-f]{{2}} | "u" [0-9a-f]{{4}})'
    gbnf = f"[^{gbnf_quote}\\\\\\x00-\\x1F\\x7F-\\x9F] | {escape}"
    return regex, gbnf, escape


_CONTROLS = "\\x00-\\x1F\\x7F-\\x9F"
"""GBNF class ranges never written plainly inside a string (Python escapes them)."""


def _gbnf_quote(quote: str) -> str:
    return '"\\""' if quote == '"' else f'"{quote}"'


class PythonValues:
    """Rules for Python-literal values in one quote style, shared by all schemas of a grammar.

    ``json_values``: JSON as ``json.dumps`` writes it (``{"k": true}``, with ``quote='"'``), a
    spelling the Python reader reads alike (LFM2.5's template writes an object argument so).
    """

    def __init__(self, rules: Rules, quote: str, *, json_values: bool = False) -> None:
        self.rules = rules
        self.quote = quote
        self.json = json_values
        self.true, self.false, self.none = (
            ("true", "false", "null") if json_values else ("True", "False", "None")
        )
        self.language = TextLanguage(rules.markers, escape=False)
        # "repr" (breeze): Python's repr picks the quote per string (see below).
        self._styles = ["'", '"'] if quote == "repr" else [quote]
        suffix = "DQ" if quote == '"' else "SQ" if quote == "'" else "REPR"
        if json_values:
            suffix = "JSON"
        controls = self.controls = "\\x00-\\x1F" if json_values else _CONTROLS
        self.char_regex: dict[str, str] = {}
        self.char_gbnf: dict[str, str] = {}
        self.escape: dict[str, str] = {}
        for style in self._styles:
            style_suffix = "json" if json_values else "dq" if style == '"' else "sq"
            char_regex, char_gbnf, escape = _string_char(style, json_escapes=json_values)
            char_rule = f"py-char-{style_suffix}"
            body = f"{char_rule}*"
            if rules.markers:
                # No marker spelled inside a string (a marker token would be sampled there).
                base = f"py-str-{style_suffix}"
                strings = gbnf_string_rules(self.language, base, style + "\\", controls, escape)
                rules.gbnf_extra.update(strings)
                char_gbnf, body = f"{base}-char", f"{base}-body"
            rules.gbnf_extra[char_rule] = char_gbnf
            rules.gbnf_extra[f"py-string-{style_suffix}"] = (
                f"{_gbnf_quote(style)} {body} {_gbnf_quote(style)}"
            )
            self.char_regex[style] = char_regex
            self.char_gbnf[style] = char_rule
            self.escape[style] = escape
        lark = f"/{quote}{self.char_regex[quote]}*{quote}/" if quote != "repr" else ""
        if quote == "repr":
            # Either quote, as the parser reads them.  The writer follows repr (double quotes
            # only around text with a ' and no "), but a grammar that demanded that would trap
            # a model that opens a string with " until it writes a ': on a real engine a
            # random model ran out of tokens that way in 6 of 10 forced calls, and a real
            # model writing city="Paris" could not close it.
            rules.gbnf_extra["py-string-repr"] = "py-string-sq | py-string-dq"
            single, double = self.char_regex["'"], self.char_regex['"']
            lark = f"/'{single}*'|\"{double}*\"/"
        self.string = Terminal(
            f"PY_STRING_{suffix}",
            lark=lark_without_markers(self.language, lark),
            gbnf=f"py-string-{suffix.lower()}",
        )
        self.integer = Terminal("PY_INTEGER", lark=f"/{INTEGER_REGEX}/", gbnf="py-integer")
        self.number = Terminal("PY_NUMBER", lark=f"/{NUMBER_REGEX}/", gbnf="py-number")
        self.identifier = Terminal(
            "PY_IDENTIFIER", lark="/[A-Za-z_][A-Za-z0-9_]*/", gbnf="py-identifier"
        )
        rules.gbnf_extra["py-integer"] = f'"-"? ("0" | [1-9] [0-9]{{0,{INTEGER_DIGITS - 1}}})'
        rules.gbnf_extra["py-number"] = (
            f'py-integer ("." [0-9]+)? ("e" [-+]? [0-9]{{1,{EXPONENT_DIGITS}}})?'
        )
        rules.gbnf_extra["py-identifier"] = "[A-Za-z_] [A-Za-z0-9_]*"
        any_name = f"py_any_{suffix.lower()}"
        item = Ref(any_name)
        self.any = Ref(any_name)
        if any_name not in rules.rules:
            rules.add(
                any_name,
                alt(
                    self.string,
                    self.number,
                    Lit(self.true),
                    Lit(self.false),
                    Lit(self.none),
                    seq(Lit("["), optional(seq(item, Repeat(seq(Lit(", "), item)))), Lit("]")),
                    seq(
                        Lit("{"),
                        optional(
                            seq(
                                self.string,
                                Lit(": "),
                                item,
                                Repeat(seq(Lit(", "), self.string, Lit(": "), item)),
                            )
                        ),
                        Lit("}"),
                    ),
                ),
            )

    @property
    def styles(self) -> list[str]:
        """The quotes a string may take."""
        return list(self._styles)

    def literal(self, value: Any) -> Lit:
        """``value`` written as the writer writes it, each marker spelt inside a string broken
        by an escape (:func:`python_literal_text`)."""
        if self.json:
            text = json.dumps(value, ensure_ascii=False)
            return Lit(python_literal_text(text, self.rules.markers, json_escapes=True))
        text = python_literal(value, quote=self.quote)  # type: ignore[arg-type]
        return Lit(python_literal_text(text, self.rules.markers))


def python_literal_text(text: str, markers: tuple[str, ...], *, json_escapes: bool = False) -> str:
    """A Python literal's text (``'<|eot_id|>x'``) with one character of every marker spelt in
    it escaped (``'\\x3c|eot_id|>x'``): the same value, read back by the parser, in text that
    neither the engine's stop strings nor the format's lexer read as the marker (a ``const``,
    an ``enum`` value or a property name spelling one would otherwise end the call the
    grammar forces).  In a literal of JSON values (strings, numbers, ``True``/``False``/
    ``None``, lists, dicts) a marker can only be spelt inside a string, where an escape is
    allowed; a character after an odd run of backslashes belongs to an escape, so the next
    one is escaped instead.  ``\\xhh`` below 0x100, ``\\uhhhh`` in the BMP (what the
    grammar's strings allow; ``json_escapes``: ``\\u00hh`` for both, JSON's spelling)."""
    while True:
        found = [(text.find(marker), marker) for marker in markers if marker and marker in text]
        if not found:
            return text
        start, marker = min(found)
        for position in range(start, start + len(marker)):
            backslashes = 0
            while position - backslashes > 0 and text[position - backslashes - 1] == "\\":
                backslashes += 1
            code = ord(text[position])
            if backslashes % 2 == 0 and code <= 0xFFFF:
                escape = f"\\x{code:02x}" if code < 0x100 and not json_escapes else f"\\u{code:04x}"
                text = text[:position] + escape + text[position + 1 :]
                break
        else:  # pragma: no cover - no marker is a run of escapes and astral characters
            raise ValueError(f"cannot break the marker {marker!r} in {text!r}")


class SchemaToPython(NodeSchemaWalker):
    """Rules for one schema's values (and its ``$defs``), as Python literals."""

    item_separator = ", "  # as Python's repr writes a list or dict

    unenforced = "is not enforced (Python-literal arguments: Lark and GBNF alike)"

    def __init__(self, values: PythonValues, prefix: str, where: str) -> None:
        super().__init__(values.rules, prefix, where)
        self.values = values

    def keyword_arguments(self, schema: Any) -> Node:
        """``k=v, ...`` for an arguments object (identifiers, in the declared order)."""
        self.root = schema
        if not isinstance(schema, Mapping):
            return Lit("")
        check_keyword_names(schema, self.where)
        return self._members(schema, self.where, keyword=True)

    def value(self, schema: Any) -> Node:
        self.root = schema
        return self._schema_value(schema, self.where)

    # --------------------------------------------------------------------------------------

    def _any(self) -> Node:
        return self.values.any

    def _literal(self, value: Any) -> Node:
        return self.values.literal(value)

    def _string(self, low: Any, high: Any) -> Node:
        values = self.values
        if low is None and high is None:
            return values.string
        count = bounds(int(low or 0), high)
        name = f"PY_STRING_{self.prefix.upper()}_{self.counter}"
        self.counter += 1
        rule = name.lower().replace("_", "-")
        lark, gbnf = [], []
        for q in values.styles:
            gbnf_q = _gbnf_quote(q)
            lark.append(f"/{q}{values.char_regex[q]}{count}{q}/")
            gbnf.append(f"{gbnf_q} {values.char_gbnf[q]}{count} {gbnf_q}")
            if self.rules.markers:
                built = gbnf_bounded_string_rules(
                    values.language,
                    rule + ("-dq" if q == '"' else "-sq"),
                    q + "\\",
                    values.controls,
                    values.escape[q],
                    int(low or 0),
                    None if high is None else int(high),
                )
                if built is not None:
                    strings, first = built
                    self.rules.gbnf_extra.update(strings)
                    gbnf[-1] = f"{gbnf_q} {first} {gbnf_q}"
        self.rules.gbnf_extra[rule] = " | ".join(gbnf)
        regex = lark[0] if len(lark) == 1 else "(" + " | ".join(lark) + ")"
        return Terminal(name, lark=lark_without_markers(values.language, regex), gbnf=rule)

    def _scalar(self, kind: str) -> Node | None:
        if kind == "integer":
            return self.values.integer
        if kind == "number":
            return self.values.number
        if kind == "boolean":
            return alt(Lit(self.values.true), Lit(self.values.false))
        if kind == "null":
            return Lit(self.values.none)
        return None

    def _member(self, name: str | None, value: Node, keyword: bool) -> Node:
        values = self.values
        key: Node
        if name is None:
            key = values.identifier if keyword else values.string
        else:
            key = Lit(name) if keyword else values.literal(name)
        return seq(key, Lit("=") if keyword else Lit(": "), value)

    def _open_tails(self, extra: Node | None) -> tuple[Node, Node]:
        after: Node = Repeat(seq(Lit(", "), extra)) if extra is not None else Lit("")
        start: Node = optional(seq(extra, after)) if extra is not None else Lit("")
        return self._new(after), self._new(start)


RAW_REGEX = "'([^']|'[^'),])*'"
"""A string raw between single quotes, as the Lark regex of its text."""


def raw_string(values: PythonValues) -> Terminal:
    """A string written raw between single quotes (LFM2.5's template writes a string argument
    ``"'" + value + "'"``): any text, spelling no marker, in which a ``'`` is followed by a
    character other than ``'``, ``)`` and ``,`` (what
    :func:`~pawlette.codecs.python_literals.raw_string_end` lets the writer write; the reader
    reads more).  Such a ``'`` can never end the string, so llguidance's greedy lexer ends it
    where the reader does."""
    rules = values.rules
    if "py-string-raw" not in rules.gbnf_extra:
        # A marker's first character after a ' goes on through ``lead`` (the automaton then
        # follows the marker); one it does not follow (a control character) is plain text.
        starts = {marker[0] for marker in rules.markers if marker}
        follower = "')," + "".join(
            sorted(c for c in starts if c >= " " and not "\x7f" <= c <= "\x9f")
        )
        escape = '"\'" [^' + "".join(gbnf_char(c, in_class=True) for c in follower) + "]"
        body = "py-raw-char*"
        rules.gbnf_extra["py-raw-char"] = "[^'] | \"'\" [^'),]"
        if rules.markers:
            strings = gbnf_string_rules(values.language, "py-str-raw", "'", "", escape, '"\'"')
            rules.gbnf_extra.update(strings)
            body = "py-str-raw-body"
        rules.gbnf_extra["py-string-raw"] = f'"\'" {body} "\'"'
    lark = lark_without_markers(values.language, f"/{RAW_REGEX}/")
    return Terminal("PY_STRING_RAW", lark=lark, gbnf="py-string-raw")


Spot = Literal["argument", "python", "json"]


class TemplateArguments(SchemaToPython):
    """Rules for a call's keyword arguments as LFM2.5's template writes them (``PythonCalls``
    with ``spelling="template"``): an argument that is a string raw between single quotes
    (:func:`raw_string`), an object as JSON (``json_values``), anything else as Python's
    ``repr`` (``values``, ``quote="repr"``); inside a list Python's spelling goes on, inside
    an object JSON's.  ``minLength``/``maxLength`` of a raw string are not enforced."""

    def __init__(
        self, values: PythonValues, json_values: PythonValues, prefix: str, where: str
    ) -> None:
        super().__init__(values, prefix, where)
        self.python_values = values
        self.json_values = json_values
        self.raw = raw_string(values)
        self.spot: Spot = "argument"
        # A $ref is spelt as the place it is used in: one rule per place.
        self._references: dict[Spot, dict[str, str]] = {"argument": self.refs}

    @contextmanager
    def _inside(self, spot: Spot) -> Iterator[None]:
        saved = (self.spot, self.values, self.refs)
        self.spot = spot
        self.values = self.json_values if spot == "json" else self.python_values
        self.refs = self._references.setdefault(spot, {})
        try:
            yield
        finally:
            self.spot, self.values, self.refs = saved

    def _reference_name(self, number: int) -> str:
        return f"{self.prefix}_{self.spot}_ref{number}"

    def _typed(self, kind: str, schema: Mapping[str, Any], where: str) -> Node:
        if self.spot != "argument":
            return super()._typed(kind, schema, where)
        if kind == "string":
            for key in ("minLength", "maxLength"):
                if key in schema:
                    self._note(where, f"{key!r} of a string written raw")
            return self.raw
        if kind in ("object", "array"):
            with self._inside("json" if kind == "object" else "python"):
                return super()._typed(kind, schema, where)
        return super()._typed(kind, schema, where)

    def _literal(self, value: Any) -> Node:
        if self.spot != "argument":
            return super()._literal(value)
        if isinstance(value, str):
            spelt = [marker for marker in self.rules.markers if marker and marker in value]
            if raw_string_end(value) is not None or spelt:
                raise UnsupportedFeature(
                    self.where,
                    f"the value {value!r}",
                    "a string the writer can write raw: no marker, and no ' followed by ', ) "
                    "or a comma, nor last",
                    "string arguments are written raw between single quotes",
                )
            return Lit("'" + value + "'")
        if isinstance(value, dict):
            return self.json_values.literal(value)
        return self.python_values.literal(value)

    def _any(self) -> Node:
        if self.spot != "argument":
            return self.values.any
        name = "py_any_argument"
        if name not in self.rules.rules:
            python, json_values = self.python_values, self.json_values
            member = seq(json_values.string, Lit(": "), json_values.any)
            self.rules.add(
                name,
                alt(
                    self.raw,
                    python.number,
                    Lit("True"),
                    Lit("False"),
                    Lit("None"),
                    seq(
                        Lit("["),
                        optional(seq(python.any, Repeat(seq(Lit(", "), python.any)))),
                        Lit("]"),
                    ),
                    seq(Lit("{"), optional(seq(member, Repeat(seq(Lit(", "), member)))), Lit("}")),
                ),
            )
        return Ref(name)
