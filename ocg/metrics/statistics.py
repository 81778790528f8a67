"""Sufficient statistics: the sums every reported metric is a ratio of (metrics/registry.py).

One function gives them for any grouping: per (model, condition, template) for the summary
tables, per concept set for the bootstrap. A metric is then `scale x numerator / denominator`,
so a summary, a template average and a bootstrap resample all compute it the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .registry import PAPER

ANSWER_SUMS = ("all_present", "in_order", "distinct_2", "perplexity")  # summed over answers
GROUP_SUMS = ("pbleu", "pbleurt", "diverse_rate")  # summed over groups of 24 permutations


def sufficient_statistics(answers: pd.DataFrame, groups: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per key: counts (n answers, n_groups) and, for each scored column, its sum and the count
    of its non-missing values (`n_<column>`); a column missing everywhere sums to NaN."""
    ga = answers.groupby(keys, sort=True)
    stats = pd.DataFrame({"n": ga.size()})
    for col in ANSWER_SUMS:
        if col in answers:
            values = answers[col].astype(float)
            stats[col] = values.groupby([answers[k] for k in keys]).sum(min_count=1)
            stats[f"n_{col}"] = values.groupby([answers[k] for k in keys]).count()
    if not groups.empty:
        gg = groups.groupby(keys, sort=True)
        stats["n_groups"] = gg.size()
        for col in GROUP_SUMS:
            if col in groups:
                stats[col] = gg[col].sum(min_count=1)
                stats[f"n_{col}"] = gg[col].count()
    return stats


def ratios(stats: pd.DataFrame) -> pd.DataFrame:
    """Each reported metric whose statistics are present, per row of `stats`."""
    out = pd.DataFrame(index=stats.index)
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in PAPER:
            if m.numerator in stats and m.denominator in stats:
                den = stats[m.denominator].astype(float)
                out[m.name] = m.scale * stats[m.numerator].astype(float) / den.where(den > 0)
    return out
