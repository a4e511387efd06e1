"""One file from PyPI for the tests, downloaded by pip in its hash-checking mode and kept in
the test cache (a wheel of ``qwen-agent`` for Qwen's tokenizer, the ``llama-cpp-python`` sdist
for llama.cpp's engines).  Nothing from a model hub: PyPI is the one place the tests reach."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

__all__ = ["file_sha256", "pip_download"]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pip_download(
    requirement: str,
    sha256: str,
    file_name: str,
    directory: Path,
    *,
    source: bool,
    fail: Callable[[str], NoReturn],
    timeout: float,
) -> Path:
    """``directory/file_name``: the file pip downloads for ``requirement`` (``name==version``,
    no dependencies; ``source``: the sdist, else a wheel), its SHA-256 checked by pip and
    again here.  Kept: a file already there with that SHA-256 is returned as it is.  Any
    failure calls ``fail`` with what went wrong and what was expected."""
    target = directory / file_name
    if target.is_file() and file_sha256(target) == sha256:
        return target
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as staging:
        requirements = Path(staging) / "requirements.txt"
        requirements.write_text(f"{requirement} --hash=sha256:{sha256}\n")
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            *(["--no-binary", ":all:"] if source else ["--only-binary=:all:"]),
            "--disable-pip-version-check",
            "--quiet",
            "-r",
            str(requirements),
            "--dest",
            staging,
        ]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            fail(f"`{shlex.join(command)}` took over {timeout:g} s; expected {file_name} from PyPI")
        downloaded = Path(staging) / file_name
        if result.returncode != 0 or not downloaded.is_file():
            output = (result.stderr or result.stdout).strip()[-2000:]
            fail(
                f"`{shlex.join(command)}` exited {result.returncode} with\n{output}\n"
                f"expected {file_name} from PyPI. Without network, put it in {directory}"
                " (set PAWLETTE_CACHE to move it)"
            )
        found = file_sha256(downloaded)
        if found != sha256:
            fail(f"{file_name} has SHA-256 {found}; expected {sha256}")
        os.replace(downloaded, target)
    return target
