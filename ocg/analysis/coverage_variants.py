"""Table 1's coverage columns recomputed under other verdicts, for the sensitivity view
(sensitivity.py): every concept-matching rule and order reading stored, the PoS-correct
verdicts, and without the answers that copy the concept list (copies.py). Rows in the long
table's form (sensitivity.COLUMNS)."""

from __future__ import annotations

import pandas as pd

from ..core.frames import SUMMARY_KEYS
from ..metrics.matching import MATCHING_RULES, ORDER_READINGS
from ..metrics.registry import FAMILIES
from ..metrics.sufficient_statistics import pooled_sums, ratios, sufficient_statistics
from . import copies
from .paper_tables import _template_average

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
    "metric: PoS-correct coverage (a metric of its own, not a matching rule)",
    "order: any increasing sequence (ours)",
)


def pos_correct_rows(answers: pd.DataFrame, default: pd.DataFrame) -> list[dict]:
    """Table 1's coverage columns with the PoS-correct verdicts in place of ours."""
    if not {"pos_all_present", "pos_in_order"} <= set(answers.columns):
        return []
    scored = answers[answers[["pos_all_present", "pos_in_order"]].notna().all(axis=1)]
    values, n = coverage_table1(scored, "pos_all_present", "pos_in_order"), ordered_counts(scored)
    return [
        long_row(
            model,
            m.name,
            POS_CHOICE,
            values.at[model, m.name],
            default.at[model, m.name],
            n=int(n.get(model, 0)),
        )
        for model in values.index
        for m in _coverage_metrics()
    ]


def coverage_table1(
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


def long_row(model, metric, choice: tuple[str, str], value, default, *, n=None) -> dict:
    """One row of the long table; `choice`: (the choice, its variant)."""
    return {
        "model": model,
        "metric": metric,
        "choice": choice[0],
        "variant": choice[1],
        "value": value,
        "default": default,
        "shift": value - default,
        "n_answers": n,
    }


def ordered_counts(answers: pd.DataFrame) -> pd.Series:
    """Per model: the `ordered` answers a value stands on."""
    return answers[answers["condition"] == "ordered"].groupby("model").size()


def without_copies_rows(answers: pd.DataFrame, default: pd.DataFrame) -> list[dict]:
    """Table 1's coverage columns and their Δ without the list copies (analysis/copies.py)."""
    if "copies_list" not in answers:
        return []
    original = coverage_table1(answers, "all_present", "in_order", "original")
    return copies.rows(answers, default, (default - original.reindex(default.index)))


def matching_rows(answers: pd.DataFrame, default: pd.DataFrame) -> list[dict]:
    """Table 1's coverage columns under every matching rule and order reading stored."""
    rows = []
    for rule in MATCHING_RULES:
        for reading in ORDER_READINGS:
            columns = (f"all_present@{rule}", f"{reading}@{rule}")
            if not set(columns) <= set(answers.columns):
                continue
            scored = answers[answers[list(columns)].notna().all(axis=1)]
            values, n = coverage_table1(scored, *columns), ordered_counts(scored)
            choice = (f"matching: {RULE_LABELS[rule]}", f"order: {READING_LABELS[reading]}")
            rows += [
                long_row(
                    model,
                    m.name,
                    choice,
                    values.at[model, m.name],
                    default.at[model, m.name],
                    n=int(n.get(model, 0)),
                )
                for model in values.index
                for m in _coverage_metrics()
                # the order reading does not touch a metric that ignores order
                if reading == "in_order" or "in_order" in (m.numerator, m.denominator)
            ]
    return rows
