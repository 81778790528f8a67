"""The three records ocg keeps: a model's run card, a score set's signature, a report's state."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from .base import VERSION_KEY, Record, ReportStatus, RunStatus


@dataclass(frozen=True)
class RunCard(Record):
    """What a model's generations folder was asked (instances per condition, how they were
    selected), with which settings, and how each run that filled it went."""

    WHAT, FORMAT_VERSION = "a run card", 1
    WRITTEN_WHEN_SET = ("checked_utc", "records", "sampling", "constrained")

    model: str | None = None
    status: RunStatus = RunStatus.UNKNOWN
    spec: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    instances: dict[str, str] = field(default_factory=dict)  # condition: ids sha256
    # condition: subset_k, dataset, template_ids (+ permutations, permutation_seed, permutation_rule when sampled)
    selection: dict[str, dict] = field(default_factory=dict)
    backend: dict = field(default_factory=dict)
    provenance: dict | None = None
    runs: list[dict] = field(default_factory=list)  # each with its `status` (a RunStatus)
    checked_utc: str | None = None  # when a run found everything asked already on disk
    records: dict[str, dict] | None = None  # condition: asked / present / missing / foreign
    # repeated samples (absent for greedy runs): samples, temperature, top_p, seeds, seeding rule
    sampling: dict | None = None
    # constrained conditions (absent without one): condition: library, lexicon, rule, grammar sha256s
    constrained: dict | None = None
    other: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> RunCard:
        card = super().from_json(data, where)
        return replace(
            card,
            runs=[
                {
                    **r,
                    "status": RunStatus.read(r["status"], f"{where or cls.WHAT}: runs[{i}].status"),
                }
                if isinstance(r, dict) and r.get("status") is not None
                else r
                for i, r in enumerate(card.runs)
            ],
        )

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


@dataclass(frozen=True)
class Signature(Record):
    """How a score set was computed: per family, its key (what its values depend on) and its
    block (how they were computed, or why they are missing); the generations' completeness;
    and the checksums of the tables written with it (which make it the set's completeness marker).

    signature.json holds the fields before `families`, then one block per family scored (named
    by `metrics`), then the fields after it."""

    WHAT, FORMAT_VERSION = "a scoring signature", 1
    DERIVED = ("families",)

    metrics: list[str] = field(default_factory=list)
    inputs_sha256: str | None = None
    generations: str | None = None  # the generations folder scored
    failed_answers: str | None = None
    metric_keys: dict[str, dict] = field(default_factory=dict)
    completeness: dict | None = None  # ocg/generation/answer_store/completeness.py's block
    code_sha256: dict[str, str] = field(default_factory=dict)
    flags_version: int | None = None  # the answer flags' definitions (ocg/metrics/degenerate.py)
    families: dict[str, dict] = field(
        default_factory=dict
    )  # stored as top-level keys, one per metric
    recomputed: list[str] | None = None
    reused: list[str] | None = None
    timings_s: dict[str, float] | None = None
    seconds: float | None = None
    config: dict | None = None
    provenance: dict | None = None
    files: dict[str, dict] | None = None  # table file name: bytes, sha256
    other: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> Signature:
        data = cls.checked(data, where or cls.WHAT)
        families = {m: data[m] for m in data.get("metrics") or [] if isinstance(data.get(m), dict)}
        sig = super().from_json({k: v for k, v in data.items() if k not in families}, where)
        return replace(sig, families=families)

    def to_json(self) -> dict:
        keys = list(self.json_types())  # in field order: those before `families`, then those after
        cut = [f.name for f in fields(self)].index("families")
        written = lambda part: {k: getattr(self, k) for k in part if getattr(self, k) is not None}  # noqa: E731
        return {
            VERSION_KEY: self.FORMAT_VERSION,
            **written(keys[:cut]),
            **self.families,
            **written(keys[cut:]),
            **self.other,
        }

    def family(self, name: str) -> dict:
        """The block of one scoring family ({} when it was not scored)."""
        return self.families.get(name, {})

    def status(self, name: str) -> str:
        """ok, or missing (a neural family without its checkpoint or model)."""
        return self.family(name).get("status", "ok")


@dataclass(frozen=True)
class ReportStamp(Record):
    """How a report's last run stands (report.json, ocg/jobs/staging.py): who builds it and
    since when; how it ended (the notebooks finished, or why it failed)."""

    WHAT, FORMAT_VERSION = "a report's state", 1
    WRITTEN_WHEN_SET = ("pid", "host", "started_utc", "reason", "report", "notebooks", "ended_utc")

    state: ReportStatus
    pid: int | None = None
    host: str | None = None
    started_utc: str | None = None
    reason: str | None = None  # why the run failed
    report: str | None = None  # a sweep's landing page
    notebooks: list[str] | None = None  # those finished (ocg report)
    ended_utc: str | None = None
    other: dict = field(default_factory=dict)
