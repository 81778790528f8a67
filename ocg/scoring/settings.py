"""The scoring settings (params/scoring.yaml, overridable per run), checked completely
(ocg/config/scoring_file.py, ScoringFile)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config.file_model import validate
from ..config.local_paths import LOCAL_MODEL_SETTINGS, base_of, local_model_field
from ..config.scoring_file import ScoringFile
from ..core.arguments import distinct
from ..core.errors import OcgInputError
from ..core.files import read_yaml
from ..core.paths import PARAMS_DIR
from ..metrics.coverage import SPACY_PIPELINES
from ..metrics.matching import MATCHING_RULES
from .families import FAMILIES

SCORING_FILE = PARAMS_DIR / "scoring.yaml"


def load_scoring_config(
    path: str | Path = SCORING_FILE, overrides: Mapping[str, Any] | None = None
) -> ScoringFile:
    """The scoring file's settings with `overrides` (a run's `scoring:` block) on top, checked."""
    path = Path(path)
    config = read_yaml(path) or {}
    if not isinstance(config, dict):
        raise OcgInputError(str(path), "expected a mapping of scoring settings")
    base = base_of(path)  # a local model folder of the file's own: relative to it
    for key in LOCAL_MODEL_SETTINGS:
        if isinstance(config.get(key), str):
            config[key] = local_model_field(f"{path}: {key}", config[key], base)
    config.update(
        {k: v for k, v in (overrides or {}).items() if v is not None or k == "perplexity_fallback"}
    )
    settings = validate(ScoringFile, config, f"{path}:")
    check_choices(settings, str(path))
    check_metrics(settings.metrics, f"{path}: metrics")
    return settings


def check_choices(settings: ScoringFile, where: str) -> None:
    """spacy_pipeline and matching_rule: one of ocg/metrics' own (the lists are theirs alone: the
    config floor cannot import them; the JSON Schemas get them from ocg/jobs/schema_export.py)."""
    for key, known in (("spacy_pipeline", SPACY_PIPELINES), ("matching_rule", MATCHING_RULES)):
        value = getattr(settings, key)
        if value not in known:
            raise OcgInputError(
                f"{where}: {key}", f"got {value!r}; expected one of {', '.join(known)}"
            )


def check_metrics(metrics, where: str) -> list[str]:
    known = list(
        FAMILIES
    )  # at call time: a family added after import counts (docs/developing.md, "Adding a metric")
    if not isinstance(metrics, (list, tuple)) or not metrics:
        raise OcgInputError(where, f"got {metrics!r}; expected a list of metrics from {known}")
    unknown = sorted({m for m in metrics if m not in known}, key=str)
    if unknown:
        raise OcgInputError(where, f"unknown metric(s) {unknown}; known: {known}")
    return list(distinct(where, metrics))


CONFIG_KEYS = set(ScoringFile.model_fields)
