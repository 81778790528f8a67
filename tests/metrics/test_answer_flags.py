"""Truncated and looping answers are flagged (docs/METHODS.md, "Answer flags"), counted on the
landing page and in the scores, and filterable in the case browser."""

import json
import re

import pandas as pd
import pytest

from ocg.metrics.degenerate import FLAGS_VERSION, flag_answers, looping
from ocg.scoring import score_model
from ocg.site.landing import write_index
from tests.helpers import checked_run

LOOP = "The person who pushes the person who jumps the person who jumps the person who"


@pytest.mark.parametrize(
    "text, loops",
    [
        (LOOP, True),
        ("A dog runs, a dog runs, a dog runs.", True),
        ("A dog, a dog, a dog runs, a dog runs.", False),  # no run of three words three times
        (
            "The bartender lifts the end of the bar to check the weight of the head of the customer.",
            False,
        ),
        ("The boy rides a bike down the street.", False),
        ("", False),
    ],
)
def test_a_loop_is_a_run_of_three_words_three_times(text, loops):
    assert looping(text) is loops


def test_truncated_comes_from_the_finish_reason_not_the_text():
    answers = pd.Series(["A dog runs.", "A dog runs.", "A dog"])
    flags = flag_answers(answers, pd.Series(["stop", "length", "length"]))
    assert flags["truncated"].tolist() == [False, True, True]
    assert not flag_answers(answers)["truncated"].any()  # records without a finish reason


@pytest.fixture(scope="module")
def flagged(scored_run):
    rows = [
        {
            "set_id": "s1",
            "template_id": 0,
            "perm_index": p,
            "concepts": ["dog", "run", "park", "ball"],
            "answer": LOOP
            if p == 5
            else ("The dog runs in the" if p < 2 else "The dog runs in the park with a ball."),
            "finish_reason": "length" if p < 2 or p == 5 else "stop",
        }
        for p in range(24)
    ]
    root = scored_run("flags", rows, ["pbleu"])
    return root, root / "scores" / "m"


def test_scores_carry_the_flags_and_their_version(flagged):
    root, out = flagged
    answers = pd.read_parquet(out / "answers.parquet").sort_values("perm_index")
    assert answers["truncated"].tolist() == [p < 2 or p == 5 for p in range(24)]
    assert answers["looping"].tolist() == [p == 5 for p in range(24)]
    summary = pd.read_parquet(out / "summary.parquet")
    assert summary["n_truncated"].sum() == 3 and summary["n_looping"].sum() == 1
    assert json.loads((out / "signature.json").read_text())["flags_version"] == FLAGS_VERSION


def test_a_set_flagged_under_other_definitions_is_recomputed(flagged, tmp_path):
    import shutil

    root, _ = flagged
    shutil.copytree(root / "gen", tmp_path / "gen")
    shutil.copytree(root / "scores", tmp_path / "scores")
    sig_path = tmp_path / "scores" / "m" / "signature.json"
    sig = json.loads(sig_path.read_text())
    sig.pop("flags_version")  # as written before the flags had a version
    sig_path.write_text(json.dumps(sig))
    summary = tmp_path / "scores" / "m" / "summary.parquet"
    before = summary.stat().st_mtime_ns
    score_model(
        tmp_path / "gen" / "m", metrics=["pbleu"], out_dir=tmp_path / "scores", progress=False
    )
    sig = json.loads(sig_path.read_text())
    assert (
        sig["flags_version"] == FLAGS_VERSION
        and sig["recomputed"] == []
        and sig["reused"] == ["pbleu"]
    )
    assert summary.stat().st_mtime_ns != before  # the flags re-derived; no metric recomputed
    # and with the version it has now, nothing is recomputed
    before = summary.stat().st_mtime_ns
    score_model(
        tmp_path / "gen" / "m", metrics=["pbleu"], out_dir=tmp_path / "scores", progress=False
    )
    assert summary.stat().st_mtime_ns == before


def test_the_landing_page_counts_them_and_says_what_they_mean(flagged, tmp_path):
    root, _ = flagged
    page = write_index(
        tmp_path / "report",
        "t",
        [],
        run=checked_run(**{"models": ["m"], "conditions": ["ordered"], "file": "r"}),
        scores_root=root / "scores",
        generations_root=root / "gen",
    ).read_text()
    row = page.split("<h2>Models</h2>")[1].split("</table>")[0].split("<tr><td><code>")[1]
    # after status and answers
    flags_cell = re.findall(r"<td[^>]*>(.*?)</td>", row)[2]
    assert flags_cell == "1 looping, 3 truncated"  # the flags that occur, no zero counts
    legend = page.split("<details id='flags'>")[1].split("</details>")[0]
    assert (
        "<dt>truncated</dt>" in legend
        and "max_new_tokens" in legend
        and "<dt>looping</dt>" in legend
    )


@pytest.mark.slow
def test_the_case_browser_filters_truncated_and_looping_answers(flagged, tmp_path):
    from tests.chromium import CHROMIUM, chromium, console_errors

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    root, _ = flagged
    write_index(
        tmp_path,
        "t",
        [],
        run=checked_run(**{"models": ["m"], "conditions": ["ordered"], "file": "r"}),
        scores_root=root / "scores",
        generations_root=root / "gen",
    )
    shown = {}
    for outcome in ("truncated", "looping", ""):
        dom = chromium(
            (tmp_path / "cases.html").as_uri()
            + f"#model=m&condition=ordered&template=0&outcome={outcome}",
            "--dump-dom",
        )
        assert dom.returncode == 0 and not console_errors(dom.stderr), dom.stderr[-2000:]
        shown[outcome] = (
            dom.stdout.split('<tbody id="rows">', 1)[1]
            .split("</tbody>", 1)[0]
            .count('<tr class="case">')
        )
    assert shown == {"truncated": 3, "looping": 1, "": 24}
