"""One row of a score frame's schema."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One column: its name, when it is there, its type and unit, and what it holds."""

    name: str
    when: str
    kind: str
    what: str
