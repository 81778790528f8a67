"""The instance table: every (concept set, permutation, template, condition) with its prompt."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from typing import TYPE_CHECKING

from ..core.arguments import positive_int
from ..core.frames import check_permutations
from .concepts import ConceptSet
from .templates import TemplateConfig

if TYPE_CHECKING:  # pandas loads in build_instances: permutations and ids need none (gpu_check)
    import pandas as pd

# `permutations: m` (docs/METHODS.md, "Five concepts and sampled permutations"): which m of a
# set's n! orders are asked. One generator per set, so a set's sample does not depend on the other
# sets, conditions or templates selected.
PERMUTATION_SEED = 0
PERMUTATION_RULE = (
    "per concept set: sorted(random.Random(f'{seed}:{set_id}').sample(range(n!), m)), "
    "the same permutations for every condition and template"
)

COLUMNS = [
    "instance_id",
    "set_id",
    "condition",
    "template_id",
    "perm_index",
    "concepts",
    "pos_pattern",
    "composition",
    "n_concepts",
    "prompt",
    "messages",
]


def instance_id(condition: str, template_id: int, set_id: str, perm_index: int) -> str:
    """Readable and stable: the same instance has the same id on every machine and run."""
    return f"{condition}-t{template_id}-{set_id}-p{perm_index:03d}"


def permutations(concept_set: ConceptSet):
    """All orders of a set, indexed in itertools order of the dataset's own concept order."""
    return list(enumerate(itertools.permutations(concept_set.concepts)))


def sampled_permutations(
    set_id: str, n_concepts: int, m: int, seed: int = PERMUTATION_SEED
) -> list[int]:
    """The perm_index values of `set_id` that a run with `permutations: m` asks (PERMUTATION_RULE)."""
    check_permutations("permutations", m, n_concepts)
    return sorted(random.Random(f"{seed}:{set_id}").sample(range(math.factorial(n_concepts)), m))


def sample_permutations(
    df: pd.DataFrame, m: int | None, seed: int = PERMUTATION_SEED
) -> pd.DataFrame:
    """The rows of `df` whose permutation is in its set's sample of m (all rows when m is None);
    ids and perm_index stay those of the full permutation list."""
    positive_int(
        "permutations",
        m,
        "a positive number of permutations per concept set, or null for all",
        nullable=True,
    )
    if m is None or df.empty:
        return df
    pairs = df[["set_id", "n_concepts"]].drop_duplicates()
    keep = {
        (s, p)
        for s, n in zip(pairs["set_id"], pairs["n_concepts"])
        for p in sampled_permutations(s, int(n), m, seed)
    }
    return df[[k in keep for k in zip(df["set_id"], df["perm_index"])]]


def build_instances(
    concept_sets: list[ConceptSet],
    config: TemplateConfig,
    conditions: list[str],
    template_ids: list[int] | None = None,
) -> pd.DataFrame:
    """One row per instance, ordered by condition, template, set (file order), permutation."""
    import pandas as pd

    template_ids = sorted(config.templates) if template_ids is None else list(template_ids)
    for cond in conditions:
        config.condition(cond)  # unknown names fail here, before any work
    for tid in template_ids:
        config.template(tid, conditions[0] if conditions else "original")
    perms = [(s, permutations(s)) for s in concept_sets]
    rows = []
    for cond in conditions:
        for tid in template_ids:
            for cset, orders in perms:
                for p, order in orders:
                    words = [c.word for c in order]
                    messages = config.messages(tid, cond, words)
                    rows.append(
                        (
                            instance_id(cond, tid, cset.set_id, p),
                            cset.set_id,
                            cond,
                            tid,
                            p,
                            words,
                            "".join(c.pos for c in order),
                            cset.composition,
                            len(words),
                            messages[-1]["content"],
                            json.dumps(messages, ensure_ascii=False),
                        )
                    )
    return pd.DataFrame(rows, columns=COLUMNS)


def ids_hash(df: pd.DataFrame) -> str:
    """sha256 of the sorted instance ids: equal iff two tables hold the same instances."""
    return hashlib.sha256("\n".join(sorted(df["instance_id"])).encode()).hexdigest()


def content_hash(df: pd.DataFrame) -> str:
    """sha256 of ids and chat messages in id order: equal iff the same prompts are asked."""
    h = hashlib.sha256()
    for iid, msgs in sorted(zip(df["instance_id"], df["messages"])):
        h.update(iid.encode())
        h.update(b"\x00")
        h.update(msgs.encode())
        h.update(b"\n")
    return h.hexdigest()
