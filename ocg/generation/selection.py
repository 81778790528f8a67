"""Which instances a generation run asks for: a built dataset's, or built in memory (same ids)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core.arguments import distinct, positive_int
from ..core.errors import OcgInputError
from ..core.frames import DEFAULT_N_CONCEPTS, unknown_template
from ..data import (
    GENERATE_CONDITIONS,
    build_instances,
    load_concept_sets,
    load_dataset,
    load_templates,
)
from ..data.concepts import select_covering_subset
from ..data.instances import PERMUTATION_SEED, sample_permutations


def select_instances(
    dataset: str | Path | None = None,
    conditions=GENERATE_CONDITIONS,
    subset_k: int | None = None,
    template_ids=None,
    *,
    n_concepts: int = DEFAULT_N_CONCEPTS,
    permutations: int | None = None,
) -> pd.DataFrame:
    """Instances to generate: from a built dataset directory, or built in memory (same ids);
    with `permutations`, the PERMUTATION_SEED sample of that many permutations per concept set
    (a run recorded with another seed: data.instances.sample_permutations on the full rows)."""
    conditions = list(distinct("conditions", list(conditions)))
    if not conditions:
        raise OcgInputError("conditions", "empty: name at least one condition")
    positive_int("subset_k", subset_k, "a positive number of concept sets or None", nullable=True)
    config = load_templates()
    for cond in conditions:
        config.condition(cond)
    if template_ids is not None:
        template_ids = _checked_template_ids(template_ids, config.templates)
    if dataset is not None:
        df = _from_dataset(dataset, conditions, subset_k)
    else:
        sets = load_concept_sets(n_concepts)
        if subset_k:
            sets = select_covering_subset(sets, subset_k)
        df = build_instances(sets, config, conditions)
    if template_ids is not None:
        df = df[df["template_id"].isin(template_ids)]
    return sample_permutations(df, permutations, PERMUTATION_SEED).reset_index(drop=True)


def _checked_template_ids(template_ids, templates) -> list[int]:
    template_ids = list(distinct("template_ids", list(template_ids)))
    for tid in template_ids:
        if isinstance(tid, bool) or not isinstance(tid, int) or tid not in templates:
            raise unknown_template("template_ids", tid, templates)
    return template_ids


def _from_dataset(dataset: str | Path, conditions: list[str], subset_k: int | None):
    """The built dataset's rows of `conditions`, of its covering subset of `subset_k` sets."""
    df, _ = load_dataset(dataset)
    unknown = sorted(set(conditions) - set(df["condition"]))
    if unknown:
        raise OcgInputError(f"{dataset}", f"dataset has no condition(s) {unknown}")
    df = df[df["condition"].isin(conditions)]
    if subset_k:
        sets = [
            s
            for s in load_concept_sets(int(df["n_concepts"].iloc[0]))
            if s.set_id in set(df["set_id"])
        ]
        keep = {s.set_id for s in select_covering_subset(sets, subset_k)}
        df = df[df["set_id"].isin(keep)]
    return df
