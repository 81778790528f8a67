"""The landing page carries the caveats the notebooks give: what Table 1
stands on (sets, answers, an interval or the small-sample mark), the share of in-order answers
that copy the list, the Table 7 note, a perplexity mean far above its median, notebook 10's
section, every METHODS link landing on its section, the run settings per model, the header's
wording, and what the batch-1 check of a sampled run does not show."""

import re
from html.parser import HTMLParser

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ocg.analysis import paper_tables as tables
from ocg.analysis import positions, sensitivity, uncertainty
from ocg.analysis.report import save_table
from ocg.core.layout import ModelGenerations
from ocg.core.paths import PROJECT_ROOT
from ocg.records import RunCard
from ocg.results.scores import load_scores
from ocg.site import caveats, explain, methods_page
from ocg.site.landing import write_index
from tests.helpers import checked_run, two_models_rows

ANSWERS = [
    "Boy ride bike street.",
    "The boy rides a bike down the street.",
    "Street, bike, boy.",
    "The boy rode.",
]
NOTE = "demo pairing only: <b>b</b> stands in for a reasoning model"
SETTINGS = {
    "a": {"dtype": "bfloat16", "quantization": "none", "max_new_tokens": 32, "batch_size": 16},
    "b": {
        "dtype": "float32",
        "attention": "eager",
        "quantization": "4bit",
        "max_new_tokens": 48,
        "batch_size": 8,
    },
}  # a's card predates `attention`: shown as auto, with what ran


@pytest.fixture(scope="module")
def report(scored_run):
    root = scored_run(
        "caveats",
        two_models_rows(ANSWERS),
        ["coverage"],
        models=("a", "b"),
        conditions=("original", "ordered"),
    )
    for model in ("a", "b"):
        sampling = (
            {"samples": 2, "seeds": [0, 1], "temperature": 0.7, "top_p": 0.95}
            if model == "b"
            else None
        )
        check = {"checked": 8, "differ": 2, "share_differ": 0.25}
        RunCard(
            model=model,
            settings={"id": f"org/{model}", **SETTINGS[model]},
            sampling=sampling,
            backend={"attention": "sdpa" if model == "a" else "eager"},
            runs=[{"batch_invariance": check}],
        ).write(ModelGenerations.of(model, root / "gen").run_card)
    scores = load_scores(root / "scores")
    answers = scores.answers
    # perplexity as scoring would give it: one answer per model of extreme perplexity makes the mean
    answers["perplexity"] = [
        5000.0 if a == "Street, bike, boy." and m == "b" else 20.0
        for a, m in zip(answers["answer"], answers["model"])
    ]
    sens = sensitivity.table1_sensitivity(answers)
    t1 = tables.table1(scores.summary)
    ppl = sens[(sens.metric == "perplexity") & (sens.variant == "median over every answer")]
    t1 = pd.concat(
        [
            t1,
            pd.DataFrame(
                {
                    "model": ppl.model,
                    "metric": "perplexity",
                    "value": ppl.default,
                    "delta_vs_original_commongen": 0.0,
                }
            ),
        ],
        ignore_index=True,
    )
    out = root / "report"
    cis = pd.concat(
        [
            uncertainty.bootstrap_ci(
                answers, scores.groups, m, "ordered", uncertainty.Resampling(n_boot=50)
            )
            for m in ("a", "b")
        ]
    )
    save_table(t1, "table1", out)
    save_table(cis, "table1_bootstrap_ci", out)
    save_table(sens, "table1_sensitivity", out)
    save_table(tables.table7(scores.summary, {"b": "a"}), "table7", out)
    save_table(positions.by_position(answers), "positions_by_place", out)
    save_table(positions.swapped_pairs(answers), "positions_out_of_order", out)
    run = checked_run(
        **{
            "models": ["a", "b"],
            "conditions": ["original", "ordered"],
            "file": "r",
            "subset_k": 2,
            "n_concepts": 4,
            "table7_note": NOTE,
        }
    )
    page = write_index(
        out, "t", [], run=run, scores_root=root / "scores", generations_root=root / "gen"
    ).read_text()
    return out, page, scores


def section(page, heading):
    return page.split(f"<h2>{heading}")[1].split("<h2>")[0]


def test_table1_says_what_it_stands_on_and_the_share_that_copies_the_list(report):
    _, page, scores = report
    t1 = section(page, "Table 1")
    summary = scores.summary
    for model in ("a", "b"):
        n = int(
            summary[(summary.model == model) & (summary.condition == "ordered")]["n_answers"].sum()
        )
        row = re.search(rf"<th>{model}</th>\s*<td>2</td>\s*<td>{n}</td>(.*?)</tr>", t1, re.S)
        assert row, f"sets and answers of {model}"
        assert (
            "small sample" not in row[1] and "[" not in row[1]
        )  # said once above, not in every cell
        ordered = summary[(summary.model == model) & (summary.condition == "ordered")]
        share = 100 * ordered.n_copies_list.sum() / ordered.n_in_order.sum()
        assert (
            f"{model}: {share:.0f}% ({ordered.n_copies_list.sum()} of {ordered.n_in_order.sum()})"
            in t1
        )
    assert "In-order answers that copy the concept list" in t1
    notes = t1.split("<details class='notes' open>")[1]  # once in the notes, once in the trust line
    assert (
        notes.count("small sample") == 1 == t1.split("<details")[0].count("small sample")
        and "no bootstrap interval for any metric: “small sample” (2 concept sets &lt; 20)" in notes
    )


def test_a_perplexity_mean_far_above_its_median_is_marked_with_the_median(report):
    out, page, _ = report
    t1 = section(page, "Table 1")
    sens = pd.read_csv(out / "tables" / "table1_sensitivity.csv")
    median = sens[(sens.model == "b") & (sens.variant == "median over every answer")].iloc[0]
    assert median.default > 10 * median.value
    assert f"{median.default:.2f} ‡ (median {median.value:.2f})" in t1
    assert "‡ Perplexity of b" in t1 and "‡ Perplexity of a" not in t1  # a's mean is its median


def test_the_sensitivity_view_names_the_excluded_copies(report):
    _, page, _ = report
    view = section(page, "How much the open choices move Table 1")
    assert "excluding copies on both sides" in view and "counting copies as failures" in view
    assert re.search(
        r"<li>copies as failures: w/ order of [ab] [\d.]+ → [\d.]+ .*in order and not a copy, "
        r"over all \d+ ordered answers.*Δ vs original [+-][\d.]+ in Table 1",
        view,
    )


def test_table1_marks_the_cells_that_rest_on_copies(report):
    _, page, scores = report
    t1 = section(page, "Table 1")
    marks = caveats.copy_marks(scores.summary)
    assert marks and f"† Over {caveats.COPY_MARK_SHARE}% of the answers" in t1
    assert re.search(r"<td>[\d.]+ †</td>", t1)


def test_table7_shows_the_run_files_note_escaped(report):
    _, page, _ = report
    t7 = section(page, "Table 7")
    assert "Note from the run file:</b> demo pairing only: &lt;b&gt;b&lt;/b&gt; stands in" in t7


def test_notebook_10_has_its_section(report):
    _, page, _ = report
    pos = section(page, "Where order breaks")
    assert "10_positions" in pos and "in place" in pos and "1–2" in pos


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self._open, self.titles = set(), None, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
            if tag in ("h2", "h3"):
                self._open, self.titles[a["id"]] = a["id"], ""

    def handle_data(self, data):
        if self._open:
            self.titles[self._open] += data

    def handle_endtag(self, tag):
        if tag in ("h2", "h3"):
            self._open = None


def test_every_methods_link_lands_on_its_section(report):
    out, page, _ = report
    parsed = _Ids()
    parsed.feed((out / "methods.html").read_text())
    assert "contents" in parsed.ids and len(parsed.titles) > 15
    links = re.findall(r"<a href='methods\.html#([^']+)'>docs/METHODS\.md, “([^”]+)”</a>", page)
    assert len(links) >= 8 and "docs/METHODS.md, “" not in re.sub(
        r"<a href='methods\.html#[^>]+>[^<]+</a>", "", page
    )
    for anchor, name in links:
        assert anchor in parsed.ids and parsed.titles[anchor] == name, (anchor, name)
    # and every section the code links to, wherever it is used, is a heading of METHODS
    for table, *_, section_name, _, _, _ in explain.OTHER_TABLES:
        assert parsed.titles.get(methods_page.slug(section_name)) == section_name, table
    for path in (PROJECT_ROOT / "ocg" / "analysis").glob("*.py"):
        for name in re.findall(
            r"methods_link\(report_dir, [\"']([^\"']+)[\"']\)", path.read_text()
        ):
            assert (
                methods_page.slug(name) in parsed.titles
                and parsed.titles[methods_page.slug(name)] == name
            ), (path.name, name)


def test_the_models_table_shows_the_run_settings(report):
    _, page, _ = report
    models = section(page, "Models")
    for model, s in SETTINGS.items():
        attention = s.get("attention", "auto (sdpa)")  # a's card: no setting, its backend ran sdpa
        cells = "".join(
            f"<td>{v}</td>"
            for v in (
                s["dtype"],
                attention,
                s["quantization"],
                s["max_new_tokens"],
                s["batch_size"],
            )
        )
        assert cells in models, model
    assert (
        "<th>dtype</th><th>attention</th><th>quant.</th><th>max_new_tokens</th><th>batch size</th>"
        in models
    )
    assert re.search(
        r"ordered \d+/24 \(bare \d+\); original \d+/24", models
    )  # copies per condition


def test_the_header_and_the_sampled_batch_1_line(report):
    _, page, _ = report
    assert "2 concept sets of 4 concepts" in page and "2 of 4 concepts" not in page
    models = section(page, "Models")
    assert "2/8 of sample 0 differ at batch 1 (seeding differs too §)" in models
    assert "§ For a sampled model" in models and "does not measure batch invariance" in models


def test_table1_shows_pooled_medians_and_a_contradicted_mean_delta(report, tmp_path):
    import shutil

    from ocg.analysis import skew
    from ocg.site import sections
    from ocg.site.render import fragment

    out, _, scores = report
    copy = tmp_path / "report"
    shutil.copytree(out, copy)
    answers = scores.answers.copy()
    # b: one extreme `ordered` answer makes its mean; its median Δ against `original` is positive
    answers["perplexity"] = [
        5000.0
        if a == "Street, bike, boy." and m == "b" and c == "ordered"
        else (30.0 if c == "ordered" else 25.0 if m == "b" else 20.0)
        for a, m, c in zip(answers["answer"], answers["model"], answers["condition"])
    ]
    means = answers.groupby(["model", "condition"])["perplexity"].mean()
    t1 = pd.DataFrame(
        [
            {
                "model": m,
                "metric": "perplexity",
                "value": means[(m, "ordered")],
                "delta_vs_original_commongen": means[(m, "ordered")] - means[(m, "original")],
            }
            for m in ("a", "b")
        ]
    )
    t1 = skew.with_medians(t1, answers, "ordered", "original", "delta_vs_original_commongen")
    save_table(t1, "table1", copy)
    h = sections.headline(copy, scores, {"perplexity": "a"})
    b = t1.set_index("model").loc["b"]
    assert (b["median"], b["median_base"]) == (30.0, 25.0) and b["value"] > 10 * 30.0
    assert h.pooled and [m for m, *_ in h.dominated] == ["b"]
    html = fragment("sections.html", "headline", h)
    assert f"{b['value']:.2f} ‡ (median 30.00)" in html  # pooled over every answer
    assert "+5.00" in html and "median Δ +5.00" in html and "bolds none of them" in html
    assert "median Δ +10.00" not in html  # a's mean and median agree: no median Δ beside it
    assert "Scored by one of the compared models (perplexity by a)" in html


def test_no_note_of_answers_without_text_when_every_answer_has_one(report):
    _, page, scores = report
    assert (scores.summary[["n_empty", "n_failed"]].to_numpy() == 0).all()
    assert "Answers with no text" not in section(page, "Table 1")


def test_answers_without_text_are_named_under_table1_per_model_and_condition(scored_run):
    """A model whose answers are empty reads 0.00 and "–" in Table 1: the note under it says why,
    with the count and share of each model and condition, and what coverage makes of them."""
    root = scored_run(
        "no-text",
        two_models_rows(["", "The boy rides a bike down the street."]),
        ["coverage"],
        models=("a", "b"),
        conditions=("original", "ordered"),
    )
    scores = load_scores(root / "scores")
    out = root / "report"
    save_table(tables.table1(scores.summary), "table1", out)
    run = checked_run(
        models=["a", "b"], conditions=["original", "ordered"], file="r", subset_k=2, n_concepts=4
    )
    page = write_index(
        out, "t", [], run=run, scores_root=root / "scores", generations_root=root / "gen"
    ).read_text()
    note = section(page, "Table 1").split("Answers with no text")[1].split("</p>")[0]
    for model in ("a", "b"):
        for condition in ("ordered", "original"):  # 24 answers each, every other one empty
            assert f"{model}, {condition}: 12 of 24 (50.0%: empty 12)" in note
    assert "Coverage counts each as an answer without the concepts" in note


@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "ref-x"]),
            st.sampled_from(["ordered", "original", "ordered_one_shot"]),
            st.integers(0, 3),  # template
            st.integers(1, 40),  # answers
            st.integers(0, 40),  # empty
            st.integers(0, 40),  # none extracted
        ),
        max_size=12,
    )
)
def test_the_no_text_note_counts_exactly_the_answers_without_text(rows):
    """Over generated summaries: one part per (model, Table 1 condition) with any empty or failed
    answer, its counts the sums over templates, no part for another condition."""
    summary = pd.DataFrame(
        [
            {
                "model": m,
                "condition": c,
                "template_id": t,
                "n_answers": n,
                "n_empty": min(e, n),
                "n_failed": min(f, n - min(e, n)),
            }
            for m, c, t, n, e, f in rows
        ],
        columns=["model", "condition", "template_id", "n_answers", "n_empty", "n_failed"],
    )
    note = caveats.no_text(summary)
    shown = summary[summary.condition.isin(["ordered", "original"])]
    sums = shown.groupby(["model", "condition"])[["n_answers", "n_empty", "n_failed"]].sum()
    expected = {(m, c): r for (m, c), r in sums.iterrows() if r.n_empty + r.n_failed > 0}
    parts = note.parts if note else []
    assert len(parts) == len(expected)
    for (m, c), r in expected.items():
        (part,) = [p for p in parts if p.startswith(f"{m}, {c}: ")]
        none = int(r.n_empty + r.n_failed)
        assert part.startswith(f"{m}, {c}: {none} of {int(r.n_answers)} (")
        assert ("empty" in part) == bool(r.n_empty) and ("none extracted" in part) == bool(
            r.n_failed
        )
