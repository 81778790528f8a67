"""Text fields checked by a regular expression that the JSON Schemas carry too: one declaration
(`matching`) is both the loader's check (Python's re.fullmatch) and the schema's `pattern`
(ECMA 262, as editors read it; each pattern here reads alike in both: `$(?!\\n)` ends one, as
Python's `$` also matches before a last newline), so an editor refuses what ocg refuses: names,
ids, dates, variable names."""

from __future__ import annotations

import datetime as _dt
import re
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, Field

from ..core.errors import OcgInputError, shown
from ..core.names import NAME_PATTERN, check_name
from .file_model import Says, checked

# C0 and C1 control characters and DEL: an ANSI escape in an id would be printed raw by
# `ocg models` and written into run cards and pages.
CONTROL = r"\x00-\x1f\x7f-\x9f"
LABEL_PATTERN = (
    rf"^[^{CONTROL}]*[^\s{CONTROL}][^{CONTROL}]*$(?!\n)"  # not blank, no control character
)
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$(?!\n)"
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$(?!\n)"


def matching(pattern: str, expected: str, *rest: Any, **schema: Any) -> Any:
    """A str that matches `pattern` in full (else: `got ...; expected <expected>`), the pattern
    and `schema`'s keywords written into the JSON Schema; `rest`: further markers."""
    regex = re.compile(pattern)

    def check(where: str, value: str) -> None:
        if not regex.fullmatch(value):
            raise OcgInputError(where, f"got {shown(value)}; expected {expected}")

    extra = {"pattern": pattern, **schema}
    markers = (Says(expected), checked(check), *rest, Field(json_schema_extra=extra))
    args = (str, *markers)  # Annotated[str, *markers] reads at 3.11 only
    return Annotated[args]


# A name that becomes a folder or file name (core/names.py): check_name's own messages.
Name = Annotated[
    str, checked(check_name), Field(json_schema_extra={"pattern": NAME_PATTERN, "minLength": 1})
]
NAMES_AS_KEYS = {"propertyNames": {"pattern": NAME_PATTERN}}  # a mapping keyed by names


def _date_text(value: Any) -> Any:
    """A YAML date written unquoted (prompt_date: 2024-07-26) is the same date as text."""
    return value.isoformat() if type(value) is _dt.date else value


def check_date(where: str, value: str) -> None:
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        raise OcgInputError(where, f"got {shown(value)}; expected an ISO date YYYY-MM-DD") from None


if (
    TYPE_CHECKING
):  # each an Annotated[str, ...] built by matching(), a call type checkers cannot read
    Label = str
    EnvName = str
    Date = str
else:
    # An id, a revision, a model's or a pipeline's name: not blank, no control characters.
    Label = matching(LABEL_PATTERN, "a non-blank text without control characters", minLength=1)
    EnvName = matching(
        ENV_NAME_PATTERN,
        "an environment variable's name (letters, digits and _; not first a digit)",
    )
    # A calendar date YYYY-MM-DD (quoted or not): the pattern, then the calendar (no 2025-02-30).
    Date = Annotated[
        matching(DATE_PATTERN, "an ISO date YYYY-MM-DD", checked(check_date), format="date"),
        BeforeValidator(_date_text),
    ]
