"""Which syntax each engine replica's forced grammars go in (``--grammar-syntax``).

With ``lark`` or ``gbnf`` every replica gets that syntax; engines other than ``llamacpp`` read
one syntax each and ``auto`` leaves them to it.  With ``auto`` (the default for ``llamacpp``)
each llama.cpp replica is asked whether it is built with llguidance, and gets llguidance's
Lark if it is (a fraction of the engine's time per token, ``python -m bench.grammar_cost``),
GBNF if not.

How it is asked.  A llama.cpp built without llguidance aborts, the whole server process, on a
grammar that starts ``%llguidance`` (``GGML_ABORT`` in ``common_sampler_init``,
``common/sampling.cpp``), so no Lark grammar is ever sent to find out.  The question is one
that both builds answer: a one-token ``POST /completion`` with ``json_schema: {}``.  llama.cpp
turns a JSON schema into a grammar with ``json_schema_to_grammar``
(``common/json-schema-to-grammar.cpp``), which writes ``%llguidance {}`` and ``start: %json
...`` when llguidance is built in and GBNF rules otherwise, and its native ``/completion``
answer shows the grammar it used as ``generation_settings.grammar``
(``tools/server/server-task.cpp``, ``task_params::to_json``).

When, and what an answer means:

- every replica is asked at start-up, in the background: nothing waits for it;
- a request whose body depends on the answer (a forced tool choice with a grammar) and whose
  replica has none yet waits for the question in flight (or asks it again) at most
  :data:`WAIT_SECONDS`; past that, or without an answer, its grammar goes in GBNF, which every
  llama.cpp reads;
- an answer is kept for the server's lifetime: a grammar that starts ``%llguidance`` means
  Lark; any other grammar, an answer without one, or a refusal (a 4xx but 408 and 429: an
  engine that has no ``/completion`` is not llama.cpp) means GBNF;
- no answer is not kept (the engine down, a timeout, a 5xx such as llama.cpp's 503 while it
  loads its model, a broken answer, 408, 429): the next request that needs one asks again.

The log says what each replica gets and why, and ``/metrics`` has it as the gauge
``upstream_lark_grammars{upstream}`` (1: Lark, 0: GBNF).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

import anyio
from anyio.abc import TaskGroup

from .balancer import Replica
from .engines import Engine, GrammarSetting, GrammarSyntax
from .http1 import EngineClient
from .metrics import Registry
from .transport import EngineError

logger = logging.getLogger("pawlette.serve")

WAIT_SECONDS = 10.0
"""The longest a request waits for its replica's answer before its grammar goes in GBNF."""
ASK_SECONDS = 60.0
"""The longest one question may take (a busy engine queues it behind the slots' work)."""
QUESTION = b'{"prompt":"0","n_predict":1,"json_schema":{},"cache_prompt":false}'
"""One token under the grammar llama.cpp writes for the empty JSON schema."""
LARK_MARK = "%llguidance"
_NO_ANSWER_STATUSES = (408, 429)


class GrammarSyntaxes:
    """The engine (its grammar syntax) for each replica, and the questions that find it."""

    def __init__(
        self,
        engine: Engine,
        setting: GrammarSetting | None,
        replicas: Sequence[Replica],
        registry: Registry,
    ) -> None:
        self.asking = engine.asks_for_lark and setting in (None, "auto")
        """Whether replicas are asked (``auto`` with llama.cpp)."""
        fixed: GrammarSyntax | None = None if setting is None or setting == "auto" else setting
        self.default = engine.with_grammar_syntax(fixed)
        """The engine for requests whose replica's syntax is not known or does not matter."""
        self.lark = engine.with_grammar_syntax("lark") if self.asking else self.default
        self.replicas = list(replicas)
        self.registry = registry
        self.known: dict[Replica, GrammarSyntax] = {}
        self._asked: dict[Replica, anyio.Event] = {}
        self._group: TaskGroup | None = None
        self._client: EngineClient | None = None
        self._headers: Mapping[str, str] = {}
        self._seconds = ASK_SECONDS
        if self.default.grammar_syntax is not None:
            for replica in self.replicas:
                self._gauge(replica, self.default.grammar_syntax)

    def engine(self, syntax: GrammarSyntax) -> Engine:
        return self.lark if syntax == "lark" else self.default

    def start(
        self,
        group: TaskGroup,
        client: EngineClient,
        headers: Mapping[str, str],
        seconds: float = ASK_SECONDS,
    ) -> None:
        """Ask every replica now, in ``group`` (the server's lifespan)."""
        self._group, self._client, self._headers = group, client, headers
        self._seconds = min(seconds, ASK_SECONDS)
        if self.asking:
            for replica in self.replicas:
                self._ask_soon(replica)

    async def syntax(self, replica: Replica) -> GrammarSyntax:
        """The syntax ``replica``'s forced grammars go in (GBNF while it has not answered)."""
        if not self.asking:
            return self.default.grammar_syntax or "gbnf"
        known = self.known.get(replica)
        if known is not None:
            return known
        asked = self._asked.get(replica) or self._ask_soon(replica)
        if asked is not None:
            with anyio.move_on_after(WAIT_SECONDS):
                await asked.wait()
        return self.known.get(replica, "gbnf")

    def _ask_soon(self, replica: Replica) -> anyio.Event | None:
        if self._group is None:
            return None  # not started: nothing can be sent
        asked = self._asked[replica] = anyio.Event()
        self._group.start_soon(self._ask, replica, asked)
        return asked

    async def _ask(self, replica: Replica, asked: anyio.Event) -> None:
        try:
            syntax, why = await self._question(replica)
        finally:
            del self._asked[replica]
            asked.set()
        if syntax is None:
            logger.warning(
                "upstream %s: no answer to whether it is built with llguidance (%s); forced "
                "tool-call grammars go to it in GBNF until it answers",
                replica.base_url,
                why,
            )
            return
        self.known[replica] = syntax
        self._gauge(replica, syntax)
        logger.info(
            "upstream %s: %s; forced tool-call grammars go to it in %s",
            replica.base_url,
            why,
            "llguidance's Lark" if syntax == "lark" else "GBNF",
        )

    async def _question(self, replica: Replica) -> tuple[GrammarSyntax | None, str]:
        """The replica's syntax and why, or None and why there is no answer."""
        client = self._client
        assert client is not None
        headers = {**self._headers, **replica.headers}
        try:
            with anyio.fail_after(self._seconds):
                answer = await client.post(
                    replica.base_url + "/completion",
                    QUESTION,
                    headers,
                    deadline=anyio.current_time() + self._seconds,
                )
                try:
                    body = await answer.read()
                finally:
                    await answer.aclose()
        except (EngineError, TimeoutError) as error:
            return None, f"{type(error).__name__}: {error}"
        return syntax_of_answer(answer.status_code, body)

    def _gauge(self, replica: Replica, syntax: GrammarSyntax) -> None:
        self.registry.set(
            "upstream_lark_grammars", 1 if syntax == "lark" else 0, upstream=replica.base_url
        )


def syntax_of_answer(status: int, body: bytes) -> tuple[GrammarSyntax | None, str]:
    """What an answer to :data:`QUESTION` says."""
    if status >= 500 or status in _NO_ANSWER_STATUSES:
        return None, f"HTTP {status} to POST /completion"
    if status != 200:
        return "gbnf", f"HTTP {status} to POST /completion (not llama.cpp's server)"
    try:
        settings = json.loads(body)["generation_settings"]
        grammar = settings["grammar"]
    except (ValueError, LookupError, TypeError):
        return "gbnf", "its POST /completion answer shows no grammar"
    if isinstance(grammar, str) and grammar.startswith(LARK_MARK):
        return "lark", "built with llguidance (its JSON-schema grammar is Lark)"
    return "gbnf", "built without llguidance (its JSON-schema grammar is not Lark)"
