"""A sweep folder whose path holds spaces, quotes and `$(...)` runs on a real Slurm as any other:
every value in the job scripts is quoted, and nothing in the path is executed."""

import json
import subprocess

import pytest
import yaml

from ocg.sweep import load_sweep, status_table
from tests.sweep.sweep_files import ocg


def hostile_sweep(tmp_path, marker, analysis=("03_main_results",)):
    folder = tmp_path / f"sw dir 'q' \"dq\" $(touch {marker}) `touch {marker}` ;x"
    folder.mkdir(parents=True)
    (folder / "models.yaml").write_text(
        yaml.safe_dump(
            {
                "models": {
                    "synth-a": {"backend": "replay", "id": "x/a"},
                    "synth-b": {"backend": "replay", "id": "x/b"},
                }
            }
        )
    )
    sweep = {
        "name": "q",
        "models": ["synth-a", "synth-b"],
        "models_file": "models.yaml",
        "conditions": ["ordered"],
        "subset_k": 1,
        "template_ids": [0],
        "metrics": ["coverage", "pbleu", "diverse"],
        "analysis": list(analysis),
        "outputs": str(folder / "out 50%A"),
        "resources": {"default": {"gpus": 0, "cpus": 1, "mem": "300M", "time": "00:20:00"}},
        "slurm": {"analysis": {"gpus": 0, "cpus": 1, "mem": "300M", "time": "00:20:00"}},
    }
    (folder / "s.yaml").write_text(yaml.safe_dump(sweep))
    return folder


def test_scripts_quote_every_value(tmp_path):
    import shlex

    folder = hostile_sweep(tmp_path, tmp_path / "pwned")
    assert ocg("sweep", str(folder / "s.yaml"), "--executor", "slurm", "--dry-run").returncode == 0
    out = folder / "out 50%A"
    script = (out / "slurm" / "array.sbatch").read_text()
    assert f'sweep {shlex.quote(str(folder / "s.yaml"))} --task "$MODEL"' in script
    assert (
        f'LOG={shlex.quote(str(out / "logs"))}/"$MODEL.log"\n' in script
        and '>> "$LOG" 2>&1 &' in script
    )
    assert f'STOP={shlex.quote(str(out / "status" / "q"))}/"$MODEL"/stop-requested\n' in script
    assert subprocess.run(["bash", "-n", str(out / "slurm" / "array.sbatch")]).returncode == 0
    assert "#SBATCH --output" not in script  # sbatch would split it at the spaces
    analysis = (out / "slurm" / "analysis.sbatch").read_text()
    assert f"sweep {shlex.quote(str(folder / 's.yaml'))} --analysis" in analysis


@pytest.mark.slow
def test_a_hostile_sweep_path_runs_on_slurm_and_executes_nothing(tmp_path, slurm):
    marker = tmp_path / "pwned"
    folder = hostile_sweep(tmp_path, marker)
    result = ocg("sweep", str(folder / "s.yaml"), "--executor", "slurm", "--wait")
    out = folder / "out 50%A"
    assert result.returncode == 0, result.stdout + result.stderr[-3000:] + slurm.logs()
    assert all(state == "done" for _, state, _ in status_table(load_sweep(folder / "s.yaml")))
    assert json.loads((out / "status" / "q" / "analysis.json").read_text())["state"] == "done"
    job = json.loads((out / "slurm" / "manifest.json").read_text())["submissions"][0]["job_id"]
    assert (out / "logs" / f"slurm-{job}_0.out").exists() and (
        out / "logs" / "analysis.log"
    ).exists()
    assert (out / "scores" / "synth-b" / "summary.parquet").exists()
    assert not marker.exists() and not list(tmp_path.rglob("pwned"))
