"""I1 of `ocg verify` on Table 4 and the forced order as the site itself renders them
(site/explain.py, site/sections.py, render.frame with their table ids): every value and Δ cell is
read against its CSV, and every median and median-Δ mark, per base where a table has several;
a cell or mark edited on the page breaks I1 naming that cell."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from ocg.site import verify as v
from ocg.site.explain import other_tables
from ocg.site.render import frame
from ocg.site.sections import forced

MODELS = ("m-a", "m-b")


def _marks(base: str | None, disagree: bool, dagger_base: bool, delta: float) -> dict:
    """A MEDIAN_METRICS row's median-Δ columns (skew.with_medians' names) vs one base."""
    names = (
        ("median_base", "median_delta", "n_pairs", "dagger_base", "mean_median_disagree")
        if base is None
        else (
            f"median_{base}",
            f"median_delta_vs_{base}",
            f"n_pairs_vs_{base}",
            f"dagger_{base}",
            f"mean_median_disagree_vs_{base}",
        )
    )
    values = (20.0, -delta / 4 if disagree else delta / 3, 16, dagger_base, disagree)
    return dict(zip(names, values))


def _long(bases: dict[str, str | None]) -> pd.DataFrame:
    """Two models' w/ order and perplexity, each with its Δ per base ({Δ column: base, None
    for a table of one base}); m-a's perplexity mean is ‡ over its median and contradicted by
    its first base's median Δ, m-b's by its second's (where a table has two)."""
    rows = []
    for i, model in enumerate(MODELS):
        rows.append(
            {"model": model, "metric": "coverage_w_order", "value": 50.0 + i}
            | {column: -3.456 - i for column in bases}
        )
        row = {"model": model, "metric": "perplexity", "value": [150.0, 30.0][i]}
        row |= {"median": [12.0, 20.0][i], "dagger": i == 0}
        for j, (column, base) in enumerate(bases.items()):
            row[column] = 17.5 + j - i
            disagree = (i + j) % 2 == 0
            row |= _marks(base, disagree, dagger_base=j == 1, delta=row[column])
        rows.append(row)
    return pd.DataFrame(rows)


TABLE4 = {"delta_vs_zero_shot_ordered": None}
FORCED = {"delta_vs_ordered": "ordered", "delta_vs_original": "original"}
BLOCKS = {b.table: b for b in v.BLOCKS}


def _page(report: Path, name: str) -> str:
    """The block's table as the landing page renders it."""
    if name == "table4":
        (shown,) = [t for t in other_tables(report) if t.table_id == "table4"]
        return frame(shown.table, table_id=shown.table_id)
    found = forced(report)
    assert found is not None
    (part,) = [p for p in found.parts if p.kind == "pattern"]
    return frame(part.table, table_id=part.table_id)


def _verified(html: str, name: str, long: pd.DataFrame) -> v._Check:
    page = v._Tables()
    page.feed(f"<html><body>{html}</body></html>")
    c = v._Check()
    v.check_page(page, BLOCKS[name], long, c)
    return c


@pytest.fixture(params=[("table4", TABLE4), ("forced_order", FORCED)], ids=["table4", "forced"])
def rendered(request, tmp_path):
    name, bases = request.param
    long = _long(bases)
    (tmp_path / "tables").mkdir()
    long.to_csv(tmp_path / "tables" / f"{name}.csv", index=False)
    return name, long, str(_page(tmp_path, name))


def _raised(long: pd.DataFrame) -> int:
    """How many median-Δ flags the CSV raises (one per contradicted Δ)."""
    flags = [c for c in long if c.startswith("mean_median_disagree")]
    return sum(int(long[c].fillna(False).astype(bool).sum()) for c in flags)


def _cells(html: str) -> list[str]:
    return re.findall(r"<td>([^<]*)</td>", html)


def _edit(html: str, k: int, text: str) -> str:
    """The page with its k-th body cell's text replaced."""
    cell = list(re.finditer(r"<td>([^<]*)</td>", html))[k]
    return html[: cell.start(1)] + text + html[cell.end(1) :]


def test_every_cell_of_the_rendered_table_is_read_and_the_page_as_rendered_passes(rendered):
    name, long, html = rendered
    c = _verified(html, name, long)
    assert c.broken == []
    deltas = len(v.page_deltas(BLOCKS[name]))
    # each model's two metrics: a value and a Δ per base, + the perplexity median, its ‡, and
    # per base the median-Δ flag; a shown median Δ adds its number and its ‡
    shown = sum(" (median Δ " in cell for cell in _cells(html))
    assert (
        shown == _raised(long)
        and c.checked == len(MODELS) * (2 * (1 + deltas) + 2 + deltas) + 2 * shown
    )


def test_each_number_edited_on_the_page_is_caught_at_its_cell(rendered):
    name, long, html = rendered
    cells = _cells(html)
    assert len(cells) == len(MODELS) * 2 * (1 + len(v.page_deltas(BLOCKS[name])))
    for k, cell in enumerate(cells):
        number = re.match(r"[-+]?\d+\.\d+", cell)
        assert number is not None, cell
        edited = cell.replace(number[0], f"{float(number[0]) + 0.01:.2f}", 1)
        broken = _verified(_edit(html, k, edited), name, long).broken
        assert len(broken) == 1 and broken[0].invariant == f"I1.{name}.csv≠index.html", (k, cell)


def test_a_median_delta_mark_removed_changed_or_added_is_caught(rendered):
    name, long, html = rendered
    cells = _cells(html)
    marked = [(k, c) for k, c in enumerate(cells) if " (median Δ " in c]
    assert len(marked) == _raised(long)
    for k, cell in marked:
        bare = re.sub(r" ‡? ?\(median Δ [^)]*\)", "", cell)
        changed = re.sub(r"\(median Δ ([-+]?\d+\.\d+)\)", "(median Δ +999.00)", cell)
        no_dagger = cell.replace(" ‡", "")
        for edit, why in ((bare, "median Δ absent"), (changed, "median_delta"), (no_dagger, "‡")):
            if edit == cell:
                continue
            broken = _verified(_edit(html, k, edit), name, long)
            assert [b.invariant for b in broken.broken] == [f"I1.{name}.csv≠index.html"]
            assert why in broken.broken[0].detail, (cell, edit, broken.broken[0])
    # a perplexity Δ its median does not contradict: a bare signed number
    k = next(k for k, c in enumerate(cells) if re.fullmatch(r"\+\d+\.\d+", c))
    broken = _verified(_edit(html, k, f"{cells[k]} (median Δ +1.00)"), name, long).broken
    assert len(broken) == 1 and "median Δ shown" in broken[0].detail


def test_a_delta_column_verify_cannot_read_is_broken_not_skipped(rendered):
    name, long, html = rendered
    label = next(iter(v.page_deltas(BLOCKS[name])))
    relabelled = html.replace(f">{label}<", ">Δ vs something else<")
    assert relabelled != html
    broken = _verified(relabelled, name, long).broken
    assert broken and all("verify does not read" in b.detail for b in broken)
