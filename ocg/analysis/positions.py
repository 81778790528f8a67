"""Where order breaks (notebook 10): by the place a concept was asked in, how often it is there and
in its asked place, and which pairs of asked places come out of order.

Read from the token positions the order verdict used (`order_positions`, ocg/metrics/matching.py),
never by matching the text again, so a concept "in its place" agrees with `in_order`: an answer
with every concept has every concept in its asked place exactly when it is in order
(docs/METHODS.md, "Where order breaks"). Each answer row is one observation (repeated samples of
one prompt count each). Rates are percentages (0-100), as in the paper's tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import OcgInputError

KEYS = ("model", "condition")
CONDITION_ORDER = ("original", "ordered", "ordered_one_shot", "ordered_constrained")


def need(answers: pd.DataFrame, columns) -> None:
    """An error naming the columns this analysis needs that the answers lack."""
    missing = [c for c in columns if c not in answers]
    if missing:
        raise OcgInputError(
            "answers",
            f"no column {', '.join(missing)}; expected answers scored with the "
            "coverage family (docs/DATA.md)",
        )


def by_length(answers: pd.DataFrame) -> dict[int, tuple[pd.DataFrame, np.ndarray]]:
    """Per number of concepts n: its answers and their used positions, an (answers x n) int array
    (-1: the concept is missing)."""
    need(answers, ["order_positions"])
    a = answers.reset_index(drop=True)
    lengths = a["order_positions"].map(len)
    out = {}
    for n in sorted(lengths.unique()):
        rows = a[lengths == n].reset_index(drop=True)
        pos = np.stack([np.asarray(p, dtype=int) for p in rows["order_positions"]]).reshape(
            len(rows), int(n)
        )
        out[int(n)] = (rows, pos)
    return out


def in_place(pos: np.ndarray) -> np.ndarray:
    """(answers x n) booleans: the concept asked k-th is present, exactly k-1 concepts are written
    before it, and none shares its token (a concept inside another's word is not in its place)."""
    n = pos.shape[1]
    present = pos >= 0
    other = present[:, None, :] & ~np.eye(n, dtype=bool)[None]  # [answer, k, j]: j present, j != k
    before = (other & (pos[:, None, :] < pos[:, :, None])).sum(axis=2)
    shared = (other & (pos[:, None, :] == pos[:, :, None])).any(axis=2)
    return present & (before == np.arange(n)) & ~shared


def out_of_order(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(both, out): [answer, i, j] for asked places i < j: both concepts present, and the one asked
    j-th written before the one asked i-th or on the same token (the order check fails there too)."""
    n = pos.shape[1]
    present = pos >= 0
    both = present[:, :, None] & present[:, None, :] & np.triu(np.ones((n, n), dtype=bool), 1)[None]
    return both, both & (pos[:, None, :] <= pos[:, :, None])


def condition_sorted(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Rows sorted by `by`, conditions in the paper's order (original, ordered, one-shot)."""
    rank = {c: i for i, c in enumerate(CONDITION_ORDER)}
    return df.sort_values(
        by,
        key=lambda c: c.map(lambda v: (rank.get(v, len(rank)), v)) if c.name == "condition" else c,
        kind="stable",
    ).reset_index(drop=True)


def by_position(answers: pd.DataFrame, keys=KEYS) -> pd.DataFrame:
    """Per `keys`, number of concepts and asked place (1..n): answers, % with the concept present,
    % with it in its asked place, and that % among the answers with every concept."""
    keys, parts = list(keys), []
    for n, (rows, pos) in by_length(answers).items():
        present, placed = pos >= 0, in_place(pos)
        complete = present.all(axis=1)
        wide = rows[keys].copy()
        wide["n_concepts"], wide["complete"] = n, complete
        for k in range(n):
            wide[f"present_{k}"], wide[f"placed_{k}"] = present[:, k], placed[:, k]
            wide[f"placed_complete_{k}"] = placed[:, k] & complete
        sums = wide.groupby(keys + ["n_concepts"], observed=True).agg(["sum", "size"])
        for k in range(n):
            size, n_complete = sums[("complete", "size")], sums[("complete", "sum")]
            parts.append(
                pd.DataFrame(
                    {
                        "position": k + 1,
                        "n_answers": size,
                        "n_complete": n_complete,
                        "present_pct": 100 * sums[(f"present_{k}", "sum")] / size,
                        "in_place_pct": 100 * sums[(f"placed_{k}", "sum")] / size,
                        "in_place_if_complete_pct": (
                            100
                            * sums[(f"placed_complete_{k}", "sum")]
                            / n_complete.where(n_complete > 0)
                        ),
                    }
                ).reset_index()
            )
    columns = keys + [
        "n_concepts",
        "position",
        "n_answers",
        "n_complete",
        "present_pct",
        "in_place_pct",
        "in_place_if_complete_pct",
    ]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    return condition_sorted(out[columns], keys + ["n_concepts", "position"])


def swapped_pairs(answers: pd.DataFrame, keys=KEYS) -> pd.DataFrame:
    """Per `keys` and pair of asked places i < j: answers with both concepts, and % of them with
    the j-th concept not after the i-th (written before it, or on its token)."""
    keys, parts = list(keys), []
    for n, (rows, pos) in by_length(answers).items():
        both, out = out_of_order(pos)
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        wide = rows[keys].copy()
        for i, j in pairs:
            wide[f"both_{i}_{j}"], wide[f"out_{i}_{j}"] = both[:, i, j], out[:, i, j]
        sums = wide.groupby(keys, observed=True).sum()
        for i, j in pairs:
            n_both = sums[f"both_{i}_{j}"]
            parts.append(
                pd.DataFrame(
                    {
                        "n_concepts": n,
                        "first": i + 1,
                        "second": j + 1,
                        "n_both": n_both,
                        "n_out_of_order": sums[f"out_{i}_{j}"],
                        "out_of_order_pct": 100 * sums[f"out_{i}_{j}"] / n_both.where(n_both > 0),
                    }
                ).reset_index()
            )
    columns = keys + [
        "n_concepts",
        "first",
        "second",
        "n_both",
        "n_out_of_order",
        "out_of_order_pct",
    ]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    return condition_sorted(out[columns], keys + ["n_concepts", "first", "second"])


def position_wide(long: pd.DataFrame, values=("present_pct", "in_place_pct")) -> pd.DataFrame:
    """Display form of `by_position`: a row per model and condition, a column per asked place."""
    keys = [
        c
        for c in long.columns
        if c
        not in (
            "position",
            "n_answers",
            "n_complete",
            "present_pct",
            "in_place_pct",
            "in_place_if_complete_pct",
        )
    ]
    table = long.pivot_table(index=keys, columns="position", values=list(values), sort=False)
    return table.rename(columns=lambda c: c.removesuffix("_pct").replace("_", " "), level=0)


def swaps_wide(long: pd.DataFrame) -> pd.DataFrame:
    """Display form of `swapped_pairs`: a row per model and condition, a column per pair "i-j"."""
    keys = [
        c
        for c in long.columns
        if c not in ("first", "second", "n_both", "n_out_of_order", "out_of_order_pct")
    ]
    pair = long["first"].astype(str) + "–" + long["second"].astype(str)
    order = list(dict.fromkeys(pair))
    return long.assign(pair=pair).pivot_table(
        index=keys, columns="pair", values="out_of_order_pct", sort=False
    )[order]
