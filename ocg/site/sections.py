"""Sections of the landing page that show a notebook's saved tables: Table 1 with its caveats
(the headline), the sensitivity view (notebook 03) and the forced order (notebook 12)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from ..analysis.paper_tables import summary_medians, wide
from ..core.layout import ReportFolder
from ..core.notebook_names import MAIN_RESULTS
from ..metrics.registry import label
from . import caveats
from .explain import legend, missing_reasons, notebook_link
from .judge_note import judge_counts
from .methods_page import methods_link


def _esc(x) -> str:
    return html.escape(str(x))


def headline(report_dir: Path, scores: dict, table_html) -> str:
    """Table 1, ours beside the paper's, with its caveats: the perplexity and SLOR medians, the
    copy marks and share, what each row stands on, and why a model has no row."""
    path = ReportFolder(report_dir).table("table1")
    if not path.exists():
        return "<p class='muted'>Table 1 was not computed in this report.</p>"
    t1 = pd.read_csv(path)

    def labelled(table: pd.DataFrame) -> pd.DataFrame:
        table.columns = pd.MultiIndex.from_tuples(
            [(label(m), "" if k in ("value", "paper") else "Δ") for m, k in table.columns]
        )
        table.index.name = None
        return table

    ours = labelled(wide(t1, "model", "value", "delta_vs_original_commongen"))
    medians = {m: v[1] for m, v in caveats.ppl_medians(report_dir).items()} or summary_medians(
        scores["summary"], "ordered"
    )
    means = t1[t1["metric"] == "perplexity"].set_index("model")["value"]
    marks = caveats.dominated({m: (means[m], v) for m, v in medians.items() if m in means.index})
    parts = [
        "<p>Each value with its difference from the prompt without “in the specified order” (Δ).</p>",
        table_html(
            caveats.mark_copies(
                caveats.mark_slor(
                    caveats.mark_perplexity(ours, medians),
                    summary_medians(scores["summary"], "ordered", "slor"),
                ),
                scores["summary"],
            )
        ),
    ]
    parts += [
        f"<p class='note'>‡ Perplexity of {_esc(m)}: its mean, {mean:.2f}, is over "
        f"{caveats.PPL_MEAN_OVER_MEDIAN}x its median, {median:.2f}: a few answers of extreme perplexity "
        "make it (both per template, then over templates).</p>"
        for m, (mean, median) in marks.items()
    ]
    parts += [
        caveats.copy_mark_note(scores["summary"], report_dir),
        caveats.copy_share(scores["summary"]),
        caveats.table1_basis(report_dir, scores["summary"]),
    ]
    if "paper_value" in t1 and t1["paper_value"].notna().any():
        known = t1[t1["paper_value"].notna()].rename(
            columns={"paper_value": "paper", "paper_delta": "paper Δ"}
        )
        paper = labelled(wide(known, "model", "paper", "paper Δ"))
        parts.append(
            "<p>The paper's published numbers for the same models:</p>" + table_html(paper)
        )
    else:
        parts.append(
            "<p class='muted'>None of these models is in the paper's Table 1 (the paper's numbers: "
            + notebook_link(report_dir, MAIN_RESULTS)
            + ").</p>"
        )
    parts.append(
        missing_reasons(scores["summary"], scores["signatures"])
        + judge_counts(scores["summary"], scores["signatures"])
        if len(scores["summary"])
        else ""
    )
    parts.append(legend(t1["metric"].unique()))
    parts.append(
        f"<p class='sub'>From {notebook_link(report_dir, MAIN_RESULTS)} (with bootstrap intervals "
        f"and a paired test); method: {methods_link(report_dir, 'Metrics')}.</p>"
    )
    return "".join(parts)


def sensitivity(report_dir: Path, table_html) -> str:
    """Table 1 under each matching rule, order reading and perplexity average, and without the
    list copies (notebook 03)."""
    from ..analysis.sensitivity import largest_shifts, wide

    path = ReportFolder(report_dir).table("table1_sensitivity")
    if not path.exists():
        return "<p class='muted'>The sensitivity view was not computed in this report (notebook 03).</p>"
    long = pd.read_csv(path)
    shifts = largest_shifts(long)
    tables = (
        ("coverage", "", wide(long, "coverage")),
        (
            "list copies",
            "<p>Without the answers that copy the concept list, on both sides of the Δ: "
            "excluded (the answers left, <code>ordered</code> / <code>original</code>, beside), or counted as "
            "failures (over all answers, Table 1's denominator: w/ order is then the share of all answers in "
            "order and not a copy); pooled over templates, so Ordered Rate = w/ order / w/o order in each "
            "row.</p>",
            wide(long, "copies"),
        ),
        ("perplexity", "", wide(long, "perplexity")),
    )
    return (
        "<p>Table 1's numbers recomputed under each concept-matching rule (CommonGen's lemma rule among "
        "them), both readings of the order check, without the answers that copy the concept list, and "
        "under three averages of perplexity, beside the default ("
        + methods_link(report_dir, "Analyses")
        + ", Sensitivity); the order reading does not touch "
        "w/o order (–).</p>"
        + (
            "<p><b>Largest shifts:</b></p><ul>"
            + "".join(f"<li>{_esc(t)}</li>" for t in shifts)
            + "</ul>"
            if shifts
            else "<p>No choice moves these numbers.</p>"
        )
        + "".join(
            lead + f"<div class='scroll'>{table_html(t)}</div>"
            if not t.empty
            else f"<p class='muted'>No {part} here (not scored).</p>"
            for part, lead, t in tables
        )
    )


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path) if path.exists() else pd.DataFrame()


def forced(report_dir: Path, table_html) -> str:
    """Notebook 12: how far forcing the order goes and at what cost first (w/ order, Ordered Rate,
    the perplexity median beside its mean, list copies, answers cut), a few forced answers beside
    their `ordered` ones, then Table 4's pattern against `ordered` and `original`."""
    from ..analysis.forcing import PPL_MEAN_OVER_MEDIAN, WHY, cost_view, forced_medians, forced_wide
    from ..core.notebook_names import FORCING_ORDER
    from ..metrics.registry import metric

    report, parts = ReportFolder(report_dir), []
    outcome = pd.DataFrame()
    for name in ("forced_order_outcomes", "forced_order_examples", "forced_order"):
        path = report.table(name)
        try:
            long = _read(path)
            if long.empty:
                continue
            if name == "forced_order_outcomes":
                outcome = long
                parts.append(
                    "<p><b>How far forcing goes, and at what cost</b> (per model and condition): w/ order "
                    "and Ordered Rate pooled over templates, the perplexity median beside its mean (each per "
                    f"template, then over templates; ‡: a mean over {PPL_MEAN_OVER_MEDIAN}x its median, made "
                    "by a few answers), the in-order answers that only copy the concept list, the answers the "
                    "token budget cut; then the counts, and every answer not in order under one reason ("
                    + "; ".join(f"<b>{_esc(k)}</b>: {_esc(v)}" for k, v in WHY.items())
                    + ").</p>"
                    + f"<div class='scroll'>{table_html(cost_view(long))}</div>"
                )
            elif name == "forced_order_examples":
                parts.append(
                    "<p><b>Forced answers beside the <code>ordered</code> answer to the same prompt</b>: "
                    "per model, those of highest forced perplexity and a few drawn at random.</p>"
                    + f"<div class='scroll'>{table_html(long.set_index('model'))}</div>"
                )
            else:
                shown = forced_wide(long, forced_medians(outcome))
                shown.columns = pd.MultiIndex.from_tuples(
                    [(metric(m).label if metric(m) else m, sub) for m, sub in shown.columns]
                )
                parts.append(
                    "<p><b>Table 4's pattern</b>: the forced condition, template-averaged, each value with "
                    "its difference from <code>ordered</code> and from <code>original</code> (Δ; perplexity: "
                    "the mean, the forced answers' median beside it, Δ of means).</p>"
                    f"<div class='scroll'>{table_html(shown)}</div>"
                    + legend(long["metric"].unique())
                )
            parts[-1] += (
                f"<p class='sub'><a href='{_esc(path.relative_to(report_dir).as_posix())}'>CSV</a></p>"
            )
        except (KeyError, ValueError, pd.errors.ParserError) as exc:
            parts.append(
                f"<p class='note'>{_esc(path.name)} cannot be shown: {_esc(type(exc).__name__)}: {_esc(exc)}</p>"
            )
    if not parts:
        return ""
    return (
        "<h2>Forcing the order: constrained decoding beside instruction following</h2><p class='sub'>"
        "<code>ordered_constrained</code>: the <code>ordered</code> prompt, the answer forced to a grammar "
        "admitting one sentence with the concepts, inflected or not, in the asked order. From "
        f"{notebook_link(report_dir, FORCING_ORDER)}; method: {methods_link(report_dir, 'Forcing the order')}.</p>"
        + "".join(parts)
    )
