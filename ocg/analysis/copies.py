"""Table 1's coverage columns without the answers that copy the concept list (docs/METHODS.md,
"Answers that copy the list"; the sensitivity view, analysis/sensitivity.py).

`original` holds copies too, so the Δ is recomputed on both sides, three ways:
- excluding copies on both sides: each condition's answers that are not copies (no longer
  paired: the two sides stand on different prompts);
- paired, on the prompts where neither condition's answer copies: the same prompts on both sides
  (`n_answers` = `n_original`, the pairs kept);
- counting copies as failures: a copy counts as neither complete nor in order, over all answers
  (the same denominator as Table 1 for w/o and w/ order: w/ order is then "in order and not a
  copy, share of all answers"; Ordered Rate, w/ order over w/o order, is then over the complete
  answers that are not copies, not Table 1's every complete answer).
Both pooled over the model's templates (ratios of sums), so Ordered Rate = w/ order / w/o order
holds in every row; in a complete run every template has as many answers, and pooling equals
Table 1's mean over templates. Also the share of in-order answers that copy the list (Table 1's
caption line, in notebook 03 and on the landing page).
"""

from __future__ import annotations

import pandas as pd

from ..core.frames import SAMPLE
from ..metrics.registry import FAMILIES

CHOICE = "answers: list copies"
EXCLUDED, FAILED = "excluding copies on both sides", "counting copies as failures"
PAIRED = "paired: prompts where neither answer copies"
VARIANTS = (EXCLUDED, PAIRED, FAILED)
PROMPT = ["model", "template_id", "set_id", "perm_index"]  # a prompt, asked in both conditions


COPY_SHARE_LEAD = (
    "In-order answers that copy the concept list (the concepts as one run in the asked order, "
    "nothing but punctuation, “and” or articles between them)"
)


def copy_shares(summary: pd.DataFrame) -> list[str]:
    """Per model: '<model>: 60% (36 of 60)', the share of `ordered` answers judged in order that
    copy the list (Table 1's caption line, on the landing page and in notebook 03)."""
    if "n_copies_list" not in summary or "n_in_order" not in summary:
        return []
    ordered = (
        summary[summary["condition"] == "ordered"]
        .groupby("model")[["n_in_order", "n_copies_list"]]
        .sum()
    )
    return [
        f"{m}: {100 * r.n_copies_list / r.n_in_order:.0f}% ({int(r.n_copies_list)} of {int(r.n_in_order)})"
        for m, r in ordered.iterrows()
        if r.n_in_order
    ]


def _flags(answers: pd.DataFrame) -> pd.DataFrame:
    copy = answers["copies_list"].fillna(False).astype(bool)
    return answers.assign(
        _present=answers["all_present"].fillna(False).astype(bool),
        _in=answers["in_order"].fillna(False).astype(bool),
        _copy=copy,
    )


def _pooled(a: pd.DataFrame) -> pd.DataFrame:
    """Per model: w/o, w/ and Ordered Rate as ratios of sums over all its answers, and n."""
    g = a.groupby("model", sort=True)
    n, present, inside = g.size(), g["_present"].sum(), g["_in"].sum()
    return pd.DataFrame(
        {
            "coverage_wo_order": 100 * present / n,
            "coverage_w_order": 100 * inside / n,
            "ordered_rate": 100 * inside / present.where(present > 0),
            "n": n,
        }
    )


def _neither_copies(answers: pd.DataFrame) -> pd.DataFrame:
    """The answers of the prompts (and samples) whose `ordered` and `original` answers both exist
    and neither copies the list."""
    key = PROMPT + ([SAMPLE] if SAMPLE in answers else [])
    flags = _flags(answers[answers["condition"].isin(["ordered", "original"])])
    by = flags.assign(_c=flags["_copy"].astype(int)).pivot_table(
        index=key, columns="condition", values="_c", aggfunc="max"
    )
    if not {"ordered", "original"} <= set(by.columns):
        return answers.iloc[0:0]
    keep = by[(by["ordered"] == 0) & (by["original"] == 0)].index  # a missing side (NaN): unpaired
    return answers[pd.MultiIndex.from_frame(answers[key]).isin(keep)]


def variant(answers: pd.DataFrame, which: str, condition: str) -> pd.DataFrame:
    """Per model, for `condition`: the coverage columns under `which` (VARIANTS), and the answers
    they stand on (`n`)."""
    if which == PAIRED:
        answers = _neither_copies(answers)
    a = _flags(answers[answers["condition"] == condition])
    if which in (EXCLUDED, PAIRED):
        a = a[~a["_copy"]]
    else:
        a = a.assign(_present=a["_present"] & ~a["_copy"], _in=a["_in"] & ~a["_copy"])
    return _pooled(a)


def rows(answers: pd.DataFrame, default: pd.DataFrame, default_delta: pd.DataFrame) -> list[dict]:
    """The sensitivity rows of both variants: value and Δ vs `original` beside Table 1's (`default`,
    `default_delta`: per model and metric); `n_answers` the `ordered` answers each stands on and
    `n_original` the `original` ones."""
    if "copies_list" not in answers or "ordered" not in set(answers["condition"]):
        return []
    out = []
    for which in VARIANTS:
        ordered, original = variant(answers, which, "ordered"), variant(answers, which, "original")
        # the coverage metrics that rest on present and in order (not PoS-correct coverage's own verdicts)
        names = [m.name for m in FAMILIES["coverage"].metrics if m.name in ordered.columns]
        for model in default.index.intersection(ordered.index):
            for name in names:
                value, base = ordered.at[model, name], default.at[model, name]
                other = original.at[model, name] if model in original.index else float("nan")
                out.append(
                    {
                        "model": model,
                        "metric": name,
                        "choice": CHOICE,
                        "variant": which,
                        "value": value,
                        "default": base,
                        "shift": value - base,
                        "n_answers": int(ordered.at[model, "n"]),
                        "delta": value - other,
                        "default_delta": default_delta.at[model, name]
                        if model in default_delta.index
                        else float("nan"),
                        "n_original": int(original.at[model, "n"])
                        if model in original.index
                        else 0,
                    }
                )
    return out


def wide(long: pd.DataFrame) -> pd.DataFrame:
    """Display form: per model and metric, Table 1's value and Δ, then each variant's value and Δ,
    and the answers each stands on (ordered / original)."""
    from ..metrics.registry import label

    rows = long[long["choice"] == CHOICE] if "choice" in long else long.iloc[:0]
    if rows.empty:
        return pd.DataFrame()
    out = {}
    for (model, metric), g in rows.groupby(["model", "metric"], sort=False):
        g = g.set_index("variant")
        first = g.iloc[0]
        row = {
            ("Table 1", "value"): first["default"],
            ("Table 1", "Δ vs original"): first["default_delta"],
        }
        for which in VARIANTS:
            if which in g.index:
                r = g.loc[which]
                row[(which, "value")], row[(which, "Δ vs original")] = r["value"], r["delta"]
                row[(which, "answers")] = f"{int(r['n_answers'])} / {int(r['n_original'])}"
        out[(model, label(metric))] = row
    table = pd.DataFrame.from_dict(out, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    table.index = pd.MultiIndex.from_tuples(table.index, names=["model", "metric"])
    return table
