"""What a sweep writes about its models and its analyses (ocg/core/layout.py's SweepFolder says where),
as records like the run card (ocg/records/): fields declared once, checked when read back.

A task's environment keys (SLURM_JOB_ID, ...) are kept verbatim beside the fields (`other`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..records import Record, Vocabulary


class AnalysisStatus(Vocabulary):
    """How the sweep's last analyses ended (analysis.json's `state`)."""

    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class DoneMarker(Record):
    """`<notebook>.done`: the model's notebook finished (only its presence is read)."""

    WHAT = "a notebook's completion marker"

    model: str
    notebook: str
    executed_notebook: str | None = None
    seconds: float | None = None
    time_utc: str | None = None
    host: str | None = None
    other: dict = field(default_factory=dict)


@dataclass(frozen=True)
class FailureMarker(Record):
    """failed.json: where the model's task failed and why (a failure before any notebook ran
    names "(before 01_generate)" and no cell)."""

    WHAT = "a model's failure marker"
    WRITTEN_WHEN_SET = ("executed_notebook",)

    model: str
    notebook: str
    cell: int | None = None
    reason: str | None = None
    executed_notebook: str | None = None
    log: str | None = None
    time_utc: str | None = None
    host: str | None = None
    other: dict = field(default_factory=dict)


@dataclass(frozen=True)
class InterruptedMarker(Record):
    """interrupted.json: the task stopped at Slurm's time-limit warning, in this notebook."""

    WHAT = "a model's interruption marker"

    model: str
    notebook: str
    reason: str | None = None
    time_utc: str | None = None
    host: str | None = None
    other: dict = field(default_factory=dict)


@dataclass(frozen=True)
class AnalysisMarker(Record):
    """analysis.json: how the sweep's last analyses ended and over which models."""

    WHAT = "the sweep's analysis marker"
    WRITTEN_WHEN_SET = ("report", "reason", "models")

    state: AnalysisStatus
    report: str | None = None  # the landing page, when done
    reason: str | None = None  # why they failed
    models: list[str] | None = None
    time_utc: str | None = None
    other: dict = field(default_factory=dict)
