"""Table 1 on the landing page at a laptop's width, in headless Chromium (playwright on the
system browser): with every metric Table 1 can hold, each cell as wide as it prints (a 5-digit
perplexity mean with ‡ and its median, a Δ with its median Δ, a † on coverage), the paper's
columns fit 1,300 px without a horizontal scroll bar, and the quality columns stand in their own
panel, shown, with their caveats; the notes under Table 1 are open."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from ocg.analysis.report import save_table
from ocg.metrics.registry import PAPER_METRICS, label, metrics
from ocg.site.landing import write_index
from tests.chromium import CHROMIUM
from tests.helpers import checked_run, two_models_rows

pytestmark = pytest.mark.slow

MODELS = ("qwen2.5-7b-instruct-4bit", "llama-3.1-8b-instruct")
SHOTS = Path("/tmp/shots")


def _widest_table1() -> pd.DataFrame:
    """Every Table 1 metric for both models at its widest printed form: the medians beside
    perplexity and SLOR, ‡, and a median Δ that contradicts its mean Δ."""
    rows = []
    for model in MODELS:
        for m in metrics():
            if "table1" not in m.tables:
                continue
            wide = m.name in ("perplexity", "slor")
            rows.append(
                {
                    "model": model,
                    "metric": m.name,
                    "value": 12345.678 if m.name == "perplexity" else 100.0,
                    "delta_vs_original_commongen": -12345.678 if wide else -100.0,
                    "median": 1234.567 if wide else None,
                    "dagger": m.name == "perplexity",
                    "median_base": 1111.111 if wide else None,
                    "median_delta": 123.456 if wide else None,
                    "n_pairs": 96,
                    "dagger_base": False,
                    "mean_median_disagree": wide,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def page(scored_run):
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium missing in CI (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    answers = ["Boy, ride, bike, street.", "The boy rides a bike down the street."]  # † marks
    root = scored_run(
        "width",
        two_models_rows(answers),
        ["coverage"],
        models=MODELS,
        conditions=("original", "ordered"),
    )
    out = root / "report"
    save_table(_widest_table1(), "table1", out)
    table4 = _widest_table1().rename(
        columns={"delta_vs_original_commongen": "delta_vs_zero_shot_ordered"}
    )
    save_table(
        table4, "table4", out
    )  # a notebook's table, every metric in one: wider than 1,300 px
    run = checked_run(
        models=list(MODELS), conditions=["original", "ordered"], file="r", subset_k=2, n_concepts=4
    )
    index = write_index(
        out, "t", [], run=run, scores_root=root / "scores", generations_root=root / "gen"
    )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1300, "height": 900})
        tab.goto(index.as_uri())
        yield tab
        browser.close()


def _overflow(tab, table_id: str) -> dict:
    return tab.evaluate(
        """id => { const t = document.getElementById(id), box = t.parentElement;
        return {scroll: box.scrollWidth, client: box.clientWidth, table: t.offsetWidth,
                headers: [...t.querySelectorAll('thead tr:first-child th')].map(h => h.innerText)} }""",
        table_id,
    )


def test_table1_fits_1300_px_with_the_papers_columns_first(page):
    t1 = _overflow(page, "table1")
    assert t1["scroll"] <= t1["client"], t1
    shown = [h for h in t1["headers"] if h]
    assert shown == [label(m) for m in PAPER_METRICS]  # the paper's eight, in its order
    assert page.is_visible("#table1") and page.is_visible("details.notes[open]")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#table1").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "table1-1300.png"))


def test_the_quality_columns_have_a_panel_of_their_own(page):
    q = _overflow(page, "table1-quality")
    assert q["scroll"] <= q["client"], q
    shown = [h for h in q["headers"] if h]
    expected = [m.label for m in metrics() if "table1" in m.tables]
    assert shown == [x for x in expected if x not in {label(m) for m in PAPER_METRICS}]
    assert page.is_visible("#quality h2") and "Quality beside order" in page.inner_text("#quality")
    text = page.inner_text("#quality")
    assert "spaCy's tagger" in text and "Holm" in text and "embedding model" in text
    page.locator("#quality").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "quality-1300.png"))


def test_the_page_never_scrolls_sideways_a_wide_table_scrolls_in_its_own_box(page):
    """Table 4 (every metric, as notebook 06 saves it) is wider than the window: it scrolls inside
    its box, and the page itself has no horizontal scroll bar."""
    width, window = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert width <= window, f"the page is {width} px wide in a {window} px window"
    t4 = _overflow(page, "table4")
    assert t4["table"] > 1300 and t4["scroll"] > t4["client"]  # wide, and scrolled in its box
    assert page.evaluate("document.getElementById('table4').parentElement.className") == "scroll"
