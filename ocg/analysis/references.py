"""The run's models beside reference sentences (docs/METHODS.md, "Reference rows").

One row per model on the `original` condition's answers: coverage without order, PoS-correct
coverage without order, the share of answers holding a non-word, SLOR and perplexity (median and
mean), the judge's mean where it scored, the answers counted and the distinct sentences among
them. A reference's one sentence answers every template, permutation and sample of its set, so
its per-answer means are over repeated sentences: `n_distinct` says how many there are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from ..results.scores import Scores

REFERENCE_CONDITION = "original"  # the one condition a reference answers

# The answers' columns the rows need (a smaller frame to load per model).
COLUMNS = [
    "model",
    "condition",
    "set_id",
    "answer",
    "all_present",
    "pos_all_present",
    "has_nonword",
    "slor",
    "perplexity",
    "judge_score",
]


def _mean(values: pd.Series) -> float:
    values = pd.to_numeric(values, errors="coerce").dropna()
    return float(values.mean()) if len(values) else float("nan")


def _median(values: pd.Series) -> float:
    values = pd.to_numeric(values, errors="coerce").dropna()
    return float(values.median()) if len(values) else float("nan")


def reference_rows(
    answers: pd.DataFrame, models: list[str], references: dict[str, str]
) -> pd.DataFrame:
    """One row per model of `models` (in that order; a model without `original` answers is
    left out): `references` maps a reference entry's name to its source text (the entry's
    `reference:`); the other models get an empty `reference`. Means and medians are over the
    answers that have the value (`n_perplexity`, `n_judged` count them where they can be fewer)."""
    rows = []
    for model in models:
        own = answers[(answers["model"] == model) & (answers["condition"] == REFERENCE_CONDITION)]
        if own.empty:
            continue
        judged = pd.to_numeric(own.get("judge_score"), errors="coerce").dropna()
        rows.append(
            {
                "model": model,
                "reference": references.get(model, ""),
                "n_answers": len(own),
                "n_distinct": int(own["answer"].astype(str).str.strip().nunique()),
                "n_sets": int(own["set_id"].nunique()),
                "coverage_wo_order": _mean(own["all_present"].astype(float)),
                "pos_coverage_wo_order": _mean(own["pos_all_present"].astype(float)),
                "nonword_rate": _mean(own["has_nonword"].astype(float)),
                "slor_median": _median(own["slor"]),
                "slor_mean": _mean(own["slor"]),
                "perplexity_median": _median(own["perplexity"]),
                "perplexity_mean": _mean(own["perplexity"]),
                "n_perplexity": int(
                    pd.to_numeric(own["perplexity"], errors="coerce").notna().sum()
                ),
                "judge_mean": float(judged.mean()) if len(judged) else float("nan"),
                "n_judged": len(judged),
            }
        )
    return pd.DataFrame(rows, columns=[*ROW_COLUMNS])


ROW_COLUMNS = (
    "model",
    "reference",
    "n_answers",
    "n_distinct",
    "n_sets",
    "coverage_wo_order",
    "pos_coverage_wo_order",
    "nonword_rate",
    "slor_median",
    "slor_mean",
    "perplexity_median",
    "perplexity_mean",
    "n_perplexity",
    "judge_mean",
    "n_judged",
)


def without_references(frame: pd.DataFrame, scores: Scores) -> pd.DataFrame:
    """`frame`'s rows of the run's models, without the reference entries' (`scores` from
    load_scores, whose `references` names them): what a mean or count over models is taken on."""
    refs = set(scores.references)
    return frame[~frame["model"].isin(refs)] if refs and "model" in frame else frame


def left_out(scores: Scores, what: str = "the mean over models") -> str:
    """The line shown under a table or figure over models when reference entries were left out
    of it ("" without any)."""
    n = len(scores.references)
    if not n:
        return ""
    entries = "the reference entry is" if n == 1 else f"the {n} reference entries are"
    return f"{entries} left out of {what}: docs/METHODS.md, Reference rows"
