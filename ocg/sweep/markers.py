"""What a sweep writes about its models and its analyses (ocg/core/layout.py's SweepFolder says where),
as records like the run card (ocg/records/): fields declared once, checked when read back.

A task's environment keys (SLURM_JOB_ID, ...) are kept verbatim beside the fields (`other`)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Strict

from ..records import RecordModel, Vocabulary


class AnalysisStatus(Vocabulary):
    """How the sweep's last analyses ended (analysis.json's `state`)."""

    DONE = "done"
    FAILED = "failed"


class DoneMarker(RecordModel):
    """`<notebook>.done`: the model's notebook finished (only its presence is read)."""

    WHAT: ClassVar[str] = "a notebook's completion marker"

    model: str
    notebook: str
    executed_notebook: str | None = None
    seconds: int | float | None = None
    time_utc: str | None = None
    host: str | None = None


class FailureMarker(RecordModel):
    """failed.json: where the model's task failed and why (a failure before any notebook ran
    names "(before 01_generate)" and no cell)."""

    WHAT: ClassVar[str] = "a model's failure marker"
    WRITTEN_WHEN_SET: ClassVar[tuple[str, ...]] = ("executed_notebook",)

    model: str
    notebook: str
    cell: int | None = None
    reason: str | None = None
    executed_notebook: str | None = None
    log: str | None = None
    time_utc: str | None = None
    host: str | None = None


class InterruptedMarker(RecordModel):
    """interrupted.json: the task stopped at Slurm's time-limit warning, in this notebook."""

    WHAT: ClassVar[str] = "a model's interruption marker"

    model: str
    notebook: str
    reason: str | None = None
    time_utc: str | None = None
    host: str | None = None


class AnalysisMarker(RecordModel):
    """analysis.json: how the sweep's last analyses ended and over which models."""

    WHAT: ClassVar[str] = "the sweep's analysis marker"
    WRITTEN_WHEN_SET: ClassVar[tuple[str, ...]] = ("report", "reason", "models")

    state: Annotated[AnalysisStatus, Strict(False)]
    report: str | None = None  # the landing page, when done
    reason: str | None = None  # why they failed
    models: list[Any] | None = None
    time_utc: str | None = None
