"""The landing page explains its numbers: a legend of every column shown, the reason beside a
missing value, which model gave perplexity, the paper's other tables with their notebook and
method, and docs/METHODS.md rendered into the report."""

import re

import pandas as pd
import pytest

from ocg.analysis import paper_tables as tables
from ocg.analysis.report import save_table
from ocg.metrics.registry import in_table
from ocg.records import Signature
from ocg.results.scores import load_scores
from ocg.site import explain, notebook_sections
from ocg.site.landing import write_index
from ocg.site.render import fragment
from tests.helpers import checked_run, two_models_rows

ANSWERS = ["The boy rides a bike down the street.", "A bike, a boy and a street.", "The boy rode."]


@pytest.fixture(scope="module")
def report(scored_run):
    root = scored_run(
        "explains",
        two_models_rows(ANSWERS),
        ["coverage", "pbleu", "pbleurt", "distinct", "diverse"],
        models=("a", "b"),
        conditions=("original", "ordered", "ordered_one_shot"),
    )
    scores = load_scores(root / "scores")
    out = root / "report"
    save_table(tables.table1(scores.summary), "table1", out)
    save_table(tables.table2(scores.answers), "table2", out)
    save_table(tables.table3(scores.summary), "table3", out)
    save_table(tables.table4(scores.summary), "table4", out)
    save_table(tables.table7(scores.summary, {"b": "a"}), "table7", out)
    page = write_index(
        out,
        "t",
        [],
        run=checked_run(
            **{
                "models": ["a", "b"],
                "conditions": ["original", "ordered", "ordered_one_shot"],
                "file": "r",
            }
        ),
        scores_root=root / "scores",
        generations_root=root / "gen",
    ).read_text()
    return out, page


def test_every_table1_column_has_a_legend_line_with_its_direction_and_unit(report):
    out, page = report
    shown = set(pd.read_csv(out / "tables" / "table1.csv")["metric"])
    assert (
        len(shown) == 9
    )  # every metric of Table 1 but perplexity (not scored here) and those of the families
    # the fixture does not score (SLOR, non-words, semantic): coverage and PoS-correct coverage, pBLEU, pBLEURT...
    legends = [  # Table 1's (the paper's columns) and the quality panel's (the others)
        page.split(f"<h2>{heading}")[1]
        .split("<h2>")[0]
        .split("<details class='legend'>")[1]
        .split("</details>")[0]
        for heading in ("Table 1", "Quality beside order")
    ]
    assert "<dt>pBLEU</dt>" in legends[0] and "<dt>pBLEU</dt>" not in legends[1]
    assert "<dt>PoS w/ order</dt>" in legends[1] and "<dt>PoS w/ order</dt>" not in legends[0]
    legend = "".join(legends)
    for m in (m for m in in_table("table1") if m.name in shown):
        assert re.search(
            rf"<dt>{re.escape(m.label)}</dt><dd>[^<]+\([^;]+; (↑ higher|↓ lower) is better\)</dd>",
            legend,
        ), m.name
    assert (
        "<dt>pBLEU</dt><dd>how alike a set&#39;s answers over its permutations are" in legend
        and "↓ lower is better" in legend
    )


def test_a_missing_value_has_its_reason_beside_the_table(report):
    _, page = report
    table1 = page.split("<h2>Table 1")[1].split("<h2>")[0]
    assert re.search(r"<b>pBLEURT</b> is missing for a, b: .*BLEURT", table1)


def test_perplexity_from_a_fallback_is_said():
    sig = Signature().replace(
        families={"perplexity": {"requested": "gpt2-xl", "used": "embedded:smollm2-135m-instruct"}},
    )
    note = fragment(
        "notes.html",
        "missing_reasons",
        explain.missing_reasons(pd.DataFrame({"model": ["m"]}), {"m": sig}),
    )
    assert (
        "<b>Perplexity</b> of m comes from <code>embedded:smollm2-135m-instruct</code>, not the paper's"
        " <code>gpt2-xl</code>" in note
    )


def test_other_tables_are_shown_with_their_notebook_method_and_legend(report):
    out, page = report
    section = page.split("<h2>Table 2:")[1].split("<h2>")[0]
    assert "href='04_pos_patterns.html'>notebook 04_pos_patterns</a>" in section
    assert (
        "href='methods.html#analyses'>docs/METHODS.md, “Analyses”</a>" in section
        and "href='tables/table2.csv'" in section
    )
    assert "<table" in section and "<dt>Diverse Rate</dt>" in section
    assert "<h2>Table 4" in page and "<h2>Table 7" in page


def test_methods_are_rendered_into_the_report_escaped(report):
    out, page = report
    methods = (out / "methods.html").read_text()
    assert '<h3 id="concept-matching">Concept matching</h3>' in methods
    assert "<table>" in methods and "<script" not in methods
    assert "href='methods.html'" in page and "href='methods.html#" in page


def test_a_table_not_computed_is_not_shown_and_a_broken_one_costs_only_itself(tmp_path):
    assert explain.other_tables(tmp_path) == []
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "table4.csv").write_text("model,metric\na,pbleu\n")  # no value column
    page = fragment("sections.html", "other_tables", explain.other_tables(tmp_path))
    assert (
        "<h2>Table 4: one-shot priming" in page and "table4.csv cannot be shown: KeyError" in page
    )


@pytest.mark.slow
def test_the_landing_page_in_chromium_shows_every_table_with_its_legend(report):
    from tests.chromium import CHROMIUM, SCREENSHOTS, chromium, console_errors

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    out, _ = report
    dom = chromium((out / "index.html").as_uri(), "--dump-dom")
    assert dom.returncode == 0 and not console_errors(dom.stderr), dom.stderr[-2000:]
    for heading in ("Table 1:", "Table 2:", "Table 3:", "Table 4:", "Table 7:"):
        section = dom.stdout.split(f"<h2>{heading}", 1)[1].split("<h2>", 1)[0]
        assert "<table" in section and "What the columns mean" in section, heading
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = chromium(
        (out / "index.html").as_uri(),
        f"--screenshot={SCREENSHOTS / 'index_tables.png'}",
        "--window-size=1300,5200",
    )
    assert shot.returncode == 0 and (SCREENSHOTS / "index_tables.png").stat().st_size > 20_000


def test_pass_at_k_on_the_landing_page_from_notebook_11s_table(tmp_path):
    """Shown only where the run saved pass@k; values as the CSV has them; a model name escaped;
    an unreadable CSV costs only its own section."""
    assert notebook_sections.pass_at_k(tmp_path) is None
    rows = [
        {
            "model": "<m>",
            "condition": "ordered",
            "k": k,
            "pass_at_k": v,
            "n_instances": 12,
            "n_samples": 4,
        }
        for k, v in zip((1, 2, 3, 4), (18.75, 25.0, 29.17, 33.33))
    ]
    save_table(pd.DataFrame(rows), "pass_at_k", tmp_path)
    shown = fragment("sections.html", "pass_at_k", notebook_sections.pass_at_k(tmp_path))
    assert "k = 4" in shown and "33.33" in shown and "each instance's 4 samples" in shown
    assert "&lt;m&gt;" in shown and "<m>" not in shown
    (tmp_path / "tables" / "pass_at_k.csv").write_text("model,k\nx,1\n")
    assert "pass_at_k.csv cannot be shown: KeyError" in fragment(
        "sections.html", "pass_at_k", notebook_sections.pass_at_k(tmp_path)
    )


def test_groups_of_one_answer_have_no_pairwise_metric_and_the_page_says_why(scored_run):
    """`permutations: 1`: pBLEU and Diverse Rate are measured between a set's answers; one answer
    gives none (not a Diverse Rate of 100), and the promised reason is under Table 1."""
    rows = [
        {
            "set_id": s,
            "template_id": t,
            "perm_index": 0,
            "concepts": ["boy", "ride", "bike", "street"],
            "answer": "The boy rides a bike down the street.",
        }
        for s in ("s1", "s2")
        for t in (0, 1)
    ]
    root = scored_run(
        "alone",
        rows,
        ["coverage", "pbleu", "distinct", "diverse"],
        models=("a",),
        conditions=("original", "ordered"),
    )
    scores = load_scores(root / "scores")
    summary = scores.summary
    assert summary["diverse_rate"].isna().all() and summary["pbleu"].isna().all()
    assert summary["distinct_2"].notna().all()  # a per-answer metric keeps its value
    out = root / "report"
    save_table(tables.table1(summary), "table1", out)
    page = write_index(
        out,
        "t",
        [],
        run=checked_run(**{"models": ["a"], "conditions": ["original", "ordered"], "file": "r"}),
        scores_root=root / "scores",
        generations_root=root / "gen",
    ).read_text()
    table1 = page.split("<h2>Table 1")[1].split("<h2>")[0]
    for label in ("pBLEU", "Diverse Rate"):
        assert (
            f"<b>{label}</b> is missing for a: every concept set has one answer here" in table1
        ), label
