"""Errors that name where bad input came from (file and line, or file and key)."""

from __future__ import annotations


class OcgInputError(ValueError):
    """Bad input: the message names the file, line or key and what was expected."""

    def __init__(self, where: str, problem: str):
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}")


def shown(value, limit: int = 200) -> str:
    """`value`'s repr for a message, cut to about `limit` characters (reprlib: a huge or deeply
    shared value is never expanded in full just to be shown)."""
    import reprlib

    brief = reprlib.Repr()
    brief.maxlevel, brief.maxstring, brief.maxother, brief.maxlong = 4, limit, limit, limit
    brief.maxlist = brief.maxtuple = brief.maxdict = brief.maxset = 10
    short = brief.repr(value)
    return short if len(short) <= limit + 20 else short[:limit] + f"... ({len(short):,} characters)"


STOP_FILE = "OCG_STOP_FILE"  # set by a sweep's Slurm task (ocg/sweep/scripts.py)


class StopRequested(BaseException):
    """The job's time limit is near (Slurm's warning signal): stop after the batch in flight.
    A BaseException, as Ctrl-C is: nothing catches it as a failure, the run card says interrupted."""


def check_stop(where: str) -> None:
    """Raise StopRequested when the task's stop file exists (one stat: cheap between batches)."""
    import os

    path = os.environ.get(STOP_FILE)
    if path and os.path.exists(path):
        raise StopRequested(
            f"{where}: stopped before the time limit ({path}); the next start resumes"
        )


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, `scancel`, a service stopping): the command stops as on Ctrl-C, each
    layer marking what it was doing (a report failed, a run card interrupted, a notebook's kernel
    shut down) on the way out. A KeyboardInterrupt, so every Ctrl-C path handles it too."""


def raise_on_sigterm() -> None:
    """Make SIGTERM raise Terminated in the main thread (the default kills the process at once:
    no kernel shut down, no state written)."""
    import signal

    def stop(signum, frame):
        raise Terminated(f"stopped by signal {signal.Signals(signum).name}")

    signal.signal(signal.SIGTERM, stop)


def stopped_line(exc: KeyboardInterrupt, command: str) -> tuple[str, int]:
    """The one error line and the exit status of a command stopped by Ctrl-C (130) or SIGTERM
    (143: 128 + its number, as a shell reports it). A progress bar left open mid-batch is ended
    first, so the line starts a line of its own."""
    import tqdm

    for bar in list(getattr(tqdm.tqdm, "_instances", ())):
        bar.close()
    why = str(exc) if isinstance(exc, Terminated) else "interrupted (Ctrl-C)"
    return (
        f"ocg: error: {why} during `ocg {command}`; what was finished is kept, nothing half-done "
        "is trusted; rerun to go on",
        143 if isinstance(exc, Terminated) else 130,
    )
