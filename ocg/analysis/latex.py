"""Tables as LaTeX in the paper's style, differences (or SDs) as subscripts, marked as the paper
marks each table (MARKING): Tables 1, 2 and 4 put the best row in bold and the second
underlined, per metric in its direction (Tables 1 and 4 mark the differences alike); Table 3
bolds the better of w/o and w/ within each template, Table 7 the better of base and reasoning
model within each pair. Needs \\usepackage{booktabs}."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..metrics import registry

_ESCAPE = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def escape(text: object) -> str:
    return "".join(_ESCAPE.get(ch, ch) for ch in str(text))


@dataclass(frozen=True)
class Marking:
    within: str | None = None  # an index level: bold the better row within each of its groups
    subs: bool = False  # mark the differences too (best / second, in the metric's direction)


MARKING = {
    "table1": Marking(subs=True),
    "table2": Marking(),
    "table3": Marking(within="template_id"),
    "table4": Marking(subs=True),
    "table7": Marking(within="pair"),
}


def _better_within(column: pd.Series, level: str, lower_is_better: bool) -> dict:
    """Row label -> 'best' for the better row(s) of each group of `level` (ties share it)."""
    marks = {}
    for _, group in column.groupby(level=level, sort=False):
        ranked = _ranks(group, lower_is_better)
        marks.update({label: "best" for label, mark in ranked.items() if mark == "best"})
    return marks


def _ranks(column: pd.Series, lower_is_better: bool) -> dict:
    """Row label -> 'best' / 'second' (ties share the rank); nothing where every row shows one
    value (all tied at the printed precision: no row is better)."""
    values = sorted({round(v, 2) for v in column.dropna()}, reverse=not lower_is_better)
    marks: dict = {}
    if len(values) < 2:
        return marks
    for label, v in column.items():
        if pd.isna(v):
            continue
        if values and round(v, 2) == values[0]:
            marks[label] = "best"
        elif len(values) > 1 and round(v, 2) == values[1]:
            marks[label] = "second"
    return marks


def _marked(text: str, mark: str | None) -> str:
    return (
        rf"\textbf{{{text}}}"
        if mark == "best"
        else rf"\underline{{{text}}}"
        if mark == "second"
        else text
    )


def _cell(
    value, sub, mark: str | None, sub_kind: str, sub_mark: str | None = None, *, median: str = ""
) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    text = _marked(f"{value:.2f}", mark)
    if sub is not None and not (isinstance(sub, float) and math.isnan(sub)):
        text += (
            rf"_{{\pm {sub:.2f}}}"
            if sub_kind == "sd"
            else rf"_{{{_marked(f'{sub:+.2f}', sub_mark)}{median}}}"
        )
    return f"${text}$"


def _median_sub(row) -> str:
    """The median Δ beside a mean Δ its median contradicts (analysis/skew.py), ‡ where either
    side's mean is over PPL_MEAN_OVER_MEDIAN x its median."""
    either = bool(row.get("dagger", False)) or bool(row.get("dagger_base", False))
    mark = r"\ddagger" if either else ""
    delta = row.get("median_delta", math.nan)
    median = "" if pd.isna(delta) else rf"\,\mathrm{{median}}\,{delta:+.2f}"
    return (rf"^{{{mark}}}" if mark else "") + median


def _marks(values: pd.DataFrame, marking: Marking | None) -> dict:
    if marking is None:
        return {m: {} for m in values.columns}
    if marking.within:
        return {
            m: _better_within(values[m], marking.within, registry.lower_is_better(m))
            for m in values.columns
        }
    return {m: _ranks(values[m], registry.lower_is_better(m)) for m in values.columns}


def latex_table(
    values: pd.DataFrame,
    subs: pd.DataFrame | None = None,
    sub_kind: str = "delta",
    row_label: str = "Model",
    marking: Marking | None = Marking(),
    *,
    unmarked: frozenset[str] = frozenset(),
    medians: dict | None = None,
    note: str = "",
) -> str:
    """A booktabs tabular: rows as in `values` (index may be a MultiIndex), columns = metrics;
    `marking` None marks nothing; the metrics in `unmarked` are not marked (a comparison that rests
    on something other than the answers: analysis/pos_tagging.py; a metric one of the compared
    models scored: analysis/skew.py); a cell of `medians` ({(row, metric): text after its Δ}) is
    not marked either (a mean its median contradicts); `note` goes under the tabular."""
    medians = medians or {}
    metrics = list(values.columns)
    index_names = list(values.index.names) if values.index.nlevels > 1 else [row_label]
    marks = {m: ({} if m in unmarked else v) for m, v in _marks(values, marking).items()}
    sub_marks = (
        {m: ({} if m in unmarked else v) for m, v in _marks(subs, Marking()).items()}
        if subs is not None and marking is not None and marking.subs
        else {}
    )
    header = [escape(n) for n in index_names] + [
        escape(registry.label(m))
        + (r" ($\downarrow$)" if registry.lower_is_better(m) else r" ($\uparrow$)")
        for m in metrics
    ]
    lines = [
        r"\begin{tabular}{" + "l" * len(index_names) + "r" * len(metrics) + "}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    for label, row in values.iterrows():
        keys = label if isinstance(label, tuple) else (label,)
        cells = [escape(k) for k in keys]
        for m in metrics:
            sub = subs.at[label, m] if subs is not None and m in subs.columns else None
            skewed = (label, m) in medians
            cells.append(
                _cell(
                    row[m],
                    sub,
                    None if skewed else marks[m].get(label),
                    sub_kind,
                    None if skewed else sub_marks.get(m, {}).get(label),
                    median=medians.get((label, m), ""),
                )
            )
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if note:
        lines.append(r"\par\footnotesize " + escape(note))
    return "\n".join(lines) + "\n"


# the header of a single-level row key (a MultiIndex is headed by its level names)
ROW_LABELS = {"model": "Model", "pos_pattern": "POS"}


def latex_from_long(
    long: pd.DataFrame,
    index,
    value: str,
    sub: str | None,
    sub_kind: str,
    *,
    table: str | None = None,
    unmarked: frozenset[str] = frozenset(),
    note: str = "",
) -> str:
    """`table` (e.g. "table3") picks the paper's marking for it (MARKING); else best and second;
    the metrics in `unmarked` are not marked. A single row key is headed as ROW_LABELS names it,
    else by its own name. A row of `long` marked `mean_median_disagree` (analysis/skew.py) is not
    marked and has its median Δ beside its Δ; `note` goes under the tabular."""
    from .paper_tables import wide

    values = wide(long, index, value)
    subs = wide(long, index, sub) if sub else None
    row_label = ROW_LABELS.get(index, index) if isinstance(index, str) else "Model"
    medians = {}
    if "mean_median_disagree" in long and isinstance(index, str):
        for row in long[long["mean_median_disagree"].fillna(False).astype(bool)].to_dict("records"):
            medians[(row[index], row["metric"])] = _median_sub(row)
    return latex_table(
        values,
        subs,
        sub_kind,
        row_label,
        MARKING[table] if table else Marking(),
        unmarked=unmarked,
        medians=medians,
        note=note,
    )
