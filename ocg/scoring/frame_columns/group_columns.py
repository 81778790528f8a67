"""The groups frame's columns: one row per (model, condition, template, set, sample) group."""

from __future__ import annotations

from .column import Column

GROUPS = (
    Column("model", "always", "str", "as in answers"),
    Column("condition", "always", "str", "as in answers"),
    Column("template_id", "always", "int", "as in answers"),
    Column("set_id", "always", "str", "as in answers"),
    Column(
        "sample",
        "samples",
        "int",
        "the sample the group's answers belong to (a group never mixes samples)",
    ),
    Column("n", "always", "int", "answers in the group (24 for n = 4)"),
    Column(
        "pbleu",
        "pbleu",
        "BLEU 0-100",
        "mean sentence BLEU over the group's ordered pairs (lower: more diverse)",
    ),
    Column("diverse_rate", "diverse", "fraction 0-1", "distinct answers / answers in the group"),
    Column("pbleurt", "pbleurt", "BLEURT x 100", "mean BLEURT-20 over the group's ordered pairs"),
    Column(
        "vendi",
        "semantic",
        "Vendi score",
        'the Vendi score of the group\'s answers over sentence embeddings (cosine kernel): the effective number of distinct answers, 1 to `n` (METHODS, "Semantic diversity")',
    ),
    Column(
        "pairwise_cosine",
        "semantic",
        "cosine -1 to 1",
        "mean cosine similarity of the group's answers' embeddings over the ordered pairs i != j; NaN for a group of one",
    ),
    Column("scoring_signature", "mixed", "str", "as in answers"),
)
