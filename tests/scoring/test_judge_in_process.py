"""The shipped judge end to end: the embedded SmolLM2-135M run in process (params/judge-models.yaml,
`backend: transformers`), batched, its decoding constrained by xgrammar to the verdict: every
answer asked gets a well-formed verdict, offline and without a server, and a rescoring asks
nothing. A 135M judge is no judge: this holds the path, not the verdicts."""

import json

import pandas as pd
import pytest

from ocg.core.paths import PARAMS_DIR
from ocg.scoring import score_model
from tests.helpers import scoring_with, write_generations

pytestmark = [pytest.mark.slow]
CONCEPTS = ["dog", "catch", "frisbee", "park"]
ANSWERS = [
    "The dog jumps to catch a frisbee in the park.",
    "In the park, a frisbee is caught by the dog.",
    "dog catch frisbee park",
    "Horse.",
    "",
]


def test_the_shipped_judge_judges_every_answer_in_process(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rows = [
        {"set_id": "s1", "template_id": 0, "perm_index": p, "concepts": CONCEPTS, "answer": a}
        for p, a in enumerate(ANSWERS)
    ]
    model_dir = write_generations(tmp_path / "gen", "m", rows)
    options = dict(
        metrics=["coverage", "judge"],
        out_dir=tmp_path / "scores",
        progress=False,
        scoring=scoring_with(
            judge="smollm2-135m-judge", judge_models_file=str(PARAMS_DIR / "judge-models.yaml")
        ),
    )
    out = score_model(model_dir, **options)
    answers = pd.read_parquet(out / "answers.parquet").set_index("perm_index")
    asked = answers.loc[[0, 1, 2, 3]]
    assert asked["judge_reason"].isna().all(), asked["judge_reason"].tolist()
    assert asked["judge_score"].between(1, 5).all() and asked["judge_in_order"].notna().all()
    assert answers.loc[4, "judge_reason"] == "empty answer"
    cache = pd.read_parquet(out / "judge_cache.parquet")
    assert len(cache) == 4 and all(r.startswith('{"nonce": "') for r in cache["reply"])
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert block["key"]["backend"] == "transformers"
    assert block["key"]["constraint"]["library"] == "xgrammar"
    assert block["decoded"]["dtype"] == "float32" and block["n_judged"] == 4
    assert block["unjudged"] == {"empty answer": 1}
    (out / "signature.json").unlink()  # recomputed in full, yet nothing is decoded again
    again = score_model(model_dir, **options)
    block = json.loads((again / "signature.json").read_text())["judge"]
    assert "decoded" not in block and block["n_judged"] == 4
