"""I4 of `ocg verify` (site/verify.py): the numbers of Tables 1 and 4 and the forced order
re-derived from the report's own pinned score sets (`scores/<model>/`, ocg/scoring/pinned.py)
with the functions their notebooks computed them with (03, 06, 12), and compared with
tables/*.csv. The CSVs are what the page, the LaTeX and results.json are checked against (I1), so
a number changed consistently in every view is caught here, and only here.

Re-derived: each value (the mean over templates, a pooled metric as one ratio), each Δ of means,
each median (pooled over every scored answer) and median Δ (the median of the paired per-answer
differences, skew.MEDIAN_CONVENTION) with its ‡ and disagreement flags; each bootstrap interval,
each paired test's interval, exact (or sampled) sign-flip p and Holm's p, by the resampling the
table's provenance records (unit, draws, seed, sign vectors drawn). Not re-derived, and said so in
verify.json: a table whose provenance records no resampling settings (its seed unknown), and every
table where the report holds no pinned score sets (a sweep's analyses read the sweep's scores)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ..analysis import deltas, paper_tables, skew, uncertainty
from ..core.files import read_json
from ..core.layout import ReportFolder
from .verify_checks import Check, clean, missing, read

D1, D4 = "delta_vs_original_commongen", "delta_vs_zero_shot_ordered"
ONE_SHOT = "ordered_one_shot"
NOT_COMPARED = ("interval",)  # text made from ci_low, ci_high, unit and n, which are compared


@dataclass(frozen=True)
class Inputs:
    """What a table is computed from: the scores as its notebook loaded them, and the
    resampling its provenance records (None: a table of no resampling, or none recorded)."""

    summary: pd.DataFrame
    answers: pd.DataFrame
    groups: pd.DataFrame
    resampling: uncertainty.Resampling | None
    n_perm: int


def _table1(x: Inputs) -> pd.DataFrame:
    return skew.with_medians(paper_tables.table1(x.summary), x.answers, "ordered", "original", D1)


def _table4(x: Inputs) -> pd.DataFrame:
    t = paper_tables.table4(x.summary)
    return t if t.empty else skew.with_medians(t, x.answers, ONE_SHOT, "ordered", D4)


def _forced(x: Inputs) -> pd.DataFrame:
    t = paper_tables.forced_order(x.summary)
    bases = {paper_tables.ASKED: "delta_vs_ordered", paper_tables.UNORDERED: "delta_vs_original"}
    return t if t.empty else skew.with_medians(t, x.answers, paper_tables.FORCED, bases)


def _resampling(x: Inputs) -> uncertainty.Resampling:
    assert x.resampling is not None  # DERIVED's `seeded` tables only
    return x.resampling


def _table1_ci(x: Inputs) -> pd.DataFrame:
    if "ordered" not in set(x.summary["condition"]):
        return pd.DataFrame()
    found = [
        uncertainty.bootstrap_ci(x.answers, x.groups, m, "ordered", _resampling(x))
        for m in sorted(x.summary["model"].unique())
    ]
    return pd.concat(found, ignore_index=True) if found else pd.DataFrame()


def _table1_tests(x: Inputs) -> pd.DataFrame:
    both = [
        m
        for m in sorted(x.summary["model"].unique())
        if {"ordered", "original"} <= set(x.summary.loc[x.summary["model"] == m, "condition"])
    ]
    found = [
        uncertainty.paired_test(x.answers, x.groups, m, _resampling(x), n_perm=x.n_perm)
        for m in both
    ]
    return pd.concat([*found, pd.DataFrame()], ignore_index=True)


def _table4_ci(x: Inputs) -> pd.DataFrame:
    return deltas.intervals(x.answers, x.groups, ONE_SHOT, _resampling(x), table="table4")


def _table4_tests(x: Inputs) -> pd.DataFrame:
    pair = (ONE_SHOT, "ordered")
    return deltas.tests(x.answers, x.groups, pair, _resampling(x), n_perm=x.n_perm, table="table4")


def _forced_tests(x: Inputs) -> pd.DataFrame:
    found = [
        deltas.tests(
            x.answers,
            x.groups,
            (paper_tables.FORCED, base),
            _resampling(x),
            n_perm=x.n_perm,
            table="table4",
        )
        for base in (paper_tables.ASKED, paper_tables.UNORDERED)
    ]
    return pd.concat(found, ignore_index=True)


@dataclass(frozen=True)
class Derived:
    """A saved table, the function that computes it as its notebook does, and its row key."""

    name: str
    compute: Callable[[Inputs], pd.DataFrame]
    key: tuple[str, ...] = ("model", "metric")
    seeded: bool = False  # computed by resampling: needs the settings its provenance records


DERIVED = (
    Derived("table1", _table1),
    Derived("table4", _table4),
    Derived("forced_order", _forced),
    Derived("table1_bootstrap_ci", _table1_ci, seeded=True),
    Derived("table1_paired_test", _table1_tests, seeded=True),
    Derived("table4_bootstrap_ci", _table4_ci, seeded=True),
    Derived("table4_paired_test", _table4_tests, seeded=True),
    Derived("forced_order_paired_test", _forced_tests, ("model", "metric", "base"), seeded=True),
)


def _provenance(report: ReportFolder, name: str) -> dict:
    path = report.table_provenance(name)
    try:
        doc = read_json(path) if path.exists() else {}
    except Exception:  # noqa: BLE001 (unreadable: as if absent; I7 checks the folder is whole)
        doc = {}
    return doc if isinstance(doc, dict) else {}


def _models(report: ReportFolder) -> list[str] | None:
    """The models the notebooks loaded (a table's provenance `scored_models`), None: every one."""
    for d in DERIVED:
        scored = _provenance(report, d.name).get("scored_models")
        if isinstance(scored, dict) and scored:
            return list(scored)
    return None


def load(report: ReportFolder):
    """The pinned scores as the analysis notebooks loaded them (their models, never mixed:
    tables on the instances the models share), or the reason they cannot be (a str)."""
    from ..results.scores import load_scores

    if not report.scores.is_dir() or not any(p.is_dir() for p in report.scores.iterdir()):
        return "the report holds no pinned score sets (scores/<model>/)"
    try:
        return load_scores(report.scores, _models(report), allow_mixed=False, allow_incomplete=True)
    except Exception as exc:  # noqa: BLE001 (said in one line: the rest of verify still runs)
        return f"its pinned score sets cannot be read as the notebooks read them: {exc}"


def _settings(report: ReportFolder, name: str) -> tuple[uncertainty.Resampling, int] | None:
    boot = _provenance(report, name).get("bootstrap")
    if not isinstance(boot, dict) or "seed" not in boot or "n_boot" not in boot:
        return None
    resampling = uncertainty.Resampling(
        str(boot.get("unit", "sets")),
        int(boot["n_boot"]),
        int(boot["seed"]),
        float(boot.get("level", 0.95)),
    )
    return resampling, int(boot.get("n_perm", 10000))


def rederive(report: ReportFolder, scores, c: Check) -> list[str]:
    """I4 on every table of DERIVED the report saved; what was not re-derived, one line each."""
    saved = [(d, t) for d in DERIVED if (t := read(report, d.name)) is not None]
    if isinstance(scores, str):
        return [f"tables/{d.name}.csv not re-derived: {scores}" for d, _ in saved]
    notes = []
    for d, table in saved:
        settings = _settings(report, d.name) if d.seeded else None
        if d.seeded and settings is None:
            notes.append(
                f"tables/{d.name}.csv not re-derived: its provenance records no bootstrap "
                "settings (unit, draws, seed)"
            )
            continue
        resampling, n_perm = settings if settings is not None else (None, 10000)
        inputs = Inputs(scores.summary, scores.answers, scores.groups, resampling, n_perm)
        compare(d, table, d.compute(inputs), c)
    return notes


def _keyed(table: pd.DataFrame, key: tuple[str, ...]) -> dict[tuple, dict]:
    if table.empty or not set(key) <= set(table):
        return {}
    return {
        tuple(r[k] for k in key): {k: clean(v) for k, v in r.items()}
        for r in table.to_dict("records")
    }


def compare(d: Derived, saved: pd.DataFrame, derived: pd.DataFrame, c: Check) -> None:
    """I4: every row and column both hold, the saved value against the re-derived one; a row
    only one of them holds is broken."""
    inv = f"I4.{d.name}.csv≠scores"
    mine, theirs = _keyed(saved, d.key), _keyed(derived, d.key)
    columns = [
        k for k in derived.columns if k in saved.columns and k not in (*d.key, *NOT_COMPARED)
    ]
    for key in sorted({*mine, *theirs}, key=str):
        where = f"tables/{d.name}.csv " + " / ".join(map(str, key))
        if key not in theirs or key not in mine:
            c.checked += 1
            lacks = "a row of the CSV the scores do not give"
            c.fail(
                inv, where, lacks if key not in theirs else "a row the scores give, the CSV lacks"
            )
            continue
        for column in columns:
            a, b = mine[key][column], theirs[key][column]
            if missing(a) and missing(b):
                c.checked += 1
                continue
            c.close(inv, f"{where}.{column}", a, b, ("csv", "scores"))
