"""The report's landing page: index.html, static and self-contained (opens from disk).

What was run (and each model's design, with a warning where models answered different instances
or not all that was asked), the case browser, the headline table (Table 1, ours beside the
paper's, with its caveats), the sensitivity view, the paper's other tables, where order breaks,
ordered pass@k, Figures 3 and 4 inline, one status line per model, the scoring signatures (with a
warning where models differ), then links to every notebook, table and figure, and
docs/METHODS.md rendered beside it.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..analysis.paper_tables import summary_medians
from ..config.checked_run import CheckedRun
from ..config.run_file import RunFile
from ..core.files import atomic_path
from ..core.layout import ExecutedNotebook, ModelScores, ReportFolder
from ..core.provenance import git_state
from ..data.instances import PERMUTATION_SEED
from ..metrics.degenerate import FLAG_COLUMNS, FLAG_HELP
from ..results.designs import tables_note
from ..results.scores import instance_keys, load_scores
from ..scoring.scoreset import holds_scores, unfinished_reason
from . import caveats, explain, methods_page, model_table, sections
from .browser import write_case_browser_from
from .results_file import write_results

_CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.1em} h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.sub{color:#555;margin-top:0} table{border-collapse:collapse;font-size:.88em;margin:.5em 0} th,td{border-bottom:1px solid #e3e3e3;padding:.3em .55em;text-align:right}
th{background:#f4f6f8} td:first-child,th:first-child{text-align:left} .ok{color:#1a7f37;font-weight:600} .bad{color:#c62828;font-weight:600}
.warn{background:#fff4ce;border:1px solid #e0c060;border-radius:6px;padding:.6em 1em} img{max-width:100%;border:1px solid #eee}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(26em,1fr));gap:1em} code{font-size:.9em;background:#f4f4f4;padding:0 3px}
ul.links{columns:2} .muted{color:#777} .note{margin:.3em 0;color:#5a4a00} dt{font-weight:600} dd{margin:0 0 .3em 1.5em}
details{margin:.5em 0} summary{cursor:pointer;color:#135} .scroll{overflow-x:auto} /* its key column stays: */
.scroll tr>:first-child{position:sticky;left:0;z-index:1;background:#fff} .scroll tr>th:first-child{background:#f4f6f8}"""


def _esc(x) -> str:
    return html.escape(str(x))


def _table_html(df: pd.DataFrame) -> str:
    return df.to_html(
        float_format=lambda v: f"{v:.2f}",
        na_rep="–",
        border=0,
        escape=True,  # every row's first
        sparsify=None if df.index.nlevels == 1 else False,
    )  # cell its key (no rowspan): .scroll keeps it


def _figure(report_dir: Path, name: str, caption: str) -> str:
    path = ReportFolder(report_dir).figure(name)
    if not path.exists():
        return ""
    data = base64.b64encode(path.read_bytes()).decode()
    return f"<figure><img alt='{_esc(caption)}' src='data:image/png;base64,{data}'><figcaption>{_esc(caption)}</figcaption></figure>"


def _warnings(scores: dict, scores_root, scored: list[str], report_dir: Path) -> str:
    """Incomplete generations and different instance sets, as the tables saw them."""
    lines = scores.get("incomplete", []) + (
        tables_note(instance_keys([ModelScores.of(m, scores_root).folder for m in scored]))
        if len(scored) > 1
        else []
    )
    if not lines:
        return ""
    return (
        "<div class='warn'><b>Not every model answered what was asked, or the same instances</b> "
        f"({methods_page.methods_link(report_dir, 'The instances models share')}):<ul>"
        + "".join(f"<li>{_esc(line)}</li>" for line in lines)
        + "</ul></div>"
    )


def _notebook_link(report_dir: Path, name: str, href: str) -> str:
    """A notebook's results page (its code hidden), and the whole notebook beside it."""
    results = ExecutedNotebook(report_dir, Path(href).stem).results_page
    if not results.exists():
        return f"<a href='{_esc(href)}'>{_esc(name)}</a>"
    return f"<a href='{_esc(results.name)}'>{_esc(name)}</a> (<a href='{_esc(href)}'>with code</a>)"


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
class SiteInputs:
    """What a landing page is written from besides its folder, title and notebook pages: the run
    (or sweep) it reports, the roots its scores and generations lie under, the failed notebooks."""

    run: CheckedRun
    scores_root: str | Path
    generations_root: str | Path
    failures: dict | None = None


def write_index(report_dir: str | Path, title: str, pages: list[tuple[str, str]], **inputs) -> Path:
    """index.html (and the case browser) for a report directory; `inputs`: the fields of
    SiteInputs (run, scores_root, generations_root, failures), by name."""
    given = SiteInputs(**inputs)
    run, scores_root, generations_root = given.run, given.scores_root, given.generations_root
    report_dir = Path(report_dir)
    report = ReportFolder(report_dir)
    failures = given.failures or {}
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
        else {"summary": pd.DataFrame(), "signatures": {}, "designs": {}}
    )
    browser = ""
    if scored:  # one model at a time: at paper size all answers would not fit in memory
        write_case_browser_from(report_dir, scored, scores_root, generations_root, progress=True)
        browser = f"<p><a href='{report.cases.name}'><b>Case browser</b></a>: every answer, filterable by model, condition, template, concept set, permutation and outcome, with the matched tokens highlighted.</p>"
    git = git_state()
    what = (
        f"<p class='sub'>Models: {_esc(', '.join(models))}<br>Conditions: {_esc(', '.join(file.conditions))}; "
        f"{_esc(file.subset_k or 'all')} concept set{'' if file.subset_k == 1 else 's'} of {_esc(file.n_concepts)} concepts; "
        f"{_esc(_permutations(file))}; templates: "
        f"{_esc(file.template_ids or 'all six')}; {_esc(_decoding(file))}<br>Written {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC "
        f"from git commit <code>{_esc(str(git['commit'])[:12])}</code>{' (with uncommitted changes)' if git.get('dirty') else ''}"
        f"; run file <code>{_esc(run.path)}</code><br>Every definition and choice: "
        f"<a href='{_esc(report.methods.name)}'>docs/METHODS.md</a></p>"
    )
    methods_page.write_methods(report_dir)
    write_results(
        report_dir, run, scores, generations_root
    )  # results.json: the numbers, machine-readable
    files = [report.results.name] + sorted(
        p.relative_to(report_dir).as_posix()
        for sub in (report.tables, report.figures)
        for p in sub.glob("*")
        if p.is_file()
    )
    body = [
        f"<h1>{_esc(title)}</h1>",
        what,
        _warnings(scores, scores_root, scored, report_dir),
        browser,
        "<h2>Table 1: zero-shot, with “in the specified order” (mean over templates)</h2>",
        sections.headline(report_dir, scores, _table_html),
        "<h2>How much the open choices move Table 1</h2>",
        sections.sensitivity(report_dir, _table_html),
        explain.other_tables(
            report_dir,
            _table_html,
            {"table7": file.table7_note},
            {"table4": summary_medians(scores["summary"], "ordered_one_shot")},
            {"table4": summary_medians(scores["summary"], "ordered_one_shot", "slor")},
        ),
        sections.forced(report_dir, _table_html),
        explain.positions_section(report_dir, _table_html),
        explain.pass_at_k(report_dir, _table_html),
        "<h2>Figures 3 and 4: which ordered concept lists the models composed</h2><div class='figs'>",
        _figure(
            report_dir,
            "figure3",
            "Figure 3: ordered concept lists by number of models that composed them"
            + _lists_counted(scores["designs"]),
        ),
        _figure(
            report_dir,
            "figure4",
            f"Figure 4: permutations composed{_lists_counted(scores['designs'], True)} "
            "per concept set, by model threshold",
        ),
        "</div><h2>Models</h2>",
        model_table.model_rows(models, generations_root, scores, failures, unfinished),
        f"<details id='flags'><summary>What the answer flags mean ({methods_page.methods_link(report_dir, 'Answer flags')}"
        f", {methods_page.methods_link(report_dir, 'Answers that copy the list')})</summary><dl>"
        + "".join(
            f"<dt>{_esc(f.replace('_', ' '))}</dt><dd>{_esc(FLAG_HELP[f])}</dd>"
            for f in FLAG_COLUMNS
        )
        + "</dl></details>"
        + caveats.batch_line(report_dir, models, generations_root),
        "<h2>How the scores were computed</h2>",
        model_table.signatures(scores["signatures"]),
        "<h2>Notebooks</h2><ol>"
        + "".join(f"<li>{_notebook_link(report_dir, n, h)}</li>" for n, h in pages)
        + "</ol>",
        "<h2>Tables and figures</h2><ul class='links'>"
        + "".join(f"<li><a href='{_esc(f)}'>{_esc(f)}</a></li>" for f in files)
        + "</ul>",
    ]
    page = (
        f"<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><title>{_esc(title)}</title>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
    path = report.index
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path
