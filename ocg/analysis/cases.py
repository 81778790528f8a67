"""Examples to read (paper 5.1 and the Gemma "dock dog jump water" case)."""

from __future__ import annotations

import pandas as pd


def identical_across_permutations(
    answers: pd.DataFrame, model: str | None = None, condition: str = "ordered", n: int = 5
) -> pd.DataFrame:
    """Groups whose answers repeat most across permutations: the answer and how often it recurs."""
    a = answers[answers["condition"] == condition]
    if model:
        a = a[a["model"] == model]
    a = a.assign(text=a["answer"].fillna("").str.strip())
    keys = ["model", "template_id", "set_id"]
    top = (
        a.groupby(keys + ["text"])
        .size()
        .rename("n_permutations")
        .reset_index()
        .sort_values(["n_permutations", "model", "set_id"], ascending=[False, True, True])
    )
    top = top[top["n_permutations"] > 1].drop_duplicates(keys).head(n)
    words = a.drop_duplicates("set_id").set_index("set_id")["concepts"]
    top["concept_set"] = top["set_id"].map(lambda s: " ".join(sorted(words[s])))
    return top[["model", "template_id", "concept_set", "n_permutations", "text"]].reset_index(
        drop=True
    )


def missed_concepts(
    answers: pd.DataFrame,
    model: str | None = None,
    condition: str = "ordered",
    n: int = 10,
    seed: int = 0,
) -> pd.DataFrame:
    a = answers[(answers["condition"] == condition) & ~answers["all_present"]]
    if model:
        a = a[a["model"] == model]
    a = a.sample(min(n, len(a)), random_state=seed) if len(a) else a
    missing = [
        [c for c, p in zip(cs, pos) if p < 0]
        for cs, pos in zip(a["concepts"], a["match_positions"])
    ]
    return pd.DataFrame(
        {
            "model": a["model"].values,
            "concepts": [" ".join(c) for c in a["concepts"]],
            "missing": [" ".join(m) for m in missing],
            "answer": a["answer"].values,
        }
    )


def reordered_concepts(
    answers: pd.DataFrame,
    model: str | None = None,
    condition: str = "ordered",
    n: int = 10,
    seed: int = 0,
) -> pd.DataFrame:
    """Answers with every concept, in another order: the asked order beside the written one."""
    a = answers[(answers["condition"] == condition) & answers["all_present"] & ~answers["in_order"]]
    if model:
        a = a[a["model"] == model]
    a = a.sample(min(n, len(a)), random_state=seed) if len(a) else a
    written = [
        " ".join(c for _, c in sorted(zip(pos, cs)))
        for cs, pos in zip(a["concepts"], a["match_positions"])
    ]
    return pd.DataFrame(
        {
            "model": a["model"].values,
            "asked_order": [" ".join(c) for c in a["concepts"]],
            "written_order": written,
            "answer": a["answer"].values,
        }
    )
