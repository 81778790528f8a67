"""A sweep file: models, conditions, where outputs go and the resources of each model's task.

Loaded as a CheckedRun (ocg/config/checked_run.py) whose `file` is a SweepFile
(ocg/config/sweep_file.py): its resources and Slurm settings are models, their defaults in the
model, read by attribute (`sweep.file.slurm.throttle`, `resources_for(sweep, model)`).
"""

from __future__ import annotations

from pathlib import Path

from ..config.checked_run import CheckedRun
from ..config.sweep_file import Resources, SweepFile, time_limit_s
from ..core.errors import OcgInputError
from ..core.files import read_extends_chain
from ..jobs.run_checks import check_run

__all__ = ["Sweep", "load_sweep", "read_sweep_yaml", "resources_for", "time_limit_s"]

Sweep = CheckedRun[SweepFile]  # a sweep file, checked

MERGED_KEY_BY_KEY = ("resources", "slurm")  # the mappings an extending file adds to, key by key


def _merged(base: dict, over: dict) -> dict:
    """`over` added to `base` key by key, at every depth (a list or a value replaces)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            value = _merged(out[key], value)
        out[key] = value
    return out


def read_sweep_yaml(path: Path) -> object:
    """A sweep file's settings, with those of the files it `extends` (core.files.read_extends_chain):
    the extending file's keys replace the base's, except `resources` and `slurm`, which it adds
    to key by key (resources.default's gpus kept when the extending file sets only its time);
    a base's relative `models_file` stays relative to the base. An extending file names itself
    (markers and reports are kept per sweep name)."""
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
                key in MERGED_KEY_BY_KEY
                and isinstance(value, dict)
                and isinstance(merged.get(key), dict)
            ):
                value = _merged(merged[key], value)
            merged[key] = value
        base_file = file
    merged.pop("extends", None)
    return merged


def load_sweep(path: str | Path) -> Sweep:
    """A sweep file, validated completely before any work (ocg/jobs/run_checks.py, plus resources)."""
    path = Path(path).resolve()
    sweep = check_run(read_sweep_yaml(path), path, SweepFile)
    src = str(path)
    if not isinstance(sweep.file.outputs, str) or not sweep.file.outputs.strip():
        raise OcgInputError(
            f"{src}: outputs",
            "missing: the folder this sweep writes (relative: under "
            "OCG_OUTPUTS when set, else the project root; or absolute)",
        )
    for model in sweep.file.resources.models or {}:
        if model not in sweep.file.models:
            raise OcgInputError(f"{src}: resources.models.{model}", "not a model of this sweep")
    return sweep


def resources_for(sweep: Sweep, model: str) -> Resources:
    """A model's task resources: the sweep's default, with what the model's own block sets."""
    block = sweep.file.resources
    own = (block.models or {}).get(model)
    if own is None:
        return block.default
    return block.default.model_copy(update={key: getattr(own, key) for key in own.model_fields_set})
