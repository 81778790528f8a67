"""ocg's errors: one root, `OcgError`, whose kinds carry the exit status a command ends with.

Every exception ocg defines derives from `OcgError` through one of three kinds: `OcgInputError`
(bad input, exit 2: the message names the file, line or key and what was expected), `OcgFault`
(the machine, a server, the network, a process beside this one: exit 1) and `OcgInterrupted`
(work stopped from outside; ocg/core/interrupts.py). The command line catches `OcgError` alone
and exits with its `exit_status` (ocg/cli/). The root is a BaseException so that interruptions,
which nothing may catch as a failure, can be kinds of it; the failure kinds are also
ValueError or RuntimeError, so `except Exception` catches them as before.
"""

from __future__ import annotations

from typing import ClassVar


class OcgError(BaseException):
    """The root of every error ocg raises; never raised itself, only its kinds."""

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


class OcgInterrupted(OcgError):
    """Work stopped from outside before it finished; what was finished is kept. Exit 130, as a
    shell reports Ctrl-C (a kind may say otherwise: SIGTERM 143)."""

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
