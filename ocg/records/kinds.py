"""The three records ocg keeps: a model's run card, a score set's signature, a report's state."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, Strict, model_validator

from .model import VERSION_KEY, RecordModel, Vocabulary


class RunStatus(Vocabulary):
    """How a model's generation went: the run card's `status`, and each of its `runs`."""

    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # killed, or a run still marked running whose process is gone
    UNKNOWN = "unknown"  # a card from before the status was recorded


class ReportStatus(Vocabulary):
    """How a report's last run stands (report.json's `state`)."""

    BUILDING = "building"
    DONE = "done"
    FAILED = "failed"


Number = int | float  # a JSON number, kept as written (3 stays 3)


class RunCard(RecordModel):
    """What a model's generations folder was asked (instances per condition, how they were
    selected), with which settings, and how each run that filled it went."""

    WHAT: ClassVar[str] = "a run card"
    FORMAT_VERSION: ClassVar[int | None] = 1
    WRITTEN_WHEN_SET: ClassVar[tuple[str, ...]] = (
        "checked_utc",
        "records",
        "sampling",
        "constrained",
    )

    model: str | None = None
    status: Annotated[RunStatus, Strict(False)] = RunStatus.UNKNOWN
    spec: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    instances: dict[str, Any] = Field(default_factory=dict)  # condition: ids sha256
    # condition: subset_k, dataset, template_ids (+ permutations, permutation_seed, permutation_rule when sampled)
    selection: dict[str, Any] = Field(default_factory=dict)
    backend: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, Any] | None = None
    runs: list[Any] = Field(default_factory=list)  # each with its `status` (a RunStatus)
    checked_utc: str | None = None  # when a run found everything asked already on disk
    records: dict[str, Any] | None = None  # condition: asked / present / missing / foreign
    # repeated samples (absent for greedy runs): samples, temperature, top_p, seeds, seeding rule
    sampling: dict[str, Any] | None = None
    # constrained conditions (absent without one): condition: library, lexicon, rule, grammar sha256s
    constrained: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> RunCard:
        card = super().from_json(data, where)
        runs = [
            {**r, "status": RunStatus.read(r["status"], f"{where or cls.WHAT}: runs[{i}].status")}
            if isinstance(r, dict) and r.get("status") is not None
            else r
            for i, r in enumerate(card.runs)
        ]
        return card.model_copy(update={"runs": runs})

    @property
    def model_id(self) -> str | None:
        return self.settings.get("id")

    @property
    def revision(self) -> str | None:
        """The revision the weights were loaded at (None until they were)."""
        return self.settings.get("resolved_revision")

    @property
    def batch_size_auto(self) -> dict | None:
        """How `batch_size: auto` became the planned size (the estimate's figures, or the size
        resumed from this card), as the backend block records it; None: the entry named one."""
        return self.backend.get("batch_size_auto")

    @property
    def batch_invariance(self) -> dict | None:
        """The latest run's batch-1 check: checked, differ, share_differ, instances_differ..."""
        return next(
            (r["batch_invariance"] for r in reversed(self.runs) if r.get("batch_invariance")), None
        )

    def selection_of(self, condition: str) -> dict | None:
        """How the instance set of `condition` was chosen: recorded per condition, else the last
        run that asked for it (cards written before selections were recorded)."""
        if condition in self.selection:
            return self.selection[condition]
        for run in reversed(self.runs):
            if condition in run.get("conditions", []):
                return {
                    **{k: run.get(k) for k in ("subset_k", "dataset", "template_ids")},
                    **{k: run[k] for k in ("permutations", "permutation_seed") if k in run},
                }
        return None


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
