"""What each upstream engine accepts on its OpenAI-style ``POST /v1/completions``.

Every engine gets the standard fields: ``prompt`` (text, or token ids with ``--tokenizer``),
``stop`` (the format's end markers plus the request's), ``max_tokens``, ``temperature``,
``top_p``, ``seed``, ``presence_penalty``, ``frequency_penalty``, ``logit_bias``, ``stream``
and ``stream_options``; the engine extensions ``top_k``, ``min_p`` and ``repetition_penalty``
are sent only when the client sent them.  Beyond that:

============  =========  ================================================  =================
engine        token ids  structured output (grammar)                       markers in it
============  =========  ================================================  =================
``generic``   yes        none                                              none
``vllm``      yes        ``structured_outputs: {"grammar": Lark}``         special tokens
``vllm-0.9``  yes        ``guided_grammar: Lark`` (vLLM before 0.12)       special tokens
``sglang``    yes        ``ebnf: GBNF``                                    text
``llamacpp``  yes        ``grammar: GBNF``, or Lark with llguidance        special tokens
``tgi``       no         none (TGI takes grammars only on ``/generate``)   none
============  =========  ================================================  =================

For ``llamacpp`` the markers it holds as ordinary tokens in every vocabulary
(:data:`LLAMA_CPP_TEXT_MARKERS`, harmony's ``<|channel|>`` ...) are text in its Lark grammars
unless ``--tokenizer`` gives their ids.

The grammars come from :func:`pawlette.export.export_grammar`, for formats that have a grammar
export.  ``llamacpp`` reads GBNF, and llguidance's Lark (``%llguidance``) when it is built with
llguidance (``-DLLAMA_LLGUIDANCE=ON``; the ``xllamacpp`` wheel is).  Lark is far cheaper for it:
llguidance's lexer takes a JSON string or a run of free text as one lexeme (intersected with the
negation of every marker), where GBNF spells every marker automaton as rules, so a forced call's
grammar is a few kilobytes instead of tens and costs the engine a fraction of the time per token
(``python -m bench.grammar_cost``).  But a llama.cpp built without llguidance does not refuse a
Lark grammar: it aborts, the whole server process with it (``GGML_ABORT`` in
``common_sampler_init``).  So ``--grammar-syntax``
(:attr:`pawlette.serve.config.ServeConfig.grammar_syntax`) says which syntax the forced grammars
(``required``, a named function, ``none``) go in:

- ``auto`` (the default for ``llamacpp``): each replica is asked once, without a Lark grammar,
  whether it has llguidance (:mod:`pawlette.serve.grammar_syntax`); Lark goes to those that do,
  GBNF to the others;
- ``lark``: Lark to every replica (each must be built with llguidance);
- ``gbnf``: GBNF to every replica.

A grammar that may be lazy (``auto`` tool choice) stays GBNF whatever the setting, the syntax
llama.cpp's triggers are built for.  The other engines take one syntax each (the table);
``auto`` leaves them to it.

vLLM gets llguidance's Lark dialect, where a marker is a special-token reference
(``<call>``, or ``<[id]>`` with ``--tokenizer``): start vLLM with its guidance backend
(``--structured-outputs-config '{"backend": "guidance"}'``; ``--guided-decoding-backend
guidance`` before 0.10), since XGrammar reads no Lark.  llama.cpp reads the same token
references in GBNF.  SGLang's default backend (XGrammar) has no token references, so its GBNF
spells markers as text.

vLLM and SGLang drop special tokens from the text they return unless told otherwise, and the
parser needs the format's markers, so pawlette sends ``skip_special_tokens: false`` and
``spaces_between_special_tokens: false`` to both, and ``add_special_tokens: false`` to vLLM
(the format's render already writes any begin-of-text token).  With llama.cpp, run
``llama-server --special`` (else it writes special tokens as nothing and the markers never
reach the parser) with a model whose end-of-generation tokens are the format's stop markers;
with text prompts it may add its own BOS, so prefer ``--tokenizer`` there.  llama.cpp also
ends on every other token its vocabulary reads as an end of generation by name
(``<|endoftext|>``, ``<|end_of_text|>``, ``<|eom_id|>`` ...) and returns that token's text as the
answer's last words: ``/v1/completions`` then says ``finish_reason: "stop"`` and nothing of
which token ended it, so pawlette reads the text as the model's (a request's ``stop`` that
names the token removes it).  Every grammar ends right before the turn's stop marker:
llama.cpp accepts no end-of-generation token through a grammar, only once the grammar is
complete, and then its own stop ends the turn (tested against a real llama.cpp,
tests/serve/test_llama_cpp.py).  TGI's ``/v1/completions`` takes text prompts only.

The output budget: the legacy completions API stops after **16 tokens** when ``max_tokens`` is
absent (OpenAI's default, which vLLM and SGLang copy), unlike chat completions.  So when a
request sets no ``max_tokens`` / ``max_completion_tokens``, pawlette sends ``--max-tokens`` if
given, else what lets the engine run to its stop or its context end: ``max_tokens: null`` to
vLLM (the rest of the context), nothing to llama.cpp (its default is unlimited), and
:data:`DEFAULT_MAX_TOKENS` to the others.  Unbounded is what OpenAI's chat completions mean;
since the grammars end where the model's stop takes over, a constrained answer ends by the
model's stop rather than at the end of the context.

A grammar is sent only to honour a ``tool_choice`` or ``parallel_tool_calls: false``, with or
after a forced prefix (see :mod:`pawlette.serve.tool_choice`).  llama.cpp alone takes a lazy
grammar: under ``auto`` (without parallel calls) it gets the bundle's lazy grammar with
``grammar_lazy: true``, ``grammar_triggers: [{"type": 1, "value": MARKER}]`` (type 1 is a
trigger word) and ``preserved_tokens: [MARKER]``: llama.cpp's ``/v1/completions`` passes these
fields to the same reader as ``/completion`` (``params_from_json_cmpl`` in
``tools/server/server-task.cpp``), which refuses a one-token trigger word that is not a
preserved token and then matches it by id.  The grammar is applied from the trigger on, which
is where the lazy grammar starts.  vLLM and SGLang have no lazy field for a grammar, so they get
the whole turn's grammar.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

GrammarSyntax = Literal["gbnf", "lark"]
GrammarSetting = Literal["auto", "gbnf", "lark"]
"""``--grammar-syntax``: a syntax, or ``auto`` (the cheapest each replica reads)."""
MarkerSpelling = Literal["tokens", "text"]

DEFAULT_MAX_TOKENS = 4096
"""The output budget sent to engines that need a number when neither request nor server sets
one."""


@dataclass(frozen=True)
class Engine:
    name: str
    token_ids: bool
    """Whether ``prompt`` may be a list of token ids."""
    grammar_field: tuple[str, ...] = ()
    """Where a grammar goes in the body (``("structured_outputs", "grammar")``); empty: none."""
    grammar_syntax: GrammarSyntax | None = None
    grammar_markers: MarkerSpelling = "tokens"
    """How the grammar writes markers: special-token references, or plain text."""
    always: Mapping[str, Any] = field(default_factory=dict)
    usage_in_stream: bool = True
    """Whether ``stream_options: {"include_usage": true}`` is understood."""
    unbounded: Literal["null", "omit", "number"] = "number"
    """How to ask for no output limit: ``max_tokens: null``, no field, or a number."""
    lazy_grammars: bool = False
    """Whether a grammar can be switched on by a trigger (llama.cpp's ``grammar_lazy``)."""
    lazy_grammar_syntax: GrammarSyntax | None = None
    """The syntax of a grammar that may be lazy (``auto``) when it differs from
    ``grammar_syntax`` (llama.cpp applies triggers to GBNF grammars); None: the same."""
    asks_for_lark: bool = False
    """Whether ``--grammar-syntax auto`` asks each replica whether it reads Lark (llama.cpp,
    with or without llguidance); False: ``auto`` is the engine's own syntax."""
    lark_text_markers: frozenset[str] = frozenset()
    """Markers its Lark grammars write as text when they have no id (without
    ``--tokenizer``): those its vocabulary holds as ordinary tokens, which llguidance
    matches by their text and knows no special token of (:data:`LLAMA_CPP_TEXT_MARKERS`)."""

    def syntax_for(self, lazy: bool) -> GrammarSyntax | None:
        """The syntax of the grammars sent for a request (``lazy``: under ``auto``)."""
        if lazy and self.lazy_grammars and self.lazy_grammar_syntax is not None:
            return self.lazy_grammar_syntax
        return self.grammar_syntax

    def with_grammar_syntax(self, syntax: GrammarSyntax | None) -> Engine:
        """This engine sending its forced grammars in ``syntax`` (None: its own), its lazy
        ones as before: ``--grammar-syntax lark`` for a llama.cpp built with llguidance."""
        if syntax is None or syntax == self.grammar_syntax or self.grammar_syntax is None:
            return self
        return replace(self, grammar_syntax=syntax, lazy_grammar_syntax=self.grammar_syntax)

    def body(
        self,
        *,
        prompt: str | list[int],
        model: str | None,
        stop: list[str],
        sampling: Mapping[str, Any],
        stream: bool,
        include_usage: bool,
        grammar: str | None = None,
        trigger: str | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The ``/v1/completions`` request body.

        ``max_tokens`` is the server's budget for requests that set none (None: see above).
        ``trigger``: the grammar is lazy, switched on where the model writes this marker.
        """
        body: dict[str, Any] = {"prompt": prompt}
        if model is not None:
            body["model"] = model
        if "max_tokens" not in sampling:
            if max_tokens is not None:
                body["max_tokens"] = max_tokens
            elif self.unbounded == "null":
                body["max_tokens"] = None
            elif self.unbounded == "number":
                body["max_tokens"] = DEFAULT_MAX_TOKENS
        body.update(sampling)
        body["stop"] = stop
        body.update(self.always)
        body["stream"] = stream
        if stream and include_usage and self.usage_in_stream:
            body["stream_options"] = {"include_usage": True}
        if grammar is not None:
            if not self.grammar_field:
                raise ValueError(f"engine {self.name!r} takes no grammar")
            target = body
            for key in self.grammar_field[:-1]:
                target = target.setdefault(key, {})
            target[self.grammar_field[-1]] = grammar
        if trigger is not None:
            if grammar is None or not self.lazy_grammars:
                raise ValueError(f"engine {self.name!r} takes no lazy grammar")
            # llama.cpp: a trigger "word" that is one token must be a preserved token; the
            # server then matches it by id and feeds that token to the grammar.
            body["grammar_lazy"] = True
            body["grammar_triggers"] = [{"type": _TRIGGER_WORD, "value": trigger}]
            body["preserved_tokens"] = [trigger]
        return body


LLAMA_CPP_TEXT_MARKERS = frozenset({"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})
"""The markers llama.cpp never treats as special tokens: loading any vocabulary, it gives the
tokens of exactly these texts the user-defined attribute, not the control one (so that they
are always rendered: a workaround for gpt-oss in ``llama_vocab::impl::load``,
``src/llama-vocab.cpp``).  Its llguidance then has them as ordinary tokens with that text: a
Lark grammar naming one as a special token (``<|channel|>``) is refused (``unknown special
token``), and llama.cpp samples with no grammar at all; the string ``"<|channel|>"`` matches
the token.  Its GBNF's ``<|channel|>`` reads a user-defined token as it does a special one."""

_TRIGGER_WORD = 1
"""llama.cpp's ``COMMON_GRAMMAR_TRIGGER_TYPE_WORD`` (common/common.h)."""

_KEEP_MARKERS = {"skip_special_tokens": False, "spaces_between_special_tokens": False}

_VLLM = Engine(
    "vllm",
    token_ids=True,
    grammar_field=("structured_outputs", "grammar"),
    grammar_syntax="lark",
    always={**_KEEP_MARKERS, "add_special_tokens": False},
    unbounded="null",
)

ENGINES: dict[str, Engine] = {
    "generic": Engine("generic", token_ids=True),
    "vllm": _VLLM,
    # Older vLLM: the same but for the field that takes the grammar.
    "vllm-0.9": replace(_VLLM, name="vllm-0.9", grammar_field=("guided_grammar",)),
    "sglang": Engine(
        "sglang",
        token_ids=True,
        grammar_field=("ebnf",),
        grammar_syntax="gbnf",
        grammar_markers="text",
        always=_KEEP_MARKERS,
    ),
    "llamacpp": Engine(
        "llamacpp",
        token_ids=True,
        grammar_field=("grammar",),
        grammar_syntax="gbnf",
        unbounded="omit",
        lazy_grammars=True,
        asks_for_lark=True,
        lark_text_markers=LLAMA_CPP_TEXT_MARKERS,
    ),
    "tgi": Engine("tgi", token_ids=False, usage_in_stream=False),
}
