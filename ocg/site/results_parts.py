"""The pieces every block of results.json is built from (docs/DATA.md, “results.json”): a saved
table read back, its intervals' settings, an interval, a paired test, a per-answer median, what a
value averages over. Table 1's block (results_file.py) and those of Table 4 and the forced order
(results_comparisons.py) use the same ones, so one rule covers all (a small sample's bounds and
p-values null, each interval with its unit and n)."""

from __future__ import annotations

import pandas as pd

from ..core.files import read_json, read_table
from ..core.layout import ReportFolder
from ..metrics.registry import FAMILIES, metric, require


def _table(report: ReportFolder, name: str) -> pd.DataFrame | None:
    """A saved table; None where it is missing or has no rows (notebook 03 saves an empty paired
    test when no model ran both conditions: core.files.read_table reads it as no rows)."""
    path = report.table(name)
    table = read_table(path) if path.exists() else None
    return None if table is None or len(table.columns) == 0 else table


def _settings(report: ReportFolder, name: str) -> dict | None:
    path = report.table_provenance(name)
    return read_json(path).get("bootstrap") if path.exists() else None


def _count(summary: pd.DataFrame, name: str) -> tuple[int | None, str]:
    """What a metric's value averages over in `summary` (the rows of one model's condition):
    answers, groups, or a pooled metric's denominator (answers with every concept)."""
    m = require(name)  # the callers' rows are a metric's
    if m.pooled and f"n_{m.denominator}" in summary:
        return int(summary[f"n_{m.denominator}"].sum()), f"answers where {m.denominator}"
    if FAMILIES[m.family].level == "groups":
        return int(summary["n_groups"].sum()), "groups"
    unscored = (
        summary["n_ppl_unscored"].sum()
        if m.family in ("perplexity", "slor") and "n_ppl_unscored" in summary
        else 0
    )  # SLOR has a value exactly where perplexity has
    return int(summary["n_answers"].sum() - unscored), "answers"


def value_reason(
    name: str, s: pd.DataFrame, condition: str, families: set[str] | None = None
) -> str:
    """Why a metric's value is null for a model in `condition` (`s`: the summary's rows of that
    model and condition; `families`: those its scoring signature holds, None where not known):
    not declared, not scored, the scorer's own reason, a pooled share of nothing (0/0), or no
    answer with a value."""
    m = metric(name)
    if m is None:
        return "the metric is not declared in the process that wrote this file"
    pooled_n = f"n_{m.denominator}" if m.pooled else None
    if (families is not None and m.family not in families) or (
        pooled_n is not None and len(s) and pooled_n not in s
    ):
        return (
            f"not scored for this model (its scoring family `{m.family}` is not in the scoring "
            "signature)"
        )
    if not len(s):
        return f"the scores' summary holds no `{condition}` rows of this model"
    if f"{name}_missing_reason" in s and s[f"{name}_missing_reason"].notna().any():
        return str(s[f"{name}_missing_reason"].dropna().iloc[0])
    answers = int(s["n_answers"].sum()) if "n_answers" in s else 0
    if pooled_n is not None and int(s[pooled_n].sum()) == 0:
        return (
            f"0 of {answers} answers in `{condition}` have {m.denominator} (every concept): "
            f"{m.label} is a share of those, 0/0, so no value (not 0)"
        )
    return f"no answer in `{condition}` has a value of {m.label} (of {answers} answers)"


def null_count(name: str, s: pd.DataFrame, value) -> tuple[int | None, str | None]:
    """What a metric's value averages over (`_count`); for a null value, nothing (0, None),
    except a pooled share's empty denominator, which is said as it is (0 answers where ...)."""
    m = metric(name)
    n, n_of = _count(s, name) if len(s) and m else (None, "")
    if pd.isna(value) and not (m is not None and m.pooled and n == 0 and n_of):
        return 0, None
    return n, n_of


def _by_key(table: pd.DataFrame | None) -> dict[tuple[str, str], dict]:
    return {} if table is None else {(r["model"], r["metric"]): r for r in table.to_dict("records")}


def _interval(row: dict | None, method: dict | None) -> dict | None:
    """An interval with what it resampled (a report from before units: concept sets); on a small
    sample (under uncertainty.MIN_SETS units) no bounds, as the page gives none."""
    return None if row is None else _interval_of(row, method)


def _interval_of(row: dict, method: dict | None) -> dict:
    small = bool(row.get("small_sample", False))
    return {
        "low": None if small else row["ci_low"],
        "high": None if small else row["ci_high"],
        "level": (method or {}).get("level", 0.95),
        "unit": row.get("unit", "sets"),
        "n": row.get("n", row.get("n_sets")),
        "n_sets": row.get("n_sets"),
        "small_sample": small,
    }


def _p(test: dict, key: str):
    """A p-value, null on a small sample, as the interval's bounds are (results_reasons.py)."""
    return None if bool(test.get("small_sample", False)) else test.get(key)


def _delta_test(test: dict | None, method: dict | None) -> dict | None:
    """A paired test of a Δ (a row of a `*_paired_test` table): its interval, p and Holm's p."""
    if test is None:
        return None
    return {
        **_interval_of(test, method),
        "p_value": _p(test, "p_value"),
        "p_holm": _p(test, "p_holm"),
        "holm_family": test.get("holm_family"),
        "p_method": test.get("p_method"),
    }


def _median(
    row: dict,
    rows: pd.DataFrame,
    name: str,
    *,
    condition: str = "ordered",
    base: str = "original",
    also: tuple[str, ...] = (),
) -> dict:
    """A per-answer metric's median (perplexity, SLOR) of `condition` and its median Δ vs `base`
    (and each of `also`), from the table's own columns (analysis/skew.py, MEDIAN_CONVENTION: the
    median pooled over every answer, the median Δ the median of the paired per-prompt
    differences), with whether it contradicts the mean; a table saved before those columns: per
    template, then over templates (`rows`: the model's summary)."""
    if "median" in row:
        if f"median_delta_vs_{base}" in row:  # a table of several bases (the forced order)
            out = {"median": row["median"], "median_pooled": True}
            for b in (base, *also):
                out[f"median_delta_vs_{b}"] = row.get(f"median_delta_vs_{b}")
            out["mean_median_disagree"] = row.get(f"mean_median_disagree_vs_{base}")
            for b in also:
                out[f"mean_median_disagree_vs_{b}"] = row.get(f"mean_median_disagree_vs_{b}")
            return out
        return {
            "median": row["median"],
            f"median_delta_vs_{base}": row.get("median_delta"),
            "median_pooled": True,
            "mean_median_disagree": row.get("mean_median_disagree"),
        }
    by = rows.groupby("condition")[f"{name}_median"].mean()
    median = by.get(condition, float("nan"))
    return {
        "median": median,
        f"median_delta_vs_{base}": median - by.get(base, float("nan")),
        "median_pooled": False,
    }
