"""The scoring settings (params/scoring.yaml, overridable per run), checked completely."""

from __future__ import annotations

from pathlib import Path

from ..errors import OcgInputError
from ..io import read_yaml
from ..metrics import coverage
from ..paths import PARAMS_DIR
from .families import FAMILIES

SCORING_FILE = PARAMS_DIR / "scoring.yaml"
METRICS = tuple(FAMILIES)  # the scoring families, in the order they run
CONFIG_KEYS = {"spacy_model": str, "spacy_batch_size": int, "matching_rule": str,
               "bleurt_checkpoint": str, "bleurt_batch_size": int, "perplexity_model": str,
               "perplexity_fallback": (str, type(None)), "perplexity_batch_size": int, "metrics": list}


def load_scoring_config(path: str | Path = SCORING_FILE, **overrides) -> dict:
    path = Path(path)
    config = read_yaml(path) or {}
    if not isinstance(config, dict):
        raise OcgInputError(str(path), "expected a mapping of scoring settings")
    config.update({k: v for k, v in overrides.items() if v is not None or k == "perplexity_fallback"})
    for key in config:
        if key not in CONFIG_KEYS:
            raise OcgInputError(f"{path}: {key}", f"unknown key; known: {sorted(CONFIG_KEYS)}")
        if not isinstance(config[key], CONFIG_KEYS[key]) or isinstance(config[key], bool):
            raise OcgInputError(f"{path}: {key}", f"got {config[key]!r}")
    for key in CONFIG_KEYS:
        if key not in config:
            raise OcgInputError(f"{path}: {key}", "missing")
    for key in ("spacy_batch_size", "bleurt_batch_size", "perplexity_batch_size"):
        if config[key] < 1:
            raise OcgInputError(f"{path}: {key}", f"got {config[key]}; expected a positive integer")
    check_metrics(config["metrics"], f"{path}: metrics")
    if config["matching_rule"] not in coverage.MATCHING_RULES:
        raise OcgInputError(f"{path}: matching_rule", f"got {config['matching_rule']!r}; known: "
                                                      f"{list(coverage.MATCHING_RULES)}")
    return config


def check_metrics(metrics, where: str) -> list[str]:
    if not isinstance(metrics, (list, tuple)) or not metrics:
        raise OcgInputError(where, f"got {metrics!r}; expected a list of metrics from {list(METRICS)}")
    unknown = sorted({m for m in metrics if m not in METRICS}, key=str)
    if unknown:
        raise OcgInputError(where, f"unknown metric(s) {unknown}; known: {list(METRICS)}")
    return list(metrics)
