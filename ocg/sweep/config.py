"""A sweep file: models, conditions, where outputs go and the resources of each model's task."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import OcgInputError
from ..io import read_yaml
from ..runconfig import COMMON_DEFAULTS, RUN_FIELDS, check_common
from ..schema import Field, check_fields

TIME_RE = re.compile(r"^(\d+-)?\d{1,2}(:\d{2}){0,2}$")  # Slurm: [D-]HH[:MM[:SS]] or MM


def _check_time(where: str, value: str) -> None:
    if not TIME_RE.match(value):
        raise OcgInputError(where, f"got {value!r}; expected Slurm's [D-]HH:MM:SS")


def _check_mem(where: str, value: str) -> None:
    if not re.match(r"^\d+[KMGT]?$", value):
        raise OcgInputError(where, f"got {value!r}; expected e.g. 16G or 500M")


def _check_env(where: str, env: dict) -> None:
    for name, value in env.items():
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            raise OcgInputError(f"{where}.{name}", "expected a variable name (letters, digits, _)")
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise OcgInputError(f"{where}.{name}", f"got {value!r}; expected a text or a number")


def _check_setup(where: str, lines: list) -> None:
    """Shell lines, run as written (trusted): only checked to parse, so the script stays valid."""
    import subprocess
    proc = subprocess.run(["bash", "-n"], input="\n".join(lines) + "\n", capture_output=True, text=True)
    if proc.returncode != 0:
        raise OcgInputError(where, f"not valid bash: {proc.stderr.strip()[:300]}")


# Where a group's jobs queue: each resource group (and the analysis job) may name its own; unset,
# the sweep's `slurm:` values hold. A group's extra_args come after the sweep's (the last wins).
SITE_FIELDS = {"partition": Field(str, nullable=True), "account": Field(str, nullable=True),
               "extra_args": Field(list, items=str)}
RESOURCE_FIELDS = {"gpus": Field(int, minimum=0), "cpus": Field(int, minimum=1),
                   "mem": Field(str, check=_check_mem), "time": Field(str, check=_check_time), **SITE_FIELDS}
SLURM_FIELDS = {**SITE_FIELDS, "throttle": Field(int, minimum=1), "analysis": Field(dict),
                "setup": Field(list, items=str, check=_check_setup), "env": Field(dict, check=_check_env),
                "warn_before_limit_s": Field(int, minimum=10)}
SWEEP_FIELDS = {"outputs": Field(str, nullable=True), "resources": Field(
    dict, expected="a mapping with default and models"), "slurm": Field(dict)}
SWEEP_DEFAULTS = {"outputs": None, "resources": {}, "slurm": {}}
SLURM_DEFAULTS = {"partition": None, "account": None, "throttle": 8, "extra_args": [], "setup": [], "env": {},
                  "warn_before_limit_s": 600,
                  "analysis": {"cpus": 2, "mem": "8G", "time": "02:00:00", "gpus": 0}}


def _check_resources(where: str, res: object) -> dict:
    return check_fields(where, res, RESOURCE_FIELDS)


def load_sweep(path: str | Path) -> dict:
    """A sweep file, validated completely before any work (ocg/runconfig.py, plus resources)."""
    path = Path(path).resolve()
    sweep = check_common(read_yaml(path), path, {**RUN_FIELDS, **SWEEP_FIELDS}, {**COMMON_DEFAULTS, **SWEEP_DEFAULTS})
    src = str(path)
    if not isinstance(sweep["outputs"], str) or not sweep["outputs"].strip():
        raise OcgInputError(f"{src}: outputs", "missing: the folder this sweep writes (relative: under "
                                               "OCG_OUTPUTS when set, else the project root; or absolute)")
    res = sweep["resources"]
    check_fields(f"{src}: resources", res, {"default": Field(dict), "models": Field(
        dict, nullable=True, expected="a mapping of model: resources")})
    _check_resources(f"{src}: resources.default", res.get("default", {}))
    for model, r in (res.get("models") or {}).items():
        if model not in sweep["models"]:
            raise OcgInputError(f"{src}: resources.models.{model}", "not a model of this sweep")
        _check_resources(f"{src}: resources.models.{model}", r)
    slurm = check_fields(f"{src}: slurm", sweep["slurm"], SLURM_FIELDS, SLURM_DEFAULTS)
    _check_resources(f"{src}: slurm.analysis", slurm["analysis"])
    sweep["slurm"] = slurm
    sweep["file"] = str(Path(src).resolve())  # tasks run it from the project root, Slurm jobs from anywhere
    return sweep

def resources_for(sweep: dict, model: str) -> dict:
    base = {"gpus": 0, "cpus": 1, "mem": "4G", "time": "01:00:00"}
    res = sweep["resources"]
    return {**base, **res.get("default", {}), **(res.get("models") or {}).get(model, {})}
