"""Writing files so that a crash never leaves a half-written result behind."""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Parameter files are read in ocg/core/yaml_files.py; these names stay importable from here.
from .yaml_files import YAML_ALIAS_BUDGET as YAML_ALIAS_BUDGET
from .yaml_files import YAML_MAX_DEPTH as YAML_MAX_DEPTH
from .yaml_files import parse_yaml as parse_yaml
from .yaml_files import read_extends_chain as read_extends_chain
from .yaml_files import read_text as read_text
from .yaml_files import read_yaml as read_yaml


def make_temp(
    parent: str | Path, prefix: str, suffix: str = ".tmp", directory: bool = False
) -> Path:
    """A new uniquely named file (or directory) in `parent`, created with the modes any other
    file gets (0666 / 0777 less the umask), unlike tempfile's private 0600 / 0700."""
    for _ in range(100):
        path = Path(parent) / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            if directory:
                os.mkdir(path, 0o777)
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent}: no free temporary name for {prefix}*{suffix}")


def follow_umask(path: str | Path, executable: bool = False) -> None:
    """Give a file that a library wrote privately (safetensors writes 0600) the mode any other
    file gets: 0666 (0777 for a script) less the umask."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, (0o777 if executable else 0o666) & ~mask)


def refuse_link(*paths: str | Path, fix: str = "remove the link (its target is untouched)") -> None:
    """ocg deletes, clears, renames and overwrites only what it made: a path it would change that
    is a symbolic link is an error naming it, before anything is touched (its target never is)."""
    from .errors import OcgInputError

    for path in paths:
        if os.path.islink(path):
            raise OcgInputError(
                str(path),
                f"a symbolic link (to {os.readlink(path)}) stands where ocg "
                "clears, renames or writes its own folder or file; ocg never "
                f"changes anything through a link it did not make: {fix}",
            )


def naming(exc: OSError, path: str | Path) -> OSError:
    """The same error naming the file the user knows (not a temporary one, or none at all)."""
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path` (`.<name>.<random>.tmp`); on success it replaces
    `path` in one rename. A kill leaves at most that temporary file (see remove_temps)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp_path = make_temp(path.parent, f".{path.name}.")
    except OSError as exc:
        raise naming(exc, path) from exc
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except OSError as exc:
        if exc.filename not in (None, str(tmp_path)):
            raise
        raise naming(exc, path) from exc
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


TEMP_NAME = re.compile(
    r"\..+\.[a-z0-9_]{8,12}\.tmp"
)  # ours: 12 hex digits; tempfile's: 8 characters


def remove_temps(folder: str | Path) -> list[Path]:
    """Delete the temporary files that killed atomic writes left in `folder` (call it only while
    holding the folder's writer lock)."""
    stray = [p for p in Path(folder).glob(".*.tmp") if TEMP_NAME.fullmatch(p.name) and p.is_file()]
    for p in stray:
        p.unlink(missing_ok=True)
    return stray


def write_json(path: str | Path, obj: Any) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")
    return Path(path)


def write_json_when_full(path: str | Path, obj: Any) -> Path:
    """write_json; where the disk is full (no room for the temporary copy), the compact JSON
    over the old file's own bytes, padded with spaces, so a failure can still be recorded."""
    try:
        return write_json(path, obj)
    except OSError as exc:
        if exc.errno != errno.ENOSPC or not Path(path).is_file() or Path(path).is_symlink():
            raise
        data = json.dumps(obj, separators=(",", ":"), default=str).encode()
        size = Path(path).stat().st_size
        if len(data) + 1 > size:
            raise
        with open(path, "r+b") as fh:  # overwriting allocated bytes needs no free space
            fh.write(data + b"\n" + b" " * (size - len(data) - 1))
            fh.flush()
            os.fsync(fh.fileno())
        return Path(path)


def write_parquet(path: str | Path, df) -> Path:
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)
    return Path(path)


def loads_json(data: str | bytes) -> Any:
    """json.loads, where nesting deeper than Python's parser follows (100,000 brackets) is
    malformed JSON like any other (a JSONDecodeError, not a RecursionError)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise json.JSONDecodeError(
            "nested too deeply (brackets inside brackets past what Python's parser follows)", "", 0
        ) from None


def read_json(path: str | Path) -> Any:
    """A JSON file (UTF-8; a byte-order mark is skipped, as it is in signature.json); anything
    else is an error naming the file (and line and column)."""
    from .errors import OcgInputError

    try:
        return loads_json(
            Path(path).read_bytes().decode("utf-8-sig")
        )  # a BOM skipped; UTF-16 is no UTF-8
    except UnicodeDecodeError as exc:
        raise OcgInputError(str(path), f"not UTF-8 text: byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise OcgInputError(
            str(path), f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None


def read_table(path: str | Path, **options):
    """A CSV table ocg wrote (a report's tables/*.csv): an empty file is a table with no rows (a
    frame of no rows and no columns is saved as one, e.g. a one-condition report's paired test);
    a file that is not UTF-8 CSV text is an OcgInputError naming it, never pandas' traceback.
    `options` go to pandas.read_csv (e.g. comment="#")."""
    import io

    import pandas as pd

    from .errors import OcgInputError

    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OcgInputError(
            str(path), f"not a CSV table: not UTF-8 text (byte {exc.start})"
        ) from None
    if not text.strip():
        return pd.DataFrame()
    try:
        return pd.read_csv(io.StringIO(text), **options)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, ValueError) as exc:
        problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OcgInputError(str(path), f"not a CSV table: {problem}") from None
