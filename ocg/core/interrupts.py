"""Work stopped from outside: the stop file of a sweep's Slurm task, SIGTERM, and the one line a
command says when stopped (the error kinds: ocg/core/errors.py)."""

from __future__ import annotations

from typing import ClassVar

from .errors import OcgInterrupted

STOP_FILE = "OCG_STOP_FILE"  # set by a sweep's Slurm task (ocg/sweep/scripts.py)


class StopRequested(OcgInterrupted):
    """The job's time limit is near (Slurm's warning signal): stop after the batch in flight.
    Not an Exception, as Ctrl-C is not: nothing catches it as a failure, the run card says
    interrupted. Its exit status is the one the sweep's job script requeues a task on."""

    exit_status: ClassVar[int] = 79


def check_stop(where: str) -> None:
    """Raise StopRequested when the task's stop file exists (one stat: cheap between batches)."""
    import os

    path = os.environ.get(STOP_FILE)
    if path and os.path.exists(path):
        raise StopRequested(
            f"{where}: stopped before the time limit ({path}); the next start resumes"
        )


class Terminated(OcgInterrupted, KeyboardInterrupt):
    """SIGTERM (`kill`, `scancel`, a service stopping): the command stops as on Ctrl-C, each
    layer marking what it was doing (a report failed, a run card interrupted, a notebook's kernel
    shut down) on the way out. A KeyboardInterrupt, so every Ctrl-C path handles it too. Exit
    143: 128 + the signal's number, as a shell reports it."""

    exit_status: ClassVar[int] = 143


def raise_on_sigterm() -> None:
    """Make SIGTERM raise Terminated in the main thread (the default kills the process at once:
    no kernel shut down, no state written)."""
    import signal

    def stop(signum, frame):
        raise Terminated(f"stopped by signal {signal.Signals(signum).name}")

    signal.signal(signal.SIGTERM, stop)


def stopped_line(exc: BaseException, command: str) -> str:
    """The one error line of a command stopped from outside: Ctrl-C, SIGTERM or the stop file.
    A progress bar left open mid-batch is ended first, so the line starts a line of its own."""
    import tqdm

    for bar in list(getattr(tqdm.tqdm, "_instances", ())):
        bar.close()
    if isinstance(exc, StopRequested):  # its message says where it stopped and what comes next
        return f"ocg: error: {exc}"
    why = str(exc) if isinstance(exc, Terminated) else "interrupted (Ctrl-C)"
    return (
        f"ocg: error: {why} during `ocg {command}`; what was finished is kept, nothing half-done "
        "is trusted; rerun to go on"
    )
