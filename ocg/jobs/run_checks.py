"""Run files (params/runs/) and sweep files (params/sweeps/): one schema, checked completely on load.

Both name what to run: models (entries of a models file), conditions, concept sets, templates,
metrics and scoring settings, the notebooks, and Table 7's pairs. A sweep adds where outputs go
and the resources of each model's task. Every field is one of ocg/config/run_file.py's models, checked
before any work starts (then what needs the models, templates and scoring files); an error names file and field.
"""

from __future__ import annotations

from pathlib import Path

from ..config.file_model import validate
from ..config.model_registry import MODELS_FILE, load_models
from ..config.run_file import RunFile
from ..core.errors import OcgInputError
from ..core.frames import check_permutations, unknown_template
from ..generation.backends.constrained import check_backends
from ..generation.sampling import check_sampling


def defaults_of(model: type[RunFile]) -> dict:
    """The values a file silent on a field gets (the model's defaults, the one place written)."""
    return {
        key: info.get_default(call_default_factory=True)
        for key, info in model.model_fields.items()
        if not info.is_required() and key != "extends"
    }


COMMON_DEFAULTS = defaults_of(RunFile)


def _judge_from(cfg: dict, src: str, models_file: Path) -> None:
    """A judge named by `scoring.judge` is read from the run's own models file where it names one
    (passed on to scoring as `scoring.judge_models_file`); checked here, before anything runs."""
    from ..scoring.judging import judge_spec

    scoring = cfg["scoring"]
    if not scoring.get("judge"):
        return
    if cfg["models_file"] and not scoring.get("judge_models_file"):
        scoring["judge_models_file"] = str(models_file)
    try:
        judge_spec(scoring["judge"], scoring.get("judge_models_file"))
    except OcgInputError as exc:
        raise OcgInputError(f"{src}: scoring.judge", exc.problem) from None


def _models_file(cfg: dict, raw: dict, path: Path) -> Path:
    """The models file the run's models come from (relative: to the run file), each model in it."""
    src = str(path)
    models_file = Path(cfg["models_file"]) if cfg["models_file"] else MODELS_FILE
    if not models_file.is_absolute():
        models_file = (path.parent / models_file).resolve()
    cfg["models_file"] = str(models_file) if raw.get("models_file") else None
    specs = load_models(models_file)
    for i, model in enumerate(cfg["models"]):
        if model not in specs:
            raise OcgInputError(
                f"{src}: models[{i}]", f"{model!r} is not an entry of {models_file}"
            )
    cfg["_specs"] = specs
    return models_file


def _check_templates(cfg: dict, src: str, specs: dict) -> None:
    """Conditions and template ids of params/templates.yaml, each model able to run each one."""
    from ..data import load_templates

    templates = load_templates()
    for i, cond in enumerate(cfg["conditions"]):
        if cond not in templates.conditions:
            raise OcgInputError(
                f"{src}: conditions[{i}]",
                f"unknown condition {cond!r}; known: {sorted(templates.conditions)}",
            )
    check_backends(src, cfg["conditions"], cfg["models"], specs, templates)
    for i, tid in enumerate(cfg["template_ids"] or []):
        if tid not in templates.templates:
            raise unknown_template(f"{src}: template_ids[{i}]", tid, templates.templates)


def _check_scoring(cfg: dict, src: str, models_file: Path) -> None:
    from ..scoring import check_metrics, load_scoring_config

    if cfg["metrics"] is not None:
        check_metrics(cfg["metrics"], f"{src}: metrics")
    try:
        load_scoring_config(**cfg["scoring"])
    except OcgInputError as exc:
        raise OcgInputError(f"{src}: scoring", exc.problem) from None
    _judge_from(cfg, src, models_file)


def _check_pairs_and_outputs(cfg: dict, src: str) -> None:
    for reasoning, base in (cfg["table7_pairs"] or {}).items():
        for model in (reasoning, base):
            if model not in cfg["models"]:
                raise OcgInputError(
                    f"{src}: table7_pairs.{reasoning}", f"{model!r} is not a model of this file"
                )
    if cfg["outputs"] is not None:
        from ..core.paths import outputs_field

        if not cfg["outputs"].strip():
            raise OcgInputError(
                f"{src}: outputs",
                "empty: expected a folder (relative: under OCG_OUTPUTS "
                "when set, else the project root; or absolute)",
            )
        cfg["outputs"] = str(outputs_field(cfg["outputs"]))


def check_common(raw: object, path: Path, model: type[RunFile] = RunFile) -> dict:
    """The validated configuration: the model's defaults filled in, models_file resolved; then
    what needs the other files (models, templates, scoring settings) and the other fields."""
    src = str(path)
    if not isinstance(raw, dict):
        raise OcgInputError(src, "expected a mapping of settings")
    validate(model, raw, f"{src}:")
    cfg = {**defaults_of(model), **raw}
    cfg["samples"], cfg["sampling"] = check_sampling(f"{src}: ", cfg["samples"], cfg["sampling"])
    models_file = _models_file(cfg, raw, path)
    check_permutations(f"{src}: permutations", cfg["permutations"], cfg["n_concepts"])
    _check_templates(cfg, src, cfg.pop("_specs"))
    _check_scoring(cfg, src, models_file)
    _check_pairs_and_outputs(cfg, src)
    cfg["file"] = str(path.resolve())  # absolute: results.json and the pages name it anywhere
    return cfg
