"""The judge beside ocg's checks, answer by answer (ocg/scoring/judge_agreement.py): each judged
answer in one cell of each check's 2x2 table, an unjudged one in none; the summary's
`n_judge_<check>_<cell>` are those cells summed per row, and its disagreements the two
off-diagonal cells (as they were counted before the cells)."""

import json

import pandas as pd
import pytest

from ocg.scoring.judge_agreement import CELLS, CHECKS, cell_column, cell_counts, cell_flags
from tests.helpers import replay_judge

CONCEPTS = ["dog", "catch", "frisbee"]
ALL = {"score": 4, "order": CONCEPTS}
# answer -> the judge's reply: every cell of both checks, and an unjudged answer
REPLIES = {
    "The dog catches a frisbee.": json.dumps(ALL),
    "A frisbee is caught by the dog.": json.dumps(ALL),
    "The dog runs.": json.dumps(ALL),
    "The dog catches it.": json.dumps({"score": 3, "order": ["dog", "catch"]}),
    "Dog catch frisbee now.": json.dumps({"score": 1, "order": ["frisbee", "dog"]}),
    "The frisbee flew.": "no JSON here",
}


def test_each_judged_answer_falls_in_one_cell_of_each_check():
    answers = pd.DataFrame(
        {
            "concepts": [CONCEPTS] * 5,
            "judge_order": [CONCEPTS, CONCEPTS, ["dog", "catch"], ["frisbee", "dog"], None],
            "judge_in_order": [1.0, 1.0, 0.0, 0.0, float("nan")],
            "judge_reason": [None, None, None, None, "unparsed"],
            "all_present": [True, True, False, True, True],
            "in_order": [True, False, False, True, True],
        }
    )
    flags = cell_flags(answers)
    cell = {
        check: [
            next((c for c in CELLS if row[cell_column(check, c)]), None)
            for row in flags.to_dict("records")
        ]
        for check in CHECKS
    }
    assert cell["coverage"] == ["both", "both", "neither", "ocg_only", None]
    assert cell["order"] == ["both", "judge_only", "neither", "ocg_only", None]
    assert cell_counts(answers)["order"] == {
        "both": 1,
        "judge_only": 1,
        "ocg_only": 1,
        "neither": 1,
    }


@pytest.fixture(scope="module")
def judged(scored_run, tmp_path_factory):
    texts = list(REPLIES)
    models = replay_judge(
        tmp_path_factory.mktemp("judge"), {(a, tuple(CONCEPTS)): r for a, r in REPLIES.items()}
    )
    rows = [
        {
            "set_id": s,
            "template_id": t,
            "perm_index": p,
            "concepts": CONCEPTS,
            "pos_pattern": "NVN",
            "answer": texts[(p + t + int(s[1:])) % len(texts)],
        }
        for s in ("s1", "s2")
        for t in (0, 1)
        for p in range(6)
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ocg.config.model_registry.MODELS_FILE", models)
        root = scored_run("judge-cells", rows, ["coverage", "judge"], judge="replayed-judge")
    scores = root / "scores" / "m"
    return pd.read_parquet(scores / "answers.parquet"), pd.read_parquet(scores / "summary.parquet")


def test_the_summary_sums_the_cells_and_the_disagreements_are_off_the_diagonal(judged):
    answers, summary = judged
    judged_ = answers["judge_reason"].isna()
    assert (~judged_).any() and judged_.sum() == summary["n_judged"].sum()
    keys = ["model", "condition", "template_id"]
    for row in summary.to_dict("records"):
        mine = answers[(answers[keys] == pd.Series({k: row[k] for k in keys})).all(axis=1)]
        mine = mine[mine["judge_reason"].isna()]
        # the judge's verdicts read here by hand: its order lists every concept / is the asked one
        judge = {
            "coverage": mine["judge_order"].map(lambda o: set(CONCEPTS) <= set(o)),
            "order": mine["judge_order"].map(lambda o: list(o) == CONCEPTS),
        }
        ocg = {"coverage": mine["all_present"].astype(bool), "order": mine["in_order"].astype(bool)}
        for check in CHECKS:
            expected = {
                "both": (judge[check] & ocg[check]).sum(),
                "judge_only": (judge[check] & ~ocg[check]).sum(),
                "ocg_only": (~judge[check] & ocg[check]).sum(),
                "neither": (~judge[check] & ~ocg[check]).sum(),
            }
            got = {cell: row[cell_column(check, cell)] for cell in CELLS}
            assert got == expected
            assert sum(got.values()) == row["n_judged"]
            assert row[f"n_judge_{check}_disagreements"] == got["judge_only"] + got["ocg_only"]
    totals = {c: summary[cell_column("order", c)].sum() for c in CELLS}
    assert all(totals.values()), totals  # every cell of the order table is met
