"""Sections of the landing page that show a notebook's saved tables: Table 1 with its caveats
(the headline), the sensitivity view (notebook 03) and the forced order (notebook 12). Each
gives the data its part of templates/sections.html shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..analysis.paper_tables import summary_medians, wide
from ..analysis.pos_tagging import never_tagged
from ..analysis.skew import self_scored_note
from ..core.files import read_table
from ..core.layout import ReportFolder
from ..core.notebook_names import MAIN_RESULTS
from ..metrics.registry import label
from ..results.scores import Scores
from . import caveats
from . import medians as site_medians
from .explain import (
    LegendItem,
    MissingReasons,
    Unreadable,
    legend,
    missing_reasons,
    notebook_link,
)
from .judge_note import judge_counts
from .methods_page import methods_link
from .quality import QUALITY_ID, Quality, breakable, split, split_missing
from .render import Link


@dataclass(frozen=True)
class UntaggedConcept:
    """A concept of Table 1's sets that spaCy never tags with the asked part of speech."""

    concept: str
    pos: str
    matched: int
    model: str = ""  # whose answers matched it `matched` times and never tagged it so


@dataclass(frozen=True)
class Headline:
    """Table 1, ours beside the paper's, with its caveats: the paper's eight columns; the quality
    columns ocg adds in a panel of their own (`quality`, site/quality.py)."""

    ours: pd.DataFrame
    dominated: list[tuple[str, float, float]]  # (model, perplexity mean, its median): marked ‡
    ppl_over: int  # ‡: a mean over this many medians
    pooled: bool  # the medians pooled over every answer (else per template, then over templates)
    contradicted: list[tuple[str, str, float, float]]  # (model, metric, mean Δ, median Δ)
    self_scored: str  # which metrics a compared model scored itself (analysis/skew.py)
    copy_marks: caveats.CopyMarkNote | None
    copy_share: caveats.CopyShare | None
    no_text: caveats.NoText | None  # answers with no text, per model and condition
    basis: caveats.Table1Basis | None
    paper: pd.DataFrame | None  # the paper's numbers for the models it has
    notebook: Link
    missing: MissingReasons
    legend: list[LegendItem]
    method: Link
    quality: Quality | None  # the quality columns, their PoS and judge notes among their caveats


def _labelled(table: pd.DataFrame) -> pd.DataFrame:
    table.columns = pd.MultiIndex.from_tuples(
        [(label(m), "" if k in ("value", "paper") else "Δ") for m, k in table.columns]
    )
    table.index.name = None
    return table


def headline(report_dir: Path, scores: Scores, scorers: dict | None = None) -> Headline | None:
    """Table 1, ours beside the paper's, with its caveats: the perplexity and SLOR medians (pooled,
    from table1.csv; a report saved before them: per template, then over templates), the median Δ
    beside a mean Δ it contradicts, the copy marks and share, what each row stands on, which
    metrics a compared model scored (`scorers`, analysis/skew.py), and why a model has no row
    (None: Table 1 was not computed in this report)."""
    path = ReportFolder(report_dir).table("table1")
    if not path.exists():
        return None
    t1, summary = read_table(path), scores.summary
    ours = _labelled(wide(t1, "model", "value", "delta_vs_original_commongen"))
    medians = {m: v[1] for m, v in caveats.ppl_medians(report_dir).items()} or summary_medians(
        summary, "ordered"
    )
    means = t1[t1["metric"] == "perplexity"].set_index("model")["value"]
    marks = caveats.dominated({m: (means[m], v) for m, v in medians.items() if m in means.index})
    paper = None
    if "paper_value" in t1 and t1["paper_value"].notna().any():
        known = t1[t1["paper_value"].notna()].rename(
            columns={"paper_value": "paper", "paper_delta": "paper Δ"}
        )
        paper = _labelled(wide(known, "model", "paper", "paper Δ"))
    pooled = site_medians.has_medians(t1)
    delta = "delta_vs_original_commongen"
    shown = (
        site_medians.mark(ours, t1, delta)
        if pooled
        else caveats.mark_slor(
            caveats.mark_perplexity(ours, medians), summary_medians(summary, "ordered", "slor")
        )
    )
    table, extra = split(caveats.mark_copies(shown, summary))
    missing, missing_extra = split_missing(
        missing_reasons(summary, scores.signatures) if len(summary) else MissingReasons([], [])
    )
    scorers = scorers or {}
    metrics = list(t1["metric"].unique())
    extra_labels = {c[0] for c in extra.columns}
    untagged = [
        UntaggedConcept(r.concept, r.pos, int(r.matched), r.model)
        for r in never_tagged(summary).itertuples()
    ]
    judges = judge_counts(summary, scores.signatures) if len(summary) else []
    quality = (
        Quality(
            table=breakable(extra),
            table_id=QUALITY_ID,
            pos_untagged=untagged,
            self_scored=self_scored_note(
                {m: who for m, who in scorers.items() if label(m) in extra_labels}
            ),
            judges=judges,
            missing=missing_extra,
            legend=legend([m for m in metrics if label(m) in extra_labels]),
            method=methods_link(report_dir, "Metrics"),
        )
        if len(extra.columns)
        else None
    )
    return Headline(
        ours=breakable(table),
        dominated=site_medians.dominated(t1)
        if pooled
        else [(m, mean, median) for m, (mean, median) in marks.items()],
        ppl_over=caveats.PPL_MEAN_OVER_MEDIAN,
        pooled=pooled,
        contradicted=site_medians.contradicted(t1, delta) if pooled else [],
        self_scored=self_scored_note(
            {m: who for m, who in scorers.items() if label(m) not in extra_labels}
        ),
        copy_marks=caveats.copy_mark_note(summary, report_dir),
        copy_share=caveats.copy_share(summary),
        no_text=caveats.no_text(summary),
        basis=caveats.table1_basis(report_dir, summary),
        paper=paper,
        notebook=notebook_link(report_dir, MAIN_RESULTS),
        missing=missing,
        legend=legend([m for m in metrics if label(m) not in extra_labels]),
        method=methods_link(report_dir, "Metrics"),
        quality=quality,
    )


@dataclass(frozen=True)
class Sensitivity:
    """Table 1 under each open choice (notebook 03): the largest shifts, and one table per part
    ("coverage", "list copies", "perplexity", "slor"; None where that part was not scored)."""

    method: Link
    shifts: list[str]
    views: list[tuple[str, pd.DataFrame | None]]


def sensitivity(report_dir: Path) -> Sensitivity | None:
    """Table 1 under each matching rule, order reading and perplexity average, and without the
    list copies (notebook 03); None where it was not computed."""
    from ..analysis.sensitivity import largest_shifts, wide

    path = ReportFolder(report_dir).table("table1_sensitivity")
    if not path.exists():
        return None
    long = read_table(path)
    views = [(part, wide(long, part)) for part in ("coverage", "copies", "perplexity", "slor")]
    return Sensitivity(
        methods_link(report_dir, "Analyses"),
        list(largest_shifts(long)),
        [
            ("list copies" if part == "copies" else part, None if t.empty else t)
            for part, t in views
        ],
    )


def _read(path: Path) -> pd.DataFrame:
    return read_table(path) if path.exists() else pd.DataFrame()


@dataclass(frozen=True)
class ForcedPart:
    """One of notebook 12's tables on the page: `kind` ("outcomes", "examples" or "pattern"), the
    table, its CSV and its legend; or why it cannot be shown."""

    kind: str = ""
    table: pd.DataFrame | None = None
    csv: str = ""
    legend: list[LegendItem] = field(default_factory=list)
    unreadable: Unreadable | None = None

    @property
    def table_id(self) -> str:
        """Its <table id> on the page: the CSV's name, '-' for '_' (forced-order)."""
        return Path(self.csv).stem.replace("_", "-")


@dataclass(frozen=True)
class Forced:
    """Forcing the order (notebook 12): its parts, the reasons an answer is not in order (`why`)
    and the ‡ threshold of a perplexity mean over its median."""

    parts: list[ForcedPart]
    why: dict[str, str]
    ppl_over: int
    notebook: Link
    method: Link


_FORCED_KINDS = {
    "forced_order_outcomes": "outcomes",
    "forced_order_examples": "examples",
    "forced_order": "pattern",
}


def forced(report_dir: Path) -> Forced | None:
    """Notebook 12: how far forcing the order goes and at what cost first (w/ order, Ordered Rate,
    the perplexity median beside its mean, list copies, answers cut), a few forced answers beside
    their `ordered` ones, then Table 4's pattern against `ordered` and `original`."""
    from ..analysis.forcing import PPL_MEAN_OVER_MEDIAN, WHY, cost_view, forced_medians, forced_wide
    from ..core.notebook_names import FORCING_ORDER
    from ..metrics.registry import metric

    report, parts = ReportFolder(report_dir), []
    outcome = pd.DataFrame()
    for name, kind in _FORCED_KINDS.items():
        path = report.table(name)
        csv = path.relative_to(report_dir).as_posix()
        try:
            long = _read(path)
            if long.empty:
                continue
            if kind == "outcomes":
                outcome = long
                parts.append(ForcedPart(kind, cost_view(long), csv))
            elif kind == "examples":
                parts.append(ForcedPart(kind, long.set_index("model"), csv))
            else:
                shown = forced_wide(long, None if "median" in long else forced_medians(outcome))
                shown.columns = pd.MultiIndex.from_tuples(
                    [(known.label if (known := metric(m)) else m, sub) for m, sub in shown.columns]
                )
                parts.append(ForcedPart(kind, shown, csv, legend(long["metric"].unique())))
        except (KeyError, ValueError, pd.errors.ParserError) as exc:
            parts.append(ForcedPart(unreadable=Unreadable.of(path, exc)))
    if not parts:
        return None
    return Forced(
        parts,
        dict(WHY),
        PPL_MEAN_OVER_MEDIAN,
        notebook_link(report_dir, FORCING_ORDER),
        methods_link(report_dir, "Forcing the order"),
    )
