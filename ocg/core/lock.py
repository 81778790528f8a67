"""One writer per output directory: an exclusive lock that names its holder.

A second `generate` into the same directory (or a second `ocg score` of one model's scores, a
second run building the same report, a second task of one sweep model, `ocg repair` during a
run) fails at once, saying which process (PID, host, start time) holds it, instead of
interleaving records or files. The lock is an advisory `flock` on
`<dir>/.lock`; the kernel releases it when the holder exits, even after `kill -9`.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .clock import utc_stamp
from .errors import Located, OcgFault
from .files import loads_json, refuse_link


class LockHeld(Located, OcgFault):
    """Another process holds the lock: not a failure of the work, only "not now" (a sweep records
    no model failure for it). A fault, not bad input: the same command succeeds once the other
    process is done (exit 1)."""


def _who(fd: int) -> str:
    """The holder a lock's stamp names; "another process" where the stamp is unreadable (a deeply
    nested stamp is no stamp: no RecursionError)."""
    try:
        h = loads_json(os.pread(fd, 4096, 0).decode("utf-8", errors="replace").strip())
        return f"PID {h['pid']} on {h['host']} (since {h['since']})"
    except (ValueError, KeyError, TypeError):
        return "another process"


@contextmanager
def exclusive(directory: str | Path, doing: str = "is writing here") -> Iterator[None]:
    """Hold `<directory>/.lock` while the block runs; refused at once (LockHeld) if another has it."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ".lock"
    refuse_link(path)  # the lock is emptied on release: never another file's bytes
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)  # the umask applies
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(
                str(directory),
                f"{_who(fd)} {doing}; wait for it to finish or "
                "stop it (two writers would corrupt what is written here)",
            ) from None
        stamp = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": utc_stamp(),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(stamp).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def holder(directory: str | Path) -> str | None:
    """Who holds `<directory>/.lock` now ("PID p on host (since t)"), or None when nobody does;
    takes nothing (a shared lock tried and let go at once), creates nothing."""
    try:
        fd = os.open(Path(directory) / ".lock", os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _who(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
