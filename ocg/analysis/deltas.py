"""Intervals and paired tests of a table's Δ, for any two conditions (Table 1: `ordered` minus
`original`; Table 4: `ordered_one_shot` minus `ordered`; the forced order: `ordered_constrained`
minus `ordered`), as notebook 03 gives Table 1's (analysis/uncertainty.py)."""

from __future__ import annotations

import pandas as pd

from ..metrics.registry import in_table
from . import uncertainty


def _with_text(rows: pd.DataFrame) -> pd.DataFrame:
    if rows.empty:
        return rows
    return rows.assign(
        interval=[
            uncertainty.interval_text(r.ci_low, r.ci_high, r.unit, r.n) for r in rows.itertuples()
        ]
    )


def _reported(rows: pd.DataFrame, table: str | None) -> pd.DataFrame:
    """The rows of the metrics `table` reports (all where None)."""
    if table is None or rows.empty:
        return rows
    return rows[rows["metric"].isin([m.name for m in in_table(table)])].reset_index(drop=True)


def intervals(
    answers: pd.DataFrame,
    groups: pd.DataFrame,
    condition: str,
    resampling: uncertainty.Resampling,
    *,
    table: str | None = None,
) -> pd.DataFrame:
    """bootstrap_ci of `condition` for every model that has it, each interval as text beside it;
    the metrics `table` reports (registry.in_table) where given."""
    models = sorted(answers.loc[answers["condition"] == condition, "model"].unique())
    found = [uncertainty.bootstrap_ci(answers, groups, m, condition, resampling) for m in models]
    return _with_text(
        _reported(pd.concat(found, ignore_index=True) if found else pd.DataFrame(), table)
    )


def tests(
    answers: pd.DataFrame,
    groups: pd.DataFrame,
    conditions: tuple[str, str],
    resampling: uncertainty.Resampling,
    *,
    n_perm: int = 10000,
    table: str | None = None,
) -> pd.DataFrame:
    """paired_test of `conditions` (a minus b) for every model that has both; empty where none.
    With `table`, the metrics it reports only, Holm's adjustment redone over those (per family)."""
    has = answers.groupby("model")["condition"].agg(set)
    models = [m for m, c in has.items() if set(conditions) <= c]
    found = []
    for m in sorted(models):
        rows = _reported(
            uncertainty.paired_test(
                answers, groups, m, resampling, n_perm=n_perm, conditions=conditions
            ),
            table,
        )
        if len(rows):
            rows["p_holm"] = rows.groupby("holm_family")["p_value"].transform(uncertainty.holm)
        found.append(rows.assign(condition=conditions[0], base=conditions[1]))
    return _with_text(pd.concat(found, ignore_index=True) if found else pd.DataFrame())


SHOWN = {
    "model": "model",
    "condition": "condition",
    "base": "minus",
    "metric": "metric",
    "difference": "Δ",
    "interval": "bootstrap interval",
    "p_value": "p",
    "p_holm": "p (Holm)",
    "holm_family": "Holm family",
    "p_method": "how p was computed",
    "small_sample": "small sample",
}


def shown(rows: pd.DataFrame) -> pd.DataFrame:
    """The tests as a notebook shows them: metrics by label, headers in words, "–" for a
    missing value; the saved table keeps its own columns."""
    from ..metrics.registry import label

    if rows.empty:
        return rows
    out = rows[[c for c in SHOWN if c in rows]].assign(metric=rows["metric"].map(label))
    out = out.round({"difference": 2, "p_value": 4, "p_holm": 4}).astype(object)
    return out.where(out.notna(), "–").rename(columns=SHOWN)
