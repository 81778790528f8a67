"""Medians beside the means of a shown table, from the table's own CSV (analysis/skew.py: the
median pooled over the answers of every template, and the median Δ): "1779.12 ‡ (median 67.10)"
in a value cell, "-1328.00 ‡ (median Δ +133.00)" in a Δ cell whose mean its median contradicts.
A table saved before these columns keeps the older marks (caveats.mark_perplexity, mark_slor)."""

from __future__ import annotations

import pandas as pd

from ..analysis import skew
from ..metrics.registry import label


def has_medians(long: pd.DataFrame) -> bool:
    return {"median", "median_delta", "mean_median_disagree"} <= set(long.columns)


def mark(table: pd.DataFrame, long: pd.DataFrame, delta: str) -> pd.DataFrame:
    """`table` (wide, columns (label, sub): sub "" or "value" for the value, another for the Δ)
    with each MEDIAN_METRICS cell as text: the median beside the mean, ‡ where the mean is over
    PPL_MEAN_OVER_MEDIAN x it, the median Δ beside a Δ it contradicts."""
    table = table.copy()
    for metric in skew.MEDIAN_METRICS:
        rows = long[(long["metric"] == metric) & long["median"].notna()].set_index("model")
        columns = [c for c in table.columns if c[0] == label(metric)]
        if rows.empty or not columns:
            continue
        for column in columns:
            is_value = column[1] in ("", "value")
            cells = []
            for model, v in zip(table.index, table[column]):
                if pd.isna(v):
                    cells.append("–")
                    continue
                if model not in rows.index:
                    cells.append(f"{v:.2f}" if is_value else f"{v:+.2f}")
                    continue
                r = rows.loc[model]
                if is_value:
                    mark_ = " ‡" if skew.dagger(metric, v, r["median"]) else ""
                    cells.append(f"{v:.2f}{mark_} (median {r['median']:.2f})")
                else:
                    cells.append(f"{v:+.2f}" + skew.median_text(r))
            table[column] = cells
    return table


def dominated(long: pd.DataFrame) -> list[tuple[str, float, float]]:
    """(model, perplexity mean, its pooled median) where the mean is over
    PPL_MEAN_OVER_MEDIAN x the median: marked ‡."""
    rows = long[(long["metric"] == "perplexity") & long["median"].notna()]
    return [
        (r.model, float(r.value), float(r.median))
        for r in rows.itertuples()
        if skew.dagger("perplexity", r.value, r.median)
    ]


def contradicted(long: pd.DataFrame, delta: str) -> list[tuple[str, str, float, float]]:
    """(model, metric label, mean Δ, median Δ) where the median contradicts the mean Δ."""
    rows = long[long["mean_median_disagree"].fillna(False).astype(bool)]
    return [
        (r["model"], label(r["metric"]), float(r[delta]), float(r["median_delta"]))
        for r in rows.to_dict("records")
    ]
