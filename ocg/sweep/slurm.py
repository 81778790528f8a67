"""The Slurm executor: one array task per model, submitted once per resource request, then the
analyses as a job that runs after all of them (afterany: a failed model never blocks the report)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from ..io import atomic_path, follow_umask, read_json, write_json
from ..layout import SweepFolder
from ..paths import FOLDER_VARIABLES, PROJECT_ROOT
from .config import resources_for
from .state import ACTIVE_STATES, _now, to_run
from .tasks import task_command


def _sbatch_resources(res: dict) -> list[str]:
    args = [f"--cpus-per-task={res['cpus']}", f"--mem={res['mem']}", f"--time={res['time']}"]
    if res["gpus"]:
        args.append(f"--gres=gpu:{res['gpus']}")
    return args


def _exports() -> str:
    """The submitter's OCG_OUTPUTS and OCG_MODEL_CACHE (absolute: `ocg` settles them at start),
    so a job reads the same folders whatever sbatch's --export."""
    lines = [f"export {name}={shlex.quote(os.environ[name])}" for name in FOLDER_VARIABLES if name in os.environ]
    return "\n".join(lines) or "# OCG_OUTPUTS and OCG_MODEL_CACHE: not set (the defaults)"


def _log_option(folder: Path, pattern: str) -> str:
    """sbatch's --output, given on its command line (argv, no shell; an #SBATCH line would be
    split at spaces); '%' in the folder doubled, as sbatch reads '%A' and the like as job fields."""
    return f"--output={str(folder).replace('%', '%%')}/{pattern}"


def write_array_script(sweep: dict) -> Path:
    """array.sbatch and analysis.sbatch; every value in them is quoted for the shell."""
    folder = SweepFolder.of(sweep)
    logs = shlex.quote(str(folder.logs))
    models = " ".join(shlex.quote(m) for m in sweep["models"])
    cmd = shlex.join(task_command(sweep)[:-1]) + ' "$MODEL"'
    script = f"""#!/bin/bash
# ocg sweep {sweep['name']}: one array task per model (index = position in the sweep's model list).
# Resources and the log file are given per submission on the sbatch command line (see manifest.json).
#SBATCH --job-name=ocg-{sweep['name']}
#SBATCH --requeue
#SBATCH --open-mode=append
{_exports()}
set -uo pipefail
MODELS=({models})
MODEL="${{MODELS[$SLURM_ARRAY_TASK_ID]}}"
cd {shlex.quote(str(PROJECT_ROOT))}
echo "[$(date -u +%FT%TZ)] task $SLURM_ARRAY_TASK_ID: $MODEL on $(hostname) (job $SLURM_JOB_ID)" >> {logs}/"$MODEL.log"
{cmd} >> {logs}/"$MODEL.log" 2>&1
"""
    path = folder.array_script
    with atomic_path(path) as tmp:
        tmp.write_text(script)
    follow_umask(path, executable=True)
    analysis = f"""#!/bin/bash
# ocg sweep {sweep['name']}: the analyses (03-09) once over every finished model.
#SBATCH --job-name=ocg-{sweep['name']}-analysis
#SBATCH --open-mode=append
{_exports()}
set -uo pipefail
cd {shlex.quote(str(PROJECT_ROOT))}
{shlex.join([sys.executable, "-m", "ocg.cli", "sweep", sweep['file'], "--analysis"])}
"""
    apath = folder.analysis_script
    with atomic_path(apath) as tmp:
        tmp.write_text(analysis)
    follow_umask(apath, executable=True)
    return path


def _sbatch(args: list[str]) -> str:
    proc = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"sbatch {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip().split(";")[0]

def submit_slurm(sweep: dict, dry_run: bool = False) -> dict:
    """Submit the models that are neither done nor running, grouped by resources; then the
    analyses as a job that depends on them (afterany: a failed model does not block it)."""
    folder = SweepFolder.of(sweep)
    folder.logs.mkdir(parents=True, exist_ok=True)
    pending = to_run(sweep, with_slurm=True)
    script = write_array_script(sweep)
    manifest = read_json(folder.manifest) if folder.manifest.exists() else \
        {"sweep": sweep["name"], "file": sweep["file"], "submissions": [], "analysis_jobs": []}
    common = [f"--{k}={sweep['slurm'][k]}" for k in ("partition", "account") if sweep["slurm"][k]]
    common += list(sweep["slurm"]["extra_args"])
    groups: dict[tuple, list[str]] = {}
    for model in pending:
        groups.setdefault(tuple(sorted(resources_for(sweep, model).items())), []).append(model)
    job_ids = []
    for key, models in groups.items():
        res = dict(key)
        indices = {sweep["models"].index(m): m for m in models}
        array = ",".join(str(i) for i in sorted(indices)) + f"%{sweep['slurm']['throttle']}"
        args = [f"--array={array}", _log_option(folder.logs, "slurm-%A_%a.out"), *_sbatch_resources(res),
                *common, str(script)]
        for m in models:
            folder.status(m).mkdir(parents=True, exist_ok=True)
        job_id = "DRY-RUN" if dry_run else _sbatch(args)
        job_ids.append(job_id)
        manifest["submissions"].append({"job_id": job_id, "time_utc": _now(), "resources": res,
                                        "tasks": {str(i): m for i, m in sorted(indices.items())},
                                        "sbatch_args": args})
    if sweep["analysis"] and (job_ids or not manifest["analysis_jobs"]):
        deps = [f"--dependency=afterany:{':'.join(job_ids)}"] if job_ids and not dry_run else []
        res = {"gpus": 0, "cpus": 1, "mem": "4G", "time": "01:00:00", **sweep["slurm"]["analysis"]}
        args = [*deps, _log_option(folder.logs, folder.analysis_log.name), *_sbatch_resources(res), *common,
                str(folder.analysis_script)]
        analysis_id = "DRY-RUN" if dry_run else _sbatch(args)
        manifest["analysis_jobs"].append({"job_id": analysis_id, "after": job_ids, "time_utc": _now(),
                                          "sbatch_args": args})
    if not dry_run:
        write_json(folder.manifest, manifest)
    print(f"sweep {sweep['name']}: submitted {len(pending)} model(s) {pending} as job(s) {job_ids}",
          flush=True)
    return manifest

def wait_slurm(sweep: dict, timeout_s: float = 24 * 3600, poll_s: float = 5.0) -> bool:
    """Follow the sweep's jobs (model arrays and analyses) until none is queued or running."""
    manifest = read_json(SweepFolder.of(sweep).manifest)
    ids = sorted({s["job_id"] for s in manifest["submissions"]} |
                 {a["job_id"] for a in manifest["analysis_jobs"]})
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        proc = subprocess.run(["squeue", "-h", "-r", "-j", ",".join(ids), "-o", "%i|%T"],
                              capture_output=True, text=True, timeout=30)
        active = [line for line in proc.stdout.splitlines() if line.split("|")[-1] in ACTIVE_STATES]
        if not active:
            return True
        time.sleep(poll_s)
    return False
