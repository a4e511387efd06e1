"""A dataset in the local Hugging Face Hub cache, read without any network.

``huggingface_hub`` (and ``datasets``, ``huggingface-cli download --repo-type dataset``)
keeps a downloaded dataset repository as::

    $HF_HUB_CACHE (else $HF_HOME/hub, else ~/.cache/huggingface/hub; as huggingface_hub)
    └── datasets--OWNER--NAME/
        ├── blobs/<sha>                     each file's content, stored once
        ├── refs/main                       a branch or tag: the commit hash it points at
        └── snapshots/<commit>/<path>       the repository's files: links into ../../blobs

A dataset is named by the path of its ``datasets--OWNER--NAME`` directory (or of one of its
snapshots), or as ``hf://datasets/OWNER/NAME`` (``huggingface_hub``'s ``HfFileSystem``
spelling; ``hf://OWNER/NAME`` for short, since only datasets are read), with
``@REVISION`` after the name (a branch, a tag, a commit hash or its first 7 or more
characters; ``refs%2Fconvert%2Fparquet`` for ``refs/convert/parquet``) and optionally a path
inside the repository.  The revision defaults to ``main``.

Its data files (``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst``, ``.parquet``) are grouped into splits
as the Hub names them (its documented file-name conventions, as ``datasets`` reads them):

1. ``data/<split>-00000-of-00003.<ext>``: any split name (what ``push_to_hub`` writes);
2. else a directory named after a split keyword (``train/``, ``data/test/``,
   ``default/train/0000.parquet`` as the Parquet conversion writes);
3. else a file name holding a split keyword between non-word characters (``train.jsonl``,
   ``my_train_file_1.jsonl``);
4. else every data file is ``train``.

The keywords are ``train``/``training``, ``validation``/``valid``/``val``/``dev`` and
``test``/``testing``/``eval``/``evaluation``.  ``split`` picks one (a keyword names its
split); with several splits and none picked, the error lists them.  ``data_files`` (a glob
relative to the snapshot: ``*`` and ``?`` within a directory, ``**`` across) picks files
instead, such as one configuration's (``en/*.parquet``).  A dataset card's ``configs:``
section is not read.  Every error lists what the cache holds: the cached datasets, the
revisions, the splits or the files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from ..errors import PawletteError

__all__ = ["HubDataset", "hub_cache_directory", "is_hub_address", "resolve_hub_dataset"]

PREFIX = "hf://"
DATA_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".parquet")
SPLIT_KEYWORDS = {
    "train": ("train", "training"),
    "validation": ("validation", "valid", "val", "dev"),
    "test": ("test", "testing", "eval", "evaluation"),
}
_KEYWORD_SPLIT = {keyword: split for split, words in SPLIT_KEYWORDS.items() for keyword in words}
_SEPARATORS = r"[-._ 0-9]"
_CUSTOM_SPLIT = re.compile(r"^data/(?P<split>[^/]+?)-[0-9]{5}-of-[0-9]{5}[^/]*$")
_HEX_PREFIX = re.compile(r"^[0-9a-f]{7,39}$")
LISTED = 12
"""At most this many names in an error's list (then ``... and N more``)."""


@dataclass(frozen=True)
class HubDataset:
    """The files to read of one split of a cached dataset, at one revision."""

    repo_id: str
    folder: Path
    revision: str
    commit: str
    split: str | None
    files: tuple[str, ...]
    """Paths relative to the snapshot, in reading order (sorted)."""

    @property
    def snapshot(self) -> Path:
        return self.folder / "snapshots" / self.commit

    def describe(self) -> dict[str, object]:
        """What the Parquet metadata records of the input."""
        return {
            "hub_repo": self.repo_id,
            "hub_revision": self.revision,
            "hub_commit": self.commit,
            "hub_split": self.split,
            "hub_files": list(self.files),
        }


def hub_cache_directory() -> Path:
    """The cache ``huggingface_hub`` uses: ``$HF_HUB_CACHE``, else its former name
    ``$HUGGINGFACE_HUB_CACHE``, else ``$HF_HOME/hub``, else
    ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(variable):
            return Path(os.environ[variable]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "huggingface" / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def is_hub_address(source: str) -> bool:
    """Whether ``source`` names a cached dataset (``hf://``, or a cache folder/snapshot)."""
    if source.startswith(PREFIX):
        return True
    path = Path(source)
    if not path.is_dir():
        return False
    return _folder_of(path) is not None


def _folder_of(path: Path) -> tuple[Path, str | None] | None:
    """``(datasets--... folder, commit or None)`` for a folder or a snapshot path."""
    if path.name.startswith("datasets--") and (path / "snapshots").is_dir():
        return path, None
    parent = path.parent
    if parent.name == "snapshots" and parent.parent.name.startswith("datasets--"):
        return parent.parent, path.name
    return None


def resolve_hub_dataset(
    source: str,
    *,
    split: str | None = None,
    data_files: str | None = None,
    revision: str | None = None,
) -> HubDataset:
    """The files of ``source`` to read (see the module docstring)."""
    inside = ""
    if source.startswith(PREFIX):
        repo_id, named_revision, inside = _parse_address(source)
        cache = hub_cache_directory()
        folder = cache / ("datasets--" + repo_id.replace("/", "--"))
        if not folder.is_dir():
            raise PawletteError(_missing_repo(source, repo_id, cache))
        commit_given = None
    else:
        found = _folder_of(Path(source))
        if found is None:  # pragma: no cover - is_hub_address was checked first
            raise PawletteError(f"{source}: not a datasets--OWNER--NAME folder of the Hub cache")
        folder, commit_given = found
        repo_id = folder.name.removeprefix("datasets--").replace("--", "/")
        named_revision = commit_given
    if revision is not None and named_revision is not None and revision != named_revision:
        raise PawletteError(
            f"{source}: names revision {named_revision!r} and --revision {revision!r};"
            " expected one of them"
        )
    wanted = revision or named_revision or "main"
    commit = _commit(source, folder, wanted)
    snapshot = folder / "snapshots" / commit
    files = _data_files(snapshot)
    if inside:
        prefix = inside.strip("/")
        files = [name for name in files if name == prefix or name.startswith(prefix + "/")]
        if not files:
            raise PawletteError(
                f"{source}: no data file at {prefix!r} in revision {wanted} ({commit[:12]});"
                f" expected one of {_listing(_data_files(snapshot))}"
            )
    if data_files is not None:
        chosen = [name for name in files if _glob_match(name, data_files)]
        if not chosen:
            raise PawletteError(
                f"{source}: --data-files {data_files!r} matches no data file; expected a glob"
                f" relative to the snapshot matching some of {_listing(files)}"
            )
        files = chosen
        if split is not None:
            files = _pick_split(source, files, split)
    elif split is not None or not inside:
        files = _pick_split(source, files, split)
    chosen_split = None
    if split is not None:
        chosen_split = _KEYWORD_SPLIT.get(split, split)
    elif data_files is None and not inside:
        chosen_split = next(iter(_splits(files)))
    for name in files:
        target = snapshot / name
        if not target.exists():  # a link whose blob is missing: an interrupted download
            raise PawletteError(
                f"{target}: links to {os.readlink(target) if target.is_symlink() else '?'},"
                " which is missing; expected the blob (download the dataset again)"
            )
    return HubDataset(repo_id, folder, wanted, commit, chosen_split, tuple(files))


def _parse_address(source: str) -> tuple[str, str | None, str]:
    """``hf://[datasets/]OWNER/NAME[@REVISION][/PATH]`` as (repo id, revision, path)."""
    rest = source[len(PREFIX) :]
    kind, _, tail = rest.partition("/")
    if kind in ("models", "spaces"):
        raise PawletteError(f"{source}: a {kind[:-1]} repository; expected a dataset")
    if kind == "datasets":
        rest = tail
    parts = rest.split("/")
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise PawletteError(
            f"{source}: expected hf://datasets/OWNER/NAME[@REVISION][/PATH] (or hf://OWNER/NAME)"
        )
    owner, name_part = parts[0], parts[1]
    inside = "/".join(parts[2:])
    revision = None
    if "@" in owner:
        raise PawletteError(f"{source}: '@' in the owner; expected OWNER/NAME@REVISION")
    if "@" in name_part:
        name_part, revision = name_part.split("@", 1)
        revision = unquote(revision)
        if not revision:
            raise PawletteError(f"{source}: an empty revision after '@'")
    return f"{owner}/{name_part}", revision, inside


def _missing_repo(source: str, repo_id: str, cache: Path) -> str:
    where = f"{cache} (from {_cache_origin()})"
    if not cache.is_dir():
        return f"{source}: no Hub cache at {where}; expected the dataset downloaded first"
    cached = sorted(
        entry.name.removeprefix("datasets--").replace("--", "/")
        for entry in cache.iterdir()
        if entry.name.startswith("datasets--") and entry.is_dir()
    )
    model = (cache / ("models--" + repo_id.replace("/", "--"))).is_dir()
    note = f"; {repo_id} is cached as a model repository there" if model else ""
    return (
        f"{source}: dataset {repo_id} is not in the Hub cache {where}{note}; cached datasets:"
        f" {_listing(cached)}"
    )


def _cache_origin() -> str:
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        if os.environ.get(variable):
            return f"${variable}"
    return "the default"


def _refs(folder: Path) -> dict[str, str]:
    refs = folder / "refs"
    found: dict[str, str] = {}
    if refs.is_dir():
        for entry in sorted(refs.rglob("*")):
            if entry.is_file():
                # huggingface_hub writes a commit hash: anything else is a damaged cache,
                # reported as such (not a UnicodeDecodeError) by the lookup that uses it.
                text = entry.read_bytes().decode("ascii", errors="replace").strip()
                found[entry.relative_to(refs).as_posix()] = text
    return found


def _commit(source: str, folder: Path, revision: str) -> str:
    """The commit of ``revision``: a ref's hash, a snapshot's name, or a unique prefix."""
    refs = _refs(folder)
    if not (folder / "snapshots").is_dir():  # an interrupted or hand-pruned download
        raise PawletteError(
            f"{source}: {folder} has no snapshots directory; expected"
            " snapshots/<commit>/ (download the dataset again)"
        )
    snapshots = sorted(entry.name for entry in (folder / "snapshots").iterdir() if entry.is_dir())
    if revision in refs:
        commit = refs[revision]
        if commit not in snapshots:
            raise PawletteError(
                f"{source}: refs/{revision} points at {commit}, which has no snapshot in"
                f" {folder / 'snapshots'}; snapshots: {_listing(snapshots)}"
            )
        return commit
    if revision in snapshots:
        return revision
    if _HEX_PREFIX.match(revision):  # a commit hash's first characters, as git accepts
        prefixed = [name for name in snapshots if name.startswith(revision)]
        if len(prefixed) == 1:
            return prefixed[0]
    refs_listing = ", ".join(f"{name} ({commit[:12]})" for name, commit in refs.items()) or "none"
    raise PawletteError(
        f"{source}: no revision {revision!r} in {folder}; refs: {refs_listing}; snapshots:"
        f" {_listing(snapshots)}"
    )


def _data_files(snapshot: Path) -> list[str]:
    if not snapshot.is_dir():
        raise PawletteError(f"{snapshot}: no such snapshot directory")
    names = []
    for entry in snapshot.rglob("*"):
        # A directory, or a link to one, is no data file (a dangling link is kept: its
        # missing blob is reported below).
        if entry.is_dir():
            continue
        relative = entry.relative_to(snapshot).as_posix()
        if relative.lower().endswith(DATA_SUFFIXES):
            names.append(relative)
    if not names:
        everything = sorted(
            entry.relative_to(snapshot).as_posix()
            for entry in snapshot.rglob("*")
            if not entry.is_dir()
        )
        raise PawletteError(
            f"{snapshot}: no data file ({', '.join(DATA_SUFFIXES)}); the snapshot holds"
            f" {_listing(everything)}"
        )
    return sorted(names)


def _splits(files: Iterable[str]) -> dict[str, list[str]]:
    """Files by split, by the first convention that any file follows (module docstring)."""
    files = list(files)
    for rule in (_custom_split, _directory_split, _file_name_split):
        found: dict[str, list[str]] = {}
        for name in files:
            split = rule(name)
            if split is not None:
                found.setdefault(split, []).append(name)
        if found:
            return found
    return {"train": files}


def _custom_split(name: str) -> str | None:
    match = _CUSTOM_SPLIT.match(name)
    return match.group("split") if match else None


def _directory_split(name: str) -> str | None:
    for directory in name.split("/")[:-1]:
        split = _KEYWORD_SPLIT.get(directory.lower())
        if split is not None:
            return split
    return None


def _file_name_split(name: str) -> str | None:
    base = name.rsplit("/", 1)[-1].lower()
    for keyword, split in _KEYWORD_SPLIT.items():
        if re.search(rf"(?:^|{_SEPARATORS}){keyword}(?:{_SEPARATORS}|$)", base):
            return split
    return None


def _pick_split(source: str, files: list[str], split: str | None) -> list[str]:
    splits = _splits(files)
    if split is None:
        if len(splits) == 1:
            return next(iter(splits.values()))
        raise PawletteError(
            f"{source}: splits {', '.join(_described(splits))}; expected --split naming one"
        )
    wanted = _KEYWORD_SPLIT.get(split, split)
    if wanted not in splits:
        raise PawletteError(
            f"{source}: no split {split!r}; expected one of {', '.join(_described(splits))}"
        )
    return splits[wanted]


def _described(splits: dict[str, list[str]]) -> list[str]:
    return [
        f"{name} ({len(files)} file{'s' if len(files) != 1 else ''})"
        for name, files in splits.items()
    ]


def _glob_match(name: str, pattern: str) -> bool:
    """``*`` within one directory, ``**`` across directories."""
    expression = ""
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            expression += "(?:.*/)?"
            index += 3
        elif pattern.startswith("**", index):
            expression += ".*"
            index += 2
        else:
            piece = pattern[index]
            expression += {"*": "[^/]*", "?": "[^/]"}.get(piece, re.escape(piece))
            index += 1
    return re.fullmatch(expression, name) is not None


def _listing(names: list[str]) -> str:
    if not names:
        return "none"
    shown = ", ".join(names[:LISTED])
    return shown + (f" ... and {len(names) - LISTED} more" if len(names) > LISTED else "")
