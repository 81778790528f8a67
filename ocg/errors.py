"""Errors that name where bad input came from (file and line, or file and key)."""

from __future__ import annotations


class OcgInputError(ValueError):
    """Bad input: the message names the file, line or key and what was expected."""

    def __init__(self, where: str, problem: str):
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}")
