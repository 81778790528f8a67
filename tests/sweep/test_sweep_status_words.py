"""What `ocg sweep --status` calls a model and the analyses, from Slurm's queue: a queued task is
pending (not running), a cancelled one resumes (partial, or missing if it never began), an
analysis job in the queue is said; a real submission prints what its dry run printed."""

import os

from ocg.core.files import write_json
from ocg.core.layout import ModelGenerations
from ocg.sweep import load_sweep, status_table
from ocg.sweep.slurm import submit_slurm
from ocg.sweep.state import print_status
from tests.sweep.sweep_files import site_sweep


def fake_slurm(tmp_path, monkeypatch, tasks: str, analysis: str) -> None:
    """squeue (and sbatch, answering job 555) as scripts on PATH."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "squeue").write_text(f"""#!/bin/sh
case "$*" in
  *"%K|%T"*) printf '{tasks}' ;;
  *) printf '{analysis}' ;;
esac
""")
    (bin_ / "sbatch").write_text("#!/bin/sh\necho 555\n")
    (bin_ / "sacct").write_text("#!/bin/sh\n")
    for f in bin_.iterdir():
        f.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")


def test_pending_cancelled_and_a_running_analysis_are_named(tmp_path, monkeypatch, capsys):
    sweep = load_sweep(site_sweep(tmp_path))
    folder = sweep.folder
    write_json(
        folder.manifest,
        {
            "sweep": "site",
            "file": str(sweep.path),
            "analysis_jobs": [{"job_id": "101"}],
            "submissions": [{"job_id": "100", "tasks": {"0": "m-a", "1": "api", "2": "m-b"}}],
        },
    )
    begun = ModelGenerations(folder.outputs.generations / "api").store("ordered")
    begun.parent.mkdir(parents=True)
    begun.write_text("")
    fake_slurm(tmp_path, monkeypatch, "0|PENDING\\n1|CANCELLED\\n2|CANCELLED\\n", "RUNNING\\n")
    rows = {m: (s, d) for m, s, d in status_table(sweep)}
    assert rows["m-a"] == ("pending", "slurm PENDING: queued, not started")
    assert (
        rows["api"][0] == "partial"
        and "slurm CANCELLED" in rows["api"][1]
        and "resumes" in rows["api"][1]
    )
    assert rows["m-b"][0] == "missing" and "CANCELLED before it began" in rows["m-b"][1]
    print_status(sweep)
    out = capsys.readouterr().out
    assert "running: 0  pending: 1  partial: 1  failed: 0  missing: 1" in out
    assert "analysis: running (slurm job 101 RUNNING)" in out and "not run yet" not in out


def test_a_real_submission_prints_what_its_dry_run_printed(tmp_path, monkeypatch, capsys):
    sweep = load_sweep(site_sweep(tmp_path))
    fake_slurm(tmp_path, monkeypatch, "", "")
    submit_slurm(sweep, dry_run=True)
    dry = capsys.readouterr().out
    submit_slurm(sweep)
    real = capsys.readouterr().out
    assert "submitted 3 model(s) in 2 array(s), throttle 3 over all of them:" in real
    sbatch = [line.strip() for line in real.splitlines() if line.strip().startswith("sbatch ")]
    assert sbatch == [
        line.strip().replace("JOB1:JOB2", "555:555")
        for line in dry.splitlines()
        if line.strip().startswith("sbatch ")
    ]
    assert "  555 (2 model(s): m-a, m-b)" in real and "  555 (the analyses)" in real
    assert [
        line for line in real.splitlines() if line.startswith(("scripts:", "folder:", "python in"))
    ] == [
        line for line in dry.splitlines() if line.startswith(("scripts:", "folder:", "python in"))
    ]
