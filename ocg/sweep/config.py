"""A sweep file: models, conditions, where outputs go and the resources of each model's task."""

from __future__ import annotations

from pathlib import Path

from ..config.run_file import Resources, Slurm, SweepFile
from ..config.sweep_file import time_limit_s
from ..core.errors import OcgInputError
from ..core.files import read_extends_chain
from ..jobs.run_checks import check_common

__all__ = ["load_sweep", "read_sweep_yaml", "resources_for", "time_limit_s"]
SLURM_DEFAULTS = {key: info.default for key, info in Slurm.model_fields.items()}
RESOURCE_DEFAULTS = {  # a task's, where the sweep says nothing (ocg/config/run_file.py, Resources)
    key: Resources.model_fields[key].default for key in ("gpus", "cpus", "mem", "time")
}


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
    """A sweep file, validated completely before any work (ocg/jobs/run_checks.py, plus resources)."""
    path = Path(path).resolve()
    sweep = check_common(read_sweep_yaml(path), path, SweepFile)
    src = str(path)
    if not isinstance(sweep["outputs"], str) or not sweep["outputs"].strip():
        raise OcgInputError(
            f"{src}: outputs",
            "missing: the folder this sweep writes (relative: under "
            "OCG_OUTPUTS when set, else the project root; or absolute)",
        )
    for model in sweep["resources"].get("models") or {}:
        if model not in sweep["models"]:
            raise OcgInputError(f"{src}: resources.models.{model}", "not a model of this sweep")
    sweep["slurm"] = {**SLURM_DEFAULTS, **sweep["slurm"]}
    sweep["file"] = str(path)  # tasks run it from the project root, Slurm jobs from anywhere
    return sweep


def resources_for(sweep: dict, model: str) -> dict:
    res = sweep["resources"]
    return {
        **RESOURCE_DEFAULTS,
        **res.get("default", {}),
        **(res.get("models") or {}).get(model, {}),
    }
