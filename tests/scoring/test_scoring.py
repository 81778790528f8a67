"""Scoring end to end: BLEURT and perplexity code paths offline, degenerate answers, re-runs."""

import dataclasses
import itertools
import json
import math
import random

import numpy as np
import pandas as pd
import pytest

from ocg.core.errors import OcgInputError
from ocg.metrics import bleurt, perplexity
from ocg.results.scores import load_scores
from ocg.scoring import score_model
from tests.helpers import build_tiny_bleurt, build_tiny_embedder, scoring_with, write_generations

pytestmark = pytest.mark.tf4  # run on the second stack too (make test-tf4)

SETS = {
    "s2n2v": [("dog", "N"), ("catch", "V"), ("frisbee", "N"), ("throw", "V")],
    "s3n1v": [("boy", "N"), ("ride", "V"), ("bike", "N"), ("street", "N")],
}
POOL = [
    "The dog caught the frisbee that the boy threw.",
    "A boy rides a bike down the street.",
    "The dog runs.",
    "Dog frisbee throw catch.",
    "",
    "  ",
    "frisbee",
    "**Answer:** The dog catches the frisbee.",
    "The boy rode. Then he stopped. The end.",
    "Der Hund fängt die Frisbee und wirft sie zurück, très bien.",
    "word " * 450,
    None,
]


def rows_for(rng, templates=(0, 1)):
    rows = []
    for set_id, concepts in SETS.items():
        for t in templates:
            for p, order in enumerate(itertools.permutations(concepts)):
                rows.append(
                    {
                        "set_id": set_id,
                        "template_id": t,
                        "perm_index": p,
                        "concepts": [w for w, _ in order],
                        "pos_pattern": "".join(pos for _, pos in order),
                        "answer": rng.choice(POOL)
                        if rng.random() < 0.5
                        else " ".join(w for w, _ in order).capitalize() + ".",
                    }
                )
    return rows


@pytest.fixture(scope="module")
def tiny_bleurt(tmp_path_factory):
    """A random tiny BLEURT with a sentencepiece model trained here: the real code path, no hub."""
    return build_tiny_bleurt(tmp_path_factory.mktemp("bleurt"), POOL[:4])


NEURAL = {"perplexity_batch_size": 8, "perplexity_fallback": "embedded:smollm2-135m-instruct"}


@pytest.fixture(scope="module")
def tiny_embedder(tmp_path_factory):
    """A random tiny sentence-transformers model (semantic diversity), no hub."""
    return build_tiny_embedder(
        tmp_path_factory.mktemp("embedder"),
        [p for p in POOL if p] + [w for c in SETS.values() for w, _ in c],
    )


@pytest.fixture(scope="module")
def scored(scored_run, tiny_bleurt, tiny_embedder):
    """Every family, perplexity (and SLOR) with the embedded model, pBLEURT with the tiny BLEURT and
    semantic diversity with the tiny embedder: slow (minutes on 2 cores), so the tests that read it
    are marked slow."""
    root = scored_run(
        "gen",
        rows_for(random.Random(1)),
        None,
        models=("synthetic",),
        bleurt_checkpoint=str(tiny_bleurt),
        embedding_model=str(tiny_embedder),
        **NEURAL,
    )
    return root / "gen" / "synthetic", root / "scores" / "synthetic"


@pytest.fixture(scope="module")
def scored_on_cpu(scored_run):
    """The same answers scored by a CPU family only (Diverse Rate): for the tests that need no model."""
    root = scored_run("gen", rows_for(random.Random(1)), ["diverse"], models=("synthetic",))
    return root / "gen" / "synthetic", root / "scores" / "synthetic"


@pytest.mark.slow
def test_degenerate_answers_are_scored_and_counted(scored):
    _, out = scored
    answers = pd.read_parquet(out / "answers.parquet")
    summary = pd.read_parquet(out / "summary.parquet")
    assert len(answers) == 2 * 2 * 24 and len(summary) == 2
    assert answers.failed.sum() == summary.n_failed.sum() > 0
    for flag in ("empty", "one_word", "markdown", "multi_sentence", "overlong", "non_ascii"):
        assert summary[f"n_{flag}"].sum() == answers[flag].sum() > 0, flag
    assert answers.loc[answers.failed, "coverage_frac"].eq(0).all()
    assert answers.loc[answers.empty | answers.failed, "ppl_status"].eq("empty").all()
    ok = answers.ppl_status == "ok"
    assert (
        np.isfinite(answers.loc[ok, "perplexity"]).all()
        and (answers.loc[ok, "perplexity"] > 1).all()
    )
    for col in (
        "coverage_wo_order",
        "coverage_w_order",
        "ordered_rate",
        "pbleu",
        "pbleurt",
        "distinct_2",
        "diverse_rate",
        "perplexity",
    ):
        assert summary[col].notna().all(), col


@pytest.mark.slow
def test_pbleurt_matches_the_pair_loop(scored, tiny_bleurt):
    _, out = scored
    groups = pd.read_parquet(out / "groups.parquet")
    answers = pd.read_parquet(out / "answers.parquet")
    tok, model = bleurt.load_bleurt(str(tiny_bleurt), device="cpu")
    row = groups.iloc[0]
    g = answers[(answers.set_id == row.set_id) & (answers.template_id == row.template_id)]
    texts = [a if isinstance(a, str) else "" for a in g.answer]
    assert len(set(texts)) < len(texts)  # the group has duplicates
    assert row.pbleurt == pytest.approx(bleurt.pairwise_bleurt_loop(texts, tok, model), abs=1e-4)
    cache = pd.read_parquet(out / "bleurt_cache.parquet")
    assert not cache.duplicated(["reference", "candidate"]).any()  # each distinct pair scored once
    sig = json.loads((out / "signature.json").read_text())
    assert sig["pbleurt"]["status"] == "ok" and sig["pbleurt"]["checkpoint"] == str(tiny_bleurt)


def test_missing_bleurt_is_reported_not_zero(scored_on_cpu, tmp_path):
    model_dir, _ = scored_on_cpu
    out = score_model(
        model_dir,
        out_dir=tmp_path,
        progress=False,
        metrics=["pbleu", "pbleurt"],
        scoring=scoring_with(bleurt_checkpoint=str(tmp_path / "no-such-checkpoint")),
    )
    summary = pd.read_parquet(out / "summary.parquet")
    assert summary.pbleurt.isna().all()
    assert summary.pbleurt_missing_reason.str.contains("no-such-checkpoint").all()
    sig = json.loads((out / "signature.json").read_text())
    assert (
        sig["pbleurt"]["status"] == "missing" and "no-such-checkpoint" in sig["pbleurt"]["reason"]
    )


@pytest.mark.slow
def test_the_quality_families_score_beside_the_papers(scored):
    """SLOR where perplexity has a value (read from its cache), non-words, and semantic diversity."""
    _, out = scored
    answers, groups = (
        pd.read_parquet(out / "answers.parquet"),
        pd.read_parquet(out / "groups.parquet"),
    )
    summary, sig = (
        pd.read_parquet(out / "summary.parquet"),
        json.loads((out / "signature.json").read_text()),
    )
    assert answers.slor.notna().equals(answers.perplexity.notna()) and answers.slor.notna().any()
    assert summary.slor_median.notna().all() and summary.nonword_rate.notna().all()
    assert answers.loc[
        answers.answer.fillna("").str.contains("Hund"), "has_nonword"
    ].all()  # German
    assert (
        groups.vendi.between(1 - 1e-9, groups.n + 1e-9).all()
        and groups.pairwise_cosine.le(1 + 1e-9).all()
    )
    assert sig["slor"]["status"] == sig["semantic"]["status"] == "ok"
    assert (out / "embedding_cache.parquet").exists()


@pytest.mark.slow
def test_signature_says_how_metrics_were_computed(scored):
    _, out = scored
    sig = json.loads((out / "signature.json").read_text())
    assert sig["pbleu"]["sacrebleu"].startswith(
        "nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:"
    )
    assert sig["coverage"]["spacy_model"].startswith("en_core_web_sm")
    assert sig["perplexity"]["used"] == "embedded:smollm2-135m-instruct"
    assert (
        "unreachable" in sig["perplexity"]["fallback_reason"]
        or sig["perplexity"]["requested"] == sig["perplexity"]["used"]
    )
    assert sig["provenance"]["git"]["commit"] and "sacrebleu" in sig["provenance"]["packages"]


def test_table2_property_diverse_rate_ties_within_noun_verb_classes(scored_on_cpu):
    _, out = scored_on_cpu
    answers = pd.read_parquet(out / "answers.parquet")
    by_pattern = answers.groupby("pos_pattern").diverse_rate.mean()
    classes = by_pattern.groupby(lambda p: p.count("N"))
    for n_nouns, values in classes:
        assert values.max() - values.min() < 1e-12, (n_nouns, values.to_dict())
    assert len(by_pattern) == 6 + 4  # 2N2V patterns and 3N1V patterns


@pytest.mark.slow
def test_rerun_skips_and_redo_recomputes(scored, tiny_bleurt, tiny_embedder, tmp_path):
    import shutil

    model_dir, shared = scored
    out = tmp_path / "scores" / shared.name  # the fixture is shared: rescore a copy
    shutil.copytree(shared, out)
    stamp = (out / "summary.parquet").stat().st_mtime_ns
    same = dict(bleurt_checkpoint=str(tiny_bleurt), embedding_model=str(tiny_embedder), **NEURAL)
    score_model(model_dir, out_dir=out.parent, progress=False, scoring=scoring_with(**same))
    assert (out / "summary.parquet").stat().st_mtime_ns == stamp
    score_model(model_dir, out_dir=out.parent, progress=False, metrics=["pbleu"], redo=True)
    assert (out / "summary.parquet").stat().st_mtime_ns != stamp
    assert "coverage_wo_order" not in pd.read_parquet(out / "summary.parquet")
    tables = load_scores(out.parent)
    assert {f.name for f in dataclasses.fields(tables)} == {
        "tables",
        "answers",
        "groups",
        "summary",
        "signatures",
        "mixed_scoring",
        "incomplete",
        "designs",
        "instance_differences",
        "references",
    }
    assert tables.references == {}  # no run card of this model names a reference
    assert len(tables.summary) == 2 and tables.signatures["synthetic"].metrics == ["pbleu"]


def test_a_matching_rule_change_recomputes_coverage_only(tmp_path):
    model_dir = write_generations(
        tmp_path / "gen",
        "m",
        [
            {
                "set_id": "s",
                "template_id": 0,
                "perm_index": p,
                "concepts": ["boy", "ride", "bike", "street"],
                "pos_pattern": "NVNN",
                "answer": a,
            }
            for p, a in enumerate(
                ["The boy rides a bike down the street.", "A boy on a bike.", "The street."]
            )
        ],
    )
    metrics = ["coverage", "pbleu", "diverse"]
    out = score_model(model_dir, metrics=metrics, out_dir=tmp_path / "s", progress=False)
    first = pd.read_parquet(out / "answers.parquet")
    assert first.all_present.tolist() == [True, False, False]
    pbleu_before = pd.read_parquet(out / "groups.parquet").pbleu.tolist()
    out = score_model(
        model_dir,
        metrics=metrics,
        out_dir=tmp_path / "s",
        progress=False,
        scoring=scoring_with(matching_rule="commongen_lemma"),
    )
    sig = json.loads((out / "signature.json").read_text())
    assert sig["recomputed"] == ["coverage"] and sorted(sig["reused"]) == ["diverse", "pbleu"]
    assert sig["coverage"]["matching_rule"] == "commongen_lemma"
    assert pd.read_parquet(out / "answers.parquet").all_present.tolist() == [
        False,
        False,
        False,
    ]  # "rides" -> "rid"
    assert pd.read_parquet(out / "groups.parquet").pbleu.tolist() == pbleu_before


def test_a_spacy_pipeline_change_recomputes_coverage_only(tmp_path):
    """The pipeline is in the coverage key (params/scoring.yaml `spacy_pipeline`): with the parser,
    "demonstrates" is tagged AUX (an attribute-ruler pattern reads the parse) and the concept
    is missing; the other families are reused."""
    model_dir = write_generations(
        tmp_path / "gen",
        "m",
        [
            {
                "set_id": "s",
                "template_id": 0,
                "perm_index": p,
                "concepts": ["machine", "demonstrate", "use", "sew"],
                "pos_pattern": "NVVV",
                "answer": a,
            }
            for p, a in enumerate(["Machine demonstrates use sew machine.", "A machine."])
        ],
    )
    metrics = ["coverage", "pbleu"]
    out = score_model(model_dir, metrics=metrics, out_dir=tmp_path / "s", progress=False)
    sig = json.loads((out / "signature.json").read_text())
    assert (
        sig["coverage"]["spacy_pipeline"] == "no_parser"
        and "parser" not in sig["coverage"]["pipes"]
    )
    assert sig["coverage"]["key"]["spacy_pipeline"] == "no_parser"
    assert pd.read_parquet(out / "answers.parquet").all_present.tolist() == [True, False]
    out = score_model(
        model_dir,
        metrics=metrics,
        out_dir=tmp_path / "s",
        progress=False,
        scoring=scoring_with(spacy_pipeline="as_shipped"),
    )
    sig = json.loads((out / "signature.json").read_text())
    assert sig["recomputed"] == ["coverage"] and sig["reused"] == ["pbleu"]
    assert (
        sig["coverage"]["spacy_pipeline"] == "as_shipped" and "parser" in sig["coverage"]["pipes"]
    )
    assert pd.read_parquet(out / "answers.parquet").all_present.tolist() == [False, False]


@pytest.mark.slow
def test_perplexity_missing_without_a_fallback_then_rescored_when_one_is_chosen(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # gpt2-xl cannot be had
    model_dir = write_generations(tmp_path / "gen", "m", rows_for(random.Random(3), templates=(0,)))
    out = score_model(
        model_dir,
        metrics=["perplexity"],
        out_dir=tmp_path / "s",
        progress=False,
        scoring=scoring_with(perplexity_batch_size=8),
    )
    summary = pd.read_parquet(out / "summary.parquet")
    assert (
        summary.perplexity.isna().all()
        and summary.perplexity_missing_reason.str.contains("gpt2-xl").all()
    )
    assert json.loads((out / "signature.json").read_text())["perplexity"]["status"] == "missing"
    out = score_model(
        model_dir,
        metrics=["perplexity"],
        out_dir=tmp_path / "s",
        progress=False,
        scoring=scoring_with(
            perplexity_batch_size=8, perplexity_fallback="embedded:smollm2-135m-instruct"
        ),
    )
    sig = json.loads((out / "signature.json").read_text())
    assert (
        sig["recomputed"] == ["perplexity"]
        and sig["perplexity"]["used"] == "embedded:smollm2-135m-instruct"
    )
    assert pd.read_parquet(out / "summary.parquet").perplexity.notna().all()


def test_tables_refuse_models_scored_differently(tmp_path):
    rows = [
        {
            "set_id": "s",
            "template_id": 0,
            "perm_index": p,
            "concepts": ["dog", "run"],
            "answer": "Dogs run.",
        }
        for p in range(2)
    ]
    for model, rule in (("a", "pos_aware_lookup"), ("b", "commongen_lemma")):
        score_model(
            write_generations(tmp_path / "gen", model, rows),
            metrics=["coverage", "pbleu"],
            out_dir=tmp_path / "s",
            progress=False,
            scoring=scoring_with(matching_rule=rule),
        )
    with pytest.raises(
        OcgInputError,
        match=r"(?s)scored differently.*coverage.rule differs: a: \"pos_aware_lookup\"; "
        r"b: \"commongen_lemma\"",
    ):
        load_scores(tmp_path / "s")
    mixed = load_scores(tmp_path / "s", allow_mixed=True)
    assert mixed.mixed_scoring and mixed.summary.scoring_signature.nunique() == 2
    assert load_scores(tmp_path / "s", ["a"]).mixed_scoring == ()


@pytest.mark.slow
def test_perplexity_with_the_embedded_model():
    _, path, _ = perplexity.resolve_model("embedded:smollm2-135m-instruct", None)
    lm = perplexity.load_lm(path)
    texts = [
        "",
        "Hi",
        "The dog caught the frisbee in the park.",
        "A boy rides a bike.",
        "The chef cut the onion with a sharp knife before dinner was served.",
    ]
    ppl, status = perplexity.score_perplexity(texts, lm, batch_size=3)
    assert status[""] == "empty" and math.isnan(ppl[""])
    short = [t for t in texts if t and len(lm.tokenizer(t)["input_ids"]) < 2]
    assert all(status[t] == "too_short" and math.isnan(ppl[t]) for t in short)
    scored_texts = texts[2:]
    # right padding: batched values equal one-at-a-time values
    single = {t: perplexity.score_perplexity([t], lm, batch_size=1)[0][t] for t in scored_texts}
    for t in scored_texts:
        assert status[t] == "ok" and ppl[t] == pytest.approx(single[t], rel=1e-3)
    # and they equal exp(mean NLL of tokens after the first), computed here directly
    import torch

    ids = lm.tokenizer(scored_texts[0], return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = lm.model(ids).logits[0, :-1]
    nll = torch.nn.functional.cross_entropy(logits.float(), ids[0, 1:])
    assert ppl[scored_texts[0]] == pytest.approx(math.exp(nll.item()), rel=1e-3)
    assert ppl["A boy rides a bike."] < 1e4
    lm.tokenizer.model_max_length = 6
    ppl2, status2 = perplexity.score_perplexity([texts[-1]], lm, batch_size=2)
    assert status2[texts[-1]] == "truncated" and math.isfinite(ppl2[texts[-1]])


@pytest.mark.slow
def test_lmppl_connectivity_check_cannot_hang(monkeypatch):
    """lmppl opens http://google.com with no timeout; load_lm replaces that check."""
    import time

    import lmppl.ppl_recurrent_lm as recurrent

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _, path, _ = perplexity.resolve_model("embedded:smollm2-135m-instruct", None)
    perplexity.load_lm(path)
    t0 = time.perf_counter()
    assert recurrent.internet_connection() is False
    assert time.perf_counter() - t0 < 1.0
    used, _, reason = perplexity.resolve_model("gpt2-xl", "embedded:smollm2-135m-instruct")
    assert used == "embedded:smollm2-135m-instruct" and "gpt2-xl" in reason


def test_a_fallback_that_cannot_be_loaded_either_is_named_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # neither gpt2-xl nor "no-such/model" can be had
    model_dir = write_generations(tmp_path / "gen", "m", rows_for(random.Random(3), templates=(0,)))
    out = score_model(
        model_dir,
        metrics=["perplexity"],
        out_dir=tmp_path / "s",
        progress=False,
        scoring=scoring_with(perplexity_fallback="no-such/model"),
    )
    reason = pd.read_parquet(out / "summary.parquet").perplexity_missing_reason
    assert reason.str.contains("perplexity_fallback 'no-such/model' cannot be loaded either").all()
    assert json.loads((out / "signature.json").read_text())["perplexity"]["status"] == "missing"
