"""The blocks of results.json beside Table 1's (docs/DATA.md, “results.json”): Table 4 (`ordered_one_shot`
minus `ordered`, notebook 06) and the forced order (`ordered_constrained` minus `ordered`, and
minus `original`, notebook 12), each from the report's own saved tables as Table 1's block is
(results_file.py), with the same pieces (results_parts.py): per model and metric the value, the
Δ, its bootstrap interval, the paired test of the Δ and, for perplexity, the pooled median and
its Δ beside the mean. A report without a block's table gives the block null, and says why."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..analysis import skew
from ..core.layout import ReportFolder
from ..metrics.registry import metric
from .results_parts import (
    _by_key,
    _delta_test,
    _interval,
    _median,
    _settings,
    _table,
    null_count,
    value_reason,
)


@dataclass(frozen=True)
class Comparison:
    """One block: the saved tables it is read from and the two conditions it compares."""

    key: str  # its key in results.json
    what: str  # its `table` there: what the values are
    notebook: str  # the notebook that saves its tables
    table: str  # per model and metric: value and `delta` (paper_tables.table4, forced_order)
    delta: str  # the table's column of `condition` minus `base`
    intervals: str | None  # the bootstrap intervals of `condition` (None: the notebook saves none)
    tests: str  # the paired tests of the Δ (analysis/deltas.py `tests`)
    condition: str
    base: str
    also: tuple[str, ...] = ()  # further bases the table and the tests hold (`delta_vs_<base>`)
    outcomes: str | None = None  # a table of pooled medians by condition (`<metric> median`)


TABLE4 = Comparison(
    key="table4",
    what="table4: one-shot `ordered_one_shot`, mean over the run's templates, difference from "
    "zero-shot `ordered`",
    notebook="06",
    table="table4",
    delta="delta_vs_zero_shot_ordered",
    intervals="table4_bootstrap_ci",
    tests="table4_paired_test",
    condition="ordered_one_shot",
    base="ordered",
)
FORCED = Comparison(
    key="forced_order",
    what="forced_order: `ordered_constrained` (the order forced by a grammar), mean over the "
    "run's templates, difference from `ordered` (the same prompts decoded freely) and `original`",
    notebook="12",
    table="forced_order",
    delta="delta_vs_ordered",
    intervals=None,
    tests="forced_order_paired_test",
    condition="ordered_constrained",
    base="ordered",
    also=("original",),
    outcomes="forced_order_outcomes",
)
COMPARISONS = (TABLE4, FORCED)


def _tests(table: pd.DataFrame | None, spec: Comparison, base: str) -> dict:
    """The paired tests of `spec.condition` minus `base`, by (model, metric)."""
    if table is not None and {"condition", "base"} <= set(table):
        table = table[(table["condition"] == spec.condition) & (table["base"] == base)]
    return _by_key(table)


def _outcome_median(row: dict, outcomes: pd.DataFrame | None, spec: Comparison) -> dict | None:
    """The pooled median of `condition` and its Δ vs `base` from a table of medians by condition
    (forcing.outcomes' `perplexity median`, over every answer as skew.pooled_medians takes it),
    with skew's rule for a mean the median contradicts; None where the table has no such column."""
    name, column = row["metric"], f"{row['metric']} median"
    if outcomes is None or column not in outcomes:
        return None
    by = outcomes[outcomes["model"] == row["model"]].set_index("condition")[column]
    median, median_base = by.get(spec.condition, float("nan")), by.get(spec.base, float("nan"))
    mean, delta = row["value"], row.get(spec.delta, float("nan"))
    daggers = skew.dagger(name, mean, median) or skew.dagger(name, mean - delta, median_base)
    return {
        "median": median,
        f"median_delta_vs_{spec.base}": median - median_base,
        "median_pooled": True,
        "mean_median_disagree": skew.disagree(delta, median - median_base, daggers),
    }


@dataclass(frozen=True)
class _Read:
    """What one block reads from the report folder once, for every model."""

    cis: dict
    paired: dict  # base -> {(model, metric): test}
    methods: dict
    summary: pd.DataFrame  # the scores' summary, every model
    outcomes: pd.DataFrame | None


def _entry(row: dict, spec: Comparison, read: _Read) -> dict:
    """One metric of one model: value, Δ, interval, paired test(s), n, medians, the paper's."""
    name, model, m = row["metric"], row["model"], metric(row["metric"])
    summary = read.summary
    s = (
        summary[(summary["model"] == model) & (summary["condition"] == spec.condition)]
        if len(summary)
        else summary
    )
    n, n_of = null_count(name, s, row["value"])
    key, method = (model, name), read.methods["paired_test"]
    out = {
        "label": m.label if m else name,
        "value": row["value"],
        f"delta_vs_{spec.base}": row.get(spec.delta),
        "interval": _interval(read.cis.get(key), read.methods["bootstrap"]),
        "delta_test": _delta_test(read.paired[spec.base].get(key), method),
        "n": n,
        "n_of": n_of,
        "higher_is_better": m.higher_is_better if m else None,
    }
    for base in spec.also:
        out[f"delta_vs_{base}"] = row.get(f"delta_vs_{base}")
        out[f"delta_vs_{base}_test"] = _delta_test(read.paired[base].get(key), method)
    if pd.isna(row["value"]):  # why, in words: not scored, 0/0, the scorer's reason
        out["missing_reason"] = {"value": value_reason(name, s, spec.condition)}
    if name in skew.MEDIAN_METRICS:  # the median beside the mean, which a few answers can make
        # a forced-order table saved before its median columns: the outcomes' pooled medians
        pooled = _outcome_median(row, read.outcomes, spec) if "median" not in row else None
        mine = summary[summary["model"] == model] if len(summary) else summary
        if pooled is None and ("median" in row or f"{name}_median" in summary):
            pooled = _median(
                row, mine, name, condition=spec.condition, base=spec.base, also=spec.also
            )
        out.update(pooled or {})
    if pd.notna(row.get("paper_value", float("nan"))):
        out["paper"] = {
            "value": row["paper_value"],
            f"delta_vs_{spec.base}": row.get("paper_delta"),
        }
    return out


def _absent(spec: Comparison, conditions: list[str]) -> str:
    """Why a report has no table for `spec`."""
    lacking = [c for c in (spec.condition, spec.base) if c not in conditions]
    if lacking:
        return f"the run has no `{'` or `'.join(lacking)}` condition (conditions: {conditions})"
    return (
        f"no tables/{spec.table}.csv in this report: notebook {spec.notebook} saves it only where "
        f"a model has both `{spec.condition}` and `{spec.base}` answers"
    )


def block(report: ReportFolder, spec: Comparison, summary: pd.DataFrame) -> dict | None:
    """The block of `spec` from the report's tables; None where its table is not there."""
    table = _table(report, spec.table)
    if table is None:
        return None
    tests = _table(report, spec.tests)
    cis = _table(report, spec.intervals) if spec.intervals else None
    if cis is not None and "condition" in cis:
        cis = cis[cis["condition"] == spec.condition]
    methods = {
        "bootstrap": _settings(report, spec.intervals) if spec.intervals else None,
        "paired_test": _settings(report, spec.tests),
    }
    read = _Read(
        cis=_by_key(cis),
        paired={base: _tests(tests, spec, base) for base in (spec.base, *spec.also)},
        methods=methods,
        summary=summary,
        outcomes=_table(report, spec.outcomes) if spec.outcomes else None,
    )
    models: dict[str, dict] = {}
    for row in table.to_dict("records"):
        models.setdefault(row["model"], {})[row["metric"]] = _entry(row, spec, read)
    out = {
        "table": spec.what,
        "condition": spec.condition,
        "base": spec.base,
        **methods,
        "models": models,
    }
    saved = f"notebook {spec.notebook} saved no tables/{{}}.csv with its settings in this report"
    reasons = {
        "bootstrap": saved.format(spec.intervals)
        if spec.intervals
        else f"notebook {spec.notebook} computes no interval of `{spec.condition}` alone: each "
        "Δ's interval is in its test (`delta_test`)",
        "paired_test": saved.format(spec.tests),
    }
    if missing := {k: why for k, why in reasons.items() if methods[k] is None}:
        out["missing_reason"] = missing
    return out


def comparisons(report: ReportFolder, conditions: list[str], summary: pd.DataFrame) -> dict:
    """{key: block or None} for each comparison, with `missing_reason` {key: why} for a None."""
    out: dict = {spec.key: block(report, spec, summary) for spec in COMPARISONS}
    reasons = {s.key: _absent(s, conditions) for s in COMPARISONS if out[s.key] is None}
    return {**out, "missing_reason": reasons} if reasons else out
