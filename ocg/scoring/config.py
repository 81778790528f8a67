"""The scoring settings (params/scoring.yaml, overridable per run), checked completely."""

from __future__ import annotations

from pathlib import Path

from ..errors import OcgInputError
from ..io import read_yaml
from ..metrics import coverage
from ..paths import PARAMS_DIR
from ..schema import Field, check_fields, positive_int
from .families import FAMILIES

SCORING_FILE = PARAMS_DIR / "scoring.yaml"


def load_scoring_config(path: str | Path = SCORING_FILE, **overrides) -> dict:
    """The scoring file's settings with `overrides` (a run's `scoring:` block) on top, checked."""
    path = Path(path)
    config = read_yaml(path) or {}
    if not isinstance(config, dict):
        raise OcgInputError(str(path), "expected a mapping of scoring settings")
    config.update(
        {k: v for k, v in overrides.items() if v is not None or k == "perplexity_fallback"}
    )
    return check_fields(f"{path}:", config, CONFIG_FIELDS)


def check_metrics(metrics, where: str) -> list[str]:
    known = list(
        FAMILIES
    )  # at call time: a family added after import counts (docs/developing.md, "Adding a metric")
    if not isinstance(metrics, (list, tuple)) or not metrics:
        raise OcgInputError(where, f"got {metrics!r}; expected a list of metrics from {known}")
    unknown = sorted({m for m in metrics if m not in known}, key=str)
    if unknown:
        raise OcgInputError(where, f"unknown metric(s) {unknown}; known: {known}")
    return list(metrics)


def _check_processes(where: str, value) -> None:
    if value != "auto":
        positive_int(where, value, "auto or a positive integer")


CONFIG_FIELDS = {
    "spacy_model": Field(str, required=True),
    "spacy_batch_size": Field(int, required=True, minimum=1),
    "spacy_processes": Field((int, str), check=_check_processes),
    "spacy_pipeline": Field(str, required=True, choices=tuple(coverage.SPACY_PIPELINES)),
    "matching_rule": Field(str, required=True, choices=coverage.MATCHING_RULES),
    "bleurt_checkpoint": Field(str, required=True),
    "bleurt_batch_size": Field(int, required=True, minimum=1),
    "perplexity_model": Field(str, required=True),
    "perplexity_fallback": Field(str, required=True, nullable=True),
    "perplexity_batch_size": Field(int, required=True, minimum=1),
    "embedding_model": Field(str, required=True),
    "judge": Field(str, nullable=True),
    "judge_models_file": Field(str, nullable=True),
    "embedding_batch_size": Field(int, required=True, minimum=1),
    "metrics": Field(list, required=True, check=lambda where, value: check_metrics(value, where)),
}
CONFIG_KEYS = set(CONFIG_FIELDS)
