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
        raise StopRequested(f"{where}: stopped before the time limit ({path}); the next start resumes")
