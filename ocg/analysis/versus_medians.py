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


def paired_differences(a: pd.DataFrame, b: pd.DataFrame, key: list[str], metric: str) -> pd.Series:
    """A's `metric` minus B's, answer by answer, over the instances (`key`) both scored."""
    pairs = a[[*key, metric]].merge(b[[*key, metric]], on=key, suffixes=("_a", "_b"))
    pairs = pairs.dropna(subset=[f"{metric}_a", f"{metric}_b"])
    return pairs[f"{metric}_a"].astype(float) - pairs[f"{metric}_b"].astype(float)


def with_medians(
    tests: pd.DataFrame, a: pd.DataFrame, b: pd.DataFrame, key: list[str], condition: str
) -> pd.DataFrame:
    """`tests` (one condition's rows: metric, value_a, value_b, difference) with COLUMNS; `a`
    and `b` are the two sides' shared answers of `condition`, `key` their instance key."""
    out = tests.copy()
    for column in COLUMNS:
        out[column] = False if column in FLAGS else np.nan
    both = pd.concat([a.assign(model="a"), b.assign(model="b")], ignore_index=True)
    for metric in skew.MEDIAN_METRICS:
        rows = out.index[out["metric"] == metric]
        if rows.empty or metric not in a or metric not in b:
            continue
        medians = skew.pooled_medians(both, condition, metric)
        med_a, med_b = medians.get("a", np.nan), medians.get("b", np.nan)
        diffs = paired_differences(a, b, key, metric)
        med_d = float(diffs.median()) if len(diffs) else np.nan
        for i in rows:
            dag_a = skew.dagger(metric, out.at[i, "value_a"], med_a)
            dag_b = skew.dagger(metric, out.at[i, "value_b"], med_b)
            out.loc[i, ["median_a", "median_b", "median_difference", "median_pairs"]] = [
                med_a,
                med_b,
                med_d,
                len(diffs),
            ]
            out.at[i, "dagger_a"], out.at[i, "dagger_b"] = dag_a, dag_b
            out.at[i, "mean_median_disagree"] = skew.disagree(
                out.at[i, "difference"], med_d, dag_a or dag_b
            )
    return out
