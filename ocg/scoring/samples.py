"""Score tables over repeated samples (docs/METHODS.md, "Repeated samples and pass@k").

A sampled run's answers carry `sample`. Group metrics (pBLEU, pBLEURT, Diverse Rate) are computed
within each (group, sample), never pooling the answers of two samples into one group. The
summary gives, per (model, condition, template), each metric's mean over the samples' own
summaries and its spread: `<metric>_sample_sd`, the SD (ddof=1) of the per-sample values, across
samples and not across concept sets. Counts are summed over samples, and a pooled metric
(Ordered Rate) is the ratio of those sums, as everywhere else (w/ order / w/o order: the paper's
identity), not a mean of per-sample ratios. A greedy run (no `sample`) is summarised exactly as
before.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ..core.frames import SAMPLE
from ..metrics.sufficient_statistics import pooled, pooled_column


def sampled(answers: pd.DataFrame) -> bool:
    """Whether these answers come from a run with repeated samples."""
    return SAMPLE in answers.columns


def keys_with_sample(keys: list[str], answers: pd.DataFrame) -> list[str]:
    """`keys`, and `sample` after them for a sampled run (a group is a group of one sample)."""
    return [*keys, SAMPLE] if sampled(answers) else list(keys)


def is_count(column: str) -> bool:
    """Summary columns that count answers or groups (summed over samples, never averaged)."""
    return column.startswith("n_")


def summarise_over_samples(
    answers: pd.DataFrame,
    groups: pd.DataFrame,
    keys: list[str],
    summarise: Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame],
) -> pd.DataFrame:
    """`summarise` per sample, then per `keys`: counts summed, every other number the mean over
    samples with `<column>_sample_sd` and `n_samples` beside it; a greedy run's summary unchanged."""
    if not sampled(answers):
        return summarise(answers, groups)
    per = pd.concat(
        [
            summarise(answers[answers[SAMPLE] == s], groups[groups[SAMPLE] == s]).assign(
                **{SAMPLE: s}
            )
            for s in sorted(answers[SAMPLE].unique())
        ],
        ignore_index=True,
    )
    values = [c for c in per.columns if c not in keys and c != SAMPLE]
    numeric = [c for c in values if pd.api.types.is_numeric_dtype(per[c])]
    grouped = per.groupby(keys, sort=True)
    out = grouped[[c for c in numeric if is_count(c)]].sum()
    means = grouped[[c for c in numeric if not is_count(c)]].mean()
    sds = grouped[[c for c in numeric if not is_count(c)]].std(ddof=1).add_suffix("_sample_sd")
    other = grouped[[c for c in values if c not in numeric]].first()
    out = pd.concat([out, means, other, sds], axis=1)[[*[c for c in values], *sds.columns]]
    for (
        m
    ) in pooled():  # the ratio of the summed counts (its _sample_sd stays the per-sample spread)
        num, den = pooled_column(m.numerator), pooled_column(m.denominator)
        if m.name in out and num in out and den in out:
            out[m.name] = m.scale * out[num] / out[den].where(out[den] > 0)
    out.insert(0, "n_samples", grouped[SAMPLE].nunique())
    return out.reset_index()
