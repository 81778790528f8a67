"""Run files (params/runs/) and sweep files (params/sweeps/): one schema, checked completely on load.

Both name what to run: models (entries of a models file), conditions, concept sets, templates,
metrics and scoring settings, the notebooks, and Table 7's pairs. A sweep adds where outputs go
and the resources of each model's task. Every field is checked before any work starts; an error
names the file and the field.
"""

from __future__ import annotations

from pathlib import Path

from .errors import OcgInputError
from .models import MODELS_FILE, load_models
from .names import check_name
from .plan import ANALYSES, MODEL_NOTEBOOKS

COMMON_DEFAULTS = {"models_file": None, "n_concepts": 4, "subset_k": None, "template_ids": None,
                   "metrics": None, "scoring": {}, "notebooks": list(MODEL_NOTEBOOKS),
                   "analysis": list(ANALYSES), "table7_pairs": None, "table7_note": "",
                   "allow_incomplete": False}
REQUIRED = ("name", "models", "conditions")


def _list_of(where: str, value, kind, allow_none=False, allow_empty=False):
    if value is None and allow_none:
        return None
    if not isinstance(value, list) or (not value and not allow_empty) or \
            not all(isinstance(v, kind) and not isinstance(v, bool) for v in value):
        raise OcgInputError(where, f"got {value!r}; expected a {'non-empty ' if not allow_empty else ''}"
                                   f"list of {kind.__name__}" + (" or null" if allow_none else ""))
    return value


def check_common(raw: object, path: Path, extra_keys: dict) -> dict:
    """The validated configuration: COMMON_DEFAULTS filled in, models_file resolved."""
    from .data import load_templates
    from .scoring import check_metrics, load_scoring_config

    src = str(path)
    if not isinstance(raw, dict):
        raise OcgInputError(src, "expected a mapping of settings")
    known = set(COMMON_DEFAULTS) | set(REQUIRED) | set(extra_keys)
    for key in raw:
        if key not in known:
            raise OcgInputError(f"{src}: {key}", f"unknown key; known: {sorted(known)}")
    for key in REQUIRED:
        if key not in raw:
            raise OcgInputError(f"{src}: {key}", "missing")
    cfg = {**COMMON_DEFAULTS, **extra_keys, **raw}
    check_name(f"{src}: name", cfg["name"])

    models_file = Path(cfg["models_file"]) if cfg["models_file"] else MODELS_FILE
    if cfg["models_file"] is not None and not isinstance(cfg["models_file"], str):
        raise OcgInputError(f"{src}: models_file", f"got {cfg['models_file']!r}; expected a path or null")
    if not models_file.is_absolute():
        models_file = (path.parent / models_file).resolve()
    cfg["models_file"] = str(models_file) if raw.get("models_file") else None
    specs = load_models(models_file)
    _list_of(f"{src}: models", cfg["models"], str)
    for i, model in enumerate(cfg["models"]):
        check_name(f"{src}: models[{i}]", model)
        if model not in specs:
            raise OcgInputError(f"{src}: models[{i}]", f"{model!r} is not an entry of {models_file}")
    if len(set(cfg["models"])) != len(cfg["models"]):
        raise OcgInputError(f"{src}: models", "a model is listed twice")

    templates = load_templates()
    for i, cond in enumerate(_list_of(f"{src}: conditions", cfg["conditions"], str)):
        if cond not in templates.conditions:
            raise OcgInputError(f"{src}: conditions[{i}]", f"unknown condition {cond!r}; known: "
                                                           f"{sorted(templates.conditions)}")
    if cfg["n_concepts"] not in (4, 5) or isinstance(cfg["n_concepts"], bool):
        raise OcgInputError(f"{src}: n_concepts", f"got {cfg['n_concepts']!r}; expected 4 or 5")
    k = cfg["subset_k"]
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise OcgInputError(f"{src}: subset_k", f"got {k!r}; expected a positive number of concept sets, "
                                                "or null for all")
    for i, tid in enumerate(_list_of(f"{src}: template_ids", cfg["template_ids"], int, allow_none=True) or []):
        if tid not in templates.templates:
            raise OcgInputError(f"{src}: template_ids[{i}]", f"unknown template id {tid}; known: "
                                                             f"{sorted(templates.templates)}")
    if cfg["metrics"] is not None:
        check_metrics(cfg["metrics"], f"{src}: metrics")
    if not isinstance(cfg["scoring"], dict):
        raise OcgInputError(f"{src}: scoring", "expected a mapping of params/scoring.yaml overrides")
    try:
        load_scoring_config(**cfg["scoring"])
    except OcgInputError as exc:
        raise OcgInputError(f"{src}: scoring", exc.problem) from None
    for key, allowed in (("notebooks", MODEL_NOTEBOOKS), ("analysis", ANALYSES)):
        for i, nb in enumerate(_list_of(f"{src}: {key}", cfg[key], str, allow_empty=True)):
            if nb not in allowed:
                raise OcgInputError(f"{src}: {key}[{i}]", f"unknown notebook {nb!r}; known: {list(allowed)}")
    pairs = cfg["table7_pairs"]
    if pairs is not None:
        if not isinstance(pairs, dict):
            raise OcgInputError(f"{src}: table7_pairs", "expected {reasoning model: base model}")
        for reasoning, base in pairs.items():
            for model in (reasoning, base):
                if model not in cfg["models"]:
                    raise OcgInputError(f"{src}: table7_pairs.{reasoning}", f"{model!r} is not a model of this file")
    if not isinstance(cfg["allow_incomplete"], bool):
        raise OcgInputError(f"{src}: allow_incomplete", f"got {cfg['allow_incomplete']!r}; expected true or false")
    if not isinstance(cfg["table7_note"], str):
        raise OcgInputError(f"{src}: table7_note", "expected text")
    cfg["file"] = src
    return cfg
