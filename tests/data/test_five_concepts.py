"""Five concepts end to end, and `permutations: m` (a seeded sample of m orders per concept set)."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from ocg.analysis import difficulty
from ocg.core.errors import OcgInputError
from ocg.core.paths import PARAMS_DIR
from ocg.data.instances import PERMUTATION_SEED, sampled_permutations
from ocg.generation import generate, read_generations
from ocg.generation.answer_store.completeness import check_model_dir
from ocg.generation.selection import select_instances
from ocg.jobs.plan import ANALYSES, BUILD_DATA, GENERATE, SCORE
from ocg.jobs.run_checks import check_run
from ocg.metrics import bleu
from ocg.records import RunCard
from ocg.results.designs import describe_design, design

FIVE = PARAMS_DIR / "runs" / "five-concepts.yaml"


def perms_by_group(df: pd.DataFrame) -> dict:
    return {
        k: frozenset(g) for k, g in df.groupby(["set_id", "condition", "template_id"])["perm_index"]
    }


def test_sampled_permutations_are_the_same_for_every_condition_and_template_of_a_set():
    full = select_instances(
        None, ["original", "ordered"], subset_k=3, template_ids=[0, 4], n_concepts=5
    )
    sampled = select_instances(
        None, ["original", "ordered"], subset_k=3, template_ids=[0, 4], n_concepts=5, permutations=4
    )
    groups = perms_by_group(sampled)
    assert len(groups) == 3 * 2 * 2 and all(len(p) == 4 for p in groups.values())
    for set_id in sampled.set_id.unique():  # one sample per set, whatever the condition or template
        assert len({p for (s, _, _), p in groups.items() if s == set_id}) == 1
    assert len({p for p in groups.values()}) == 3  # and the sets' samples differ
    assert set(sampled.instance_id) < set(full.instance_id)  # ids and perm_index of the full design
    kept = full[full.instance_id.isin(sampled.instance_id)]
    assert (
        kept.sort_values("instance_id").perm_index.to_numpy()
        == sampled.sort_values("instance_id").perm_index.to_numpy()
    ).all()
    again = select_instances(
        None, ["ordered"], subset_k=3, template_ids=[2], n_concepts=5, permutations=4
    )
    assert {s: set(g) for s, g in again.groupby("set_id").perm_index} == {
        s: set(g) for s, g in sampled.groupby("set_id").perm_index
    }  # reproducible, other template too
    for set_id, perms in again.groupby("set_id").perm_index:
        assert sorted(perms) == sampled_permutations(set_id, 5, 4, PERMUTATION_SEED)
        assert sampled_permutations(set_id, 5, 4, seed=1) != sorted(perms)  # the seed decides


@pytest.mark.parametrize("value", [0, -2, "3", True, 1.5, 121])
def test_bad_permutations_are_refused_naming_the_field(value):
    raw = yaml.safe_load(FIVE.read_text()) | {"permutations": value}
    with pytest.raises(OcgInputError) as err:
        check_run(raw, FIVE)
    assert "permutations" in err.value.where and "permutations" in str(err.value)


def test_more_permutations_than_four_concepts_have_is_refused():
    raw = yaml.safe_load(FIVE.read_text()) | {"n_concepts": 4, "permutations": 25}
    with pytest.raises(OcgInputError, match="only 24 permutations") as err:
        check_run(raw, FIVE)
    assert err.value.where.endswith("permutations")
    assert check_run(raw | {"permutations": 24}, FIVE).file.permutations == 24
    with pytest.raises(OcgInputError, match="only 24"):
        select_instances(None, ["ordered"], subset_k=1, permutations=25)


def test_a_sampled_run_records_its_rule_and_counts_as_complete(tmp_path):
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  synth: {backend: replay, id: x/y, batch_size: 16}\n")
    model_dir = generate(
        "synth",
        conditions=["original", "ordered"],
        subset_k=2,
        template_ids=[0, 3],
        permutations=3,
        out_dir=tmp_path / "gen",
        models_file=models,
        progress=False,
    )
    card = RunCard.read(model_dir / "run_card.json")
    for cond in ("original", "ordered"):
        sel = card.selection[cond]
        assert sel.permutations == 3 and sel.permutation_seed == PERMUTATION_SEED
        assert "random.Random" in (sel.permutation_rule or "")
    records = read_generations(model_dir)
    assert len(records) == 2 * 2 * 2 * 3 and records.concepts.map(len).eq(4).all()
    block, foreign = check_model_dir(model_dir, records)
    assert block["run_status"] == "complete" and block["asked"] == block["present"] == 24
    assert block["missing"] == 0 and not foreign.any()
    # the card is rebuilt from its selection when the records do not match it as they are
    block, _ = check_model_dir(model_dir, records.iloc[:-1])
    assert block["missing"] == 1 and block["asked"] == 24


def test_five_concept_order_verdicts():
    from ocg.metrics.coverage import analyse, load_nlp, match

    nlp = load_nlp("auto")
    concepts = ["friend", "learn", "knit", "enjoy", "celebration"]

    def verdict(answer):
        return match(analyse([answer], nlp)[answer], concepts, "NVVVN")

    same = verdict("My friend learned to knit and enjoyed the celebration.")
    assert same["all_present"] and same["in_order"] and same["coverage_frac"] == 1.0
    swapped = verdict("My friend enjoyed the celebration and learned to knit.")
    assert swapped["all_present"] and not swapped["in_order"]
    missing = verdict("My friend learned to knit at the celebration.")
    assert (
        not missing["all_present"] and not missing["in_order"] and missing["coverage_frac"] == 0.8
    )


def test_pbleu_over_120_permutations_equals_the_pairwise_definition():
    rng = np.random.default_rng(0)
    mat = rng.integers(0, 4, size=(120, 300)).astype(float)
    assert (
        bleu.clipped_matches(mat) == np.minimum(mat[:, None, :], mat[None, :, :]).sum(axis=2)
    ).all()
    words = ["friend", "learn", "knit", "enjoy", "celebration", "the", "and", "a", "with"]
    texts = [" ".join(rng.choice(words, size=rng.integers(3, 12))) + "." for _ in range(40)]
    texts += texts[:10]  # repeated answers, as models give
    assert bleu.pairwise_bleu(texts) == pytest.approx(bleu.pairwise_bleu_loop(texts), abs=1e-9)


def test_designs_and_figure4_count_the_permutations_present():
    rows = [
        ("ordered", 0, s, p, "NVVVN") for s in ("a", "b") for p in sampled_permutations(s, 5, 3)
    ]
    keys = pd.DataFrame(
        rows, columns=["condition", "template_id", "set_id", "perm_index", "pos_pattern"]
    )
    assert describe_design(design(keys)).endswith("2 concept sets; 3 of 120 permutations per set")
    composed = pd.DataFrame(
        {
            "set_id": keys.set_id,
            "perm_index": keys.perm_index,
            "n_models": [1, 0, 1, 1, 1, 1],
            "pos_pattern": keys.pos_pattern,
            "concepts": "w w w w w",
        }
    )
    assert difficulty.permutations_counted(composed) == (3, 120)
    data = difficulty.figure4_data(composed, 1)
    assert list(data.index) == [0, 1, 2, 3] and data[1].tolist() == [0, 0, 1, 1]
    assert (
        difficulty.set_summary(composed)["at_least_75_percent_composed"] == 1
    )  # 2 of 3 is under 75%
    full = keys.assign(perm_index=range(6), set_id="a", pos_pattern="NVNV")
    assert describe_design(design(full)).endswith("1 concept set; 6 of 24 permutations per set")
    assert "all 24 permutations" in describe_design(
        design(
            pd.DataFrame([("ordered", 0, "a", p, "NVNV") for p in range(24)], columns=keys.columns)
        )
    )


@pytest.mark.slow
def test_five_concepts_report(tmp_path):
    """`ocg report params/runs/five-concepts.yaml` (its outputs in a temp folder): every notebook
    ran, the pages say how many permutations were asked, never the four-concept 24."""
    from tests.analysis.notebooks import output_text
    from tests.shipped_runs import report_shipped_run, shipped_run

    run = shipped_run("five-concepts")
    refs = [m for m in run["models"] if m.startswith("ref-")]
    assert len(refs) == 12  # the file ships all of CommonGen-Eval's models' sentences
    keep = refs[:2]  # two of them keep the test's time bounded
    models = [m for m in run["models"] if not m.startswith("ref-")] + keep
    report = report_shipped_run("five-concepts", tmp_path, models=models)
    status = yaml.safe_load((report / "report.json").read_text())
    assert status["state"] == "done"
    # `ocg report` verified it last (exit 0 above): verify.json and the trust box say so
    verdict = json.loads((report / "verify.json").read_text())
    assert verdict["ok"] and verdict["checked"] > 100, verdict["broken"][:5]
    assert "checks passed" in (report / "index.html").read_text()
    from ocg.site.verify import verify

    assert verify(report).ok
    assert status["notebooks"] == [
        BUILD_DATA,
        f"{GENERATE}-smollm2-135m-instruct",
        *(f"{GENERATE}-{m}" for m in keep),
        SCORE,
        *ANALYSES,
    ]
    index = (report / "index.html").read_text()
    assert "3 of 120 permutations per set" in index  # the run, each model's design, Figure 3
    assert "4 sampled answers per prompt (temperature 0.7, top_p 0.95, a seed per sample)" in index
    assert (
        "4 samples, seeds [42, 43, 44, 45]" in index
        and "of sample 0 differ at batch 1 (seeding differs too" in index
    )
    assert "Ordered pass@k" in index and "k = 4" in index
    # the references beside the model, on `original`, with values and their source
    assert "Beside reference sentences" in index and index.count("(reference: ") == 2
    beside = pd.read_csv(report / "tables" / "references.csv", comment="#")
    assert beside.model.tolist() == ["smollm2-135m-instruct", *keep]
    assert beside.coverage_wo_order.notna().all() and beside.n_answers.gt(0).all()
    assert (beside.reference.fillna("") != "").tolist() == [False, True, True]
    assert "Figure 4: permutations composed (of 3)" in index and "of 24" not in index
    assert index.count("src='data:image/png;base64") == 2  # Figures 3 and 4 inline
    fig4 = pd.read_csv(report / "tables" / "figure4_data.csv", comment="#")
    assert fig4.permutations_composed.tolist() == [0, 1, 2, 3]
    t1 = pd.read_csv(report / "tables" / "table1.csv", comment="#")
    assert {"coverage_w_order", "ordered_rate"} <= set(t1.metric) and t1.value.notna().any()
    t2 = pd.read_csv(report / "tables" / "table2.csv", comment="#")
    assert (
        t2.pos_pattern.str.len().eq(5).all() and t2.pos_pattern.nunique() >= 2
    )  # five-letter POS patterns
    nb08 = output_text(report / "08_concept_difficulty.ipynb")
    assert "3 of 120 permutations of each set" in nb08 and "of 24" not in nb08
    assert "Not the paper" in output_text(
        report / "03_main_results.ipynb"
    )  # its numbers are for n = 4
    answers = pd.read_parquet(
        tmp_path / "outputs" / "scores" / "smollm2-135m-instruct" / "answers.parquet"
    )
    assert len(answers) == 2 * 2 * 2 * 3 * 4 and answers.concepts.map(len).eq(5).all()
    assert answers.groupby("set_id").perm_index.nunique().eq(3).all()
    assert (
        answers.groupby("instance_id")["sample"]
        .apply(sorted)
        .map(lambda s: s == [0, 1, 2, 3])
        .all()
    )
    # four samples per prompt: the pass@k view of notebook 11, k = 1..4, never falling with k
    curve = pd.read_csv(report / "tables" / "pass_at_k.csv", comment="#")
    for _, per in curve.groupby(["model", "condition"]):
        assert per["k"].tolist() == [1, 2, 3, 4] and per["pass_at_k"].is_monotonic_increasing
    assert "one answer per instance" not in output_text(report / "11_samples.ipynb")
    assert (report / "figures" / "pass_at_k.png").exists()
    # and where order breaks (notebook 10): five asked places, "of 12" answers per group (3 x 4)
    places = pd.read_csv(report / "tables" / "positions_by_place.csv", comment="#")
    assert sorted(places.position.unique()) == [1, 2, 3, 4, 5] and places.n_concepts.eq(5).all()
    assert "of 12" in output_text(report / "10_positions.ipynb")


def test_a_sweep_file_passes_permutations_to_notebook_01(tmp_path):
    from ocg.jobs.plan import Dirs, model_steps
    from ocg.sweep.config import load_sweep

    raw = yaml.safe_load((PARAMS_DIR / "sweeps" / "demo.yaml").read_text())
    sweep_file = tmp_path / "five.yaml"
    sweep_file.write_text(yaml.safe_dump(raw | {"n_concepts": 5, "permutations": 7}))
    sweep = load_sweep(sweep_file)
    sweep_file.write_text(yaml.safe_dump(raw | {"n_concepts": 5, "permutations": 121}))
    with pytest.raises(OcgInputError, match="only 120 permutations"):
        load_sweep(sweep_file)
    steps = dict(
        model_steps(
            sweep, Dirs(tmp_path / "g", tmp_path / "s", tmp_path / "r"), sweep.file.models[0]
        )
    )
    assert steps[GENERATE].permutations == 7
