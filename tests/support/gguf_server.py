"""llama.cpp's HTTP server (the ``xllamacpp`` wheel) in a child process, for the tests.

The server runs in its own process so a test can kill it mid-stream like a crashed engine.
``python -m tests.support.gguf_server MODEL.gguf N_PARALLEL`` starts it on a free loopback
port, prints ``http://host:port`` on one line and serves until killed.  It runs as
``llama-server --special -np N_PARALLEL`` would: ``--special`` makes llama.cpp write special
tokens (the format's markers) as their text, which text-parsing clients need (``pawlette
serve`` without ``--tokenizer``, and with it too: llama.cpp's ``/v1/completions`` returns text).
``--metrics`` turns on ``/metrics`` and a fourth argument names a chat-template file (what the
benchmarks need to run llama.cpp's own tool path beside pawlette's).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import openai

    from pawlette.serve.config import GrammarSetting

__all__ = ["EngineProcess", "Stack"]

_CONTEXT = 4096


def _serve(model: str, parallel: int, metrics: bool = False, template: str | None = None) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.special = True  # llama-server --special
    params.n_parallel = parallel  # -np: requests run concurrently, one slot each
    params.n_ctx = _CONTEXT * parallel  # the context is shared by the slots
    params.port = 0
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.warmup = False
    params.endpoint_metrics = metrics
    if template is not None:  # llama.cpp's own template handling and tool grammar need one
        params.use_jinja = True
        params.chat_template = Path(template).read_text(encoding="utf-8")
    server = xllamacpp.Server(params)
    print(server.listening_address, flush=True)
    while True:
        time.sleep(3600)


class EngineProcess:
    """A running llama.cpp server for one model; :meth:`kill` ends it like a crash."""

    def __init__(
        self, model: Path, parallel: int = 4, metrics: bool = False, template: str | None = None
    ) -> None:
        command = [sys.executable, "-m", "tests.support.gguf_server", str(model), str(parallel)]
        command.append("--metrics" if metrics else "--no-metrics")
        template_file = Path(f"/tmp/pawlette-template-{os.getpid()}-{id(self)}.jinja")
        if template is not None:
            template_file.write_text(template, encoding="utf-8")
            command.append(str(template_file))
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        template_file.unlink(missing_ok=True)  # read by the server before it listens
        if not line:
            code = self.process.wait(30)
            self.process.stdout.close()
            raise RuntimeError(f"llama.cpp server for {model} exited {code} before listening")
        self.url = line if line.startswith("http") else f"http://{line}"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        if self.process.stdout is not None:
            self.process.stdout.close()


class Stack:
    """A format's test model, its llama.cpp server, and ``pawlette serve --engine llamacpp
    --tokenizer`` in front of it (in a thread of this process); ``grammar_syntax``: its
    ``--grammar-syntax`` (None: the default, ``auto``)."""

    def __init__(
        self, format_name: str, slots: int = 1, grammar_syntax: GrammarSetting | None = None
    ) -> None:
        from pawlette.serve.config import ServeConfig

        from ..serve.conftest import LiveServer
        from .gguf_model import format_model

        self.format = format_name
        self.model = format_model(format_name)
        self.engine = EngineProcess(self.model.path, slots)
        try:
            self.server = LiveServer(
                ServeConfig(
                    format=format_name,
                    upstream=self.engine.url,
                    engine="llamacpp",
                    tokenizer=str(self.model.tokenizer),
                    model="m",
                    grammar_syntax=grammar_syntax,
                )
            )
        except BaseException:
            self.engine.kill()
            raise

    def client(self) -> openai.OpenAI:
        import openai

        return openai.OpenAI(
            base_url=self.server.url + "/v1", api_key="unused", max_retries=0, timeout=300
        )

    def close(self) -> None:
        self.server.stop()
        self.engine.kill()


if __name__ == "__main__":
    _serve(
        sys.argv[1],
        int(sys.argv[2]),
        metrics=sys.argv[3:4] == ["--metrics"],
        template=sys.argv[4] if len(sys.argv) > 4 else None,
    )
