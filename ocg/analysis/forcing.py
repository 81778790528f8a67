"""What forcing the order costs, answer by answer (docs/METHODS.md, "Forcing the order"): per model
and condition, how many answers finished, how many the token budget cut, how many are in order by
ocg's matcher, and why each forced answer that is not in order missed; and how often an in-order
answer is just the concept list (ocg/metrics/listcopy.py)."""

from __future__ import annotations

import pandas as pd

from ..metrics.registry import label
from . import skew
from .paper_tables import ASKED, FORCED, UNORDERED, wide
from .skew import PPL_MEAN_OVER_MEDIAN  # noqa: F401  (read here by site/sections.py)

CONDITIONS = (UNORDERED, ASKED, FORCED)
WHY = {
    "budget": "cut by the token budget (finish_reason: length) before the grammar's end",
    "finished": "finished, yet not in order by ocg's matcher (a forced answer: the matcher misses a form the "
    "grammar admitted)",
    "failed": "no answer could be extracted",
}


def _flag(answers: pd.DataFrame, column: str) -> pd.Series:
    return (
        answers[column].fillna(False).astype(bool)
        if column in answers
        else pd.Series(False, index=answers.index)
    )


def why_missed(answers: pd.DataFrame) -> pd.Series:
    """Per answer not in order: budget, finished or failed (WHY); None for one in order."""
    truncated, in_order = _flag(answers, "truncated"), _flag(answers, "in_order")
    failed = (
        answers["answer"].isna() if "answer" in answers else pd.Series(False, index=answers.index)
    )
    why = pd.Series(None, index=answers.index, dtype=object)
    why[~in_order & failed] = "failed"
    why[~in_order & ~failed & truncated] = "budget"
    why[~in_order & ~failed & ~truncated] = "finished"
    return why


# What a reader asks first: how far forcing goes (w/ order, Ordered Rate) and at what cost (the
# perplexity median beside its mean, list copies, answers cut by the budget); the rest follows.
LEAD = [
    "w/ order %",
    "Ordered Rate %",
    "perplexity median",
    "perplexity mean",
    "list copies",
    "cut by budget",
]


def _perplexity(g: pd.DataFrame, how: str) -> float:
    """The mean as Table 1 takes it (per template, then over templates); the median over every
    answer at once, as Tables 1 and 4 show it beside the mean (analysis/skew.py)."""
    if "perplexity" not in g or g["perplexity"].notna().sum() == 0:
        return float("nan")
    if how == "median":
        return float(g["perplexity"].median())
    by = g["template_id"] if "template_id" in g else pd.Series(0, index=g.index)
    return float(g["perplexity"].groupby(by).agg(how).mean())


def outcomes(answers: pd.DataFrame) -> pd.DataFrame:
    """Per model and condition (original, ordered, ordered_constrained where present): LEAD first
    (w/ order and Ordered Rate pooled over templates, perplexity per template then over templates,
    list copies among the in-order answers, answers cut by the budget), then answers, in order,
    list copies % of in order and, for the forced condition, its answers not in order by reason."""
    a = (
        answers[answers["condition"].isin(CONDITIONS)]
        if "condition" in answers
        else answers.iloc[:0]
    )
    if a.empty:
        return pd.DataFrame()
    a = a.assign(
        _in=_flag(a, "in_order"),
        _cut=_flag(a, "truncated"),
        _copy=_flag(a, "copies_list"),
        _present=_flag(a, "all_present") if "all_present" in a else _flag(a, "in_order"),
        _why=why_missed(a),
    )
    rows = []
    for (model, cond), g in a.groupby(["model", "condition"], sort=True):
        n, inside, present = len(g), int(g["_in"].sum()), int(g["_present"].sum())
        copies = int((g["_in"] & g["_copy"]).sum())
        row = {
            "model": model,
            "condition": cond,
            "w/ order %": 100 * inside / n,
            "Ordered Rate %": 100 * inside / present
            if "all_present" in a and present
            else float("nan"),
            "perplexity median": _perplexity(g, "median"),
            "perplexity mean": _perplexity(g, "mean"),
            "list copies": copies,
            "cut by budget": int(g["_cut"].sum()),
            "answers": n,
            "in order": inside,
            "list copies % of in order": 100 * copies / inside if inside else float("nan"),
        }
        row.update({f"missed: {k}": int((g["_why"] == k).sum()) for k in WHY})
        rows.append(row)
    order = {c: i for i, c in enumerate(CONDITIONS)}
    return pd.DataFrame(rows).sort_values(
        ["model", "condition"],
        key=lambda s: s.map(order) if s.name == "condition" else s,
        ignore_index=True,
    )


def cost_view(outcome: pd.DataFrame) -> pd.DataFrame:
    """outcomes for display: LEAD first, the perplexity mean marked ‡ where over PPL_MEAN_OVER_MEDIAN
    times its median (a few answers of extreme perplexity make it), the rest after."""
    if outcome.empty:
        return outcome
    shown = outcome.set_index(["model", "condition"])
    if "perplexity mean" in shown:
        shown["perplexity mean"] = [
            "–"
            if pd.isna(mean)
            else f"{mean:.2f}" + (" ‡" if skew.dagger("perplexity", mean, med) else "")
            for mean, med in zip(shown["perplexity mean"], shown["perplexity median"])
        ]
    return shown[[c for c in LEAD if c in shown] + [c for c in shown.columns if c not in LEAD]]


_PAIR = ["model", "set_id", "template_id", "perm_index"]


def examples(answers: pd.DataFrame, n: int = 2, seed: int = 0) -> pd.DataFrame:
    """A few forced answers beside the `ordered` answer to the same prompt, per model, among those
    that differ from it (all, where none does): the `n` of highest forced perplexity (the cost)
    and `n` drawn at random (seeded), first sample only."""
    need = {FORCED, ASKED} <= set(answers.get("condition", ())) and set(_PAIR) <= set(answers)
    columns = [
        "model",
        "concepts",
        "ordered",
        "ordered in order",
        "forced",
        "forced in order",
        "ordered perplexity",
        "forced perplexity",
        "why shown",
    ]
    if not need:
        return pd.DataFrame(columns=columns)
    a = answers[answers.get("sample", pd.Series(0, index=answers.index)).fillna(0) == 0]
    keep = (
        _PAIR + ["concepts", "answer", "in_order"] + (["perplexity"] if "perplexity" in a else [])
    )
    both = a[a["condition"] == ASKED][keep].merge(
        a[a["condition"] == FORCED][keep], on=_PAIR, suffixes=("_o", "_f")
    )
    if "perplexity_o" not in both:
        both = both.assign(perplexity_o=float("nan"), perplexity_f=float("nan"))
    rows = []
    for _, g in both.groupby("model", sort=True):
        differ = g[g["answer_o"].fillna("").str.strip() != g["answer_f"].fillna("").str.strip()]
        g = (
            differ if len(differ) else g
        )  # where forcing changed the answer: the same text twice says nothing
        costly = (
            g.sort_values("perplexity_f", ascending=False, na_position="last")
            .head(n)
            .assign(why="highest forced perplexity")
        )
        rest = g.drop(costly.index)
        drawn = rest.sample(min(n, len(rest)), random_state=seed).assign(
            why=f"drawn at random (seed {seed})"
        )
        rows.append(pd.concat([costly, drawn]))
    if not rows:
        return pd.DataFrame(columns=columns)
    out = pd.concat(rows, ignore_index=True)
    return pd.DataFrame(
        {
            "model": out["model"],
            "concepts": out["concepts_o"].map(lambda c: ", ".join(map(str, c))),
            "ordered": out["answer_o"],
            "ordered in order": out["in_order_o"].astype(bool),
            "forced": out["answer_f"],
            "forced in order": out["in_order_f"].astype(bool),
            "ordered perplexity": out["perplexity_o"],
            "forced perplexity": out["perplexity_f"],
            "why shown": out["why"],
        }
    )[columns]


def unexplained(answers: pd.DataFrame) -> pd.DataFrame:
    """The forced answers that finished inside the grammar and still are not in order: each is
    shown, so a reader sees which inflected form the matcher did not take."""
    a = answers[answers["condition"] == FORCED] if "condition" in answers else answers.iloc[:0]
    if a.empty:
        return pd.DataFrame(columns=["model", "instance_id", "concepts", "answer"])
    a = a[why_missed(a) == "finished"]
    return a[["model", "instance_id", "concepts", "pos_pattern", "answer"]].reset_index(drop=True)


FORCED_LEAD = [
    "coverage_w_order",
    "ordered_rate",
    "perplexity",
]  # how far forcing goes, and its fluency


def forced_wide(long: pd.DataFrame, medians: dict | None = None) -> pd.DataFrame:
    """tables.forced_order for display: per model and metric, the forced value, Δ vs ordered, Δ vs
    original; w/ order, Ordered Rate and perplexity first. A table with skew.with_medians' columns
    (one per base: notebook 12 saves them) shows each skewed metric's pooled median beside its
    mean (‡ where the mean is over PPL_MEAN_OVER_MEDIAN times it) and, beside either Δ its median Δ
    contradicts, that median Δ (the median of the paired per-prompt differences), as Tables 1 and
    4 do. An older table without them: `medians` ({model: the forced answers' perplexity median},
    forced_medians) beside the perplexity mean only."""
    both = wide(long, "model", "value", "delta_vs_ordered")
    other = wide(long, "model", "value", "delta_vs_original")
    present = list(both.columns.get_level_values(0).unique())
    order = [m for m in FORCED_LEAD if m in present] + [m for m in present if m not in FORCED_LEAD]
    parts = {m: pd.concat([both[m], other[m].iloc[:, 1:]], axis=1) for m in order}
    out = pd.concat(parts, axis=1)
    if "median" in long:
        return _marked(out, long)
    if medians and ("perplexity", "value") in out:
        out[("perplexity", "value")] = [
            "–"
            if pd.isna(v)
            else f"{v:.2f}"
            + (
                ""
                if model not in medians
                else (" ‡" if skew.dagger("perplexity", v, medians[model]) else "")
                + f" (median {medians[model]:.2f})"
            )
            for model, v in zip(out.index, out[("perplexity", "value")])
        ]
    return out


def _marked(out: pd.DataFrame, long: pd.DataFrame) -> pd.DataFrame:
    """forced_wide's cells of the skewed metrics as text, from the table's own median columns."""
    out = out.copy()
    for metric in skew.MEDIAN_METRICS:
        rows = long[(long["metric"] == metric) & long["median"].notna()].set_index("model")
        for column in [c for c in out.columns if c[0] == metric]:
            base = None if column[1] == "value" else column[1].removeprefix("Δ vs ")
            cells = []
            for model, v in zip(out.index, out[column]):
                if pd.isna(v):
                    cells.append("–")
                elif model not in rows.index:
                    cells.append(f"{v:.2f}" if base is None else f"{v:+.2f}")
                elif base is None:
                    r = rows.loc[model]
                    mark = " ‡" if bool(r["dagger"]) else ""
                    cells.append(f"{v:.2f}{mark} (median {r['median']:.2f})")
                else:
                    cells.append(f"{v:+.2f}" + skew.median_text(rows.loc[model], base))
            out[column] = cells
    return out


def forced_medians(outcome: pd.DataFrame) -> dict:
    """{model: the forced answers' perplexity median} from outcomes (for forced_wide on a table
    saved without its median columns)."""
    if outcome.empty or "perplexity median" not in outcome:
        return {}
    rows = outcome[(outcome["condition"] == FORCED) & outcome["perplexity median"].notna()]
    return dict(zip(rows["model"], rows["perplexity median"]))


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
    table = table.rename(columns=_header).rename_axis(
        index=[_header(n) if n else n for n in table.index.names]
    )
    styled = table.style.format(precision=2, na_rep="–")
    return styled if table.index.names != [None] else styled.hide(axis="index")
