"""Notebooks 08 and 11 draw Figures 3 and 4 through one function, so their labels cannot drift
apart (11's Figure 4 had lost the "m of n! permutations, sampled" line)."""

import json

import pandas as pd

from ocg.analysis import difficulty, figures
from ocg.core.paths import NOTEBOOKS_DIR


def _sampled_answers() -> pd.DataFrame:
    """Five concepts, 3 of their 120 orders per set, one model: a run with `permutations: 3`."""
    rows = [
        {
            "model": "m",
            "condition": "ordered",
            "set_id": s,
            "perm_index": p,
            "in_order": (p + i) % 2 == 0,
            "concepts": ["a", "b", "c", "d", "e"],
            "pos_pattern": "NVNNV",
        }
        for i, s in enumerate(["s1", "s2"])
        for p in (4, 17, 90)
    ]
    return pd.DataFrame(rows)


def test_figure4_names_the_sample_of_permutations():
    composed = difficulty.composed_by(_sampled_answers())
    drawn = figures.figures_3_and_4(composed, n_models=1)
    assert "3 of 120 permutations per set, sampled" in drawn["figure4"].axes[0].get_title()
    assert drawn["figure3_data"].equals(difficulty.figure3_data(composed, 1))


def test_notebooks_08_and_11_draw_through_the_shared_function():
    for name in ("08_concept_difficulty", "11_samples"):
        code = "".join(
            "".join(c["source"])
            for c in json.loads((NOTEBOOKS_DIR / f"{name}.ipynb").read_text())["cells"]
            if c["cell_type"] == "code"
        )
        assert "figures.figures_3_and_4(composed, n_models)" in code, name
        assert "figures.figure4(" not in code and "figures.figure3(" not in code, name
