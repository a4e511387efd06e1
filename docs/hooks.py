"""mkdocs hooks: the generated pages (``docs/gen.py``) are added to the site at build time.

Every format :func:`pawlette.formats` lists gets its page and its place in the navigation,
and the command-line reference is read from the argument parser, at every build: a new
format needs no step of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # ``mkdocs`` run as a script: the repository is not on the path
    sys.path.insert(0, str(ROOT))

from docs import gen  # noqa: E402


def on_config(config: Any) -> Any:
    config["nav"] = gen.navigation(config["nav"])
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, text in gen.site_pages().items():
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, path, content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return gen.filled(page.file.src_uri, markdown)
