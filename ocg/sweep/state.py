"""Where a sweep stands: completion markers per model and notebook, and Slurm's queue."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..core.clock import utc_stamp
from ..core.files import read_json
from ..core.layout import SweepFolder
from ..core.lock import holder
from ..jobs.plan import Dirs
from ..records import Vocabulary
from .config import Sweep
from .markers import AnalysisMarker, AnalysisStatus, FailureMarker, InterruptedMarker

ACTIVE_STATES = {
    "PENDING",
    "RUNNING",
    "CONFIGURING",
    "COMPLETING",
    "REQUEUED",
    "RESIZING",
    "SUSPENDED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
}

FAILED_STATES = {
    "FAILED",
    "TIMEOUT",
    "CANCELLED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
}
# Waiting in the queue, not yet started (a requeued task waits again).
QUEUED_STATES = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"}
# Ended from outside (scancel, preemption), not by the model: what it wrote resumes when run.
STOPPED_STATES = {"CANCELLED", "PREEMPTED"}


class ModelState(Vocabulary):
    """Where one model of a sweep stands (`ocg sweep --status`), from its markers, lock and Slurm."""

    DONE = "done"  # every notebook finished
    RUNNING = "running"  # a task holds its lock, or Slurm runs it
    PENDING = "pending"  # queued in Slurm, not started yet
    PARTIAL = "partial"  # begun, stopped (time limit, killed): resumes when run
    FAILED = "failed"  # failed.json, or Slurm ended it without a completion marker
    MISSING = "missing"  # not run yet


def _now() -> str:
    return utc_stamp()


def sweep_dirs(sweep: Sweep) -> Dirs:
    """Where the sweep's notebooks read and write."""
    folder = sweep.folder
    return Dirs(
        generations=folder.outputs.generations,
        scores=folder.outputs.scores,
        reports=folder.report.folder,
    )


def interrupted_marker(folder: SweepFolder, model: str) -> Path:
    """Written by a task that stopped at Slurm's time-limit warning (it requeues itself)."""
    return folder.interrupted(model)


def stop_file(folder: SweepFolder, model: str) -> Path:
    """Made by the job script on the warning signal; the task stops after the batch in flight."""
    return folder.stop_request(model)


def model_state(
    sweep: Sweep, model: str, jobs: dict[str, str] | None = None
) -> tuple[ModelState, str]:
    """(the model's state, detail) from markers, the model's task lock (a local task holds it
    while it runs) and Slurm states if given."""
    folder = sweep.folder
    done = [nb for nb in sweep.file.notebooks if folder.done_marker(model, nb).exists()]
    if len(done) == len(sweep.file.notebooks):
        return ModelState.DONE, "all notebooks finished"
    state = (jobs or {}).get(model)
    if state in QUEUED_STATES:
        return ModelState.PENDING, f"slurm {state}: queued, not started"
    if state in ACTIVE_STATES:
        return ModelState.RUNNING, f"slurm {state}"
    if who := holder(folder.status(model)):
        return ModelState.RUNNING, f"task of {who}"
    if folder.failure(model).exists():
        f = FailureMarker.read(folder.failure(model))
        return (
            ModelState.FAILED,
            f"{f.notebook} cell {f.cell}: {(f.reason or '')[:300]} (log: {f.log})",
        )
    if interrupted_marker(folder, model).exists():  # and not requeued (else Slurm says PENDING)
        i = InterruptedMarker.read(interrupted_marker(folder, model))
        return (
            ModelState.PARTIAL,
            f"stopped at the time limit in {i.notebook} ({i.time_utc}); resumes when run",
        )
    started = folder.outputs.model_generations(model).stores()
    what = f"{', '.join(done)} done" if done else f"{len(started)} generation file(s) begun"
    if state in STOPPED_STATES:  # scancel or preemption: nothing of the model's doing
        return (
            (ModelState.PARTIAL, f"slurm {state}: {what}, not finished (resumes when run)")
            if done or started
            else (ModelState.MISSING, f"slurm {state} before it began (runs when submitted again)")
        )
    if state in FAILED_STATES or state == "COMPLETED":
        return ModelState.FAILED, f"slurm {state} without a completion marker (see {folder.logs})"
    if done or started:
        return ModelState.PARTIAL, f"{what}, not finished (resumes when run)"
    return ModelState.MISSING, "not run yet"


def slurm_states(sweep: Sweep) -> dict[str, str]:
    """Latest Slurm state of each model's array task (squeue; needs finished jobs kept visible,
    or sacct where accounting is on)."""
    latest = _latest_tasks(sweep)
    states = {}
    for job_id in sorted({j for j, _ in latest.values()}):
        found = _job_states(job_id)
        for model, (jid, index) in latest.items():
            if jid == job_id and index in found:
                states[model] = found[index]
    return states


def _latest_tasks(sweep: Sweep) -> dict[str, tuple[str, int]]:
    """Each model's latest array task in manifest.json: (job id, index)."""
    path = sweep.folder.manifest
    latest: dict[str, tuple[str, int]] = {}
    for sub in read_json(path)["submissions"] if path.exists() else []:
        for index, model in sub["tasks"].items():
            latest[model] = (sub["job_id"], int(index))
    return latest


def slurm_jobs(sweep: Sweep, states: set[str]) -> list[str]:
    """'<job>_<index>' of the sweep's latest array tasks whose Slurm state is one of `states`."""
    try:
        found = slurm_states(sweep)
    except (OSError, subprocess.SubprocessError):
        return []
    latest = _latest_tasks(sweep)
    return [f"{latest[m][0]}_{latest[m][1]}" for m, st in found.items() if st in states]


def _job_states(job_id: str) -> dict[int, str]:
    out = subprocess.run(
        ["squeue", "-h", "-r", "-t", "all", "-j", job_id, "-o", "%K|%T"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    states = {}
    for line in out.stdout.splitlines():
        index, _, state = line.partition("|")
        if index.strip().isdigit():
            states[int(index)] = state.strip()
    if states:
        return states
    acct = subprocess.run(
        ["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    for line in acct.stdout.splitlines():
        jid, _, state = line.partition("|")
        if "_" in jid and jid.split("_")[1].isdigit():
            states[int(jid.split("_")[1])] = state.split()[0] if state else state
    return states


def status_table(sweep: Sweep, with_slurm: bool = True) -> list[tuple[str, str, str]]:
    jobs = {}
    if with_slurm:
        try:
            jobs = slurm_states(sweep)
        except (OSError, subprocess.SubprocessError):
            jobs = {}
    return [(m, *model_state(sweep, m, jobs)) for m in sweep.file.models]


def print_status(sweep: Sweep) -> None:
    rows = status_table(sweep)
    width = max(len(m) for m, _, _ in rows)
    for model, state, detail in rows:
        print(f"{model:<{width}}  {state:<8} {detail}")
    counts = {s: sum(1 for _, st, _ in rows if st == s) for s in ModelState}
    print("  ".join(f"{k}: {v}" for k, v in counts.items()))
    marker = sweep.folder.analysis_marker
    job = analysis_job(sweep)
    if job:  # queued or running now: said first, whatever an earlier run left
        print(
            f"analysis: {'pending' if job[1] in QUEUED_STATES else 'running'} (slurm job {job[0]} {job[1]})"
            + ("; the last one:" if marker.exists() else "")
        )
    if marker.exists():
        a = AnalysisMarker.read(marker)
        detail = a.report or (a.reason or "").splitlines()[0]
        done = [m for m, st, _ in rows if st == ModelState.DONE]
        stale = (
            f" (out of date: {len(done)} model(s) done now; `ocg sweep` re-runs it)"
            if sorted(a.models or []) != sorted(done) and not job
            else ""
        )
        print(
            f"{'  ' if job else ''}analysis: {a.state} over {len(a.models or [])} model(s): {detail}{stale}"
        )
    elif not job:
        print("analysis: not run yet")


def analysis_job(sweep: Sweep) -> tuple[str, str] | None:
    """(job id, Slurm state) of the sweep's latest analysis job while it is queued or running."""
    path = sweep.folder.manifest
    jobs = read_json(path).get("analysis_jobs", []) if path.exists() else []
    if not jobs:
        return None
    job_id = str(jobs[-1]["job_id"])
    try:
        out = subprocess.run(
            ["squeue", "-h", "-j", job_id, "-o", "%T"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    state = (out.stdout.split() or [""])[0]
    return (job_id, state) if state in ACTIVE_STATES else None


def analysis_stale(sweep: Sweep) -> bool:
    """The report is missing, failed, or covers other models than those done now (a model that
    finished after the analyses, e.g. the task of a killed driver, gets them re-run)."""
    marker = sweep.folder.analysis_marker
    if not marker.exists():
        return True
    last = AnalysisMarker.read(marker)
    done = [m for m in sweep.file.models if model_state(sweep, m)[0] == ModelState.DONE]
    return last.state != AnalysisStatus.DONE or sorted(last.models or []) != sorted(done)


def to_run(sweep: Sweep, with_slurm: bool) -> list[str]:
    return [
        m
        for m, state, _ in status_table(sweep, with_slurm)
        if state in (ModelState.MISSING, ModelState.PARTIAL, ModelState.FAILED)
    ]
