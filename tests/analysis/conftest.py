"""`scored`: the small scored run the analysis notebooks and the landing page are run on, built
once per module (a module may define its own `scored` instead)."""

import itertools
import random

import pytest
import yaml

from ocg.scoring import cpu_families
from tests.analysis.notebooks import MODELS, SETS


@pytest.fixture(scope="module")
def scored(scored_run):
    rng = random.Random(0)

    def rows(
        _model, _condition
    ):  # called model by model, condition by condition: one stream of draws
        rows = []
        for set_id, concepts in SETS.items():
            for t in range(6):
                for p, order in enumerate(itertools.permutations(concepts)):
                    words = [w for w, _ in order]
                    if rng.random() < 0.3:
                        rng.shuffle(words)
                    answer = (
                        "The " + " and ".join(words) + "."
                        if rng.random() < 0.8
                        else "The dog runs."
                    )
                    rows.append(
                        {
                            "set_id": set_id,
                            "template_id": t,
                            "perm_index": p,
                            "concepts": [w for w, _ in order],
                            "answer": answer,
                            "pos_pattern": "".join(pos for _, pos in order),
                        }
                    )
        return rows

    root = scored_run(
        "fixture",
        rows,
        cpu_families(),
        models=MODELS,
        conditions=("original", "ordered", "ordered_one_shot"),
    )
    (root / "models.yaml").write_text(
        yaml.safe_dump(
            {
                "models": {
                    "smollm2-135m-instruct": {
                        "id": "embedded:smollm2-135m-instruct",
                        "quantization": "none",
                    },
                    "my-qwen": {"id": "Qwen/Qwen2.5-7B-Instruct", "paper_name": "Qwen2.5-7B"},
                }
            }
        )
    )
    return root
