"""The LLM judge end to end: `transformers serve` of the embedded SmolLM2 as the judge, started by
ocg for the scoring from the judge entry's `api.server` (as tests/generation/test_server.py starts
it for generation) and stopped after. A 135M model may reply with no JSON: such an answer is
unjudged (NaN) and counted, never guessed."""

import json
import math
import re

import pandas as pd
import pytest
import yaml

from ocg.scoring import score_model
from tests.generation.transformers_serve import no_server_left, server_entry
from tests.helpers import scoring_with, write_generations

pytestmark = [pytest.mark.slow, pytest.mark.tf4]
CONCEPTS = ["dog", "catch", "frisbee"]
ANSWERS = [
    "The dog jumps to catch a frisbee.",
    "A frisbee is caught by the dog.",
    "dog catch frisbee",
    "",
]


def test_the_embedded_model_served_as_judge(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(
        "HF_HUB_CACHE", str(tmp_path / "hub-cache")
    )  # transformers 5 lists it on /models
    (tmp_path / "hub-cache").mkdir()
    entry = server_entry()
    entry["max_new_tokens"] = 64  # {"nonce": ..., "score": 4, "order": [three concepts]} fits
    # named as params/judge-models.yaml names it: served, and asked, as its converted folder
    entry["id"] = "embedded:smollm2-135m-instruct"
    models = tmp_path / "models.yaml"
    models.write_text(
        yaml.safe_dump(
            {
                "extends": str(
                    __import__("ocg.config.model_registry").config.model_registry.MODELS_FILE
                ),
                "models": {"served-judge": entry},
            }
        )
    )
    monkeypatch.setattr("ocg.config.model_registry.MODELS_FILE", models)
    rows = [
        {
            "set_id": "s1",
            "template_id": 0,
            "perm_index": p,
            "concepts": CONCEPTS,
            "pos_pattern": "NVN",
            "answer": a,
        }
        for p, a in enumerate(ANSWERS + ANSWERS[:1])
    ]  # one answer twice: asked once
    model_dir = write_generations(tmp_path / "gen", "m", rows)
    scores = tmp_path / "scores"
    out = score_model(
        model_dir,
        metrics=["coverage", "judge"],
        out_dir=scores,
        progress=False,
        scoring=scoring_with(judge="served-judge"),
    )
    assert no_server_left()  # stopped when the scoring ended
    log = out / "judge_server.log"
    asked = len(re.findall(r"POST /v1/chat/completions", log.read_text()))
    assert (
        asked == 3 + 1
    )  # three distinct non-empty answers, and the first request alone (attach_server)
    answers = pd.read_parquet(out / "answers.parquet")
    judged = answers["judge_score"].notna()
    assert (
        answers["judge_score"][judged].between(1, 5).all()
        and not judged[answers["answer"] == ""].any()
    )
    assert (answers["judge_in_order"].notna() == answers["judge_order"].notna()).all()
    sig = json.loads((out / "signature.json").read_text())
    block = sig["judge"]
    assert block["key"]["judge"] == "served-judge" and block["key"]["id"] == entry["id"]
    assert (
        block["key"]["decoding"]["max_new_tokens"] == 64
        and block["server"]["command"][1] == "serve"
    )
    # unjudged, counted by reason: the empty answer and any reply that is no verdict
    assert sum(block["unjudged"].values()) == int((~judged).sum())
    assert block["unjudged"]["empty answer"] == 1
    print(
        f"judged {int(judged.sum())} of {len(answers)}; replies: "
        f"{pd.read_parquet(out / 'judge_cache.parquet')['reply'].tolist()}"
    )
    (
        out / "signature.json"
    ).unlink()  # an unfinished score set: recomputed in full, yet nobody asked again
    size = log.stat().st_size
    again = score_model(
        model_dir,
        metrics=["coverage", "judge"],
        out_dir=scores,
        progress=False,
        scoring=scoring_with(judge="served-judge"),
    )
    assert (
        log.stat().st_size == size
        and "server" not in json.loads((again / "signature.json").read_text())["judge"]
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(again / "answers.parquet")[["judge_score", "judge_in_order"]],
        answers[["judge_score", "judge_in_order"]],
    )
    assert math.isnan(answers.set_index("perm_index").loc[3, "judge_score"])
