"""The main job: the numbered notebooks run in order with papermill, as a run file says.

00 builds the data, 01 generates with each model, 02 scores, 03-09 analyse. Every executed
notebook and its HTML land in outputs/reports/<run name>/, with tables/, figures/ and an
index.html linking them. A failing notebook stops the run; its partial executed copy (with
the error shown) is kept, and the failing notebook, cell and error are printed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .data import dataset_name
from .io import read_yaml
from .notebooks import run_notebook
from .paths import PARAMS_DIR, data_dir, generations_dir, reports_dir, scores_dir
from .plan import Dirs, analysis_steps, notebook_params
from .runconfig import check_common

DEMO_RUN = PARAMS_DIR / "runs" / "demo.yaml"


def load_run(path: str | Path = DEMO_RUN) -> dict:
    """A run file, validated completely (ocg/runconfig.py) before any work."""
    path = Path(path)
    return check_common(read_yaml(path), path, {})


def steps(run: dict, report_dir: Path) -> list[tuple[str, dict, str]]:
    """(notebook, parameters, name of the executed copy) in order: 00, 01 per model, 02, 03-09."""
    dirs = Dirs(generations=generations_dir(), scores=scores_dir(), reports=report_dir,
                dataset=data_dir() / dataset_name(run["n_concepts"]))
    plan = [("00_build_data", notebook_params("00_build_data", run, dirs, []), "00_build_data")]
    for model in run["models"]:
        if "01_generate" in run["notebooks"]:
            plan.append(("01_generate", notebook_params("01_generate", run, dirs, [model]),
                         f"01_generate-{model}"))
    if "02_score" in run["notebooks"]:
        plan.append(("02_score", notebook_params("02_score", run, dirs, run["models"]), "02_score"))
    plan += [(nb, params, nb) for nb, params in analysis_steps(run, dirs, run["models"])]
    return plan


class StepFailed(RuntimeError):
    """A notebook of the pipeline failed; the message names notebook, cell, error and copy."""


def run_step(notebook: str, params: dict, report_dir: Path, name: str) -> Path:
    import papermill

    try:
        return run_notebook(notebook, params, out_dir=report_dir, out_name=name, progress=True)
    except papermill.PapermillExecutionError as exc:
        partial = report_dir / f"{name}.ipynb"
        raise StepFailed(f"notebook {notebook} failed in cell {exc.exec_count} (cell index "
                         f"{exc.cell_index}): {exc.ename}: {exc.evalue}\n"
                         f"     partial executed copy, error shown: {partial}\n"
                         f"     rendered: {partial.with_suffix('.html')}") from exc


def run_pipeline(run_file: str | Path | None = None) -> int:
    from .analysis.site import write_index

    run = load_run(run_file or DEMO_RUN)
    report_dir = reports_dir() / run["name"]
    report_dir.mkdir(parents=True, exist_ok=True)
    pages = []
    plan = steps(run, report_dir)
    for i, (notebook, params, name) in enumerate(plan, start=1):
        print(f"[{i}/{len(plan)}] {name}", flush=True)
        try:
            executed = run_step(notebook, params, report_dir, name)
        except StepFailed as exc:
            print(f"\nocg: {exc}", file=sys.stderr)
            return 1
        pages.append((name, executed.with_suffix(".html").name))
    index = write_index(report_dir, f"ocg report: {run['name']}", pages, run=run,
                        scores_root=scores_dir(), generations_root=generations_dir())
    print(f"\nreport: {index}")
    return 0
