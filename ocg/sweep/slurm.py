"""The Slurm executor: one array task per model, submitted once per resource request (the
sweep's throttle shared among the arrays), then the analyses as a job that runs after all of
them (afterany: a failed model never blocks the report). The scripts: ocg/sweep/scripts.py."""

from __future__ import annotations

import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..config.sweep_file import Resources, Slurm
from ..core.errors import OcgFault
from ..core.files import read_json, write_json
from ..core.layout import SweepFolder
from .config import Sweep, resources_for, time_limit_s
from .scripts import which_python, write_array_script
from .state import ACTIVE_STATES, _now, analysis_stale, slurm_jobs, to_run


def _sbatch_resources(res: Resources, slurm: Slurm, warn: bool = False) -> list[str]:
    """Resources, then where the job queues: the group's partition and account, else the
    sweep's; the sweep's extra args, then the group's (sbatch takes the last of an option)."""
    args = [f"--cpus-per-task={res.cpus}", f"--mem={res.mem}", f"--time={res.time}"]
    if res.gpus:
        args.append(f"--gres=gpu:{res.gpus}")
    limit = time_seconds(res.time)
    if (
        warn and limit
    ):  # USR1 to the batch shell before the limit: the task stops after its batch, requeues
        args.append(f"--signal=B:USR1@{min(slurm.warn_before_limit_s, limit // 2)}")
    for key in ("partition", "account"):
        if value := res.queue(key, slurm):
            args.append(f"--{key}={value}")
    return args + list(slurm.extra_args) + list(res.extra_args)


def time_seconds(value: str) -> int | None:
    """Slurm's time limit in seconds (ocg/sweep/config.py reads it), None for none ("0",
    UNLIMITED): no warning signal then. (A warning longer than half the limit is cut to half:
    Slurm would signal at once, every start.)"""
    return time_limit_s(value)


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


class SbatchError(OcgFault):
    """sbatch refused a submission (or did not answer): its command line, quoted, and its words."""


def _sbatch(args: list[str]) -> str:
    command = ["sbatch", "--parsable", *args]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise SbatchError(
            f"{shlex.join(command)} gave no answer in 60 s (is slurmctld up?)"
        ) from None
    if proc.returncode != 0:
        said = proc.stderr.strip() or proc.stdout.strip() or "(nothing on stderr)"
        raise SbatchError(f"{shlex.join(command)} failed (exit {proc.returncode}): {said}")
    return proc.stdout.strip().split(";")[0]


def _groups(sweep: Sweep, pending: list[str]) -> list[tuple[Resources, list[str]]]:
    """The pending models by resource request (one array each), in sweep order."""
    groups: dict[str, tuple[Resources, list[str]]] = {}
    for model in pending:
        res = resources_for(sweep, model)
        groups.setdefault(repr(sorted(res.recorded().items())), (res, []))[1].append(model)
    return list(groups.values())


def _active_jobs(sweep: Sweep) -> list[str]:
    """Earlier arrays of this sweep with a task still queued or running (new ones wait for
    them, so a rerun adds no tasks beyond the throttle)."""
    return sorted({job.split("_")[0] for job in slurm_jobs(sweep, ACTIVE_STATES)})


@dataclass(frozen=True)
class _Submission:
    """One submit_slurm call: the sweep and its folder, whether it only writes what it would
    submit, the arrays still active from before (new ones wait for them), and what it has
    submitted so far (its job ids, recorded in `manifest` as each is made)."""

    sweep: Sweep
    folder: SweepFolder
    manifest: dict
    dry_run: bool
    earlier: list[str]
    job_ids: list[str] = field(default_factory=list)


def submit_slurm(sweep: Sweep, dry_run: bool = False) -> dict:
    """Submit the models that are neither done nor running, one array per resource request with
    the sweep's throttle shared among them; then the analyses as a job that depends on them
    (afterany: a failed model does not block it). A dry run prints each sbatch command line and
    writes what it would submit to manifest.dry-run.json, beside the real manifest."""
    folder = sweep.folder
    folder.logs.mkdir(parents=True, exist_ok=True)
    pending = to_run(sweep, with_slurm=True)
    script = write_array_script(sweep)
    real = read_json(folder.manifest) if folder.manifest.exists() else None
    manifest: dict = (
        real
        if real and not dry_run
        else {
            "sweep": sweep.file.name,
            "file": str(sweep.path),
            "submissions": [],
            "analysis_jobs": [],
        }
    )
    sub = _Submission(sweep, folder, manifest, dry_run, [] if dry_run else _active_jobs(sweep))
    groups = _groups(sweep, pending)
    analyses_before = len(manifest["analysis_jobs"])
    try:
        _submit_arrays(sub, script, groups)
        _submit_analysis(sub)
    except SbatchError as exc:  # what was submitted stays on record (--status, a rerun's waits)
        write_json(folder.manifest, manifest)
        raise SbatchError(
            f"{exc}\n  submitted before it: {sub.job_ids or 'nothing'} (recorded in {folder.manifest})"
        ) from None
    written = folder.dry_run_manifest if dry_run else folder.manifest
    write_json(written, manifest)
    _say(sub, pending, written, manifest["analysis_jobs"][analyses_before:])
    return manifest


def _submit_arrays(sub: _Submission, script: Path, groups: list) -> None:
    """The model arrays, each recorded in the manifest as it is submitted."""
    sweep, folder, slurm = sub.sweep, sub.folder, sub.sweep.file.slurm
    for g, ((res, models), (share, after)) in enumerate(
        zip(groups, split_throttle([len(m) for _, m in groups], slurm.throttle))
    ):
        indices = {sweep.file.models.index(m): m for m in models}
        waits = sub.earlier + ([sub.job_ids[after]] if after is not None else [])
        args = [
            f"--array={','.join(str(i) for i in sorted(indices))}%{share}",
            *([f"--dependency=afterany:{':'.join(waits)}"] if waits else []),
            _log_option(folder.logs, "slurm-%A_%a.out"),
            *_sbatch_resources(res, slurm, warn=True),
            str(script),
        ]
        for m in models:
            folder.status(m).mkdir(parents=True, exist_ok=True)
        sub.job_ids.append(f"JOB{g + 1}" if sub.dry_run else _sbatch(args))
        sub.manifest["submissions"].append(
            {
                "job_id": sub.job_ids[-1],
                "time_utc": _now(),
                "resources": res.recorded(),
                "tasks": {str(i): m for i, m in sorted(indices.items())},
                "sbatch_args": args,
            }
        )


def _submit_analysis(sub: _Submission) -> None:
    """The analyses, after every array (new and earlier), where there are new arrays, the report
    is stale or none was ever submitted."""
    sweep, job_ids, earlier = sub.sweep, sub.job_ids, sub.earlier
    if not sweep.file.analysis or not (
        job_ids or analysis_stale(sweep) or not sub.manifest["analysis_jobs"]
    ):
        return
    res = sweep.file.slurm.analysis
    deps = [f"--dependency=afterany:{':'.join(job_ids + earlier)}"] if job_ids or earlier else []
    args = [
        *deps,
        _log_option(sub.folder.logs, sub.folder.analysis_log.name),
        *_sbatch_resources(res, sweep.file.slurm),
        str(sub.folder.analysis_script),
    ]
    analysis_id = "ANALYSIS" if sub.dry_run else _sbatch(args)
    sub.manifest["analysis_jobs"].append(
        {
            "job_id": analysis_id,
            "after": job_ids + earlier,
            "time_utc": _now(),
            "sbatch_args": args,
        }
    )


def _say(sub: _Submission, pending: list[str], written: Path, analyses: list[dict]) -> None:
    """The same lines for a dry run and a real submission (the real one with its job ids)."""
    sweep, job_ids = sub.sweep, sub.job_ids
    did = "dry run, nothing submitted; would submit" if sub.dry_run else "submitted"
    print(
        f"sweep {sweep.file.name}: {did} {len(pending)} model(s) in {len(job_ids)} array(s), throttle "
        f"{sweep.file.slurm.throttle} over all of them{':' if job_ids or analyses else ''}",
        flush=True,
    )
    new = sub.manifest["submissions"][-len(job_ids) :] if job_ids else []
    for item in new + analyses:
        what = (
            f"{len(item['tasks'])} model(s): {', '.join(item['tasks'].values())}"
            if "tasks" in item
            else "the analyses"
        )
        print(
            f"  {item['job_id']} ({what})\n    {shlex.join(['sbatch', '--parsable', *item['sbatch_args']])}"
        )
    print(
        f"manifest: {written}\nscripts: {sweep.folder.slurm}\nfolder: {sweep.folder.root}\n"
        f"python in the jobs: {which_python(sweep)}",
        flush=True,
    )


def wait_slurm(sweep: Sweep, timeout_s: float = 24 * 3600, poll_s: float = 5.0) -> bool:
    """Follow the sweep's jobs (model arrays and analyses) until none is queued or running."""
    manifest = read_json(sweep.folder.manifest)
    ids = sorted(
        {s["job_id"] for s in manifest["submissions"]}
        | {a["job_id"] for a in manifest["analysis_jobs"]}
    )
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        proc = subprocess.run(
            ["squeue", "-h", "-r", "-j", ",".join(ids), "-o", "%i|%T"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        active = [line for line in proc.stdout.splitlines() if line.split("|")[-1] in ACTIVE_STATES]
        if not active:
            return True
        time.sleep(poll_s)
    return False
