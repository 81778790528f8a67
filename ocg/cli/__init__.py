"""The `ocg` command line: the same functions the notebooks call."""

from __future__ import annotations

import errno
import sys
from pathlib import Path

from ..core.errors import OcgError, OcgInterrupted
from .parser import build_parser

__all__ = ["build_parser", "main"]


# What a failing file operation means for the user, by errno (anything else: the system's words).
_OS_HINTS = {
    errno.ENOSPC: "no space left on the device; free some and rerun (finished work is kept and resumed)",
    errno.EROFS: "read-only file system; point --out or OCG_OUTPUTS at a writable directory",
    errno.EACCES: "permission denied; point --out or OCG_OUTPUTS at a writable directory",
    errno.ENOTDIR: "a file stands where a directory is needed; check --out and OCG_OUTPUTS",
    errno.EEXIST: "a file stands where a directory is needed; check --out and OCG_OUTPUTS",
}


def _variable_of(filename: object) -> str:
    """The setting that chose where `filename` lies: OCG_MODEL_CACHE for the converted models'
    folder, else --out and OCG_OUTPUTS (the hints' default)."""
    from ..core.paths import model_cache_dir

    try:
        Path(str(filename)).resolve().relative_to(model_cache_dir().resolve())
    except (ValueError, OSError):
        return "--out and OCG_OUTPUTS"
    return "OCG_MODEL_CACHE"


def _os_error(exc: OSError) -> tuple[str, int]:
    """The message and exit status for a failed file operation: the path and what it means."""
    problem = (exc.errno is not None and _OS_HINTS.get(exc.errno)) or exc.strerror or str(exc)
    if exc.filename is not None and problem in _OS_HINTS.values():
        problem = problem.replace("--out and OCG_OUTPUTS", _variable_of(exc.filename)).replace(
            "--out or OCG_OUTPUTS", _variable_of(exc.filename).replace(" and ", " or ")
        )
    message = problem if exc.filename is None else f"{exc.filename}: {problem}"
    return message, 2 if exc.errno in (errno.ENOTDIR, errno.EEXIST) else 1


# The status of a process that SIGPIPE ended (128 + 13), as `yes | head -1` leaves it.
SIGPIPE_STATUS = 141


def _reader_gone() -> int:
    """The reader of ocg's output went away (`ocg sweep --status | head -3`): no error line, as
    for any Unix tool a pipe cut short. Python's docs ("Note on SIGPIPE", signal module): point
    stdout at devnull, so the interpreter's last flush at exit does not fail once more."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file (captured in a test): nothing to flush later
        pass
    finally:
        os.close(devnull)
    return SIGPIPE_STATUS


# Commands that do work: their output is progress, which a reader gone away (`| head`) must not
# stop; the listing commands (models, compare-reports, sweep --status) end as `yes | head` does.
WORKS = frozenset(
    ("report", "score", "generate", "sweep", "build-data", "compare", "prefetch", "repair")
    + ("run-notebook", "demo", "paper", "import", "convert")
)


def _works(args) -> bool:
    return (
        args.command in WORKS
        and not getattr(args, "status", False)
        and not getattr(args, "check", False)
    )


def _quiet_libraries() -> None:
    """Outside a terminal, the libraries' own progress bars (Hugging Face downloads, checkpoint
    shards) stay off: kernels and tasks inherit the variable."""
    import os

    from ..core.progress import bars_shown

    if not bars_shown():
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


# Flags listing things to run or score: one given twice would be generated or scored twice.
LISTS = ("conditions", "templates", "metrics", "models")


def _no_repeats(args) -> None:
    from ..core.arguments import distinct

    for name in LISTS:
        distinct(f"--{name}", getattr(args, name, None))


def main(argv: list[str] | None = None) -> int:
    """Run a command. Every error ocg raises is an OcgError or an OcgInterrupted whose kind gives
    the exit status (bad input 2, a fault 1, stopped by SIGTERM 143); a file operation that fails
    exits 1 (2 for a file where a folder belongs), Ctrl-C 130: each with one `ocg: error:` line,
    never a traceback (docs/METHODS.md, "What ocg refuses")."""
    try:  # start-up (the parser's imports: pydantic, the models file's module) can take a second
        args = build_parser().parse_args(argv)
        from ..core import interrupts, paths  # noqa: F401  (imported here: Ctrl-C while starting)
    except KeyboardInterrupt:
        print("ocg: error: interrupted (Ctrl-C) while starting; nothing was done", file=sys.stderr)
        return OcgInterrupted.exit_status

    _quiet_libraries()
    if not _works(args):
        return _run(args)
    from ..core.progress import ReaderMayLeave

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ReaderMayLeave(sys.stdout), ReaderMayLeave(sys.stderr)
    try:  # a closed pipe drops the output, never the work
        return _run(args)
    finally:
        sys.stdout, sys.stderr = streams


def _run(args) -> int:
    from ..core.interrupts import raise_on_sigterm, stopped_line
    from ..core.paths import settle_folder_variables

    try:
        raise_on_sigterm()  # each layer marks what it was doing on the way out, as on Ctrl-C
        _no_repeats(args)
        settle_folder_variables()  # before any kernel, task or job inherits them
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe is found here, not at exit
        return code
    except BrokenPipeError:
        return _reader_gone()
    except (OcgError, OcgInterrupted) as exc:
        stopped = isinstance(exc, OcgInterrupted)
        print(stopped_line(exc, args.command) if stopped else f"ocg: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except OSError as exc:
        message, code = _os_error(exc)
        print(f"ocg: error: {message}", file=sys.stderr)
        return code
    except KeyboardInterrupt as exc:  # Ctrl-C: Python's own, not an OcgInterrupted
        print(stopped_line(exc, args.command), file=sys.stderr)
        return OcgInterrupted.exit_status
