"""The report's landing page: index.html, static and self-contained (opens from disk).

What was run (and each model's design, with a warning where models answered different instances
or not all that was asked), the case browser, the headline table (Table 1, ours beside the
paper's, with its caveats), the sensitivity view, the models beside reference sentences (where
the run holds a reference entry), the paper's other tables, where order breaks,
ordered pass@k, Figures 3 and 4 inline, one status line per model, the scoring signatures (with a
warning where models differ), then links to every notebook, table and figure, and
docs/METHODS.md rendered beside it. The sections give data; templates/landing.html lays it out.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from pathlib import Path

from ..analysis.paper_tables import summary_medians
from ..analysis.references import left_out
from ..analysis.skew import self_scored, self_scored_note
from ..config.checked_run import CheckedRun
from ..config.run_file import RunFile
from ..core.clock import utc_now
from ..core.files import atomic_path
from ..core.layout import ExecutedNotebook, ModelScores, ReportFolder
from ..core.paths import PROJECT_ROOT
from ..core.provenance import git_state
from ..data.instances import PERMUTATION_SEED
from ..metrics.degenerate import FLAG_COLUMNS, FLAG_HELP
from ..results.designs import tables_note
from ..results.scores import Scores, instance_keys, load_scores
from ..scoring.scoreset import holds_scores, unfinished_reason
from . import (
    caveats,
    explain,
    methods_page,
    model_table,
    notebook_sections,
    references_section,
    sections,
    trust,
)
from .browser import write_case_browser_from
from .render import Link, render
from .results_file import write_results


@dataclass(frozen=True)
class Figure:
    """A figure of the report, inlined as a data: address so the page stands alone."""

    caption: str
    src: str
    note: str = ""  # the reference entries left out of its counts of models


def _figure(report_dir: Path, name: str, caption: str, note: str = "") -> Figure | None:
    path = ReportFolder(report_dir).figure(name)
    if not path.exists():
        return None
    data = base64.b64encode(path.read_bytes()).decode()
    return Figure(caption, "data:image/png;base64," + data, note)


@dataclass(frozen=True)
class Warnings:
    """Incomplete generations and different instance sets, as the tables saw them."""

    lines: list[str]
    method: Link


def _warnings(scores: Scores, scores_root, scored: list[str], report_dir: Path) -> Warnings | None:
    lines = list(scores.incomplete) + (
        tables_note(instance_keys([ModelScores.of(m, scores_root).folder for m in scored]))
        if len(scored) > 1
        else []
    )
    if not lines:
        return None
    return Warnings(
        [str(line) for line in lines],
        methods_page.methods_link(report_dir, "The instances models share"),
    )


@dataclass(frozen=True)
class NotebookPage:
    """A notebook's page, and its results page (its code hidden) where there is one."""

    name: str
    href: str
    results: str | None


def _notebook_page(report_dir: Path, name: str, href: str) -> NotebookPage:
    results = ExecutedNotebook(report_dir, Path(href).stem).results_page
    return NotebookPage(name, href, results.name if results.exists() else None)


def _permutations(file: RunFile) -> str:
    """'all 120 permutations', or '3 of 120 permutations per set (seeded sample, seed 0)'."""
    total = math.factorial(file.n_concepts)
    if not file.permutations:
        return f"all {total} permutations"
    return f"{file.permutations} of {total} permutations per set (seeded sample, seed {PERMUTATION_SEED})"


def _decoding(file: RunFile) -> str:
    """'greedy, one answer per prompt', or '4 sampled answers per prompt (temperature 0.7, top_p 0.95)'."""
    sampling = file.sampling
    if not sampling:
        return "greedy, one answer per prompt"
    return (
        f"{file.samples} sampled answer{'s' * (file.samples > 1)} per prompt "
        f"(temperature {sampling.temperature:g}, top_p {sampling.top_p:g}, a seed per sample)"
    )


def _lists_counted(designs: dict, short: bool = False) -> str:
    """' (of 3)' (short) or ' (3 of 120 permutations per set, a seeded sample)': the permutations
    the scored answers hold, from their designs (nothing when none was scored)."""
    ds = [d for d in designs.values() if d.get("permutations")]
    if not ds:
        return ""
    present, total = max(d["permutations"] for d in ds), max(d["of_permutations"] for d in ds)
    if short:
        return f" (of {present})"
    return (
        f" (all {total} permutations per set)"
        if present == total
        else f" ({present} of {total} permutations per set, a seeded sample)"
    )


@dataclass(frozen=True)
class Header:
    """What was run, under the title: the run's design, and when and from which commit."""

    models: str
    conditions: str
    sets: str  # '2 concept sets of 4 concepts'
    permutations: str
    templates: str
    decoding: str
    written: str
    commit: str
    dirty: bool
    run_file: str


def _shown(path: Path) -> str:
    """A run file inside the checkout as the project names it (params/runs/demo.yaml), so the page
    does not carry the machine's folders; one elsewhere in full."""
    return str(path.relative_to(PROJECT_ROOT)) if path.is_relative_to(PROJECT_ROOT) else str(path)


def _header(run: CheckedRun) -> Header:
    git = git_state()
    file = run.file
    return Header(
        models=", ".join(file.models),
        conditions=", ".join(file.conditions),
        sets=f"{file.subset_k or 'all'} concept set{'' if file.subset_k == 1 else 's'} "
        f"of {file.n_concepts} concepts",
        permutations=_permutations(file),
        templates=str(file.template_ids or "all six"),
        decoding=_decoding(file),
        written=f"{utc_now():%Y-%m-%d %H:%M}",
        commit=str(git["commit"])[:12],
        dirty=bool(git.get("dirty")),
        run_file=_shown(run.path),
    )


def write_index(
    report_dir: str | Path,
    title: str,
    pages: list[tuple[str, str]],
    *,
    run: CheckedRun,
    scores_root: str | Path,
    generations_root: str | Path,
    failures: dict | None = None,
) -> Path:
    """index.html (with the case browser, methods.html and results.json) for a report directory:
    `pages` are the notebooks' (name, page) in order; `run` the run (or sweep) it reports;
    `scores_root` and `generations_root` the folders its scores and generations lie under;
    `failures` a failed model's notebook, cell and reason, by model."""
    report_dir = Path(report_dir)
    report = ReportFolder(report_dir)
    failures = failures or {}
    file = run.file
    models = list(file.models)
    unfinished = {
        m: unfinished_reason(ModelScores.of(m, scores_root).folder)
        for m in models
        if holds_scores(ModelScores.of(m, scores_root).folder)
    }
    scored = [m for m, reason in unfinished.items() if reason is None]
    scores = (
        load_scores(
            scores_root, scored, allow_mixed=True, tables=("summary",), allow_incomplete=True
        )
        if scored
        else Scores.empty()
    )
    if scored:  # one model at a time: at paper size all answers would not fit in memory
        write_case_browser_from(report_dir, scored, scores_root, generations_root, progress=True)
    header = _header(run)
    methods_page.write_methods(report_dir)
    write_results(
        report_dir, run, scores, generations_root
    )  # results.json: the numbers, machine-readable
    beside = references_section.references(report_dir, run, scores, scored, scores_root)
    files = [report.results.name] + sorted(
        p.relative_to(report_dir).as_posix()
        for sub in (report.tables, report.figures)
        for p in sub.glob("*")
        if p.is_file()
    )
    # perplexity and SLOR scored by a compared model: not bolded across models (analysis/skew.py)
    scorers = self_scored(scores.signatures, dict(run.entries))
    page = render(
        "landing.html",
        title=title,
        header=header,
        methods=report.methods.name,
        warnings=_warnings(scores, scores_root, scored, report_dir),
        cases=report.cases.name if scored else None,
        trust=trust.trust_line(scores),
        headline=sections.headline(report_dir, scores, scorers),
        sensitivity=sections.sensitivity(report_dir),
        references=beside,
        other_tables=explain.other_tables(
            report_dir,
            {"table7": file.table7_note or ""},
            {"table4": summary_medians(scores.summary, "ordered_one_shot")},
            {"table4": summary_medians(scores.summary, "ordered_one_shot", "slor")},
            self_scored=self_scored_note(scorers),
            left_out=left_out(scores),
        ),
        forced=sections.forced(report_dir),
        positions=notebook_sections.positions_section(report_dir),
        pass_at_k=notebook_sections.pass_at_k(report_dir),
        figures=[
            f
            for f in (
                _figure(
                    report_dir,
                    "figure3",
                    "Figure 3: ordered concept lists by number of models that composed them"
                    + _lists_counted(scores.designs),
                    left_out(scores, "the counts of models"),
                ),
                _figure(
                    report_dir,
                    "figure4",
                    f"Figure 4: permutations composed{_lists_counted(scores.designs, True)} "
                    "per concept set, by model threshold",
                    left_out(scores, "the counts of models"),
                ),
            )
            if f
        ],
        models=model_table.model_rows(models, generations_root, scores, failures, unfinished),
        flags=[(f.replace("_", " "), FLAG_HELP[f]) for f in FLAG_COLUMNS],
        flags_methods=[
            methods_page.methods_link(report_dir, s)
            for s in ("Answer flags", "Answers that copy the list")
        ],
        batch=caveats.batch_line(report_dir, models, generations_root),
        signatures=model_table.signatures(scores.signatures),
        notebooks=[_notebook_page(report_dir, n, h) for n, h in pages],
        files=files,
    )
    path = report.index
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path
