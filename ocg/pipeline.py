"""The main job: the numbered notebooks run in order with papermill, as a run file says.

00 builds the data, 01 generates with each model, 02 scores, the analyses follow (the steps: ocg/plan.py;
the loop over them is shared with a sweep's analyses, `run_steps`). Every executed
notebook and its HTML land in outputs/reports/<run name>/, with tables/, figures/ and an
index.html linking them; the run builds them in a fresh folder that replaces the report when
it ends (ocg/staging.py), so no file of an earlier run stays. A failing notebook stops
the run; its partial executed copy (with the error shown) is kept, and the failing notebook,
cell and error are printed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .data import dataset_name
from .io import read_yaml
from .layout import ExecutedNotebook, outputs
from .notebook_runner import run_notebook
from .paths import PARAMS_DIR
from .plan import Dirs, report_steps
from .records import ReportStatus
from .runconfig import check_common
from .staging import building, finish, write_status_page

DEMO_RUN = PARAMS_DIR / "runs" / "demo.yaml"


def load_run(path: str | Path = DEMO_RUN) -> dict:
    """A run file, validated completely (ocg/runconfig.py) before any work."""
    path = Path(path)
    return check_common(read_yaml(path), path)


def steps(run: dict, report_dir: Path) -> list[tuple[str, dict, str]]:
    """(notebook, parameters, name of the executed copy) in order, from ocg/plan.py."""
    out = outputs()
    return report_steps(run, Dirs(generations=out.generations, scores=out.scores, reports=report_dir,
                                  dataset=out.dataset(dataset_name(run["n_concepts"])).folder))


class StepFailed(RuntimeError):
    """A notebook of a report, a sweep's analyses or `ocg run-notebook` failed; the message names
    notebook, cell, error and copy."""


def run_step(notebook: str, params: dict, report_dir: Path, name: str, shown_dir: Path | None = None) -> Path:
    """Execute one notebook into `report_dir`; a failure's message names the copy as it will lie
    in `shown_dir` (the report, once the staging folder is moved into place)."""
    import papermill

    try:
        return run_notebook(notebook, params, out_dir=report_dir, out_name=name, progress=True)
    except papermill.PapermillExecutionError as exc:
        partial = ExecutedNotebook(shown_dir or report_dir, name)
        raise StepFailed(f"notebook {notebook} failed in cell {exc.exec_count} (cell index "
                         f"{exc.cell_index}): {exc.ename}: {exc.evalue}\n"
                         f"     partial executed copy, error shown: {partial.copy}\n"
                         f"     rendered: {partial.page}") from exc


def run_report(run_file: str | Path | None = None) -> int:
    import os

    from .paths import model_cache_dir
    run = load_run(run_file or DEMO_RUN)
    saved = {k: os.environ.get(k) for k in ("OCG_OUTPUTS", "OCG_MODEL_CACHE")}
    if run["outputs"]:  # the run file says where: every notebook's kernel inherits it
        os.environ["OCG_MODEL_CACHE"] = str(model_cache_dir())  # converted models stay where they are
        os.environ["OCG_OUTPUTS"] = run["outputs"]
    try:
        return _staged_report(run)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _staged_report(run: dict) -> int:
    report = outputs().report(run["name"])
    final = report.folder
    with building(final) as staging:
        code, state = _write_report(run, staging, final)
        finish(staging, final, **state)
    print(f"\nreport: {report.index}" if code == 0 else f"\nunfinished report: {report.index}")
    return code


def run_steps(plan: list[tuple[str, dict, str]], staging: Path, final: Path, failed_title: str,
              announce) -> tuple[list[tuple[str, str]], StepFailed | None]:
    """The one loop of `ocg report` and a sweep's analyses: each notebook into `staging` in order.

    Returns the (name, page) of each finished notebook, and the failure that stopped the loop,
    if one did; a failure leaves a status page naming the failed notebook in `staging`.
    `announce(i, n, name)` prints the step's progress line.
    """
    pages = []
    for i, (notebook, params, name) in enumerate(plan, start=1):
        announce(i, len(plan), name)
        try:
            run_step(notebook, params, staging, name, shown_dir=final)
        except StepFailed as exc:
            write_status_page(staging, failed_title, str(exc).splitlines()[0],
                              pages + [(f"{name} (failed)", ExecutedNotebook(staging, name).page.name)])
            return pages, exc
        pages.append((name, ExecutedNotebook(staging, name).page.name))
    return pages, None


def _write_report(run: dict, staging: Path, final: Path) -> tuple[int, dict]:
    """Every notebook into `staging`, then the landing page: (exit code, how the run ended: its
    ReportStamp fields)."""
    from .analysis.site import write_index

    title = f"ocg report: {run['name']}"
    pages, failure = run_steps(steps(run, staging), staging, final, f"{title} (failed)",
                               lambda i, n, name: print(f"[{i}/{n}] {name}", flush=True))
    if failure is not None:
        print(f"\nocg: {failure}", file=sys.stderr)
        return 1, {"state": ReportStatus.FAILED, "reason": str(failure), "notebooks": [n for n, _ in pages]}
    write_index(staging, title, pages, run=run, scores_root=outputs().scores, generations_root=outputs().generations)
    return 0, {"state": ReportStatus.DONE, "notebooks": [n for n, _ in pages]}
