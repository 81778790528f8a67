"""One rule for every name that becomes a folder or file name (models, runs, sweeps)."""

from __future__ import annotations

import re

from .errors import OcgInputError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
# Names a table reader would not give back as written: pandas' read_csv turns `nan`, `NA`, `null`
# and `None` into NaN, `007` and `1.10` into numbers, `True` into a boolean (and so do spreadsheets).
# Saved tables are read in many places (the package, the notebooks, a user's own code), so the
# rule refuses such names once, where they are given.
READ_BACK_AS_VALUE = {"na", "nan", "nat", "null", "none", "true", "false", "inf", "infinity"}


def _reads_as_value(value: str) -> bool:
    if value.lower() in READ_BACK_AS_VALUE:
        return True
    try:
        float(value)  # 007, 1.10, 1e5, 1_000
    except ValueError:
        return False
    return True


def check_name(where: str, value: object) -> str:
    """`value` if it is a safe name (letters, digits, '.', '_', '-'; no '..'; not a number or an
    NA word, which tables read back as values), else an error."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value) or ".." in value:
        raise OcgInputError(
            where,
            f"got {value!r}; a name must start with a letter or digit and use "
            "only letters, digits, '.', '_' and '-' (it names a folder)",
        )
    if _reads_as_value(value):
        raise OcgInputError(
            where,
            f"got {value!r}; a name must not read as a number or a missing value "
            "(tables read it back as NaN or a number); add a letter, e.g. "
            f"'m-{value}'",
        )
    return value


def any_case(word: str) -> str:
    """A regular expression that matches `word` in any case (ECMA 262 has no inline flags)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word)


# check_name as one regular expression (for the JSON Schemas of the parameter files; ECMA 262 and
# Python read it alike): NAME_RE, no '..', and not what float() or a table reader takes as a value
# (digits with '_' between them, a '.', an exponent; the NA words in any case).
_DIGITS = "[0-9](?:_?[0-9])*"
_NUMBER = rf"(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][-+]?{_DIGITS})?"
_VALUES = "|".join(any_case(w) for w in sorted(READ_BACK_AS_VALUE))
NAME_PATTERN = rf"^(?!.*\.\.)(?!(?:{_NUMBER}|{_VALUES})$)[A-Za-z0-9][A-Za-z0-9._-]{{0,127}}$(?!\n)"
