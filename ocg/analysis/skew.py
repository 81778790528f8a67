"""Means a few answers make, and metrics a compared model scores itself (docs/METHODS.md,
"Analyses": "Means beside medians", "Self-scored metrics").

A per-answer metric whose distribution is skewed (perplexity; SLOR, read beside its median as
perplexity is) has its pooled median (over every scored answer of a model and condition, all
templates together: no mean of per-template medians) beside the template-averaged mean of Tables
1 and 4 and the forced order, and a median Δ beside the mean's: on these paired designs, the
median of the paired per-answer differences (MEDIAN_CONVENTION, one helper for every view:
`paired_median_delta`). Where the two disagree (‡: a perplexity mean over PPL_MEAN_OVER_MEDIAN x
its median on either side of the Δ, or mean Δ and median Δ of different signs) the row is
`mean_median_disagree` and the LaTeX table bolds neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ..results.scores import Scores

MEDIAN_METRICS = ("perplexity", "slor")  # per-answer metrics shown with their median
DAGGER_METRICS = ("perplexity",)  # ‡ applies (SLOR is a difference of logs: no ratio to read)
PPL_MEAN_OVER_MEDIAN = 10  # a mean above this many medians: a few extreme answers make it
SCORER_METRICS = ("perplexity", "slor")  # computed by a language model, which may be a compared one
COLUMNS = [
    "median",
    "median_base",
    "median_delta",
    "n_pairs",
    "dagger",
    "dagger_base",
    "mean_median_disagree",
]


def pooled_medians(answers: pd.DataFrame, condition: str, metric: str) -> dict[str, float]:
    """Per model: the median of `metric` over its scored answers of `condition`, all templates
    pooled (an answer missing the metric left out)."""
    if metric not in answers or "condition" not in answers:
        return {}
    rows = answers[(answers["condition"] == condition) & answers[metric].notna()]
    return rows.groupby("model")[metric].median().to_dict()


def dagger(metric: str, mean: float, median: float) -> bool:
    """‡: `metric`'s mean over PPL_MEAN_OVER_MEDIAN x its median (perplexity only)."""
    return bool(
        metric in DAGGER_METRICS
        and np.isfinite(mean)
        and np.isfinite(median)
        and median > 0
        and mean > PPL_MEAN_OVER_MEDIAN * median
    )


def disagree(mean_delta: float, median_delta: float, daggers: bool) -> bool:
    """A mean Δ its median Δ contradicts: ‡ on either side, or the two Δs of different signs (a
    median Δ of exactly 0 beside a non-zero mean Δ included; two zeros agree)."""
    differ = bool(
        np.isfinite(mean_delta)
        and np.isfinite(median_delta)
        and np.sign(mean_delta) != np.sign(median_delta)
    )
    return bool(daggers or differ)


# On a paired design (two conditions of one prompt; two models on one instance) the median Δ is
# the median of the paired per-answer differences; each side's median is pooled over its scored
# answers. Tables 1 and 4, the forced order, results.json and `ocg compare` all take it here.
MEDIAN_CONVENTION = (
    "median Δ: the median of the paired per-answer differences over the answers both sides "
    "scored; each side's median pooled over its scored answers, every template together"
)
PROMPT = [
    "template_id",
    "set_id",
    "perm_index",
]  # within a model: a prompt, asked in each condition


def paired_differences(a: pd.DataFrame, b: pd.DataFrame, key: list[str], metric: str) -> pd.Series:
    """A's `metric` minus B's, answer by answer, over the instances (`key`) both scored."""
    pairs = a[[*key, metric]].merge(b[[*key, metric]], on=key, suffixes=("_a", "_b"))
    pairs = pairs.dropna(subset=[f"{metric}_a", f"{metric}_b"])
    return pairs[f"{metric}_a"].astype(float) - pairs[f"{metric}_b"].astype(float)


@dataclass(frozen=True)
class MedianDelta:
    """One (side, base) pair of a skewed metric under MEDIAN_CONVENTION."""

    median: float  # the side's median, pooled over its scored answers
    median_base: float  # the base's, likewise
    median_delta: float  # the median over pairs of (side - base), both scored
    n_pairs: int
    dagger: bool  # ‡ on the side: its mean over PPL_MEAN_OVER_MEDIAN x its median
    dagger_base: bool  # ‡ on the base
    disagree: bool  # ‡ either side, or the mean Δ and the median Δ of different signs


def paired_median_delta(
    a: pd.DataFrame, b: pd.DataFrame, key: list[str], metric: str, *, mean: float, mean_base: float
) -> MedianDelta:
    """MedianDelta of `a` minus `b` (each one side's answers, with `key` and `metric`), given each
    side's mean (the table's value)."""

    def pooled(frame: pd.DataFrame) -> float:
        values = frame[metric].dropna() if metric in frame else pd.Series(dtype=float)
        return float(values.median()) if len(values) else np.nan

    med, med_base = pooled(a), pooled(b)
    diffs = (
        paired_differences(a, b, key, metric)
        if metric in a and metric in b
        else pd.Series(dtype=float)
    )
    med_delta = float(diffs.median()) if len(diffs) else np.nan
    dag, dag_base = dagger(metric, mean, med), dagger(metric, mean_base, med_base)
    return MedianDelta(
        med,
        med_base,
        med_delta,
        len(diffs),
        dag,
        dag_base,
        disagree(mean - mean_base, med_delta, dag or dag_base),
    )


def _prompt_key(answers: pd.DataFrame) -> list[str]:
    from ..core.frames import SAMPLE

    return PROMPT + ([SAMPLE] if SAMPLE in answers else [])


def with_medians(
    long: pd.DataFrame,
    answers: pd.DataFrame,
    condition: str,
    base: str | dict[str, str],
    delta: str | None = None,
) -> pd.DataFrame:
    """A long table (model, metric, value, a Δ column per base) with, for each MEDIAN_METRICS
    row, MEDIAN_CONVENTION's numbers: `median` (of `condition`, pooled), `dagger` (‡ on it), and
    per base `median_base`, `median_delta` (the median of the paired per-prompt differences),
    `n_pairs`, `dagger_base` and `mean_median_disagree`; other rows NaN/False. One base
    (`base`, its Δ column `delta`: Tables 1 and 4) keeps these names; several ({base: its Δ
    column}: the forced order) get them per base, `median_<base>`, `median_delta_vs_<base>`,
    `n_pairs_vs_<base>`, `dagger_<base>`, `mean_median_disagree_vs_<base>`."""
    bases = {base: delta} if isinstance(base, str) else dict(base)
    single = isinstance(base, str)

    def names(b: str) -> dict[str, str]:
        if single:
            return {k: k for k in ("median_base", "median_delta", "n_pairs", "dagger_base")} | {
                "disagree": "mean_median_disagree"
            }
        return {
            "median_base": f"median_{b}",
            "median_delta": f"median_delta_vs_{b}",
            "n_pairs": f"n_pairs_vs_{b}",
            "dagger_base": f"dagger_{b}",
            "disagree": f"mean_median_disagree_vs_{b}",
        }

    out = long.copy()
    flags = {"dagger"} | {names(b)[k] for b in bases for k in ("dagger_base", "disagree")}
    columns = ["median", "dagger"] + [c for b in bases for c in names(b).values()]
    for column in columns:
        out[column] = False if column in flags else np.nan
    key = _prompt_key(answers)
    for metric in MEDIAN_METRICS:
        for i in out.index[out["metric"] == metric]:
            model, mean = out.at[i, "model"], out.at[i, "value"]
            mine = answers[(answers["model"] == model) & (answers["condition"] == condition)]
            for b, delta_column in bases.items():
                theirs = answers[(answers["model"] == model) & (answers["condition"] == b)]
                d = out.at[i, delta_column]
                r = paired_median_delta(mine, theirs, key, metric, mean=mean, mean_base=mean - d)
                n = names(b)
                out.at[i, "median"], out.at[i, "dagger"] = r.median, r.dagger
                out.at[i, n["median_base"]] = r.median_base
                out.at[i, n["median_delta"]] = r.median_delta
                out.at[i, n["n_pairs"]] = r.n_pairs
                out.at[i, n["dagger_base"]] = r.dagger_base
                out.at[i, n["disagree"]] = disagree(d, r.median_delta, r.dagger or r.dagger_base)
    return out


def median_text(row, base: str | None = None) -> str:
    """'‡ (median Δ +133.00)' for a row whose mean and median disagree, else ''; `base` reads a
    table of several bases (with_medians' per-base columns)."""
    disagree_, dagger_base, median_delta = (
        ("mean_median_disagree", "dagger_base", "median_delta")
        if base is None
        else (f"mean_median_disagree_vs_{base}", f"dagger_{base}", f"median_delta_vs_{base}")
    )
    if not bool(row.get(disagree_, False)):
        return ""
    either = bool(row.get("dagger", False)) or bool(row.get(dagger_base, False))
    mark = " ‡" if either else ""
    delta = row.get(median_delta, np.nan)
    return mark + (f" (median Δ {delta:+.2f})" if pd.notna(delta) else "")


def disagreeing(long: pd.DataFrame, index: str = "model") -> frozenset[tuple[str, str]]:
    """{(row key, metric)} of the rows whose mean and median disagree (none bolded)."""
    if "mean_median_disagree" not in long:
        return frozenset()
    rows = long[long["mean_median_disagree"].fillna(False).astype(bool)]
    return frozenset(zip(rows[index], rows["metric"]))


@dataclass(frozen=True)
class ScorerMatch:
    """The compared entries one scorer is: `exact` load the scorer's weights as it does (its id,
    unquantized: metrics/perplexity.py loads the full weights), `same_weights` share the id but
    quantize it (another model numerically, the same weights)."""

    used: str
    exact: tuple[str, ...] = ()
    same_weights: tuple[tuple[str, str], ...] = ()  # (entry, its quantization)

    def __str__(self) -> str:
        quantized = ", ".join(f"{q} in {name}" for name, q in self.same_weights)
        if self.exact:
            head = " and ".join(self.exact)
            return f"{head} (its weights also compared {quantized})" if quantized else head
        return f"{self.used}, unquantized (the weights of {quantized})"


def _id_and_quantization(entry) -> tuple[str, str]:
    if isinstance(entry, tuple):
        return str(entry[0]), str(entry[1] or "none")
    if isinstance(entry, str):
        return entry, "none"
    return str(entry.id), str(getattr(entry, "quantization", None) or "none")


def self_scored(signatures: dict, entries: dict) -> dict[str, ScorerMatch]:
    """{metric: the compared entries its scorer is} for SCORER_METRICS scored, for some compared
    model, by a model among those compared. `entries`: name -> a models-file entry, an
    (id, quantization) pair, or an id (unquantized). The signature's perplexity block names the
    scorer it `used` (an id, loaded unquantized); every entry with that id is found, none kept
    over another by the order of the models file: an unquantized one is the scorer, a quantized
    one shares its weights."""
    specs = {name: _id_and_quantization(e) for name, e in entries.items()}
    out: dict[str, ScorerMatch] = {}
    for sig in signatures.values():
        families = getattr(sig, "families", None) or {}
        for metric in SCORER_METRICS:
            block = families.get(metric) or {}
            used = block.get("used") or block.get("perplexity_model")
            if used is None or metric in out:
                continue
            used = str(used)
            exact = tuple(
                sorted(n for n, (i, q) in specs.items() if q == "none" and used in (i, n))
            )
            shared = tuple(
                sorted((n, q) for n, (i, q) in specs.items() if q != "none" and used in (i, n))
            )
            if exact or shared:
                out[metric] = ScorerMatch(used, exact, shared)
    return out


def self_scored_note(scorers: dict) -> str:
    """What is said under a table: which metrics one of the compared models scored itself."""
    if not scorers:
        return ""
    parts = "; ".join(f"{m} by {who}" for m, who in scorers.items())
    return (
        f"Scored by one of the compared models ({parts}): a model's own answers scored by itself "
        "read as more fluent, so the LaTeX table bolds these columns across no models."
    )


def compared_ids(models, models_file=None) -> dict[str, tuple[str, str]]:
    """{model: (its id, its quantization)} from the models file (the run's, else
    params/models.yaml), for self_scored; a model the file does not know keeps its name only."""
    from ..config.model_registry import MODELS_FILE, load_models

    specs = load_models(models_file or MODELS_FILE)
    return {m: (_id_and_quantization(specs[m]) if m in specs else (m, "none")) for m in models}


def self_scored_in(scores: Scores, models_file=None) -> dict[str, ScorerMatch]:
    """self_scored for the models of loaded scores (analysis/notebook.py `setup`)."""
    summary = scores.summary
    models = sorted(summary["model"].unique()) if "model" in summary else []
    return self_scored(scores.signatures, compared_ids(models, models_file))
