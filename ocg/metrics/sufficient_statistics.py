"""Sufficient statistics: the sums every reported metric is a ratio of (metrics/registry.py).

One function gives them for any grouping: per (model, condition, template) for the summary
tables, per concept set for the bootstrap, per (model, POS pattern) for Table 2. Which columns
are summed, and over which rows, is each family's declaration (`MetricFamily.sums`, `.level`);
a metric is then `scale x numerator / denominator`, so a summary, a template average and a
bootstrap resample all compute it the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .registry import FAMILIES, metrics


def summed(level: str) -> list[str]:
    """The columns summed over `level` (answers or groups), as the families declare them."""
    return [col for f in FAMILIES.values() if f.level == level for col in f.sums]


def sufficient_statistics(
    answers: pd.DataFrame, groups: pd.DataFrame, keys: list[str]
) -> pd.DataFrame:
    """Per key: counts (n answers, n_groups) and, for each summed column, its sum and the count
    of its non-missing values (`n_<column>`); a column missing everywhere sums to NaN.
    `groups` may be `answers` itself when each answer carries its group's values (Table 2)."""
    ga = answers.groupby(keys, sort=True)
    stats = pd.DataFrame({"n": ga.size()})
    for col in summed("answers"):
        if col in answers:
            values = answers[col].astype(float)
            stats[col] = values.groupby([answers[k] for k in keys]).sum(min_count=1)
            stats[f"n_{col}"] = values.groupby([answers[k] for k in keys]).count()
    if not groups.empty:
        gg = groups.groupby(keys, sort=True)
        stats["n_groups"] = gg.size()
        for col in summed("groups"):
            if col in groups:
                stats[col] = gg[col].sum(min_count=1)
                stats[f"n_{col}"] = gg[col].count()
    return stats


def ratios(stats: pd.DataFrame, reported=None) -> pd.DataFrame:
    """Each reported metric (all declared, or those given) whose statistics are present, per row."""
    out = pd.DataFrame(index=stats.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in metrics() if reported is None else reported:
            if m.numerator in stats and m.denominator in stats:
                den = stats[m.denominator].astype(float)
                out[m.name] = m.scale * stats[m.numerator].astype(float) / den.where(den > 0)
    return out


def pooled_sums(stats: pd.DataFrame) -> pd.DataFrame:
    """The sums a pooled metric is a ratio of, as the summary keeps them (`n_<statistic>`, whole
    counts), so that templates are pooled later as a ratio of sums (analysis/tables.py)."""
    out = pd.DataFrame(index=stats.index)
    for m in pooled():
        if m.numerator in stats and m.denominator in stats:
            for stat in (m.denominator, m.numerator):
                values = stats[stat]
                whole = values.notna().all() and (values == values.round()).all()
                out[pooled_column(stat)] = values.astype(int) if whole else values
    return out


def pooled() -> list:
    """The metrics averaged over templates as a ratio of sums."""
    return [m for m in metrics() if m.pooled]


def pooled_columns() -> list[str]:
    """The summary's columns that `pooled_sums` writes (n_all_present, n_in_order)."""
    return list(
        dict.fromkeys(pooled_column(s) for m in pooled() for s in (m.denominator, m.numerator))
    )


def pooled_column(statistic: str) -> str:
    """The summary's column holding a pooled metric's `statistic` summed (n_in_order...)."""
    return f"n_{statistic}"
