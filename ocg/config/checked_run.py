"""A run or sweep file once checked completely (ocg/jobs/run_checks.py): the object the report's
pipeline, the notebook plan, a sweep's tasks and the report pages read, by attribute."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from ..core.layout import SweepFolder
from .models_file import ModelEntry
from .run_file import RunFile
from .scoring_file import ScoringFile
from .sweep_file import SweepFile

File = TypeVar("File", bound=RunFile)  # RunFile, or SweepFile for a sweep


@dataclass(frozen=True)
class CheckedRun(Generic[File]):
    """A run file (or a sweep file: CheckedRun[SweepFile]), with what its checks resolved.

    `file`: the file's own model, its defaults filled in by the model, `models_file` and
    `outputs` made absolute (models_file stays None where the file names none), `sampling` with
    top_p filled in, `scoring` with the judge's models file where the run names both;
    `entries`: the models file's entries for the models it names; `models_file`: the models file
    they come from (params/models.yaml unless it names one); `scoring`: the scoring settings it
    scores with (params/scoring.yaml under its `scoring:` overrides); `path`: the file, absolute.
    """

    file: File
    entries: Mapping[str, ModelEntry]
    models_file: Path
    scoring: ScoringFile
    path: Path

    @property
    def folder(self) -> SweepFolder:
        """A sweep's outputs folder (its `outputs` and `name`; a sweep names its outputs)."""
        if not isinstance(self.file, SweepFile):
            raise TypeError(f"{self.path} was checked as a run file; only a sweep has a folder")
        if self.file.outputs is None:  # refused when the sweep file is read (ocg/sweep/config.py)
            raise TypeError(f"{self.path} names no outputs folder")
        return SweepFolder(Path(self.file.outputs), self.file.name)
