"""A report folder holds exactly what its last run wrote, never a mix of two runs.

Each run builds in a fresh `<name>.building~` beside the report (its `report.json` says
"building", with the PID and host) and moves it into place when it ends done; the previous
report stays whole until then. A run that ends failed or stopped (a failing notebook, Ctrl-C,
SIGTERM, a closed pipe) never replaces a finished report: it goes beside it as
`<name>.failed~`, which the next finished run removes; over a failed report, or where there is
none, it goes into place. A killed run leaves the previous report and a folder that says
"building"; the next run of that report clears it. One run per report at a time.
The report, its staging folder, `<name>.old~` and `<name>.failed~` are ocg's own: a symbolic
link in any of these places is refused before anything is touched (docs/METHODS.md, "What ocg
refuses").
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from ..core.clock import utc_stamp
from ..core.errors import OcgError
from ..core.files import atomic_path, refuse_link
from ..core.layout import ReportFolder
from ..core.lock import exclusive
from ..records import ReportStamp, ReportStatus


def staging_dir(final: Path) -> Path:
    """Where `final` is built."""
    return ReportFolder(Path(final)).staging.folder


def _clear(folder: Path, keep: tuple[str, ...] = ()) -> None:
    """Empty `folder`, opened once without following a link: a link put in its place after
    _refuse_links is refused, never cleared through (each entry removed relative to that handle)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError:
        refuse_link(folder)  # a link since the check: say so, naming it
        raise
    try:
        for name in [e.name for e in os.scandir(fd) if e.name not in keep]:
            _remove_at(fd, name)
    finally:
        os.close(fd)


def _remove_at(fd: int, name: str) -> None:
    """Remove `name` in the folder open as `fd`, a folder with what it holds, never following a
    link (shutil.rmtree takes dir_fd only from Python 3.11)."""
    try:
        os.unlink(name, dir_fd=fd)
        return
    except IsADirectoryError:
        pass
    except PermissionError:  # unlink(2) on a folder is EISDIR on Linux, EPERM elsewhere
        if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            raise
    sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
    try:
        for child in [e.name for e in os.scandir(sub)]:
            _remove_at(sub, child)
    finally:
        os.close(sub)
    os.rmdir(name, dir_fd=fd)


@contextmanager
def building(final: str | Path) -> Iterator[Path]:
    """A fresh staging folder for `final`, locked for this run; `finish` moves it into place."""
    final = Path(final)
    staging, old = staging_dir(final), ReportFolder(final).previous
    _refuse_links(
        final, staging, old, ReportFolder(final).failed
    )  # before the lock, which writes into the staging folder
    with exclusive(staging, doing="is building this report"):
        _clear(staging, keep=(".lock",))  # what a killed run left
        if old.exists() and not final.exists():  # killed between finish's two renames
            old.rename(final)
        shutil.rmtree(old, ignore_errors=True)
        stamp = ReportStamp(
            state=ReportStatus.BUILDING,
            pid=os.getpid(),
            host=socket.gethostname(),
            started_utc=_now(),
        )
        stamp.write(ReportFolder(staging).state)
        write_status_page(
            staging,
            f"{final.name}: being built",
            f"PID {stamp.pid} on {stamp.host} started this run at {stamp.started_utc}; "
            "this folder replaces the report when it ends.",
        )
        yield staging


def _refuse_links(final: Path, *ours: Path) -> None:
    refuse_link(
        final,
        fix="a report is replaced by renaming folders; to publish one, make the "
        f"link elsewhere point at {final} instead (it then follows every new report)",
    )
    refuse_link(*ours)


def _is_done(final: Path) -> bool:
    """Whether `final` holds a finished report (its report.json says done)."""
    try:
        return ReportStamp.read(ReportFolder(final).state).state is ReportStatus.DONE
    except (OcgError, OSError, ValueError):
        return False


def _remove(folder: Path) -> None:
    """Remove `folder` and what it holds, never following a link."""
    _clear(folder)
    with suppress(FileNotFoundError):
        os.rmdir(folder)


def _now() -> str:
    return utc_stamp()


def finish(staging: Path, final: Path, stamp: ReportStamp) -> Path:
    """Record how the run ended (`stamp`: its state, and its reason, report or notebooks where
    set) on the stamp the run started with, then put the staging folder where the report was;
    a build that did not end done goes beside a finished report instead, as `<name>.failed~`.
    Returns where the build now lies."""
    failed = ReportFolder(final).failed
    _refuse_links(final, staging, ReportFolder(final).previous, failed)  # none appeared meanwhile
    started = ReportStamp.read(ReportFolder(staging).state)
    ended = started.replace(
        state=stamp.state,
        reason=stamp.reason if stamp.reason is not None else started.reason,
        report=stamp.report if stamp.report is not None else started.report,
        notebooks=stamp.notebooks if stamp.notebooks is not None else started.notebooks,
        ended_utc=_now(),
    )
    ended.write(ReportFolder(staging).state)
    if stamp.state is not ReportStatus.DONE and _is_done(final):
        _remove(failed)  # an older stopped rebuild: this one is the newer evidence
        staging.rename(failed)
        (failed / ".lock").unlink(missing_ok=True)
        return failed
    old = ReportFolder(final).previous
    if final.exists():
        final.rename(old)
    staging.rename(final)  # between the two renames there is no report at all, never a mixed one
    (final / ".lock").unlink(missing_ok=True)
    shutil.rmtree(old, ignore_errors=True)
    if stamp.state is ReportStatus.DONE:
        _remove(failed)  # a finished report supersedes a stopped rebuild of the one before
    return final


def write_status_page(
    folder: Path, title: str, text: str, pages: Sequence[tuple[str, str]] = ()
) -> Path:
    """A plain index.html for a report that is not (or not yet) complete: `title`, `text` and
    the notebooks' links (`pages`: name, href), each shown as text (ocg/site/templates/status.html,
    autoescaped)."""
    from ..site.render import render

    page = render("status.html", title=title, text=text, pages=list(pages))
    path = ReportFolder(folder).index
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path
