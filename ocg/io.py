"""Writing files so that a crash never leaves a half-written result behind."""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success it replaces `path` in one rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_json(path: str | Path, obj: Any) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")
    return Path(path)


def write_parquet(path: str | Path, df) -> Path:
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)
    return Path(path)


def read_yaml(path: str | Path) -> Any:
    """A parameter file's contents; unreadable or invalid YAML is an error naming the file."""
    import yaml

    from .errors import OcgInputError
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise OcgInputError(str(path), f"cannot read YAML: {exc}") from None


def read_json(path: str | Path) -> Any:
    return json.loads(Path(path).read_text())
