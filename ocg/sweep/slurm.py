"""The Slurm executor: one array task per model, submitted once per resource request (the
sweep's throttle shared among the arrays), then the analyses as a job that runs after all of
them (afterany: a failed model never blocks the report). The scripts: ocg/sweep/scripts.py."""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

from ..io import read_json, write_json
from ..layout import SweepFolder
from .config import resources_for
from .scripts import which_python, write_array_script
from .state import ACTIVE_STATES, _now, analysis_stale, slurm_jobs, to_run


def _sbatch_resources(res: dict, slurm: dict, warn: bool = False) -> list[str]:
    """Resources, then where the job queues: the group's partition and account, else the
    sweep's; the sweep's extra args, then the group's (sbatch takes the last of an option)."""
    args = [f"--cpus-per-task={res['cpus']}", f"--mem={res['mem']}", f"--time={res['time']}"]
    if res["gpus"]:
        args.append(f"--gres=gpu:{res['gpus']}")
    if warn:  # USR1 to the batch shell before the limit: the task stops after its batch, requeues
        args.append(f"--signal=B:USR1@{min(slurm['warn_before_limit_s'], time_seconds(res['time']) // 2)}")
    for key in ("partition", "account"):
        if value := res.get(key, slurm[key]):
            args.append(f"--{key}={value}")
    return args + list(slurm["extra_args"]) + list(res.get("extra_args", []))


def time_seconds(value: str) -> int:
    """Slurm's time limit in seconds: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS. (A warning
    longer than half the limit is cut to half: Slurm would signal at once, every start.)"""
    days, _, rest = value.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if days:
        h, m, s = (parts + [0, 0])[:3]
    else:
        h, m, s = [0, *parts, 0][:3] if len(parts) <= 2 else parts
    return int(days or 0) * 86400 + h * 3600 + m * 60 + s


def _log_option(folder: Path, pattern: str) -> str:
    """sbatch's --output, given on its command line (argv, no shell; an #SBATCH line would be
    split at spaces); '%' in the folder doubled, as sbatch reads '%A' and the like as job fields."""
    return f"--output={str(folder).replace('%', '%%')}/{pattern}"


def split_throttle(sizes: list[int], limit: int) -> list[tuple[int, int | None]]:
    """Per array: its %N, and the array it waits for (index), so that the sweep's `throttle`
    bounds the tasks of all its arrays together (Slurm's %N is per array). With no more arrays
    than the limit, the limit is shared out (each at least 1, the larger arrays more); with
    more, each gets %1 and array j starts after array j - limit has ended (a chain per slot)."""
    if len(sizes) > limit:
        return [(1, j - limit if j >= limit else None) for j in range(len(sizes))]
    shares = [1] * len(sizes)
    for _ in range(limit - len(sizes)):
        open_ = [j for j, n in enumerate(sizes) if shares[j] < n]
        if not open_:
            break
        j = max(open_, key=lambda j: (sizes[j] / shares[j], -j))
        shares[j] += 1
    return [(share, None) for share in shares]


def _sbatch(args: list[str]) -> str:
    proc = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"sbatch {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip().split(";")[0]


def _groups(sweep: dict, pending: list[str]) -> list[tuple[dict, list[str]]]:
    """The pending models by resource request (one array each), in sweep order."""
    groups: dict[str, tuple[dict, list[str]]] = {}
    for model in pending:
        res = resources_for(sweep, model)
        groups.setdefault(repr(sorted(res.items())), (res, []))[1].append(model)
    return list(groups.values())


def _active_jobs(sweep: dict) -> list[str]:
    """Earlier arrays of this sweep with a task still queued or running (new ones wait for
    them, so a rerun adds no tasks beyond the throttle)."""
    return sorted({job.split("_")[0] for job in slurm_jobs(sweep, ACTIVE_STATES)})


def submit_slurm(sweep: dict, dry_run: bool = False) -> dict:
    """Submit the models that are neither done nor running, one array per resource request with
    the sweep's throttle shared among them; then the analyses as a job that depends on them
    (afterany: a failed model does not block it). A dry run prints each sbatch command line and
    writes what it would submit to manifest.dry-run.json, beside the real manifest."""
    folder = SweepFolder.of(sweep)
    folder.logs.mkdir(parents=True, exist_ok=True)
    pending = to_run(sweep, with_slurm=True)
    script = write_array_script(sweep)
    real = read_json(folder.manifest) if folder.manifest.exists() else None
    manifest = real if real and not dry_run else \
        {"sweep": sweep["name"], "file": sweep["file"], "submissions": [], "analysis_jobs": []}
    slurm, earlier = sweep["slurm"], [] if dry_run else _active_jobs(sweep)
    groups = _groups(sweep, pending)
    job_ids: list[str] = []
    analyses_before = len(manifest["analysis_jobs"])
    for g, ((res, models), (share, after)) in enumerate(zip(groups, split_throttle(
            [len(m) for _, m in groups], slurm["throttle"]))):
        indices = {sweep["models"].index(m): m for m in models}
        waits = earlier + ([job_ids[after]] if after is not None else [])
        args = [f"--array={','.join(str(i) for i in sorted(indices))}%{share}",
                *([f"--dependency=afterany:{':'.join(waits)}"] if waits else []),
                _log_option(folder.logs, "slurm-%A_%a.out"), *_sbatch_resources(res, slurm, warn=True), str(script)]
        for m in models:
            folder.status(m).mkdir(parents=True, exist_ok=True)
        job_ids.append(f"JOB{g + 1}" if dry_run else _sbatch(args))
        manifest["submissions"].append({"job_id": job_ids[-1], "time_utc": _now(), "resources": res,
                                        "tasks": {str(i): m for i, m in sorted(indices.items())},
                                        "sbatch_args": args})
    if sweep["analysis"] and (job_ids or analysis_stale(sweep) or not manifest["analysis_jobs"]):
        res = {"gpus": 0, "cpus": 1, "mem": "4G", "time": "01:00:00", **slurm["analysis"]}
        deps = [f"--dependency=afterany:{':'.join(job_ids + earlier)}"] if job_ids or earlier else []
        args = [*deps, _log_option(folder.logs, folder.analysis_log.name), *_sbatch_resources(res, slurm),
                str(folder.analysis_script)]
        analysis_id = "ANALYSIS" if dry_run else _sbatch(args)
        manifest["analysis_jobs"].append({"job_id": analysis_id, "after": job_ids + earlier, "time_utc": _now(),
                                          "sbatch_args": args})
    written = folder.manifest.with_name("manifest.dry-run.json") if dry_run else folder.manifest
    write_json(written, manifest)
    _say(sweep, pending, manifest, job_ids, dry_run, written, manifest["analysis_jobs"][analyses_before:])
    return manifest


def _say(sweep: dict, pending: list[str], manifest: dict, job_ids: list[str], dry_run: bool, written: Path,
         analyses: list[dict]) -> None:
    """The same lines for a dry run and a real submission (the real one with its job ids)."""
    did = "dry run, nothing submitted; would submit" if dry_run else "submitted"
    print(f"sweep {sweep['name']}: {did} {len(pending)} model(s) in {len(job_ids)} array(s), throttle "
          f"{sweep['slurm']['throttle']} over all of them{':' if job_ids or analyses else ''}", flush=True)
    new = manifest["submissions"][-len(job_ids):] if job_ids else []
    for sub in new + analyses:
        what = f"{len(sub['tasks'])} model(s): {', '.join(sub['tasks'].values())}" if "tasks" in sub else "the analyses"
        print(f"  {sub['job_id']} ({what})\n    {shlex.join(['sbatch', '--parsable', *sub['sbatch_args']])}")
    print(f"manifest: {written}\nscripts: {SweepFolder.of(sweep).slurm}\nfolder: {SweepFolder.of(sweep).root}\n"
          f"python in the jobs: {which_python(sweep)}", flush=True)

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
