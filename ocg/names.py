"""One rule for every name that becomes a folder or file name (models, runs, sweeps)."""

from __future__ import annotations

import re

from .errors import OcgInputError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_name(where: str, value: object) -> str:
    """`value` if it is a safe name (letters, digits, '.', '_', '-'; no '..'), else an error."""
    if not isinstance(value, str) or not NAME_RE.match(value) or ".." in value:
        raise OcgInputError(where, f"got {value!r}; a name must start with a letter or digit and use "
                                   "only letters, digits, '.', '_' and '-' (it names a folder)")
    return value
