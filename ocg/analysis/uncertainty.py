"""What the paper does not give: bootstrap intervals, and a paired test, over a chosen unit.

Both resample a unit (docs/METHODS.md, "Uncertainty: the resampling unit"): concept sets by
default (the unit the benchmark samples), (set, template) clusters, or prompts (a set's
permutation under a template, its repeated samples with it). From per-unit sufficient statistics: each metric is
one ratio pooled over the units (sum of numerators over sum of denominators, every template
together; pairwise and diversity metrics as means over groups). Table 1 averages per-template
values instead (Ordered Rate excepted): the two agree where every template has as many scored
answers, as in a complete run, and differ where a template lost some (docs/METHODS.md,
"Uncertainty"). A group
metric (pBLEU, pBLEURT, Diverse Rate) has no value per prompt: under `prompts` it is resampled
by its (set, template) cluster, and its row says so in `unit`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.errors import OcgInputError
from ..metrics.registry import holm_family, metrics, names
from ..metrics.sufficient_statistics import sufficient_statistics
from .permutation import (  # EXACT_MAX_UNITS, sign_vectors: read here too
    EXACT_MAX_UNITS,  # noqa: F401
    holm,
    sign_flip_p,
    sign_vectors,  # noqa: F401
)

# Under this many resampled units an interval or p-value is marked `small_sample` (docs/METHODS.md,
# "Uncertainty"): percentile intervals of a few resampled units are too narrow, and a sign-flip
# test over n units cannot give a p-value below 2 / 2^n.
MIN_SETS = 20

# The resampling units, each by the keys of its rows; the first is the default.
UNITS = {
    "sets": ["set_id"],
    "clusters": ["set_id", "template_id"],
    "prompts": ["set_id", "template_id", "perm_index"],
}
UNIT_NAMES = {"sets": "concept sets", "clusters": "(set, template) clusters", "prompts": "prompts"}


def _percentile(values, q: float) -> float:
    """The q-th percentile of the values that are numbers; NaN, silently, where none is (Ordered
    Rate 0/0 in every resample): numpy would warn "All-NaN slice" on the user's terminal."""
    v = np.asarray(values, dtype=float)
    return float("nan") if np.isnan(v).all() else float(np.nanpercentile(v, q))


def units(n: int, unit: str) -> str:
    """'2 concept sets', '1 concept set': a count and its unit, singular for one."""
    name = UNIT_NAMES.get(unit, unit)
    return f"{n} {name[:-1] if n == 1 and name.endswith('s') else name}"


def marked(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with `small_sample` set where they rest on fewer than MIN_SETS units."""
    count = "n" if "n" in rows else "n_sets"
    return rows.assign(small_sample=rows[count] < MIN_SETS) if count in rows else rows


def interval_text(low: float, high: float, unit: str, n: int) -> str:
    """'[51.20, 60.80] (95%, 2 concept sets)': an interval with what it resampled, as pages show it."""
    return f"[{low:.2f}, {high:.2f}] (95%, {units(n, unit)})"


@dataclass(frozen=True)
class Resampling:
    """How an interval or a paired test resamples: the unit (UNITS), bootstrap draws and their
    seed, and bootstrap_ci's level (the paired test's interval is 95%); one value, as notebook 03
    passes it to both and records it."""

    unit: str = "sets"
    n_boot: int = 1000
    seed: int = 0
    level: float = 0.95

    def settings(self, **more) -> dict:
        """These settings as a table's provenance records them (analysis/report.py `meta`)."""
        _check_unit(self.unit)
        return {
            "bootstrap": {
                "unit": self.unit,
                "unit_name": UNIT_NAMES[self.unit],
                "n_boot": int(self.n_boot),
                "seed": int(self.seed),
                "level": self.level,
                **more,
            }
        }


def _check_unit(unit: str) -> list[str]:
    if unit not in UNITS:
        raise OcgInputError(
            "unit", f"unknown bootstrap unit {unit!r}; expected one of {list(UNITS)}"
        )
    return UNITS[unit]


def set_statistics(
    answers: pd.DataFrame, groups: pd.DataFrame, model: str, condition: str, unit: str = "sets"
) -> pd.DataFrame:
    """Per unit (concept set by default): numerator and denominator of every metric
    (metrics/statistics.py); a metric missing for this model (e.g. pBLEURT without its
    checkpoint) is left out. Under `prompts`, the answer metrics' statistics only."""
    keys = _check_unit(unit)
    a = answers[(answers["model"] == model) & (answers["condition"] == condition)]
    g = groups[(groups["model"] == model) & (groups["condition"] == condition)]
    if "perm_index" in keys:  # groups span a cluster's permutations: no statistics per prompt
        g = g.iloc[0:0]
    stats = sufficient_statistics(a, g, keys)
    return stats.dropna(axis=1, how="all").fillna(0.0)


def _unit_statistics(answers, groups, model, condition, unit) -> list[tuple[str, pd.DataFrame]]:
    """(unit, its statistics) in order: a metric is taken from the first that holds it."""
    out = [(unit, set_statistics(answers, groups, model, condition, unit))]
    if unit == "prompts":
        out.append(("clusters", set_statistics(answers, groups, model, condition, "clusters")))
    return out


def _metrics_from_weights(stats: pd.DataFrame, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric (metrics/registry.py) from its statistics summed over units with `weights`."""
    out = {}
    for m in metrics():
        if m.numerator in stats and m.denominator in stats:
            with np.errstate(divide="ignore", invalid="ignore"):
                out[m.name] = (
                    m.scale
                    * (weights @ stats[m.numerator].to_numpy())
                    / (weights @ stats[m.denominator].to_numpy())
                )
    return out


def per_unit(stats: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each metric on each unit alone (its own statistics): the per-set values a paired
    difference is spread over (analysis/sample_size.py)."""
    return _metrics_from_weights(stats, np.eye(len(stats)))


def _resample_weights(n_units: int, n_boot: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_boot).astype(float)


def _n_sets(stats: pd.DataFrame) -> int:
    return int(stats.index.get_level_values("set_id").nunique()) if len(stats) else 0


def bootstrap_ci(
    answers, groups, model, condition="ordered", resampling: Resampling = Resampling()
) -> pd.DataFrame:
    """Point value and percentile interval of each metric, resampling `resampling.unit` (UNITS);
    each row names its unit, the units resampled (`n`) and the concept sets they hold (`n_sets`)."""
    if not ((answers["model"] == model) & (answers["condition"] == condition)).any():
        return pd.DataFrame()  # e.g. a reference row: it answers only `original`
    lo, hi = 100 * (1 - resampling.level) / 2, 100 * (1 + resampling.level) / 2
    rows: dict[str, dict] = {}
    for u, stats in _unit_statistics(answers, groups, model, condition, resampling.unit):
        point = _metrics_from_weights(stats, np.ones((1, len(stats))))
        weights = _resample_weights(len(stats), resampling.n_boot, resampling.seed)
        boot = _metrics_from_weights(stats, weights)
        for m in point:
            rows.setdefault(
                m,
                {
                    "model": model,
                    "condition": condition,
                    "metric": m,
                    "value": float(point[m][0]),
                    "ci_low": _percentile(boot[m], lo),
                    "ci_high": _percentile(boot[m], hi),
                    "unit": u,
                    "n": len(stats),
                    "n_sets": _n_sets(stats),
                },
            )
    return marked(pd.DataFrame([rows[m] for m in names() if m in rows]))


def paired_test(
    answers,
    groups,
    model,
    resampling: Resampling = Resampling(),
    *,
    n_perm=10000,
    conditions: tuple[str, str] = ("ordered", "original"),
) -> pd.DataFrame:
    """`a` minus `b` (`conditions`) per metric, paired by `resampling.unit` (a concept set by
    default): bootstrap 95% CI of the difference and a two-sided sign-flip
    permutation p-value (swapping a unit's conditions), exact up to EXACT_MAX_UNITS units
    (`p_method` says which; `p_hits` of `p_vectors` the integer counts: exact p = p_hits /
    p_vectors, sampled (p_hits + 1) / (p_vectors + 1)), else `n_perm` sign vectors drawn, with Holm's adjustment over this
    model's tests of one pre-specified family (`p_holm`; `holm_family`: "paper" for the paper's
    metrics, "extra" for the rest, registry.holm_family), so adding a metric moves no paper p."""
    a, b = conditions
    seed = resampling.seed
    rows = {}
    for u, sa in _unit_statistics(answers, groups, model, a, resampling.unit):
        sb = set_statistics(answers, groups, model, b, u).reindex(sa.index)
        n = len(sa)
        boot = _resample_weights(n, resampling.n_boot, seed + 1)
        ones = np.ones((1, n))
        observed = {}
        for m in metrics():
            metric, num, den = m.name, m.numerator, m.denominator
            if metric in rows or num not in sa or num not in sb or den not in sa or den not in sb:
                continue
            observed[metric] = (
                _metrics_from_weights(sa, ones)[metric][0]
                - _metrics_from_weights(sb, ones)[metric][0]
            )
        flips, method = sign_flip_p(sa, sb, observed, n_perm, seed)
        for metric, difference in observed.items():
            test = flips[metric]
            with np.errstate(divide="ignore", invalid="ignore"):
                diffs = (
                    _metrics_from_weights(sa, boot)[metric]
                    - _metrics_from_weights(sb, boot)[metric]
                )
            rows[metric] = {
                "model": model,
                "metric": metric,
                "difference": difference,
                "ci_low": _percentile(diffs, 2.5),
                "ci_high": _percentile(diffs, 97.5),
                "p_value": float(test.p),
                "p_method": method,
                "p_hits": test.hits,
                "p_vectors": test.vectors,
                "unit": u,
                "n": n,
                "n_sets": _n_sets(sa),
            }
    out = pd.DataFrame([rows[m] for m in names() if m in rows])
    if len(out):
        family = out["metric"].map(holm_family)
        adjusted = pd.Series(np.nan, index=out.index)
        for _, members in out.groupby(family, sort=False):
            adjusted[members.index] = holm(members["p_value"])
        at = out.columns.get_loc("p_value") + 1
        out.insert(at, "p_holm", adjusted.to_numpy())
        out.insert(at + 1, "holm_family", family.to_numpy())
    return marked(out)
