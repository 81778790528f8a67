"""A sweep as a real HPC site submits it: dry runs that show every sbatch line, the throttle over
the whole sweep, site setup and environment, per-group partitions, OCG_OUTPUTS and relative
`outputs:`, what --status says of a model in flight, and texts that name the plan's notebooks."""

import json
import os
import random
import subprocess
from pathlib import Path

import pytest
import yaml

from ocg.core.lock import exclusive
from ocg.core.paths import PROJECT_ROOT
from ocg.sweep import load_sweep, status_table
from tests.config.bad_params import BAD_SLURM
from tests.sweep.sweep_files import SETUP, ocg, replay_models, site_sweep


def test_a_dry_run_prints_every_sbatch_line_and_writes_the_manifest(tmp_path):
    path = site_sweep(tmp_path)
    result = ocg("sweep", path, "--executor", "slurm", "--dry-run")
    assert result.returncode == 0, result.stderr
    out, slurm = result.stdout, tmp_path / "out" / "slurm"
    assert "dry run, nothing submitted; would submit 3 model(s) in 2 array(s), throttle 3" in out
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("sbatch ")]
    assert len(lines) == 3, out
    gpu, api, analysis = lines
    assert (
        "--array=0,2%2" in gpu
        and "--gres=gpu:1" in gpu
        and "--mem=300M" in gpu
        and "--time=00:20:00" in gpu
    )
    assert "--cpus-per-task=1" in gpu and "--partition=gpu" in gpu and "--account=proj1" in gpu
    assert "--signal=B:USR1@600" in gpu and "--qos=normal" in gpu and "--comment" not in gpu
    assert (
        "--array=1%1" in api
        and "--gres" not in api
        and "--partition=cpu" in api
        and "--mem=200M" in api
    )
    assert api.index("--qos=normal") < api.index(
        "--comment=api-group"
    )  # the group's args come last
    assert "--dependency=afterany:JOB1:JOB2" in analysis and "--partition=cpu" in analysis
    assert "--signal" not in analysis
    assert (
        f"folder: {tmp_path / 'out'}" in out
        and f"manifest: {slurm / 'manifest.dry-run.json'}" in out
    )
    manifest = json.loads((slurm / "manifest.dry-run.json").read_text())
    assert [s["tasks"] for s in manifest["submissions"]] == [{"0": "m-a", "2": "m-b"}, {"1": "api"}]
    assert not (slurm / "manifest.json").exists()  # the record of real submissions stays apart
    for script in ("array.sbatch", "analysis.sbatch"):
        text = (slurm / script).read_text()
        assert subprocess.run(["bash", "-n", str(slurm / script)]).returncode == 0, script
        assert "\n".join(SETUP) in text  # trusted, as written
        assert (
            "export HF_HOME='/shared/hf cache/it'\"'\"'s'" in text
            and "export OCG_SITE_NOTE='$(touch pwned)'" in text
        )
    assert "the analyses (03) once" in (slurm / "analysis.sbatch").read_text()


def test_the_throttle_holds_over_all_arrays():
    from ocg.sweep.slurm import split_throttle, time_seconds

    assert [time_seconds(t) for t in ("30", "30:15", "12:00:00", "1-12", "2-00:00:05")] == [
        1800,
        1815,
        43200,
        129600,
        172805,
    ]
    assert split_throttle([2, 1], 3) == [(2, None), (1, None)]
    assert split_throttle([1, 1, 1], 2) == [
        (1, None),
        (1, None),
        (1, 0),
    ]  # more arrays than slots: a chain
    rng = random.Random(0)
    for _ in range(200):
        sizes, limit = [rng.randint(1, 12) for _ in range(rng.randint(1, 6))], rng.randint(1, 10)
        split = split_throttle(sizes, limit)
        running_at_once = sum(share for share, after in split if after is None)
        assert running_at_once <= limit and all(
            1 <= s <= max(n, 1) for (s, _), n in zip(split, sizes)
        )


@pytest.mark.parametrize(
    "setup, what", [(["if true; then"], "not valid bash"), ([3], "list of str")]
)
def test_bad_setup_lines_are_refused_naming_the_field(tmp_path, setup, what):
    result = ocg("sweep", site_sweep(tmp_path, setup=setup), "--executor", "slurm", "--dry-run")
    assert result.returncode == 2 and "slurm.setup" in result.stderr and what in result.stderr, (
        result.stderr
    )
    bad_env = ocg(
        "sweep", site_sweep(tmp_path, env={"A B": "x"}), "--dry-run", "--executor", "slurm"
    )
    assert bad_env.returncode == 2 and "slurm.env.A B: expected a variable name" in bad_env.stderr


def test_relative_outputs_lie_under_ocg_outputs_when_it_is_set(tmp_path, monkeypatch):
    from ocg.jobs.pipeline import load_run

    monkeypatch.setenv("OCG_OUTPUTS", str(tmp_path / "scratch"))
    assert load_sweep(PROJECT_ROOT / "params/sweeps/demo.yaml").file.outputs == str(
        tmp_path / "scratch/outputs/sweeps/demo"
    )
    assert load_run(PROJECT_ROOT / "params/runs/five-concepts.yaml").file.outputs == str(
        tmp_path / "scratch/outputs/five-concepts"
    )
    monkeypatch.delenv("OCG_OUTPUTS")
    assert load_sweep(PROJECT_ROOT / "params/sweeps/demo.yaml").file.outputs == str(
        PROJECT_ROOT / "outputs/sweeps/demo"
    )


def plain_sweep(tmp_path, name, models, analysis=("03_main_results",)) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": name,
                "models": models,
                "models_file": replay_models(tmp_path, models),
                "conditions": ["ordered"],
                "subset_k": 1,
                "template_ids": [0],
                "metrics": ["coverage"],
                "analysis": list(analysis),
                "outputs": str(tmp_path / "out"),
            }
        )
    )
    return path


def test_status_says_running_or_partial_for_a_model_in_flight(tmp_path):
    path = plain_sweep(tmp_path, "site", ["m-a", "api", "m-b"])
    sweep, out = load_sweep(path), tmp_path / "out"
    with exclusive(out / "status" / "site" / "m-a", doing="is running this model's task"):
        states = {m: (s, d) for m, s, d in status_table(sweep, with_slurm=False)}
    assert states["m-a"][0] == "running" and f"PID {os.getpid()}" in states["m-a"][1]
    (out / "status" / "site" / "m-b").mkdir(parents=True)
    (out / "status" / "site" / "m-b" / "01_generate.done").write_text("{}")
    states = {m: (s, d) for m, s, d in status_table(sweep, with_slurm=False)}
    assert states["m-b"] == ("partial", "01_generate done, not finished (resumes when run)")
    assert states["m-a"][0] == "missing" and states["api"][0] == "missing"
    for model in ("m-a", "m-b"):  # both finish after a report over m-a alone
        for nb in ("01_generate", "02_score"):
            (out / "status" / "site" / model).mkdir(parents=True, exist_ok=True)
            (out / "status" / "site" / model / f"{nb}.done").write_text("{}")
    (out / "status" / "site" / "analysis.json").write_text(
        json.dumps({"state": "done", "report": "r", "models": ["m-a"]})
    )
    status = ocg("sweep", str(path), "--status").stdout
    assert "analysis: done over 1 model(s): r (out of date: 2 model(s) done now" in status, status


@pytest.mark.slow
def test_a_model_busy_elsewhere_fails_the_run_and_its_report_follows_when_it_ends(tmp_path):
    """As after a killed driver whose model task carries on: the rerun does not exit 0 while
    the model is busy, and once it is done the next sweep re-runs the analyses over it too."""
    path, out = plain_sweep(tmp_path, "k", ["m-a", "m-b"]), tmp_path / "out"
    with exclusive(
        out / "status" / "k" / "m-b", doing="is running this model's task"
    ):  # the orphaned task
        busy = ocg("sweep", str(path))
    assert busy.returncode == 1 and "busy, still running elsewhere: ['m-b']" in busy.stderr, (
        busy.stdout + busy.stderr
    )
    assert json.loads((out / "status" / "k" / "analysis.json").read_text())["models"] == ["m-a"]
    assert ocg("sweep", str(path), "--task", "m-b").returncode == 0  # the orphan finishes
    rerun = ocg("sweep", str(path))
    assert rerun.returncode == 0 and "0 model(s) to run" in rerun.stdout, (
        rerun.stdout + rerun.stderr[-2000:]
    )
    assert json.loads((out / "status" / "k" / "analysis.json").read_text())["models"] == [
        "m-a",
        "m-b",
    ]
    assert "analysis: done over 2 model(s)" in rerun.stdout


def test_a_table_written_without_rows_reads_as_absent_in_results_json(tmp_path):
    """A one-condition sweep's paired-test table has no rows; results.json must not crash on it
    (it did, ending every such sweep's analyses in a traceback)."""
    from ocg.core.layout import ReportFolder
    from ocg.site.results_file import _table

    report = ReportFolder(tmp_path)
    report.tables.mkdir()
    report.table("table1_paired_test").write_text("\n")
    assert _table(report, "table1_paired_test") is None


def test_site_shell_options_do_not_leak_into_ocgs_part_of_the_script(tmp_path):
    """A site's `set -e` would end the array script at the task's exit code, before the requeue
    after a time-limit warning: ocg's options (and its USR1 trap) come back after the site's lines."""
    setup = ["set -euo pipefail", "set -E -C", "trap 'echo site' USR1"]
    result = ocg("sweep", site_sweep(tmp_path, setup=setup), "--executor", "slurm", "--dry-run")
    assert result.returncode == 0, result.stderr
    for name in ("array.sbatch", "analysis.sbatch"):
        text = (tmp_path / "out" / "slurm" / name).read_text()
        head = text[: text.index("# end of site setup")]
        rest = text[text.index("# end of site setup") :]
        assert "set +eEC; set -uo pipefail" in rest.splitlines()[1], rest
        # run the script up to ocg's own part, then a failing command and the options in force
        probe = (
            head + "\n".join(rest.splitlines()[:3]) + '\nfalse\necho "survived $-"; trap -p USR1\n'
        )
        ran = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
        assert ran.returncode == 0 and "survived" in ran.stdout, ran.stdout + ran.stderr
        flags = ran.stdout.split("survived ")[1].split()[0]
        assert "e" not in flags and "E" not in flags and "C" not in flags and "u" in flags, flags
        if name == "array.sbatch":
            assert "WARNED=1" in ran.stdout  # ocg's trap, not the site's


@pytest.mark.parametrize("slurm, where, what", BAD_SLURM)
def test_slurm_fields_that_would_override_ocg_or_mislead_are_refused(tmp_path, slurm, where, what):
    result = ocg("sweep", site_sweep(tmp_path, **slurm), "--executor", "slurm", "--dry-run")
    assert result.returncode == 2 and result.stderr.count("ocg: error:") == 1, result.stderr
    assert f"{tmp_path / 'sweep.yaml'}: {where}" in result.stderr and what in result.stderr, (
        result.stderr
    )
    assert "Traceback" not in result.stderr


def test_a_group_extra_arg_that_overrides_the_array_is_refused(tmp_path):
    path = site_sweep(tmp_path)
    sweep = yaml.safe_load(Path(path).read_text())
    sweep["resources"]["models"]["api"]["extra_args"] = ["-a", "0-9"]
    Path(path).write_text(yaml.safe_dump(sweep))
    result = ocg("sweep", path, "--executor", "slurm", "--dry-run")
    assert (
        result.returncode == 2 and "resources.models.api.extra_args: got '-a'" in result.stderr
    ), result.stderr


@pytest.mark.parametrize(
    "time, signal",
    [("0", None), ("UNLIMITED", None), ("120", 600), ("2-00:00", 600), ("00:10:00", 300)],
)
def test_no_time_limit_means_no_warning_signal(tmp_path, time, signal):
    path = site_sweep(tmp_path)
    sweep = yaml.safe_load(Path(path).read_text())
    sweep["resources"]["default"]["time"] = time
    Path(path).write_text(yaml.safe_dump(sweep))
    result = ocg("sweep", path, "--executor", "slurm", "--dry-run")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "out" / "slurm" / "manifest.dry-run.json").read_text())
    gpu_array = manifest["submissions"][0]["sbatch_args"]
    assert f"--time={time}" in gpu_array
    assert [a for a in gpu_array if a.startswith("--signal")] == (
        [f"--signal=B:USR1@{signal}"] if signal else []
    )


def test_a_failed_sbatch_is_one_error_and_what_was_submitted_is_recorded(tmp_path):
    """A fake sbatch that takes the first array and refuses the second: one `ocg: error:` line with
    the command quoted and sbatch's words, and the first array in manifest.json."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    count = tmp_path / "count"
    (bin_dir / "sbatch").write_text(f"""#!/bin/bash
n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}
if [ "$n" = 0 ]; then echo 4242; exit 0; fi
echo "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2; exit 1
""")
    (bin_dir / "squeue").write_text("#!/bin/bash\nexit 0\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = ocg("sweep", site_sweep(tmp_path, account="proj 1"), "--executor", "slurm", env=env)
    assert result.returncode == 1 and result.stderr.count("ocg: error:") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        "'--account=proj 1'" in result.stderr
        and "failed (exit 1): sbatch: error: Batch job submission "
        "failed: Invalid partition name specified"
        in result.stderr
    ), result.stderr
    assert "submitted before it: ['4242']" in result.stderr
    manifest = json.loads((tmp_path / "out" / "slurm" / "manifest.json").read_text())
    assert [s["job_id"] for s in manifest["submissions"]] == ["4242"]
    assert [s["tasks"] for s in manifest["submissions"]] == [{"0": "m-a", "2": "m-b"}]
