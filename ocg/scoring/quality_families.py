"""The scoring families of the sentence's quality beside its order (docs/METHODS.md,
"Acceptability", "Semantic diversity", "LLM judge"): SLOR, non-words, the Vendi score and mean
pairwise cosine over sentence embeddings, and an LLM judge. Declared as paper_families.py declares
the paper's; ocg/scoring/families.py holds both."""

from __future__ import annotations

import math

from ..metrics import judge, nonword, semantic, slor
from ..metrics.registry import Metric, MetricFamily
from . import judging, neural
from .family import Context, Family
from .paper_families import PAPER_FAMILIES, packages


def _perplexity_key(ctx: Context) -> dict:
    """Perplexity's key (its cache's), whether or not perplexity itself is scored in this run."""
    return ctx.keys.get("perplexity") or PAPER_FAMILIES["perplexity"].key(
        ctx.config, ctx.resolved, ctx.keys["slor"]["inputs_sha256"]
    )


def _slor(ctx: Context):
    # perplexity scored in the same run recomputes under --redo; SLOR then reads its cache, never twice
    return neural.slor_scores(
        ctx.texts,
        ctx.config,
        ctx.resolved["perplexity"],
        _perplexity_key(ctx),
        ctx.out / "perplexity_cache.parquet",
        ctx.redo and "perplexity" not in ctx.keys,
        ctx.log,
    )


def _nonword(ctx: Context):
    found = [
        nonword.nonwords(t, c, p)
        for t, c, p in zip(
            ctx.answers["answer"], ctx.answers["concepts"], ctx.answers["pos_pattern"]
        )
    ]
    return {"has_nonword": [bool(f) for f in found], "nonwords": found}, {
        "lexicons": "wordfreq en (frequency 0) and lemminflect (no lemma)",
        "words": nonword.LETTERS.pattern,
        "concept_forms": "the concept and its lemminflect inflections",
    }


def _semantic(ctx: Context):
    vectors, sig = neural.embeddings(
        ctx.group_texts,
        ctx.config,
        ctx.keys["semantic"],
        ctx.out / "embedding_cache.parquet",
        ctx.redo,
        ctx.log,
    )
    if vectors is None:
        return {
            "vendi": [math.nan] * len(ctx.group_texts),
            "pairwise_cosine": [math.nan] * len(ctx.group_texts),
        }, sig
    groups = [[vectors[t] for t in texts] for texts in ctx.group_texts]
    return {
        "vendi": [semantic.vendi_score(g) for g in groups],
        "pairwise_cosine": [semantic.mean_pairwise_cosine(g) for g in groups],
    }, sig


def _judge(ctx: Context):
    return judging.verdicts(
        ctx.answers,
        ctx.config.judge,
        ctx.keys["judge"],
        ctx.out / "judge_cache.parquet",
        ctx.redo,
        ctx.log,
        ctx.config.judge_models_file,
    )


QUALITY_FAMILIES = (
    Family(
        MetricFamily(
            "slor",
            "answers",
            ("slor",),
            (
                Metric(
                    "slor",
                    "SLOR",
                    True,
                    "slor",
                    "n_slor",
                    1.0,
                    unit="nats per LM token, not per word",
                    what="acceptability: the perplexity model's log probability minus the words' unigram log probability "
                    "(wordfreq; a word it does not list earns no credit), per LM token, mean over answers; "
                    "higher: more acceptable",
                ),
            ),
        ),
        slor.VARIANTS,
        lambda c, r: {
            **PAPER_FAMILIES["perplexity"].settings(c, r),
            "oov": "no credit",
            **packages("wordfreq", "tokenizers"),
        },
        _slor,
        version=2,
        neural=True,
        code=(slor, neural.slor_scores, neural.perplexities, _perplexity_key, _slor),
    ),
    Family(
        MetricFamily(
            "nonword",
            "answers",
            ("has_nonword",),
            (
                Metric(
                    "nonword_rate",
                    "Non-words",
                    False,
                    "has_nonword",
                    "n",
                    100.0,
                    unit="% of answers",
                    what="answers holding a word no lexicon knows (wordfreq, lemminflect) that is no form of a concept",
                ),
            ),
        ),
        ("has_nonword", "nonwords"),
        lambda c, r: {**packages("wordfreq", "lemminflect", "regex")},
        _nonword,
        version=1,
        code=(nonword, _nonword),
    ),
    Family(
        MetricFamily(
            "semantic",
            "groups",
            ("vendi", "pairwise_cosine"),
            (
                Metric(
                    "vendi",
                    "Vendi",
                    True,
                    "vendi",
                    "n_vendi",
                    1.0,
                    unit="effective distinct answers, 1 to the group's n",
                    what="semantic diversity of a set's answers: the Vendi score over sentence embeddings; higher: more diverse",
                ),
                Metric(
                    "pairwise_cosine",
                    "Cosine",
                    False,
                    "pairwise_cosine",
                    "n_pairwise_cosine",
                    100.0,
                    unit="cosine x 100",
                    what="how alike a set's answers are in meaning: mean pairwise cosine of their "
                    "sentence embeddings; lower: more diverse",
                ),
            ),
        ),
        ("vendi", "pairwise_cosine"),
        lambda c, r: {
            "model": c.embedding_model,
            "revision": None,
            **semantic.embedder_source(c.embedding_model),  # where from; the packaged copy's sha256
            **packages("sentence-transformers", "transformers", "torch", "numpy"),
        },
        _semantic,
        version=1,
        neural=True,
        code=(semantic, neural.TextCache, neural.embeddings, _semantic),
    ),
    Family(
        MetricFamily(
            "judge",
            "answers",
            ("judge_score", "judge_in_order"),
            (
                Metric(
                    "judge_score",
                    "Judge",
                    True,
                    "judge_score",
                    "n_judge_score",
                    1.0,
                    unit="1-5",
                    what="an LLM judge's rating of the sentence: grammatical and plausible (5) to not a sentence (1)",
                ),
                Metric(
                    "judge_in_order",
                    "Judge w/ order",
                    True,
                    "judge_in_order",
                    "n_judge_in_order",
                    100.0,
                    unit="% of judged answers",
                    what="answers in which the judge read every concept, in the asked order",
                ),
            ),
        ),
        judging.COLUMNS,
        lambda c, r: judging.settings(c.judge, c.judge_models_file),
        _judge,
        version=6,
        neural=True,
        code=(judge, judging, _judge),
    ),
)
