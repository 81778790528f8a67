"""Tables as LaTeX in the paper's style: best in bold, second underlined, direction per metric,
differences (or SDs) as subscripts. Needs \\usepackage{booktabs}."""

from __future__ import annotations

import math

import pandas as pd

from ..metrics.registry import LABELS, LOWER_IS_BETTER

_ESCAPE = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape(text: object) -> str:
    return "".join(_ESCAPE.get(ch, ch) for ch in str(text))


def _ranks(column: pd.Series, lower_is_better: bool) -> dict:
    """Row label -> 'best' / 'second' (ties share the rank)."""
    values = sorted({round(v, 2) for v in column.dropna()}, reverse=not lower_is_better)
    marks = {}
    for label, v in column.items():
        if pd.isna(v):
            continue
        if values and round(v, 2) == values[0]:
            marks[label] = "best"
        elif len(values) > 1 and round(v, 2) == values[1]:
            marks[label] = "second"
    return marks


def _cell(value, sub, mark: str | None, sub_kind: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    text = f"{value:.2f}"
    if mark == "best":
        text = rf"\textbf{{{text}}}"
    elif mark == "second":
        text = rf"\underline{{{text}}}"
    if sub is not None and not (isinstance(sub, float) and math.isnan(sub)):
        text += rf"_{{\pm {sub:.2f}}}" if sub_kind == "sd" else rf"_{{{sub:+.2f}}}"
    return f"${text}$"


def latex_table(values: pd.DataFrame, subs: pd.DataFrame | None = None, sub_kind: str = "delta",
                row_label: str = "Model", mark_best: bool = True) -> str:
    """A booktabs tabular: rows as in `values` (index may be a MultiIndex), columns = metrics."""
    metrics = list(values.columns)
    index_names = list(values.index.names) if values.index.nlevels > 1 else [row_label]
    marks = {m: (_ranks(values[m], m in LOWER_IS_BETTER) if mark_best else {}) for m in metrics}
    header = [escape(n) for n in index_names] + [
        escape(LABELS.get(m, m)) + (r" ($\downarrow$)" if m in LOWER_IS_BETTER else r" ($\uparrow$)")
        for m in metrics]
    lines = [r"\begin{tabular}{" + "l" * len(index_names) + "r" * len(metrics) + "}", r"\toprule",
             " & ".join(header) + r" \\", r"\midrule"]
    for label, row in values.iterrows():
        keys = label if isinstance(label, tuple) else (label,)
        cells = [escape(k) for k in keys]
        for m in metrics:
            sub = subs.at[label, m] if subs is not None and m in subs.columns else None
            cells.append(_cell(row[m], sub, marks[m].get(label), sub_kind))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def latex_from_long(long: pd.DataFrame, index, value: str, sub: str | None, sub_kind: str,
                    row_label: str = "Model") -> str:
    from .tables import wide
    values = wide(long, index, value)
    subs = wide(long, index, sub) if sub else None
    return latex_table(values, subs, sub_kind, row_label)
