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
