"""How far the LLM judge agrees with ocg's deterministic checks, beyond chance (docs/METHODS.md,
"LLM judge"): from one check's 2x2 table of judged answers (scoring/judge_agreement.py), the raw
share of answers on which the two agree with its Wilson score interval, and Cohen's kappa with a
large-sample interval, kappa ± z * its standard error (Fleiss, Cohen & Everitt 1969, the delta
method's variance under multinomial sampling of answers).

Where a number cannot be given it is None with the reason, never a guess: nothing judged (no
share), the judge and ocg giving one and the same verdict for every answer (chance agreement 1:
kappa is 0/0), one of them giving one verdict for every answer (kappa is 0 whatever the other
says, with a standard error of 0: no interval), kappa at its bound of 1 or -1 (no disagreement,
or none agreeing with balanced margins: a standard error of 0, no interval), fewer than MIN_JUDGED judged answers (the
large-sample interval of kappa is not given; the share's Wilson interval, made for small
samples, is), a score set that predates the 2x2 counts (the share alone)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

from ..scoring.judge_agreement import CELLS, CHECKS

LEVEL = 0.95
Z = NormalDist().inv_cdf(0.5 + LEVEL / 2)
# Under this many judged answers the kappa's large-sample interval is not given (as an interval
# over fewer than uncertainty.MIN_SETS units is not): the agreement is marked `small_sample`.
MIN_JUDGED = 20
SHARE_METHOD = "Wilson score interval of the share (no continuity correction)"
KAPPA_METHOD = (
    "kappa ± z * its large-sample standard error (Fleiss, Cohen & Everitt 1969), clipped to "
    f"[-1, 1]; none under {MIN_JUDGED} judged answers"
)
# The method as the pages name it, under the agreement's lines
METHOD_NOTE = (
    "95% intervals: Wilson's score interval for the share; for Cohen's κ, κ ± 1.96 times its "
    f"large-sample standard error (Fleiss, Cohen & Everitt 1969), given from {MIN_JUDGED} "
    "judged answers on"
)
# What each check's two verdicts say, in words: (yes, no)
VERDICTS = {
    "coverage": ("every concept present", "a concept missing"),
    "order": ("in order", "not in order"),
}
NOTHING_JUDGED = "no judged answer: nothing to agree on"


@dataclass(frozen=True)
class Cells:
    """One check's 2x2 table of judged answers: the judge's verdict by ocg's."""

    both: int  # the judge and ocg say yes
    judge_only: int  # the judge says yes, ocg no
    ocg_only: int  # ocg says yes, the judge no
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.judge_only + self.ocg_only + self.neither

    @property
    def agree(self) -> int:
        return self.both + self.neither

    def as_dict(self) -> dict[str, int]:
        return {cell: int(getattr(self, cell)) for cell in CELLS}


def wilson(k: int, n: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of the proportion k / n (n > 0), as fractions."""
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def kappa(c: Cells) -> float | None:
    """Cohen's kappa of a 2x2 table, (po - pe) / (1 - pe), as 2(ad - bc) / ((a+b)(b+d) +
    (a+c)(c+d)) in whole numbers; None where it is 0/0 (no answer, or every answer in one cell
    of the diagonal: chance agreement 1)."""
    a, b, c_, d = c.both, c.judge_only, c.ocg_only, c.neither
    denominator = (a + b) * (b + d) + (a + c_) * (c_ + d)
    return None if denominator == 0 else 2 * (a * d - b * c_) / denominator


def kappa_se(c: Cells, k: float) -> float:
    """The large-sample standard error of kappa `k` (Fleiss, Cohen & Everitt 1969):
    var = (A + B - C) / (n (1 - pe)^2), A = sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2,
    B = (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2, C = (k - pe (1 - k))^2; rows the judge's
    verdict, columns ocg's. Needs chance agreement pe < 1."""
    n = c.n
    p = [[c.both / n, c.judge_only / n], [c.ocg_only / n, c.neither / n]]
    rows = [p[0][0] + p[0][1], p[1][0] + p[1][1]]
    cols = [p[0][0] + p[1][0], p[0][1] + p[1][1]]
    pe = rows[0] * cols[0] + rows[1] * cols[1]
    a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - k)) ** 2 for i in (0, 1))
    b = (1 - k) ** 2 * (p[0][1] * (cols[0] + rows[1]) ** 2 + p[1][0] * (cols[1] + rows[0]) ** 2)
    var = (a + b - (k - pe * (1 - k)) ** 2) / (n * (1 - pe) ** 2)
    return math.sqrt(max(var, 0.0))  # a rounding error below 0 is 0


@dataclass(frozen=True)
class Agreement:
    """One check's agreement between the judge and ocg over the judged answers: the share (% 0-100)
    with its Wilson interval, Cohen's kappa with its interval; each None with its reason in
    `reasons` (key -> why)."""

    check: str  # "coverage" or "order"
    judged: int
    agree: int
    cells: Cells | None  # None: a score set from before the 2x2 counts (the share alone)
    share: float | None = None
    share_low: float | None = None
    share_high: float | None = None
    kappa: float | None = None
    kappa_low: float | None = None
    kappa_high: float | None = None
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def small_sample(self) -> bool:
        return self.judged < MIN_JUDGED

    def record(self) -> dict:
        """As results.json and comparison.json give it (docs/DATA.md): every null with its reason."""
        out = {
            "ocg_column": CHECKS[self.check],
            "judged": self.judged,
            "agree": self.agree,
            "share": self.share,
            "share_low": self.share_low,
            "share_high": self.share_high,
            "kappa": self.kappa,
            "kappa_low": self.kappa_low,
            "kappa_high": self.kappa_high,
            "small_sample": self.small_sample,
            "cells": self.cells.as_dict() if self.cells else None,
        }
        reasons = {k: self.reasons[k] for k, v in out.items() if v is None}
        return {**out, "missing_reason": reasons} if reasons else out


def methods() -> dict:
    """How the intervals are computed, as results.json and comparison.json name it."""
    return {"level": LEVEL, "share_method": SHARE_METHOD, "kappa_method": KAPPA_METHOD}


def _share(agree: int, judged: int) -> dict:
    if judged == 0:
        return {}
    low, high = wilson(agree, judged)
    return {"share": 100.0 * agree / judged, "share_low": 100.0 * low, "share_high": 100.0 * high}


def _constant(check: str, c: Cells) -> str | None:
    """Who gives one verdict for every judged answer, in words; None where both vary."""
    yes, no = VERDICTS[check]
    judge, ocg = c.both + c.judge_only, c.both + c.ocg_only  # answers each says yes of
    judge_says = (yes if judge else no) if judge in (0, c.n) else None
    ocg_says = (yes if ocg else no) if ocg in (0, c.n) else None
    if judge_says and judge_says == ocg_says:
        return f"the judge and ocg both say {judge_says}"
    said = [f"{who} says {v}" for who, v in (("the judge", judge_says), ("ocg", ocg_says)) if v]
    return " and ".join(said) or None


def _kappa(check: str, c: Cells) -> tuple[dict, dict]:
    """Kappa and its interval, and why any of them is None."""
    k = kappa(c)
    constant = _constant(check, c)
    if k is None:
        why = (
            f"undefined: {constant} for every judged answer, so the agreement expected by chance "
            "is 1 and kappa is 0/0"
        )
        return {}, dict.fromkeys(("kappa", "kappa_low", "kappa_high"), why)
    if constant:
        why = (
            f"{constant} for every judged answer: kappa is 0 whatever the other says and its "
            "standard error 0, so an interval would say nothing"
        )
        return {"kappa": k}, dict.fromkeys(("kappa_low", "kappa_high"), why)
    if c.n < MIN_JUDGED:
        why = (
            f"small sample: under {MIN_JUDGED} judged answers kappa's large-sample interval is "
            "not to be trusted (the share's Wilson interval stands)"
        )
        return {"kappa": k}, dict.fromkeys(("kappa_low", "kappa_high"), why)
    if abs(k) == 1:  # no answer on one diagonal (1: no disagreement): a standard error of 0
        why = (
            f"kappa is {k:+.0f}, its bound, where its large-sample standard error is 0: the "
            "interval would be a point (the share's Wilson interval says how sure it is)"
        )
        return {"kappa": k}, dict.fromkeys(("kappa_low", "kappa_high"), why)
    se = kappa_se(c, k)
    return {"kappa": k, "kappa_low": max(-1.0, k - Z * se), "kappa_high": min(1.0, k + Z * se)}, {}


def agreement(check: str, cells: Cells) -> Agreement:
    """One check's agreement from its 2x2 table."""
    if cells.n == 0:
        keys = ("share", "share_low", "share_high", "kappa", "kappa_low", "kappa_high")
        return Agreement(check, 0, 0, cells, reasons=dict.fromkeys(keys, NOTHING_JUDGED))
    values, reasons = _kappa(check, cells)
    return Agreement(
        check,
        cells.n,
        cells.agree,
        cells,
        **_share(cells.agree, cells.n),
        **values,
        reasons=reasons,
    )


def share_only(check: str, agree: int, judged: int, why: str) -> Agreement:
    """The share alone, where the 2x2 table is not at hand (`why` says so for kappa)."""
    reasons = dict.fromkeys(("kappa", "kappa_low", "kappa_high", "cells"), why)
    if judged == 0:
        reasons.update(dict.fromkeys(("share", "share_low", "share_high"), NOTHING_JUDGED))
    return Agreement(check, judged, agree, None, **_share(agree, judged), reasons=reasons)


def from_counts(counts: dict[str, dict[str, int]]) -> list[Agreement]:
    """Each check's agreement from check -> cell -> answers (judge_agreement.cell_counts)."""
    return [agreement(check, Cells(**counts[check])) for check in CHECKS if check in counts]


def records(agreements: list[Agreement], why_missing: str) -> dict:
    """check -> its agreement's record (results.json's and comparison.json's), a check not among
    `agreements` null with `why_missing`."""
    given = {a.check: a.record() for a in agreements}
    out = {check: given.get(check) for check in CHECKS}
    reasons = {check: why_missing for check in CHECKS if check not in given}
    return {**out, "missing_reason": reasons} if reasons else out
