"""llama.cpp's own Jinja engine for the tests, built from the llama-cpp-python sdist on PyPI.

llama.cpp renders chat templates with its own C++ Jinja (``common/jinja`` in its source), which
llama-cpp-python's sdist vendors.  :func:`llama_cpp_jinja_driver` returns a program that renders
templates with it (our driver, ``tests/export/llama_cpp_jinja_driver.cpp``), compiled with only
the engine's sources (``common/jinja``, ``common/json``, ``common/unicode``, nlohmann's json and
``ggml.h``) by :mod:`tests.support.llama_cpp_build`: downloaded (hash-checked) and built at first
use, cached, and a failed download or build fails the test (nothing is skipped).
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from .llama_cpp_build import (
    LLAMA_CPP_PYTHON_VERSION,
    TIMEOUT,
    Engine,
    build_driver,
    compiler_command,
)

__all__ = [
    "LLAMA_CPP_PYTHON_VERSION",
    "compiler_command",
    "llama_cpp_jinja_driver",
    "render_with_llama_cpp",
]

_ENGINE = Engine(
    title="llama.cpp's Jinja engine",
    prefix="driver",
    driver=Path(__file__).parent.parent / "export" / "llama_cpp_jinja_driver.cpp",
    members=(
        "common/jinja/",
        "common/json.cpp",
        "common/json.h",
        "common/unicode.cpp",
        "common/unicode.h",
        "vendor/nlohmann/json.hpp",
        "vendor/nlohmann/json_fwd.hpp",
        "ggml/include/ggml.h",
        "LICENSE",
    ),
    sources=(
        "common/jinja/lexer.cpp",
        "common/jinja/parser.cpp",
        "common/jinja/runtime.cpp",
        "common/jinja/value.cpp",
        "common/jinja/string.cpp",
        "common/json.cpp",
        "common/unicode.cpp",
    ),
    includes=("common", "vendor", "ggml/include"),
)


@cache
def llama_cpp_jinja_driver() -> Path:
    """The driver program, built (and cached) at first use; see
    :func:`tests.support.llama_cpp_build.build_driver`."""
    return build_driver(_ENGINE)


def render_with_llama_cpp(template: str, cases: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each case (template variables) rendered by llama.cpp's engine: ``{"text": ...}`` or
    ``{"error": ...}``, in order."""
    program = llama_cpp_jinja_driver()
    result = subprocess.run(
        [str(program)],
        input=json.dumps({"template": template, "cases": cases}, ensure_ascii=False).encode(),
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    lines = [json.loads(line) for line in result.stdout.decode("utf-8").split("\n") if line]
    if result.returncode != 0 or len(lines) != len(cases):
        pytest.fail(
            f"llama.cpp's Jinja engine: the driver exited {result.returncode} after"
            f" {len(lines)} of {len(cases)} cases:\n"
            + result.stderr.decode("utf-8", "replace")[-2000:],
            pytrace=False,
        )
    return lines
