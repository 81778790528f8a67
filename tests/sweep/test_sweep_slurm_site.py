"""A sweep on the real single-node Slurm of the tests as a site runs one: setup lines and
environment in the job, partitions per resource group and for the analyses, the throttle over
all arrays together, and a task that meets its time limit, requeues itself and resumes."""

import json
import shlex
import subprocess
import sys
import threading
import time

import pytest
import yaml

from ocg.sweep import load_sweep, status_table
from tests.generation.scripted_server import ScriptedServer, ok_body
from tests.helpers import disk_record
from tests.slurm_cluster import cluster_for_test
from tests.sweep.sweep_files import replay_models


@pytest.fixture
def site_slurm(tmp_path, monkeypatch):
    yield from cluster_for_test(tmp_path / "cluster", monkeypatch, partitions=("debug", "cpu"))


def squeue(job: str, field: str) -> set[str]:
    out = subprocess.run(
        ["squeue", "-h", "-r", "-t", "all", "-j", job, "-o", field],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return {line.strip() for line in out.stdout.splitlines() if line.strip()}


def write_sweep(tmp_path, **fields) -> str:
    path = tmp_path / "sweep.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "conditions": ["ordered"],
                "subset_k": 1,
                "template_ids": [0],
                "metrics": ["coverage"],
                "outputs": str(tmp_path / "out"),
                **fields,
            }
        )
    )
    return str(path)


@pytest.mark.slow
def test_setup_partitions_and_the_sweep_wide_throttle_on_slurm(tmp_path, site_slurm):
    times, pwned = tmp_path / "times.txt", tmp_path / "pwned"
    q = shlex.quote(str(times))
    who = "$SLURM_JOB_ID ${SLURM_ARRAY_TASK_ID:-analysis}"
    setup = [
        f'echo "{who} start $(date +%s.%N) $OCG_SITE_NOTE" >> {q}',
        f"trap 'echo \"{who} end $(date +%s.%N)\" >> {q}' EXIT",
    ]
    res = {"gpus": 0, "cpus": 1, "mem": "300M", "time": "00:20:00"}
    path = write_sweep(
        tmp_path,
        name="site",
        models=["m-a", "api"],
        models_file=replay_models(tmp_path, ["m-a", "api"]),
        analysis=["03_main_results"],
        resources={
            "default": res,
            "models": {
                "api": {"mem": "200M", "partition": "cpu", "extra_args": ["--comment=api-group"]}
            },
        },
        slurm={
            "partition": "debug",
            "throttle": 1,
            "setup": setup,
            "env": {"OCG_SITE_NOTE": f"$(touch {pwned})"},
            "analysis": {**res, "partition": "cpu"},
        },
    )
    result = subprocess.run(
        [sys.executable, "-m", "ocg.cli", "sweep", path, "--executor", "slurm", "--wait"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:] + site_slurm.logs()
    assert all(state == "done" for _, state, _ in status_table(load_sweep(path)))
    manifest = json.loads((tmp_path / "out" / "slurm" / "manifest.json").read_text())
    (group, api), analysis = manifest["submissions"], manifest["analysis_jobs"][0]
    assert (
        api["tasks"] == {"1": "api"}
        and f"--dependency=afterany:{group['job_id']}" in api["sbatch_args"]
    )
    assert squeue(group["job_id"], "%P") == {"debug"} and squeue(api["job_id"], "%P|%k") == {
        "cpu|api-group"
    }
    assert squeue(analysis["job_id"], "%P") == {"cpu"}

    spans: dict[str, list[float]] = {}
    for line in times.read_text().splitlines():
        job, task, what, at, *note = line.split(" ", 4)
        spans.setdefault(f"{job}_{task}", []).append(float(at))
        if what == "start":
            assert note == [f"$(touch {pwned})"], line  # the environment value arrives as text
    tasks = sorted(v for k, v in spans.items() if not k.endswith("_analysis"))
    assert len(tasks) == 2 and all(len(s) == 2 for s in tasks), times.read_text()
    overlapping = [(a, b) for a, b in zip(tasks, tasks[1:]) if b[0] < a[1]]
    assert not overlapping, f"throttle 1, yet tasks ran at once: {tasks}"
    assert not pwned.exists()
    assert json.loads((tmp_path / "out" / "status" / "site" / "analysis.json").read_text())[
        "models"
    ] == ["m-a", "api"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "setup",
    [[], ["set -euo pipefail", "set -E", "trap 'true' USR1"]],
    ids=["no-setup", "site-set-e"],
)
def test_a_task_at_its_time_limit_requeues_itself_and_resumes(
    tmp_path, site_slurm, monkeypatch, setup
):
    """A one-minute limit, a warning 10 s before it: the first start is stopped after a batch
    (the server answers slowly until then), requeued by its own script, and the second start
    generates only what is missing. A site's `set -e` (and its own USR1 trap) in `slurm.setup`
    change none of that: ocg's shell options and trap come back after the site's lines."""
    slow = threading.Event()
    slow.set()

    def respond(body, headers):
        if slow.is_set():
            time.sleep(1.5)
        return 200, {"Content-Type": "application/json"}, ok_body("A dog runs after a ball."), 0

    server = ScriptedServer(respond)
    models = tmp_path / "models.yaml"
    models.write_text(
        yaml.safe_dump(
            {
                "models": {
                    "api": {
                        "id": "local-model",
                        "backend": "openai",
                        "max_new_tokens": 32,
                        "batch_size": 2,
                        "api": {
                            "base_url": server.url,
                            "key_env": "OCG_TEST_KEY",
                            "concurrency": 1,
                            "timeout_s": 20,
                        },
                    }
                }
            }
        )
    )
    res = {"gpus": 0, "cpus": 1, "mem": "300M", "time": "00:01:00"}
    path = write_sweep(
        tmp_path,
        name="limit",
        models=["api"],
        models_file=str(models),
        analysis=[],
        conditions=["original", "ordered"],
        resources={"default": res},
        slurm={"warn_before_limit_s": 10, "analysis": res, "setup": setup},
    )
    out = tmp_path / "out"
    monkeypatch.setenv("OCG_TEST_KEY", "sk-limit")
    driver = subprocess.Popen(
        [sys.executable, "-m", "ocg.cli", "sweep", path, "--executor", "slurm", "--wait"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    marker, seen, deadline = (
        out / "status" / "limit" / "api" / "interrupted.json",
        None,
        time.time() + 600,
    )
    held = None  # when the requeued task was first seen held
    try:
        while driver.poll() is None and time.time() < deadline:
            if seen is None and marker.exists():
                seen = json.loads(marker.read_text())
                slow.clear()  # the second start finishes long before its own warning
            if (
                seen is not None
            ):  # Slurm holds a requeued job 2 minutes; start it now (only waiting is skipped)
                job = f"{seen['SLURM_ARRAY_JOB_ID']}_{seen['SLURM_ARRAY_TASK_ID']}"
                if squeue(job, "%T|%r") == {"PENDING|BeginTime"}:
                    held = held or time.time()
                    # not within the second of the requeue: slurmd refuses a credential created in the
                    # second its predecessor was revoked ("Job credential revoked"), and kills the job
                    if time.time() - held >= 3:
                        subprocess.run(
                            ["scontrol", "update", f"JobId={job}", "StartTime=now"], timeout=30
                        )
            time.sleep(1)
        stdout, stderr = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
        server.close()
    assert driver.returncode == 0, stdout + stderr[-3000:] + site_slurm.logs()
    assert (
        seen is not None
        and seen["notebook"] == "01_generate"
        and "stopped before the time limit" in seen["reason"]
    )
    sub = json.loads((out / "slurm" / "manifest.json").read_text())["submissions"][0]
    assert "--signal=B:USR1@10" in sub["sbatch_args"] and "--time=00:01:00" in sub["sbatch_args"]
    log = (out / "logs" / "api.log").read_text()
    assert "the time-limit warning came (USR1)" in log and f"requeued {sub['job_id']}_0" in log
    card = json.loads((out / "generations" / "api" / "run_card.json").read_text())
    assert [r["status"] for r in card["runs"]][-2:] == ["interrupted", "complete"], card["runs"]
    first, second = card["runs"][-2:]
    assert 0 < first["todo"] == 48 and 0 < second["todo"] < 48  # the second start resumed
    ids = [
        disk_record(line)["instance_id"]
        for f in ("original", "ordered")
        for line in (out / "generations" / "api" / f"{f}.jsonl").read_text().splitlines()
    ]
    assert len(ids) == 48 == len(set(ids))
    assert [s for _, s, _ in status_table(load_sweep(path))] == ["done"]
