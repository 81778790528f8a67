"""Notebook 11 on a sampled run (pass@k and spread tables, figures) and on a greedy one (says it
needs samples, saves nothing)."""

import pandas as pd
import pytest

from ocg.jobs.notebook_runner import run_notebook
from ocg.jobs.plan import Dirs, notebook_params
from ocg.scoring import cpu_families
from tests.analysis.notebooks import output_text
from tests.helpers import checked_run

pytestmark = pytest.mark.slow
ANSWERS = [
    "The boy rides a bike down the street.",
    "A boy rode his bike on the street.",
    "The street where a boy rides a bike.",
    "A bike.",
]


def scored(scored_run, samples):
    rows = [
        {
            "set_id": "s1",
            "template_id": t,
            "perm_index": p,
            "concepts": ["boy", "ride", "bike", "street"],
            "pos_pattern": "NVNN",
            "answer": ANSWERS[(p + t + 3 * s) % 4],
            **({"sample": s} if samples > 1 else {}),
        }
        for t in (0, 1)
        for p in range(24)
        for s in range(samples)
    ]
    root = scored_run(f"samples{samples}", rows, cpu_families())
    out = root / "reports"
    params = notebook_params(
        "11_samples",
        checked_run(["m"], ["original"]),
        Dirs(root / "gen", root / "scores", out),
        ["m"],
    )
    run_notebook("11_samples", params, out_dir=out)
    return out


def test_11_on_three_samples_saves_pass_at_k_and_the_spread(scored_run):
    out = scored(scored_run, 3)
    curve = pd.read_csv(out / "tables" / "pass_at_k.csv")
    assert curve["k"].tolist() == [1, 2, 3] and curve["pass_at_k"].is_monotonic_increasing
    spread = pd.read_csv(out / "tables" / "sample_spread.csv")
    assert set(spread["n_samples"]) == {3} and (spread["sd_over_samples"] >= 0).all()
    assert (out / "figures" / "pass_at_k.png").exists() and (
        out / "figures" / "samples_figure3.png"
    ).exists()
    assert "one answer per instance" not in output_text(out / "11_samples.ipynb")


def test_11_on_a_greedy_run_says_it_needs_samples_and_saves_nothing(scored_run):
    out = scored(scored_run, 1)
    shown = output_text(out / "11_samples.ipynb")
    assert "one answer per instance" in shown and "samples: k" in shown
    assert not (out / "tables").exists() or not list((out / "tables").glob("*.csv"))
