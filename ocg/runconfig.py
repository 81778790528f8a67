"""Run files (params/runs/) and sweep files (params/sweeps/): one schema, checked completely on load.

Both name what to run: models (entries of a models file), conditions, concept sets, templates,
metrics and scoring settings, the notebooks, and Table 7's pairs. A sweep adds where outputs go
and the resources of each model's task. Every field is a `schema.Field`, checked before any work
starts (then what needs the models, templates and scoring files); an error names file and field.
"""

from __future__ import annotations

from pathlib import Path

from .errors import OcgInputError
from .frames import (
    DEFAULT_N_CONCEPTS,
    N_CONCEPTS,
    N_CONCEPTS_TEXT,
    check_permutations,
    unknown_template,
)
from .generation.constrained import check_backends
from .generation.sampling import check_sampling
from .models import MODELS_FILE, load_models
from .names import check_name
from .notebook_names import ANALYSES, MODEL_NOTEBOOKS
from .schema import Field, check_fields

COMMON_DEFAULTS = {
    "models_file": None,
    "n_concepts": DEFAULT_N_CONCEPTS,
    "subset_k": None,
    "permutations": None,
    "template_ids": None,
    "metrics": None,
    "scoring": {},
    "notebooks": list(MODEL_NOTEBOOKS),
    "analysis": list(ANALYSES),
    "table7_pairs": None,
    "table7_note": "",
    "allow_incomplete": False,
    "outputs": None,
    "samples": 1,
    "sampling": None,
}


def _names(where: str, models: list) -> None:
    for i, model in enumerate(models):
        check_name(f"{where}[{i}]", model)
    if len(set(models)) != len(models):
        raise OcgInputError(where, "a model is listed twice")


def _notebooks(allowed: tuple[str, ...]):
    def check(where: str, notebooks: list) -> None:
        for i, nb in enumerate(notebooks):
            if nb not in allowed:
                raise OcgInputError(
                    f"{where}[{i}]", f"unknown notebook {nb!r}; known: {list(allowed)}"
                )

    return check


def _metrics(where: str, metrics: list) -> None:
    from .scoring import check_metrics

    check_metrics(metrics, where)


RUN_FIELDS = {
    "name": Field(str, required=True, check=check_name),
    "models": Field(list, required=True, items=str, nonempty=True, check=_names),
    "conditions": Field(list, required=True, items=str, nonempty=True),
    # relative: to the run or sweep file that names it (README, "Where relative paths point")
    "models_file": Field(str, nullable=True, expected="a path or null"),
    "n_concepts": Field(int, choices=N_CONCEPTS, expected=N_CONCEPTS_TEXT),
    "subset_k": Field(
        int, nullable=True, minimum=1, expected="a positive number of concept sets, or null for all"
    ),
    # a seeded sample of m permutations per concept set (docs/METHODS.md, "Five concepts and
    # sampled permutations"); null: all n! of them
    "permutations": Field(
        int,
        nullable=True,
        minimum=1,
        expected="a positive number of permutations per concept set, or null for all",
    ),
    "template_ids": Field(list, nullable=True, items=int, nonempty=True),
    "metrics": Field(list, nullable=True, check=_metrics),
    "scoring": Field(dict, expected="a mapping of params/scoring.yaml overrides"),
    "notebooks": Field(list, items=str, check=_notebooks(MODEL_NOTEBOOKS)),
    "analysis": Field(list, items=str, check=_notebooks(ANALYSES)),
    "table7_pairs": Field(dict, nullable=True, expected="{reasoning model: base model}"),
    "table7_note": Field(str, expected="text"),
    "allow_incomplete": Field(bool, expected="true or false"),
    # where this run's generations, scores and report go: absolute, or relative (under OCG_OUTPUTS
    # when it is set, else the project root: ocg/paths.py, outputs_field); null: OCG_OUTPUTS, else outputs/
    "outputs": Field(str, nullable=True, expected="a folder, or null"),
    # answers per instance (docs/METHODS.md, "Repeated samples and pass@k"); more than one needs
    # `sampling: {temperature: T, top_p: p}` (null: the entries' own, greedy, decoding)
    "samples": Field(int, minimum=1, expected="a positive number of samples per instance"),
    "sampling": Field(
        dict, nullable=True, expected="{temperature: T, top_p: p}, or null for greedy"
    ),
}


def _judge_from(cfg: dict, src: str, models_file: Path) -> None:
    """A judge named by `scoring.judge` is read from the run's own models file where it names one
    (passed on to scoring as `scoring.judge_models_file`); checked here, before anything runs."""
    from .scoring.judging import judge_spec

    scoring = cfg["scoring"]
    if not scoring.get("judge"):
        return
    if cfg["models_file"] and not scoring.get("judge_models_file"):
        scoring["judge_models_file"] = str(models_file)
    try:
        judge_spec(scoring["judge"], scoring.get("judge_models_file"))
    except OcgInputError as exc:
        raise OcgInputError(f"{src}: scoring.judge", exc.problem) from None


def check_common(
    raw: object, path: Path, fields: dict = RUN_FIELDS, defaults: dict = COMMON_DEFAULTS
) -> dict:
    """The validated configuration: `defaults` filled in, models_file resolved; then what needs
    the other files (models, templates, scoring settings) and the other fields."""
    from .data import load_templates
    from .scoring import load_scoring_config

    src = str(path)
    if not isinstance(raw, dict):
        raise OcgInputError(src, "expected a mapping of settings")
    cfg = check_fields(f"{src}:", raw, fields, defaults)
    cfg["samples"], cfg["sampling"] = check_sampling(f"{src}: ", cfg["samples"], cfg["sampling"])

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

    check_permutations(f"{src}: permutations", cfg["permutations"], cfg["n_concepts"])
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
    try:
        load_scoring_config(**cfg["scoring"])
    except OcgInputError as exc:
        raise OcgInputError(f"{src}: scoring", exc.problem) from None
    _judge_from(cfg, src, models_file)
    for reasoning, base in (cfg["table7_pairs"] or {}).items():
        for model in (reasoning, base):
            if model not in cfg["models"]:
                raise OcgInputError(
                    f"{src}: table7_pairs.{reasoning}", f"{model!r} is not a model of this file"
                )
    if cfg["outputs"] is not None:
        from .paths import outputs_field

        if not cfg["outputs"].strip():
            raise OcgInputError(
                f"{src}: outputs",
                "empty: expected a folder (relative: under OCG_OUTPUTS "
                "when set, else the project root; or absolute)",
            )
        cfg["outputs"] = str(outputs_field(cfg["outputs"]))
    cfg["file"] = str(
        path.resolve()
    )  # absolute: results.json and the pages name it wherever they are read
    return cfg
