"""Benchmarks keep their figures as data (benchmarks/recording.py): each run appends one entry
with figures, arguments, machine, date and commit, and the docs' table shows the latest."""

import json
import re
import subprocess
import sys

import pytest

from ocg.core.paths import PROJECT_ROOT
from tests.helpers import benchmark

BENCHMARKS = PROJECT_ROOT / "benchmarks"


@pytest.fixture
def recording(monkeypatch, tmp_path):
    monkeypatch.setenv("OCG_BENCHMARK_RESULTS", str(tmp_path))
    return benchmark("recording")


def test_runs_append_with_machine_date_and_commit(recording, tmp_path):
    recording.record("demo_bench", {"answers_per_s": 7.0}, {"prompts": 8})
    recording.record("demo_bench", {"answers_per_s": 9.5}, {"prompts": 16})
    runs = json.loads((tmp_path / "demo_bench.json").read_text())
    assert [r["figures"]["answers_per_s"] for r in runs] == [7.0, 9.5]
    assert runs[1]["args"] == {"prompts": 16} and runs[1]["machine"]["cores"] >= 1
    assert runs[1]["date"][:4].isdigit() and runs[1]["commit"]
    table = recording.latest_table(tmp_path)
    assert "answers_per_s: 9.5" in table and "answers_per_s: 7.0" not in table
    assert isinstance(runs[1]["machine"]["vector_features"], list)  # what tells 2 EPYCs apart


def test_a_run_records_the_commit_it_measured(recording, tmp_path):
    """demo_timing measures a clone made at its start: the checkout's HEAD may have moved since."""
    recording.record("demo_bench", {"s": 1.0}, commit="a" * 40)
    run = json.loads((tmp_path / "demo_bench.json").read_text())[-1]
    assert run["commit"] == "a" * 40 and run["commit"] != recording.provenance()["commit"]


def test_every_benchmark_that_measures_records_its_figures():
    """Each benchmark script with a main() writes its figures through recording (a run appended by
    `record`, or its own file shape with `provenance`: date, commit, machine). paper_shapes.py and
    paper_variants.py are gpu_paper_shapes.py's parts, with no main of their own."""
    exempt = {"recording.py"}
    silent = [
        p.name
        for p in sorted(BENCHMARKS.glob("*.py"))
        if p.name not in exempt
        and "def main" in p.read_text()
        and not re.search(r"from recording import [\w, ]*\b(record|provenance)\b", p.read_text())
    ]
    assert not silent, f"benchmarks that print figures but keep none: {silent}"


@pytest.mark.slow
def test_list_copies_writes_its_figures(tmp_path):
    env = {"OCG_BENCHMARK_RESULTS": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "list_copies.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = json.loads((tmp_path / "list_copies.json").read_text())
    assert (
        run["figures"]["outputs"] == 2496
        and run["figures"]["copies_list"] <= run["figures"]["in_order"]
    )
    assert f"{run['figures']['outputs']} outputs" in done.stdout


def test_a_docs_block_shows_the_latest_run_and_goes_stale(recording, tmp_path):
    """`--update-docs` fills each `<!-- benchmark:NAME -->` block from NAME.json's latest run
    (nested figures under dotted names; `key=value` picks the latest run that matches); a newer
    run makes the doc stale until it is rewritten, and the prose around a block is left as is."""
    recording.record(
        "demo_bench", {"speed": {"cpu": 3.0}, "rows": [{"differ": 1}]}, {"device": "cpu"}
    )
    recording.record(
        "demo_bench", {"speed": {"cpu": 4.0}, "rows": [{"differ": 2}]}, {"device": "cuda"}
    )
    (tmp_path / "own_shape.json").write_text(json.dumps({"padding_share": 0.06}))
    doc = tmp_path / "doc.md"
    doc.write_text(
        "Before.\n<!-- benchmark:demo_bench -->\nold\n<!-- /benchmark -->\nBetween.\n"
        "<!-- benchmark:demo_bench args.device=cpu -->\n<!-- /benchmark -->\n"
        "<!-- benchmark:own_shape -->\n<!-- /benchmark -->\nAfter.\n"
    )
    assert recording.stale_docs([doc], tmp_path) == [doc]
    assert recording.update_docs([doc], tmp_path) == [doc]
    text = doc.read_text()
    latest, cpu, own = re.findall(r"<!-- benchmark:.*? -->\n(.*?)<!-- /benchmark -->", text, re.S)
    assert "| `speed.cpu` | 4.0 |" in latest and "| `rows[0].differ` | 2 |" in latest
    assert "Latest of 2 runs" in latest and "| `speed.cpu` | 3.0 |" in cpu
    assert "| `padding_share` | 0.06 |" in own and "date not recorded" in own
    assert text.startswith("Before.\n") and "\nBetween.\n" in text and text.endswith("After.\n")
    assert recording.stale_docs([doc], tmp_path) == []
    recording.record("demo_bench", {"speed": {"cpu": 5.0}, "rows": []}, {"device": "cuda"})
    assert recording.stale_docs([doc], tmp_path) == [doc]


def test_the_docs_show_the_latest_runs():
    """Every block in README.md and docs/*.md is what `python benchmarks/recording.py
    --update-docs` writes from benchmarks/results/ now."""
    recording = benchmark("recording")
    results = BENCHMARKS / "results"
    stale = recording.stale_docs(folder=results)
    assert not stale, f"run `python benchmarks/recording.py --update-docs`: {stale}"
    named = {m[2] for p in recording.doc_files() for m in recording.BLOCK.finditer(p.read_text())}
    assert named <= {p.stem for p in results.glob("*.json")}, "a block names no results file"


def test_stacks_records_what_differs_per_variant(recording, tmp_path, monkeypatch):
    """stacks.py's figures (the two stacks' answers stubbed: no model, no second venv)."""
    stacks = benchmark("stacks")
    default = {"entry": {"a": "x", "b": "y"}, "batch1": {"a": "x", "b": "z"}}
    other = {"entry": {"a": "x", "b": "q"}, "batch1": {"a": "x", "b": "z"}}
    runs = iter([("5.23.0", default), ("4.57.6", other)])
    monkeypatch.setattr(stacks, "run_stack", lambda python, args, out: next(runs))
    monkeypatch.setattr(stacks, "ordered_coverage", lambda answers: len(answers) / 4)
    monkeypatch.setattr(sys, "argv", ["stacks.py", "--prompts", "2"])
    stacks.main()
    (run,) = json.loads((tmp_path / "stacks.json").read_text())
    assert run["args"]["prompts"] == 2 and run["figures"]["second_stack"] == "4.57.6"
    assert run["figures"]["entry"] == {
        "answers": 2,
        "differ": 1,
        "ordered_coverage_default": 0.5,
        "ordered_coverage_second": 0.5,
    }
    assert run["figures"]["batch1"]["differ"] == 0


@pytest.mark.parametrize(
    "content, what",
    [
        ('[{"figures": {"a": 1}}, {"figu', "not JSON (Unterminated string"),  # truncated
        ("[1, 2]", "run 0 is int; expected a mapping"),
        ('{"figures": [1, 2]}', "run 0 is dict; expected a mapping (with a mapping of figures)"),
        (b"\xff\xfe", "cannot read"),
    ],
)
def test_an_odd_results_file_is_one_line_naming_it(recording, tmp_path, capsys, content, what):
    path = tmp_path / "odd.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(recording.ResultsError, match=re.escape(f"{path}: {what}")):
        recording.runs_of(path)
    assert recording.main([]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"recording.py: error: {path}: ") and err.count("\n") == 1, err


def test_a_missing_results_file_never_blanks_the_docs_figures(recording, tmp_path):
    doc = tmp_path / "doc.md"
    text = "<!-- benchmark:gone -->\n| `a` | 1 |\n<!-- /benchmark -->\n"
    doc.write_text(text)
    with pytest.raises(recording.ResultsError, match=f"{tmp_path / 'gone.json'}: no such"):
        recording.update_docs([doc], tmp_path)
    assert doc.read_text() == text
    (tmp_path / "gone.json").write_text("[]")  # a file of no runs yet says so
    assert "_No run of `benchmarks/results/gone.json` yet._" in recording.figures_block(
        "gone", tmp_path
    )


def test_a_figure_cannot_end_its_block_or_break_the_table(recording, tmp_path):
    """A figure holding the block's end mark, a `|` or a newline stays inside its one cell."""
    hostile = {"note": "x <!-- /benchmark --> INJECTED", "cmd": "a | b", "lines": "one\ntwo"}
    recording.record("demo_bench", hostile)
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- benchmark:demo_bench -->\n<!-- /benchmark -->\nAfter.\n")
    recording.update_docs([doc], tmp_path)
    text = doc.read_text()
    assert text.count("<!-- /benchmark -->") == 1 and text.endswith("<!-- /benchmark -->\nAfter.\n")
    assert "| `note` | x &lt;!-- /benchmark --&gt; INJECTED |" in text
    assert "| `cmd` | a \\| b |" in text and "| `lines` | one two |" in text
    assert recording.stale_docs([doc], tmp_path) == []  # rendering again changes nothing
    assert "a \\| b" in recording.latest_table(tmp_path)
