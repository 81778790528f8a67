"""Which ordered concept lists and sets are hard (paper Appendix C.3, Figures 3 and 4)."""

from __future__ import annotations

import math

import pandas as pd


def composed_by(answers: pd.DataFrame, condition: str = "ordered") -> pd.DataFrame:
    """Per ordered concept list (set, permutation): how many models composed it (all concepts,
    in the given order) with any template and, in a run with repeated samples, any sample.
    Every model's lists are counted, 0 included."""
    a = answers[answers["condition"] == condition]
    per_model = a.groupby(["set_id", "perm_index", "model"])["in_order"].any().reset_index()
    out = (
        per_model.groupby(["set_id", "perm_index"])["in_order"]
        .sum()
        .rename("n_models")
        .reset_index()
    )
    first = a.drop_duplicates(["set_id", "perm_index"]).set_index(["set_id", "perm_index"])
    out["concepts"] = [
        " ".join(first.loc[(s, p), "concepts"]) for s, p in zip(out.set_id, out.perm_index)
    ]
    out["pos_pattern"] = [
        first.loc[(s, p), "pos_pattern"] for s, p in zip(out.set_id, out.perm_index)
    ]
    return out


def permutations_counted(composed: pd.DataFrame) -> tuple[int, int]:
    """(permutations per set present, all permutations of a set): (24, 24) for four concepts,
    (120, 120) for five, (m, 120) for a run with `permutations: m`; from the data, never assumed."""
    present = int(composed.groupby("set_id").size().max()) if len(composed) else 0
    total = math.factorial(int(composed["pos_pattern"].str.len().max())) if len(composed) else 0
    return present, total


def describe_permutations(composed: pd.DataFrame) -> str:
    """'all 120 permutations of each set', or '3 of 120 permutations of each set (a seeded sample)'."""
    present, total = permutations_counted(composed)
    if present == total:
        return f"all {total} permutations of each set"
    return f"{present} of {total} permutations of each set (a seeded sample)"


def figure3_data(composed: pd.DataFrame, n_models: int) -> pd.DataFrame:
    """Histogram of lists by number of models that composed them, with cumulative percent."""
    counts = composed["n_models"].value_counts().reindex(range(n_models + 1), fill_value=0)
    df = counts.rename_axis("n_models").rename("n_lists").reset_index()
    df["cumulative_percent"] = 100.0 * df["n_lists"].cumsum() / max(len(composed), 1)
    return df


def figure4_data(composed: pd.DataFrame, n_models: int) -> pd.DataFrame:
    """For each threshold k (at least k models), how many sets have j of their permutations
    composed: rows j = 0..m (the permutations of a set present: 24 of four concepts, 120 of five,
    or the m sampled), columns k = 1..n_models, cells = concept sets."""
    n_perms = permutations_counted(composed)[0]
    cols = {}
    for k in range(1, n_models + 1):
        per_set = (composed["n_models"] >= k).groupby(composed["set_id"]).sum()
        cols[k] = per_set.value_counts().reindex(range(n_perms + 1), fill_value=0)
    out = pd.DataFrame(cols)
    out.index.name = "permutations_composed"
    out.columns.name = "at_least_k_models"
    return out


def set_summary(composed: pd.DataFrame) -> dict:
    """The paper's headline counts: sets with all permutations composed by at least one model,
    sets with none, and sets with at least 75% of their permutations present composed."""
    per_set = (composed["n_models"] >= 1).groupby(composed["set_id"]).agg(["sum", "size"])
    return {
        "n_sets": len(per_set),
        "all_permutations_composed": int((per_set["sum"] == per_set["size"]).sum()),
        "no_permutation_composed": int((per_set["sum"] == 0).sum()),
        "at_least_75_percent_composed": int((per_set["sum"] >= 0.75 * per_set["size"]).sum()),
        "lists_composed_by_no_model": int((composed["n_models"] == 0).sum()),
    }


def hardest_sets(composed: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    per_set = composed.groupby("set_id").agg(
        permutations_composed=("n_models", lambda s: int((s > 0).sum())),
        mean_models=("n_models", "mean"),
        concepts=("concepts", "first"),
    )
    return per_set.sort_values(["permutations_composed", "mean_models"]).head(n).reset_index()


def hardest_permutations(composed: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    return composed.sort_values(["n_models", "set_id", "perm_index"]).head(n).reset_index(drop=True)
