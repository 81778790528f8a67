"""The perplexity and pBLEURT caches serve a value only under the key it was computed with:
model or checkpoint and its revision, package versions, the family's version."""

import dataclasses
import json
from importlib import metadata

import pandas as pd
import pytest

from ocg.metrics import bleurt, perplexity
from ocg.scoring import FAMILIES, score_model
from ocg.weights import hub
from tests.helpers import scoring_with, write_generations

pytestmark = pytest.mark.tf4  # run on the second stack too (make test-tf4)

ANSWERS = ["The dog runs.", "A boy rides a bike.", "The dog runs."]


class FakeModel:
    """Stands in for an lmppl.LM or a BLEURT model: it scores every text with its weights' value."""

    def __init__(self, value):
        self.value, self.config = value, type("Config", (), {})()


@pytest.fixture
def weights(monkeypatch):
    """The value the (fake) loaded model gives; loads are counted."""
    state = {"value": 10.0, "loads": 0}

    def load(*_):
        state["loads"] += 1
        return FakeModel(state["value"])

    monkeypatch.setattr(perplexity, "load_lm", load)
    monkeypatch.setattr(
        perplexity,
        "score_perplexity",
        lambda texts, lm, batch_size: ({t: lm.value for t in texts}, {t: "ok" for t in texts}),
    )
    monkeypatch.setattr(bleurt, "load_bleurt", lambda checkpoint: (None, load()))
    monkeypatch.setattr(
        bleurt,
        "score_pairs",
        lambda pairs, tok, model, batch, progress: {p: model.value for p in pairs},
    )
    return state


# perplexity's package: lmppl where it scores (transformers 4); on transformers 5 ocg's own code
# scores, whose version is the family's (bumped below), and lmppl's version is no part of the key
@pytest.mark.parametrize(
    "metric, package",
    [
        ("perplexity", "lmppl" if perplexity.implementation() == "lmppl" else None),
        ("pbleurt", "bleurt-pytorch"),
    ],
)
def test_a_changed_key_does_not_serve_old_values(tmp_path, monkeypatch, weights, metric, package):
    checkpoint = tmp_path / "model"
    checkpoint.mkdir()
    (checkpoint / "weights.bin").write_bytes(b"old weights")
    rows = [
        {"set_id": "s", "template_id": 0, "perm_index": p, "concepts": ["dog", "run"], "answer": a}
        for p, a in enumerate(ANSWERS)
    ]
    model_dir = write_generations(tmp_path / "gen", "m", rows)

    def scored(**kwargs):
        out = score_model(
            model_dir,
            metrics=[metric],
            out_dir=tmp_path / "s",
            progress=False,
            scoring=scoring_with(
                perplexity_model=str(checkpoint), bleurt_checkpoint=str(checkpoint), **kwargs
            ),
        )
        return pd.read_parquet(out / "summary.parquet")[metric].tolist()

    assert scored() == [10.0] and weights["loads"] == 1
    weights["value"] = 20.0  # what another package, code version or checkpoint would compute
    assert scored() == [10.0] and weights["loads"] == 1  # nothing changed: nothing recomputed
    real_version = metadata.version
    for name in filter(
        None, (package, "transformers", "torch")
    ):  # an upgrade of any package the values depend on
        weights["value"] += 1
        monkeypatch.setattr(
            metadata,
            "version",
            lambda n, name=name, v=weights["value"]: f"{v}" if n == name else real_version(n),
        )
        assert scored() == [weights["value"]], name
    weights["value"] += 1
    (checkpoint / "weights.bin").write_bytes(b"new weights under the same name")
    assert scored() == [weights["value"]]  # the directory's revision changed
    weights["value"] += 1
    monkeypatch.setitem(
        FAMILIES,
        metric,
        dataclasses.replace(FAMILIES[metric], version=FAMILIES[metric].version + 1),
    )
    assert scored() == [weights["value"]]


def test_a_directory_revision_follows_its_contents(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    before = hub.revision(str(tmp_path))
    (tmp_path / "config.json").write_text('{"a": 1}')
    assert before.startswith("sha256:") and hub.revision(str(tmp_path)) != before
    assert hub.revision("no-such-org/no-such-model-here") is None


def test_lmppl_and_ocg_perplexities_key_apart(tmp_path, monkeypatch, weights):
    """A value lmppl computed is never served where ocg's own implementation scores (transformers 5)."""
    checkpoint = tmp_path / "model"
    checkpoint.mkdir()
    rows = [
        {"set_id": "s", "template_id": 0, "perm_index": p, "concepts": ["dog", "run"], "answer": a}
        for p, a in enumerate(ANSWERS)
    ]
    model_dir = write_generations(tmp_path / "gen", "m", rows)

    def scored(impl):
        monkeypatch.setattr(perplexity, "implementation", lambda: impl)
        out = score_model(
            model_dir,
            metrics=["perplexity"],
            out_dir=tmp_path / "s",
            progress=False,
            scoring=scoring_with(perplexity_model=str(checkpoint)),
        )
        sig = json.loads((out / "signature.json").read_text())["perplexity"]
        return pd.read_parquet(out / "summary.parquet")["perplexity"].tolist(), sig

    assert scored("lmppl")[0] == [10.0]
    weights["value"] = 20.0
    values, sig = scored("ocg")
    assert (
        values == [20.0]
        and weights["loads"] == 2
        and sig["implementation"] == "ocg"
        and "lmppl" not in sig["key"]
    )
    assert (
        scored("lmppl")[0] == [20.0] and weights["loads"] == 3
    )  # the cache keeps one key's values
