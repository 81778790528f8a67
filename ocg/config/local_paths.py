"""Local paths written in a params file (a models, run or sweep file): resolved against the
folder of the file that names them, never the working directory, and checked when the file is
read, before any work (docs/sweeps.md, "Where relative paths point").

A model field holds a hub id ('org/name', 'name'), an embedded model ('embedded:NAME') or a local
folder. It is a local path when it is written as one (absolute, './', '../', '~', or more than one
'/', which no hub id has), or when a folder of that name lies beside the file that names it.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import OcgInputError
from ..core.paths import SHIPPED_DATA

EMBEDDED = "embedded:"  # ocg/weights/embedded.py's EMBEDDED_PREFIX, without importing torch's side
PATH_STARTS = ("/", "./", "../", "~")
# The scoring settings that name a model by hub id or local folder (a scoring file's, or a run's
# `scoring:` block: each relative to the file that writes it)
LOCAL_MODEL_SETTINGS = (
    "bleurt_checkpoint",
    "perplexity_model",
    "perplexity_fallback",
    "embedding_model",
)
PATH_RULE = (
    "a local path (absolute, ./, ../, ~, or a folder beside this file) is relative to the file "
    "that names it"
)


def base_of(source: str | Path) -> Path | None:
    """The folder a params file's relative paths lie in; None where `source` is no file on disk
    (a mapping parsed in memory: its paths stay as written)."""
    path = Path(source)
    return path.resolve().parent if path.is_file() else None


def looks_local(value: str, base: Path | None) -> bool:
    """Whether a model field names a local path (see the module's rule) rather than a hub id or
    an embedded model."""
    if not value or value.startswith((EMBEDDED, SHIPPED_DATA)):
        return False
    if value.startswith(PATH_STARTS) or value.count("/") > 1 or value in (".", ".."):
        return True
    return base is not None and (base / value).is_dir()


def resolved(value: str, base: Path | None) -> str:
    """A local path made absolute against `base` (the naming file's folder; '~' is the home
    folder); as written where there is no base."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return str(path)
    return str((base / path).resolve()) if base is not None else value


def checked_path(where: str, value: str, base: Path | None, *, folder: bool) -> str:
    """`value` resolved (resolved()) and checked to exist (a folder where `folder`, else a file
    or a folder): else one error at `where` naming the path as written and where it pointed."""
    path = resolved(value, base)
    exists = Path(path).is_dir() if folder else Path(path).exists()
    if not exists:
        why = "is not a directory" if Path(path).exists() else "does not exist"
        shown = f"{value!r}" if path == value else f"{value!r} ({path})"
        raise OcgInputError(where, f"local path {shown} {why}; {PATH_RULE}")
    return path


def local_model_field(where: str, value: str | None, base: Path | None) -> str | None:
    """A model field (hub id, embedded or local folder): a local one resolved and checked to be
    a folder; any other value as written."""
    if value is None or base is None or not looks_local(value, base):
        return value
    return checked_path(where, value, base, folder=True)
