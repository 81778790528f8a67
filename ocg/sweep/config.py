"""A sweep file: models, conditions, where outputs go and the resources of each model's task."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import STOP_FILE, OcgInputError
from ..io import read_extends_chain
from ..paths import FOLDER_VARIABLES
from ..runconfig import COMMON_DEFAULTS, RUN_FIELDS, check_common
from ..schema import Field, check_fields

# Slurm's time formats (sbatch --time): MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; "0",
# UNLIMITED or INFINITE for no limit (a total of 0 is no limit to Slurm too).
TIME_RE = re.compile(
    r"^(?:(\d+)-(\d{1,2})(?::(\d{1,2}))?(?::(\d{1,2}))?|(\d+)(?::(\d{1,2}))?(?::(\d{1,2}))?)$"
)
NO_LIMIT = ("UNLIMITED", "INFINITE")


def time_limit_s(value: str) -> int | None:
    """A Slurm time limit in seconds, None for no limit; ValueError for what Slurm would not read
    as meant (99:99:99: minutes and seconds below 60, hours below 24 after a day count)."""
    if value.strip().upper() in NO_LIMIT:
        return None
    m = TIME_RE.match(value.strip())
    if not m:
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


def _check_time(where: str, value: str) -> None:
    try:
        time_limit_s(value)
    except ValueError:
        raise OcgInputError(
            where,
            f"got {value!r}; expected Slurm's MM, MM:SS, HH:MM:SS or D-HH[:MM[:SS]] "
            "(minutes and seconds below 60, hours below 24 after a day count), "
            "or 0 / UNLIMITED for no limit",
        ) from None


def _check_mem(where: str, value: str) -> None:
    if not re.match(r"^\d+[KMGT]?$", value):
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


def _no_nul(where: str, value: str) -> None:
    if "\0" in value:
        raise OcgInputError(where, f"got {value!r}; a NUL character cannot be passed to a job")


def _check_env(where: str, env: dict) -> None:
    for name, value in env.items():
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
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


def _check_extra_args(where: str, args: list) -> None:
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


def _check_setup(where: str, lines: list) -> None:
    """Shell lines, run as written (trusted): only checked to parse, so the script stays valid."""
    import subprocess

    for line in lines:
        _no_nul(where, line)
    proc = subprocess.run(
        ["bash", "-n"], input="\n".join(lines) + "\n", capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise OcgInputError(where, f"not valid bash: {proc.stderr.strip()[:300]}")


# Where a group's jobs queue: each resource group (and the analysis job) may name its own; unset,
# the sweep's `slurm:` values hold. A group's extra_args come after the sweep's (the last wins).
SITE_FIELDS = {
    "partition": Field(str, nullable=True),
    "account": Field(str, nullable=True),
    "extra_args": Field(list, items=str, check=_check_extra_args),
}
RESOURCE_FIELDS = {
    "gpus": Field(int, minimum=0),
    "cpus": Field(int, minimum=1),
    "mem": Field(str, check=_check_mem),
    "time": Field(str, check=_check_time),
    **SITE_FIELDS,
}
SLURM_FIELDS = {
    **SITE_FIELDS,
    "throttle": Field(int, minimum=1),
    "analysis": Field(dict),
    "setup": Field(list, items=str, check=_check_setup),
    "env": Field(dict, check=_check_env),
    "warn_before_limit_s": Field(int, minimum=10),
}
SWEEP_FIELDS = {
    "outputs": Field(str, nullable=True),
    "resources": Field(dict, expected="a mapping with default and models"),
    "slurm": Field(dict),
}
SWEEP_DEFAULTS = {"outputs": None, "resources": {}, "slurm": {}}
SLURM_DEFAULTS = {
    "partition": None,
    "account": None,
    "throttle": 8,
    "extra_args": [],
    "setup": [],
    "env": {},
    "warn_before_limit_s": 600,
    "analysis": {"cpus": 2, "mem": "8G", "time": "02:00:00", "gpus": 0},
}


def _check_resources(where: str, res: object) -> dict:
    return check_fields(where, res, RESOURCE_FIELDS)


MERGED_ONE_LEVEL = ("resources", "slurm")  # the mappings an extending file adds to, key by key


def read_sweep_yaml(path: Path) -> object:
    """A sweep file's settings, with those of the files it `extends` (io.read_extends_chain): the
    extending file's keys replace the base's, except `resources` and `slurm`, which it adds to key
    by key; a base's relative `models_file` stays relative to the base. An extending file names
    itself (markers and reports are kept per sweep name)."""
    chain = read_extends_chain(path, "sweep")
    if len(chain) == 1:
        return chain[0][1]
    for file, raw in chain:
        if not isinstance(raw, dict):
            raise OcgInputError(str(file), "expected a sweep file (a mapping of settings)")
    for file, raw in chain[:-1]:
        if not isinstance(raw.get("name"), str):
            raise OcgInputError(
                f"{file}: name",
                "missing: a sweep that extends another needs a name of its own "
                "(markers and reports are kept per sweep name)",
            )
    base_file, merged = chain[-1][0], dict(chain[-1][1])
    for file, raw in reversed(chain[:-1]):
        if (
            isinstance(merged.get("models_file"), str)
            and not Path(merged["models_file"]).is_absolute()
        ):
            merged["models_file"] = str((base_file.parent / merged["models_file"]).resolve())
        for key, value in raw.items():
            if (
                key in MERGED_ONE_LEVEL
                and isinstance(value, dict)
                and isinstance(merged.get(key), dict)
            ):
                value = {**merged[key], **value}
            merged[key] = value
        base_file = file
    merged.pop("extends", None)
    return merged


def load_sweep(path: str | Path) -> dict:
    """A sweep file, validated completely before any work (ocg/runconfig.py, plus resources)."""
    path = Path(path).resolve()
    sweep = check_common(
        read_sweep_yaml(path),
        path,
        {**RUN_FIELDS, **SWEEP_FIELDS},
        {**COMMON_DEFAULTS, **SWEEP_DEFAULTS},
    )
    src = str(path)
    if not isinstance(sweep["outputs"], str) or not sweep["outputs"].strip():
        raise OcgInputError(
            f"{src}: outputs",
            "missing: the folder this sweep writes (relative: under "
            "OCG_OUTPUTS when set, else the project root; or absolute)",
        )
    res = sweep["resources"]
    check_fields(
        f"{src}: resources",
        res,
        {
            "default": Field(dict),
            "models": Field(dict, nullable=True, expected="a mapping of model: resources"),
        },
    )
    _check_resources(f"{src}: resources.default", res.get("default", {}))
    for model, r in (res.get("models") or {}).items():
        if model not in sweep["models"]:
            raise OcgInputError(f"{src}: resources.models.{model}", "not a model of this sweep")
        _check_resources(f"{src}: resources.models.{model}", r)
    slurm = check_fields(f"{src}: slurm", sweep["slurm"], SLURM_FIELDS, SLURM_DEFAULTS)
    _check_resources(f"{src}: slurm.analysis", slurm["analysis"])
    sweep["slurm"] = slurm
    sweep["file"] = str(
        Path(src).resolve()
    )  # tasks run it from the project root, Slurm jobs from anywhere
    return sweep


def resources_for(sweep: dict, model: str) -> dict:
    base = {"gpus": 0, "cpus": 1, "mem": "4G", "time": "01:00:00"}
    res = sweep["resources"]
    return {**base, **res.get("default", {}), **(res.get("models") or {}).get(model, {})}
