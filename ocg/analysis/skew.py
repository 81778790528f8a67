"""Means a few answers make, and metrics a compared model scores itself (docs/METHODS.md,
"Analyses": "Means beside medians", "Self-scored metrics").

A per-answer metric whose distribution is skewed (perplexity; SLOR, read beside its median as
perplexity is) has its pooled median (over every scored answer of a model and condition, all
templates together: no mean of per-template medians) beside the template-averaged mean of Tables
1 and 4 and the forced order, and the median's Δ beside the mean's. Where the two disagree (‡: a
perplexity mean over PPL_MEAN_OVER_MEDIAN x its median on either side of the Δ, or mean Δ and
median Δ of opposite signs) the row is `mean_median_disagree` and the LaTeX table bolds neither.
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
COLUMNS = ["median", "median_base", "median_delta", "dagger", "mean_median_disagree"]


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
    """A mean Δ its median Δ contradicts: ‡ on either side, or the two Δs of opposite signs."""
    opposite = bool(
        np.isfinite(mean_delta) and np.isfinite(median_delta) and mean_delta * median_delta < 0
    )
    return bool(daggers or opposite)


def with_medians(
    long: pd.DataFrame, answers: pd.DataFrame, condition: str, base: str, delta: str
) -> pd.DataFrame:
    """A long table (model, metric, value, `delta` = `condition` minus `base`) with, for each
    MEDIAN_METRICS row, the pooled `median` of `condition`, that of `base` (`median_base`),
    `median_delta`, `dagger` (‡ on either side) and `mean_median_disagree`; other rows NaN/False."""
    out = long.copy()
    for column in COLUMNS:
        out[column] = False if column in ("dagger", "mean_median_disagree") else np.nan
    for metric in MEDIAN_METRICS:
        mine, theirs = (pooled_medians(answers, c, metric) for c in (condition, base))
        for i in out.index[out["metric"] == metric]:
            model, mean, d = out.at[i, "model"], out.at[i, "value"], out.at[i, delta]
            med, med_base = mine.get(model, np.nan), theirs.get(model, np.nan)
            daggers = dagger(metric, mean, med) or dagger(metric, mean - d, med_base)
            out.loc[i, ["median", "median_base", "median_delta"]] = [med, med_base, med - med_base]
            out.at[i, "dagger"] = daggers
            out.at[i, "mean_median_disagree"] = disagree(d, med - med_base, daggers)
    return out


def median_text(row) -> str:
    """'‡ (median Δ +133.00)' for a row whose mean and median disagree, else ''."""
    if not bool(row.get("mean_median_disagree", False)):
        return ""
    mark = " ‡" if bool(row.get("dagger", False)) else ""
    delta = row.get("median_delta", np.nan)
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
