"""How much three choices the paper leaves open move Table 1 (docs/METHODS.md, "Sensitivity").

For each model, Table 1's numbers (`ordered`, averaged over templates, Ordered Rate pooled)
recomputed under:
- every concept-matching rule ocg knows (CommonGen's lemma rule among them), and both readings
  of the order check: ours (some increasing sequence of matches: a concept mentioned twice can
  be matched at its later mention) and "first occurrences only";
- perplexity averaged over answers as the arithmetic mean (the paper's), the median and the
  geometric mean, each per template and then averaged over templates, as Table 1 averages;
- the answers that copy the concept list (`copies_list`, ocg/metrics/listcopy.py) excluded on
  both sides, or counted as failures: w/o, w/, Ordered Rate and their Δ vs `original`
  (analysis/copies.py), with the answers each stands on.
Each beside the default (the value Table 1 shows). The verdicts come from the columns scoring
stores for every rule (ocg.metrics.matching.VARIANT_COLUMNS): no second spaCy pass.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..frames import SUMMARY_KEYS
from ..metrics.matching import DEFAULT_RULE, MATCHING_RULES, ORDER_READINGS
from ..metrics.registry import FAMILIES, label
from ..metrics.statistics import pooled_sums, ratios, sufficient_statistics
from . import copies
from .tables import _template_average

READING_LABELS = {
    "in_order": "any increasing sequence (ours)",
    "in_order_first": "first occurrences only",
}
RULE_LABELS = {
    "pos_aware_lookup": "POS-aware lookup (ours)",
    "commongen_lemma": "spaCy lemma (CommonGen's)",
    "commongen_lemma_lower": "spaCy lemma, lower-cased",
    "lemma_or_surface": "lemma or surface form",
    "any_lookup": "lookup lemma, POS-blind",
}
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
]  # the last three: list-copy rows only (analysis/copies.py)


def _coverage_metrics() -> list:
    """The coverage family's metrics of the verdicts all_present and in_order (metrics/registry.py;
    PoS-correct coverage is another reading of them: POS_CHOICE)."""
    return [
        m
        for m in FAMILIES["coverage"].metrics
        if {m.numerator, m.denominator} <= {"all_present", "in_order", "n"}
    ]


# Table 1's coverage with each concept counted only where it has its part of speech (pos_* columns).
POS_CHOICE = (
    "matching: POS-aware lookup (ours), PoS-correct only",
    "order: any increasing sequence (ours)",
)


def _pos_correct(answers: pd.DataFrame, default: pd.DataFrame) -> list[dict]:
    """Table 1's coverage columns with the PoS-correct verdicts in place of ours."""
    if not {"pos_all_present", "pos_in_order"} <= set(answers.columns):
        return []
    scored = answers[answers[["pos_all_present", "pos_in_order"]].notna().all(axis=1)]
    values, n = _coverage_table1(scored, "pos_all_present", "pos_in_order"), _ordered_counts(scored)
    return [
        _rows(
            model,
            m.name,
            *POS_CHOICE,
            values.at[model, m.name],
            default.at[model, m.name],
            int(n.get(model, 0)),
        )
        for model in values.index
        for m in _coverage_metrics()
    ]


def _coverage_table1(
    answers: pd.DataFrame, present: str, ordered: str, condition: str = "ordered"
) -> pd.DataFrame:
    """Per model: Table 1's coverage columns with `present` and `ordered` as the verdicts, each
    metric from its declaration as the summary and Table 1 compute it (of `condition`)."""
    a = answers.assign(
        all_present=answers[present].astype(bool), in_order=answers[ordered].astype(bool)
    )
    stats = sufficient_statistics(a, pd.DataFrame(), SUMMARY_KEYS)
    per_template = pd.concat([ratios(stats, _coverage_metrics()), pooled_sums(stats)], axis=1)
    return _template_average(per_template.reset_index(), condition).reindex(
        columns=[m.name for m in _coverage_metrics()]
    )


def _geometric_mean(values: pd.Series) -> float:
    return float(np.exp(np.log(values).mean())) if len(values) else np.nan


PERPLEXITY_AVERAGES = {
    "mean (the paper's)": "mean",
    "median": "median",
    "geometric mean": _geometric_mean,
}


def _perplexity(answers: pd.DataFrame, how) -> pd.Series:
    """Per model: perplexity averaged over answers by `how`, per template, then over templates."""
    a = answers[(answers["condition"] == "ordered") & answers["perplexity"].notna()]
    per_template = a.groupby(["model", "template_id"], sort=True)["perplexity"].agg(how)
    return per_template.groupby(level="model").mean()


def _rows(model, metric, choice, variant, value, default, n=None) -> dict:
    return {
        "model": model,
        "metric": metric,
        "choice": choice,
        "variant": variant,
        "value": value,
        "default": default,
        "shift": value - default,
        "n_answers": n,
    }


def _ordered_counts(answers: pd.DataFrame) -> pd.Series:
    """Per model: the `ordered` answers a value stands on."""
    return answers[answers["condition"] == "ordered"].groupby("model").size()


def _without_copies(answers: pd.DataFrame, default: pd.DataFrame) -> list[dict]:
    """Table 1's coverage columns and their Δ without the list copies (analysis/copies.py)."""
    if "copies_list" not in answers:
        return []
    original = _coverage_table1(answers, "all_present", "in_order", "original")
    return copies.rows(answers, default, (default - original.reindex(default.index)))


def table1_sensitivity(answers: pd.DataFrame) -> pd.DataFrame:
    """Long table (COLUMNS): one row per (model, Table 1 metric, variant), with the default value
    (what Table 1 shows) and the shift from it. Models scored before every rule's verdicts were
    stored get perplexity rows only (rescore them for the rest)."""
    if "ordered" not in set(answers["condition"]):
        return pd.DataFrame(columns=COLUMNS)
    rows = []
    if {"all_present", "in_order"} <= set(answers.columns):
        default = _coverage_table1(answers, "all_present", "in_order")
        for rule in MATCHING_RULES:
            for reading in ORDER_READINGS:
                columns = (f"all_present@{rule}", f"{reading}@{rule}")
                if not set(columns) <= set(answers.columns):
                    continue
                scored = answers[answers[list(columns)].notna().all(axis=1)]
                values, n = _coverage_table1(scored, *columns), _ordered_counts(scored)
                for model in values.index:
                    for m in _coverage_metrics():
                        if reading != "in_order" and "in_order" not in (m.numerator, m.denominator):
                            continue  # the order reading does not touch a metric that ignores order
                        metric = m.name
                        rows.append(
                            _rows(
                                model,
                                metric,
                                f"matching: {RULE_LABELS[rule]}",
                                f"order: {READING_LABELS[reading]}",
                                values.at[model, metric],
                                default.at[model, metric],
                                int(n.get(model, 0)),
                            )
                        )
        rows += _pos_correct(answers, default)
        rows += _without_copies(answers, default)
    if "perplexity" in answers:
        default = _perplexity(answers, "mean")
        n = _ordered_counts(answers[answers["perplexity"].notna()])
        for label, how in PERPLEXITY_AVERAGES.items():
            for model, value in _perplexity(answers, how).items():
                rows.append(
                    _rows(
                        model,
                        "perplexity",
                        "perplexity average",
                        label,
                        value,
                        default[model],
                        int(n.get(model, 0)),
                    )
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def wide(long: pd.DataFrame, part: str = "coverage") -> pd.DataFrame:
    """Display form, the default first. `coverage`: a row per (model, metric), a column per
    (matching rule, order reading); `perplexity`: a row per model, a column per average;
    `copies`: Table 1 without the list copies, each value with its Δ (analysis/copies.py)."""
    if part == "copies":
        return copies.wide(long)
    long = long[
        ((long["metric"] == "perplexity") == (part == "perplexity"))
        & (long["choice"] != copies.CHOICE)
    ]
    if long.empty:
        return pd.DataFrame()
    index = ["model"] if part == "perplexity" else ["model", "metric"]
    long = long.assign(
        metric=long["metric"].map(label),
        choice=long["choice"].str.replace("matching: ", "matching by ", regex=False),
        variant=long["variant"].str.replace("order: ", "order as ", regex=False),
    )
    columns = ["variant"] if part == "perplexity" else ["choice", "variant"]
    values = long.pivot_table(index=index, columns=columns, values="value", sort=False)
    default = long.groupby(index, sort=False)["default"].first()
    if part != "perplexity":
        default = default.to_frame(("default (Table 1)", ""))
    else:
        default = default.rename("default (Table 1)")
    return pd.concat([default, values], axis=1)


def _kind(row) -> str:
    """Which choice a row varies: the matching rule, the order reading, both, the list copies, or
    perplexity's average."""
    if row.metric == "perplexity":
        return "perplexity average"
    if row.choice == copies.CHOICE:
        return "excluding list copies" if row.variant == copies.EXCLUDED else "copies as failures"
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
    """What an excluded-copies shift stands on, with the same-denominator figure (in order, or
    complete, and not a copy, share of all answers) and the Δ vs original both ways."""
    failed = long[
        (long["choice"] == copies.CHOICE)
        & (long["variant"] == copies.FAILED)
        & (long["model"] == r.model)
        & (long["metric"] == r.metric)
    ]
    text = f"on the {r.n_answers:.0f} ordered answers that do not copy the concept list"
    if len(failed):
        f = failed.iloc[0]
        what = {
            "coverage_w_order": "in order and not a copy",
            "coverage_wo_order": "complete and not a copy",
        }
        if r.metric in what:
            text += f" ({what[r.metric]}: {f['value']:.2f}% of all {f['n_answers']:.0f} answers)"
        text += (
            f"; Δ vs original {r.default_delta:+.2f} in Table 1, {r.delta:+.2f} excluding copies on both "
            f"sides, {f['delta']:+.2f} counting copies as failures"
        )
    return text


def largest_shifts(long: pd.DataFrame, n: int = 3) -> list[str]:
    """The `n` largest shifts from the default for each choice (matching rule, order reading,
    both, excluding list copies, perplexity average; percentage points and perplexity are not
    compared), as sentences."""
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
        "excluding list copies",
        "perplexity average",
    ):
        for r in rows[kinds == kind].head(n).itertuples():
            metric = label(r.metric)
            how = (
                f"as the {r.variant}"
                if r.metric == "perplexity"
                else _copies_how(long, r)
                if kind == "excluding list copies"
                else f"{r.choice.replace('matching: ', 'matching by ')}, {r.variant.replace('order: ', 'order as ')}"
            )
            out.append(
                f"{kind}: {metric} of {r.model} {r.default:.2f} → {r.value:.2f} ({r.shift:+.2f}), {how}"
            )
    return out
