"""What the landing page says beside its numbers: a legend of the metrics (from their
declarations, ocg/metrics/registry.py), the reason beside each missing value, which model
computed perplexity, the paper's other tables with a link to the notebook and method behind
each, notebook 10's positions, and docs/METHODS.md rendered into the report, with a table of
contents and an anchor per section that every "docs/METHODS.md, '<section>'" link lands on."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from ..analysis.paper_tables import wide
from ..core.layout import ExecutedNotebook, ReportFolder
from ..core.notebook_names import (
    POS_PATTERNS,
    POSITIONS,
    PRIMING,
    REASONING_MODELS,
    SAMPLES,
    TEMPLATES,
)
from ..metrics.registry import FAMILIES, metric
from .methods_page import methods_link

# The paper's tables beyond Table 1: (table, title, notebook, METHODS section, rows, beside each value)
OTHER_TABLES = (
    (
        "table2",
        "Table 2: by the concepts' parts of speech (mean and SD over models)",
        POS_PATTERNS,
        "Analyses",
        "pos_pattern",
        "mean_over_llms",
        "sd_over_llms",
    ),
    (
        "table3",
        "Table 3: by template, with and without “in the specified order” (mean and SD over models)",
        TEMPLATES,
        "Analyses",
        ["template_id", "condition"],
        "mean_over_llms",
        "sd_over_llms",
    ),
    (
        "table4",
        "Table 4: one-shot priming (Δ: one-shot minus zero-shot)",
        PRIMING,
        "Analyses",
        "model",
        "value",
        "delta_vs_zero_shot_ordered",
    ),
    (
        "table7",
        "Table 7: reasoning models beside their base models (template 0)",
        REASONING_MODELS,
        "Analyses",
        ["pair", "role", "model"],
        "value",
        "delta_vs_original_commongen",
    ),
)


def _esc(x) -> str:
    return html.escape(str(x))


def legend(metric_names) -> str:
    """One line per metric shown: its label, which way is better, its unit and what it is."""
    items = []
    for name in metric_names:
        m = metric(name)
        if m is None:
            continue
        arrow = "↑ higher is better" if m.higher_is_better else "↓ lower is better"
        items.append(f"<dt>{_esc(m.label)}</dt><dd>{_esc(m.what)} ({_esc(m.unit)}; {arrow})</dd>")
    return (
        (
            "<details class='legend'><summary>What the columns mean</summary><dl>"
            + "".join(items)
            + "<dt>Δ</dt><dd>the difference from the comparison the table names (ours minus it)</dd>"
            "<dt>–</dt><dd>no value: the reason is given under Table 1 (a metric whose family was not scored, or whose model is not here)</dd></dl></details>"
        )
        if items
        else ""
    )


def missing_reasons(summary: pd.DataFrame, signatures: dict) -> str:
    """Why a metric has no value (a checkpoint not here), and which model gave perplexity."""
    lines = []
    for column in sorted(c for c in summary.columns if c.endswith("_missing_reason")):
        name = column.removesuffix("_missing_reason")
        reasons = summary.dropna(subset=[column]).groupby(column)["model"].unique()
        for reason, models in reasons.items():
            family = FAMILIES.get(name)  # a family of several metrics (semantic: Vendi and Cosine)
            label = (
                metric(name).label
                if metric(name)
                else " and ".join(m.label for m in family.metrics)
                if family and family.metrics
                else name
            )
            lines.append(
                f"<b>{_esc(label)}</b> is missing for {_esc(', '.join(sorted(models)))}: {_esc(reason)}"
            )
    used = {}
    for model, sig in signatures.items():
        block = sig.family("perplexity")
        if block.get("used") and block.get("used") != block.get("requested"):
            used.setdefault((block["used"], block["requested"]), []).append(model)
    for (model_used, requested), models in used.items():
        lines.append(
            f"<b>Perplexity</b> of {_esc(', '.join(sorted(models)))} comes from <code>{_esc(model_used)}</code>, "
            f"not the paper's <code>{_esc(requested)}</code> (not available here): compare it "
            "only with perplexities from the same model."
        )
    return "".join(f"<p class='note'>{line}</p>" for line in lines)


def notebook_link(report_dir: Path, notebook: str, text: str | None = None) -> str:
    """A link to a notebook's results page in the report (its whole page where that is all there is)."""
    pages = ExecutedNotebook(report_dir, notebook)
    target = pages.results_page if pages.results_page.exists() else pages.page
    return f"<a href='{_esc(target.name)}'>{_esc(text or 'notebook ' + notebook)}</a>"


def other_tables(
    report_dir: Path,
    table_html,
    run_notes: dict | None = None,
    medians: dict | None = None,
    slor_medians: dict | None = None,
) -> str:
    """Tables 2, 3, 4 and 7 as this report computed them, each with its legend and sources, the
    run file's note on a table (`run_notes`: table7 -> the run's `table7_note`), and the
    perplexity and SLOR medians beside each mean (`medians`, `slor_medians`: table4 -> {model: median})."""
    from .caveats import mark_perplexity, mark_slor

    report, parts = ReportFolder(report_dir), []
    for table, title, notebook, section, index, value, beside in OTHER_TABLES:
        path = report.table(table)
        if not path.exists():
            continue
        try:  # one table that cannot be read (edited by hand, an older format) costs only itself
            long = pd.read_csv(path)
            if long.empty:
                continue
            shown = wide(long, index, value, beside)
        except (KeyError, ValueError, pd.errors.ParserError) as exc:
            parts.append(
                f"<h2>{_esc(title)}</h2><p class='note'>{_esc(path.name)} cannot be shown: "
                f"{_esc(type(exc).__name__)}: {_esc(exc)}</p>"
            )
            continue
        shown.columns = pd.MultiIndex.from_tuples(
            [(metric(m).label if metric(m) else m, sub) for m, sub in shown.columns]
        )
        shown = mark_slor(
            mark_perplexity(shown, (medians or {}).get(table, {})),
            (slor_medians or {}).get(table, {}),
        )
        reasons = (
            long.dropna(subset=["missing_reason"]).groupby("metric")["missing_reason"].first()
            if "missing_reason" in long
            else {}
        )
        notes = "".join(
            f"<p class='note'><b>{_esc(metric(m).label if metric(m) else m)}</b> is missing: "
            f"{_esc(r)}</p>"
            for m, r in dict(reasons).items()
        )
        if (run_notes or {}).get(table):
            notes = (
                f"<p class='note'><b>Note from the run file:</b> {_esc(run_notes[table])}</p>"
                + notes
            )
        parts.append(
            f"<h2>{_esc(title)}</h2><p class='sub'>From {notebook_link(report_dir, notebook)}; "
            f"method: {methods_link(report_dir, section)}; <a href='{_esc(path.relative_to(report_dir).as_posix())}'>CSV</a>.</p>"
            + table_html(shown)
            + notes
            + legend(long["metric"].unique())
        )
    return "".join(parts)


def pass_at_k(report_dir: Path, table_html) -> str:
    """Ordered pass@k (notebook 11), where the run drew more than one sample per prompt."""
    path = ReportFolder(report_dir).table("pass_at_k")
    try:
        long = pd.read_csv(path, comment="#") if path.exists() else pd.DataFrame()
        shown = (
            long.pivot(index=["model", "condition"], columns="k", values="pass_at_k")
            if len(long)
            else None
        )
    except (KeyError, ValueError, pd.errors.ParserError) as exc:
        return (
            f"<h2>Ordered pass@k</h2><p class='note'>{_esc(path.name)} cannot be shown: "
            f"{_esc(type(exc).__name__)}: {_esc(exc)}</p>"
        )
    if shown is None:
        return ""
    shown.columns = [f"k = {k}" for k in shown.columns]
    return (
        "<h2>Ordered pass@k: at least one of k samples composes the list in order</h2>"
        f"<p class='sub'>Percent of instances, mean over templates, unbiased from each instance's "
        f"{_esc(', '.join(map(str, sorted(long['n_samples'].unique()))))} samples (Chen et al., 2021). "
        f"From {notebook_link(report_dir, SAMPLES)}; method: "
        f"{methods_link(report_dir, 'Repeated samples and pass@k')}; "
        f"<a href='{_esc(path.relative_to(report_dir).as_posix())}'>CSV</a>.</p>"
        + table_html(shown)
    )


def positions_section(report_dir: Path, table_html) -> str:
    """Notebook 10 (where order breaks): by asked place, and which pairs of places swap."""
    from ..analysis.positions import position_wide, swaps_wide

    report, parts = ReportFolder(report_dir), []
    for name, show, what in (
        (
            "positions_by_place",
            lambda t: position_wide(t, ["present_pct", "in_place_pct"]),
            "% of answers with the concept asked at each place (present), and with it at that place among the concepts (in place)",
        ),
        (
            "positions_out_of_order",
            swaps_wide,
            "column i–j: among answers with the concepts asked i-th and j-th, % that write the j-th first",
        ),
    ):
        path = report.table(name)
        try:
            long = pd.read_csv(path) if path.exists() else pd.DataFrame()
            if long.empty:
                continue
            parts.append(
                f"<p class='sub'>{_esc(what)} (<a href='{_esc(path.relative_to(report_dir).as_posix())}'>CSV</a>)."
                f"</p>" + table_html(show(long))
            )
        except (KeyError, ValueError, pd.errors.ParserError) as exc:
            parts.append(
                f"<p class='note'>{_esc(path.name)} cannot be shown: {_esc(type(exc).__name__)}: {_esc(exc)}</p>"
            )
    if not parts:
        return ""
    return (
        "<h2>Where order breaks: by the place each concept was asked in</h2><p class='sub'>From "
        f"{notebook_link(report_dir, POSITIONS)} (preferred orders and the first concept's part of speech "
        f"there too); method: {methods_link(report_dir, 'Where order breaks')}.</p>"
        + "".join(parts)
    )
