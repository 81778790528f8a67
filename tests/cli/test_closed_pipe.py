"""Output is advisory for a command that does work: `ocg report run.yaml | head -3` and
`ocg score | head` finish their work and write everything, exit 0; outside a terminal the
progress is one line per step, never a `\\r` bar (docs/user-guide.md, "Output")."""

import json
import os
import subprocess
import sys

from ocg.core.paths import PROJECT_ROOT
from ocg.core.progress import bars_shown
from tests.helpers import two_models_rows, write_generations
from tests.jobs.fake_reports import ONE, TWO, report, write_run

ENV = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))

FAKE_REPORT = """
import sys
from ocg.cli import main
from ocg.jobs import pipeline
from tests.jobs.test_report_folders import fake_step
pipeline.run_step = fake_step
sys.exit(main(["report", {run!r}]))
"""


def test_score_piped_to_head_writes_every_set(tmp_path):
    rows = two_models_rows(["A boy rides a bike on the street.", "A boy."])
    for model in ("a", "b"):
        write_generations(tmp_path / "gen", model, rows(model, "ordered"))
    out = tmp_path / "s"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ocg.cli", "score", "--generations", str(tmp_path / "gen")]
        + ["--out", str(out), "--metrics", "distinct"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0 and err == "", err
    for model in ("a", "b"):  # both sets, whole
        sig = json.loads((out / model / "signature.json").read_text())
        assert sig["completeness"]["run_status"], sig


def test_report_piped_to_head_finishes(outputs, tmp_path, monkeypatch):
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, ONE) == 0  # a finished report the rerun replaces
    proc = subprocess.Popen(
        [sys.executable, "-c", FAKE_REPORT.format(run=str(write_run(tmp_path, TWO)))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(ENV, OCG_OUTPUTS=str(outputs)),
    )
    first = proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read().decode()
    assert first.startswith(b"[1/"), first
    assert proc.wait(timeout=300) == 0 and err == "", err
    state = json.loads((folder / "report.json").read_text())
    assert state["state"] == "done" and "07_reasoning_models" in state["notebooks"], state
    assert (folder / "tables" / "table7.csv").exists()
    assert sorted(p.name for p in folder.parent.iterdir()) == ["demo"]  # no .failed~


def test_a_report_logged_to_a_file_has_one_line_per_step_and_no_bars(outputs, tmp_path):
    log = tmp_path / "log"
    with log.open("wb") as fh:
        code = subprocess.call(
            [sys.executable, "-c", FAKE_REPORT.format(run=str(write_run(tmp_path, TWO)))],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=dict(ENV, OCG_OUTPUTS=str(outputs)),
            timeout=300,
        )
    text = log.read_bytes()
    assert code == 0 and b"\r" not in text, text
    steps = [line for line in text.decode().splitlines() if line.startswith("[")]
    assert len(steps) == len(set(steps)) and steps[-1].startswith(f"[{len(steps)}/{len(steps)}]")


def test_a_notebook_bar_is_drawn_only_on_a_terminal(tmp_path, monkeypatch):
    """papermill's "Executing" bar is the `\\r` bar of report and sweep logs: off unless stderr
    is a terminal (and no kernel is started here: execute_notebook is stood in for)."""
    import papermill

    from ocg.jobs.notebook_runner import run_notebook

    seen = []

    def execute(source, executed, **kw):
        seen.append(kw["progress_bar"])
        raise RuntimeError("stop here")

    monkeypatch.setattr(papermill, "execute_notebook", execute)
    for tty in (False, True):
        monkeypatch.setattr(sys.stderr, "isatty", lambda tty=tty: tty, raising=False)
        try:
            run_notebook("00_build_data", {"subset_k": 1}, out_dir=tmp_path, progress=True)
        except Exception:
            pass
    assert seen == [False, True]
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert not bars_shown(sys.stderr)
