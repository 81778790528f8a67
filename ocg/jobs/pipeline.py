"""The main job: the numbered notebooks run in order with papermill, as a run file says.

00 builds the data, 01 generates with each model, 02 scores, the analyses follow (the steps: ocg/jobs/plan.py;
the loop over them is shared with a sweep's analyses, `run_steps`). Every executed
notebook and its HTML land in outputs/reports/<run name>/, with tables/, figures/ and an
index.html linking them; the run builds them in a fresh folder that replaces the report when
it ends (ocg/jobs/staging.py), so no file of an earlier run stays. A failing notebook stops
the run; its partial executed copy (with the error shown) is kept, and the failing notebook,
cell and error are printed.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from ..config.checked_run import CheckedRun
from ..config.requests import StepRequest
from ..core.errors import OcgFault, OcgInputError
from ..core.files import read_yaml
from ..core.layout import ExecutedNotebook, ReportFolder, outputs
from ..core.notebook_names import ANALYSES
from ..core.paths import PARAMS_DIR
from ..data import dataset_name
from ..records import ReportStamp, ReportStatus
from .notebook_runner import run_notebook
from .plan import Dirs, check_plan, report_steps
from .run_checks import check_run
from .staging import building, finish, write_status_page

DEMO_RUN = PARAMS_DIR / "runs" / "demo.yaml"


def load_run(path: str | Path = DEMO_RUN) -> CheckedRun:
    """A run file, validated completely (ocg/jobs/run_checks.py) before any work."""
    path = Path(path)
    return check_run(read_yaml(path), path)


def steps(run: CheckedRun, report_dir: Path) -> list[tuple[str, dict | StepRequest, str]]:
    """(notebook, parameters, name of the executed copy) in order, from ocg/jobs/plan.py; the analyses
    read the report's own score sets (linked after scoring: ocg/scoring/pinned.py)."""
    out = outputs()
    return report_steps(
        run,
        Dirs(
            generations=out.generations,
            scores=out.scores,
            reports=report_dir,
            dataset=out.dataset(dataset_name(run.file.n_concepts)).folder,
            analysis_scores=ReportFolder(report_dir).scores,
        ),
    )


class StepFailed(OcgFault):
    """A notebook of a report, a sweep's analyses or `ocg run-notebook` failed; the message names
    notebook, cell, error and copy."""


def run_step(
    notebook: str,
    params: dict | StepRequest,
    report_dir: Path,
    name: str,
    shown_dir: Path | None = None,
) -> Path:
    """Execute one notebook into `report_dir`; a failure's message names the copy as it will lie
    in `shown_dir` (the report, once the staging folder is moved into place)."""
    import papermill

    try:
        return run_notebook(notebook, params, out_dir=report_dir, out_name=name, progress=True)
    except papermill.PapermillExecutionError as exc:
        partial = ExecutedNotebook(shown_dir or report_dir, name)
        raise StepFailed(
            f"notebook {notebook} failed in cell {exc.exec_count} (cell index "
            f"{exc.cell_index}): {exc.ename}: {exc.evalue}\n"
            f"     partial executed copy, error shown: {partial.copy}\n"
            f"     rendered: {partial.page}"
        ) from exc


def plan_check(run_file: str | Path | None = None) -> int:
    """`ocg report RUN --check`: the run file loaded and its plan checked (ocg/jobs/plan.py,
    `check_plan`) as a report would before any work; the steps printed, nothing written."""
    run = load_run(run_file or DEMO_RUN)
    names = check_plan(run, steps(run, outputs().report(run.file.name).folder))
    print(f"{run.path}: {len(names)} steps, checked")
    for i, name in enumerate(names, start=1):
        print(f"[{i}/{len(names)}] {name}")
    return 0


def run_report(run_file: str | Path | None = None) -> int:
    import os

    run = load_run(run_file or DEMO_RUN)
    saved = os.environ.get("OCG_OUTPUTS")
    if run.file.outputs:  # the run file says where: every notebook's kernel inherits it (the
        os.environ["OCG_OUTPUTS"] = run.file.outputs  # converted models stay where they are)
    try:
        return _staged_report(run)
    finally:
        if saved is None:
            os.environ.pop("OCG_OUTPUTS", None)
        else:
            os.environ["OCG_OUTPUTS"] = saved


def _staged_report(run: CheckedRun) -> int:
    report = outputs().report(run.file.name)
    final = report.folder
    check_plan(run, steps(run, final))  # what a notebook would refuse, refused before any work
    with building(final) as staging:
        try:
            code, stamp, verified = _write_report(run, staging, final)
        except (
            BaseException
        ) as exc:  # a fault (full disk), SIGTERM or Ctrl-C: the build says failed
            _failed(staging, final, run, exc)
            raise
        landed = finish(staging, final, stamp)
    print(
        f"\n{_unfinished(landed, final)}"
        if code != 0
        else f"\nreport: {report.index}"
        if verified
        else f"\nreport (unverified: {report.verify.name} names what broke): {report.index}"
    )
    return code


def _unfinished(landed: Path, final: Path) -> str:
    """Where an unfinished build lies, and whether the finished report before it was kept."""
    line = f"unfinished report: {ReportFolder(landed).index}"
    return line if landed == final else f"{line}; the previous report {final}/ is kept"


def _failed(staging: Path, final: Path, run: CheckedRun, exc: BaseException) -> None:
    """Mark a report that an exception stopped as failed, naming it; as far as the disk allows
    (a full disk may refuse even this: the report then still says building). A finished report
    is kept, the stopped build put beside it (ocg/jobs/staging.py); where, is printed before the
    error line."""
    why = str(exc) or type(exc).__name__
    if isinstance(exc, KeyboardInterrupt) and not str(exc):
        why = "interrupted (Ctrl-C)"
    elif isinstance(exc, BrokenPipeError):
        why = f"the reader of its output went away (broken pipe): {exc}"
    elif isinstance(exc, OSError) and exc.filename:
        why = f"{exc.filename}: {exc.strerror or exc}"
    reason = f"stopped while the report was built: {why}"
    with contextlib.suppress(Exception):
        write_status_page(staging, f"ocg report: {run.file.name} (failed)", reason)
    with contextlib.suppress(Exception):
        landed = finish(staging, final, ReportStamp(state=ReportStatus.FAILED, reason=reason))
        print(_unfinished(landed, final), file=sys.stderr, flush=True)


def run_steps(
    plan: list[tuple[str, dict | StepRequest, str]],
    staging: Path,
    final: Path,
    *,
    failed_title: str,
    announce,
    before_analyses=None,
) -> tuple[list[tuple[str, str]], StepFailed | None]:
    """The one loop of `ocg report` and a sweep's analyses: each notebook into `staging` in order.

    Returns the (name, page) of each finished notebook, and the failure that stopped the loop,
    if one did; a failure leaves a status page naming the failed notebook in `staging`.
    `announce(i, n, name)` prints the step's progress line; `before_analyses()` runs once before
    the first analysis (it pins the score sets they read); an OcgInputError from it stops the loop.
    """
    pages: list[tuple[str, str]] = []
    for i, (notebook, params, name) in enumerate(plan, start=1):
        if before_analyses is not None and notebook in ANALYSES:
            try:
                before_analyses()
            except OcgInputError as exc:
                failure = StepFailed(f"before {name}: the score sets: {exc}")
                write_status_page(staging, failed_title, str(failure), pages)
                return pages, failure
            before_analyses = None
        announce(i, len(plan), name)
        try:
            run_step(notebook, params, staging, name, shown_dir=final)
        except StepFailed as exc:
            write_status_page(
                staging,
                failed_title,
                str(exc).splitlines()[0],
                pages + [(f"{name} (failed)", ExecutedNotebook(staging, name).page.name)],
            )
            return pages, exc
        pages.append((name, ExecutedNotebook(staging, name).page.name))
    return pages, None


def _write_report(run: CheckedRun, staging: Path, final: Path) -> tuple[int, ReportStamp, bool]:
    """Every notebook into `staging`, then the landing page: (exit code, how the run ended: its
    ReportStamp fields, whether `ocg verify`'s invariants held)."""
    from ..scoring.pinned import pin_scores
    from ..site.landing import write_index
    from ..site.verify import verify_report

    title, pinned = f"ocg report: {run.file.name}", ReportFolder(staging).scores
    pages, failure = run_steps(
        steps(run, staging),
        staging,
        final,
        failed_title=f"{title} (failed)",
        announce=lambda i, n, name: print(f"[{i}/{n}] {name}", flush=True),
        before_analyses=lambda: pin_scores(
            outputs().scores, run.file.models, pinned, run.scoring, run.file.metrics
        ),
    )
    if failure is not None:
        print(f"\nocg: {failure}", file=sys.stderr)
        stamp = ReportStamp(
            state=ReportStatus.FAILED, reason=str(failure), notebooks=[n for n, _ in pages]
        )
        return 1, stamp, False
    if not pinned.exists():  # no analysis ran: the landing page reads the sets as they are now
        pin_scores(outputs().scores, run.file.models, pinned, run.scoring, run.file.metrics)
    write_index(
        staging, title, pages, run=run, scores_root=pinned, generations_root=outputs().generations
    )
    # last: the report checked against itself; a broken invariant leaves it done but unverified,
    # which its trust box and the last line say (exit 0: every step ran; `ocg verify` exits 1)
    verdict = verify_report(staging)
    return (
        0,
        ReportStamp(state=ReportStatus.DONE, notebooks=[n for n, _ in pages]),
        verdict.ok,
    )
