"""The judge's cache and its reply reading cannot be bent by hand: a reply with a key twice is
unjudged (which value counts would be the parser's whim), each cache entry is sealed by a digest
of the judge's key, the answer and the reply under the secret beside the cache, an entry edited by
hand is asked again (and the scoring line says how many), and the secret itself is refused when it
is not what ocg wrote, never read through a symbolic link."""

import json
import os

import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ocg.core.errors import OcgInputError
from ocg.metrics import judge
from ocg.scoring import score_model
from ocg.scoring.judging import secret
from tests.generation.scripted_server import KEY, ScriptedServer
from tests.helpers import scoring_with, write_generations
from tests.scoring import fake_judges

CONCEPTS = ["dog", "catch", "frisbee"]
ANSWERS = ["The dog leaps to catch a frisbee.", "A frisbee, a dog.", "The dog sleeps."]


@given(
    key=st.sampled_from(["nonce", "score", "order"]),
    value=st.sampled_from(['"0a1b"', "5", '["dog"]', "1", "[]"]),
    first=st.booleans(),
)
def test_a_reply_with_a_repeated_key_is_unjudged(key, value, first):
    fields = [("nonce", '"0a1b"'), ("score", "4"), ("order", '["dog", "catch"]')]
    extra = (key, value)
    fields = [extra, *fields] if first else [*fields, extra]
    reply = "{" + ", ".join(f'"{k}": {v}' for k, v in fields) + "}"
    assert judge.read(reply, CONCEPTS, "The dog catches it.", "0a1b")[2] == judge.REPEATED_KEY


@given(given_nonce=st.text("0123456789abcdef", max_size=20))
def test_a_verdict_without_the_requests_nonce_is_unjudged(given_nonce):
    reply = json.dumps({"nonce": given_nonce, "score": 4, "order": ["dog"]})
    expected = None if given_nonce == "0a1b" else judge.NO_NONCE
    assert judge.read(reply, CONCEPTS, "The dog runs.", "0a1b")[2] == expected
    no_nonce = json.dumps({"score": 4, "order": ["dog"]})
    assert judge.read(no_nonce, CONCEPTS, "The dog runs.", "0a1b")[2] == judge.NO_NONCE


def test_the_nonce_is_the_secrets_and_the_answers():
    one, two = bytes(32), bytes([1]) * 32
    key = json.dumps(["The dog runs.", CONCEPTS])
    assert judge.nonce(one, key) == judge.nonce(one, key) != judge.nonce(two, key)
    assert judge.nonce(one, key) != judge.nonce(one, json.dumps(["The dog ran.", CONCEPTS]))
    assert len(judge.nonce(one, key)) == judge.NONCE_CHARS


@pytest.fixture
def sealed_run(tmp_path, monkeypatch, capfd):
    server = ScriptedServer(
        lambda body, headers: fake_judges.reply(fake_judges.verdict(body, 4, ["dog"]))
    )
    entry = {"id": "judge-model", "backend": "openai", "max_new_tokens": 64}
    entry["api"] = {"base_url": server.url, "key_env": "OCG_TEST_KEY", "concurrency": 1}
    models = tmp_path / "judges.yaml"
    models.write_text(yaml.safe_dump({"models": {"local-judge": entry}}))
    monkeypatch.setenv("OCG_TEST_KEY", KEY)
    rows = [
        {"set_id": "s1", "template_id": 0, "perm_index": p, "concepts": CONCEPTS, "answer": a}
        for p, a in enumerate(ANSWERS)
    ]
    model_dir = write_generations(tmp_path / "gen", "m", rows)
    logged: list[str] = []

    def run():
        capfd.readouterr()
        out = score_model(
            model_dir,
            metrics=["judge"],
            out_dir=tmp_path / "scores",
            progress=True,
            scoring=scoring_with(judge="local-judge", judge_models_file=str(models)),
        )
        logged[:] = "\n".join(capfd.readouterr()).splitlines()
        return out

    yield run, server, logged
    server.close()


def test_a_cache_entry_edited_by_hand_is_asked_again(sealed_run):
    run, server, logged = sealed_run
    out = run()
    assert len(server.bodies) == 3
    cache_path = out / "judge_cache.parquet"
    cache = pd.read_parquet(cache_path)
    assert cache["digest"].str.fullmatch(r"[0-9a-f]{64}").all()
    secret_file = out / "judge_secret"
    assert secret_file.stat().st_mode & 0o777 == 0o600
    assert secret_file.read_text().strip() not in (out / "signature.json").read_text()
    forged = cache.copy()
    forged.loc[0, "reply"] = forged.loc[0, "reply"].replace('"score": 4', '"score": 5')
    forged.loc[1, "digest"] = "0" * 64
    forged.to_parquet(cache_path)
    (out / "signature.json").unlink()  # recomputed: the cache is read again
    out = run()
    assert len(server.bodies) == 5  # the two edited entries, and only them
    assert any("2 cached replies did not match their digest" in line for line in logged), logged
    answers = pd.read_parquet(out / "answers.parquet")
    assert answers["judge_score"].tolist() == [4.0, 4.0, 4.0]
    block = json.loads((out / "signature.json").read_text())["judge"]
    assert block["cache_rejected"] == 2 and block["n_judged"] == 3
    assert len(pd.read_parquet(cache_path)) == 3  # the forged entries replaced, not kept beside


def test_a_lost_secret_asks_every_answer_again(sealed_run):
    run, server, logged = sealed_run
    out = run()
    (out / "judge_secret").unlink()
    (out / "signature.json").unlink()
    run()
    assert len(server.bodies) == 6
    assert any("3 cached replies did not match" in line for line in logged)


@pytest.mark.parametrize("content", ["", "not hex\n", "ab" * 31 + "\n", "AB" * 32])
def test_a_secret_ocg_did_not_write_is_refused_by_name(tmp_path, content):
    path = tmp_path / "judge_secret"
    path.write_text(content)
    with pytest.raises(OcgInputError, match=r"judge_secret: expected 64 hex characters"):
        secret(path)


def test_the_secret_is_never_read_through_a_link(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("ab" * 32)
    os.symlink(target, tmp_path / "judge_secret")
    with pytest.raises(OcgInputError, match="cannot read the judge's secret"):
        secret(tmp_path / "judge_secret")
    assert target.read_text() == "ab" * 32


def test_a_new_secret_is_made_once_and_kept(tmp_path):
    first = secret(tmp_path / "s" / "judge_secret")
    assert secret(tmp_path / "s" / "judge_secret") == first and len(first) == 32
    assert [p.name for p in (tmp_path / "s").iterdir()] == ["judge_secret"]
