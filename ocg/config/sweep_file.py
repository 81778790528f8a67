"""The hand-written checks of a sweep file's Slurm settings that no type says: time limits,
memory, the jobs' environment, sbatch's extra arguments and setup lines."""

from __future__ import annotations

import re

from ..core.errors import OcgInputError
from ..core.interrupts import STOP_FILE
from ..core.names import any_case
from ..core.paths import FOLDER_VARIABLES
from .field_types import ENV_NAME_PATTERN

# Slurm's time formats (sbatch --time): MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; "0",
# UNLIMITED or INFINITE for no limit (a total of 0 is no limit to Slurm too).
TIME_RE = re.compile(
    r"^(?:(\d+)-(\d{1,2})(?::(\d{1,2}))?(?::(\d{1,2}))?|(\d+)(?::(\d{1,2}))?(?::(\d{1,2}))?)$"
)
NO_LIMIT = ("UNLIMITED", "INFINITE")
_MS = "[0-5]?[0-9]"  # minutes or seconds below 60
# What time_limit_s reads, as one pattern (the JSON Schemas' `time`): ranges included.
TIME_PATTERN = (
    rf"^(?:[0-9]+-(?:[01]?[0-9]|2[0-3])(?::{_MS})?(?::{_MS})?|[0-9]+:{_MS}:{_MS}|[0-9]+(?::{_MS})?"
    "|" + "|".join(any_case(w) for w in NO_LIMIT) + r")$(?!\n)"
)
MEM_PATTERN = r"^[0-9]+[KMGT]?$(?!\n)"


def time_limit_s(value: str) -> int | None:
    """A Slurm time limit in seconds, None for no limit; ValueError for what Slurm would not read
    as meant (99:99:99: minutes and seconds below 60, hours below 24 after a day count)."""
    if not re.fullmatch(TIME_PATTERN, value):
        raise ValueError(value)
    if value.upper() in NO_LIMIT:
        return None
    m = TIME_RE.match(value)
    days, dh, dm, ds, a, b, c = (int(g) if g else 0 for g in m.groups())
    if m.group(1) is not None:  # D-HH[:MM[:SS]]
        if dh > 23 or dm > 59 or ds > 59:
            raise ValueError(value)
        total = days * 86400 + dh * 3600 + dm * 60 + ds
    elif m.group(7) is not None:  # HH:MM:SS
        if b > 59 or c > 59:
            raise ValueError(value)
        total = a * 3600 + b * 60 + c
    else:  # MM or MM:SS
        if b > 59:
            raise ValueError(value)
        total = a * 60 + b
    return total or None


def check_time(where: str, value: str) -> None:
    try:
        time_limit_s(value)
    except ValueError:
        raise OcgInputError(
            where,
            f"got {value!r}; expected Slurm's MM, MM:SS, HH:MM:SS or D-HH[:MM[:SS]] "
            "(minutes and seconds below 60, hours below 24 after a day count), "
            "or 0 / UNLIMITED for no limit",
        ) from None


def check_mem(where: str, value: str) -> None:
    if not re.fullmatch(MEM_PATTERN, value):
        raise OcgInputError(where, f"got {value!r}; expected e.g. 16G or 500M")


# Set by ocg in every job script (ocg/sweep/scripts.py): a site's value would send the jobs'
# outputs elsewhere than the driver and --status read, or break the time-limit stop.
RESERVED_ENV = (*FOLDER_VARIABLES, STOP_FILE)
# sbatch options ocg sets per submission (the array and its throttle, the log, the environment,
# the order of arrays, the time-limit warning, requeue): extra_args may not override them.
RESERVED_LONG = (
    "array",
    "output",
    "error",
    "export",
    "dependency",
    "signal",
    "no-requeue",
    "open-mode",
    "wrap",
    "parsable",
)
RESERVED_SHORT = "aoed"
NO_NUL = {"type": "string", "pattern": "^[^\\x00]*$"}
# check_env and check_extra_args, as the JSON Schemas say them
ENV_SCHEMA = {
    "propertyNames": {"pattern": ENV_NAME_PATTERN, "not": {"enum": list(RESERVED_ENV)}},
    "additionalProperties": {"anyOf": [NO_NUL, {"type": "number"}]},
}
_PREFIXES = sorted({o[:i] for o in RESERVED_LONG for i in range(1, len(o) + 1)})
EXTRA_ARGS_SCHEMA = {
    "items": {
        **NO_NUL,
        "not": {"pattern": f"^(?:--(?:{'|'.join(_PREFIXES)})(?:=|$)|-[{RESERVED_SHORT}])"},
    }
}
SETUP_SCHEMA = {"items": NO_NUL}


def _no_nul(where: str, value: str) -> None:
    if "\0" in value:
        raise OcgInputError(where, f"got {value!r}; a NUL character cannot be passed to a job")


def check_env(where: str, env: dict) -> None:
    for name, value in env.items():
        if not isinstance(name, str) or not re.fullmatch(ENV_NAME_PATTERN, name):
            raise OcgInputError(f"{where}.{name}", "expected a variable name (letters, digits, _)")
        if name in RESERVED_ENV:
            raise OcgInputError(
                f"{where}.{name}",
                "set by ocg in every job (the submitter's value, so jobs "
                "write where the driver reads); set it where you run ocg",
            )
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise OcgInputError(f"{where}.{name}", f"got {value!r}; expected a text or a number")
        _no_nul(f"{where}.{name}", str(value))


def check_extra_args(where: str, args: list) -> None:
    """sbatch takes the last of an option, so one here would override ocg's own (getopt also
    takes an unambiguous prefix such as --arr, and short ones such as -a, -o)."""
    for arg in args:
        _no_nul(where, arg)
        if arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            hit = next((o for o in RESERVED_LONG if name and o.startswith(name)), None)
        else:
            hit = arg[1] if len(arg) > 1 and arg[0] == "-" and arg[1] in RESERVED_SHORT else None
        if hit:
            raise OcgInputError(
                where,
                f"got {arg!r}; ocg sets --{' --'.join(RESERVED_LONG)} itself "
                "(and -a, -o, -e, -d): leave them out",
            )


def check_setup(where: str, lines: list) -> None:
    """Shell lines, run as written (trusted): only checked to parse, so the script stays valid."""
    import subprocess

    for line in lines:
        _no_nul(where, line)
    proc = subprocess.run(
        ["bash", "-n"], input="\n".join(lines) + "\n", capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise OcgInputError(where, f"not valid bash: {proc.stderr.strip()[:300]}")
