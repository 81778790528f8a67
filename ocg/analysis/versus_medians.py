"""Medians beside `ocg compare`'s skewed means (docs/METHODS.md, "One model against another").

For each metric of skew.MEDIAN_METRICS (perplexity, SLOR), per condition: the median of A and
of B, each pooled over the shared answers of the condition that side scored, all templates
together (skew.pooled_medians, as the landing page pools); the median difference, taken as the
paired design takes the mean one: the median of the per-answer differences A - B over the shared
answers both sides scored (not, in general, median A - median B); ‡ on a side whose mean is over
skew.PPL_MEAN_OVER_MEDIAN x its median (skew.dagger); and whether the mean difference and the
median difference disagree: ‡ on either side, or the two of opposite signs (skew.disagree).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import skew

# The columns added to a comparison's tests: NaN (flags False) on a metric not in MEDIAN_METRICS.
COLUMNS = [
    "median_a",
    "median_b",
    "median_difference",
    "median_pairs",
    "dagger_a",
    "dagger_b",
    "mean_median_disagree",
]
FLAGS = ("dagger_a", "dagger_b", "mean_median_disagree")


paired_differences = skew.paired_differences  # one helper: analysis/skew.py


def with_medians(
    tests: pd.DataFrame, a: pd.DataFrame, b: pd.DataFrame, key: list[str], condition: str
) -> pd.DataFrame:
    """`tests` (one condition's rows: metric, value_a, value_b, difference) with COLUMNS; `a`
    and `b` are the two sides' shared answers of `condition`, `key` their instance key."""
    out = tests.copy()
    for column in COLUMNS:
        out[column] = False if column in FLAGS else np.nan
    for metric in skew.MEDIAN_METRICS:
        rows = out.index[out["metric"] == metric]
        if rows.empty or metric not in a or metric not in b:
            continue
        for i in rows:
            r = skew.paired_median_delta(
                a, b, key, metric, mean=out.at[i, "value_a"], mean_base=out.at[i, "value_b"]
            )
            out.loc[i, ["median_a", "median_b", "median_difference", "median_pairs"]] = [
                r.median,
                r.median_base,
                r.median_delta,
                r.n_pairs,
            ]
            out.at[i, "dagger_a"], out.at[i, "dagger_b"] = r.dagger, r.dagger_base
            out.at[i, "mean_median_disagree"] = skew.disagree(
                out.at[i, "difference"], r.median_delta, r.dagger or r.dagger_base
            )
    return out
