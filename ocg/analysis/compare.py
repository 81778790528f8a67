"""Do two reports hold the same tables? For refactors ("behaviour unchanged") and reruns.

Compares every tables/*.csv of two report folders: the same files, columns and rows, and every
number equal within a tolerance (missing values equal each other). Provenance sidecars and
LaTeX are left out: they name dates and commits. A folder that is not a finished report (none
there, no tables, a run that failed or is still building) is an error, never "identical".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import OcgInputError
from ..core.files import read_table
from ..core.layout import ReportFolder
from ..records import ReportStamp, ReportStatus


def check_finished(folder: Path) -> None:
    """An error unless `folder` is a report whose run ended well (or one from before report.json)."""
    path = ReportFolder(folder).state
    if not path.exists():
        return
    stamp = ReportStamp.read(path)
    if stamp.state != ReportStatus.DONE:
        why = stamp.reason or f"PID {stamp.pid} on {stamp.host} since {stamp.started_utc}"
        raise OcgInputError(
            str(folder), f"an unfinished report ({stamp.state}: {why.splitlines()[0]})"
        )


def _tables(folder: Path) -> Path:
    """`folder`/tables of a finished report, else an error naming the folder."""
    if not folder.is_dir():
        raise OcgInputError(str(folder), "no such report folder")
    check_finished(folder)
    tables = ReportFolder(folder).tables
    if not tables.is_dir() or not any(tables.glob("*.csv")):
        raise OcgInputError(
            str(folder),
            "no tables/*.csv here; expected a report folder (outputs/reports/<run name>)",
        )
    return tables


def _differing(name: str, ta: pd.DataFrame, tb: pd.DataFrame, tolerance: float) -> list[str]:
    """One line per shared column whose cells differ between two tables of the same rows (aligned
    by position or by key: the first row named by its index label)."""
    lines = []
    for col in [c for c in ta.columns if c in tb.columns]:
        x, y = ta[col], tb[col]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
            bad = ~(np.isclose(x, y, rtol=0, atol=tolerance) | (x.isna() & y.isna()))
        else:
            bad = ~((x.astype(str) == y.astype(str)) | (x.isna() & y.isna()))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            lines.append(
                f"{name}: column {col!r} differs in {int(bad.sum())} row(s), first row "
                f"{ta.index[i]}: {x.iloc[i]!r} vs {y.iloc[i]!r}"
            )
    return lines


def row_keys(ta: pd.DataFrame, tb: pd.DataFrame) -> list[str] | None:
    """The text columns both tables hold, where they name each row of either table once (a table
    of models, metrics and conditions): the rows' key. None where there is none."""
    keys = [
        c
        for c in ta.columns
        if c in tb.columns
        and not (pd.api.types.is_numeric_dtype(ta[c]) and pd.api.types.is_numeric_dtype(tb[c]))
    ]
    if not keys or ta.duplicated(keys).any() or tb.duplicated(keys).any():
        return None
    return keys


def _keyed(name: str, ta: pd.DataFrame, tb: pd.DataFrame, keys: list[str], tolerance: float):
    """Tables of different rows compared by their key: the rows only one holds, then the cells of
    the rows both hold."""

    def by_key(t: pd.DataFrame) -> pd.DataFrame:
        named = [
            ", ".join(f"{k}={v}" for k, v in zip(keys, row)) for row in t[keys].astype(str).values
        ]
        return t.set_axis(pd.Index(named), axis=0)

    a, b = by_key(ta), by_key(tb)
    lines = []
    for side, mine, other in (("A", a, b), ("B", b, a)):
        only = [k for k in mine.index if k not in other.index]
        if only:
            lines.append(f"{name}: {len(only)} row(s) only in {side}, first {only[0]}")
    both = [k for k in a.index if k in b.index]
    return lines + _differing(name, a.loc[both], b.loc[both], tolerance)


def compare_reports(a: str | Path, b: str | Path, tolerance: float = 1e-9) -> list[str]:
    """Differences between the tables of two report folders, one line each (empty: identical).
    Tables of the same number of rows are compared row by row; of another number, by the text
    columns that name each row (`row_keys`), or not cell by cell where none do."""
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise OcgInputError("--tolerance", f"got {tolerance}; expected a finite number >= 0")
    a, b = _tables(Path(a)), _tables(Path(b))
    names_a, names_b = {p.name for p in a.glob("*.csv")}, {p.name for p in b.glob("*.csv")}
    problems = [f"only in {a}: {n}" for n in sorted(names_a - names_b)]
    problems += [f"only in {b}: {n}" for n in sorted(names_b - names_a)]
    for name in sorted(names_a & names_b):
        ta, tb = read_table(a / name), read_table(b / name)
        only_a = [c for c in ta.columns if c not in tb.columns]
        only_b = [c for c in tb.columns if c not in ta.columns]
        if only_a or only_b:  # the shared columns are still compared below
            problems.append(f"{name}: columns only in A {only_a}, only in B {only_b}")
        if len(ta) == len(tb):
            problems += _differing(name, ta, tb, tolerance)
            continue
        keys = row_keys(ta, tb)
        problems.append(
            f"{name}: {len(ta)} rows vs {len(tb)} rows"
            + ("" if keys else " (no text columns name each row once: cells not compared)")
        )
        if keys:
            problems += _keyed(name, ta, tb, keys, tolerance)
    return problems
