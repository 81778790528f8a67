"""What the landing page says beside its numbers: a legend of the metrics (from their
declarations, ocg/metrics/registry.py), the reason beside each missing value, which model
computed perplexity, the paper's other tables with a link to the notebook and method behind
each, and docs/METHODS.md rendered into the report, with a table of
contents and an anchor per section that every "docs/METHODS.md, '<section>'" link lands on."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..analysis.paper_tables import wide
from ..core.errors import OcgInputError
from ..core.files import read_table
from ..core.layout import ExecutedNotebook, ReportFolder
from ..core.notebook_names import (
    POS_PATTERNS,
    PRIMING,
    REASONING_MODELS,
    TEMPLATES,
)
from ..metrics.registry import FAMILIES, metric
from .methods_page import methods_link
from .render import Link

# The paper's tables beyond Table 1: (table, title, notebook, METHODS section, rows, beside each value)
OTHER_TABLES = (
    (
        "table2",
        "Table 2: by the concepts' parts of speech (mean and SD over models)",
        POS_PATTERNS,
        "Analyses",
        "pos_pattern",
        "mean_over_llms",
        "sd_over_llms",
    ),
    (
        "table3",
        "Table 3: by template, with and without “in the specified order” (mean and SD over models)",
        TEMPLATES,
        "Analyses",
        ["template_id", "condition"],
        "mean_over_llms",
        "sd_over_llms",
    ),
    (
        "table4",
        "Table 4: one-shot priming (Δ: one-shot minus zero-shot)",
        PRIMING,
        "Analyses",
        "model",
        "value",
        "delta_vs_zero_shot_ordered",
    ),
    (
        "table7",
        "Table 7: reasoning models beside their base models (template 0)",
        REASONING_MODELS,
        "Analyses",
        ["pair", "role", "model"],
        "value",
        "delta_vs_original_commongen",
    ),
)


@dataclass(frozen=True)
class Unreadable:
    """A saved table the page cannot show (edited by hand, an older format): its file and why."""

    file: str
    error: str

    @classmethod
    def of(cls, path: Path, exc: Exception) -> Unreadable:
        return cls(path.name, f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class LegendItem:
    """One metric shown: its label, what it is, its unit and which way is better."""

    label: str
    what: str
    unit: str
    higher_is_better: bool


def legend(metric_names) -> list[LegendItem]:
    """One line per metric shown (those ocg declares; a name it does not know has none)."""
    return [
        LegendItem(m.label, m.what, m.unit, m.higher_is_better)
        for m in map(metric, metric_names)
        if m is not None
    ]


@dataclass(frozen=True)
class MissingValue:
    """A metric without a value for these models, and why (a checkpoint not here)."""

    label: str
    models: list[str]
    reason: str


@dataclass(frozen=True)
class PerplexityFrom:
    """Models whose perplexity another model than the paper's computed."""

    models: list[str]
    used: str
    requested: str


@dataclass(frozen=True)
class MissingReasons:
    missing: list[MissingValue]
    perplexity_from: list[PerplexityFrom]


def missing_reasons(summary: pd.DataFrame, signatures: dict) -> MissingReasons:
    """Why a metric has no value (a checkpoint not here), and which model gave perplexity."""
    missing = []
    for column in sorted(c for c in summary.columns if c.endswith("_missing_reason")):
        name = column.removesuffix("_missing_reason")
        reasons = summary.dropna(subset=[column]).groupby(column)["model"].unique()
        for reason, models in reasons.items():
            family = FAMILIES.get(name)  # a family of several metrics (semantic: Vendi and Cosine)
            label = (
                found.label
                if (found := metric(name))
                else " and ".join(m.label for m in family.metrics)
                if family and family.metrics
                else name
            )
            missing.append(MissingValue(label, sorted(models), str(reason)))
    used: dict[tuple[str, str], list[str]] = {}
    for model, sig in signatures.items():
        block = sig.family("perplexity")
        if block.get("used") and block.get("used") != block.get("requested"):
            used.setdefault((block["used"], block["requested"]), []).append(model)
    return MissingReasons(
        missing,
        [
            PerplexityFrom(sorted(models), model_used, requested)
            for (model_used, requested), models in used.items()
        ],
    )


def notebook_link(report_dir: Path, notebook: str, text: str | None = None) -> Link:
    """A link to a notebook's results page in the report (its whole page where that is all there is)."""
    pages = ExecutedNotebook(report_dir, notebook)
    target = pages.results_page if pages.results_page.exists() else pages.page
    return Link(target.name, text or "notebook " + notebook)


def table_address(path: Path, report_dir: Path) -> str:
    """A saved table's address from the landing page."""
    return path.relative_to(report_dir).as_posix()


@dataclass(frozen=True)
class OtherTable:
    """One of the paper's other tables as this report computed it, or why it cannot be shown."""

    title: str
    unreadable: Unreadable | None = None
    notebook: Link | None = None
    method: Link | None = None
    csv: str = ""
    table: pd.DataFrame | None = None
    run_note: str = ""  # the run file's note on this table
    left_out: str = ""  # the reference entries left out of its mean over models (table2, table3)
    self_scored: str = ""  # a compared model scored some of its metrics (analysis/skew.py)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (a metric's label, why no value)
    legend: list[LegendItem] = field(default_factory=list)

    @property
    def table_id(self) -> str:
        """Its <table id> on the page: the CSV's name (tables/table4.csv: table4)."""
        return Path(self.csv).stem


def other_tables(
    report_dir: Path,
    run_notes: dict | None = None,
    medians: dict | None = None,
    slor_medians: dict | None = None,
    *,
    self_scored: str = "",
    left_out: str = "",
) -> list[OtherTable]:
    """Tables 2, 3, 4 and 7 as this report computed them, each with its legend and sources, the
    run file's note on a table (`run_notes`: table7 -> the run's `table7_note`), and the
    perplexity and SLOR medians beside each mean (`medians`, `slor_medians`: table4 -> {model: median})."""
    from . import medians as site_medians
    from .caveats import mark_perplexity, mark_slor

    report, shown_tables = ReportFolder(report_dir), []
    for table, title, notebook, section, index, value, beside in OTHER_TABLES:
        path = report.table(table)
        if not path.exists():
            continue
        try:  # one table that cannot be read (edited by hand, an older format) costs only itself
            long = read_table(path)
            if long.empty:
                continue
            shown = wide(long, index, value, beside)
        except (KeyError, ValueError, OcgInputError) as exc:
            shown_tables.append(OtherTable(title, Unreadable.of(path, exc)))
            continue
        shown.columns = pd.MultiIndex.from_tuples(
            [(found.label if (found := metric(m)) else m, sub) for m, sub in shown.columns]
        )
        shown = (
            site_medians.mark(shown, long, beside)
            if site_medians.has_medians(long)
            else mark_slor(
                mark_perplexity(shown, (medians or {}).get(table, {})),
                (slor_medians or {}).get(table, {}),
            )
        )
        reasons = (
            long.dropna(subset=["missing_reason"]).groupby("metric")["missing_reason"].first()
            if "missing_reason" in long
            else {}
        )
        shown_tables.append(
            OtherTable(
                title,
                notebook=notebook_link(report_dir, notebook),
                method=methods_link(report_dir, section),
                csv=table_address(path, report_dir),
                table=shown,
                run_note=(run_notes or {}).get(table) or "",
                left_out=left_out if table in ("table2", "table3") else "",
                self_scored=self_scored if {"perplexity", "slor"} & set(long["metric"]) else "",
                missing=[
                    (found.label if (found := metric(m)) else str(m), str(r))
                    for m, r in dict(reasons).items()
                ],
                legend=legend(long["metric"].unique()),
            )
        )
    return shown_tables
