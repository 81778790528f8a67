"""A sweep file: models, conditions, where outputs go and the resources of each model's task."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import OcgInputError
from ..io import read_yaml
from ..paths import PROJECT_ROOT
from ..runconfig import check_common

RESOURCE_KEYS = {"gpus": int, "cpus": int, "mem": str, "time": str}

SLURM_KEYS = {"partition": (str, type(None)), "account": (str, type(None)), "throttle": int,
              "extra_args": list, "analysis": dict}

TIME_RE = re.compile(r"^(\d+-)?\d{1,2}(:\d{2}){0,2}$")  # Slurm: [D-]HH[:MM[:SS]] or MM

def _check_resources(where: str, res: object) -> dict:
    if not isinstance(res, dict):
        raise OcgInputError(where, "expected a mapping of gpus, cpus, mem, time")
    for key, value in res.items():
        if key not in RESOURCE_KEYS:
            raise OcgInputError(f"{where}.{key}", f"unknown resource; known: {sorted(RESOURCE_KEYS)}")
        if not isinstance(value, RESOURCE_KEYS[key]) or isinstance(value, bool):
            raise OcgInputError(f"{where}.{key}", f"got {value!r}")
        if key in ("gpus", "cpus") and value < (0 if key == "gpus" else 1):
            raise OcgInputError(f"{where}.{key}", f"got {value}; expected {'>= 0' if key == 'gpus' else '>= 1'}")
        if key == "time" and not TIME_RE.match(value):
            raise OcgInputError(f"{where}.{key}", f"got {value!r}; expected Slurm's [D-]HH:MM:SS")
        if key == "mem" and not re.match(r"^\d+[KMGT]?$", value):
            raise OcgInputError(f"{where}.{key}", f"got {value!r}; expected e.g. 16G or 500M")
    return res

def load_sweep(path: str | Path) -> dict:
    """A sweep file, validated completely before any work (ocg/runconfig.py, plus resources)."""
    path = Path(path).resolve()
    sweep = check_common(read_yaml(path), path, {"outputs": None, "resources": {}, "slurm": {}})
    src = str(path)
    if not isinstance(sweep["outputs"], str) or not sweep["outputs"].strip():
        raise OcgInputError(f"{src}: outputs", "missing: the folder this sweep writes (relative to the "
                                               "project root, or absolute)")
    res = sweep["resources"]
    if not isinstance(res, dict):
        raise OcgInputError(f"{src}: resources", "expected a mapping with default and models")
    _check_resources(f"{src}: resources.default", res.get("default", {}))
    models = res.get("models") or {}
    if not isinstance(models, dict):
        raise OcgInputError(f"{src}: resources.models", "expected a mapping of model: resources")
    for model, r in models.items():
        if model not in sweep["models"]:
            raise OcgInputError(f"{src}: resources.models.{model}", "not a model of this sweep")
        _check_resources(f"{src}: resources.models.{model}", r)
    extra = sorted(set(res) - {"default", "models"})
    if extra:
        raise OcgInputError(f"{src}: resources.{extra[0]}", "unknown key; known: default, models")
    if not isinstance(sweep["slurm"], dict):
        raise OcgInputError(f"{src}: slurm", "expected a mapping")
    slurm = {"partition": None, "account": None, "throttle": 8, "extra_args": [],
             "analysis": {"cpus": 2, "mem": "8G", "time": "02:00:00", "gpus": 0}, **sweep["slurm"]}
    for key, value in slurm.items():
        if key not in SLURM_KEYS or not isinstance(value, SLURM_KEYS[key]) or isinstance(value, bool):
            raise OcgInputError(f"{src}: slurm.{key}", f"unknown key or bad value {value!r}")
    if slurm["throttle"] < 1:
        raise OcgInputError(f"{src}: slurm.throttle", f"got {slurm['throttle']}; expected >= 1")
    _check_resources(f"{src}: slurm.analysis", slurm["analysis"])
    sweep["slurm"] = slurm
    out = Path(sweep["outputs"])
    sweep["outputs"] = str(out if out.is_absolute() else (PROJECT_ROOT / out).resolve())
    sweep["file"] = src
    return sweep

def resources_for(sweep: dict, model: str) -> dict:
    base = {"gpus": 0, "cpus": 1, "mem": "4G", "time": "01:00:00"}
    res = sweep["resources"]
    return {**base, **res.get("default", {}), **(res.get("models") or {}).get(model, {})}
