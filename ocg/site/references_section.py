"""The landing page's "Beside reference sentences" section (only when the run holds a reference
entry): ocg/analysis/references.py's rows on the `original` answers, saved as
tables/references.csv, with the reasons a metric is missing."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis.references import COLUMNS, REFERENCE_CONDITION, reference_rows
from ..analysis.report import save_table, sources
from ..analysis.uncertainty import MIN_SETS
from ..results.scores import Scores, load_scores
from . import methods_page
from .explain import MissingReasons, missing_reasons
from .render import Link


@dataclass(frozen=True)
class ReferenceRow:
    model: str
    reference: str  # the entry's `reference:` text, "" for a model under study
    label: str  # its short name: the text before its first parenthesis or colon
    cells: list[str]  # the metrics, formatted ("–" where missing)
    n_answers: int
    n_distinct: int
    n_sets: int


@dataclass(frozen=True)
class ReferencesSection:
    headers: tuple[str, ...]
    rows: list[ReferenceRow]
    missing: MissingReasons
    small_sample: bool
    min_sets: int
    method: Link
    csv: str


HEADERS = (
    "Coverage w/o order",
    "PoS-correct w/o order",
    "Non-word share",
    "SLOR median",
    "SLOR mean",
    "Perplexity median",
    "Perplexity mean",
    "Judge mean",
)
_METRICS = (
    ("coverage_wo_order", "{:.1%}"),
    ("pos_coverage_wo_order", "{:.1%}"),
    ("nonword_rate", "{:.1%}"),
    ("slor_median", "{:.2f}"),
    ("slor_mean", "{:.2f}"),
    ("perplexity_median", "{:.1f}"),
    ("perplexity_mean", "{:.1f}"),
    ("judge_mean", "{:.2f}"),
)


def _cell(value, fmt: str) -> str:
    return (
        "–"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else fmt.format(value)
    )


def _label(reference: str) -> str:
    """'CommonGen-Eval' of 'CommonGen-Eval (allenai/...): ...' (at most 40 characters)."""
    short = reference.split(" (")[0].split(":")[0].strip() or reference
    return short if len(short) <= 40 else short[:39] + "…"


# The metrics whose missing reason the section repeats (pBLEURT and the others are not in it).
_REASONS = ("judge", "perplexity", "slor", "nonword_rate", "pos_coverage_wo_order")


def references(
    report_dir: Path, run, scores: Scores, scored: list[str], scores_root
) -> ReferencesSection | None:
    """The section, or None when the run names no reference entry (or none was scored)."""
    refs = {
        name: str(entry.reference)
        for name, entry in run.entries.items()
        if getattr(entry, "reference", None)
    }
    if not any(m in refs for m in scored):
        return None
    order = [m for m in scored if m not in refs] + [m for m in scored if m in refs]
    answers = pd.concat(  # one model at a time, only the columns the rows need
        [
            load_scores(
                scores_root, [m], allow_mixed=True, tables=("answers",), allow_incomplete=True
            ).answers.reindex(columns=COLUMNS)
            for m in order
        ],
        ignore_index=True,
    )
    frame = reference_rows(answers, order, refs)
    paths = save_table(frame, "references", report_dir, meta=sources(scores))
    summary = scores.summary
    if "condition" in summary:
        summary = summary[summary["condition"] == REFERENCE_CONDITION]
    summary = summary.drop(
        columns=[
            c
            for c in summary.columns
            if c.endswith("_missing_reason") and c.removesuffix("_missing_reason") not in _REASONS
        ]
    )
    return ReferencesSection(
        headers=HEADERS,
        rows=[
            ReferenceRow(
                model=r["model"],
                reference=r["reference"],
                label=_label(r["reference"]),
                cells=[_cell(r[c], f) for c, f in _METRICS],
                n_answers=int(r["n_answers"]),
                n_distinct=int(r["n_distinct"]),
                n_sets=int(r["n_sets"]),
            )
            for r in frame.to_dict("records")
        ],
        missing=missing_reasons(summary, scores.signatures),
        small_sample=bool(len(frame)) and int(frame["n_sets"].min()) < MIN_SETS,
        min_sets=MIN_SETS,
        method=methods_page.methods_link(report_dir, "Reference rows"),
        csv=paths[-1].relative_to(report_dir).as_posix() if paths else "",
    )
