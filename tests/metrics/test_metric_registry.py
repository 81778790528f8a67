"""Each metric declared once (ocg/metrics/registry.py, held by ocg/scoring/families.py): every
summed statistic, every ratio and every scoring family's signature come from the declarations,
and a family added at runtime (docs/developing.md's example) is scored, summarised and tabled."""

import importlib
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from ocg.analysis import paper_tables as tables
from ocg.metrics import registry
from ocg.metrics.sufficient_statistics import pooled_columns, ratios, sufficient_statistics, summed
from ocg.records import Signature
from ocg.scoring import score_model
from ocg.scoring.families import FAMILIES, Family
from tests.helpers import write_generations

README = Path(__file__).parent.parent.parent / "docs" / "developing.md"


def test_every_summed_column_comes_from_a_declaration_and_every_metric_from_statistics():
    assert summed("answers") == [
        "all_present",
        "in_order",
        "pos_all_present",
        "pos_in_order",
        "distinct_2",
        "perplexity",
        "slor",
        "has_nonword",
        "judge_score",
        "judge_in_order",
    ]
    assert summed("groups") == ["pbleu", "pbleurt", "diverse_rate", "vendi", "pairwise_cosine"]
    answers = pd.DataFrame({"k": [0, 0, 1], **{c: [1.0, 0.0, 1.0] for c in summed("answers")}})
    groups = pd.DataFrame({"k": [0, 1], **{c: [0.5, 0.25] for c in summed("groups")}})
    stats = sufficient_statistics(answers, groups, ["k"])
    assert (
        list(ratios(stats).columns) == registry.names()
    )  # every declared metric is a ratio of these
    assert (
        ratios(stats).at[0, "coverage_wo_order"] == 50.0
        and ratios(stats).at[0, "ordered_rate"] == 100.0
    )
    assert ratios(stats).at[1, "pbleu"] == 0.25 and ratios(stats).at[1, "perplexity"] == 1.0


def test_the_paper_metrics_in_order_with_their_tables():
    assert registry.names() == [
        "coverage_wo_order",
        "coverage_w_order",
        "ordered_rate",
        "pos_coverage_wo_order",
        "pos_coverage_w_order",
        "pbleu",
        "pbleurt",
        "distinct_2",
        "diverse_rate",
        "perplexity",
        "slor",
        "nonword_rate",
        "vendi",
        "pairwise_cosine",
        "judge_score",
        "judge_in_order",
    ]
    assert [m.name for m in registry.in_table("table7")] == registry.names()[:3]
    assert [m.name for m in registry.in_table("table2")] == registry.names()[:3] + ["diverse_rate"]
    assert [m.name for m in registry.in_table("table1")][3:5] == [
        "pos_coverage_wo_order",
        "pos_coverage_w_order",
    ]
    assert pooled_columns() == ["n_all_present", "n_in_order"]
    assert (
        registry.metric("ordered_rate").family == "coverage"
        and registry.label("n_answers") == "n_answers"
    )


def test_every_scoring_family_holds_its_declaration_and_a_wrong_one_is_refused():
    for name, family in FAMILIES.items():
        assert family.reported is registry.FAMILIES[name] and family.level == family.reported.level
        assert set(family.reported.sums) <= set(family.columns)
    with pytest.raises(ValueError, match="sums \\['nope'\\] are not among its columns"):
        Family(
            registry.MetricFamily("x", "answers", ("nope",)),
            ("x",),
            lambda c, r: {},
            lambda ctx: None,
            1,
            (),
        )
    with pytest.raises(ValueError, match="declared twice, differently"):
        registry.declare(registry.MetricFamily("pbleu", "answers", ("pbleu",)))
    assert "x" not in registry.FAMILIES


@pytest.fixture
def readme_family(tmp_path, monkeypatch):
    """docs/developing.md's "Adding a metric" block as a module, imported (and taken out again after)."""
    section = README.read_text().split("## Adding a metric", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "readme_long_metric.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        yield importlib.import_module("readme_long_metric")
    finally:
        FAMILIES.pop("long", None)
        registry.FAMILIES.pop("long", None)
        sys.modules.pop("readme_long_metric", None)


def test_the_readme_family_is_scored_summarised_tabled_and_signed(readme_family, tmp_path):
    answers = ["one two three", "a b c d e f g h i j k l m n", "x", "w " * 20]
    rows = [
        {"set_id": "s", "template_id": t, "perm_index": i, "concepts": ["boy", "bike"], "answer": a}
        for t in (0, 1)
        for i, a in enumerate(answers)
    ]
    write_generations(tmp_path / "gen", "m", rows)
    write_generations(tmp_path / "gen", "m", rows, condition="original")
    out = score_model(
        tmp_path / "gen" / "m", metrics=["pbleu", "long"], out_dir=tmp_path / "s", progress=False
    )
    summary = pd.read_parquet(out / "summary.parquet")
    assert (summary["long_rate"] == 50.0).all() and "pbleu" in summary
    t1 = tables.table1(summary).set_index("metric")
    assert (
        t1.at["long_rate", "value"] == 50.0
        and t1.at["long_rate", "delta_vs_original_commongen"] == 0.0
    )
    assert registry.lower_is_better("long_rate") and registry.label("long_rate") == "Long"
    sig = Signature.read(out / "signature.json")
    assert sig.family("long") == {"key": sig.metric_keys["long"], "words": "whitespace-separated"}
    assert sig.metric_keys["long"]["rule"] == "over 12 words"


def test_a_family_block_holds_its_staleness_key_verbatim_and_no_setting_again(tmp_path):
    """The block's key holds the settings; what compute records beside it may not say them again
    otherwise (Diverse Rate's rule and Distinct's tokenizer once did, in other words)."""
    rows = [
        {"set_id": "s", "template_id": 0, "perm_index": i, "concepts": ["boy"], "answer": a}
        for i, a in enumerate(["a boy", "the boy rides", "boy"])
    ]
    write_generations(tmp_path / "gen", "m", rows)
    out = score_model(
        tmp_path / "gen" / "m",
        metrics=["pbleu", "diverse", "distinct"],
        out_dir=tmp_path / "s",
        progress=False,
    )
    sig = Signature.read(out / "signature.json")
    assert all(sig.family(m)["key"] == sig.metric_keys[m] for m in sig.metrics)
    assert sig.family("pbleu")["key"]["version"] == FAMILIES["pbleu"].version
    restated = {
        (m, k): (v, sig.metric_keys[m][k])
        for m in sig.metrics
        for k, v in sig.family(m).items()
        if k in sig.metric_keys[m] and v != sig.metric_keys[m][k]
    }
    assert not restated, f"one settings record per family (key and block): {restated}"


def test_the_cpu_families_are_those_without_a_neural_model():
    from ocg.scoring import cpu_families

    assert cpu_families() == ["coverage", "pbleu", "distinct", "diverse", "nonword"]
    assert [n for n, f in FAMILIES.items() if f.neural] == [
        "pbleurt",
        "perplexity",
        "slor",
        "semantic",
        "judge",
    ]
