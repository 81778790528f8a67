"""The frame schema: what keys ocg's tables, named once for every floor (docs/DATA.md).

An instance of one model is (condition, template, concept set, permutation); a group is one
concept set under one prompt (its permutations: what pBLEU, pBLEURT and Diverse Rate compare);
a summary row is one (model, condition, template). A sampled run's records carry `sample`; a
record without one is sample 0 (a greedy run's only answer). Concept sets have 4 concepts (the
paper) or 5; a run asks at most n! permutations of a set, and only the templates templates.yaml
declares. The checks here are the one wording of those rules, whoever makes them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .errors import OcgInputError

if (
    TYPE_CHECKING
):  # pandas only where a frame is handled: generation imports this module on a GPU node without it
    import pandas as pd

SET_KEY = [
    "condition",
    "template_id",
    "set_id",
]  # one concept set under one prompt, in one model's design
INSTANCE_KEY = [*SET_KEY, "perm_index"]  # one instance of a model's design
GROUP_KEYS = ["model", *SET_KEY]  # a group: one concept set under one prompt (its permutations)
SUMMARY_KEYS = ["model", "condition", "template_id"]  # one row of a model's summary
SAMPLE = "sample"  # the sample index of a sampled run's record; absent: sample 0

N_CONCEPTS = (4, 5)  # the paper's 4-concept sets, and the 5-concept sets for extensions
DEFAULT_N_CONCEPTS = 4
N_CONCEPTS_TEXT = " or ".join(map(str, N_CONCEPTS))  # what a wrong n_concepts is told


def record_sample(record: dict) -> Any:
    """A record's sample index as written (checked by whoever reads it): 0 where it has none."""
    return record.get(SAMPLE, 0)


def checked_sample(where: str, record: dict) -> int:
    """A record's sample index, refused unless it is an integer >= 0."""
    sample = record_sample(record)
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        raise OcgInputError(
            where, f"field 'sample' must be a sample index >= 0, got {sample!r:.60}"
        )
    return sample


def sample_index(value: Any) -> int:
    """A frame cell's sample index: 0 where missing (a greedy run's row beside sampled ones)."""
    import pandas as pd

    return 0 if value is None or pd.isna(value) else int(value)


def sample_column(records: pd.DataFrame) -> pd.Series | None:
    """The records' sample index (a record without one is sample 0), or None for a greedy run."""
    return records[SAMPLE].fillna(0).astype(int) if SAMPLE in records else None


def samples_or_zero(records: pd.DataFrame) -> pd.Series:
    """The records' sample index, 0 on every row of a greedy run."""
    import pandas as pd

    samples = sample_column(records)
    return samples if samples is not None else pd.Series(0, index=records.index, dtype=int)


def check_permutations(where: str, m: int | None, n_concepts: int) -> None:
    """Refuse `permutations: m` where a set of `n_concepts` has fewer orders (None: all of them)."""
    total = math.factorial(n_concepts)
    if m is not None and m > total:
        raise OcgInputError(
            where,
            f"got {m}; a set of {n_concepts} concepts has only {total} "
            "permutations (expected at most that, or null for all)",
        )


def unknown_template(where: str, template_id: Any, known) -> OcgInputError:
    """The error for a template id that templates.yaml does not declare."""
    return OcgInputError(where, f"unknown template id {template_id!r}; known: {sorted(known)}")
