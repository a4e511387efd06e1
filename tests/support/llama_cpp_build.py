"""Small programs built from parts of llama.cpp, as vendored by the llama-cpp-python sdist on PyPI.

The tests check exports with llama.cpp's own code (its Jinja engine, its GBNF grammar engine)
without building all of libllama (about 12 minutes): :func:`build_driver` compiles only the
sources an engine needs together with one driver of ours (``tests/export/llama_cpp_*_driver.cpp``):

1. looks in the cache directory (``$PAWLETTE_CACHE``, else ``~/.cache/pawlette``) for a driver
   built from the same sdist, driver source, engine sources and compiler;
2. else runs ``python -m pip download --no-deps --no-binary :all: llama-cpp-python==<pinned>``
   in pip's hash-checking mode (about 77 MB; the sdist is kept in the cache), and fails the test
   with pip's message when that does not work (nothing is skipped);
3. checks the sdist's SHA-256, extracts only the engine's files with :mod:`tarfile`;
4. compiles them and the driver, one object per process in parallel, and links.  The compiler is
   ``$PAWLETTE_CXX`` when set (e.g. ``g++``), else ``g++`` when on the PATH, else
   ``python -m ziglang c++`` (the ``ziglang`` package from PyPI, in the test extra), so a machine
   with Python and PyPI only can build it.  A failed build fails the test with the compiler's
   output.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from .llama3 import cache_directory
from .pip_download import file_sha256, pip_download

__all__ = [
    "LLAMA_CPP_PYTHON_VERSION",
    "XLLAMACPP_VERSION",
    "Engine",
    "build_driver",
    "compiler_command",
    "sdist_text",
    "sdist_texts",
    "xllamacpp_texts",
]

# llama-cpp-python 0.3.36 vendors the llama.cpp whose engines are checked.
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
_SDIST_NAME = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
_SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
_ROOT = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}/vendor/llama.cpp/"
# xllamacpp's sdist vendors a newer llama.cpp (``thirdparty/llama.cpp/``): only its chat
# templates are read (see :func:`xllamacpp_texts`), none of its engines.
XLLAMACPP_VERSION = "2026.10.11549"
_XLLAMACPP_NAME = f"xllamacpp-{XLLAMACPP_VERSION}.tar.gz"
_XLLAMACPP_SHA256 = "c17ee1163006f70726abb9f72137830818f3d8cb60bfc34cb232d08428eaa22b"
_XLLAMACPP_ROOT = f"xllamacpp-{XLLAMACPP_VERSION}/thirdparty/llama.cpp/"
# The sdists and the drivers are kept here (the folder's name predates the grammar driver).
_CACHE = "llama_cpp_jinja"
TIMEOUT = 900


@dataclass(frozen=True)
class Engine:
    """A part of llama.cpp and the driver of ours that runs it."""

    title: str  # for messages: "llama.cpp's Jinja engine"
    prefix: str  # the cached driver's file name starts with it
    driver: Path  # our C++ source with main()
    members: tuple[str, ...]  # files and folders (ending in /) to extract, relative to _ROOT
    sources: tuple[str, ...]  # the sources compiled with the driver, relative to _ROOT
    includes: tuple[str, ...]  # include folders, relative to _ROOT
    in_key: tuple[str, ...] = ()  # anything else the cached driver depends on


_FAILURES: dict[str, str] = {}  # the first failure per engine, repeated to every later test


def _fail(engine: Engine, message: str) -> NoReturn:
    _FAILURES.setdefault(engine.title, f"{engine.title}: {message}")
    pytest.fail(_FAILURES[engine.title], pytrace=False)


def compiler_command() -> list[str]:
    """The C++ compiler the drivers are built with (see the module docstring)."""
    configured = os.environ.get("PAWLETTE_CXX")
    if configured:
        return shlex.split(configured)
    if shutil.which("g++"):
        return ["g++"]
    return [sys.executable, "-m", "ziglang", "c++"]


def _download_sdist(engine: Engine, directory: Path) -> Path:
    return pip_download(
        f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}",
        _SDIST_SHA256,
        _SDIST_NAME,
        directory,
        source=True,
        fail=functools.partial(_fail, engine),
        timeout=TIMEOUT,
    )


def _extract(engine: Engine, sdist: Path, destination: Path) -> None:
    """Only the members the driver needs, written by name (no path from the archive is
    trusted)."""
    try:
        with tarfile.open(sdist, "r:gz") as archive:
            for member in archive:
                if not member.isfile() or not member.name.startswith(_ROOT):
                    continue
                relative = member.name[len(_ROOT) :]
                if ".." in relative.split("/") or not any(
                    relative == name or (name.endswith("/") and relative.startswith(name))
                    for name in engine.members
                ):
                    continue
                data = archive.extractfile(member)
                assert data is not None
                target = destination / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data.read())
    except (tarfile.TarError, OSError) as error:
        _fail(engine, f"cannot read {sdist} ({error}); delete it to download it again")
    missing = [name for name in engine.sources if not (destination / name).is_file()]
    if missing:
        _fail(engine, f"{sdist} lacks {', '.join(missing)}; expected {engine.title}'s sources")


def _compile(engine: Engine, source_root: Path, build: Path, compiler: list[str]) -> Path:
    flags = ["-std=c++17", "-O1", *(f"-I{source_root / name}" for name in engine.includes)]
    jobs = []
    objects = []
    for source in [*(source_root / name for name in engine.sources), engine.driver]:
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
            output, _ = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
            failures.append(f"`{shlex.join(command)}` took over {TIMEOUT} s")
            continue
        if process.returncode != 0:
            failures.append(
                f"`{shlex.join(command)}` exited {process.returncode}:\n{output[-3000:]}"
            )
    if failures:
        _fail(engine, "building the driver failed:\n" + "\n".join(failures))
    program = build / "driver"
    command = [*compiler, *(str(item) for item in objects), "-o", str(program)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if result.returncode != 0:
        _fail(
            engine,
            f"`{shlex.join(command)}` exited {result.returncode}:\n"
            + (result.stderr or result.stdout)[-3000:],
        )
    return program


def build_driver(engine: Engine, extra_key: Sequence[str] = ()) -> Path:
    """The engine's driver program, built (and cached) at first use; see the module docstring.

    A failure fails every test that needs the driver with the same message, without trying
    the download or the build again in this process.  Callers cache the result."""
    if engine.title in _FAILURES:
        pytest.fail(_FAILURES[engine.title], pytrace=False)
    compiler = compiler_command()
    key = hashlib.sha256(
        "\0".join(
            [_SDIST_SHA256, file_sha256(engine.driver), *compiler, *engine.in_key, *extra_key]
        ).encode()
    ).hexdigest()[:16]
    directory = cache_directory() / _CACHE
    program = directory / f"{engine.prefix}-{key}"
    if program.is_file():
        return program
    try:
        version = subprocess.run(
            [*compiler, "--version"], capture_output=True, text=True, timeout=120, check=False
        )
    except OSError as error:
        _fail(
            engine,
            f"no C++ compiler `{shlex.join(compiler)}` ({error}); install the test extra (ziglang)",
        )
    if version.returncode != 0:
        _fail(
            engine,
            f"`{shlex.join(compiler)} --version` failed:\n{version.stderr}"
            "\nexpected a C++ compiler; install the test extra (ziglang) or set PAWLETTE_CXX",
        )
    sdist = _download_sdist(engine, directory)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=directory) as staging:
        source_root = Path(staging) / "llama.cpp"
        _extract(engine, sdist, source_root)
        built = _compile(engine, source_root, Path(staging), compiler)
        os.chmod(built, 0o755)
        os.replace(built, program)
    (directory / f"{engine.prefix}-{key}.log").write_text(
        f"{shlex.join(compiler)}: built in {time.monotonic() - started:.1f} s\n"
    )
    return program


_TEMPLATES = Engine(
    title="llama.cpp's reference chat templates",
    prefix="templates",
    driver=Path(__file__),
    members=(),
    sources=(),
    includes=(),
)


@functools.cache
def sdist_text(member: str) -> str:
    """A text file of the pinned sdist, relative to ``vendor/llama.cpp/`` (the reference chat
    templates in ``models/templates/``), from the same hash-checked download as the drivers."""
    sdist = _download_sdist(_TEMPLATES, cache_directory() / _CACHE)
    with tarfile.open(sdist) as archive:
        file = archive.extractfile(_ROOT + member)
        if file is None:
            _fail(_TEMPLATES, f"{member}: not a file in {_SDIST_NAME}")
        return file.read().decode("utf-8")


def sdist_texts(folder: str) -> dict[str, str]:
    """Every file of the pinned sdist under ``folder`` (relative to ``vendor/llama.cpp/``,
    ending in ``/``), by its path relative to ``folder``: one pass over the archive, where
    :func:`sdist_text` reads it once per file."""
    sdist = _download_sdist(_TEMPLATES, cache_directory() / _CACHE)
    return _texts_under(_TEMPLATES, sdist, _ROOT + folder)


_NEWER_TEMPLATES = Engine(
    title="llama.cpp's newer chat templates (xllamacpp's sdist)",
    prefix="xllamacpp",
    driver=Path(__file__),
    members=(),
    sources=(),
    includes=(),
)


def xllamacpp_texts(folder: str) -> dict[str, str]:
    """Every file under ``folder`` (relative to ``thirdparty/llama.cpp/``, ending in ``/``) of
    the pinned xllamacpp sdist (about 38 MB, downloaded as the llama-cpp-python one is and
    kept beside it), by its path relative to ``folder``, in one pass over the archive."""
    sdist = pip_download(
        f"xllamacpp=={XLLAMACPP_VERSION}",
        _XLLAMACPP_SHA256,
        _XLLAMACPP_NAME,
        cache_directory() / _CACHE,
        source=True,
        fail=functools.partial(_fail, _NEWER_TEMPLATES),
        timeout=TIMEOUT,
    )
    return _texts_under(_NEWER_TEMPLATES, sdist, _XLLAMACPP_ROOT + folder)


def _texts_under(engine: Engine, sdist: Path, prefix: str) -> dict[str, str]:
    texts = {}
    with tarfile.open(sdist) as archive:
        for member in archive:
            if member.isfile() and member.name.startswith(prefix):
                file = archive.extractfile(member)
                if file is not None:
                    texts[member.name[len(prefix) :]] = file.read().decode("utf-8")
    if not texts:
        _fail(engine, f"{prefix}: no files under it in {sdist.name}")
    return texts
