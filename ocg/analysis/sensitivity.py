"""How much three choices the paper leaves open move Table 1 (docs/METHODS.md, "Sensitivity").

For each model, Table 1's numbers (`ordered`, averaged over templates, Ordered Rate pooled)
recomputed under:
- every concept-matching rule ocg knows (CommonGen's lemma rule among them), and both readings
  of the order check: ours (some increasing sequence of matches: a concept mentioned twice can
  be matched at its later mention) and "first occurrences only";
- perplexity averaged over answers as the arithmetic mean (the paper's), the median and the
  geometric mean, each per template and then averaged over templates, as Table 1 averages, and
  the median over every answer at once (the one Tables 1 and 4 show beside the mean);
- SLOR as scored (per LM token, no credit for a word wordfreq lacks), per word, and with the
  former floor of 1e-9 for such a word (metrics/slor.py);
- the answers that copy the concept list (`copies_list`, ocg/metrics/listcopy.py) excluded on
  both sides, or counted as failures: w/o, w/, Ordered Rate and their Δ vs `original`
  (analysis/copies.py), with the answers each stands on.
Each beside the default (the value Table 1 shows). The verdicts come from the columns scoring
stores for every rule (ocg.metrics.matching.VARIANT_COLUMNS): no second spaCy pass. The coverage
rows are computed in coverage_variants.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics.matching import DEFAULT_RULE
from ..metrics.registry import label
from . import copies
from .coverage_variants import (
    POS_CHOICE,
    READING_LABELS,
    RULE_LABELS,
    coverage_table1,
    long_row,
    matching_rows,
    ordered_counts,
    pos_correct_rows,
    without_copies_rows,
)

COLUMNS = [
    "model",
    "metric",
    "choice",
    "variant",
    "value",
    "default",
    "shift",
    "n_answers",
    "delta",
    "default_delta",
    "n_original",
]  # the last three: list-copy rows (analysis/copies.py); `delta`, `default_delta` SLOR's too


def _geometric_mean(values: pd.Series) -> float:
    return float(np.exp(np.log(values).mean())) if len(values) else np.nan


POOLED_MEDIAN = "median over every answer"  # what Tables 1 and 4 show beside the mean (skew.py)
PERPLEXITY_AVERAGES = {
    "mean (the paper's)": ("mean", False),
    POOLED_MEDIAN: ("median", True),
    "median per template, averaged over templates": ("median", False),
    "geometric mean": (_geometric_mean, False),
}  # label -> (average, pooled over templates rather than per template then averaged)


def _perplexity(answers: pd.DataFrame, how, pooled: bool = False) -> pd.Series:
    """Per model: perplexity averaged over answers by `how`, per template, then over templates
    (as Table 1 averages), or over every answer at once (`pooled`)."""
    a = answers[(answers["condition"] == "ordered") & answers["perplexity"].notna()]
    if pooled:
        return a.groupby("model", sort=True)["perplexity"].agg(how)
    per_template = a.groupby(["model", "template_id"], sort=True)["perplexity"].agg(how)
    return per_template.groupby(level="model").mean()


def _perplexity_rows(answers: pd.DataFrame) -> list[dict]:
    """Per model: `ordered` perplexity under each average (PERPLEXITY_AVERAGES)."""
    default = _perplexity(answers, "mean")
    n = ordered_counts(answers[answers["perplexity"].notna()])
    return [
        long_row(
            model,
            "perplexity",
            ("perplexity average", label),
            value,
            default[model],
            n=int(n.get(model, 0)),
        )
        for label, (how, pooled) in PERPLEXITY_AVERAGES.items()
        for model, value in _perplexity(answers, how, pooled).items()
    ]


SLOR_VARIANTS = {
    "per LM token, no credit for a word wordfreq lacks (ours)": "slor",
    "per word": "slor_per_word",
    "a word wordfreq lacks at frequency 1e-9 (former)": "slor_oov_floor",
}  # metrics/slor.py VARIANTS: how SLOR treats an unknown word, and its unit


def _slor_rows(answers: pd.DataFrame) -> list[dict]:
    """Per model: `ordered` SLOR under each variant (SLOR_VARIANTS), per template, then over
    templates, as Table 1 averages; with its Δ vs `original` under the same variant, averaged
    alike (`delta`), beside Table 1's Δ (`default_delta`)."""

    def averaged(column: str, condition: str = "ordered") -> pd.Series:
        a = answers[answers["condition"] == condition]
        if a.empty or column not in a:
            return pd.Series(dtype=float)
        return (
            a.groupby(["model", "template_id"], sort=True)[column]
            .mean()
            .groupby(level="model")
            .mean()
        )

    default = averaged("slor")
    default_delta = default - averaged("slor", "original").reindex(default.index)
    n = ordered_counts(answers[answers["slor"].notna()])
    rows = []
    for name, column in SLOR_VARIANTS.items():
        base = averaged(column, "original")
        for model, value in averaged(column).items():
            row = long_row(
                model, "slor", ("SLOR", name), value, default[model], n=int(n.get(model, 0))
            )
            row["delta"] = value - base.get(model, float("nan"))
            row["default_delta"] = default_delta.get(model, float("nan"))
            rows.append(row)
    return rows


SINGLE_METRIC_PARTS = ("perplexity", "slor")
COMMONGEN_CHOICE = (
    f"matching: {RULE_LABELS['commongen_lemma']}"  # a row per model, a column per variant
)


def table1_sensitivity(answers: pd.DataFrame) -> pd.DataFrame:
    """Long table (COLUMNS): one row per (model, Table 1 metric, variant), with the default value
    (what Table 1 shows) and the shift from it. Models scored before every rule's verdicts were
    stored get perplexity rows only (rescore them for the rest)."""
    if "ordered" not in set(answers["condition"]):
        return pd.DataFrame(columns=COLUMNS)
    rows = []
    if {"all_present", "in_order"} <= set(answers.columns):
        default = coverage_table1(answers, "all_present", "in_order")
        rows += matching_rows(answers, default)
        rows += pos_correct_rows(answers, default)
        rows += without_copies_rows(answers, default)
    if "perplexity" in answers:
        rows += _perplexity_rows(answers)
    if set(SLOR_VARIANTS.values()) <= set(answers.columns):
        rows += _slor_rows(answers)
    return pd.DataFrame(rows, columns=COLUMNS)


def wide(long: pd.DataFrame, part: str = "coverage") -> pd.DataFrame:
    """Display form, the default first. `coverage`: a row per (model, metric), a column per
    (matching rule, order reading); `perplexity`: a row per model, a column per average;
    `slor`: a row per model, a column per SLOR variant; `copies`: Table 1 without the list copies,
    each value with its Δ (analysis/copies.py)."""
    if part == "copies":
        return copies.wide(long)
    single = part in SINGLE_METRIC_PARTS
    long = long[
        (long["metric"] == part if single else ~long["metric"].isin(SINGLE_METRIC_PARTS))
        & (long["choice"] != copies.CHOICE)
    ]
    if long.empty:
        return pd.DataFrame()
    index = ["model"] if single else ["model", "metric"]
    long = long.assign(
        metric=long["metric"].map(label),
        choice=long["choice"].str.replace("matching: ", "matching by ", regex=False),
        variant=long["variant"].str.replace("order: ", "order as ", regex=False),
    )
    columns = ["variant"] if single else ["choice", "variant"]
    values = long.pivot_table(index=index, columns=columns, values="value", sort=False)
    default = long.groupby(index, sort=False)["default"].first()
    if not single:
        default = default.to_frame(("default (Table 1)", ""))
    else:
        default = default.rename("default (Table 1)")
    out = pd.concat([default, values], axis=1)
    if part == "slor" and "delta" in long and long["delta"].notna().any():
        # each value with its Δ vs original under the same variant, Table 1's first
        deltas = long.pivot_table(index=index, columns=columns, values="delta", sort=False)
        shown = {"default (Table 1)": out["default (Table 1)"]}
        shown["default (Table 1): Δ vs original"] = long.groupby(index, sort=False)[
            "default_delta"
        ].first()
        for variant in values.columns:
            shown[variant] = values[variant]
            shown[f"{variant}: Δ vs original"] = deltas[variant]
        out = pd.DataFrame(shown)
    return out


def _kind(row) -> str:
    """Which choice a row varies: the matching rule, the order reading, both, the list copies, or
    perplexity's average."""
    if row.metric == "perplexity":
        return "perplexity average"
    if row.metric == "slor":
        return "SLOR variant"  # nats, compared with nothing else
    if row.choice == copies.CHOICE:
        return {
            copies.EXCLUDED: "excluding list copies",
            copies.PAIRED: "paired, neither copies",
        }.get(row.variant, "copies as failures")
    if row.choice == POS_CHOICE[0]:
        return "PoS-correct coverage"  # a metric of its own, not a matching rule
    other_rule = row.choice != f"matching: {RULE_LABELS[DEFAULT_RULE]}"
    other_reading = row.variant != f"order: {READING_LABELS['in_order']}"
    return (
        "both"
        if other_rule and other_reading
        else "matching rule"
        if other_rule
        else "order reading"
    )


def _copies_how(long: pd.DataFrame, r) -> str:
    """What a copies-as-failures shift stands on (Table 1's denominator: all the answers), with
    the Δ vs original in Table 1, counting copies as failures, and paired on the prompts where
    neither condition's answer copies (with their n)."""
    mine = long[
        (long["choice"] == copies.CHOICE)
        & (long["model"] == r.model)
        & (long["metric"] == r.metric)
    ].set_index("variant")
    what = {
        "coverage_w_order": "in order and not a copy",
        "coverage_wo_order": "complete and not a copy",
    }
    if r.metric == "ordered_rate":  # w/ order over w/o order: its denominator loses the copies too
        complete = long[
            (long["choice"] == copies.CHOICE)
            & (long["model"] == r.model)
            & (long["metric"] == "coverage_wo_order")
            & (long["variant"] == copies.FAILED)
        ]
        over = (
            f"over the {complete['value'].iloc[0] * r.n_answers / 100:.0f} complete answers that"
            f" are not copies (of {r.n_answers:.0f} ordered answers; Table 1's Ordered Rate is"
            " over every complete answer)"
            if len(complete)
            else "over the complete answers that are not copies"
        )
        text = f"in order and not a copy, {over}"
    else:
        text = f"{what.get(r.metric, 'copies as failures')}, over all {r.n_answers:.0f} ordered answers"
    text += f"; Δ vs original {r.default_delta:+.2f} in Table 1, {r.delta:+.2f} counting copies as failures"
    if copies.PAIRED in mine.index:
        p = mine.loc[copies.PAIRED]
        text += f", {p['delta']:+.2f} paired on the {p['n_answers']:.0f} prompts where neither answer copies"
    return text


def largest_shifts(long: pd.DataFrame, n: int = 3) -> list[str]:
    """The `n` largest shifts from the default for each choice (matching rule, CommonGen's own
    always among them; order reading; both; PoS-correct coverage, a metric of its own; copies
    counted as failures, which keeps Table 1's denominator, with the paired Δ beside it;
    perplexity average; percentage points and perplexity are not compared), as sentences; shifts
    tied (at two decimals) with the n-th are counted in a closing sentence, not dropped. The
    excluding-copies rows stand on other denominators and are not ranked."""
    if long.empty:
        return []
    rows = long.assign(size=long["shift"].abs()).dropna(subset=["size"])
    rows = rows[rows["size"] > 1e-9].sort_values("size", ascending=False, kind="stable")
    kinds = rows.apply(_kind, axis=1) if len(rows) else pd.Series(dtype=str)
    out = []
    for kind in (
        "matching rule",
        "order reading",
        "both",
        "PoS-correct coverage",
        "copies as failures",
        "perplexity average",
    ):
        of_kind = rows[kinds == kind]
        chosen = of_kind.head(n)
        # shifts tied (at the printed precision) with the n-th named: counted, not dropped
        cut = round(chosen["size"].iloc[-1], 2) if len(chosen) else None
        tied = int((of_kind["size"].iloc[n:].round(2) == cut).sum()) if cut is not None else 0
        if kind == "matching rule":  # CommonGen's own rule always among those named
            own = rows[(kinds == kind) & (rows["choice"] == COMMONGEN_CHOICE)].head(1)
            chosen = pd.concat([chosen, own[~own.index.isin(chosen.index)]])
        for r in chosen.itertuples():
            metric = label(r.metric)
            how = (
                f"as the {r.variant}"
                if r.metric == "perplexity"
                else _copies_how(long, r)
                if kind == "copies as failures"
                else f"{r.choice.replace('matching: ', 'matching by ')}, {r.variant.replace('order: ', 'order as ')}"
            )
            out.append(
                f"{kind}: {metric} of {r.model} {r.default:.2f} → {r.value:.2f} ({r.shift:+.2f}), {how}"
            )
        if tied:
            out.append(
                f"{kind}: and {tied} more shift{'s' if tied > 1 else ''} of the same size ({cut:.2f})"
            )
    return out
