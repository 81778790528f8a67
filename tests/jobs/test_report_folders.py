"""A report folder holds exactly what its last run wrote; compare-reports refuses what is not a
finished report; OCG_OUTPUTS is settled to one absolute folder where a command starts.

The notebooks of `ocg report` are stood in for by a step that writes what they write (executed
copies, tables named by the run's models), so these tests run in seconds; the plan, the
staging folder, the landing page and compare-reports are the real ones.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from ocg.cli import main
from ocg.core.lock import LockHeld
from ocg.core.paths import NOTEBOOKS_DIR, PROJECT_ROOT
from ocg.jobs import pipeline
from ocg.jobs.staging import staging_dir
from tests.jobs.fake_reports import ONE, TWO, fake_step, report, write_run  # noqa: F401


def test_a_reused_report_name_keeps_nothing_of_the_previous_run(
    outputs, tmp_path, monkeypatch, capsys
):
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, TWO) == 0
    assert (folder / "tables" / "table7.csv").exists() and "table7.csv" in (
        folder / "index.html"
    ).read_text()
    assert (
        json.loads((folder / "results.json").read_text())["report"] == "demo"
    )  # built with the rest
    assert report(monkeypatch, tmp_path, ONE) == 0
    assert not (folder / "tables" / "table7.csv").exists()
    assert "table7" not in (folder / "index.html").read_text()
    assert json.loads((folder / "report.json").read_text())["state"] == "done"
    assert not staging_dir(folder).exists() and sorted(p.name for p in folder.parent.iterdir()) == [
        "demo"
    ]
    # the same run into a fresh outputs root: compare-reports finds the two folders identical
    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "fresh"))
    assert report(monkeypatch, tmp_path, ONE) == 0
    capsys.readouterr()
    assert main(["compare-reports", str(folder), str(tmp_path / "fresh" / "reports" / "demo")]) == 0
    assert capsys.readouterr().out.startswith("identical")


def test_a_failed_notebook_copy_of_an_earlier_run_does_not_stay(
    outputs, tmp_path, monkeypatch, capsys
):
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, TWO, fail="07_reasoning_models") == 1
    assert (folder / "07_reasoning_models.ipynb").exists()  # the failed copy, error shown
    assert report(monkeypatch, tmp_path, ONE, fail="03_main_results") == 1
    assert (
        not (folder / "07_reasoning_models.ipynb").exists()
        and not (folder / "07_reasoning_models.html").exists()
    )
    assert not (folder / "tables" / "table7.csv").exists()
    state = json.loads((folder / "report.json").read_text())
    assert state["state"] == "failed" and "03_main_results" in state["reason"]
    assert "failed" in (folder / "index.html").read_text()  # not an earlier run's landing page
    capsys.readouterr()
    assert main(["compare-reports", str(folder), str(folder)]) == 2
    assert "an unfinished report (failed: notebook 03_main_results" in capsys.readouterr().err


def test_results_json_comes_and_goes_with_the_report_it_describes(outputs, tmp_path, monkeypatch):
    folder = outputs / "reports" / "demo"
    seen = {}
    assert (
        report(
            monkeypatch,
            tmp_path,
            ONE,
            during=(
                "03_main_results",
                lambda staging: seen.update(building=(staging / "results.json").exists()),
            ),
        )
        == 0
    )
    assert json.loads((folder / "results.json").read_text())["run"]["models"] == ONE["models"]
    assert seen["building"] is False  # written after the notebooks, in the staging folder
    before = (folder / "results.json").read_bytes()
    assert report(monkeypatch, tmp_path, ONE, fail="03_main_results") == 1
    assert (folder / "results.json").read_bytes() == before  # the finished report is kept
    failed = folder.with_name("demo.failed~")
    assert json.loads((failed / "report.json").read_text())["state"] == "failed"
    assert not (failed / "results.json").exists()  # a failed build holds no numbers of another


def test_a_report_being_rebuilt_is_whole_or_visibly_unfinished(
    outputs, tmp_path, monkeypatch, capsys
):
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, TWO) == 0
    first_index = (folder / "index.html").read_text()
    seen = {}

    def mid_run(staging):
        seen["index"] = (folder / "index.html").read_text()
        seen["building"] = json.loads((staging / "report.json").read_text())
        seen["page"] = (staging / "index.html").read_text()
        seen["compare"] = main(["compare-reports", str(staging), str(folder)])
        with pytest.raises(LockHeld, match=rf"PID {os.getpid()} on .* is building this report"):
            pipeline.run_report(write_run(tmp_path, ONE))  # a second run of the same report

    assert report(monkeypatch, tmp_path, ONE, during=("03_main_results", mid_run)) == 0
    assert seen["index"] == first_index  # the previous report, whole, until this one ends
    assert seen["building"]["state"] == "building" and seen["building"]["pid"] == os.getpid()
    assert "being built" in seen["page"] and seen["compare"] == 2
    assert "an unfinished report (building" in capsys.readouterr().err


KILLED_RUN = """
from tests.jobs.test_report_folders import report_until_killed
report_until_killed({run!r}, {ready!r})
"""


def report_until_killed(run_file: str, ready: str, run=pipeline.run_report) -> None:
    """`ocg report` whose notebook 07 hangs (for the kill and signal tests, in a child process)."""

    def hang(staging):
        Path(ready).write_text("in notebook 07")
        time.sleep(120)

    pipeline.run_step = lambda *a, **k: fake_step(*a, **k, during=("07_reasoning_models", hang))
    run(run_file)


def test_kill_9_during_a_notebook_leaves_the_previous_report_and_a_visibly_unfinished_one(
    outputs, tmp_path, monkeypatch, capsys
):
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, ONE) == 0
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    ready = tmp_path / "ready"
    code = KILLED_RUN.format(run=str(write_run(tmp_path, TWO)), ready=str(ready))
    child = subprocess.Popen(
        [sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    )
    try:
        deadline = time.time() + 60
        while not ready.exists() and child.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert ready.exists(), "the child run never reached notebook 07"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before  # nothing of the killed run inside the report
    staging = staging_dir(folder)
    assert json.loads((staging / "report.json").read_text())["state"] == "building"
    assert (
        staging / "tables" / "table7.csv"
    ).exists()  # what the killed run wrote, beside the report
    assert main(["compare-reports", str(staging), str(folder)]) == 2
    assert f"ocg: error: {staging}: an unfinished report" in capsys.readouterr().err
    assert report(monkeypatch, tmp_path, ONE) == 0  # the next run clears what the killed one left
    assert not staging.exists() and not (folder / "tables" / "table7.csv").exists()


# Ctrl-C as on a terminal: a shell starts a background job (`cmd &`, nohup, a CI script run so)
# with SIGINT ignored, which its children inherit; the child restores Python's own handler.
STOPPED_RUN = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from tests.jobs.test_report_folders import report_until_killed
from ocg.cli import main
report_until_killed({run!r}, {ready!r}, run=lambda run: sys.exit(main(["report", run])))
"""


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "signum, status, why",
    [
        (signal.SIGINT, 130, "interrupted (Ctrl-C)"),
        (signal.SIGTERM, 143, "stopped by signal SIGTERM"),
    ],
)
def test_a_stopped_rebuild_keeps_the_report_and_the_build_beside_it(
    outputs, tmp_path, monkeypatch, capsys, signum, status, why
):
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, ONE) == 0
    before = snapshot(folder)
    ready = tmp_path / "ready"
    code = STOPPED_RUN.format(run=str(write_run(tmp_path, TWO)), ready=str(ready))
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while not ready.exists() and child.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert ready.exists(), "the child run never reached notebook 07"
        child.send_signal(signum)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    lines = err.strip().splitlines()
    assert child.returncode == status, err
    assert lines[-1].startswith(f"ocg: error: {why} during `ocg report`"), err
    failed = folder.with_name("demo.failed~")
    assert lines[-2] == (
        f"unfinished report: {failed / 'index.html'}; the previous report {folder}/ is kept"
    ), err
    assert snapshot(folder) == before  # the finished report, byte for byte
    state = json.loads((failed / "report.json").read_text())
    assert state["state"] == "failed" and why in state["reason"], state
    assert (failed / "tables" / "table7.csv").exists() and not staging_dir(folder).exists()
    capsys.readouterr()
    assert main(["compare-reports", str(failed), str(folder)]) == 2
    assert "an unfinished report (failed" in capsys.readouterr().err
    assert report(monkeypatch, tmp_path, ONE) == 0  # a finished run removes the stopped build
    assert sorted(p.name for p in folder.parent.iterdir()) == ["demo"]


def test_a_broken_pipe_that_stops_a_step_keeps_the_report(outputs, tmp_path, monkeypatch, capsys):
    """A step's own write to a closed pipe (a notebook's, not ocg's progress: that one is dropped)."""
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, ONE) == 0
    before = snapshot(folder)

    def pipe_closed(staging):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(
        pipeline,
        "run_step",
        lambda *a, **k: fake_step(*a, **k, during=("03_main_results", pipe_closed)),
    )
    capsys.readouterr()
    main(["report", str(write_run(tmp_path, TWO))])
    assert snapshot(folder) == before
    failed = folder.with_name("demo.failed~")
    state = json.loads((failed / "report.json").read_text())
    assert state["state"] == "failed" and "broken pipe" in state["reason"], state
    assert f"the previous report {folder}/ is kept" in capsys.readouterr().err


def test_a_failed_rerun_over_a_failed_report_takes_its_place(outputs, tmp_path, monkeypatch):
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, ONE, fail="03_main_results") == 1
    assert report(monkeypatch, tmp_path, TWO, fail="07_reasoning_models") == 1
    state = json.loads((folder / "report.json").read_text())
    assert state["state"] == "failed" and "07_reasoning_models" in state["reason"]
    assert sorted(p.name for p in folder.parent.iterdir()) == ["demo"]


@pytest.mark.parametrize(
    "make, args, message",
    [
        (None, ["/nonexistent/a", "/nonexistent/b"], "/nonexistent/a: no such report folder"),
        ("empty", ["{a}", "{a}"], "{a}: no tables/*.csv here"),
        (
            "tables",
            ["{a}", "{a}", "--tolerance", "inf"],
            "--tolerance: got inf; expected a finite number >= 0",
        ),
        ("tables", ["{a}", "{a}", "--tolerance", "nan"], "--tolerance: got nan"),
        ("tables", ["{a}", "{a}", "--tolerance", "-1"], "--tolerance: got -1.0"),
    ],
)
def test_compare_reports_refuses_what_is_not_a_report(tmp_path, capsys, make, args, message):
    a = tmp_path / "a"
    if make:
        a.mkdir()
    if make == "tables":
        (a / "tables").mkdir()
        (a / "tables" / "table1.csv").write_text("x\n1\n")
    code = main(["compare-reports", *(arg.format(a=a) for arg in args)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"ocg: error: {message.format(a=a)}"), err
    assert "Traceback" not in err


def ocg_in(cwd: Path, *args, **env):
    return subprocess.run(
        [sys.executable, "-m", "ocg.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(PROJECT_ROOT), **env),
        timeout=300,
    )


@pytest.mark.slow
def test_a_relative_ocg_outputs_means_the_folder_where_the_command_started(tmp_path):
    name = f"relout-{uuid.uuid4().hex[:8]}"
    try:
        result = ocg_in(
            tmp_path,
            "run-notebook",
            "00_build_data",
            "-p",
            "subset_k=1",
            "-p",
            "conditions=[ordered]",
            OCG_OUTPUTS=name,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        assert (
            tmp_path / name / "data" / "n4-k1" / "manifest.json"
        ).exists()  # written by the kernel
        assert not (NOTEBOOKS_DIR / name).exists()
    finally:
        if (NOTEBOOKS_DIR / name).exists():  # what the bug writes; never leave it in the repository
            import shutil

            shutil.rmtree(NOTEBOOKS_DIR / name)


def test_an_empty_ocg_outputs_is_refused(tmp_path):
    result = ocg_in(tmp_path, "build-data", "--subset-k", "1", OCG_OUTPUTS="")
    assert result.returncode == 2 and result.stderr.startswith(
        "ocg: error: OCG_OUTPUTS: set but empty"
    )
    assert list(tmp_path.iterdir()) == []


def test_slurm_scripts_carry_the_absolute_ocg_outputs(tmp_path):
    sweep = {
        "name": "t",
        "models": ["smollm2-135m-instruct"],
        "conditions": ["ordered"],
        "outputs": str(tmp_path / "out"),
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(sweep))
    result = ocg_in(
        tmp_path, "sweep", "s.yaml", "--executor", "slurm", "--dry-run", OCG_OUTPUTS="relout"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for script in ("array.sbatch", "analysis.sbatch"):
        text = (tmp_path / "out" / "slurm" / script).read_text()
        assert f"export OCG_OUTPUTS={tmp_path / 'relout'}\n" in text, text


def test_a_run_killed_between_the_two_renames_gets_its_previous_report_back(
    outputs, tmp_path, monkeypatch
):
    folder = outputs / "reports" / "demo"
    assert report(monkeypatch, tmp_path, ONE) == 0
    folder.rename(folder.with_name("demo.old~"))  # where finish() had put it when the kill came
    (folder.parent / "demo.building~").mkdir()
    seen = {}
    assert (
        report(
            monkeypatch,
            tmp_path,
            TWO,
            during=(
                "00_build_data",
                lambda _: seen.update(back=(folder / "tables" / "table3.csv").read_text()),
            ),
        )
        == 0
    )
    assert seen["back"] == "model,value\nsmollm2-135m-instruct,1.0\n"
    assert sorted(p.name for p in folder.parent.iterdir()) == ["demo"]


def test_results_json_names_the_run_file_by_its_absolute_path(outputs, tmp_path, monkeypatch):
    """`ocg report run.yaml` typed in another folder: results.json and the page name the file
    wherever they are read."""
    write_run(tmp_path, ONE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(pipeline, "run_step", fake_step)
    assert pipeline.run_report(Path("run.yaml")) == 0
    folder = outputs / "reports" / "demo"
    assert json.loads((folder / "results.json").read_text())["run"]["file"] == str(
        tmp_path / "run.yaml"
    )
    assert f"run file <code>{tmp_path / 'run.yaml'}</code>" in (folder / "index.html").read_text()


def test_a_full_disk_while_the_case_browser_is_written_leaves_the_report_failed(
    outputs, tmp_path, monkeypatch, capsys, scored_run
):
    import errno
    import shutil

    from tests.helpers import two_models_rows

    model = ONE["models"][0]
    root = scored_run(
        "full-disk", two_models_rows(["A boy rides a bike."]), ["distinct"], models=(model,)
    )
    shutil.copytree(root / "gen", outputs / "generations")
    shutil.copytree(root / "scores", outputs / "scores")

    def full(report_dir, *args, **kwargs):
        raise OSError(
            errno.ENOSPC, "No space left on device", str(report_dir / "cases" / "chunk-0.js")
        )

    monkeypatch.setattr("ocg.site.landing.write_case_browser_from", full)
    monkeypatch.setattr(pipeline, "run_step", fake_step)
    assert (
        main(["report", str(write_run(tmp_path, dict(ONE, scoring={}, metrics=["distinct"])))]) == 1
    )
    err = capsys.readouterr().err
    assert err.count("ocg: error: ") == 1 and "chunk-0.js: no space left on the device" in err, err
    state = json.loads((outputs / "reports" / "demo" / "report.json").read_text())
    assert state["state"] == "failed" and "No space left on device" in state["reason"], state
    assert "failed" in (outputs / "reports" / "demo" / "index.html").read_text()


def test_a_status_page_shows_a_hostile_name_as_text(tmp_path):
    """The page of a report not (yet) complete comes from a template with autoescape: a run or
    notebook name holding HTML is shown as text, never run."""
    from ocg.jobs.staging import write_status_page

    hostile = "<script>alert('x')</script>"
    page = write_status_page(
        tmp_path, f"ocg report: {hostile} (failed)", f"{hostile} & more", [(hostile, "a'.html")]
    ).read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<h2>Notebooks</h2>" in page and "&amp; more" in page
    assert page.startswith("<!doctype html>") and page.count("<li>") == 1
