"""The summary table: per (model, condition, template), the paper's metrics as ratios of
sufficient statistics (metrics/registry.py), counts, and why a metric has no value (a missing
model, groups of one answer)."""

from __future__ import annotations

import json

import pandas as pd

from ..core.frames import GROUP_KEYS, SUMMARY_KEYS
from ..metrics import degenerate, diversity, listcopy
from ..metrics.sufficient_statistics import pooled_sums, ratios, sufficient_statistics
from .families import FAMILIES
from .judge_agreement import (
    CELLS,
    CHECKS,
    cell_column,
    cell_flags,
    disagreement_column,
    judged_beside_checks,
)
from .samples import keys_with_sample, summarise_over_samples


def summarised(answers: pd.DataFrame, groups: pd.DataFrame, metrics: list[str], blocks: dict):
    """The answers with their list-copy flags and their group's Diverse Rate, and the summary
    (with why a neural family has no values, where its model was missing)."""
    group_keys = keys_with_sample(GROUP_KEYS, answers)
    answers = answers.assign(**listcopy.list_flags(answers))  # from coverage's tokens and positions
    if "diverse_rate" in groups:  # a group's value is given to each of its permutations (Table 2)
        answers = answers.merge(groups[group_keys + ["diverse_rate"]], on=group_keys, how="left")
    summary = summarise_over_samples(answers, groups, SUMMARY_KEYS, summarise)
    for metric in [m for m in FAMILIES if m in metrics]:  # a neural family without its model
        if blocks[metric].get("status") == "missing":
            summary[f"{metric}_missing_reason"] = blocks[metric].get("reason") or blocks[
                metric
            ].get("fallback_reason")
    return answers, _groups_of_one(summary, groups)


PAIRWISE = (
    "pbleu",
    "pbleurt",
    "diverse_rate",
)  # measured between a group's answers: none in a group of one


def _groups_of_one(summary: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """Say why a pairwise metric has no value where every group holds one answer (`permutations:
    1`), in `<metric>_missing_reason` (docs/DATA.md), as a missing model's reason is said."""
    largest = groups.groupby(SUMMARY_KEYS)["n"].max().rename("largest_group")
    alone = summary.join(largest, on=SUMMARY_KEYS)["largest_group"] < 2
    why = (
        "every concept set has one answer here (one permutation each): a measure between a set's "
        "answers needs two or more"
    )
    for metric in [m for m in PAIRWISE if m in summary]:
        column = f"{metric}_missing_reason"
        now = (
            summary[column]
            if column in summary
            else pd.Series(None, index=summary.index, dtype=object)
        )
        if (unexplained := alone & summary[metric].isna() & now.isna()).any():
            summary[column] = now.mask(unexplained, why)
    return summary


def pos_tagging(answers: pd.DataFrame) -> str:
    """Per concept (`word_N`, `word_V`): its matched tokens and those tagged with its part of
    speech, summed over the answers; JSON, sorted."""
    counts: dict[str, list[int]] = {}
    for concepts, pattern, matched, tagged in zip(
        answers["concepts"], answers["pos_pattern"], answers["pos_matched"], answers["pos_tagged"]
    ):
        if matched is None or tagged is None or isinstance(matched, float):
            continue  # not scored
        pattern = pattern if isinstance(pattern, str) and pattern else "N" * len(concepts)
        for c, p, m, t in zip(concepts, pattern, matched, tagged):
            tally = counts.setdefault(f"{c}_{p}", [0, 0])
            tally[0] += int(m)
            tally[1] += int(t)
    return json.dumps(dict(sorted(counts.items())))


def summarise(answers: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """Per (model, condition, template): the paper's metrics (metrics/registry.py, as ratios of
    sufficient statistics), plus counts and Lin et al.'s per-concept coverage."""
    stats = sufficient_statistics(answers, groups, SUMMARY_KEYS)
    summary = pd.concat(
        [
            stats[["n"]].rename(columns={"n": "n_answers"}),
            stats[["n_groups"]] if "n_groups" in stats else None,
            ratios(stats),
        ],
        axis=1,
    )
    a = answers.groupby(SUMMARY_KEYS, sort=True)
    if "coverage_frac" in answers:
        summary["coverage_per_concept"] = 100.0 * a["coverage_frac"].mean()
    summary = summary.join(
        pooled_sums(stats)
    )  # n_all_present, n_in_order: Ordered Rate pooled later
    if "pos_tagged" in answers:
        summary["pos_tagging"] = a[["concepts", "pos_pattern", "pos_matched", "pos_tagged"]].apply(
            pos_tagging
        )
    if "distinct_2" in answers:
        summary["distinct_2_pooled"] = 100.0 * a["answer"].agg(diversity.distinct2_pooled)
    if "perplexity" in answers:
        summary["n_ppl_unscored"] = (stats["n"] - stats["n_perplexity"]).astype(int)
        summary["perplexity_median"] = a[
            "perplexity"
        ].median()  # beside the mean wherever it is shown
    if (
        "judge_reason" in answers
    ):  # judged: a verdict read (metrics/judge.py); the rest has a reason
        summary = summary.join(_judge_counts(answers))
    if "slor" in answers:  # a mean hides a few extreme answers (docs/METHODS.md, "Acceptability")
        summary["slor_median"] = a["slor"].median()
    for flag in degenerate.FLAG_COLUMNS:
        summary[f"n_{flag}"] = a[flag].sum().astype(int)
    return summary.reset_index()


def _judge_counts(answers: pd.DataFrame) -> pd.DataFrame:
    """Per summary row: the judged answers and, where ocg's checks were scored beside the judge,
    each check's 2x2 table against the judge (judge_agreement.py) and its disagreements."""
    by = [answers[k] for k in SUMMARY_KEYS]
    out = answers["judge_reason"].isna().groupby(by).sum().astype(int).to_frame("n_judged")
    if judged_beside_checks(answers):
        cells = cell_flags(answers).groupby(by).sum().astype(int)
        for check in CHECKS:
            for cell in CELLS:
                out[cell_column(check, cell)] = cells[cell_column(check, cell)]
            out[disagreement_column(check)] = (
                cells[cell_column(check, "judge_only")] + cells[cell_column(check, "ocg_only")]
            )
    return out
