"""`positive_int`, the one check of an argument given in code rather than in a parameter file.

Parameter files are checked by their pydantic models (ocg/config/), whose errors name the file
and the field in the same form."""

from __future__ import annotations

from typing import Any

from .errors import OcgInputError, shown


def positive_int(
    where: str, value: Any, expected: str = "a positive integer", nullable: bool = False
) -> Any:
    """`value` if it is an integer >= 1 (never a YAML true), or None where `nullable`."""
    if value is None and nullable:
        return value
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise OcgInputError(where, f"got {shown(value)}; expected {expected}")
    return value


def distinct(where: str, values: Any) -> Any:
    """`values` if no value appears twice in it (a list of conditions, templates, metrics...):
    a repeated one would be generated, scored or stored twice."""
    seen: list = []
    for value in values if isinstance(values, (list, tuple)) else ():
        if value in seen:
            raise OcgInputError(where, f"{shown(value)} is given twice; give each once")
        seen.append(value)
    return values
