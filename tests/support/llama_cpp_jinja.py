"""llama.cpp's own Jinja engine for the tests, built from the llama-cpp-python sdist on PyPI.

llama.cpp renders chat templates with its own C++ Jinja (``common/jinja`` in its source), which
llama-cpp-python's sdist vendors.  :func:`llama_cpp_jinja_driver` returns a program that renders
templates with it (our driver, ``tests/export/llama_cpp_jinja_driver.cpp``):

1. looks in the cache directory (``$PAWLETTE_CACHE``, else ``~/.cache/pawlette``) for a driver
   built from the same sdist, driver source and compiler;
2. else runs ``python -m pip download --no-deps --no-binary :all: llama-cpp-python==<pinned>``
   in pip's hash-checking mode (about 77 MB; the sdist is kept in the cache), and fails the test
   with pip's message when that does not work (nothing is skipped);
3. checks the sdist's SHA-256, extracts only the engine's sources (``common/jinja``,
   ``common/json``, ``common/unicode``, nlohmann's json and ``ggml.h``) with :mod:`tarfile`;
4. compiles them and the driver, one object per process in parallel, and links.  The compiler is
   ``$PAWLETTE_CXX`` when set (e.g. ``g++``), else ``g++`` when on the PATH, else
   ``python -m ziglang c++`` (the ``ziglang`` package from PyPI, in the test extra), so a machine
   with Python and PyPI only can build it.  A failed build fails the test with the compiler's
   output.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from .llama3 import cache_directory

__all__ = [
    "LLAMA_CPP_PYTHON_VERSION",
    "compiler_command",
    "llama_cpp_jinja_driver",
    "render_with_llama_cpp",
]

# llama-cpp-python 0.3.36 vendors the llama.cpp whose Jinja engine is checked.
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
_SDIST_NAME = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
_SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
_ROOT = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}/vendor/llama.cpp/"
# Files and folders (ending in /) of llama.cpp the driver needs, relative to _ROOT.
_MEMBERS = (
    "common/jinja/",
    "common/json.cpp",
    "common/json.h",
    "common/unicode.cpp",
    "common/unicode.h",
    "vendor/nlohmann/json.hpp",
    "vendor/nlohmann/json_fwd.hpp",
    "ggml/include/ggml.h",
    "LICENSE",
)
_SOURCES = (
    "common/jinja/lexer.cpp",
    "common/jinja/parser.cpp",
    "common/jinja/runtime.cpp",
    "common/jinja/value.cpp",
    "common/jinja/string.cpp",
    "common/json.cpp",
    "common/unicode.cpp",
)
_DRIVER = Path(__file__).parent.parent / "export" / "llama_cpp_jinja_driver.cpp"
_TIMEOUT = 900


_FAILURE: list[str] = []  # the first failure to build the driver, repeated to every later test


def _fail(message: str) -> None:
    _FAILURE.append(f"llama.cpp's Jinja engine: {message}")
    pytest.fail(_FAILURE[0], pytrace=False)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def compiler_command() -> list[str]:
    """The C++ compiler the driver is built with (see the module docstring)."""
    configured = os.environ.get("PAWLETTE_CXX")
    if configured:
        return shlex.split(configured)
    if shutil.which("g++"):
        return ["g++"]
    return [sys.executable, "-m", "ziglang", "c++"]


def _download_sdist(directory: Path) -> Path:
    sdist = directory / _SDIST_NAME
    if sdist.is_file() and _sha256(sdist) == _SDIST_SHA256:
        return sdist
    directory.mkdir(parents=True, exist_ok=True)
    requirement = f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION} --hash=sha256:{_SDIST_SHA256}\n"
    with tempfile.TemporaryDirectory(dir=directory) as staging:
        requirements = Path(staging) / "requirements.txt"
        requirements.write_text(requirement)
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--disable-pip-version-check",
            "--quiet",
            "-r",
            str(requirements),
            "--dest",
            staging,
        ]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired:
            _fail(f"`{shlex.join(command)}` took over {_TIMEOUT} s; expected the sdist from PyPI")
        downloaded = Path(staging) / _SDIST_NAME
        if result.returncode != 0 or not downloaded.is_file():
            output = (result.stderr or result.stdout).strip()[-2000:]
            _fail(
                f"`{shlex.join(command)}` exited {result.returncode} with\n{output}\n"
                f"expected {_SDIST_NAME} from PyPI. Without network, put it in {directory}"
                " (set PAWLETTE_CACHE to move it)"
            )
        found = _sha256(downloaded)
        if found != _SDIST_SHA256:
            _fail(f"{_SDIST_NAME} has SHA-256 {found}; expected {_SDIST_SHA256}")
        os.replace(downloaded, sdist)
    return sdist


def _extract(sdist: Path, destination: Path) -> None:
    """Only the members the driver needs, written by name (no path from the archive is
    trusted)."""
    wanted = 0
    try:
        with tarfile.open(sdist, "r:gz") as archive:
            for member in archive:
                if not member.isfile() or not member.name.startswith(_ROOT):
                    continue
                relative = member.name[len(_ROOT) :]
                if ".." in relative.split("/") or not any(
                    relative == name or (name.endswith("/") and relative.startswith(name))
                    for name in _MEMBERS
                ):
                    continue
                data = archive.extractfile(member)
                assert data is not None
                target = destination / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data.read())
                wanted += 1
    except (tarfile.TarError, OSError) as error:
        _fail(f"cannot read {sdist} ({error}); delete it to download it again")
    missing = [
        name for name in (*_SOURCES, "ggml/include/ggml.h") if not (destination / name).is_file()
    ]
    if missing:
        _fail(f"{sdist} lacks {', '.join(missing)}; expected llama.cpp's Jinja engine sources")


def _compile(source_root: Path, build: Path, compiler: list[str]) -> Path:
    flags = [
        "-std=c++17",
        "-O1",
        f"-I{source_root / 'common'}",
        f"-I{source_root / 'vendor'}",
        f"-I{source_root / 'ggml' / 'include'}",
    ]
    jobs = []
    objects = []
    for source in [*(source_root / name for name in _SOURCES), _DRIVER]:
        target = build / f"{source.stem}.o"
        objects.append(target)
        command = [*compiler, *flags, "-c", str(source), "-o", str(target)]
        jobs.append(
            (
                command,
                subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
                ),
            )
        )
    failures = []
    for command, process in jobs:
        try:
            output, _ = process.communicate(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            failures.append(f"`{shlex.join(command)}` took over {_TIMEOUT} s")
            continue
        if process.returncode != 0:
            failures.append(
                f"`{shlex.join(command)}` exited {process.returncode}:\n{output[-3000:]}"
            )
    if failures:
        _fail("building the driver failed:\n" + "\n".join(failures))
    program = build / "driver"
    command = [*compiler, *(str(item) for item in objects), "-o", str(program)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    if result.returncode != 0:
        _fail(
            f"`{shlex.join(command)}` exited {result.returncode}:\n"
            + (result.stderr or result.stdout)[-3000:]
        )
    return program


@cache
def llama_cpp_jinja_driver() -> Path:
    """The driver program, built (and cached) at first use; see the module docstring.

    A failure fails every test that needs the driver with the same message, without trying
    the download or the build again in this process."""
    if _FAILURE:
        pytest.fail(_FAILURE[0], pytrace=False)
    compiler = compiler_command()
    key = hashlib.sha256(
        "\0".join([_SDIST_SHA256, _sha256(_DRIVER), *compiler]).encode()
    ).hexdigest()[:16]
    directory = cache_directory() / "llama_cpp_jinja"
    program = directory / f"driver-{key}"
    if program.is_file():
        return program
    try:
        version = subprocess.run(
            [*compiler, "--version"], capture_output=True, text=True, timeout=120, check=False
        )
    except OSError as error:
        version = None
        _fail(
            f"no C++ compiler `{shlex.join(compiler)}` ({error}); install the test extra (ziglang)"
        )
    if version is None or version.returncode != 0:
        _fail(
            f"`{shlex.join(compiler)} --version` failed:\n{version.stderr if version else ''}"
            "\nexpected a C++ compiler; install the test extra (ziglang) or set PAWLETTE_CXX"
        )
    sdist = _download_sdist(directory)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=directory) as staging:
        source_root = Path(staging) / "llama.cpp"
        _extract(sdist, source_root)
        built = _compile(source_root, Path(staging), compiler)
        os.chmod(built, 0o755)
        os.replace(built, program)
    (directory / f"driver-{key}.log").write_text(
        f"{shlex.join(compiler)}: built in {time.monotonic() - started:.1f} s\n"
    )
    return program


def render_with_llama_cpp(template: str, cases: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Each case (template variables) rendered by llama.cpp's engine: ``{"text": ...}`` or
    ``{"error": ...}``, in order."""
    program = llama_cpp_jinja_driver()
    result = subprocess.run(
        [str(program)],
        input=json.dumps({"template": template, "cases": cases}, ensure_ascii=False).encode(),
        capture_output=True,
        timeout=_TIMEOUT,
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
