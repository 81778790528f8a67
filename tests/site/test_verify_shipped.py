"""`ocg verify` on the reports of the shipped demo, judge and forced-order run files
(params/runs/), built here into a temp folder as a user builds them, and on tampered copies: a
view only that run file's report has (the demo's Table 4, the judge's columns of Table 1, the
forced order) is re-derived from the report's own scores (I4) and read on the page (I1). The
smoke report's test is in test_verify.py, the five-concepts one's in
tests/data/test_five_concepts.py."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from ocg.site import verify as v
from tests.shipped_runs import report_shipped_run


def _table1_entry(doc: dict, model: str, metric: str) -> dict:
    return doc["models"][model]["metrics"][metric]


def _table4_entry(doc: dict, model: str, metric: str) -> dict:
    return doc["table4"]["models"][model][metric]


def _forced_entry(doc: dict, model: str, metric: str) -> dict:
    return doc["forced_order"]["models"][model][metric]


# run file -> (its own table, the metric changed there, where results.json keeps its entry, the
# page table that shows it, and the column edited there: (metric label, sub-label; "" the value))
OWN: dict[str, tuple[str, str, Callable[[dict, str, str], dict], str, tuple[str, str]]] = {
    "demo": ("table4", "coverage_w_order", _table4_entry, "table4", ("w/ order", "")),
    "judge": ("table1", "judge_score", _table1_entry, "table1-quality", ("Judge", "")),
    "constrained": (
        "forced_order",
        "perplexity",
        _forced_entry,
        "forced-order",
        ("Perplexity", "Δ vs ordered"),
    ),
}


def _nudged(value: float) -> float:
    """`value` moved by a thousandth the way its two printed decimals do not show."""
    for step in (0.001, -0.001, 0.0004, -0.0004):
        if f"{value + step:.2f}" == f"{value:.2f}":
            return value + step
    raise AssertionError(f"no nudge of {value!r} keeps its two decimals")


def _nudge_everywhere(copy: Path, run: str) -> tuple[str, str]:
    """The run file's own value changed by less than the page, the LaTeX and every other printed
    view show, in its CSV and results.json alike (so I1 agrees): (model, metric) changed."""
    table, metric, entry_of, _, _ = OWN[run]
    path = copy / "tables" / f"{table}.csv"
    long = pd.read_csv(path)
    i = long.index[(long.metric == metric) & long.value.notna()][0]
    long.loc[i, "value"] = _nudged(float(long.at[i, "value"]))
    long.to_csv(path, index=False)
    doc = json.loads((copy / "results.json").read_text())
    model = str(long.at[i, "model"])
    entry_of(doc, model, metric)["value"] = float(long.at[i, "value"])
    (copy / "results.json").write_text(json.dumps(doc))
    return model, metric


def _page_cell_edited(copy: Path, run: str) -> str:
    """The run file's own column on the page: its first model's number moved by 1; the cell's
    `where` as verify names it."""
    _, _, _, table_id, (name, sub) = OWN[run]
    index = copy / "index.html"
    cells = v.page_cells(v.read_page(index).tables[table_id])
    model = next(iter(cells))[0]
    row = [key for key in cells if key[0] == model]  # in the page's order
    k = next(i for i, (_, n, s) in enumerate(row) if (n, "" if s == "value" else s) == (name, sub))
    text = cells[row[k]]
    number = re.match(r"[-+]?\d+\.\d+", text)
    assert number is not None, text
    html = index.read_text(encoding="utf-8")
    start = html.index(f"<th>{model}</th>", html.index(f'id="{table_id}"'))
    found = [m for m in re.finditer(r"<td>([^<]*)</td>", html[start:])][k]
    assert found[1] == text, (found[1], text)
    edited = text.replace(number[0], f"{float(number[0]) + 1:.2f}", 1)
    at = start + found.start(1)
    index.write_text(html[:at] + edited + html[start + found.end(1) :], encoding="utf-8")
    return f"#{table_id} {model} / {name}{' ' + sub if sub else ''}"


@pytest.mark.slow
@pytest.mark.parametrize("run", sorted(OWN))
def test_a_shipped_report_verifies_and_its_own_view_tampered_with_does_not(run, tmp_path):
    """`ocg report params/runs/<run>.yaml` verified it last: every table re-derived (I4), the
    trust box says so; a copy whose own value is nudged in its CSV and results.json alike is
    caught by I4 alone, and one whose own page cell is edited by I1 alone."""
    report = report_shipped_run(run, tmp_path)
    saved = json.loads((report / "verify.json").read_text())
    assert saved["ok"] and "I4" in saved["invariants"], saved["broken"][:5]
    assert saved["not_rederived"] == []
    assert "checks passed" in (report / "index.html").read_text()
    verdict = v.verify(report)
    assert verdict.ok and verdict.checked == saved["checked"], verdict.lines()[:5]
    table = OWN[run][0]

    nudged = tmp_path / "nudged"
    shutil.copytree(report, nudged)
    model, metric = _nudge_everywhere(nudged, run)
    broken = v.verify(nudged).broken
    assert [(b.invariant, b.where.rsplit(".", 1)[-1]) for b in broken] == [
        (f"I4.{table}.csv≠scores", "value")
    ], [b.line() for b in broken]
    assert model in broken[0].where and metric in broken[0].where

    edited = tmp_path / "edited"
    shutil.copytree(report, edited)
    where = _page_cell_edited(edited, run)
    broken = v.verify(edited).broken
    assert [(b.invariant, b.where) for b in broken] == [(f"I1.{table}.csv≠index.html", where)]
