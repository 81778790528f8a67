"""Intervals and paired tests of a table's Δ, for any two conditions (Table 1: `ordered` minus
`original`; Table 4: `ordered_one_shot` minus `ordered`; the forced order: `ordered_constrained`
minus `ordered`), as notebook 03 gives Table 1's (analysis/uncertainty.py)."""

from __future__ import annotations

import pandas as pd

from . import uncertainty


def _with_text(rows: pd.DataFrame) -> pd.DataFrame:
    if rows.empty:
        return rows
    return rows.assign(
        interval=[
            uncertainty.interval_text(r.ci_low, r.ci_high, r.unit, r.n) for r in rows.itertuples()
        ]
    )


def intervals(
    answers: pd.DataFrame,
    groups: pd.DataFrame,
    condition: str,
    resampling: uncertainty.Resampling,
) -> pd.DataFrame:
    """bootstrap_ci of `condition` for every model that has it, each interval as text beside it."""
    models = sorted(answers.loc[answers["condition"] == condition, "model"].unique())
    found = [uncertainty.bootstrap_ci(answers, groups, m, condition, resampling) for m in models]
    return _with_text(pd.concat(found, ignore_index=True) if found else pd.DataFrame())


def tests(
    answers: pd.DataFrame,
    groups: pd.DataFrame,
    conditions: tuple[str, str],
    resampling: uncertainty.Resampling,
    *,
    n_perm: int = 10000,
) -> pd.DataFrame:
    """paired_test of `conditions` (a minus b) for every model that has both; empty where none."""
    has = answers.groupby("model")["condition"].agg(set)
    models = [m for m, c in has.items() if set(conditions) <= c]
    found = [
        uncertainty.paired_test(
            answers, groups, m, resampling, n_perm=n_perm, conditions=conditions
        ).assign(condition=conditions[0], base=conditions[1])
        for m in sorted(models)
    ]
    return _with_text(pd.concat(found, ignore_index=True) if found else pd.DataFrame())
