"""Sweep files (params/sweeps/): a run file, plus where its outputs go and the resources and Slurm
settings of each model's task; with the hand-written checks of those Slurm settings that no type
says: time limits, memory, the jobs' environment, sbatch's extra arguments and setup lines."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field

from ..core.errors import OcgInputError
from ..core.interrupts import STOP_FILE
from ..core.names import any_case
from ..core.paths import FOLDER_VARIABLES
from .field_types import ENV_NAME_PATTERN, NAMES_AS_KEYS, Label
from .file_model import ConfigModel, Says, checked
from .run_file import Folder, RunFile

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
    if m is None:  # TIME_PATTERN matched, so TIME_RE does too
        raise ValueError(value)
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


class Site(ConfigModel):
    """Where a group's jobs queue; unset, the sweep's `slurm:` values hold."""

    partition: Label | None = None
    """The Slurm partition."""
    account: Label | None = None
    """The Slurm account."""
    extra_args: Annotated[
        list[str], checked(check_extra_args), Field(json_schema_extra=EXTRA_ARGS_SCHEMA)
    ] = []
    """More sbatch options (after the sweep's: the last wins); never those ocg sets itself."""


class Resources(Site):
    """What one task asks Slurm for."""

    gpus: int = Field(0, ge=0)
    """GPUs per task."""
    cpus: int = Field(1, ge=1)
    """CPU cores per task."""
    mem: Annotated[str, checked(check_mem), Field(json_schema_extra={"pattern": MEM_PATTERN})] = (
        "4G"
    )
    """Memory, e.g. 16G or 500M."""
    time: Annotated[
        str, checked(check_time), Field(json_schema_extra={"pattern": TIME_PATTERN})
    ] = "01:00:00"
    """Slurm's time limit: MM, MM:SS, HH:MM:SS or D-HH[:MM[:SS]]; 0 or UNLIMITED for none."""

    def recorded(self) -> dict:
        """As a sweep's manifest.json records a task's request: gpus, cpus, mem and time, then
        where it queues, where the file says."""
        data = self.model_dump()
        asked = ("gpus", "cpus", "mem", "time")
        said = [k for k in data if k in self.model_fields_set and k not in asked]
        return {k: data[k] for k in (*asked, *said)}

    def queue(self, key: str, slurm: Site) -> object:
        """Where the task queues (partition, account): its own where it says, else the sweep's."""
        return getattr(self, key) if key in self.model_fields_set else getattr(slurm, key)


class ResourcesBlock(ConfigModel):
    """Each model's task's resources: a default, and per-model changes."""

    default: Resources = Resources()
    """Every task's resources."""
    models: Annotated[
        dict[str, Resources] | None,
        Says("a mapping of model: resources"),
        Field(json_schema_extra=NAMES_AS_KEYS),
    ] = None
    """Per model, what differs from the default."""


class Slurm(Site):
    """How the sweep's jobs are submitted with `--executor slurm`."""

    throttle: int = Field(8, ge=1)
    """Tasks of the array that run at once."""
    analysis: Resources = Resources(cpus=2, mem="8G", time="02:00:00", gpus=0)
    """The analysis job's resources."""
    setup: Annotated[list[str], checked(check_setup), Field(json_schema_extra=SETUP_SCHEMA)] = []
    """Shell lines each job runs first (module load ...)."""
    env: Annotated[dict[Any, Any], checked(check_env), Field(json_schema_extra=ENV_SCHEMA)] = {}
    """Environment variables of each job (never ocg's own folders)."""
    warn_before_limit_s: int = Field(600, ge=10)
    """Seconds before the time limit that a task is told to stop (it resumes on the next start)."""


def _file_schema(schema: dict) -> None:
    """A file that `extends` another needs only a name of its own (the base supplies the rest);
    any other names its models, conditions and the folder it writes (ocg/sweep/config.py)."""
    required = schema.pop("required", [])
    schema["anyOf"] = [{"required": ["extends", "name"]}, {"required": [*required, "outputs"]}]


class SweepFile(RunFile, json_schema_extra=_file_schema):
    """A sweep file: a run file, plus where outputs go and each model's task's resources."""

    extends: Label = None  # type: ignore[assignment]  # None: unset, never null
    """Another sweep file (relative to this one): its keys hold unless this file sets them
    (resources and slurm: key by key)."""
    outputs: Annotated[Folder | None, Says("a folder, or null")] = None
    """The folder this sweep writes (required; relative: under OCG_OUTPUTS when set, else the
    project root)."""
    resources: Annotated[ResourcesBlock, Says("a mapping with default and models")] = (
        ResourcesBlock()
    )
    """Each model's task's resources."""
    slurm: Slurm = Slurm()
    """Slurm settings (partition, account, throttle, setup, env, ...)."""
