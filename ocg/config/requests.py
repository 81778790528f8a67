"""What one generation or scoring step is asked: one validated object per step, built once from
the checked run (ocg/jobs/plan.py), the command line or a caller, and passed on as it is.

A notebook gets its request as a JSON file (`request_file`, written by ocg/jobs/notebook_runner.py)
and rebuilds the same object with `read_request`: the checked models-file entry and scoring
settings cross the notebook door whole, never re-read from params/ and never rebuilt as a dict.
The JSON holds what was set (`exclude_unset`), so the rebuilt entry's and scoring settings'
`recorded()` (run cards, signatures) are those of the object written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import Field

from .file_model import ConfigModel
from .models_file import ModelEntry
from .run_file import Sampling
from .scoring_file import ScoringFile


class GenerateRequest(ConfigModel):
    """One model's generation (ocg/generation/run_generation.py, `run_generation`)."""

    model: ModelEntry
    """The checked entry of the models file (never read again)."""
    conditions: list[str]
    """The conditions to generate."""
    subset_k: int | None = None
    """None: every concept set; k: a deterministic subset covering N/V compositions."""
    permutations: int | None = None
    """None: every permutation; m: a seeded sample of m per concept set."""
    template_ids: list[int] | None = None
    """None: every template."""
    dataset: str | None = None
    """A built dataset folder (notebook 00); None builds the instances in memory."""
    generations_dir: str | None = None
    """Where the model's folder is written; None: outputs/generations."""
    batch_size: int | None = None
    """None: the entry's batch size."""
    samples: int = 1
    """Answers per instance; more than one needs `sampling`."""
    sampling: Sampling | None = None
    """Sampled decoding; None: the entry's greedy decoding."""
    batch_check: int | None = None
    """The batch-1 check's size; None: the entry's."""
    progress: bool = True
    """Log the batches."""


class ScoringRequest(ConfigModel):
    """Scoring the models of a generations folder (ocg/scoring/run.py, `score_all`)."""

    scoring: ScoringFile
    """The checked scoring settings (the scoring file under a run's overrides; never read again)."""
    metrics: list[str] = Field(min_length=1)
    """The metric families to score: the run's, else the scoring settings'."""
    generations_dir: str | None = None
    """None: outputs/generations."""
    models: list[str] | None = None
    """None: every model with generations there."""
    scores_dir: str | None = None
    """None: outputs/scores."""
    redo: bool = False
    """Recompute everything even if up to date."""
    progress: bool = True
    """Log the families."""


StepRequest = GenerateRequest | ScoringRequest
Request = TypeVar("Request", GenerateRequest, ScoringRequest)


def request_json(request: StepRequest) -> str:
    """The request as its file holds it: the fields set, so a rebuilt one records the same; the
    values as Python holds them (an int given for a float field stays an int, as a run card
    records it: pydantic's own JSON would write 120 as 120.0)."""
    return json.dumps(request.model_dump(exclude_unset=True), indent=1)


def write_request(request: StepRequest, path: Path) -> Path:
    """Write `request` to `path` (its folder made); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(request_json(request) + "\n")
    return path


def read_request(kind: type[Request], path: str | Path) -> Request:
    """The request a notebook was given (`request_file`), validated again."""
    return kind.model_validate_json(Path(path).read_text())
