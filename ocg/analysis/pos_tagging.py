"""What PoS-correct coverage rests on (docs/METHODS.md, "PoS-correct coverage"): per concept, the
share of the tokens that match it which spaCy tags with the part of speech its set asks. A concept
never tagged so (`bobsle_V`: spaCy tags "bobsled" NOUN or PROPN) fails every answer of its set by
construction, for every model: the metric then measures the tagger as much as the answers, so
Table 1 names such concepts under the table and bolds no PoS-correct column.
"""

from __future__ import annotations

import json

import pandas as pd

POS_METRICS = ("pos_coverage_wo_order", "pos_coverage_w_order")
POS_NAMES = {"N": "NOUN or PROPN", "V": "VERB"}
TABLE1_CONDITIONS = ("ordered", "original")


def concept_tagging(
    summary: pd.DataFrame, conditions=TABLE1_CONDITIONS, *, by_model: bool = False
) -> pd.DataFrame:
    """Per concept (`word_N`, `word_V`), and per model with `by_model`: matched tokens, those
    tagged with its part of speech and their share (%), summed over the templates of `conditions`
    (and over the models without `by_model`) from the summary's `pos_tagging`; empty for scores
    stored before it."""
    columns = ["concept", "pos", "matched", "tagged", "share"]
    columns = ["model", *columns] if by_model else columns
    if "pos_tagging" not in summary or summary.empty:
        return pd.DataFrame(columns=columns)
    counts: dict[tuple, list[int]] = {}
    rows_of = summary.loc[summary["condition"].isin(conditions)]
    models = rows_of["model"] if by_model else pd.Series("", index=rows_of.index)
    for model, text in zip(models, rows_of["pos_tagging"]):
        if pd.isna(text):
            continue
        for concept, (matched, tagged) in json.loads(text).items():
            tally = counts.setdefault((model, concept), [0, 0])
            tally[0] += matched
            tally[1] += tagged
    rows = [
        ((model,) if by_model else ())
        + (c, POS_NAMES.get(c.rsplit("_", 1)[-1], "?"), m, t, 100.0 * t / m if m else float("nan"))
        for (model, c), (m, t) in sorted(counts.items())
    ]
    return pd.DataFrame(rows, columns=columns)


def never_tagged(summary: pd.DataFrame, conditions=TABLE1_CONDITIONS) -> pd.DataFrame:
    """(model, concept, ...) where that model matched the concept at least once yet spaCy never
    tagged it with its part of speech: per model, as a model's PoS-correct score rests on its own
    answers' tags (another model's tagged matches do not rescue it)."""
    t = concept_tagging(summary, conditions, by_model=True)
    return t[(t["matched"] > 0) & (t["tagged"] == 0)].reset_index(drop=True)


def unbolded(summary: pd.DataFrame, conditions=TABLE1_CONDITIONS) -> frozenset[str]:
    """The PoS-correct metrics, where a concept of the run's sets is never tagged so in some
    model's answers: every set holding it scores 0 for that model, and the comparison rests on
    the tagger."""
    return frozenset(POS_METRICS) if len(never_tagged(summary, conditions)) else frozenset()
