"""`ocg compare`'s page and JSON: two models side by side (ocg/analysis/versus.py), written to
outputs/comparisons/<A>~<model A>~vs~<B>~<model B>/ as index.html (templates/comparison.html) and comparison.json."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis import skew
from ..analysis.agreement import METHOD_NOTE, methods, records
from ..analysis.sample_size import HALF_WIDTH_OF_DELTA, POWER
from ..analysis.uncertainty import MIN_SETS, units
from ..analysis.versus import AGGREGATION, MAX_LISTED, Comparison, Side
from ..analysis.versus_medians import COLUMNS as MEDIAN_COLUMNS
from ..core.files import atomic_path, write_json
from ..core.layout import ComparisonFolder
from ..metrics.registry import label, metric
from ..results.designs import describe_design
from .render import render
from .results_reasons import SMALL

# A small sample's tests keep their differences, not these (as results.json and the landing page).
UNSHOWN = ("ci_low", "ci_high", "p_value", "p_holm")
_REASONS = {  # why a test's value is null, where it is not a small sample's
    "ci_low": "no bootstrap interval: the difference has no value on the resampled sets",
    "ci_high": "no bootstrap interval: the difference has no value on the resampled sets",
    "p_value": "no paired test: the difference has no value",
    "p_holm": "no paired test: the difference has no value",
    "median_a": "A scored none of the shared answers with this metric",
    "median_b": "B scored none of the shared answers with this metric",
    "median_difference": "no shared answer scored by both with this metric",
}
_PLANNING = ("per_set_sd", "interval_half_width", "sets_for_interval", "sets_for_power")


def _number(value) -> float | None:
    """A JSON number, or null for a missing one (JSON has no NaN)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


NOT_A_REFERENCE = "a model under study, not a reference entry"
NO_REFERENCE = "neither side is a reference entry"


def _side(side: Side) -> dict:
    return {
        "report": side.name,
        "folder": str(side.folder),
        "model": side.model,
        "models_in_report": side.models,
        "instances": side.n,
        "design": side.design,
        "reference": side.reference,
        **({"missing_reason": {"reference": NOT_A_REFERENCE}} if side.reference is None else {}),
        "generation": side.made.to_json(),
    }


def reference_note(c: Comparison) -> str | None:
    """What a reference side's numbers are (docs/METHODS.md, "Reference rows"), or None where
    both sides are models under study: one replayed sentence per concept set stands for every
    instance of the set, asked no order, so a difference against it is not one between two
    models asked the same prompts."""
    refs = [(k, s) for k, s in (("A", c.a), ("B", c.b)) if s.reference is not None]
    if not refs:
        return None
    who = " and ".join(f"{k} ({s.model}) is a reference entry ({s.reference})" for k, s in refs)
    return (
        f"{who}: one sentence per concept set, written elsewhere and asked no order, answers "
        "every template, permutation and sample of its set; its values are over those repeated "
        'sentences, not a model\'s answers to these prompts (docs/METHODS.md, "Reference rows")'
    )


NOT_DECLARED = "the metric is not declared in the process that wrote this file"
_DECLARED = ("label", "metric_unit", "higher_is_better")


def _value_reason(key: str, row: dict) -> str:
    """Why a side's value, or the difference, is null on the shared answers of the condition."""
    c, m = row.get("condition"), metric(row["metric"])
    if key in ("value_a", "value_b"):
        side = key[-1].upper()
        if m is not None and m.pooled:
            return (
                f"none of {side}'s shared answers in `{c}` has {m.denominator} (every concept): "
                f"{m.label} is a share of those, 0/0, so no value (not 0)"
            )
        return f"no shared answer of {side} in `{c}` has a value of this metric"
    if key == "difference":
        return "A or B has no value of this metric on the shared answers (see value_a, value_b)"
    return "not computed"


def _test(row: dict) -> dict:
    """A test as comparison.json gives it: the median columns on a skewed metric's row only; on a
    small sample no bounds and no p-value; each null with its `missing_reason`."""
    medians = row["metric"] in skew.MEDIAN_METRICS
    out = {
        k: _number(v) if isinstance(v, float) else v
        for k, v in row.items()
        if medians or k not in MEDIAN_COLUMNS
    }
    if medians:
        out["median_pairs"] = int(row["median_pairs"])
    if "unit" in out:  # what was resampled (sets, clusters), not the metric's own unit
        out["resampling_unit"] = out.pop("unit")
    m = metric(row["metric"])
    out.update(
        label=m.label if m else None,
        metric_unit=m.unit if m else None,
        higher_is_better=m.higher_is_better if m else None,
    )
    small = bool(row.get("small_sample", False))
    if small:
        out.update(dict.fromkeys(UNSHOWN))
    planning = out.pop("sets_needed_reason", None) or "not computed"
    for k in ("sets_for_interval", "sets_for_power", "sets_with_difference"):
        if isinstance(v := out.get(k), (int, float)):  # counts: a NaN-padded column is float
            out[k] = int(v)
    reasons = {
        k: SMALL
        if small and k in UNSHOWN
        else planning
        if k in _PLANNING
        else _REASONS.get(k) or (NOT_DECLARED if k in _DECLARED else _value_reason(k, row))
        for k, v in out.items()
        if v is None
    }
    return {**out, "missing_reason": reasons} if reasons else out


NO_JUDGE_METRIC = "no judge metric is compared (both sides must hold one)"
NO_CHECKS = "ocg's coverage (all_present, in_order) was not scored beside this side's judge"


def _judge_agreement(c: Comparison) -> dict | None:
    """comparison.json's `judge_agreement`: per side its judge against ocg's checks, or None."""
    if c.judge is None:
        return None
    return {
        "over": "the shared answers each side's judge judged, every condition pooled",
        "a": records(c.judge["a"], NO_CHECKS),
        "b": records(c.judge["b"], NO_CHECKS),
        **methods(),
    }


# 2: a test's `unit` is `resampling_unit`; each test gives its metric's label, metric_unit and
# higher_is_better (as results.json does); every null's reason is its own.
# 3: each side's `reference` (its source, or null) and `generation` (model id, revision,
# dtype, quantisation, decoding); `note` where a side is a reference; `aggregation`: what the
# values, intervals, tests and medians are computed on (versus.py); each test the concept sets
# an interval of ±|Δ|/2 and 80% power would need (analysis/sample_size.py); the scoring
# differences of the families compared only.
FORMAT_VERSION = 3


def comparison_json(c: Comparison) -> dict:
    """Everything the page shows, machine-readable (docs/DATA.md, "ocg compare")."""
    tests = [_test(row) for row in c.tests.to_dict(orient="records")]
    judge = _judge_agreement(c)
    note = reference_note(c)
    reasons = {
        **({"note": NO_REFERENCE} if note is None else {}),
        **({"judge_agreement": NO_JUDGE_METRIC} if judge is None else {}),
    }
    return {
        "format_version": FORMAT_VERSION,
        "a": _side(c.a),
        "b": _side(c.b),
        "note": note,
        "shared": {
            "instances": c.shared,
            "concept_sets": c.shared_sets,
            "conditions": c.conditions,
        },
        "difference": "A minus B",
        "aggregation": dict(AGGREGATION),
        **c.resampling.settings(
            paired_test="two-sided sign flip of concept sets, Holm per condition"
        ),
        "tests": tests,
        "verdicts_differ": {
            "n": c.n_differ,
            "of": c.n_verdicts,
            "listed": len(c.differ),
            "answers": c.differ.to_dict(orient="records"),
        },
        "scoring_differences": c.scoring,
        "judge_agreement": judge,
        **({"missing_reason": reasons} if reasons else {}),
    }


def _value(row, side: str) -> str:
    """'2085.38 ‡ (median 57.28)' for a skewed metric's side, else '2085.38'."""
    value = row[f"value_{side}"]
    if pd.isna(value):
        return "–"
    median = row.get(f"median_{side}", float("nan"))
    if row["metric"] not in skew.MEDIAN_METRICS or pd.isna(median):
        return f"{value:.2f}"
    return f"{value:.2f}{' ‡' if row[f'dagger_{side}'] else ''} (median {median:.2f})"


def _difference(row) -> str:
    """'-6835.57 (median Δ +1.20)', flagged where the mean and the median disagree."""
    d, median = row["difference"], row.get("median_difference", float("nan"))
    if pd.isna(d):
        return "–"
    if row["metric"] not in skew.MEDIAN_METRICS or pd.isna(median):
        return f"{d:+.2f}"
    flag = "; mean and median disagree" if row["mean_median_disagree"] else ""
    return f"{d:+.2f} (median Δ {median:+.2f}{flag})"


def _table(tests: pd.DataFrame) -> pd.DataFrame:
    """The tests as a reader reads them: labels, A, B, A - B with its interval, p and n; a skewed
    metric's medians beside its means; on a small sample no interval and no p-value."""
    if tests.empty:
        return tests
    rows = tests.to_dict(orient="records")
    small = [bool(r["small_sample"]) for r in rows]
    n = [units(int(r["n"]), r["unit"]) for r in rows]
    return pd.DataFrame(
        {
            "condition": tests["condition"],
            "metric": tests["metric"].map(label),
            "A": [_value(r, "a") for r in rows],
            "B": [_value(r, "b") for r in rows],
            "A − B": [_difference(r) for r in rows],
            "95% interval": [
                f"small sample ({k} < {MIN_SETS})"
                if s
                else f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
                for r, s, k in zip(rows, small, n)
            ],
            "p": ["–" if s else f"{r['p_value']:.4g}" for r, s in zip(rows, small)],
            "p (Holm)": ["–" if s else f"{r['p_holm']:.4g}" for r, s in zip(rows, small)],
            "n": n,
            "test": ["–" if s else r["p_method"] for r, s in zip(rows, small)],
            "sets needed: ±|Δ|/2 · 80% power": [_needed(r) for r in rows],
        }
    ).set_index("condition")


def _needed(row) -> str:
    """'38 · 56': the concept sets for an interval of ±|Δ|/2 and for 80% power, or '–'."""
    a, b = row.get("sets_for_interval"), row.get("sets_for_power")
    if a is None or b is None or pd.isna(a) or pd.isna(b):
        return "–"
    return f"{int(a):,} · {int(b):,}"


def _disagreements(tests: pd.DataFrame) -> list[tuple[str, str, float, float]]:
    """(condition, metric label, mean difference, median difference) where the two disagree."""
    if "mean_median_disagree" not in tests:
        return []
    rows = tests[tests["mean_median_disagree"].astype(bool)]
    return [
        (r["condition"], label(r["metric"]), float(r["difference"]), float(r["median_difference"]))
        for r in rows.to_dict(orient="records")
    ]


@dataclass(frozen=True)
class DifferRow:
    """One shared answer whose order verdicts differ, as the page lays it out: a short set label
    (the full id in its title), where it was asked, the concepts, and each side's answer."""

    set_label: str  # 'set 3': the set's place among the listed sets, sorted by id
    set_id: str
    where: str  # 'ordered, template 2, permutation 5'
    concepts: str  # in the asked order
    a_in_order: bool
    a_answer: str
    b_in_order: bool
    b_answer: str


def differ_rows(differ: pd.DataFrame) -> list[DifferRow]:
    """The listed answers, each set named by a short label instead of its 32-character id."""
    if differ.empty:
        return []
    labels = {s: f"set {i}" for i, s in enumerate(sorted(differ["set_id"].unique()), start=1)}
    rows = []
    for r in differ.to_dict(orient="records"):
        where = [str(r["condition"]), f"template {r['template_id']}"]
        where.append(f"permutation {r['perm_index']}")
        if "sample" in r and not pd.isna(r["sample"]):
            where.append(f"sample {int(r['sample'])}")
        rows.append(
            DifferRow(
                set_label=labels[r["set_id"]],
                set_id=str(r["set_id"]),
                where=", ".join(where),
                concepts=" → ".join(str(r["concepts"]).split()),
                a_in_order=bool(r["in_order_a"]),
                a_answer=str(r["answer_a"]),
                b_in_order=bool(r["in_order_b"]),
                b_answer=str(r["answer_b"]),
            )
        )
    return rows


def generation_differs(c: Comparison) -> list[str]:
    """The generation settings besides the model in which the sides differ (both recorded)."""
    a, b = c.a.made, c.b.made
    return [
        f
        for f in ("revision", "dtype", "quantization", "decoding")
        if getattr(a, f) is not None
        and getattr(b, f) is not None
        and getattr(a, f) != getattr(b, f)
    ]


def write_comparison(c: Comparison, folder: str | Path) -> tuple[Path, Path]:
    """index.html and comparison.json of a comparison, in `folder` (made if missing)."""
    where = ComparisonFolder(Path(folder))
    where.folder.mkdir(parents=True, exist_ok=True)
    data = write_json(where.data, comparison_json(c))
    page = render(
        "comparison.html",
        c=c,
        design_a=describe_design(c.a.design),
        design_b=describe_design(c.b.design),
        tests=_table(c.tests),
        differ=differ_rows(c.differ) if len(c.differ) else None,
        generation_differs=generation_differs(c),
        half_width=HALF_WIDTH_OF_DELTA,
        power=POWER,
        max_listed=MAX_LISTED,
        min_sets=MIN_SETS,
        disagree=_disagreements(c.tests),
        any_small=bool(len(c.tests)) and bool(c.tests["small_sample"].any()),
        ppl_over=skew.PPL_MEAN_OVER_MEDIAN,
        data=where.data.name,
        judge_method=METHOD_NOTE,
        note=reference_note(c),
        aggregation=AGGREGATION,
    )
    with atomic_path(where.index) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return where.index, data
