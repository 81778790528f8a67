"""What forcing the order costs, answer by answer (docs/METHODS.md, "Forcing the order"): per model
and condition, how many answers finished, how many the token budget cut, how many are in order by
ocg's matcher, and why each forced answer that is not in order missed; and how often an in-order
answer is just the concept list (ocg/metrics/listcopy.py)."""

from __future__ import annotations

import pandas as pd

from ..metrics.registry import label
from .tables import ASKED, FORCED, UNORDERED, wide

CONDITIONS = (UNORDERED, ASKED, FORCED)
WHY = {"budget": "cut by the token budget (finish_reason: length) before the grammar's end",
       "finished": "finished, yet not in order by ocg's matcher (a forced answer: the matcher misses a form the "
                   "grammar admitted)",
       "failed": "no answer could be extracted"}


def _flag(answers: pd.DataFrame, column: str) -> pd.Series:
    return answers[column].fillna(False).astype(bool) if column in answers else pd.Series(False, index=answers.index)


def why_missed(answers: pd.DataFrame) -> pd.Series:
    """Per answer not in order: budget, finished or failed (WHY); None for one in order."""
    truncated, in_order = _flag(answers, "truncated"), _flag(answers, "in_order")
    failed = answers["answer"].isna() if "answer" in answers else pd.Series(False, index=answers.index)
    why = pd.Series(None, index=answers.index, dtype=object)
    why[~in_order & failed] = "failed"
    why[~in_order & ~failed & truncated] = "budget"
    why[~in_order & ~failed & ~truncated] = "finished"
    return why


def outcomes(answers: pd.DataFrame) -> pd.DataFrame:
    """Per model and condition (original, ordered, ordered_constrained where present): answers,
    in order, finished, cut by the budget, list copies among the in-order ones; and, for the forced
    condition, its answers not in order by reason (where any other condition has them too)."""
    a = answers[answers["condition"].isin(CONDITIONS)] if "condition" in answers else answers.iloc[:0]
    if a.empty:
        return pd.DataFrame()
    a = a.assign(_in=_flag(a, "in_order"), _cut=_flag(a, "truncated"), _copy=_flag(a, "copies_list"), _why=why_missed(a))
    rows = []
    for (model, cond), g in a.groupby(["model", "condition"], sort=True):
        n, inside = len(g), int(g["_in"].sum())
        row = {"model": model, "condition": cond, "answers": n, "in order": inside,
               "in order %": 100 * inside / n, "cut by budget": int(g["_cut"].sum()),
               "list copies": int((g["_in"] & g["_copy"]).sum()),
               "list copies % of in order": 100 * (g["_in"] & g["_copy"]).sum() / inside if inside else float("nan")}
        row.update({f"missed: {k}": int((g["_why"] == k).sum()) for k in WHY})
        rows.append(row)
    order = {c: i for i, c in enumerate(CONDITIONS)}
    return pd.DataFrame(rows).sort_values(["model", "condition"], key=lambda s: s.map(order) if s.name == "condition" else s,
                                          ignore_index=True)


def unexplained(answers: pd.DataFrame) -> pd.DataFrame:
    """The forced answers that finished inside the grammar and still are not in order: each is
    shown, so a reader sees which inflected form the matcher did not take."""
    a = answers[answers["condition"] == FORCED] if "condition" in answers else answers.iloc[:0]
    if a.empty:
        return pd.DataFrame(columns=["model", "instance_id", "concepts", "answer"])
    a = a[why_missed(a) == "finished"]
    return a[["model", "instance_id", "concepts", "pos_pattern", "answer"]].reset_index(drop=True)


def forced_wide(long: pd.DataFrame) -> pd.DataFrame:
    """tables.forced_order for display: per model and metric, the forced value, Δ vs ordered, Δ vs original."""
    both = wide(long, "model", "value", "delta_vs_ordered")
    other = wide(long, "model", "value", "delta_vs_original")
    parts = {m: pd.concat([both[m], other[m].iloc[:, 1:]], axis=1) for m in both.columns.get_level_values(0).unique()}
    return pd.concat(parts, axis=1)


KEYS = ("model", "condition")


def _header(name) -> str:
    """A metric's label as the paper prints it; any other column in words (instance_id: instance id)."""
    text = label(str(name))
    return text.replace("_", " ") if text == str(name) else text


def shown(table: pd.DataFrame):
    """A table as notebook 12 shows it: headers in words, "–" for a missing value, rows keyed by
    model (and condition) rather than by a row number. The saved tables keep their own columns."""
    if table.empty:
        return table
    if isinstance(table.index, pd.RangeIndex):
        keys = [k for k in KEYS if k in table.columns]
        table = table.set_index(keys) if keys else table
    table = table.rename(columns=_header).rename_axis(index=[_header(n) if n else n for n in table.index.names])
    styled = table.style.format(precision=2, na_rep="–")
    return styled if table.index.names != [None] else styled.hide(axis="index")
