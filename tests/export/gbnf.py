"""A checker for llama.cpp's GBNF syntax, and a translation of GBNF into llguidance's Lark.

No PyPI package reads GBNF without a compiler build (``llama-cpp-python`` compiles
llama.cpp), so the tests parse it here, following the rules of llama.cpp's grammar parser
(``src/llama-grammar.cpp``, ``grammars/README.md``): rule names of letters, digits and
dashes; ``::=``; alternatives with ``|``; a newline ends a rule except inside parentheses or
after ``|``; ``#`` comments; literals and character classes with the escapes ``\\x``
``\\u`` ``\\U`` ``\\t`` ``\\r`` ``\\n`` ``\\\\`` ``\\"`` ``\\[`` ``\\]`` ``\\-``; ``.``;
tokens ``<[id]>`` and ``<text>`` (which must be one token of the vocabulary), negated with
``!``; repetition ``* + ? {m} {m,} {m,n}`` after an item; every referenced rule defined;
a ``root`` rule.

:func:`to_lark` writes the parsed grammar in Lark so that llguidance can run the same
acceptance cases through it: the GBNF's meaning, checked by a real engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field


class GbnfError(ValueError):
    pass


@dataclass
class Item:
    kind: str  # literal, class, any, token, ref, group
    value: object
    repeat: tuple[int, int | None] | None = None


@dataclass
class Grammar:
    rules: dict[str, list[list[Item]]] = field(default_factory=dict)
    references: set[str] = field(default_factory=set)


def _word(character: str) -> bool:
    return character.isascii() and (character.isalnum() or character == "-")


class _Parser:
    def __init__(self, text: str, tokens: Iterable[str]) -> None:
        self.text = text
        self.tokens = set(tokens)
        self.grammar = Grammar()

    def error(self, position: int, message: str) -> GbnfError:
        line = self.text.count("\n", 0, position) + 1
        return GbnfError(f"line {line}: {message} at {self.text[position : position + 30]!r}")

    def at(self, position: int) -> str:
        return self.text[position] if position < len(self.text) else ""

    def space(self, position: int, newline_ok: bool) -> int:
        while True:
            character = self.at(position)
            if character in (" ", "\t") or (newline_ok and character in ("\r", "\n")):
                position += 1
            elif character == "#":
                while self.at(position) not in ("", "\r", "\n"):
                    position += 1
            else:
                return position

    def name(self, position: int) -> tuple[str, int]:
        start = position
        while _word(self.at(position)):
            position += 1
        if position == start:
            raise self.error(position, "expecting name")
        return self.text[start:position], position

    def char(self, position: int) -> tuple[str, int]:
        character = self.at(position)
        if character == "":
            raise self.error(position, "unexpected end of input")
        if character != "\\":
            return character, position + 1
        escape = self.at(position + 1)
        sizes = {"x": 2, "u": 4, "U": 8}
        if escape in sizes:
            digits = self.text[position + 2 : position + 2 + sizes[escape]]
            if len(digits) != sizes[escape] or any(
                d not in "0123456789abcdefABCDEF" for d in digits
            ):
                raise self.error(position, f"expecting {sizes[escape]} hex chars")
            return chr(int(digits, 16)), position + 2 + sizes[escape]
        simple = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "[": "[", "]": "]"}
        simple["-"] = "-"
        if escape in simple:
            return simple[escape], position + 2
        raise self.error(position, "unknown escape")

    def parse(self) -> Grammar:
        position = self.space(0, True)
        while position < len(self.text):
            position = self.rule(position)
        for reference in self.grammar.references:
            if reference not in self.grammar.rules:
                raise GbnfError(f"Undefined rule identifier {reference!r}")
        if "root" not in self.grammar.rules:
            raise GbnfError("grammar does not contain a root symbol")
        return self.grammar

    def rule(self, position: int) -> int:
        name, position = self.name(position)
        position = self.space(position, False)
        if self.text[position : position + 3] != "::=":
            raise self.error(position, "expecting ::=")
        position = self.space(position + 3, True)
        alternatives, position = self.alternates(position, nested=False)
        if name in self.grammar.rules:
            raise self.error(position, f"rule {name!r} defined twice")
        self.grammar.rules[name] = alternatives
        if self.at(position) == "\r":
            position += 2 if self.at(position + 1) == "\n" else 1
        elif self.at(position) == "\n":
            position += 1
        elif self.at(position):
            raise self.error(position, "expecting newline or end")
        return self.space(position, True)

    def alternates(self, position: int, nested: bool) -> tuple[list[list[Item]], int]:
        sequence, position = self.sequence(position, nested)
        alternatives = [sequence]
        while self.at(position) == "|":
            position = self.space(position + 1, True)
            sequence, position = self.sequence(position, nested)
            alternatives.append(sequence)
        return alternatives, position

    def sequence(self, position: int, nested: bool) -> tuple[list[Item], int]:
        items: list[Item] = []
        while position < len(self.text):
            character = self.at(position)
            if character == '"':
                position += 1
                chars = []
                while self.at(position) != '"':
                    value, position = self.char(position)
                    chars.append(value)
                items.append(Item("literal", "".join(chars)))
                position = self.space(position + 1, nested)
            elif character == "[":
                position += 1
                negated = self.at(position) == "^"
                position += negated
                ranges: list[tuple[str, str]] = []
                while self.at(position) != "]":
                    low, position = self.char(position)
                    high = low
                    if self.at(position) == "-" and self.at(position + 1) not in ("]", ""):
                        high, position = self.char(position + 1)
                    ranges.append((low, high))
                items.append(Item("class", (negated, ranges)))
                position = self.space(position + 1, nested)
            elif character in ("<", "!"):
                negated = character == "!"
                position += negated
                if self.at(position) != "<":
                    raise self.error(position, "expecting '<'")
                end = self.text.find(">", position)
                if end < 0:
                    raise self.error(position, "expecting '>'")
                token = self.text[position : end + 1]
                inner = token[1:-1]
                if inner.startswith("["):
                    if not (inner.endswith("]") and inner[1:-1].isdigit()):
                        raise self.error(position, "expecting <[id]>")
                elif token not in self.tokens:
                    raise self.error(position, f"invalid token {token!r}")
                items.append(Item("token", (negated, token)))
                position = self.space(end + 1, nested)
            elif _word(character):
                name, position = self.name(position)
                self.grammar.references.add(name)
                items.append(Item("ref", name))
                position = self.space(position, nested)
            elif character == "(":
                position = self.space(position + 1, True)
                alternatives, position = self.alternates(position, nested=True)
                if self.at(position) != ")":
                    raise self.error(position, "expecting ')'")
                items.append(Item("group", alternatives))
                position = self.space(position + 1, nested)
            elif character == ".":
                items.append(Item("any", None))
                position = self.space(position + 1, nested)
            elif character in ("*", "+", "?", "{"):
                if not items:
                    raise self.error(position, "expecting preceding item to */+/?/{")
                if character == "{":
                    position, bounds = self.bounds(position, nested)
                else:
                    bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}[character]
                    position = self.space(position + 1, nested)
                last = items[-1]
                if last.repeat is not None:
                    last = Item("group", [[last]])
                    items[-1] = last
                last.repeat = bounds
            else:
                break
        return items, position

    def bounds(self, position: int, nested: bool) -> tuple[int, tuple[int, int | None]]:
        position = self.space(position + 1, nested)
        start = position
        while self.at(position).isdigit():
            position += 1
        if position == start:
            raise self.error(position, "expecting an int")
        low = int(self.text[start:position])
        position = self.space(position, nested)
        high: int | None = low
        if self.at(position) == ",":
            position = self.space(position + 1, nested)
            start = position
            while self.at(position).isdigit():
                position += 1
            high = int(self.text[start:position]) if position > start else None
            position = self.space(position, nested)
        if self.at(position) != "}":
            raise self.error(position, "expecting '}'")
        return self.space(position + 1, nested), (low, high)


def parse(text: str, tokens: Iterable[str] = ()) -> Grammar:
    """Parse GBNF as llama.cpp does; ``tokens`` are the vocabulary's token texts."""
    return _Parser(text, tokens).parse()


# ------------------------------------------------------------------ to Lark


def _regex_char(character: str) -> str:
    if character in "\\^-[]/":
        return "\\x" + f"{ord(character):02X}"
    code = ord(character)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02X}"
    return character


def _lark_items(items: list[Item]) -> str:
    return " ".join(_lark_item(item) for item in items) or '""'


def _lark_item(item: Item) -> str:
    if item.kind == "literal":
        # One lexeme per character: llguidance's lexer is greedy (a lexeme that can still grow
        # is never cut short), so a literal competing with a run of shorter pieces ("1000"
        # against [1-9] [0-9]) would be taken whole.  GBNF is matched character by character.
        chars = [json.dumps(character, ensure_ascii=False) for character in str(item.value)]
        text = "(" + " ".join(chars) + ")" if len(chars) != 1 else chars[0]
        if not chars:
            text = '""'
    elif item.kind == "class":
        negated, ranges = item.value  # type: ignore[misc]
        body = "".join(
            _regex_char(low) + ("" if low == high else "-" + _regex_char(high))
            for low, high in ranges
        )
        text = f"/[{'^' if negated else ''}{body}]/"
    elif item.kind == "any":
        text = "/(?s:.)/"
    elif item.kind == "token":
        negated, token = item.value  # type: ignore[misc]
        if negated:
            raise GbnfError("negated tokens are not translated")
        text = str(token)
    elif item.kind == "ref":
        text = "r_" + str(item.value).replace("-", "_").lower()
    else:
        alternatives: list[list[Item]] = item.value  # type: ignore[assignment]
        text = "(" + " | ".join(_lark_items(sequence) for sequence in alternatives) + ")"
    if item.repeat is None:
        return text
    low, high = item.repeat
    if high is None:
        return text + ("*" if low == 0 else "+" if low == 1 else f"{{{low},}}")
    return text + ("?" if (low, high) == (0, 1) else f"{{{low},{high}}}")


def to_lark(grammar: Grammar) -> str:
    """The grammar as Lark rules of one-character lexemes (and tokens), so llguidance's
    Earley parser, not its greedy lexer, resolves every choice, as llama.cpp's matcher does."""
    lines = ["%llguidance {}", "start: r_root"]
    for name, alternatives in grammar.rules.items():
        body = " | ".join(_lark_items(sequence) for sequence in alternatives)
        lines.append(f"r_{name.replace('-', '_').lower()}: {body}")
    return "\n".join(lines) + "\n"
