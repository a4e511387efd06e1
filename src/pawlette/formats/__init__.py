"""The format registry: one declaration module per format, loaded on first use; the
formats registered at run time with :func:`register_format`; and the formats other packages
declare under the ``pawlette.formats`` entry point group (``name = "module:ATTRIBUTE"``, a
:class:`~pawlette.Format` or a :class:`pawlette.declare.Layout`), so the command line and
the server know them too."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import sys
import types
from typing import Any

from ..errors import RequestError
from ..format import Format

# name -> module that defines ``FORMAT`` (under pawlette.formats unless the name is dotted).
_MODULES: dict[str, str] = {
    "pcml": "pawlette.formats.pcml",
    "chatglm3": "pawlette.formats.chatglm3",
    "breeze": "pawlette.formats.breeze",
    "omni": "pawlette.formats.omni",
    "chatml": "pawlette.formats.chatml",
    "llama3": "pawlette.formats.llama3",
    "mistral": "pawlette.formats.mistral",
    "deepseek": "pawlette.formats.deepseek",
    "glm": "pawlette.formats.glm",
    "bailing": "pawlette.formats.bailing",
    "harmony": "pawlette.formats.harmony",
    "kimi": "pawlette.formats.kimi",
    "gemma": "pawlette.formats.gemma",
    "gemma4": "pawlette.formats.gemma4",
    "phi3": "pawlette.formats.phi3",
    "granite": "pawlette.formats.granite",
    "hermes": "pawlette.formats.hermes",
    "smollm3": "pawlette.formats.smollm3",
    "functionary": "pawlette.formats.functionary",
    "firefunction": "pawlette.formats.firefunction",
    "solar": "pawlette.formats.solar",
    "functionary_v3_2": "pawlette.formats.functionary_v3_2",
    "cohere": "pawlette.formats.cohere",
    "nemotron_v2": "pawlette.formats.nemotron_v2",
    "deepseek_dsml": "pawlette.formats.deepseek_dsml",
    "gigachat": "pawlette.formats.gigachat",
    "minimax": "pawlette.formats.minimax",
    "lfm2": "pawlette.formats.lfm2",
    "bielik": "pawlette.formats.bielik",
    "minimax_m2": "pawlette.formats.minimax_m2",
    "seed_oss": "pawlette.formats.seed_oss",
    "spark": "pawlette.formats.spark",
    "laguna": "pawlette.formats.laguna",
    "reka": "pawlette.formats.reka",
    "apriel": "pawlette.formats.apriel",
    "apertus": "pawlette.formats.apertus",
    "rwkv": "pawlette.formats.rwkv",
    "hy3": "pawlette.formats.hy3",
    "minicpm": "pawlette.formats.minicpm",
    "muse": "pawlette.formats.muse",
    "ifm": "pawlette.formats.ifm",
}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_LOADED: dict[str, Format] = {}
_REGISTERED: dict[str, Format] = {}
_ENTRY_POINT_GROUP = "pawlette.formats"
_PLUGINS: list[dict[str, Any]] = []  # [name -> entry point], read once


def _plugins() -> dict[str, Any]:
    if not _PLUGINS:
        group = importlib.metadata.entry_points(group=_ENTRY_POINT_GROUP)
        _PLUGINS.append({entry.name: entry for entry in group})
    return _PLUGINS[0]


def formats() -> list[str]:
    """The names of every registered format."""
    names = [*_MODULES, *(name for name in _REGISTERED if name not in _MODULES)]
    return names + [name for name in _plugins() if name not in names]


def _load_plugin(name: str, entry: Any) -> Format:
    value = entry.load()
    if not isinstance(value, Format):
        declared = _declared(value)
        if declared is None:
            raise TypeError(f"entry point {_ENTRY_POINT_GROUP}:{name} is not a Format or Layout")
        value = declared
    return value


def _declared(value: object) -> Format | None:
    """The format a layout declares (None: not a layout)."""
    from ..declare import Layout, declare

    if isinstance(value, Layout):
        return declare(value)
    return None


def register_format(fmt: object, *, replace: bool = False) -> Format:
    """Make a format known by its name everywhere a format is named (``get_format``, the
    CLI's ``-f``, the server, ``export_jinja``, ``export_grammar``, ``tokenize``, the
    prompters' ``format=``).

    ``fmt`` is a :class:`~pawlette.Format` or a :class:`pawlette.declare.Layout` (declared
    here).  A name already taken raises :class:`~pawlette.errors.RequestError` unless
    ``replace``.  Returns the registered format.
    """
    if not isinstance(fmt, Format):
        declared = _declared(fmt)
        if declared is None:
            raise RequestError(
                "format", f"a {type(fmt).__name__}", "a pawlette Format or declare.Layout"
            )
        fmt = declared
    if not isinstance(fmt.name, str) or not _NAME.fullmatch(fmt.name) or fmt.name == "auto":
        # "auto" is what -f auto means, "base:variant" a declared format's options, and a
        # name with spaces or newlines cannot be named on a command line.
        raise RequestError(
            "format.name",
            repr(fmt.name)[:80],
            "a name of letters, digits, '.', '_' and '-' (not 'auto', no ':')",
        )
    if not replace and (fmt.name in _MODULES or fmt.name in _REGISTERED):
        raise RequestError(
            "format.name", f"{fmt.name!r} is registered already", "a new name, or replace=True"
        )
    _REGISTERED[fmt.name] = fmt
    _LOADED.pop(fmt.name, None)
    return fmt


def registered_in_this_process(name: str) -> bool:
    """Whether ``name`` is known only through :func:`register_format` in this process (a
    fresh interpreter, such as a server worker, cannot find it)."""
    return name.partition(":")[0] in _REGISTERED


def _variant(name: str) -> Format:
    import dataclasses

    base, _, variant = name.partition(":")
    fmt = get_format(base)
    variants = getattr(getattr(fmt, "declaration", None), "variants", None) or {}
    if variant not in variants:
        raise RequestError(
            "format", f"found {name!r}", f"{base}:VARIANT, VARIANT one of: {', '.join(variants)}"
        )
    return fmt.with_options(**dataclasses.asdict(variants[variant]))


def _spelled_as_path(name: str) -> bool:
    """Whether ``name`` reads as a path (a format's name holds no ``/`` and starts with no
    ``.``)."""
    return os.sep in name or "/" in name or name.startswith(".")


def _is_directory(name: str) -> bool:
    """A path to a directory (never a format name: names hold no ``/``)."""
    return _spelled_as_path(name) and os.path.isdir(name)


def directory_argument(directory: str | os.PathLike[str]) -> str:
    """``directory`` spelled so that :func:`get_format` and ``-f`` read it as a model
    directory: ``my-model`` becomes ``./my-model`` (bare, it is looked up as a format's
    name); a path that reads as one already is kept as given.

    >>> directory_argument("my-model") == os.path.join(".", "my-model")
    True
    """
    text = os.fspath(directory)
    return text if _spelled_as_path(text) else os.path.join(os.curdir, text)


def _from_file(path: str) -> Format:
    """The format a Python file declares: its ``FORMAT`` (a Format or a Layout)."""
    import importlib.util
    import sys

    # One module per file (two files may share a name); known to sys.modules while it runs,
    # as an import's module is: dataclasses look their module's names up there.
    module_name = "pawlette_file_" + re.sub(r"\W", "_", os.path.abspath(path))
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise RequestError("format", f"found {path!r}", "a Python file that sets FORMAT")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    value = getattr(module, "FORMAT", None)
    if not isinstance(value, Format):
        declared = _declared(value)
        if declared is None:
            found = "no FORMAT" if value is None else f"FORMAT = {type(value).__name__}"
            raise RequestError(
                "format",
                f"{found} in {path!r}",
                "FORMAT = a Format or a Layout (FORMAT = declare(Layout(...)))",
            )
        value = declared
    return value


def _from_path(path: str) -> Format:
    """The format a path names: a model directory's (``-f ./model-dir``: the format its
    chat template writes), or a Python file's ``FORMAT`` (``-f my_format.py``)."""
    if os.path.isdir(path):
        from ..detect import format_of_directory

        return format_of_directory(path)
    return _from_file(path)


def get_format(name: str) -> Format:
    """The registered format called ``name`` (``"base:variant"``: a declared format with
    the options its declaration names so, such as ``"chatml:qwen2.5"``; a path to a model
    directory: the format :func:`pawlette.detect.detect` finds for its chat template; a path
    to a Python file (``my_format.py``): the format it sets as ``FORMAT``).

    >>> get_format("pcml").name
    'pcml'
    """
    registered = _REGISTERED.get(name)
    if registered is not None:
        return registered
    if _is_directory(name) or (name.endswith(".py") and os.path.isfile(name)):
        # Remembered by where it is, not by how it was spelled: "./my-model" names another
        # directory once the working directory changes.
        key = os.path.abspath(name)
        loaded = _LOADED.get(key)
        if loaded is None:
            loaded = _from_path(name)
            _LOADED[key] = loaded
        return loaded
    loaded = _LOADED.get(name)
    if loaded is not None:
        return loaded
    if ":" in name:  # "chatml:qwen2.5": a declared format's named options (its variants)
        _LOADED[name] = _variant(name)
        return _LOADED[name]
    module_name = _MODULES.get(name)
    if module_name is None:
        entry = _plugins().get(name)
        if entry is None:
            if _spelled_as_path(name) or name.endswith(".py"):  # "-f ./Qwen3-0.6B": none
                missing = "no such file" if name.endswith(".py") else "no such directory"
                found = "a file, not Python" if os.path.exists(name) else missing
                raise RequestError(
                    "format",
                    f"found {name!r}: {found}",
                    "a model directory, a Python file that sets FORMAT, or one of "
                    + ", ".join(formats()),
                )
            if os.path.isdir(name):  # "-f my-model": a directory, named as a format is
                raise RequestError(
                    "format",
                    f"found {name!r}, a directory read as a format's name",
                    f"{directory_argument(name)} for the model directory, or one of "
                    + ", ".join(formats()),
                )
            raise RequestError("format", f"found {name!r}", "one of " + ", ".join(formats()))
        _LOADED[name] = _load_plugin(name, entry)
        return _LOADED[name]
    qualified = module_name if "." in module_name else f"{__name__}.{module_name}"
    module = importlib.import_module(qualified)
    declared = module.FORMAT
    if not isinstance(declared, Format):
        raise TypeError(f"{qualified}.FORMAT is not a Format")
    _LOADED[name] = declared
    return declared


class _Registry(types.ModuleType):
    """This package as ``pawlette.formats``: called, it lists the registered formats (the
    public ``pawlette.formats()``); as a package it holds the families' modules, so that
    ``import pawlette.formats.harmony as harmony`` and ``pawlette.formats.harmony`` work too.
    (A plain function in its place would hide the package from both.)"""

    def __call__(self) -> list[str]:
        return formats()


sys.modules[__name__].__class__ = _Registry
