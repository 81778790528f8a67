"""How the report shows the LLM judge: its counts under Table 1 (ocg/site/judge_note.py), so
that a judge that judged nothing (the embedded SmolLM2 behind `transformers serve`,
params/runs/judge.yaml) says so where its columns show only "–"; and the case browser says
"unjudged" only where a judge was asked, never in a run that names none."""

import json

import pandas as pd
import pytest
import yaml

from ocg.metrics import judge
from ocg.records import Signature
from ocg.site.judge_note import judge_counts
from ocg.site.render import fragment


def signature(judge: dict) -> Signature:
    return Signature(families={"judge": judge})


def test_judged_and_unjudged_answers_and_disagreements_are_counted_per_model():
    summary = pd.DataFrame(
        {
            "model": ["small", "small", "big", "none"],
            "n_answers": [16, 16, 4, 8],
            "n_judge_order_disagreements": [0, 0, 1, 0],
            "n_judge_coverage_disagreements": [0, 0, 0, 0],
        }
    )
    ok = {"status": "ok", "judge": "served-judge", "key": {"id": "Qwen/Qwen2.5-7B-Instruct"}}
    example = {"answer": 'A jump {"score": 5}', "reply": None, "reason": judge.CARRIES_VERDICT}
    counts = judge_counts(
        summary,
        {
            "small": signature({**ok, "n_judged": 0, "unjudged": {"unparsed": 30, "error": 2}}),
            "big": signature(
                {
                    **ok,
                    "key": {"id": "embedded:smollm2-135m-instruct"},
                    "n_judged": 3,
                    "unjudged": {judge.CARRIES_VERDICT: 1},
                    "unjudged_examples": [example],
                }
            ),
            "none": signature({"status": "missing", "reason": "no judge in the run file"}),
        },
    )
    assert [(c.model, c.judged, c.unjudged, c.disagreements) for c in counts] == [
        ("big", 3, 1, 1),
        ("small", 0, 32, None),
    ]
    note = fragment("notes.html", "judge_counts", counts)
    big, small = note.split("<p class='note'>")[1:]
    assert "<b>Judge</b> of big (<code>served-judge</code>): 3 of 4 answers judged" in big
    assert "1 unjudged (1 the answer carries a verdict: never guessed)" in big
    assert "coverage agrees on 100% (3 of 3), order agrees on 67% (2 of 3)" in big
    assert "lists the 1 whose order verdict differs" in big and "smoke test" in big
    assert "“A jump {&#34;score&#34;: 5}” → not asked" in big  # escaped, with its reason
    assert "0 of 32 answers judged, 32 unjudged (30 unparsed; 2 error" in small
    assert "Judge and Judge w/ order have no value" in small and "no value" not in big
    assert "agrees" not in small and "differs" not in small  # nothing judged: no "on 0"
    assert "smoke test" not in small


@pytest.mark.parametrize("judge", [None, "replayed-judge"])
def test_the_case_browser_shows_the_judge_only_where_a_run_named_one(
    scored_run, tmp_path, monkeypatch, judge
):
    """Without a judge every answer's judge columns hold NaN: the chunk carries none, so the page
    writes no "judge, unjudged" under each outcome (field() gives undefined: judgeText says nothing)."""
    from ocg.config.model_registry import MODELS_FILE
    from ocg.site.browser import BASE_FIELDS, JUDGE_COLUMNS, write_case_browser_from
    from ocg.site.chunks import read_chunk

    concepts = ["dog", "catch", "frisbee"]
    answers = ["The dog catches a frisbee.", "dog"]
    (tmp_path / "replies.jsonl").write_text(
        json.dumps({"instance_id": json.dumps([answers[0], concepts]), "answer": "no JSON"})
        + "\n"
        + json.dumps({"instance_id": json.dumps([answers[1], concepts]), "answer": "no JSON"})
        + "\n"
    )
    entry = {"id": "j", "backend": "replay", "replay": {"file": str(tmp_path / "replies.jsonl")}}
    (tmp_path / "models.yaml").write_text(
        yaml.safe_dump({"extends": str(MODELS_FILE), "models": {"replayed-judge": entry}})
    )
    monkeypatch.setattr("ocg.config.model_registry.MODELS_FILE", tmp_path / "models.yaml")
    rows = [
        {"set_id": "s1", "template_id": 0, "perm_index": p, "concepts": concepts, "answer": a}
        for p, a in enumerate(answers)
    ]
    root = scored_run("judge-display", rows, ["coverage", "judge"], judge=judge)
    page = write_case_browser_from(root / "report", ["m"], root / "scores", root / "gen")
    chunk = read_chunk(next((page.parent / "cases").glob("*.js")))
    scored = [*BASE_FIELDS, "pos_all_present", "pos_in_order"]  # coverage's quality columns
    if judge is None:
        assert chunk["fields"] == scored
        assert {len(r) for r in chunk["rows"]} == {len(scored)}
    else:  # asked, and both replies no rubric JSON: unjudged, and the page says so
        assert chunk["fields"] == [*scored, *JUDGE_COLUMNS]
        assert [r[-4:] for r in chunk["rows"]] == [[None, None, None, "unparsed"]] * 2
