"""What the paper does not give: bootstrap intervals over concept sets, and a paired test.

Both resample concept sets (the unit the benchmark samples), from per-set sufficient
statistics, so each metric is recomputed exactly as in Table 1 (Ordered Rate as a ratio of
sums; pairwise and diversity metrics as means over groups; with every template weighted
equally, as in a complete run). A concept set is resampled with all its samples, in a run with
repeated samples (its statistics sum over them): the interval is across sets, not samples.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics.registry import metrics, names
from ..metrics.statistics import sufficient_statistics

# Under this many concept sets an interval or p-value is marked `small_sample` (docs/METHODS.md,
# "Uncertainty"): percentile intervals of a few resampled sets are too narrow, and a sign-flip
# test over n sets cannot give a p-value below 2 / 2^n.
MIN_SETS = 20


def marked(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with `small_sample` set where they rest on fewer than MIN_SETS concept sets."""
    return rows.assign(small_sample=rows["n_sets"] < MIN_SETS) if "n_sets" in rows else rows


def set_statistics(answers: pd.DataFrame, groups: pd.DataFrame, model: str, condition: str) -> pd.DataFrame:
    """Per concept set: numerator and denominator of every metric (metrics/statistics.py);
    a metric missing for this model (e.g. pBLEURT without its checkpoint) is left out."""
    a = answers[(answers["model"] == model) & (answers["condition"] == condition)]
    g = groups[(groups["model"] == model) & (groups["condition"] == condition)]
    stats = sufficient_statistics(a, g, ["set_id"])
    return stats.dropna(axis=1, how="all").fillna(0.0)


def _metrics_from_weights(stats: pd.DataFrame, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric (metrics/registry.py) from its statistics summed over sets with `weights`."""
    out = {}
    for m in metrics():
        if m.numerator in stats and m.denominator in stats:
            with np.errstate(divide="ignore", invalid="ignore"):
                out[m.name] = m.scale * (weights @ stats[m.numerator].to_numpy()) / (
                    weights @ stats[m.denominator].to_numpy())
    return out


def _resample_weights(n_sets: int, n_boot: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_sets, np.full(n_sets, 1.0 / n_sets), size=n_boot).astype(float)


def bootstrap_ci(answers, groups, model, condition="ordered", n_boot=1000, seed=0, level=0.95) -> pd.DataFrame:
    """Point value and percentile interval of each metric, resampling concept sets."""
    stats = set_statistics(answers, groups, model, condition)
    point = _metrics_from_weights(stats, np.ones((1, len(stats))))
    boot = _metrics_from_weights(stats, _resample_weights(len(stats), n_boot, seed))
    lo, hi = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    rows = [{"model": model, "condition": condition, "metric": m, "value": float(point[m][0]),
             "ci_low": float(np.nanpercentile(boot[m], lo)), "ci_high": float(np.nanpercentile(boot[m], hi)),
             "n_sets": len(stats)} for m in names() if m in point]
    return marked(pd.DataFrame(rows))


def paired_test(answers, groups, model, a="ordered", b="original", n_perm=10000, n_boot=1000,
                seed=0) -> pd.DataFrame:
    """`a` minus `b` per metric, paired by concept set: bootstrap 95% CI of the difference and
    a two-sided sign-flip permutation p-value (swapping a set's two conditions)."""
    sa = set_statistics(answers, groups, model, a)
    sb = set_statistics(answers, groups, model, b).reindex(sa.index)
    rng = np.random.default_rng(seed)
    n = len(sa)
    flips = rng.integers(0, 2, size=(n_perm, n)).astype(float)  # 1: the set's conditions swapped
    boot = _resample_weights(n, n_boot, seed + 1)
    ones = np.ones((1, n))
    rows = []
    for m in metrics():
        metric, num, den = m.name, m.numerator, m.denominator
        if num not in sa or num not in sb:
            continue
        observed = _metrics_from_weights(sa, ones)[metric][0] - _metrics_from_weights(sb, ones)[metric][0]
        # permuted: for flipped sets, a's statistics count as b's and vice versa
        pa = {k: (1 - flips) * sa[k].to_numpy() + flips * sb[k].to_numpy() for k in (num, den)}
        pb = {k: (1 - flips) * sb[k].to_numpy() + flips * sa[k].to_numpy() for k in (num, den)}
        with np.errstate(divide="ignore", invalid="ignore"):
            null = m.scale * (pa[num].sum(1) / pa[den].sum(1) - pb[num].sum(1) / pb[den].sum(1))
            diffs = _metrics_from_weights(sa, boot)[metric] - _metrics_from_weights(sb, boot)[metric]
        null = null[np.isfinite(null)]
        p = (np.sum(np.abs(null) >= abs(observed) - 1e-12) + 1) / (len(null) + 1) if len(null) else np.nan
        rows.append({"model": model, "metric": metric, "difference": observed,
                     "ci_low": float(np.nanpercentile(diffs, 2.5)), "ci_high": float(np.nanpercentile(diffs, 97.5)),
                     "p_value": float(p), "n_sets": n})
    return marked(pd.DataFrame(rows))
