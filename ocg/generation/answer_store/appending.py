"""Appending to a generation store's files: one write and an fsync per block, never through a
link (docs/METHODS.md, "What ocg refuses"), with the modes any file gets (0666 less the umask)."""

from __future__ import annotations

import os
from pathlib import Path

from ...core.files import naming, refuse_link


def open_own(path: Path, flags: int) -> int:
    """`path` opened for writing, never through a link (ELOOP naming it), nor in a model folder
    that became one after generate's check (checked again at each write)."""
    refuse_link(path.parent)
    try:
        return os.open(path, flags | os.O_NOFOLLOW, 0o666)
    except OSError as exc:
        raise naming(exc, path) from exc


def append_synced(path: Path, payload: bytes) -> None:
    """`payload` at the end of `path` (created if need be) in one write, on disk when this returns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = open_own(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:  # e.g. a full disk: name the file
        raise naming(exc, path) from exc
    finally:
        os.close(fd)


def cut_to(path: Path, size: int) -> None:
    """Truncate `path` to `size` bytes (a torn tail, killed mid-write), on disk when this returns."""
    fd = open_own(path, os.O_RDWR)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)
