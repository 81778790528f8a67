"""The caveats the landing page shows beside its numbers, as notebook 03 gives them: what
Table 1 stands on (concept sets, answers, a bootstrap interval or the small-sample mark), the
share of in-order answers that copy the concept list, a perplexity mean dominated by a few
answers (with the median beside it), and the answer-flag counts per condition, and what the batch-1 check shows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis.copies import COPY_SHARE_LEAD, copy_shares
from ..analysis.skew import PPL_MEAN_OVER_MEDIAN  # noqa: F401  one definition, read here
from ..core.errors import OcgInputError
from ..core.files import read_table
from ..core.layout import ModelGenerations, ReportFolder
from ..metrics.registry import label
from ..records import RunCard
from .methods_page import methods_link
from .render import Link


def _read(report_dir, name: str) -> pd.DataFrame:
    path = ReportFolder(report_dir).table(name)
    try:
        return read_table(path) if path.exists() else pd.DataFrame()
    except (ValueError, OcgInputError):  # a table that cannot be read costs only its caveat
        return pd.DataFrame()


def ppl_medians(report_dir) -> dict[str, tuple[float, float]]:
    """Per model: (mean, median) of its `ordered` perplexity: Table 1's mean, and the median over
    every answer, as Table 1 shows it (tables/table1_sensitivity.csv, notebook 03)."""
    from ..analysis.sensitivity import POOLED_MEDIAN

    sens = _read(report_dir, "table1_sensitivity")
    if sens.empty or "variant" not in sens:
        return {}
    rows = sens[(sens["metric"] == "perplexity") & (sens["variant"] == POOLED_MEDIAN)]
    return {r.model: (r.default, r.value) for r in rows.itertuples() if pd.notna(r.value)}


def dominated(medians: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """The models whose perplexity mean is over PPL_MEAN_OVER_MEDIAN x its median: marked ‡."""
    return {
        m: (mean, median)
        for m, (mean, median) in medians.items()
        if median > 0 and mean > PPL_MEAN_OVER_MEDIAN * median
    }


def mark_slor(table: pd.DataFrame, medians: dict) -> pd.DataFrame:
    """A table's SLOR values as text with the median beside each ({model: median}): a mean of
    fluency is read beside its median, as perplexity's is (no ‡: SLOR is a difference of logs)."""
    column = next(
        (c for c in table.columns if c[0] == label("slor") and c[1] in ("", "value")), None
    )
    if column is None or not medians:
        return table
    table = table.copy()
    table[column] = [
        "–" if pd.isna(v) else f"{v:.2f}" + (f" (median {medians[m]:.2f})" if m in medians else "")
        for m, v in zip(table.index, table[column])
    ]
    return table


def mark_perplexity(table: pd.DataFrame, medians: dict) -> pd.DataFrame:
    """A table's perplexity values as text with the median beside each ({model: median}):
    "1779.12 ‡ (median 67.10)", ‡ where the mean is over PPL_MEAN_OVER_MEDIAN x the median."""
    column = next(
        (c for c in table.columns if c[0] == label("perplexity") and c[1] in ("", "value")), None
    )
    if column is None or not medians:
        return table
    table = table.copy()
    med = medians
    table[column] = [
        "–"
        if pd.isna(v)
        else f"{v:.2f}"
        + (
            ""
            if m not in med
            else (" ‡" if med[m] > 0 and v > PPL_MEAN_OVER_MEDIAN * med[m] else "")
            + f" (median {med[m]:.2f})"
        )
        for m, v in zip(table.index, table[column])
    ]
    return table


SMALL = "small sample"


def _interval(row) -> tuple[str, str | None]:
    """('[51.20, 60.80] (95%, 24 prompts)', None), or the small-sample mark and what it rests on
    ('2 concept sets'), which the table says once (notebook 03, uncertainty.MIN_SETS)."""
    from ..analysis.uncertainty import interval_text, units

    unit, n = row.get("unit", "sets"), int(row.get("n", row["n_sets"]))
    if bool(row.get("small_sample", False)):
        return SMALL, units(n, unit)
    return interval_text(row["ci_low"], row["ci_high"], unit, n), None


@dataclass(frozen=True)
class Table1Basis:
    """What Table 1's rows stand on: `where` the intervals come from, and a row per model."""

    where: str
    method: Link
    table: pd.DataFrame


def table1_basis(report_dir, summary: pd.DataFrame) -> Table1Basis | None:
    """Per model: the concept sets and `ordered` answers Table 1 stands on, and each metric's
    bootstrap 95% interval or the small-sample mark (tables/table1_bootstrap_ci.csv)."""
    ordered = (
        summary[summary["condition"] == "ordered"] if "condition" in summary else pd.DataFrame()
    )
    if ordered.empty:
        return None
    cis = _read(report_dir, "table1_bootstrap_ci")
    answers = ordered.groupby("model")["n_answers"].sum()
    from ..analysis.uncertainty import MIN_SETS

    rows, metrics, few = [], [m for m in dict.fromkeys(cis["metric"])] if len(cis) else [], set()
    for model in answers.index:
        mine = cis[cis["model"] == model].set_index("metric") if len(cis) else pd.DataFrame()
        n_sets = int(mine["n_sets"].iloc[0]) if len(mine) else None
        cells = {
            label(m): _interval(mine.loc[m]) if m in mine.index else ("–", None) for m in metrics
        }
        few |= {on for _, on in cells.values() if on}
        rows.append(
            {
                "model": model,
                "concept sets": n_sets if n_sets is not None else "–",
                "answers (ordered)": int(answers[model]),
                **{k: text for k, (text, _) in cells.items()},
            }
        )
    table = pd.DataFrame(rows).set_index("model")
    small = (
        (
            f"“{SMALL}” ({'; '.join(sorted(few))} < {MIN_SETS}): under {MIN_SETS} units no interval is given, "
            "since a few resampled units give intervals too narrow to mean anything"
        )
        if few
        else ""
    )
    if few and metrics and (table[[label(m) for m in metrics]].isin([SMALL, "–"]).all().all()):
        table = table.drop(columns=[label(m) for m in metrics])  # said once, not in every cell
        where = f"no bootstrap interval for any metric: {small} (tables/table1_bootstrap_ci.csv)"
    elif len(cis):
        where = (
            "bootstrap 95% intervals, each with its resampling unit and n (tables/table1_bootstrap_ci.csv)"
            + (f"; {small}" if small else "")
        )
    else:
        where = "no bootstrap intervals in this report (notebook 03 computes them)"
    return Table1Basis(where, methods_link(report_dir, "Analyses"), table)


@dataclass(frozen=True)
class CopyShare:
    """The share of in-order answers that copy the concept list, per model (notebook 03)."""

    lead: str
    parts: list[str]


def copy_share(summary: pd.DataFrame) -> CopyShare | None:
    """copy_shares as one line of the landing page."""
    parts = copy_shares(summary)
    return CopyShare(COPY_SHARE_LEAD, parts) if parts else None


@dataclass(frozen=True)
class NoText:
    """Answers with no text to score (empty, or none could be extracted), per model and condition
    of Table 1: coverage counts each as an answer without the concepts, and the measures of a text
    (perplexity, SLOR, ...) have none, so a row of them reads 0.00 or "–" for want of answers."""

    parts: list[str]  # "m, ordered: 2 of 2 (100.0%: empty 2)"


def no_text(
    summary: pd.DataFrame, conditions: tuple[str, ...] = ("ordered", "original")
) -> NoText | None:
    """The answers without text of each model in `conditions` (Table 1's), where there are any."""
    if not {"n_answers", "n_empty", "n_failed"} <= set(summary) or not len(summary):
        return None
    shown = summary[summary["condition"].isin(conditions)]
    sums = shown.groupby(["model", "condition"], sort=True)[
        ["n_answers", "n_empty", "n_failed"]
    ].sum()
    parts = []
    for (model, condition), r in sums.iterrows():
        none = int(r.n_empty) + int(r.n_failed)
        if none:
            kinds = ", ".join(
                f"{what} {int(n)}"
                for what, n in (("empty", r.n_empty), ("none extracted", r.n_failed))
                if n
            )
            share = 100 * none / int(r.n_answers)
            parts.append(
                f"{model}, {condition}: {none} of {int(r.n_answers)} ({share:.1f}%: {kinds})"
            )
    return NoText(parts) if parts else None


COPY_MARK_SHARE = 25  # % of the answers a coverage value counts: above it, the cell is marked †
# the answers each coverage metric counts, of which copies are a part (copies are complete and in order)
_COUNTED = {
    "coverage_wo_order": "n_all_present",
    "coverage_w_order": "n_in_order",
    "ordered_rate": "n_in_order",
}


def copy_marks(summary: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """{(model, condition, metric): % of the answers it counts that copy the list}, for the
    coverage metrics where that share is over COPY_MARK_SHARE."""
    if not {"n_copies_list", "n_in_order", "n_all_present"} <= set(summary):
        return {}
    sums = summary.groupby(["model", "condition"])[
        ["n_copies_list", "n_in_order", "n_all_present"]
    ].sum()
    out: dict[tuple[str, str, str], float] = {}
    for (model, condition), r in sums.iterrows():
        for name, counted in _COUNTED.items():
            share = 100 * r.n_copies_list / r[counted] if r[counted] else 0.0
            if share > COPY_MARK_SHARE:
                out[(model, condition, name)] = share
    return out


def mark_copies(table: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Table 1's coverage cells as text, "54.86 †" where over COPY_MARK_SHARE% of the answers the
    value counts copy the list (a Δ: where `ordered` or `original` does)."""
    marks = copy_marks(summary)
    if not marks:
        return table
    table = table.copy()
    for name in _COUNTED:
        for column in [c for c in table.columns if c[0] == label(name)]:
            sides = ("ordered",) if column[1] == "" else ("ordered", "original")
            table[column] = [
                ("–" if pd.isna(v) else f"{v:.2f}" if column[1] == "" else f"{v:+.2f}")
                + (" †" if any((m, c, name) in marks for c in sides) else "")
                for m, v in zip(table.index, table[column])
            ]
    return table


@dataclass(frozen=True)
class CopyMarkNote:
    """What † says under Table 1: over `share`% of the answers a value counts copy the list, with
    each marked share ('m, ordered: w/ order 40%; ...')."""

    share: int
    shares: str
    method: Link


def copy_mark_note(summary: pd.DataFrame, report_dir) -> CopyMarkNote | None:
    """What † says, with each marked share, under Table 1."""
    marks = copy_marks(summary)
    marks = {
        k: v for k, v in marks.items() if k[1] in ("ordered", "original")
    }  # Table 1's two conditions
    if not marks:
        return None
    by: dict[tuple, list[str]] = {}
    for (m, c, n), v in marks.items():
        by.setdefault((m, c), []).append(f"{label(n)} {v:.0f}%")
    shares = "; ".join(f"{m}, {c}: {', '.join(parts)}" for (m, c), parts in by.items())
    return CopyMarkNote(
        COPY_MARK_SHARE, shares, methods_link(report_dir, "Answers that copy the list")
    )


def list_copies(summary_rows: pd.DataFrame) -> str:
    """'ordered 40 (bare 20); original 3 (bare 0)': one model's copies_list and bare_list per condition."""
    if not {"n_copies_list", "n_in_order"} <= set(summary_rows) or summary_rows.empty:
        return "–"  # coverage not scored: no tokens to read the flags from
    by = summary_rows.groupby("condition", sort=False)[
        ["n_answers", "n_copies_list", "n_bare_list"]
    ].sum()
    return "; ".join(
        f"{c} {int(r.n_copies_list)}/{int(r.n_answers)} (bare {int(r.n_bare_list)})"
        for c, r in by.iterrows()
    )


@dataclass(frozen=True)
class BatchLine:
    """What the batch-1 column of the Models table shows, and for sampled models what it cannot."""

    sampled: bool
    decoding: Link
    samples: Link


def batch_line(report_dir: Path, models, generations_root) -> BatchLine:
    """What the batch-1 column shows: the greedy reading, and for sampled models what it cannot show."""
    cards = [ModelGenerations.of(m, generations_root).run_card for m in models]
    return BatchLine(
        any(_sampled(p) for p in cards),
        methods_link(report_dir, "Decoding"),
        methods_link(report_dir, "Repeated samples and pass@k"),
    )


def _sampled(card_path) -> bool:
    try:
        return card_path.exists() and bool(RunCard.read(card_path).sampling)
    except OcgInputError:
        return False
