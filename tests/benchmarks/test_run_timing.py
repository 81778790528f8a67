"""benchmarks/run_timing.py: the judge's counts read from the score sets' signatures, and the
shipped judge run's latest record judging at least 90% of its answers (docs/gpus.md shows it)."""

import json
from pathlib import Path

from tests.helpers import benchmark

ROOT = Path(__file__).resolve().parents[2]
run_timing = benchmark("run_timing")
runs_of = benchmark("recording").runs_of


def _signature(folder: Path, judge: dict | None) -> None:
    folder.mkdir(parents=True)
    (folder / "signature.json").write_text(json.dumps({"judge": judge} if judge else {}))


def test_the_judges_counts_come_from_every_score_set(tmp_path):
    _signature(tmp_path / "a" / "scores" / "m1", {"n_judged": 30, "unjudged": {"empty answer": 2}})
    _signature(tmp_path / "a" / "scores" / "m2", {"n_judged": 5, "unjudged": {}})
    _signature(tmp_path / "b" / "scores" / "m3", {"status": "missing", "reason": "no judge"})
    assert run_timing.judged(tmp_path) == {"answers": 37, "judged": 35, "judged_share": 0.9459}
    assert run_timing.judged(tmp_path / "b") is None


def test_the_shipped_judge_run_judges_at_least_nine_in_ten_answers():
    records = [
        r for r in runs_of(ROOT / "benchmarks" / "results" / "runs.json") if "judge" in r["figures"]
    ]
    assert records, "no record of the judge run: run benchmarks/run_timing.py judge"
    latest = records[-1]["figures"]["judge"]["judge"]
    assert latest["judged_share"] >= 0.9 and latest["answers"] > 0, latest
