"""What every analysis notebook (ANALYSES, ocg/core/notebook_names.py) does first and shows alike: one call each."""

from __future__ import annotations

import html
import re

import pandas as pd

from ..results.scores import Scores, load_scores
from . import paper

PAPER_PERMUTATIONS = 24  # the paper's design: four concepts, all 4! orders of each set


def plain(text: object) -> str:
    """Text from a file or a model, for Markdown: shown as written, never read as HTML or Markdown
    (nbconvert keeps raw HTML of a Markdown output, so a note could otherwise carry a script)."""
    escaped = re.sub(r"([\\`*_{}\[\]()#+\-.!|~:])", r"\\\1", " ".join(str(text).split()))
    return html.escape(escaped, quote=False)


def show_text(markdown: str, *texts: object) -> None:
    """A Markdown line with `{}` filled by texts from files or models, each shown as written."""
    _note(markdown.format(*(plain(t) for t in texts)))


def _show(obj) -> None:
    from IPython.display import display

    display(obj)


def _note(text: str) -> None:
    from IPython.display import Markdown

    _show(Markdown(text))


def references_left_out(scores: Scores, what: str = "the mean over models") -> None:
    """Under a table or figure over models: the line saying the reference entries were left
    out of it (analysis/references.py), shown only when the run holds one."""
    from .references import left_out

    if line := left_out(scores, what):
        _note(f"*{html.escape(line)}*")


def setup(
    results_dir=None, models=None, allow_mixed: bool = False, allow_incomplete: bool = False
) -> Scores:
    """Scores of the models (errors name what is missing), display options, and a banner when
    models were scored differently (only with allow_mixed=True; otherwise that is an error), when
    their generations are incomplete (only with allow_incomplete=True) or when they answered
    different instances (tables then use the instances they share)."""
    pd.set_option("display.precision", 2)
    pd.set_option("display.max_columns", 40)
    scores = load_scores(
        results_dir, models, allow_mixed=allow_mixed, allow_incomplete=allow_incomplete
    )
    print("models:", sorted(scores.summary["model"].unique()))
    if scores.mixed_scoring:
        _note(
            "**Warning: these models were scored differently; numbers in one table are not "
            "comparable.** Each row's `scoring_signature` says which scoring it had.\n\n- "
            + "\n- ".join(plain(d) for d in scores.mixed_scoring)
        )
    if scores.incomplete:
        _note(
            "**Warning: generations that do not match what was asked** (docs/METHODS.md, "
            '"Completeness"):\n\n- ' + "\n- ".join(map(plain, scores.incomplete))
        )
    if scores.instance_differences:
        _note(
            '**Warning: models run on different instances** (docs/METHODS.md, "The instances '
            'models share").\n\n- ' + "\n- ".join(map(plain, scores.instance_differences))
        )
    designs = [d for d in scores.designs.values() if d.get("of_permutations")]
    if any(
        d["of_permutations"] != PAPER_PERMUTATIONS or d["permutations"] != PAPER_PERMUTATIONS
        for d in designs
    ):
        _note(
            "**Not the paper's design:** "
            + "; ".join(
                sorted(
                    {
                        f"{d['permutations']} of {d['of_permutations']} permutations per concept set"
                        for d in designs
                    }
                )
            )
            + ". The paper's published numbers beside ours are for four concepts, every permutation: a "
            'reference, not the same experiment (docs/METHODS.md, "Five concepts and sampled permutations").'
        )
    return scores


def beside_paper(ours: pd.DataFrame, table: str, index, models_file=None) -> pd.DataFrame:
    """Show ours beside the paper's published numbers (or the paper's table alone when none of
    our rows is in it); returns the joined table that gets saved."""
    compared = paper.compare(ours, table, models_file) if not ours.empty else ours
    if not ours.empty and compared["paper_value"].notna().any():
        _show(paper.side_by_side(compared, index))
    else:
        _note(f"None of these rows is in the paper's {table}; the paper's numbers for reference:")
    _show(paper.paper_wide(table))
    return compared


def small_samples(rows: pd.DataFrame) -> None:
    """A warning above intervals or p-values that rest on few resampled units (uncertainty.MIN_SETS)."""
    if rows.empty or not rows.get("small_sample", pd.Series(dtype=bool)).any():
        return
    from .uncertainty import MIN_SETS, units

    few = rows[rows["small_sample"]]
    least = few.loc[few["n"].idxmin()]
    _note(
        f"**Small samples:** {', '.join(plain(m) for m in sorted(few['model'].unique()))} rest on "
        f"{units(int(least['n']), least['unit'])}, under {MIN_SETS}: their intervals are too narrow "
        'and their p-values cannot be small; read them as unfinished (docs/METHODS.md, "Uncertainty").'
    )


def medians(long: pd.DataFrame, delta: str, *, scorers: dict | None = None) -> None:
    """Under a table of means (analysis/skew.py `with_medians`): each perplexity and SLOR median,
    pooled over the answers of every template, beside its mean, and the median Δ beside a mean Δ
    its median contradicts (‡: a mean over 10x its median); which metrics a compared model scored
    (`scorers`, skew.self_scored)."""
    from .skew import PPL_MEAN_OVER_MEDIAN, self_scored_note

    if "median" in long:
        rows = long[long["median"].notna()]
        lines = [
            f"{plain(r.metric)} of {plain(r.model)}: mean {r.value:.2f}, median {r.median:.2f}; "
            f"mean Δ {getattr(r, delta):+.2f}, median Δ {r.median_delta:+.2f} (paired)"
            + (" ‡" if r.dagger else "")
            + (
                " **(the mean contradicts the median: not bolded)**"
                if r.mean_median_disagree
                else ""
            )
            for r in rows.itertuples()
        ]
        if lines:
            _note(
                "**Medians** (pooled over the answers of every template) beside the table's means "
                f"(‡: a mean over {PPL_MEAN_OVER_MEDIAN}x its median, on either side of the Δ):"
                "\n\n- " + "\n- ".join(lines)
            )
    if scorers:
        _note(plain(self_scored_note(scorers)))
