"""The paired sign-flip (permutation) test over per-unit statistics, and Holm's adjustment
(docs/METHODS.md, "Analyses"): exact by enumeration on few units, sampled beyond; written for
ratio metrics (a sum of numerators over a sum of denominators), tested equal to
scipy.stats.permutation_test."""

from __future__ import annotations

import numpy as np

from ..metrics.registry import metrics

# Up to this many units the sign-flip test enumerates all 2^n sign vectors (an exact p-value, as
# small as the test can give and no smaller); beyond, it draws `n_perm` of them at random.
EXACT_MAX_UNITS = 20
_CHUNK = 1 << 16  # sign vectors per block: 2^20 of them at once would take gigabytes


def sign_vectors(n: int, n_perm: int, seed: int):
    """(blocks of 0/1 rows, 1: the unit's conditions swapped; method text): every sign vector when
    n <= EXACT_MAX_UNITS, else `n_perm` drawn at random."""
    if n <= EXACT_MAX_UNITS:
        total = 2**n
        blocks = (
            (
                (np.arange(s, min(total, s + _CHUNK), dtype=np.int64)[:, None] >> np.arange(n)) & 1
            ).astype(float)
            for s in range(0, total, _CHUNK)
        )
        return blocks, f"exact: all {total} sign vectors"
    rng = np.random.default_rng(seed)
    blocks = (
        rng.integers(0, 2, size=(min(_CHUNK, n_perm - s), n)).astype(float)
        for s in range(0, n_perm, _CHUNK)
    )
    return blocks, f"sampled: {n_perm} of 2^{n} sign vectors, (b+1)/(m+1)"


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment (family-wise error) of the p-values given; NaN stays NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    known = np.flatnonzero(np.isfinite(p))
    order = known[np.argsort(p[known], kind="stable")]
    m = len(order)
    out[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return out


# A null difference within this share of the observed one ties it (scipy.stats.permutation_test's
# tolerance): summed in another order, the all-flipped null misses a perplexity-scale observed one.
RELATIVE_TIE = 100 * np.finfo(float).eps


def sign_flip_p(sa, sb, tested, n_perm, seed) -> tuple[dict, str]:
    """Two-sided sign-flip p-value per metric of `tested` (metric: observed difference) between
    two tables of per-unit statistics (rows aligned): a flipped unit's statistics count for the
    other condition. Exact: the share of all sign vectors whose difference is at least as large in
    absolute value, ties within RELATIVE_TIE of it included (the identity and the all-flipped
    vector are two of them); sampled: (b+1)/(m+1). Equal to scipy.stats.permutation_test
    (permutation_type="samples", two-sided) on the same statistic (tests/analysis)."""
    blocks, method = sign_vectors(len(sa), n_perm, seed)
    counts = {name: [0, 0] for name in tested}
    parts = {}
    for m in metrics():
        if m.name in tested:
            num, den = m.numerator, m.denominator
            parts[m.name] = (
                m,
                sa[num].sum(),
                sa[den].sum(),
                sb[num].sum(),
                sb[den].sum(),
                (sb[num] - sa[num]).to_numpy(),
                (sb[den] - sa[den]).to_numpy(),
            )
    for flips in blocks:
        for name, (m, an, ad, bn, bd, dn, dd) in parts.items():
            moved_n, moved_d = flips @ dn, flips @ dd
            with np.errstate(divide="ignore", invalid="ignore"):
                null = m.scale * ((an + moved_n) / (ad + moved_d) - (bn - moved_n) / (bd - moved_d))
            null = null[np.isfinite(null)]
            observed = abs(tested[name])
            counts[name][0] += int(np.sum(np.abs(null) >= observed - RELATIVE_TIE * observed))
            counts[name][1] += len(null)
    exact = method.startswith("exact")
    return {
        name: (np.nan if not total else hits / total if exact else (hits + 1) / (total + 1))
        for name, (hits, total) in counts.items()
    }, method
