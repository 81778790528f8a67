"""ocg's errors: two roots. `OcgError` (an Exception) for every failure, whose kinds carry the exit
status a command ends with, and `OcgInterrupted` (a BaseException) for work stopped from outside.

Every failure ocg defines derives from `OcgError` through one of two kinds: `OcgInputError` (bad
input, exit 2: the message names the file, line or key and what was expected) and `OcgFault` (the
machine, a server, the network, a process beside this one: exit 1). `except Exception` in a
user's code catches them. An interruption (ocg/core/interrupts.py: the stop file, SIGTERM) is an
`OcgInterrupted`, a root of its own that is not an Exception, as Ctrl-C is not: nothing catches it
as a failure. The command line catches the two roots alone and exits with their `exit_status`
(ocg/cli/).
"""

from __future__ import annotations

from typing import ClassVar


class OcgError(Exception):
    """The root of every failure ocg raises; never raised itself, only its kinds."""

    exit_status: ClassVar[int] = 1


class Located(OcgError):
    """An error whose message is `where: problem`, the two kept as attributes (a caller may
    re-raise `problem` under another `where`); picklable, so one raised in a worker process
    reaches the parent whole. Not a kind: the kind comes from the class beside it."""

    def __init__(self, where: str, problem: str):
        self.where, self.problem = where, problem
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):
        return type(self), (self.where, self.problem)


class OcgInputError(Located, ValueError):
    """Bad input: the message names the file, line or key and what was expected. Exit 2."""

    exit_status: ClassVar[int] = 2


class OcgFault(OcgError, RuntimeError):
    """A fault outside the input: a server that exits, an API that refuses, a model that cannot
    be loaded, another process holding a lock. Exit 1."""

    exit_status: ClassVar[int] = 1


class OcgInterrupted(BaseException):
    """Work stopped from outside before it finished; what was finished is kept. The second root:
    not an Exception and not an OcgError, so no `except Exception` takes it for a failure. Exit
    130, as a shell reports Ctrl-C (a kind may say otherwise: SIGTERM 143)."""

    exit_status: ClassVar[int] = 130


def shown(value, limit: int = 200) -> str:
    """`value`'s repr for a message, cut to about `limit` characters (reprlib: a huge or deeply
    shared value is never expanded in full just to be shown)."""
    import reprlib

    brief = reprlib.Repr()
    brief.maxlevel, brief.maxstring, brief.maxother, brief.maxlong = 4, limit, limit, limit
    brief.maxlist = brief.maxtuple = brief.maxdict = brief.maxset = 10
    short = brief.repr(value)
    return short if len(short) <= limit + 20 else short[:limit] + f"... ({len(short):,} characters)"
