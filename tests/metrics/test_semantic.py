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
from tests.helpers import build_tiny_embedder, scoring_with, write_generations

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
        load_scoring_config(
            overrides=dict(embedding_model=str(tiny_embedder), embedding_batch_size=2)
        ),
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
        scoring=scoring_with(embedding_model=str(tmp_path / "no-such-model")),
    )
    summary = pd.read_parquet(out / "summary.parquet")
    assert summary.vendi.isna().all() and summary.pairwise_cosine.isna().all()
    assert summary.semantic_missing_reason.str.contains("no-such-model").all()
    assert json.loads((out / "signature.json").read_text())["semantic"]["status"] == "missing"


def _fake_archive(path, weights: bytes):
    import zipfile

    from ocg.weights import packaged

    with zipfile.ZipFile(path, "w") as zf:
        for name in packaged.MEMBERS:
            zf.writestr(name, weights if name == packaged.WEIGHTS else b"{}")
    return path


def test_a_packaged_model_whose_weights_differ_is_refused_and_nothing_is_left(
    tmp_path, monkeypatch
):
    from ocg.weights import packaged

    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path / "cache"))
    archive = _fake_archive(tmp_path / "model.zip", b"not the pinned weights")
    with pytest.raises(packaged.PackagedModelError, match="model.safetensors has sha256"):
        packaged.ensure_extracted(archive)
    assert list((tmp_path / "cache").iterdir()) == []  # no folder, no temporary left behind


def test_a_packaged_model_folder_changed_after_extraction_is_refused(tmp_path, monkeypatch):
    """A weights file that is not the pinned one is never loaded, whoever put it there."""
    from ocg.core.errors import OcgInputError
    from ocg.core.layout import PackagedModel
    from ocg.weights import packaged

    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path))
    folder = PackagedModel.named(packaged.FOLDER).folder
    folder.mkdir()
    (folder / "ocg_source.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"changed")
    with pytest.raises(packaged.PackagedModelError, match="delete"):
        packaged.ensure_extracted(tmp_path / "unused.zip")
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    with pytest.raises(OcgInputError, match="symbolic link"):
        packaged.ensure_extracted(tmp_path / "unused.zip")


def test_the_default_model_comes_from_its_package_only_where_no_local_copy_is(
    tiny_embedder, monkeypatch
):
    from ocg.weights import hub, packaged

    monkeypatch.setattr(packaged, "installed", lambda: True)
    monkeypatch.setattr(hub, "cached_locally", lambda m: False)
    assert (
        semantic.embedder_source(packaged.HUB_ID)["weights_sha256"]
        == packaged.MEMBERS[packaged.WEIGHTS]
    )
    assert semantic.embedder_source(str(tiny_embedder))["source"] == "local directory"
    assert semantic.embedder_source("other/model") == {}  # only the default has a package
    monkeypatch.setattr(hub, "cached_locally", lambda m: True)
    assert semantic.embedder_source(packaged.HUB_ID)["source"] == "local hub cache"


REAL = [  # CommonGen-Eval outputs (ocg/data/commongen_eval_outputs_5concept.jsonl)
    "The man presses the button on the card scanner to place the document in the machine.",
    "The chef roasts the beans in a machine and pours them into a bowl.",
    "The kid rides his scooter down the street while wearing his helmet.",
    "The photographer takes a picture of a person swimming in the water.",
]


@pytest.mark.slow
def test_semantic_diversity_of_real_sentences_offline_with_the_packaged_model(
    tmp_path, monkeypatch
):
    from ocg.weights import hub, packaged

    if not packaged.installed():
        pytest.skip(f"{packaged.PACKAGE} is not installed")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OCG_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(hub, "cached_locally", lambda m: False)  # the package, even if cached
    config = load_scoring_config()
    assert config.embedding_model == packaged.HUB_ID
    key = {"version": 1, "model": packaged.HUB_ID, **semantic.embedder_source(packaged.HUB_ID)}
    paraphrases = [
        "The chef roasts the beans and pours them into a bowl.",
        "A cook roasts beans, then pours them into a bowl.",
    ]
    vectors, sig = neural.embeddings(
        [REAL, paraphrases], config, key, tmp_path / "e.parquet", False, print
    )
    assert sig["status"] == "ok" and sig["weights_sha256"] == packaged.MEMBERS[packaged.WEIGHTS]
    assert "package" in sig["source"]
    assert all(len(v) == 384 for v in vectors.values())
    varied = semantic.vendi_score([vectors[t] for t in REAL])
    alike = semantic.vendi_score([vectors[t] for t in paraphrases])
    assert 2.5 < varied <= 4 and 1 <= alike < 1.3
    assert semantic.mean_pairwise_cosine([vectors[t] for t in paraphrases]) > 0.8
