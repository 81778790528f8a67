"""One schema helper for every parameter file: typed fields, errors naming file and field.

A parameter file's section is a mapping checked against `Field`s: unknown keys, missing
required ones, wrong types (a YAML `true` is never a number), values outside their choices or
outside their range, numbers that are not finite (`.nan`, `.inf` fail mid-run, far from
the file), and any field-specific check, each an OcgInputError naming `where.key`.
Used by models.yaml entries (and their api and server blocks), scoring.yaml, templates.yaml,
run and sweep files (resources, Slurm settings), and by `positive_int` for arguments in code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import OcgInputError, shown


@dataclass(frozen=True)
class Field:
    kind: type | tuple[type, ...]
    required: bool = False
    nullable: bool = False
    choices: tuple | None = None
    minimum: float | None = None
    exclusive: bool = False  # minimum itself not allowed
    maximum: float | None = None  # e.g. a seed's range (numpy and torch take < 2**32)
    check: Callable[[str, Any], None] | None = None  # (where, value): raises OcgInputError
    items: type | None = None  # a list's elements (never a YAML true for a number)
    nonempty: bool = False  # a list with at least one element
    expected: str | None = None  # what a wrong type, choice or range is told it should be


def _type_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "int", float: "number", str: "str", bool: "bool", dict: "mapping", list: "list"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _minimum_text(field: Field) -> str:
    if field.kind is int and field.minimum == 1 and not field.exclusive:
        return "a positive integer"
    what = "an integer" if field.kind is int else "a number"
    return f"{what} {'>' if field.exclusive else '>='} {field.minimum:g}"


def at(where: str, key: str) -> str:
    """The address of a key: `file: section.key`, or `file: key` at a file's top level."""
    return f"{where} {key}" if where.endswith(":") else f"{where}.{key}"


def _list_text(field: Field) -> str:
    return f"a {'non-empty ' if field.nonempty else ''}list of {field.items.__name__}"


def _fits(value: Any, kind) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds:
        kinds = (*kinds, int)
    return isinstance(value, kinds) and (not isinstance(value, bool) or bool in kinds)


def check_value(where: str, value: Any, field: Field) -> Any:
    if value is None and field.nullable:
        return value
    or_null = " or null" if field.nullable else ""
    if field.items is not None and not (
        isinstance(value, list)
        and (value or not field.nonempty)
        and all(_fits(v, field.items) for v in value)
    ):
        raise OcgInputError(
            where, f"got {shown(value)}; expected {field.expected or _list_text(field) + or_null}"
        )
    if not _fits(value, field.kind):
        raise OcgInputError(
            where,
            f"got {shown(value)}; expected {field.expected}"
            if field.expected
            else f"expected {_type_name(field.kind)}{or_null}, got {shown(value)}",
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise OcgInputError(where, f"got {shown(value)}; expected a finite number")
    if field.choices is not None and value not in field.choices:
        raise OcgInputError(
            where,
            f"got {shown(value)}; expected "
            f"{field.expected or 'one of ' + ', '.join(map(str, field.choices))}",
        )
    if field.minimum is not None and (
        value < field.minimum or (field.exclusive and value == field.minimum)
    ):
        raise OcgInputError(
            where, f"got {shown(value)}; expected {field.expected or _minimum_text(field)}"
        )
    if field.maximum is not None and value > field.maximum:
        raise OcgInputError(where, f"got {shown(value)}; expected at most {field.maximum!r}")
    if field.check is not None:
        field.check(where, value)
    return value


def positive_int(
    where: str, value: Any, expected: str = "a positive integer", nullable: bool = False
) -> Any:
    """`value` if it is an integer >= 1 (never a YAML true), or None where `nullable`."""
    return check_value(where, value, Field(int, minimum=1, nullable=nullable, expected=expected))


def _auto_or_positive(where: str, value: Any) -> None:
    if value != "auto" and not (isinstance(value, int) and value >= 1):
        raise OcgInputError(where, f"got {shown(value)}; expected a positive integer or auto")


# A positive integer, or `auto`: ocg picks one where the run starts (e.g. a models entry's batch_size).
AUTO_OR_POSITIVE = Field((int, str), check=_auto_or_positive, expected="a positive integer or auto")


def check_fields(
    where: str, raw: Any, fields: dict[str, Field], defaults: dict | None = None
) -> dict:
    """`raw` merged over `defaults`, every key known, every required one present, every value checked."""
    if not isinstance(raw, dict):
        raise OcgInputError(where.rstrip(":"), f"expected a mapping of {', '.join(fields)}")
    for key in raw:
        if key not in fields:
            raise OcgInputError(at(where, key), f"unknown key; known: {sorted(fields)}")
    merged = {**(defaults or {}), **raw}
    for key, field in fields.items():
        if key not in merged:
            if field.required:
                raise OcgInputError(at(where, key), "missing")
            continue
        check_value(at(where, key), merged[key], field)
    return merged
