"""One model's task (the same under both executors), the analyses, and the local executor."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
import traceback
from dataclasses import replace

from ..core.errors import OcgInputError
from ..core.interrupts import StopRequested, check_stop
from ..core.layout import ExecutedNotebook, SweepFolder
from ..core.lock import LockHeld, exclusive
from ..core.paths import PROJECT_ROOT
from ..jobs.plan import analysis_steps, model_steps
from ..records import ReportStamp, ReportStatus
from .config import Sweep
from .markers import AnalysisMarker, AnalysisStatus, DoneMarker, FailureMarker, InterruptedMarker
from .state import (
    ModelState,
    _now,
    analysis_stale,
    interrupted_marker,
    model_state,
    print_status,
    status_table,
    sweep_dirs,
    to_run,
)

BUSY = 75  # EX_TEMPFAIL: another process holds a lock this task needs; try again later
INTERRUPTED = (
    StopRequested.exit_status
)  # 79: stopped at Slurm's time-limit warning; the job script requeues the task


def task_command(sweep: Sweep, model: str = "$MODEL") -> list[str]:
    """The command every model task runs, here or on a Slurm node."""
    return [sys.executable, "-m", "ocg.cli", "sweep", str(sweep.path), "--task", model]


def run_model_task(sweep: Sweep, model: str) -> int:
    """Run the model's notebooks in order; mark each done, or write failed.json and stop.

    One task per model at a time. A lock held by another process (this task's, or a generation
    or scores folder's inside a notebook) is no failure of the model: exit BUSY, record nothing.
    """
    if model not in sweep.file.models:
        raise OcgInputError(str(sweep.path), f"{model!r} is not a model of this sweep")
    try:
        with exclusive(sweep.folder.status(model), doing="is running this model's task"):
            return _hub_files_here(sweep, model) or _run_notebooks(sweep, model)
    except LockHeld as exc:
        print(f"[{model}] busy, not run: {exc}", flush=True)
        return BUSY


def _hub_files_here(sweep: Sweep, model: str) -> int:
    """0 when the task can go on: every hub file cached (then the hub goes offline for it, unless
    HF_HUB_OFFLINE is set already), or the hub reachable. Else failed.json names what is missing."""
    from .prefetch import offline_check

    cached, problem = offline_check(sweep, [model], f"ocg prefetch {shlex.quote(str(sweep.path))}")
    if cached and "HF_HUB_OFFLINE" not in os.environ:
        os.environ["HF_HUB_OFFLINE"] = "1"  # inherited by the notebooks' kernels
        print(f"[{model}] every hub file is cached: running with HF_HUB_OFFLINE=1", flush=True)
    if problem is None:
        return 0
    folder = sweep.folder
    FailureMarker(
        model=model,
        notebook="(before 01_generate)",
        reason=problem[:2000],
        log=str(folder.log(model)),
        time_utc=_now(),
        host=socket.gethostname(),
    ).write(folder.failure(model))
    print(f"[{model}] FAILED before any work: {problem}", flush=True)
    return 1


def _run_notebooks(sweep: Sweep, model: str) -> int:
    from ..jobs.notebook_runner import run_notebook

    folder = sweep.folder
    folder.failure(model).unlink(missing_ok=True)
    interrupted_marker(folder, model).unlink(missing_ok=True)
    job = {
        k: os.environ.get(k)
        for k in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID")
        if os.environ.get(k)
    }
    ran = (
        False  # the stop file is honoured once this start has done some work: each start progresses
    )
    for notebook, params in model_steps(sweep, sweep_dirs(sweep), model):
        marker = folder.done_marker(model, notebook)
        if marker.exists():
            print(f"[{model}] {notebook}: done already", flush=True)
            continue
        print(f"[{model}] {notebook}: running", flush=True)
        t0 = time.time()
        try:
            if ran:
                check_stop(notebook)
            executed = run_notebook(notebook, params, out_dir=folder.notebooks(model))
        except StopRequested as exc:
            return _interrupted(folder, model, notebook, str(exc), job)
        except (
            KeyboardInterrupt
        ) as exc:  # SIGTERM or Ctrl-C: the kernel is down (run_notebook); say where
            _interrupted(folder, model, notebook, str(exc) or "interrupted (Ctrl-C)", job)
            raise
        except Exception as exc:  # noqa: BLE001 - any failure is recorded for --status
            if getattr(exc, "ename", None) == StopRequested.__name__:
                return _interrupted(folder, model, notebook, str(getattr(exc, "evalue", exc)), job)
            if getattr(exc, "ename", None) == LockHeld.__name__:
                raise LockHeld(notebook, str(getattr(exc, "evalue", exc))) from None
            reason = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
            cell = getattr(exc, "exec_count", None)
            FailureMarker(
                model=model,
                notebook=notebook,
                cell=cell,
                reason=reason.strip()[:2000],
                executed_notebook=str(ExecutedNotebook(folder.notebooks(model), notebook).copy),
                log=str(folder.log(model)),
                time_utc=_now(),
                host=socket.gethostname(),
                **job,
            ).write(folder.failure(model))
            print(f"[{model}] {notebook}: FAILED in cell {cell}: {reason}", flush=True)
            traceback.print_exc()
            return 1
        ran = True
        DoneMarker(
            model=model,
            notebook=notebook,
            executed_notebook=str(executed),
            seconds=round(time.time() - t0, 1),
            time_utc=_now(),
            host=socket.gethostname(),
            **job,
        ).write(marker)
    print(f"[{model}] done", flush=True)
    return 0


def _interrupted(folder: SweepFolder, model: str, notebook: str, why: str, job: dict) -> int:
    """The time limit is near: say where the task stopped (what it wrote is kept and resumed)."""
    InterruptedMarker(
        model=model,
        notebook=notebook,
        reason=why[:500],
        time_utc=_now(),
        host=socket.gethostname(),
        **job,
    ).write(interrupted_marker(folder, model))
    print(f"[{model}] {notebook}: {why}", flush=True)
    return INTERRUPTED


def run_analysis(sweep: Sweep) -> int:
    """The sweep's analyses once over every model whose scoring is done, built in a fresh folder that
    replaces the sweep's report when they end (ocg/jobs/staging.py)."""
    from ..jobs.staging import building, finish

    done = [m for m in sweep.file.models if model_state(sweep, m)[0] == ModelState.DONE]
    marker = sweep.folder.analysis_marker
    if not done:
        print("no finished model to analyse", flush=True)
        AnalysisMarker(
            state=AnalysisStatus.FAILED, reason="no finished model", time_utc=_now()
        ).write(marker)
        return 1
    final = sweep_dirs(sweep).reports
    with building(final) as staging:
        outcome = _analyse(sweep, done, staging, final)
        landed = finish(staging, final, outcome)
    if landed != final:  # a finished report of these analyses is kept; the failed build beside it
        outcome = outcome.replace(
            reason=f"{outcome.reason} (the build: {landed}; the previous report {final} is kept)"
        )
    AnalysisMarker(
        state=AnalysisStatus(outcome.state.value),
        report=outcome.report,
        reason=outcome.reason,
        models=done,
        time_utc=_now(),
    ).write(marker)
    print(
        f"[analysis] report: {outcome.report}"
        if outcome.state == ReportStatus.DONE
        else f"[analysis] {outcome.reason}",
        flush=True,
    )
    return 0 if outcome.state == ReportStatus.DONE else 1


def _analyse(sweep: Sweep, done: list[str], staging, final) -> ReportStamp:
    """The analyses into `staging`: how they ended (the report's stamp; the analysis marker's
    state, report and reason)."""
    from ..core.layout import ReportFolder
    from ..jobs.pipeline import run_steps
    from ..scoring.pinned import pin_scores
    from ..site.landing import write_index
    from ..site.verify import verify_report

    pinned = ReportFolder(staging).scores
    dirs = replace(sweep_dirs(sweep), reports=staging, analysis_scores=pinned)
    pages, failure = run_steps(
        analysis_steps(sweep, dirs, done),
        staging,
        final,
        failed_title=f"ocg sweep: {sweep.file.name} (analyses failed)",
        announce=lambda i, n, name: print(f"[analysis] {name} over {done}", flush=True),
        before_analyses=lambda: pin_scores(
            dirs.scores, done, pinned, sweep.scoring, sweep.file.metrics
        ),
    )
    if failure is not None:
        return ReportStamp(state=ReportStatus.FAILED, reason=str(failure))
    if not pinned.exists():  # no analysis ran: the sets as they are now
        pin_scores(dirs.scores, done, pinned, sweep.scoring, sweep.file.metrics)
    folder = sweep.folder
    failures = {
        m: FailureMarker.read(folder.failure(m)).to_json()
        for m in sweep.file.models
        if folder.failure(m).exists()
    }
    write_index(
        staging,
        f"ocg sweep: {sweep.file.name}",
        pages,
        run=sweep,
        scores_root=pinned,
        generations_root=dirs.generations,
        failures=failures,
    )
    verify_report(staging)  # last: verify.json and the trust box's verify line (site/verify.py)
    return ReportStamp(state=ReportStatus.DONE, report=str(folder.report.index))


def _call(command: list[str], log) -> int:
    """Run a task to its end; when the driver is stopped (SIGTERM, Ctrl-C) the task is too, with
    SIGTERM first, so that it shuts its notebook's kernel down and marks itself interrupted."""
    with subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=PROJECT_ROOT) as task:
        try:
            return task.wait()
        except BaseException:
            task.terminate()
            try:
                task.wait(90)
            except subprocess.TimeoutExpired:
                task.kill()
            raise


def run_local(sweep: Sweep) -> int:
    """Each pending model's task as a subprocess, one after another; then the analyses."""
    folder = sweep.folder
    logs = folder.logs
    logs.mkdir(parents=True, exist_ok=True)
    pending = to_run(sweep, with_slurm=False)
    failed = 0
    print(f"sweep {sweep.file.name}: {len(pending)} model(s) to run: {pending}", flush=True)
    for model in pending:
        with folder.log(model).open("a") as log:
            code = _call(task_command(sweep, model), log)
        outcome = (
            "done"
            if code == 0
            else f"busy: another process holds it, not run (see {logs / model}.log)"
            if code == BUSY
            else f"FAILED (exit {code}), see {logs / model}.log"
        )
        print(f"  {model}: {outcome}", flush=True)
        failed += code != 0
    analysis_code = 0
    if sweep.file.analysis and (pending or analysis_stale(sweep)):
        with folder.analysis_log.open("a") as log:
            analysis_code = _call(
                [sys.executable, "-m", "ocg.cli", "sweep", str(sweep.path), "--analysis"], log
            )
    print_status(sweep)
    states = status_table(sweep, with_slurm=False)
    still_failed = [m for m, state, _ in states if state == ModelState.FAILED]
    unfinished = [m for m, state, _ in states if state in (ModelState.MISSING, ModelState.PARTIAL)]
    elsewhere = [
        m for m, state, _ in states if state == ModelState.RUNNING
    ]  # e.g. the task of a killed driver
    if still_failed or unfinished or elsewhere or analysis_code:
        print(
            f"ocg: {len(still_failed)} model(s) failed: {still_failed}"
            if still_failed
            else f"ocg: {len(unfinished)} model(s) not run: {unfinished}"
            if unfinished
            else f"ocg: {len(elsewhere)} model(s) busy, still running elsewhere: {elsewhere}; the report "
            "leaves them out until a rerun after they end"
            if elsewhere
            else "ocg: the analyses failed (see logs/analysis.log)",
            file=sys.stderr,
        )
        return 1
    return 0
