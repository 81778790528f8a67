"""What every part of `ocg verify` (site/verify.py) records with: a broken invariant, the
collector of comparisons, and how a saved value is compared (copied: exactly; re-derived: within
rounding), so each part reports alike."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.files import read_table
from ..core.layout import ReportFolder

RESULTS = ReportFolder(Path(".")).results.name  # results.json, as the layout names it
# A value recomputed by the same functions from the same scores comes back bit for bit; this
# tolerance only absorbs a CSV's decimal round trip and a sum taken in another order (a pooled
# ratio from per-set statistics against one from per-template sums). A tampered value, a p of
# another attainable multiple, is far outside it.
REL_TOLERANCE = 1e-9
ABS_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Broken:
    """One broken invariant: one line of output."""

    invariant: str  # "I1.table1.csv≠results.json"
    where: str  # "models.smollm2-135m-instruct.metrics.perplexity.value"
    detail: str  # "1779.12 (csv) vs 1779.13 (results.json)"

    def line(self) -> str:
        return f"{self.invariant}: {self.where}: {self.detail}"


class Check:
    """Collects comparisons and broken invariants."""

    def __init__(self) -> None:
        self.checked = 0
        self.broken: list[Broken] = []

    def fail(self, invariant: str, where: str, detail: str) -> None:
        self.broken.append(Broken(invariant, where, detail))

    def same(self, invariant: str, where: str, a, b, names=("csv", RESULTS)) -> None:
        """Exact equality of a copied value (NaN and null alike)."""
        self.checked += 1
        if not equal(a, b):
            self.fail(invariant, where, f"{a!r} ({names[0]}) vs {b!r} ({names[1]})")

    def close(self, invariant: str, where: str, a, b, names: tuple[str, str]) -> None:
        """Equality of a re-derived value within REL_TOLERANCE (flags and texts exactly)."""
        self.checked += 1
        if not near(a, b):
            self.fail(invariant, where, f"{a!r} ({names[0]}) vs {b!r} ({names[1]})")


def missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def equal(a, b) -> bool:
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    if isinstance(a, bool | str) or isinstance(b, bool | str):
        return str(a) == str(b) if isinstance(a, str) or isinstance(b, str) else bool(a) == bool(b)
    return float(a) == float(b)


def near(a, b) -> bool:
    """`equal`, numbers within REL_TOLERANCE (infinities equal only to themselves)."""
    a, b = clean(a), clean(b)
    if missing(a) or missing(b) or isinstance(a, bool | str) or isinstance(b, bool | str):
        return equal(a, b)
    x, y = float(a), float(b)
    return x == y or math.isclose(x, y, rel_tol=REL_TOLERANCE, abs_tol=ABS_TOLERANCE)


def clean(v):
    """A CSV cell as Python: NaN stays NaN, numpy scalars become Python's."""
    return v.item() if hasattr(v, "item") else v


def read(report: ReportFolder, name: str) -> pd.DataFrame | None:
    """tables/<name>.csv, or None where it is missing or has no columns (an empty table saved)."""
    path = report.table(name)
    if not path.exists():
        return None
    table = read_table(path)
    return None if len(table.columns) == 0 else table
