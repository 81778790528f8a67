"""Sweeps: many models, each running notebooks 01 and 02, then the analyses once over all.

One plan, two executors. Every model task is the same command,
`python -m ocg.cli sweep FILE --task MODEL`, run one after another here (local) or as one Slurm
array task per model (slurm). Each task writes a completion marker per notebook, or a
failed.json saying why; `--status` reads those and Slurm's queue. A re-run submits only the
models that are neither done nor running; a failing model never stops the others.

Layout under the sweep's `outputs` directory:
  generations/<model>/, scores/<model>/        what notebooks 01 and 02 write
  notebooks/<model>/<notebook>.{ipynb,html}    executed notebooks of each model
  status/<sweep name>/<model>/<notebook>.done, failed.json  completion markers (per sweep name,
                                               so sweeps can share generations: Table 4's adds
                                               one-shot answers beside the paper sweep's)
  logs/<model>.log, logs/slurm-<job>_<index>.out, logs/analysis.log
  reports/<sweep name>/                        the analyses, tables, figures, index.html
  status/<sweep name>/<model>/interrupted.json  a task stopped at its time-limit warning (it requeues)
  status/<sweep name>/analysis.json            the analyses' state and the models their report covers
  slurm/array.sbatch, analysis.sbatch, manifest.json (manifest.dry-run.json: what a dry run would submit)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import OcgInputError
from ..core.lock import exclusive
from ..jobs.plan import analysis_steps, check_plan, model_steps
from .config import Sweep, load_sweep, resources_for
from .slurm import submit_slurm, wait_slurm
from .state import ModelState, print_status, status_table, sweep_dirs
from .tasks import run_analysis, run_local, run_model_task

__all__ = [
    "Driving",
    "check_sweep",
    "load_sweep",
    "model_steps",
    "resources_for",
    "run_sweep",
    "status_table",
    "sweep_dirs",
]


@dataclass(frozen=True)
class Driving:
    """How a sweep's driver runs its model tasks: one after another here (local) or as Slurm
    arrays, waiting for them (up to `wait_timeout_s`) or not, or only saying what it would
    submit (dry_run)."""

    executor: str = "local"
    wait: bool = False
    dry_run: bool = False
    wait_timeout_s: float = 24 * 3600


def check_sweep(path: str | Path) -> int:
    """`ocg sweep FILE --check`: the sweep file loaded and the plan of every model's task and of
    the analyses checked as the tasks would (ocg/jobs/plan.py, `check_plan`); nothing written."""
    sweep = load_sweep(path)
    dirs = sweep_dirs(sweep)
    plan = [
        (nb, params, f"{nb}-{model}")
        for model in sweep.file.models
        for nb, params in model_steps(sweep, dirs, model)
    ]
    names = check_plan(sweep, plan + analysis_steps(sweep, dirs, list(sweep.file.models)))
    print(f"{sweep.path}: {len(names)} steps, checked")
    for i, name in enumerate(names, start=1):
        print(f"[{i}/{len(names)}] {name}")
    return 0


def run_sweep(
    path: str | Path,
    driving: Driving = Driving(),
    status: bool = False,
    task: str | None = None,
    analysis: bool = False,
) -> int:
    """One model's task, the analyses, the status, or (by default) the driver over all models."""
    sweep = load_sweep(path)
    if task:
        return run_model_task(sweep, task)
    if analysis:
        return run_analysis(sweep)
    if status:
        print_status(sweep)
        return 0
    if driving.executor not in ("local", "slurm"):
        raise OcgInputError("--executor", f"got {driving.executor!r}; expected local or slurm")
    # One driver per sweep folder: a second is refused at once, naming the holder. Model tasks
    # (--task) and the analyses take their own locks, so a driver can run them while it holds this.
    with exclusive(sweep.folder.root, doing="is running a sweep in this folder"):
        return _drive(sweep, driving)


def _drive(sweep: Sweep, driving: Driving) -> int:
    if driving.executor == "local":
        return run_local(sweep)
    if driving.executor == "slurm":
        submit_slurm(sweep, dry_run=driving.dry_run)
        if driving.wait and not driving.dry_run:
            finished = wait_slurm(sweep, timeout_s=driving.wait_timeout_s)
            print_status(sweep)
            if not finished:
                return 124
            return (
                1 if any(st != ModelState.DONE for _, st, _ in status_table(sweep)) else 0
            )  # failed, or never finished
    return 0
