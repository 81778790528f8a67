"""Which Python a Slurm job runs (README, "A first submission"): the `python` the site's setup
lines leave on PATH when it can import ocg, else the submitter's; the dry run says the rule and
each task's log names the interpreter."""

import os
import subprocess
import sys

import pytest

from tests.sweep.sweep_files import ocg, site_sweep


def python_of_the_job(tmp_path, setup: list[str] | None) -> tuple[str, str]:
    """Run array.sbatch up to where the task starts; the PYTHON it chose, and the dry run's output."""
    result = ocg(
        "sweep",
        site_sweep(tmp_path, **({"setup": setup} if setup is not None else {"setup": []})),
        "--executor",
        "slurm",
        "--dry-run",
    )
    assert result.returncode == 0, result.stderr
    script = (tmp_path / "out" / "slurm" / "array.sbatch").read_text()
    head = script.split('\necho "[$(date', 1)[0]
    probe = subprocess.run(
        ["bash", "-c", head + '\necho "PYTHON=$PYTHON"'],
        capture_output=True,
        text=True,
        env={**os.environ, "SLURM_ARRAY_TASK_ID": "0"},
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    return probe.stdout.strip().splitlines()[-1].removeprefix("PYTHON="), result.stdout


def fake_python(folder, body: str) -> str:
    folder.mkdir(parents=True)
    (folder / "python").write_text(f"#!/bin/sh\n{body}\n")
    (folder / "python").chmod(0o755)
    return str(folder)


def test_the_setup_lines_python_runs_when_it_can_import_ocg(tmp_path):
    env = fake_python(
        tmp_path / "env" / "bin", f'exec {sys.executable} "$@"'
    )  # an activated environment
    chosen, out = python_of_the_job(tmp_path, [f'export PATH="{env}:$PATH"  # source .../activate'])
    assert chosen == f"{env}/python"
    assert "python in the jobs: `python` as slurm.setup leaves it on PATH" in out
    script = (tmp_path / "out" / "slurm" / "array.sbatch").read_text()
    assert '"$PYTHON" -m ocg.cli sweep' in script and "python $PYTHON" in script
    assert (
        '"$PYTHON" -m ocg.cli sweep' in (tmp_path / "out" / "slurm" / "analysis.sbatch").read_text()
    )


@pytest.mark.parametrize("setup", [["module() { :; }; module load cuda/12.1"], []])
@pytest.mark.parametrize("system", [False, True])
def test_else_the_submitters_python_runs_and_the_dry_run_says_so(tmp_path, setup, system):
    """A python without ocg installed: one that fails, or the system's, which imports the package
    from the project folder (the job's working directory) and lacks its dependencies."""
    if system and not os.path.exists("/usr/bin/python3"):
        pytest.skip("no system python here")
    bare = fake_python(
        tmp_path / "sys" / "bin", 'exec /usr/bin/python3 "$@"' if system else "exit 1"
    )
    chosen, out = python_of_the_job(
        tmp_path, [f'export PATH="{bare}:$PATH"', *setup] if setup else []
    )
    assert chosen == sys.executable
    assert f"python in the jobs: {sys.executable}" in out or "else " + sys.executable in out
