"""Each model's preferred order (notebook 10): per concept set, the order its answers write the
concepts in whatever order was asked, and how the first concept's part of speech and the POS
pattern go with the in-order rate (beside the paper's Table 2). docs/METHODS.md, "Where order
breaks"."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import OcgInputError
from ..core.frames import GROUP_KEYS
from ..metrics.registry import FAMILIES
from ..metrics.sufficient_statistics import pooled_sums, ratios, sufficient_statistics
from . import paper_tables
from .positions import CONDITION_ORDER, KEYS, by_length, by_position, condition_sorted, need


def of_condition(answers: pd.DataFrame, condition: str) -> pd.DataFrame:
    """The answers of one condition; an error naming the conditions scored when it is not one."""
    a = answers[answers["condition"] == condition]
    if a.empty:
        raise OcgInputError(
            "condition",
            f"{condition!r} has no scored answers; expected one of "
            f"{', '.join(conditions(answers)) or 'none'}",
        )
    return a


def written_orders(answers: pd.DataFrame) -> pd.Series:
    """Per answer (same index): its concepts joined by spaces in the order written, by the
    positions the order verdict used (two on one token: alphabetically); None when one is missing."""
    need(answers, ["concepts"])
    out = pd.Series(None, index=answers.index, dtype=object)
    for rows, pos in by_length(answers.assign(_row=np.arange(len(answers)))).values():
        words = np.empty(pos.shape, dtype=object)
        words[:] = [list(c) for c in rows["concepts"]]
        ranked = np.take_along_axis(words, np.argsort(pos, axis=1, kind="stable"), axis=1)
        orders = ranked[:, 0].astype(str)
        for k in range(1, pos.shape[1]):
            orders = np.char.add(np.char.add(orders, " "), ranked[:, k].astype(str))
        orders = orders.astype(object)
        tied = np.flatnonzero((np.diff(np.sort(pos, axis=1), axis=1) == 0).any(axis=1))
        orders[tied] = [" ".join(w for _, w in sorted(zip(pos[i], words[i]))) for i in tied]
        orders[~(pos >= 0).all(axis=1)] = None
        out.iloc[rows["_row"].to_numpy()] = orders
    return out


def preferred_orders(answers: pd.DataFrame) -> pd.DataFrame:
    """Per model, condition, template and concept set: answers, the asked permutations, answers with
    every concept, distinct written orders, the most frequent one (ties: alphabetically first) and
    how many answers write it."""
    a = answers[GROUP_KEYS + ["perm_index", "concepts"]].assign(order=written_orders(answers))
    a = a.assign(concept_set=[" ".join(sorted(c)) for c in a["concepts"]])
    counts = (
        a.dropna(subset=["order"])
        .groupby(GROUP_KEYS + ["order"], observed=True)
        .size()
        .rename("n")
        .reset_index()
    )
    top = counts.sort_values(
        GROUP_KEYS + ["n", "order"], ascending=[True] * len(GROUP_KEYS) + [False, True]
    )
    top = top.drop_duplicates(GROUP_KEYS).rename(
        columns={"order": "preferred_order", "n": "n_preferred"}
    )
    out = a.groupby(GROUP_KEYS, observed=True).agg(
        concept_set=("concept_set", "first"),
        n_answers=("perm_index", "size"),
        n_permutations=("perm_index", "nunique"),
        n_complete=("order", "count"),
        n_orders=("order", "nunique"),
    )
    out = out.reset_index().merge(top, on=GROUP_KEYS, how="left")
    out["n_preferred"] = out["n_preferred"].fillna(0).astype(int)
    out["preferred_pct"] = 100 * out["n_preferred"] / out["n_answers"]
    return condition_sorted(out, GROUP_KEYS)


def preference_summary(prefs: pd.DataFrame) -> pd.DataFrame:
    """Per model and condition: groups, answers per group (N, its range), the mean % of answers
    writing the group's preferred order, groups where every answer writes it, and the mean % minus
    `original`'s (how much the condition weakens the preference: negative is weaker)."""
    g = prefs.assign(one=prefs["n_preferred"] == prefs["n_answers"]).groupby(
        list(KEYS), observed=True
    )
    out = g.agg(
        n_groups=("set_id", "size"),
        min_answers=("n_answers", "min"),
        max_answers=("n_answers", "max"),
        permutations=("n_permutations", "max"),
        preferred_pct=("preferred_pct", "mean"),
        one_order_groups=("one", "sum"),
    ).reset_index()
    out["baseline_pct"] = 100 / out["permutations"]  # every answer in its asked order
    original = out[out["condition"] == "original"].set_index("model")["preferred_pct"]
    out["preferred_pct_vs_original"] = out["preferred_pct"] - out["model"].map(original)
    return condition_sorted(out, list(KEYS))


def strongest(
    prefs: pd.DataFrame, answers: pd.DataFrame, condition: str = "ordered", n: int = 5
) -> pd.DataFrame:
    """Per model, the `n` groups of `condition` whose preferred order recurs most ("k of N"), with
    the answer text most often written in that order and how many answers are exactly it."""
    p = prefs[(prefs["condition"] == condition) & (prefs["n_preferred"] > 0)]
    p = p.sort_values(
        ["model", "preferred_pct", "set_id", "template_id"], ascending=[True, False, True, True]
    )
    p = p.groupby("model", observed=True).head(n)
    a = of_condition(answers, condition)
    a = a[GROUP_KEYS + ["answer"]].assign(
        order=written_orders(a), text=a["answer"].fillna("").str.strip()
    )
    texts = (
        a.dropna(subset=["order"])
        .groupby(GROUP_KEYS + ["order", "text"], observed=True)
        .size()
        .rename("n_same_text")
        .reset_index()
        .sort_values(
            GROUP_KEYS + ["order", "n_same_text", "text"], ascending=[True] * 5 + [False, True]
        )
    )
    texts = texts.drop_duplicates(GROUP_KEYS + ["order"]).rename(
        columns={"order": "preferred_order"}
    )
    out = p.merge(texts, on=GROUP_KEYS + ["preferred_order"], how="left")
    out["how_often"] = [f"{k} of {m}" for k, m in zip(out["n_preferred"], out["n_answers"])]
    return (
        out[
            [
                "model",
                "template_id",
                "concept_set",
                "preferred_order",
                "how_often",
                "text",
                "n_same_text",
            ]
        ]
        .rename(columns={"text": "most_common_answer"})
        .reset_index(drop=True)
    )


def _rates(answers: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per keys: answers, the sums Ordered Rate pools, and the coverage family's metrics (w/o and
    w/ order, Ordered Rate) from their declarations (metrics/registry.py), as the summary has them."""
    stats = sufficient_statistics(answers, pd.DataFrame(), keys)
    return pd.concat(
        [
            stats[["n"]].rename(columns={"n": "n_answers"}),
            pooled_sums(stats),
            ratios(stats, FAMILIES["coverage"].metrics),
        ],
        axis=1,
    ).reset_index()


def by_first_pos(answers: pd.DataFrame, condition: str = "ordered") -> pd.DataFrame:
    """Per part of speech of the concept asked first (N, V): mean and SD over models of w/o, w/,
    Ordered Rate and % of answers with the first concept in its place."""
    need(answers, ["all_present", "in_order", "pos_pattern"])
    a = of_condition(answers, condition)
    a = a.assign(first_pos=a["pos_pattern"].astype(str).str[0])
    per_model = _rates(a, ["model", "first_pos"])
    first = by_position(a, ["model", "first_pos"])
    first = first[first["position"] == 1].groupby(["model", "first_pos"])["in_place_pct"].mean()
    per_model = per_model.merge(
        first.rename("first_in_place_pct").reset_index(), on=["model", "first_pos"]
    )
    values = ["coverage_wo_order", "coverage_w_order", "ordered_rate", "first_in_place_pct"]
    out = per_model.groupby("first_pos")[values].agg(["mean", "std"])
    out.columns = [f"{v}_{s.replace('std', 'sd')}" for v, s in out.columns]
    out.insert(0, "n_models", per_model.groupby("first_pos")["model"].nunique())
    out.insert(1, "n_answers", per_model.groupby("first_pos")["n_answers"].sum())
    return out.reset_index()


def by_pattern(answers: pd.DataFrame, condition: str = "ordered") -> pd.DataFrame:
    """Per POS pattern: Table 2's w/ order and Ordered Rate (mean over models) beside the mean over
    models of the % of answers with the concept asked at each place in its place."""
    need(answers, ["pos_pattern"])
    a = of_condition(answers, condition)
    placed = by_position(a, ["model", "pos_pattern"])
    placed = placed.groupby(["pos_pattern", "position"])["in_place_pct"].mean().unstack("position")
    placed.columns = [f"in_place_{k}_pct" for k in placed.columns]
    t2 = paper_tables.table2(a, condition)
    t2 = t2[t2["metric"].isin(["coverage_w_order", "ordered_rate"])]
    t2 = t2.pivot(index="pos_pattern", columns="metric", values="mean_over_llms")
    t2.columns = [f"table2_{c}" for c in t2.columns]
    return t2.join(placed, how="outer").reset_index()


def conditions(answers: pd.DataFrame) -> list[str]:
    """The conditions these answers hold, in the paper's order."""
    held = set(answers["condition"].unique())
    return [c for c in CONDITION_ORDER if c in held] + sorted(held - set(CONDITION_ORDER))
