"""Each model's design (conditions, templates, concept sets, n) and the instances models share.

Models run on different instance sets are compared on the instances they share (docs/METHODS.md,
"The instances models share"): per condition, the (template, concept set) groups that every model
which ran that condition answered with the same permutations. A whole group is kept or left out,
since the group metrics (pBLEU, pBLEURT, Diverse Rate) are computed over its permutations.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core.errors import OcgInputError
from ..core.frames import INSTANCE_KEY, SET_KEY, SUMMARY_KEYS


def design(keys: pd.DataFrame) -> dict:
    """What one model answered: conditions, templates, number of concept sets, answers; with a
    `pos_pattern` column, the permutations per (condition, template, set) group and of how many."""
    out = {
        "conditions": sorted(keys["condition"].unique()),
        "templates": sorted(int(t) for t in keys["template_id"].unique()),
        "sets": int(keys["set_id"].nunique()),
        "n": len(keys),
    }
    if "pos_pattern" in keys and len(keys):
        out["permutations"] = int(keys.groupby(SET_KEY)["perm_index"].nunique().max())
        out["of_permutations"] = math.factorial(int(keys["pos_pattern"].str.len().max()))
    return out


def describe_design(d: dict, n: bool = True) -> str:
    """'432 answers: original, ordered; templates 0, 1, 2; 2 concept sets; all 24 permutations'
    (or '3 of 120 permutations per set' when sampled; without the count: n=False)."""
    what = (
        f"{', '.join(d['conditions'])}; template{'s' * (len(d['templates']) > 1)} "
        f"{', '.join(map(str, d['templates']))}; {d['sets']} concept set{'s' * (d['sets'] > 1)}"
    )
    if d.get("permutations"):
        what += (
            f"; all {d['of_permutations']} permutations"
            if d["permutations"] == d["of_permutations"]
            else f"; {d['permutations']} of {d['of_permutations']} permutations per set"
        )
    return f"{d['n']:,} answers: {what}" if n else what


def _fingerprint(keys: pd.DataFrame) -> tuple[int, int]:
    """Equal for two models that answered the same instances (in any order)."""
    rows = pd.util.hash_pandas_object(keys[INSTANCE_KEY], index=False).to_numpy()
    return len(rows), int(rows.sum(dtype=np.uint64))


def _groups(keys: pd.DataFrame) -> pd.Series:
    """Per (condition, template, set): the permutations answered, as a bit mask (62 per word)."""
    perm = keys["perm_index"].to_numpy()
    bits = pd.Series(np.left_shift(np.int64(1), perm % 62), index=keys.index)
    masks = bits.groupby(
        [keys[c] for c in SET_KEY] + [pd.Series(perm // 62, index=keys.index)]
    ).sum()
    masks = masks.unstack(fill_value=0)
    return pd.Series(
        [tuple(row[: np.flatnonzero(row).max() + 1]) for row in masks.to_numpy()], index=masks.index
    )


def shared_groups(keys: dict[str, pd.DataFrame]) -> tuple[set[tuple], list[str]]:
    """The shared (condition, template, set) groups, and the conditions that models ran but
    share no group of."""
    table = pd.concat({m: _groups(k) for m, k in keys.items()}, axis=1)  # groups x models
    shared, disjoint = set(), []
    for cond in sorted(table.index.get_level_values(0).unique()):
        sub = table[table.index.get_level_values(0) == cond]
        sub = sub.loc[:, sub.notna().any()]  # the models that ran this condition
        kept = sub.index[sub.notna().all(axis=1) & (sub.nunique(axis=1) == 1)]
        if kept.empty:
            disjoint.append(cond)
        shared.update(kept)
    return shared, disjoint


def in_groups(df: pd.DataFrame, groups: set[tuple]) -> pd.Series:
    return pd.Series(pd.MultiIndex.from_frame(df[SET_KEY]).isin(list(groups)), index=df.index)


def compare(
    keys: dict[str, pd.DataFrame], allow_mixed: bool, where: str
) -> tuple[set[tuple] | None, list[str]]:
    """(the groups tables keep, or None for all; lines saying what differs and what was done).

    Refuses, naming each design, when models that ran a condition share none of its instances,
    unless allow_mixed."""
    if len({_fingerprint(k) for k in keys.values()}) < 2:
        return None, []  # every model answered the same instances (the usual case: checked fast)
    shared, disjoint = shared_groups(keys)
    left_out = {m: int((~in_groups(k, shared)).sum()) for m, k in keys.items()}
    if not any(left_out.values()):
        return None, []
    designs = "; ".join(f"{m}: {describe_design(design(k))}" for m, k in keys.items())
    if disjoint and not allow_mixed:
        raise OcgInputError(
            where,
            f"these models share no instance of condition(s) {disjoint} "
            f"({designs}); run them on the same concept sets and templates, or pass "
            "allow_mixed=True to show each on its own instances",
        )
    if allow_mixed:
        return None, [
            f"These models answered different instances ({designs}); with allow_mixed each "
            "is shown on its own instances, so numbers in one table are not comparable."
        ]
    dropped = ", ".join(f"{m} {n:,}" for m, n in left_out.items() if n)
    return shared, [
        f"These models answered different instances ({designs}). Tables compare them on "
        f"the instances they share; answers left out: {dropped}. allow_mixed=True shows "
        "each on its own instances instead."
    ]


def tables_note(keys: dict[str, pd.DataFrame]) -> list[str]:
    """What the analysis notebooks (run without allow_mixed) say, or the refusal they stop with."""
    try:
        return compare(keys, allow_mixed=False, where="tables")[1]
    except OcgInputError as exc:
        return [f"The tables refuse these models: {exc.problem}"]


def restrict(tables: dict[str, pd.DataFrame], groups: set[tuple]) -> dict[str, pd.DataFrame]:
    """One model's answers and groups on the shared groups, and its summary recomputed from them
    as scoring summarises it (a sampled run's per sample, then over samples)."""
    from ..scoring.run import summarise
    from ..scoring.samples import summarise_over_samples

    answers = tables["answers"][in_groups(tables["answers"], groups)].reset_index(drop=True)
    group_rows = tables["groups"][in_groups(tables["groups"], groups)].reset_index(drop=True)
    summary = summarise_over_samples(answers, group_rows, SUMMARY_KEYS, summarise)
    for col in [c for c in tables["summary"].columns if c.endswith("_missing_reason")]:
        summary[col] = tables["summary"][col].iloc[0]
    return {"answers": answers, "groups": group_rows, "summary": summary}
