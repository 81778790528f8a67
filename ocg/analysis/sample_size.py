"""How many concept sets a comparison would need, from a small one: the path from a pilot to a
run a paper can use (docs/METHODS.md, "How many concept sets"). A normal approximation on the
per-set paired differences d_s (A minus B on concept set s, each set's metric from its own
answers): with sd their standard deviation and Δ the observed difference,

- a 95% interval of half-width h:      n = (z_0.975 · sd / h)²           (h = |Δ| / 2 here)
- a two-sided 5% test with 80% power:  n = ((z_0.975 + z_0.8) · sd / |Δ|)²

rounded up, at least 2. Both read the pilot's Δ and sd as the truth: a pilot's Δ is itself
noisy (a small one overstates the sets needed, a lucky large one understates them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
POWER = 0.8
HALF_WIDTH_OF_DELTA = 0.5  # the interval's half-width, as a share of |Δ|: ±|Δ|/2 excludes 0


@dataclass(frozen=True)
class SetsNeeded:
    """Concept sets for the interval and for the power, with what they were computed from; the
    counts None where no number of sets would do (`reason`)."""

    for_interval: int | None
    for_power: int | None
    half_width: float | None
    sd: float | None
    n_sets: int  # the per-set differences the spread is from
    reason: str | None = None


def _z(p: float) -> float:
    return float(stats.norm.ppf(p))


def sets_for_interval(sd: float, half_width: float, confidence: float = CONFIDENCE) -> int:
    """The fewest sets whose normal 95% interval, z · sd / √n, is at most `half_width`."""
    return max(2, math.ceil((_z(0.5 + confidence / 2) * sd / half_width) ** 2))


def sets_for_power(
    sd: float, delta: float, power: float = POWER, confidence: float = CONFIDENCE
) -> int:
    """The fewest sets at which a two-sided test at 1 - `confidence` detects `delta` with `power`
    (normal approximation, the far tail ignored)."""
    z = _z(0.5 + confidence / 2) + _z(power)
    return max(2, math.ceil((z * sd / abs(delta)) ** 2))


def sets_needed(differences, delta: float) -> SetsNeeded:
    """From the per-set differences (NaN where a set has no value on one side) and the observed
    Δ: the sets for an interval of ±|Δ|/2 and for 80% power."""
    d = np.asarray(differences, dtype=float)
    d = d[np.isfinite(d)]
    n = len(d)
    if n < 2:
        return SetsNeeded(
            None, None, None, None, n, "fewer than 2 concept sets with a difference: no spread"
        )
    sd = float(np.std(d, ddof=1))
    if not np.isfinite(delta) or delta == 0:
        return SetsNeeded(
            None,
            None,
            None,
            sd,
            n,
            "the observed difference is 0 or has no value: no number of sets detects it",
        )
    h = HALF_WIDTH_OF_DELTA * abs(delta)
    return SetsNeeded(sets_for_interval(sd, h), sets_for_power(sd, delta), h, sd, n)
