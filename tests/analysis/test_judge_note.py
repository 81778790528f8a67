"""The judge's counts under Table 1 (ocg/analysis/judge_note.py): a judge that judged nothing
(the embedded SmolLM2 behind `transformers serve`, params/runs/judge.yaml) says so, where its
columns would otherwise show only "–" with no reason under the table."""

import pandas as pd

from ocg.analysis.judge_note import judge_counts
from ocg.records import Signature


def signature(judge: dict) -> Signature:
    return Signature(families={"judge": judge})


def test_judged_and_unjudged_answers_and_disagreements_are_counted_per_model():
    summary = pd.DataFrame(
        {
            "model": ["small", "small", "big", "none"],
            "n_answers": [16, 16, 4, 8],
            "n_judge_order_disagreements": [0, 0, 1, 0],
        }
    )
    ok = {"status": "ok", "judge": "served-judge"}
    note = judge_counts(
        summary,
        {
            "small": signature({**ok, "unparsed": 32}),
            "big": signature({**ok, "unparsed": 1}),
            "none": signature({"status": "missing", "reason": "no judge in the run file"}),
        },
    )
    lines = note.split("</p>")[:-1]
    assert len(lines) == 2, note  # no line for a model no judge scored: its reason stands already
    assert (
        "<b>Judge</b> of big (<code>served-judge</code>): 3 of 4 answers judged, 1 unjudged"
        in (lines[0])
        and "differs from ocg's on 1 " in lines[0]
    )
    assert "0 of 32 answers judged, 32 unjudged" in lines[1], lines[1]
    assert "Judge and Judge w/ order have no value" in lines[1] and "no value" not in lines[0]
