"""Two of the records ocg keeps: a score set's signature and a report's state (a model's run card:
records/card.py)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, Strict, model_validator

from .model import VERSION_KEY, Number, RecordModel, Vocabulary


class ReportStatus(Vocabulary):
    """How a report's last run stands (report.json's `state`)."""

    BUILDING = "building"
    DONE = "done"
    FAILED = "failed"


class Signature(RecordModel):
    """How a score set was computed: per family, its key (what its values depend on) and its
    block (how they were computed, or why they are missing); the generations' completeness;
    and the checksums of the tables written with it (which make it the set's completeness marker).

    signature.json holds the fields before `families`, then one block per family scored (named
    by `metrics`), then the fields after it."""

    WHAT: ClassVar[str] = "a scoring signature"
    FORMAT_VERSION: ClassVar[int | None] = 1

    metrics: list[Any] = Field(default_factory=list)
    inputs_sha256: str | None = None
    generations: str | None = None  # the generations folder scored
    failed_answers: str | None = None
    metric_keys: dict[str, Any] = Field(default_factory=dict)
    completeness: dict[str, Any] | None = (
        None  # ocg/generation/answer_store/completeness.py's block
    )
    code_sha256: dict[str, Any] = Field(default_factory=dict)
    flags_version: int | None = None  # the answer flags' definitions (ocg/metrics/degenerate.py)
    families: dict[str, Any] = Field(
        default_factory=dict
    )  # stored as top-level keys, one per metric
    recomputed: list[Any] | None = None
    reused: list[Any] | None = None
    timings_s: dict[str, Any] | None = None
    seconds: Number | None = None
    config: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None
    files: dict[str, Any] | None = None  # table file name: bytes, sha256

    @model_validator(mode="before")
    @classmethod
    def _families_lifted(cls, data: Any) -> Any:
        """The blocks stored as top-level keys (one per metric named) as `families`."""
        if not isinstance(data, dict) or "families" in data:
            return data
        metrics = data.get("metrics")
        named = metrics if isinstance(metrics, list) else []
        families = {
            m: data[m] for m in named if isinstance(m, str) and isinstance(data.get(m), dict)
        }
        return {**{k: v for k, v in data.items() if k not in families}, "families": families}

    def to_json(self) -> dict[str, Any]:
        names = list(type(self).model_fields)  # in field order: those before `families`, then after
        cut = names.index("families")
        written = lambda part: {k: getattr(self, k) for k in part if getattr(self, k) is not None}  # noqa: E731
        return {
            VERSION_KEY: self.FORMAT_VERSION,
            **written(names[:cut]),
            **self.families,
            **written(names[cut + 1 :]),
            **self.other,
        }

    def family(self, name: str) -> dict:
        """The block of one scoring family ({} when it was not scored)."""
        return self.families.get(name, {})

    def status(self, name: str) -> str:
        """ok, or missing (a neural family without its checkpoint or model)."""
        return self.family(name).get("status", "ok")


class ReportStamp(RecordModel):
    """How a report's last run stands (report.json, ocg/jobs/staging.py): who builds it and
    since when; how it ended (the notebooks finished, or why it failed)."""

    WHAT: ClassVar[str] = "a report's state"
    FORMAT_VERSION: ClassVar[int | None] = 1
    WRITTEN_WHEN_SET: ClassVar[tuple[str, ...]] = (
        "pid",
        "host",
        "started_utc",
        "reason",
        "report",
        "notebooks",
        "ended_utc",
    )

    state: Annotated[ReportStatus, Strict(False)]
    pid: int | None = None
    host: str | None = None
    started_utc: str | None = None
    reason: str | None = None  # why the run failed
    report: str | None = None  # a sweep's landing page
    notebooks: list[Any] | None = None  # those finished (ocg report)
    ended_utc: str | None = None
