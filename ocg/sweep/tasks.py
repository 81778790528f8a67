"""One model's task (the same under both executors), the analyses, and the local executor."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import traceback

from ..errors import OcgInputError
from ..io import read_json, write_json
from ..paths import PROJECT_ROOT
from ..plan import analysis_steps, model_steps
from .state import (
    _now,
    analysis_marker,
    model_state,
    out_dir,
    print_status,
    status_dir,
    status_table,
    sweep_dirs,
    to_run,
)


def task_command(sweep: dict, model: str = "$MODEL") -> list[str]:
    """The command every model task runs, here or on a Slurm node."""
    return [sys.executable, "-m", "ocg.cli", "sweep", sweep["file"], "--task", model]

def run_model_task(sweep: dict, model: str) -> int:
    """Run the model's notebooks in order; mark each done, or write failed.json and stop."""
    from ..notebooks import run_notebook

    if model not in sweep["models"]:
        raise OcgInputError(sweep["file"], f"{model!r} is not a model of this sweep")
    status = status_dir(sweep, model)
    status.mkdir(parents=True, exist_ok=True)
    (status / "failed.json").unlink(missing_ok=True)
    job = {k: os.environ.get(k) for k in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID")
           if os.environ.get(k)}
    for notebook, params in model_steps(sweep, sweep_dirs(sweep), model):
        marker = status / f"{notebook}.done"
        if marker.exists():
            print(f"[{model}] {notebook}: done already", flush=True)
            continue
        print(f"[{model}] {notebook}: running", flush=True)
        t0 = time.time()
        try:
            executed = run_notebook(notebook, params, out_dir=out_dir(sweep) / "notebooks" / model)
        except Exception as exc:  # noqa: BLE001 - any failure is recorded for --status
            reason = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
            cell = getattr(exc, "exec_count", None)
            write_json(status / "failed.json", {
                "model": model, "notebook": notebook, "cell": cell, "reason": reason.strip()[:2000],
                "executed_notebook": str(out_dir(sweep) / "notebooks" / model / f"{notebook}.ipynb"),
                "log": str(out_dir(sweep) / "logs" / f"{model}.log"), "time_utc": _now(),
                "host": socket.gethostname(), **job})
            print(f"[{model}] {notebook}: FAILED in cell {cell}: {reason}", flush=True)
            traceback.print_exc()
            return 1
        write_json(marker, {"model": model, "notebook": notebook, "executed_notebook": str(executed),
                            "seconds": round(time.time() - t0, 1), "time_utc": _now(),
                            "host": socket.gethostname(), **job})
    print(f"[{model}] done", flush=True)
    return 0

def run_analysis(sweep: dict) -> int:
    """Notebooks 03-09 once over every model whose scoring is done."""
    from ..analysis.site import write_index
    from ..pipeline import StepFailed, run_step

    done = [m for m in sweep["models"] if model_state(sweep, m)[0] == "done"]
    marker = analysis_marker(sweep)
    if not done:
        print("no finished model to analyse", flush=True)
        write_json(marker, {"state": "failed", "reason": "no finished model", "time_utc": _now()})
        return 1
    reports = sweep_dirs(sweep).reports
    pages = []
    for notebook, params in analysis_steps(sweep, sweep_dirs(sweep), done):
        print(f"[analysis] {notebook} over {done}", flush=True)
        try:
            executed = run_step(notebook, params, reports, notebook)
        except StepFailed as exc:
            print(f"[analysis] {exc}", flush=True)
            write_json(marker, {"state": "failed", "reason": str(exc), "models": done, "time_utc": _now()})
            return 1
        pages.append((notebook, executed.with_suffix(".html").name))
    failures = {m: read_json(status_dir(sweep, m) / "failed.json") for m in sweep["models"]
                if (status_dir(sweep, m) / "failed.json").exists()}
    dirs = sweep_dirs(sweep)
    index = write_index(reports, f"ocg sweep: {sweep['name']}", pages, run=sweep, scores_root=dirs.scores,
                        generations_root=dirs.generations, failures=failures)
    write_json(marker, {"state": "done", "report": str(index), "models": done, "time_utc": _now()})
    print(f"[analysis] report: {index}", flush=True)
    return 0

def run_local(sweep: dict) -> int:
    """Each pending model's task as a subprocess, one after another; then the analyses."""
    logs = out_dir(sweep) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    pending = to_run(sweep, with_slurm=False)
    failed = 0
    print(f"sweep {sweep['name']}: {len(pending)} model(s) to run: {pending}", flush=True)
    for model in pending:
        with (logs / f"{model}.log").open("a") as log:
            code = subprocess.call(task_command(sweep, model), stdout=log, stderr=subprocess.STDOUT,
                                   cwd=PROJECT_ROOT)
        outcome = "done" if code == 0 else f"FAILED (exit {code}), see {logs / model}.log"
        print(f"  {model}: {outcome}", flush=True)
        failed += code != 0
    analysed = analysis_marker(sweep)
    stale = not analysed.exists() or read_json(analysed)["state"] != "done"
    analysis_code = 0
    if sweep["analysis"] and (pending or stale):
        with (logs / "analysis.log").open("a") as log:
            analysis_code = subprocess.call([sys.executable, "-m", "ocg.cli", "sweep", sweep["file"], "--analysis"],
                                            stdout=log, stderr=subprocess.STDOUT, cwd=PROJECT_ROOT)
    print_status(sweep)
    still_failed = [m for m, state, _ in status_table(sweep, with_slurm=False) if state == "failed"]
    if still_failed or analysis_code:
        print(f"ocg: {len(still_failed)} model(s) failed: {still_failed}" if still_failed else
              "ocg: the analyses failed (see logs/analysis.log)", file=sys.stderr)
        return 1
    return 0
