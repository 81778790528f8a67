"""Semantic diversity (metrics/semantic.py): the Vendi score equal to the authors' reference
implementation (`vendi-score`) on fixed embeddings, the mean pairwise cosine to a direct sum; the
family through a tiny sentence-transformers model built here (no hub), each text embedded once;
missing with the reason where the model is not here, through `score_model`."""

import json

import numpy as np
import pandas as pd
import pytest

from ocg.metrics import semantic
from ocg.scoring import load_scoring_config, neural, score_model
from tests.helpers import build_tiny_embedder, write_generations

GROUP = [
    "The dog catches a frisbee.",
    "A dog catches the frisbee.",
    "The boy throws a frisbee to his dog.",
    "Snow falls on the quiet town.",
    "The dog catches a frisbee.",
]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vendi_equals_the_reference_implementation_on_fixed_embeddings(seed):
    vendi = pytest.importorskip("vendi_score.vendi")
    x = np.random.default_rng(seed).normal(size=(24, 16))
    x[5], x[9] = x[3], 2.0 * x[3]  # duplicates (a scaled copy is the same direction)
    assert semantic.vendi_score(x) == pytest.approx(vendi.score_X(x), rel=1e-9)
    assert semantic.vendi_score(np.repeat(x[:1], 6, axis=0)) == pytest.approx(1.0)
    assert semantic.vendi_score(np.eye(5)) == pytest.approx(5.0)


def test_mean_pairwise_cosine_is_the_mean_over_ordered_pairs():
    x = np.random.default_rng(3).normal(size=(6, 8))
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    direct = [float(unit[i] @ unit[j]) for i in range(6) for j in range(6) if i != j]
    assert semantic.mean_pairwise_cosine(x) == pytest.approx(np.mean(direct))
    assert np.isnan(semantic.mean_pairwise_cosine(x[:1]))


@pytest.fixture(scope="module")
def tiny_embedder(tmp_path_factory):
    return build_tiny_embedder(tmp_path_factory.mktemp("tiny-embedder"), GROUP)


def test_the_family_embeds_each_text_once_and_scores_groups(tiny_embedder, tmp_path, monkeypatch):
    config, key = (
        load_scoring_config(embedding_model=str(tiny_embedder), embedding_batch_size=2),
        {"version": 1, "model": str(tiny_embedder)},
    )
    vectors, sig = neural.embeddings(
        [GROUP, GROUP[:2]], config, key, tmp_path / "e.parquet", False, print
    )
    assert sig["status"] == "ok" and set(vectors) == set(GROUP)
    direct = semantic.load_embedder(str(tiny_embedder)).encode(GROUP)
    assert semantic.vendi_score([vectors[t] for t in GROUP]) == pytest.approx(
        semantic.vendi_score(direct), rel=1e-5
    )
    monkeypatch.setattr(semantic, "load_embedder", lambda *a, **k: pytest.fail("embedded twice"))
    again, _ = neural.embeddings([GROUP], config, key, tmp_path / "e.parquet", False, print)
    assert again == vectors


def test_semantic_diversity_is_missing_with_the_reason_not_zero(tmp_path):
    rows = [
        {
            "set_id": "s1",
            "template_id": 0,
            "perm_index": p,
            "concepts": ["dog", "frisbee"],
            "answer": a,
        }
        for p, a in enumerate(GROUP[:2])
    ]
    write_generations(tmp_path / "gen", "m", rows)
    out = score_model(
        tmp_path / "gen" / "m",
        out_dir=tmp_path / "scores",
        progress=False,
        metrics=["diverse", "semantic"],
        embedding_model=str(tmp_path / "no-such-model"),
    )
    summary = pd.read_parquet(out / "summary.parquet")
    assert summary.vendi.isna().all() and summary.pairwise_cosine.isna().all()
    assert summary.semantic_missing_reason.str.contains("no-such-model").all()
    assert json.loads((out / "signature.json").read_text())["semantic"]["status"] == "missing"
