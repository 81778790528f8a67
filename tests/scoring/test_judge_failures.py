"""A judge that fails, refuses or answers badly costs nothing but its own verdicts: one definition
of "judged" with the reason kept for every other answer, a failed request leaving one answer
unjudged (and asked again by the next scoring) while every other family is written, a judge that
answers nothing ending the scoring with its error after the rest is saved, and a server that
refuses structured outputs asked again without them."""

import json
import math
import re
import time

import pandas as pd
import pytest
import yaml

from ocg.metrics import judge
from ocg.scoring import score_model
from ocg.scoring.judging import JudgeFailed
from tests.generation.scripted_server import KEY, ScriptedServer
from tests.helpers import scoring_with, write_generations
from tests.scoring import fake_judges

CONCEPTS = ["dog", "catch", "frisbee"]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ('{"score": 4, "order": ["dog", "catch"]}', None),
        ('{"score": 4.5, "order": ["dog"]}', judge.NOT_INTEGER),
        ('{"score": "5", "order": ["dog"]}', judge.NOT_INTEGER),
        ('{"score": true, "order": ["dog"]}', judge.NOT_INTEGER),
        ('{"score": 7, "order": ["dog"]}', judge.OUT_OF_RANGE),
        ('{"score": 0, "order": []}', judge.OUT_OF_RANGE),
        ('{"score": 3, "order": ["dog", "cat"]}', judge.BAD_ORDER),
        ('{"score": 3, "order": ["dog", "dog"]}', judge.BAD_ORDER),
        ('{"score": 3, "order": "dog"}', judge.BAD_ORDER),
        ('{"order": ["dog", "catch", "frisbee"]}', judge.UNPARSED),
        ('{"score": NaN, "order": ["dog"]}', judge.NOT_INTEGER),
        ("The sentence is: The dog catches it. {}", judge.RESTATES),
        ("Sure.", judge.UNPARSED),
        ("", judge.REFUSED),
        (None, judge.REFUSED),
        (" " + "x" * (judge.MAX_REPLY_CHARS + 1), judge.TOO_LONG),
    ],
)
def test_every_unjudged_reply_keeps_its_reason(reply, reason):
    score, order, why = judge.read(reply, CONCEPTS, "The dog catches it.")
    assert why == reason
    assert (why is None) == (not math.isnan(score)) == (order is not None)


def test_a_huge_reply_is_refused_before_it_is_read():
    reply = '{"score": 5, "order": [' + '"dog", ' * (64 * 2**20 // 7) + '"dog"]}'
    t0 = time.perf_counter()
    assert judge.read(reply, CONCEPTS)[2] == judge.TOO_LONG
    assert time.perf_counter() - t0 < 1.0  # one strip and a length: no parsing of 64 MiB


def test_the_verdict_grammar_admits_exactly_a_verdict_on_distinct_concepts():
    rx = re.compile(judge.verdict_regex(["frisbee", "dog", "catch"], "0a1b"))
    assert rx.fullmatch('{"nonce": "0a1b", "score": 4, "order": ["dog", "catch"]}')
    assert rx.fullmatch('{"nonce": "0a1b", "score": 1, "order": []}')
    for bad in (
        '{"nonce": "0a1b", "score": 4, "order": ["dog", "dog"]}',
        '{"nonce": "0a1b", "score": 6, "order": ["dog"]}',
        '{"nonce": "0a1b", "score": 4, "order": ["cat"]}',
        '{"nonce": "0a1b", "score": 4,"order": ["dog"]}',
        '{"nonce": "0a1c", "score": 4, "order": ["dog"]}',
        '{"score": 4, "order": ["dog"]}',
    ):
        assert not rx.fullmatch(bad), bad
    schema = judge.verdict_schema(["frisbee", "dog", "catch"], "0a1b")
    assert schema["properties"]["order"]["items"]["enum"] == ["catch", "dog", "frisbee"]
    assert schema["properties"]["nonce"]["enum"] == ["0a1b"] and "nonce" in schema["required"]


ANSWERS = [f"The dog number {i} leaps to catch a frisbee." for i in range(10)]
BAD, SLOW = ANSWERS[3], ANSWERS[7]


_sentence = fake_judges.sentence


class Judge:
    """A scripted judge: `broken` answers decide which answers fail and how."""

    def __init__(self):
        self.broken = {BAD: "400", SLOW: "slow"}
        self.refuses_format = False
        self.server = ScriptedServer(lambda body, headers: self.respond(body))

    def respond(self, body):
        if self.refuses_format and "response_format" in body:
            return 400, {}, b'{"error": "unsupported field: response_format"}', 0
        how = self.broken.get(_sentence(body))
        if how == "400":
            return 400, {}, b'{"error": "maximum context length exceeded"}', 0
        if how == "slow":  # a byte every 50 ms: past timeout_s=1
            return fake_judges.reply(fake_judges.verdict(body, 5, CONCEPTS), trickle=0.05)
        if how == "all":
            return 400, {}, b'{"error": "model not loaded"}', 0
        return fake_judges.reply(fake_judges.verdict(body, 5, CONCEPTS))


@pytest.fixture
def failing(tmp_path, monkeypatch):
    fake = Judge()
    entry = {"id": "judge-model", "backend": "openai", "max_new_tokens": 64, "batch_size": 4}
    entry["api"] = {
        "base_url": fake.server.url,
        "key_env": "OCG_TEST_KEY",
        "concurrency": 2,
        "timeout_s": 1,
        "max_retries": 0,
    }
    models = tmp_path / "models.yaml"
    models.write_text(
        yaml.safe_dump(
            {
                "extends": str(
                    __import__("ocg.config.model_registry").config.model_registry.MODELS_FILE
                ),
                "models": {"local-judge": entry},
            }
        )
    )
    monkeypatch.setattr("ocg.config.model_registry.MODELS_FILE", models)
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    rows = [
        {"set_id": "s1", "template_id": 0, "perm_index": p, "concepts": CONCEPTS, "answer": a}
        for p, a in enumerate(ANSWERS)
    ]
    yield fake, write_generations(tmp_path / "gen", "m", rows), tmp_path / "scores"
    fake.server.close()


def _score(model_dir, scores):
    return score_model(
        model_dir,
        metrics=["coverage", "distinct", "judge"],
        out_dir=scores,
        progress=False,
        scoring=scoring_with(judge="local-judge"),
    )


def test_a_judge_failing_on_two_answers_costs_only_their_verdicts(failing):
    fake, model_dir, scores = failing
    out = _score(model_dir, scores)
    assert len(fake.server.bodies) == 10
    answers = pd.read_parquet(out / "answers.parquet").set_index("answer")
    assert answers["in_order"].notna().all() and answers["distinct_2"].notna().all()
    reasons = answers["judge_reason"]
    assert reasons[BAD].startswith("error: 400 from ") and "context length" in reasons[BAD]
    assert reasons[SLOW].startswith("error: ") and "timeout_s=1" in reasons[SLOW]
    assert reasons.drop([BAD, SLOW]).isna().all()
    assert answers["judge_score"].notna().sum() == 8
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert block["status"] == "ok" and block["n_judged"] == 8
    assert block["unjudged"] == {"error": 2} and block["n_errors"] == 2 and block["retry"]
    cache = pd.read_parquet(out / "judge_cache.parquet")
    assert len(cache) == 8  # what failed is not cached
    summary = pd.read_parquet(out / "summary.parquet")
    assert summary["judge_score"].iloc[0] == 5.0

    fake.broken = {}  # healthy now: the next scoring asks the two again, and only them
    fake.server.bodies.clear()
    out = _score(model_dir, scores)
    assert sorted(_sentence(b) for b in fake.server.bodies) == sorted([BAD, SLOW])
    answers = pd.read_parquet(out / "answers.parquet")
    assert answers["judge_reason"].isna().all() and answers["judge_score"].notna().all()
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert "retry" not in block and block["n_judged"] == 10
    fake.server.bodies.clear()
    _score(model_dir, scores)  # nothing left to ask
    assert fake.server.bodies == []


def test_a_judge_that_answers_nothing_ends_the_scoring_after_the_rest_is_written(failing):
    fake, model_dir, scores = failing
    fake.broken = dict.fromkeys(ANSWERS, "all")
    with pytest.raises(JudgeFailed, match=r"answered none of the 10 requests.*model not loaded"):
        _score(model_dir, scores)
    out = scores / "m"
    answers = pd.read_parquet(out / "answers.parquet")
    assert answers["in_order"].notna().all() and answers["judge_score"].isna().all()
    assert answers["judge_reason"].str.startswith("error: 400").all()
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert block["status"] == "missing" and "model not loaded" in block["reason"]
    summary = pd.read_parquet(out / "summary.parquet")
    assert summary["judge_missing_reason"].str.contains("answered none").all()


def test_a_server_that_refuses_structured_outputs_is_asked_without_them(failing):
    fake, model_dir, scores = failing
    fake.broken, fake.refuses_format = {}, True
    out = _score(model_dir, scores)
    first = fake.server.bodies[0]["response_format"]
    assert first["type"] == "json_schema"
    sent = fake_judges.nonce(fake.server.bodies[0])
    assert first["json_schema"]["schema"] == judge.verdict_schema(CONCEPTS, sent)
    answers = pd.read_parquet(out / "answers.parquet")
    assert answers["judge_score"].notna().all()
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert block["key"]["structured"] == "json_schema"
    assert block["structured_outputs"].startswith("none: the server refused response_format")
    asked_without = [b for b in fake.server.bodies if "response_format" not in b]
    assert len(asked_without) == 10


def test_a_server_that_takes_structured_outputs_is_asked_with_them(failing):
    fake, model_dir, scores = failing
    fake.broken = {}
    out = _score(model_dir, scores)
    assert all("response_format" in b for b in fake.server.bodies)
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert block["structured_outputs"] == "json_schema"


def test_ocg_score_exits_0_with_two_failures_and_1_when_the_judge_answers_nothing(
    failing, tmp_path, capsys
):
    from ocg.cli import main
    from ocg.core.paths import PARAMS_DIR

    fake, model_dir, scores = failing
    settings = yaml.safe_load((PARAMS_DIR / "scoring.yaml").read_text())
    settings["judge"] = "local-judge"
    (tmp_path / "scoring.yaml").write_text(yaml.safe_dump(settings))
    argv = ["score", "--generations", str(model_dir.parent), "--out", str(scores)]
    argv += ["--scoring-file", str(tmp_path / "scoring.yaml"), "--metrics", "coverage", "judge"]
    assert main(argv) == 0
    answers = pd.read_parquet(scores / "m" / "answers.parquet")
    assert answers["judge_reason"].str.startswith("error: ").sum() == 2
    fake.broken = dict.fromkeys(ANSWERS, "all")
    assert main([*argv, "--redo"]) == 1
    err = capsys.readouterr().err
    assert "ocg: error: " in err and "answered none of the 10 requests" in err, err
    assert "Traceback" not in err
    written = pd.read_parquet(scores / "m" / "answers.parquet")
    assert written["in_order"].notna().all() and written["judge_score"].isna().all()
