"""The paired sign-flip (permutation) test over per-unit statistics, and Holm's adjustment
(docs/METHODS.md, "Analyses"): exact by enumeration on few units, sampled beyond; written for
ratio metrics (a sum of numerators over a sum of denominators), decided in exact arithmetic
where floats cannot, tested equal to a rational enumeration and to scipy.stats.permutation_test."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

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


# A sign flip's p-value is decided exactly (docs/METHODS.md, "Uncertainty"): floats decide only
# where a bound on their rounding, from the magnitudes summed, certifies the comparison; every
# vector inside the bound is recomputed in exact (integer) arithmetic. The p is then exactly the
# share a rational enumeration gives, and attainable: a multiple of 2 / 2^n.
_EPS = np.finfo(float).eps


@dataclass(frozen=True)
class SignFlip:
    """One metric's sign-flip test. Exact: `hits` of all `vectors` = 2^n sign vectors give a
    difference at least the observed one in absolute value, p = hits / vectors (hits even, >= 2);
    sampled: `hits` = b of `vectors` = m drawn, p = (b+1)/(m+1). `observed` is the difference the
    test decided on, in exact arithmetic (None where undefined: then p is NaN)."""

    p: float
    hits: int
    vectors: int
    observed: Fraction | None


def _as_integers(columns: list[np.ndarray]) -> tuple[list[np.ndarray], int]:
    """Float arrays as Python-integer arrays times one shared power of two (exact: a float is an
    integer mantissa times 2^e)."""
    parts = [[math.frexp(float(x)) for x in col] for col in columns]
    nonzero = [e for col in parts for m, e in col if m != 0.0]
    low = min(nonzero, default=0) - 53
    ints = [
        np.array([int(m * 2.0**53) << (e - 53 - low) if m else 0 for m, e in col], dtype=object)
        for col in parts
    ]
    return ints, low


class _Exact:
    """T(s) in exact arithmetic for any sign vectors s (0/1 rows over all n units):
    T(s) = scale * mean_t (Na_t(s)/Da_t(s) - Nb_t(s)/Db_t(s)), a flipped unit's statistics counted
    for the other condition. Columns are (n units, K templates) float arrays."""

    def __init__(self, na, da, nb, db, scale):
        self.scale, self.k = Fraction(scale), na.shape[1]
        self.cols = []
        for t in range(self.k):
            (ia, ib), en = _as_integers([na[:, t], nb[:, t]])
            (ja, jb), ed = _as_integers([da[:, t], db[:, t]])
            self.cols.append((ia, ib, ja, jb, Fraction(2) ** (en - ed)))

    def values(self, flips: np.ndarray) -> list[Fraction | None]:
        f = flips.astype(np.int64).astype(object)
        out: list[Fraction | None] = [Fraction(0)] * len(f)
        for ia, ib, ja, jb, unit in self.cols:
            dn, dd = ib - ia, jb - ja
            moved_n, moved_d = f @ dn, f @ dd
            num_a, den_a = ia.sum() + moved_n, ja.sum() + moved_d
            num_b, den_b = ib.sum() - moved_n, jb.sum() - moved_d
            for j in range(len(f)):
                so_far = out[j]
                if so_far is None or den_a[j] == 0 or den_b[j] == 0:
                    out[j] = None
                    continue
                out[j] = so_far + unit * Fraction(
                    num_a[j] * den_b[j] - num_b[j] * den_a[j], den_a[j] * den_b[j]
                )
        return [None if v is None else self.scale * v / self.k for v in out]


def _ratio(n_hat, d_hat, err_n, err_d):
    """n_hat/d_hat and a bound on its distance to N/D given |N-n_hat| <= err_n, |D-d_hat| <= err_d
    (the division's own rounding included); inf where the denominator may be 0."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = n_hat / d_hat
        room = np.abs(d_hat) - err_d
        bound = np.where(room > 0, (err_n + np.abs(r) * err_d) / room + _EPS * np.abs(r), np.inf)
    return r, np.where(np.isfinite(bound), bound, np.inf)


def _at_least(flips, cols, exact: _Exact, observed: Fraction) -> np.ndarray:
    """Per sign vector (rows of `flips` over all units): |T(s)| >= |observed|, decided exactly.
    Floats first, with a rigorous rounding bound (sums of at most 2n+1 terms in any order, then
    the ratios); vectors inside the bound (ties above all), or undefined, go to `exact`."""
    na, da, nb, db, scale = cols
    n, k = na.shape
    c = (2 * n + 4) * _EPS
    size_n = np.abs(na).sum(0) + np.abs(nb).sum(0)
    size_d = np.abs(da).sum(0) + np.abs(db).sum(0)
    t = np.zeros(len(flips))
    err = np.zeros(len(flips))
    for j in range(k):
        dn, dd = nb[:, j] - na[:, j], db[:, j] - da[:, j]
        moved_n, moved_d = flips @ dn, flips @ dd
        ra, ea = _ratio(
            na[:, j].sum() + moved_n, da[:, j].sum() + moved_d, c * size_n[j], c * size_d[j]
        )
        rb, eb = _ratio(
            nb[:, j].sum() - moved_n, db[:, j].sum() - moved_d, c * size_n[j], c * size_d[j]
        )
        with np.errstate(invalid="ignore", over="ignore"):
            t += ra - rb
            err += ea + eb + _EPS * (np.abs(ra) + np.abs(rb))
    with np.errstate(invalid="ignore", over="ignore"):
        t = abs(scale) * t / k
        err = 2 * abs(scale) * err / k + 4 * _EPS * np.abs(t)  # x2: margin
        gap = np.abs(t) - float(abs(observed))
        err = err + 4 * _EPS * float(abs(observed))
        hit = gap > err
        unsure = ~hit & ~(gap < -err)  # inside the bound, or inf/nan
    picked = np.flatnonzero(unsure)
    if len(picked):
        values = exact.values(flips[picked])
        hit[picked] = [v is not None and abs(v) >= abs(observed) for v in values]
    return hit


def _columns(sa, sb, m) -> tuple:
    def col(frame, name):
        return frame[name].to_numpy(dtype=float).reshape(len(frame), -1)

    return (
        col(sa, m.numerator),
        col(sa, m.denominator),
        col(sb, m.numerator),
        col(sb, m.denominator),
        m.scale,
    )


def _exact_test(cols) -> SignFlip:
    """Every sign vector: units equal in both conditions move nothing (a factor 2^(n-k) over the k
    live ones); of the live ones only vectors leaving the first unflipped are computed, the
    complement giving -T exactly (each hit counted twice)."""
    na, da, nb, db, scale = cols
    n = na.shape[0]
    exact = _Exact(na, da, nb, db, scale)
    observed = exact.values(np.zeros((1, n)))[0]
    if observed is None:
        return SignFlip(np.nan, 0, 2**n, None)
    live = np.flatnonzero(((nb != na) | (db != da)).any(axis=1))
    if len(live) == 0:
        return SignFlip(1.0, 2**n, 2**n, observed)
    k, hits = len(live), 0
    total = 2 ** (k - 1)
    for start in range(0, total, _CHUNK):
        codes = np.arange(start, min(total, start + _CHUNK), dtype=np.int64)
        flips = np.zeros((len(codes), n))
        flips[:, live[1:]] = (codes[:, None] >> np.arange(k - 1)) & 1
        hits += int(_at_least(flips, cols, exact, observed).sum())
    hits = 2 * hits * 2 ** (n - k)
    return SignFlip(hits / 2**n, hits, 2**n, observed)


def _sampled_test(cols, n_perm: int, seed: int) -> SignFlip:
    na, da, nb, db, scale = cols
    n = na.shape[0]
    exact = _Exact(na, da, nb, db, scale)
    observed = exact.values(np.zeros((1, n)))[0]
    if observed is None:
        return SignFlip(np.nan, 0, n_perm, None)
    blocks, _ = sign_vectors(n, n_perm, seed)
    hits = sum(int(_at_least(flips, cols, exact, observed).sum()) for flips in blocks)
    return SignFlip((hits + 1) / (n_perm + 1), hits, n_perm, observed)


def sign_flip_p(sa, sb, tested, n_perm, seed) -> tuple[dict[str, SignFlip], str]:
    """Two-sided sign-flip test per metric named in `tested` between two tables of per-unit
    statistics (rows aligned): a flipped unit's statistics count for the other condition. The
    statistic (the metric's value on `sa` minus on `sb`) is computed here, in exact arithmetic.
    Exact up to EXACT_MAX_UNITS units: p = the share of all 2^n sign vectors whose difference is at
    least the observed one in absolute value, ties decided exactly (the identity and the all-flipped
    vector are two), an undefined one (a denominator 0) not counted, so p is a multiple of 2/2^n;
    sampled beyond: (b+1)/(m+1). Equal to a rational enumeration and to
    scipy.stats.permutation_test (permutation_type="samples", two-sided) (tests/analysis)."""
    n = len(sa)
    _, method = sign_vectors(n, n_perm, seed)
    out = {}
    for m in metrics():
        if m.name in tested:
            cols = _columns(sa, sb, m)
            if not all(np.isfinite(x).all() for x in cols[:4]):
                out[m.name] = SignFlip(np.nan, 0, 2**n if n <= EXACT_MAX_UNITS else n_perm, None)
            elif n <= EXACT_MAX_UNITS:
                out[m.name] = _exact_test(cols)
            else:
                out[m.name] = _sampled_test(cols, n_perm, seed)
    return out, method
